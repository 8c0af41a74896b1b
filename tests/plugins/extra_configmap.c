/* SPDX-License-Identifier: Apache-2.0 */
/* tests/plugins/extra_configmap.c - example external plugin: a dynamic resource.
 *
 * ComponentBuilder: one ConfigMap `<trainjob>-extra` per TrainJob, in its namespace, with the
 * TrainJob and runtime names. The host stamps the controller ownerReference to the TrainJob
 * and the `trainer.kubeflow.org/trainjob-name` label, so the ConfigMap is garbage collected
 * with the TrainJob. WatchExtension: ConfigMaps owned by TrainJobs (already watched for the
 * runtime snapshot; declaring it keeps the plugin correct on its own). The config text, if
 * any, is stored under the key `config` (e.g. `--plugin extra_configmap.so,team=a`). */
#include <stdio.h>
#include <string.h>

#include "api/kt_plugin.h"

static const char *const watches[] = {"v1/ConfigMap", NULL};

/* Read-only after init; see require_label.c on why a file-scope state is fine. */
static char the_config[256];

static int ec_init(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, const char *config,
                   void **state)
{
    if (config && strlen(config) >= sizeof(the_config)) {
        return h->fail(c, "config longer than 255 bytes");
    }
    snprintf(the_config, sizeof(the_config), "%s", config ? config : "");
    *state = the_config;
    return 0;
}

/* s as a JSON string body (quotes and backslashes escaped, control characters dropped). */
static void json_escape(const char *s, char *out, size_t len)
{
    size_t k = 0;
    for (; s && *s && k + 2 < len; s++) {
        if (*s == '"' || *s == '\\') {
            out[k++] = '\\';
            out[k++] = *s;
        } else if ((unsigned char)*s >= 0x20) {
            out[k++] = *s;
        }
    }
    out[k] = '\0';
}

static int ec_build(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    const char *cfg = state;
    char esc[520];
    char obj[2048];
    const char *rt = h->get(c, KT_DOC_RUNTIME, "/metadata/name");
    json_escape(cfg, esc, sizeof(esc));
    int n =
        snprintf(obj, sizeof(obj),
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                 "\"%s-extra\",\"namespace\":\"%s\"},\"data\":{\"trainjob\":\"%s\","
                 "\"runtime\":\"%s\"%s%s%s}}",
                 h->trainjob_name(c), h->trainjob_namespace(c), h->trainjob_name(c), rt ? rt : "",
                 cfg[0] ? ",\"config\":\"" : "", cfg[0] ? esc : "", cfg[0] ? "\"" : "");
    if (n < 0 || (size_t)n >= sizeof(obj)) {
        return h->fail(c, "ConfigMap too large");
    }
    return h->add_object(c, obj) == 0 ? 0 : h->fail(c, "host refused the ConfigMap");
}

KT_PLUGIN_EXPORT const struct kt_plugin_def kt_plugin_def = {
    KT_PLUGIN_DEF_INIT("ExtraConfigMap", KT_EP_WATCH | KT_EP_BUILD),
    .init = ec_init,
    .watches = watches,
    .build = ec_build,
};

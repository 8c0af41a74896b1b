/* SPDX-License-Identifier: Apache-2.0 */
/* tests/plugins/require_label.c - example external plugin: a platform admission policy.
 *
 * CustomValidation, configured by the text after the first ',' of --plugin:
 *   label=KEY        TrainJobs must carry metadata.labels[KEY]
 *   namespace=NS     only TrainJobs in NS are checked (default: every namespace)
 *   max-gpus=N       numNodes x resourcesPerNode GPUs (nvidia.com/gpu, limits else requests)
 *                    must stay <= N
 * e.g. `--plugin require_label.so,namespace=team-a,label=cost-center,max-gpus=8`.
 * Denials read `metadata.labels: Required value: ...` and
 * `spec.trainer.resourcesPerNode: Forbidden: ...`, like the built-in validations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kt_plugin.h"

struct policy {
    char label[254];
    char ns[64];
    long long max_gpus; /* -1: no budget */
};

/* One process holds one instance per file (dlopen shares the handle; kt refuses a name
 * loaded twice), so the state can live here. Read-only after init. */
static struct policy the_policy;

static int set_option(struct policy *p, const char *opt, size_t n)
{
    char buf[320];
    if (n >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, opt, n);
    buf[n] = '\0';
    char *eq = strchr(buf, '=');
    if (!eq) {
        return -1;
    }
    *eq = '\0';
    const char *v = eq + 1;
    if (strcmp(buf, "label") == 0 && strlen(v) < sizeof(p->label) && *v) {
        snprintf(p->label, sizeof(p->label), "%s", v);
    } else if (strcmp(buf, "namespace") == 0 && strlen(v) < sizeof(p->ns)) {
        snprintf(p->ns, sizeof(p->ns), "%s", v);
    } else if (strcmp(buf, "max-gpus") == 0) {
        char *end = NULL;
        p->max_gpus = strtoll(v, &end, 10);
        return *v && end && *end == '\0' && p->max_gpus >= 0 ? 0 : -1;
    } else {
        return -1;
    }
    return 0;
}

static int rl_init(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, const char *config,
                   void **state)
{
    struct policy *p = &the_policy;
    memset(p, 0, sizeof(*p));
    p->max_gpus = -1;
    while (config && *config) {
        size_t n = strcspn(config, ",");
        if (set_option(p, config, n) != 0) {
            return h->fail(c, "bad option (want label=KEY, namespace=NS, max-gpus=N)");
        }
        config += n + (config[n] == ',');
    }
    if (!p->label[0] && p->max_gpus < 0) {
        return h->fail(c, "nothing to enforce: give label=KEY and/or max-gpus=N");
    }
    *state = p;
    return 0;
}

/* A JSON number or quantity string as an integer GPU count; 0 when absent. */
static long long count_of(const char *text)
{
    char *end = NULL;
    long long v = text ? strtoll(text, &end, 10) : 0;
    return v > 0 ? v : 0;
}

static void check_gpus(const struct kt_plugin_host *h, struct kt_plugin_ctx *c,
                       const struct policy *p)
{
    const char *nodes = h->get(c, KT_DOC_TRAINJOB, "/spec/trainer/numNodes");
    const char *lim =
        h->get(c, KT_DOC_TRAINJOB, "/spec/trainer/resourcesPerNode/limits/nvidia.com~1gpu");
    const char *req =
        h->get(c, KT_DOC_TRAINJOB, "/spec/trainer/resourcesPerNode/requests/nvidia.com~1gpu");
    long long per_node = lim ? count_of(lim) : count_of(req);
    long long n = nodes ? count_of(nodes) : 1;
    if (per_node * n > p->max_gpus) {
        char detail[160];
        snprintf(detail, sizeof(detail),
                 "%lld GPUs requested (%lld nodes x %lld), the budget is %lld", per_node * n, n,
                 per_node, p->max_gpus);
        h->field_error(c, KT_FIELD_FORBIDDEN, "spec.trainer.resourcesPerNode", NULL, detail);
    }
}

static int rl_validate(const struct kt_plugin_host *h, struct kt_plugin_ctx *c, void *state)
{
    const struct policy *p = state;
    if (p->ns[0] && strcmp(h->trainjob_namespace(c), p->ns) != 0) {
        return 0;
    }
    if (p->label[0]) {
        char ptr[600];
        size_t k = 0;
        /* JSON pointer escaping: '~' -> "~0", '/' -> "~1". */
        k += (size_t)snprintf(ptr, sizeof(ptr), "/metadata/labels/");
        for (const char *s = p->label; *s && k + 3 < sizeof(ptr); s++) {
            if (*s == '~' || *s == '/') {
                ptr[k++] = '~';
                ptr[k++] = *s == '~' ? '0' : '1';
            } else {
                ptr[k++] = *s;
            }
        }
        ptr[k] = '\0';
        if (!h->get(c, KT_DOC_TRAINJOB, ptr)) {
            char detail[400];
            snprintf(detail, sizeof(detail), "label %s is required for TrainJobs in %s%s", p->label,
                     p->ns[0] ? "namespace " : "this cluster", p->ns);
            h->field_error(c, KT_FIELD_REQUIRED, "metadata.labels", NULL, detail);
        }
    }
    if (p->max_gpus >= 0) {
        check_gpus(h, c, p);
    }
    return 0;
}

KT_PLUGIN_EXPORT const struct kt_plugin_def kt_plugin_def = {
    KT_PLUGIN_DEF_INIT("RequireLabel", KT_EP_VALIDATE),
    .init = rl_init,
    .validate = rl_validate,
};

/* reconciler/apply.c - see apply.h. */
#include "apply.h"

#include <string.h>

#include "common/json.h"

const struct kt_kube_gvr KT_GVR_PODGROUPS_SP = {"scheduling.x-k8s.io", "v1alpha1", "podgroups"};
const struct kt_kube_gvr KT_GVR_PODGROUPS_VOLCANO = {"scheduling.volcano.sh", "v1beta1",
                                                     "podgroups"};

static bool is(const char *a, const char *b)
{
    return a && strcmp(a, b) == 0;
}

const struct kt_kube_gvr *kt_rec_gvr_of(const char *api_version, const char *kind)
{
    if (is(api_version, "v1") && is(kind, "ConfigMap")) {
        return &KT_GVR_CONFIGMAPS;
    }
    if (is(api_version, "v1") && is(kind, "Secret")) {
        return &KT_GVR_SECRETS;
    }
    if (is(api_version, "jobset.x-k8s.io/v1alpha2") && is(kind, "JobSet")) {
        return &KT_GVR_JOBSETS;
    }
    if (is(api_version, "scheduling.x-k8s.io/v1alpha1") && is(kind, "PodGroup")) {
        return &KT_GVR_PODGROUPS_SP;
    }
    if (is(api_version, "scheduling.volcano.sh/v1beta1") && is(kind, "PodGroup")) {
        return &KT_GVR_PODGROUPS_VOLCANO;
    }
    return NULL;
}

int kt_rec_apply(struct kt_kube_client *c, const json_t *obj, json_t **out, struct kt_err *err)
{
    const char *av = kt_json_str(obj, "apiVersion", "");
    const char *kind = kt_json_str(obj, "kind", "");
    json_t *meta = json_object_get(obj, "metadata");
    const char *ns = kt_json_str(meta, "namespace", "");
    const char *name = kt_json_str(meta, "name", "");
    const struct kt_kube_gvr *gvr = kt_rec_gvr_of(av, kind);
    if (out) {
        *out = NULL;
    }
    if (!gvr) {
        return kt_err_set(err, KT_EUNSUPPORTED, "cannot apply %s %s: unknown kind", av, kind);
    }
    if (kt_kube_apply(c, gvr, ns, name, NULL, obj, KT_FIELD_MANAGER, true, out, err) != 0) {
        return kt_err_prefix(err, "%s %s/%s", kind, ns, name);
    }
    return 0;
}

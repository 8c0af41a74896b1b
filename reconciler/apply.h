/* reconciler/apply.h - server-side apply of the objects the framework built (SPEC §5.1
 * step 5): field manager `trainer`, force; and the resource types of the kinds we own. */
#ifndef KT_RECONCILER_APPLY_H
#define KT_RECONCILER_APPLY_H

#include <jansson.h>

#include "common/err.h"
#include "common/kube.h"

#define KT_FIELD_MANAGER "trainer"

extern const struct kt_kube_gvr KT_GVR_PODGROUPS_SP;      /* scheduling.x-k8s.io/v1alpha1 */
extern const struct kt_kube_gvr KT_GVR_PODGROUPS_VOLCANO; /* scheduling.volcano.sh/v1beta1 */

/* The resource of apiVersion/kind among the kinds the pipeline returns (ConfigMap, Secret,
 * JobSet, both PodGroups), or NULL. Static. */
const struct kt_kube_gvr *kt_rec_gvr_of(const char *api_version, const char *kind);

/* Apply obj (metadata.name/namespace decide where). *out (may be NULL) gets the server's
 * object. Caller owns *out; free with json_decref(). KT_EUNSUPPORTED for a kind we do not
 * know. The error message names the object ("JobSet ns/name: ..."). */
KT_MUST_CHECK int kt_rec_apply(struct kt_kube_client *c, const json_t *obj, json_t **out,
                               struct kt_err *err);

#endif

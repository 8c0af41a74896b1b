/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/apply.h - server-side apply of the objects the framework built
 * (docs/internals/upstream.md#trainjob-reconcile step 5): field manager `trainer`, force; and the
 * resource types of the kinds we apply, the built-in ones from a table and any other kind a plugin
 * returns or watches through API discovery (GET /api/v1 or /apis/<group>/<version>). */
#ifndef KT_RECONCILER_APPLY_H
#define KT_RECONCILER_APPLY_H

#include <jansson.h>
#include <stdbool.h>

#include "common/base/err.h"
#include "common/kube/kube.h"

#define KT_FIELD_MANAGER "trainer"

extern const struct kt_kube_gvr KT_GVR_PODGROUPS_SP;      /* scheduling.x-k8s.io/v1alpha1 */
extern const struct kt_kube_gvr KT_GVR_PODGROUPS_VOLCANO; /* scheduling.volcano.sh/v1beta1 */

/* The resource of apiVersion/kind among the built-in kinds the pipeline returns (ConfigMap,
 * Secret, JobSet, both PodGroups), or NULL. Static. */
const struct kt_kube_gvr *kt_rec_gvr_of(const char *api_version, const char *kind);
/* True when gvr is one of the built-in resources kt_rec_gvr_of returns (by address). */
bool kt_rec_gvr_of_builtin(const struct kt_kube_gvr *gvr);

/* A JobSet's spec.replicatedJobs, its pod templates: most of its text, and nothing here reads
 * them from the server (the cache keeps a JobSet's status and spec.suspend only). Cut from its
 * watch events, LIST pages and apply answers before they are parsed (common/base/jsoncut.h). */
extern const struct kt_json_cut_rule KT_REC_JOBSET_CUT[2]; /* a rule list; static */

/* A cache of discovered kinds (apiVersion + kind -> resource). Thread-safe; entries are
 * never evicted, so the resources it returns stay valid until kt_rec_kinds_free. At most
 * KT_REC_KINDS_MAX discovered kinds (bounded memory whatever plugins return). */
#define KT_REC_KINDS_MAX 64
struct kt_rec_kinds;

/* Caller owns the result; free with kt_rec_kinds_free(). */
struct kt_rec_kinds *kt_rec_kinds_new(void);
/* Accepts NULL. Nothing may use a resource it returned afterwards. */
void kt_rec_kinds_free(struct kt_rec_kinds *k);

/* The resource of apiVersion/kind: the built-in table, else the cache, else discovery on c
 * (only subresource-free resources whose kind matches). *gvr is borrowed from the table or
 * from k. KT_EUNSUPPORTED "unknown kind" when the group version does not serve it (or is not
 * served at all), KT_ETOOBIG when the cache is full, other codes when discovery itself fails.
 * k NULL: the built-in table only. */
KT_MUST_CHECK int kt_rec_kinds_resolve(struct kt_rec_kinds *k, struct kt_kube_client *c,
                                       const char *api_version, const char *kind,
                                       const struct kt_kube_gvr **gvr, struct kt_err *err);
/* The cached resource of apiVersion/kind (built-in or already discovered), or NULL; no I/O.
 * k may be NULL. */
const struct kt_kube_gvr *kt_rec_kinds_lookup(struct kt_rec_kinds *k, const char *api_version,
                                              const char *kind);

/* Apply obj (metadata.name/namespace decide where), resolving its kind through k (may be
 * NULL: built-in kinds only). *out (may be NULL) gets the server's object (a JobSet's without
 * KT_REC_JOBSET_CUT). Caller owns *out;
 * free with json_decref(). KT_EUNSUPPORTED for a kind that cannot be resolved. The error
 * message names the object ("JobSet ns/name: ..."). */
KT_MUST_CHECK int kt_rec_apply(struct kt_kube_client *c, struct kt_rec_kinds *k, const json_t *obj,
                               json_t **out, struct kt_err *err);

#endif

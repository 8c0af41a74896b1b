/* SPDX-License-Identifier: Apache-2.0 */
/* common/framework/render.h - render one TrainJob offline: CRD defaults, runtime lookup among given
 * runtimes, CustomValidation, then the build pipeline over a view of given objects. The
 * engine of `ktctl render`, also used in-process by the render benchmark and fuzzer. No I/O
 * (the CLI reads files), no clock; entropy only through the SSH key generator. */
#ifndef KT_RENDER_H
#define KT_RENDER_H

#include <jansson.h>
#include <stdbool.h>

#include "common/base/err.h"
#include "common/base/fielderr.h"
#include "common/framework/framework.h"
#include "common/base/str.h"

#define KT_RENDER_DEFAULT_NAMESPACE "default"
#define KT_RENDER_DEFAULT_UID "00000000-0000-0000-0000-000000000000"

struct kt_render_opts {
    const char *uid;         /* NULL: the object's metadata.uid, else KT_RENDER_DEFAULT_UID */
    const char *ssh_key_pem; /* NULL: generate a fresh key when a plugin asks */
    bool no_validate;        /* skip the CustomValidation checks */
};

/* What to render: all borrowed for the call, nothing modified. */
struct kt_render_req {
    const json_t *trainjob; /* a TrainJob object as read */
    const json_t *runtimes; /* array of TrainingRuntime / ClusterTrainingRuntime objects */
    const json_t *objects;  /* array of cluster objects the plugins may read */
    const struct kt_render_opts *opts;
};

/* Render req->trainjob. Appends the objects to apply, in order, to items.
 * Returns 0 on success; 1 when validation denied it (errors in denial, nothing appended);
 * -1 + err when decoding or the build failed. warnings gets admission-style warnings. */
KT_MUST_CHECK int kt_render_trainjob(const struct kt_framework *fw, const struct kt_render_req *req,
                                     json_t *items, struct kt_ferrs *denial,
                                     struct kt_strv *warnings, struct kt_err *err);

/* A kt_view get function over a JSON array of objects passed as ctx (borrowed): the object
 * with that apiVersion, kind, name and (unless ns is NULL) namespace ("default" when unset),
 * or NULL. */
const json_t *kt_render_objects_get(void *objects, const char *api_version, const char *kind,
                                    const char *ns, const char *name);

/* True when obj is apiVersion trainer.kubeflow.org/v1alpha1 with the given kind. */
bool kt_render_is_kind(const json_t *obj, const char *kind);

#endif

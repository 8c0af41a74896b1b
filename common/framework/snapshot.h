/* SPDX-License-Identifier: Apache-2.0 */
/* common/framework/snapshot.h - the runtime snapshot ConfigMap `<trainjob>-runtime-snapshot`
 * (docs/internals/upstream.md#runtime-snapshots): build it from a runtime, read a runtime back from
 * it with upstream's sanity checks. No I/O. */
#ifndef KT_SNAPSHOT_H
#define KT_SNAPSHOT_H

#include <jansson.h>

#include "api/types.h"
#include "common/base/err.h"

/* The ConfigMap is named <trainjob>KT_SNAPSHOT_SUFFIX and holds the runtime under
 * data[KT_SNAPSHOT_KEY]. */
#define KT_SNAPSHOT_SUFFIX "-runtime-snapshot"
#define KT_SNAPSHOT_KEY "runtime"

/* The ConfigMap (apiVersion, kind, metadata name/namespace, data.runtime = the runtime
 * object as YAML with keys sorted, as sigs.k8s.io/yaml writes it). Not stamped with the
 * owner reference (the framework does that). Caller owns the result; free with
 * json_decref(). NULL + err when the YAML cannot be written. */
json_t *kt_snapshot_build(const struct kt_trainjob *tj, const struct kt_runtime *rt,
                          struct kt_err *err);

/* Another parser of snapshot texts than kt_snapshot_parse (e.g. a cache of parsed ones): the
 * same contract, called with ctx. */
struct kt_snapshot_parser {
    json_t *(*parse)(void *ctx, const char *text, struct kt_err *err);
    void *ctx;
};

/* The runtime object a snapshot's data.runtime text holds (YAML). Caller owns the result;
 * free with json_decref(). NULL + err (KT_EINVAL, "invalid runtime snapshot: unable to
 * unmarshal the snapshot: <err>") when the text is not a YAML object. */
json_t *kt_snapshot_parse(const char *text, struct kt_err *err);

/* Decode the runtime held by ConfigMap cm for tj into *out (caller releases with
 * kt_runtime_release). The text is parsed by parser when it has a parse function (e.g. a
 * cache), else by kt_snapshot_parse; parser may be NULL. Errors (KT_EINVAL), texts as
 * upstream: "invalid runtime snapshot: a snapshot configmap exists but is owned by another
 * object", "... snapshot ConfigMap missing \"runtime\" data key", "... unable to unmarshal
 * the snapshot: <err>", "... the snapshot refers to the wrong runtime: ...". On failure *out
 * is zeroed. Does not retain cm or parser. */
KT_MUST_CHECK int kt_snapshot_read(const json_t *cm, const struct kt_trainjob *tj,
                                   const struct kt_snapshot_parser *parser, struct kt_runtime *out,
                                   struct kt_err *err);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/yaml.h - YAML <-> json_t the way Kubernetes clients read it
 * (docs/internals/upstream.md#reading-yaml).
 *
 * The only file that includes yaml.h (libyaml). Reading applies YAML 1.1 scalar rules,
 * merge keys and aliases, last-wins duplicate keys (reported as warnings), and hard caps
 * on input size, nesting depth and alias expansion. Every node's line is kept so errors
 * can say FILE:LINE. Writing quotes strings that would read back as another type. */
#ifndef KT_YAML_H
#define KT_YAML_H

#include <jansson.h>
#include <stddef.h>

#include "common/base/buf.h"
#include "common/base/err.h"
#include "common/base/str.h"

/* Hard caps; kt_yaml_limits_default() fills the values we use everywhere. */
struct kt_yaml_limits {
    size_t max_bytes; /* whole input; default 8 MiB */
    size_t max_depth; /* nesting of mappings/sequences; default 100 */
    size_t max_nodes; /* nodes produced after alias expansion; default 1,000,000 */
};
void kt_yaml_limits_default(struct kt_yaml_limits *lim);

/* One document of a stream. */
struct kt_yaml_doc {
    json_t *root;            /* owned; NULL for an empty document ("---" alone) */
    size_t line;             /* 1-based line of the document's first node */
    json_t *lines;           /* owned; object mapping JSON Pointer ("/spec/trainer/numNodes",
                                "" for the root) -> integer line of that node (1-based) */
    struct kt_strv warnings; /* owned; "LINE: duplicate key \"k\"" style texts */
};

/* A parsed stream: zero or more documents. Touch fields read-only. */
struct kt_yaml_stream {
    struct kt_yaml_doc *docs; /* owned array */
    size_t len;
};

/* Parse all documents of data[0..len). On a syntax error or a cap, returns -1 with err
 * (KT_EPARSE "line N: ...", KT_ETOOBIG, KT_ERANGE) and out holds the documents read before
 * the bad one (the caller still releases it). JSON input is valid YAML and works too.
 * Does not retain data. */
KT_MUST_CHECK int kt_yaml_parse(const char *data, size_t len, const struct kt_yaml_limits *lim,
                                struct kt_yaml_stream *out, struct kt_err *err);

/* Line of the node at JSON Pointer ptr in doc, or doc->line when unknown. */
/* (Nodes without an entry of their own, such as members brought in by a merge key or
 * inside an alias, answer with their nearest ancestor's line.) */
size_t kt_yaml_line(const struct kt_yaml_doc *doc, const char *ptr);

/* Free everything the stream owns. Accepts a zeroed stream. */
void kt_yaml_stream_release(struct kt_yaml_stream *s);

/* Append v as one YAML document (block style, 2-space indent, keys in json order)
 * to b. Does not retain v. Fails only when b's cap is exceeded. */
/* (When b is not empty a "---" line is written first, so repeated calls build a stream.
 * v NULL writes "null". Multi-line strings become literal blocks when that reads back
 * exactly, otherwise double-quoted scalars.) */
KT_MUST_CHECK int kt_yaml_emit(const json_t *v, struct kt_buf *b, struct kt_err *err);

#endif

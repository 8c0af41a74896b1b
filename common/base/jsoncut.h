/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/jsoncut.h - drop metadata.managedFields from JSON text before it is parsed.
 *
 * Kubernetes sends every object with metadata.managedFields, the server-side-apply field
 * sets: often a third or more of the object's text, which kt's daemons never read. Parsing it
 * into a jansson tree only to delete it cost a node, a hash entry and a malloc per field; this
 * pass removes the member from the text first, in one walk over the bytes (a small JSON
 * tokenizer: strings with their escapes, nesting, scalars), so the parser never sees it.
 *
 * Every member named "managedFields" of an object that is the value of a member named
 * "metadata" is cut, at any depth (a watch event's object.metadata, a list's
 * items[*].metadata, an object's own). Keys are compared as written: a key spelled with \u
 * escapes is not recognised and stays, as does everything else. Text the walk cannot follow
 * (truncated, unbalanced, a bad token) is left exactly as it was, for the parser to report;
 * the walk checks structure only (not UTF-8, escapes or literals: the parser does). */
#ifndef KT_JSONCUT_H
#define KT_JSONCUT_H

#include <stdbool.h>
#include <stddef.h>

/* The same walk cuts other members a reader never looks at, named by rules: every member
 * named `member` of an object that is the value of a member named `parent`, at any depth
 * (e.g. {"spec", "replicatedJobs"}: a JobSet's pod templates, which a cache that keeps only
 * its status never reads). Names are compared as written, like managedFields.
 *
 * A rule list is an array that ends at {NULL, NULL} (KT_JSON_CUT_END) with at most
 * KT_JSON_CUT_RULES_MAX rules before it; a NULL list has no rule. The strings and the array
 * are borrowed; a rule list is usually static. */
struct kt_json_cut_rule {
    const char *parent, *member;
};
/* clang-format off */
#define KT_JSON_CUT_END {NULL, NULL}
/* clang-format on */
#define KT_JSON_CUT_RULES_MAX 8

/* The list of one rule, metadata.managedFields. Static. */
extern const struct kt_json_cut_rule KT_JSON_CUT_MANAGED_FIELDS[2];

/* Cut every member the rule list names from t[0..len) into out (at least len + 1 bytes; t is
 * not changed), on the terms of kt_json_cut_managed_fields_to. A list with no rule, or with
 * more than KT_JSON_CUT_RULES_MAX, cuts nothing (false). Does not retain rules. */
bool kt_json_cut_members_to(const char *t, size_t len, const struct kt_json_cut_rule *rules,
                            char *out, size_t *out_len);
/* The same in place, on the terms of kt_json_cut_managed_fields. */
bool kt_json_cut_members(char *t, size_t *len, const struct kt_json_cut_rule *rules);

/* Cut metadata.managedFields from t[0..*len) in place; *len gets the new length (a NUL is
 * written after it when something was cut). Returns true when something was cut. Nesting
 * deeper than 64 stops the walk there (nothing is cut; the text stays valid). */
bool kt_json_cut_managed_fields(char *t, size_t *len);

/* The same into out (at least len + 1 bytes; t is not changed). Returns true when something
 * was cut; else out is untouched and the caller uses t. */
bool kt_json_cut_managed_fields_to(const char *t, size_t len, char *out, size_t *out_len);

/* True when t[0..len) may hold a member the rule list names (a byte search for each member's
 * name in quotes): the cheap test before a copy. Never false where kt_json_cut_members would
 * cut; may be true where it would not (the name as a value, or inside a string). False for
 * a NULL t or a list with no rule or too many. Does not retain rules. */
bool kt_json_may_cut(const char *t, size_t len, const struct kt_json_cut_rule *rules);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/jsonpatch.h - the JSON Patch (RFC 6902) between two JSON documents, computed by
 * the rules of gomodules.xyz/jsonpatch/v2 CreatePatch, which controller-runtime's admission
 * webhooks answer with (docs/internals/upstream.md#trainjob-defaulter). */
#ifndef KT_JSONPATCH_H
#define KT_JSONPATCH_H

#include <jansson.h>
#include <stdbool.h>

/* The operations turning a into b (both borrowed; NULL reads as null), as that library makes
 * them: both documents compared as Go's generic JSON (numbers are float64, so 2 and 2.0 are
 * equal); a member of b missing from a is an "add" of b's value, a member of a missing from b
 * a "remove", values of different JSON types a "replace" (a null value included); objects and
 * arrays are compared member by member, an array first losing its extra elements (from the
 * last) and gaining b's extra ones. Values are copies of b's as Go would print them (object keys
 * sorted, numbers as float64). Upstream's operation order follows Go map iteration (random);
 * here objects go in b's member order, then a's removed members. Caller owns the array. */
json_t *kt_jsonpatch_create(const json_t *a, const json_t *b);

/* Is op (an element of such an array) a "remove"? */
bool kt_jsonpatch_is_remove(const json_t *op);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* webhook/review_json.h - the fast reader of an AdmissionReview body.
 *
 * kt_json_parse (jansson) builds every member of the review: userInfo, resource, options...
 * which the webhook never reads, and jansson's lexer is slow. This reader validates the whole
 * body as strictly as jansson does but builds only what admission.c and routes.c read:
 * apiVersion, kind and, under request, uid, operation, kind, dryRun, namespace, object and
 * oldObject (each built whole). Whatever it does not handle exactly like jansson (reals,
 * integers past 18 digits, \u0000, lone surrogates, nesting past 256, any syntax error, a
 * document that is not an object) it leaves to kt_json_parse, which then gives the same tree
 * or jansson's own error. Pure; thread-safe. */
#ifndef KT_WEBHOOK_REVIEW_JSON_H
#define KT_WEBHOOK_REVIEW_JSON_H

#include <jansson.h>
#include <stddef.h>

/* The review in body (len bytes, NUL not required) with only the members above, as jansson
 * would have decoded them (duplicate keys: last wins; key order kept). NULL when the body is
 * outside what this reader handles or an allocation failed: call kt_json_parse instead.
 * Caller owns the result; free with json_decref(). Does not retain body. */
json_t *kt_review_json_parse(const char *body, size_t len);

#endif

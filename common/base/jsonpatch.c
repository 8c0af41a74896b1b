/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/jsonpatch.c - JSON Patch between two documents; see jsonpatch.h. */
#include "common/base/jsonpatch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/buf.h"
#include "common/base/json.h"
#include "common/base/mem.h"

/* Go's dynamic types of a decoded generic JSON value. */
enum gtype { G_NIL, G_STRING, G_NUMBER, G_BOOL, G_OBJECT, G_ARRAY };

static enum gtype gtype(const json_t *v)
{
    switch (v ? json_typeof(v) : JSON_NULL) {
    case JSON_STRING:
        return G_STRING;
    case JSON_INTEGER:
    case JSON_REAL:
        return G_NUMBER;
    case JSON_TRUE:
    case JSON_FALSE:
        return G_BOOL;
    case JSON_OBJECT:
        return G_OBJECT;
    case JSON_ARRAY:
        return G_ARRAY;
    case JSON_NULL:
    default:
        return G_NIL;
    }
}

/* A number as float64 reads it: integral values print as integers (Go's %v of a float64 below
 * 1e21), integers beyond 2^53 rounded. */
static json_t *go_number(const json_t *v)
{
    double d = json_number_value(v);
    if (isfinite(d) && d == floor(d) && fabs(d) < 9.2e18) {
        return json_integer((json_int_t)d);
    }
    return json_real(d);
}

/* v as Go prints the interface{} it decodes into: object keys sorted, numbers float64. */
static json_t *go_generic(const json_t *v)
{
    switch (gtype(v)) {
    case G_OBJECT: {
        size_t n;
        const char **keys = kt_json_sorted_keys(v, &n);
        json_t *o = json_object();
        for (size_t i = 0; i < n; i++) {
            json_object_set_new(o, keys[i], go_generic(json_object_get(v, keys[i])));
        }
        free(keys);
        return o;
    }
    case G_ARRAY: {
        json_t *a = json_array(), *e;
        size_t i;
        json_array_foreach(v, i, e)
        {
            json_array_append_new(a, go_generic(e));
        }
        return a;
    }
    case G_NUMBER:
        return go_number(v);
    case G_NIL:
        return json_null();
    default:
        return json_deep_copy(v);
    }
}

/* The JSON Pointer of the value being compared: one buffer for the whole walk, grown and cut
 * back (kt_buf_truncate) while recursing; capped like any kt_buf (documents are bounded far
 * below: their depth and keys come from a capped request body). */
#define POINTER_MAX ((size_t)1 << 30)

/* Appends "/" + part (escaped); returns the length to cut back to. */
static size_t path_push(struct kt_buf *p, const char *part)
{
    size_t mark = p->len;
    KT_ASSERT(kt_json_pointer_push(p, part, NULL) == 0);
    return mark;
}

static size_t path_push_index(struct kt_buf *p, size_t i)
{
    char num[24];
    snprintf(num, sizeof(num), "%zu", i);
    return path_push(p, num);
}

/* Appends {"op", "path"[, "value"]}; add and replace always carry a value (null for nil). */
static void push(json_t *ops, const char *op, const char *path, const json_t *value)
{
    json_t *o = json_object();
    json_object_set_new(o, "op", json_string(op));
    json_object_set_new(o, "path", json_string(path));
    if (strcmp(op, "remove") != 0) {
        json_object_set_new(o, "value", go_generic(value));
    }
    json_array_append_new(ops, o);
}

static void handle(json_t *ops, const json_t *a, const json_t *b, struct kt_buf *path);

static void diff_object(json_t *ops, const json_t *a, const json_t *b, struct kt_buf *path)
{
    const char *k;
    json_t *bv, *av;
    json_object_foreach(kt__json_unconst(b), k, bv)
    {
        size_t mark = path_push(path, k);
        av = json_object_get(a, k);
        if (!av) {
            push(ops, "add", path->data, bv);
        } else {
            handle(ops, av, bv, path);
        }
        kt_buf_truncate(path, mark);
    }
    json_object_foreach(kt__json_unconst(a), k, av)
    {
        if (!json_object_get(b, k)) {
            size_t mark = path_push(path, k);
            push(ops, "remove", path->data, NULL);
            kt_buf_truncate(path, mark);
        }
    }
}

static void diff_array(json_t *ops, const json_t *a, const json_t *b, struct kt_buf *path)
{
    size_t na = json_array_size(a), nb = json_array_size(b), n = na < nb ? na : nb, mark;
    for (size_t i = na; i-- > n;) {
        mark = path_push_index(path, i);
        push(ops, "remove", path->data, NULL);
        kt_buf_truncate(path, mark);
    }
    for (size_t i = n; i < nb; i++) {
        mark = path_push_index(path, i);
        push(ops, "add", path->data, json_array_get(b, i));
        kt_buf_truncate(path, mark);
    }
    for (size_t i = 0; i < n; i++) {
        mark = path_push_index(path, i);
        handle(ops, json_array_get(a, i), json_array_get(b, i), path);
        kt_buf_truncate(path, mark);
    }
}

static bool same_scalar(const json_t *a, const json_t *b)
{
    switch (gtype(a)) {
    case G_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    case G_NUMBER:
        return json_number_value(a) == json_number_value(b);
    default: /* G_BOOL */
        return json_typeof(a) == json_typeof(b);
    }
}

static void handle(json_t *ops, const json_t *a, const json_t *b, struct kt_buf *path)
{
    enum gtype ta = gtype(a), tb = gtype(b);
    if (ta == G_NIL && tb == G_NIL) {
        return;
    }
    if (ta != tb) {
        push(ops, "replace", path->data, b);
    } else if (ta == G_OBJECT) {
        diff_object(ops, a, b, path);
    } else if (ta == G_ARRAY) {
        diff_array(ops, a, b, path);
    } else if (!same_scalar(a, b)) {
        push(ops, "replace", path->data, b);
    }
}

json_t *kt_jsonpatch_create(const json_t *a, const json_t *b)
{
    json_t *ops = json_array();
    struct kt_buf path;
    kt_buf_init(&path, POINTER_MAX);
    KT_ASSERT(kt_buf_append(&path, "", 0, NULL) == 0); /* "" is the whole document */
    handle(ops, a, b, &path);
    kt_buf_release(&path);
    return ops;
}

bool kt_jsonpatch_is_remove(const json_t *op)
{
    return strcmp(kt_json_str(op, "op", ""), "remove") == 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/yaml.c - YAML streams to json_t and back, as Kubernetes clients read them.
 *
 * Reading drives libyaml's event parser (not its document loader) and builds the tree
 * with an explicit stack, so nesting, node count and alias expansion are capped before
 * any memory is spent on them. Scalars resolve like sigs.k8s.io/yaml over its go-yaml v2
 * fork (YAML 1.1 booleans, 0x/0o/0b/leading-0 integers, `_` separators). Writing emits
 * block style by hand; it never emits anchors, tags or flow collections. */
#include "common/base/yaml.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/base/json.h"
#include "common/base/mem.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

void kt_yaml_limits_default(struct kt_yaml_limits *lim)
{
    lim->max_bytes = 8u << 20;
    lim->max_depth = 100;
    lim->max_nodes = 1000000;
}

/* ---- scalar resolution (go-yaml v2 resolve rules) ---- */

enum skind { SK_STR, SK_NULL, SK_BOOL, SK_INT, SK_FLOAT };

struct scalar {
    enum skind kind;
    bool b;
    int64_t i;
    double f;    /* SK_FLOAT; also integers beyond int64 (go-yaml's uint64) */
    bool binary; /* SK_STR from a !!binary tag: the text is base64 of the value */
};

struct word {
    const char *text;
    enum skind kind;
    int val; /* bool value, or the sign of an infinity (2 = NaN) */
};

static const struct word words[] = {
    {"y", SK_BOOL, 1},       {"Y", SK_BOOL, 1},       {"yes", SK_BOOL, 1},
    {"Yes", SK_BOOL, 1},     {"YES", SK_BOOL, 1},     {"on", SK_BOOL, 1},
    {"On", SK_BOOL, 1},      {"ON", SK_BOOL, 1},      {"true", SK_BOOL, 1},
    {"True", SK_BOOL, 1},    {"TRUE", SK_BOOL, 1},    {"n", SK_BOOL, 0},
    {"N", SK_BOOL, 0},       {"no", SK_BOOL, 0},      {"No", SK_BOOL, 0},
    {"NO", SK_BOOL, 0},      {"off", SK_BOOL, 0},     {"Off", SK_BOOL, 0},
    {"OFF", SK_BOOL, 0},     {"false", SK_BOOL, 0},   {"False", SK_BOOL, 0},
    {"FALSE", SK_BOOL, 0},   {"~", SK_NULL, 0},       {"null", SK_NULL, 0},
    {"Null", SK_NULL, 0},    {"NULL", SK_NULL, 0},    {".nan", SK_FLOAT, 2},
    {".NaN", SK_FLOAT, 2},   {".NAN", SK_FLOAT, 2},   {".inf", SK_FLOAT, 1},
    {".Inf", SK_FLOAT, 1},   {".INF", SK_FLOAT, 1},   {"+.inf", SK_FLOAT, 1},
    {"+.Inf", SK_FLOAT, 1},  {"+.INF", SK_FLOAT, 1},  {"-.inf", SK_FLOAT, -1},
    {"-.Inf", SK_FLOAT, -1}, {"-.INF", SK_FLOAT, -1},
};

static bool lookup_word(const char *s, size_t len, struct scalar *out)
{
    size_t i;

    for (i = 0; i < KT_ARRAY_SIZE(words); i++) {
        if (strlen(words[i].text) == len && memcmp(words[i].text, s, len) == 0) {
            out->kind = words[i].kind;
            out->b = words[i].val == 1;
            if (words[i].kind == SK_FLOAT) {
                out->f = words[i].val == 2  ? (double)NAN
                         : words[i].val < 0 ? -(double)INFINITY
                                            : (double)INFINITY;
            }
            return true;
        }
    }
    return false;
}

static int digit_value(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return 99;
}

/* Go's strconv.ParseUint(s, 0, 64) on an unsigned body: 0x, 0o, 0b, leading-0 octal. */
static bool parse_uint_base0(const char *s, size_t len, uint64_t *out)
{
    unsigned base = 10;
    uint64_t v = 0;
    size_t i = 0;

    if (len >= 2 && s[0] == '0') {
        char p = s[1];
        if (p == 'x' || p == 'X' || p == 'o' || p == 'O' || p == 'b' || p == 'B') {
            base = (p == 'x' || p == 'X') ? 16 : (p == 'o' || p == 'O') ? 8 : 2;
            i = 2;
        } else {
            base = 8;
            i = 1;
        }
    }
    if (i >= len) {
        return false;
    }
    for (; i < len; i++) {
        unsigned d = (unsigned)digit_value(s[i]);
        if (d >= base || v > (UINT64_MAX - d) / base) {
            return false;
        }
        v = v * base + d;
    }
    *out = v;
    return true;
}

/* The float syntax go-yaml accepts: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool float_syntax(const char *s, size_t len)
{
    size_t i = 0;
    size_t d = 0;

    if (i < len && (s[i] == '-' || s[i] == '+')) {
        i++;
    }
    if (i < len && s[i] == '.') {
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
            d++;
        }
    } else {
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
            d++;
        }
        if (d && i < len && s[i] == '.') {
            for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
            }
        }
    }
    if (!d) {
        return false;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t e = 0;
        i++;
        if (i < len && (s[i] == '-' || s[i] == '+')) {
            i++;
        }
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
            e++;
        }
        if (!e) {
            return false;
        }
    }
    return i == len;
}

/* A number in go-yaml's order: ParseInt, ParseUint, then a float that does not overflow.
 * buf has had its underscores removed. */
static bool resolve_digits(const char *buf, size_t n, struct scalar *out)
{
    uint64_t u;
    bool neg;
    size_t off;

    neg = n > 0 && buf[0] == '-';
    off = (n > 0 && (buf[0] == '-' || buf[0] == '+')) ? 1 : 0;
    if (n > off && parse_uint_base0(buf + off, n - off, &u)) {
        if (neg ? u <= (uint64_t)INT64_MAX + 1 : u <= (uint64_t)INT64_MAX) {
            out->kind = SK_INT;
            out->i = neg ? (int64_t)(0 - u) : (int64_t)u;
            return true;
        }
        if (!off) {
            out->kind = SK_FLOAT;
            out->f = (double)u;
            return true;
        }
    }
    if (float_syntax(buf, n)) {
        double f = strtod(buf, NULL);
        if (!isinf(f)) {
            out->kind = SK_FLOAT;
            out->f = f;
            return true;
        }
    }
    return false;
}

static bool resolve_number(const char *s, size_t len, struct scalar *out)
{
    char small[128];
    char *buf = len < sizeof(small) ? small : kt_xmalloc(len + 1);
    size_t n = 0;
    size_t i;
    bool ok;

    for (i = 0; i < len; i++) {
        if (s[i] != '_') {
            buf[n++] = s[i];
        }
    }
    buf[n] = '\0';
    ok = resolve_digits(buf, n, out);
    if (buf != small) {
        free(buf);
    }
    return ok;
}

/* Resolve an untagged plain scalar. */
static void resolve_plain(const char *s, size_t len, struct scalar *out)
{
    memset(out, 0, sizeof(*out));
    out->kind = SK_STR;
    if (len == 0) {
        out->kind = SK_NULL;
        return;
    }
    if (lookup_word(s, len, out)) {
        return;
    }
    if (s[0] == '.') {
        if (float_syntax(s, len)) {
            double f = strtod(s, NULL);
            if (!isinf(f)) {
                out->kind = SK_FLOAT;
                out->f = f;
            }
        }
        return;
    }
    if (s[0] == '+' || s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) {
        if (!resolve_number(s, len, out)) {
            out->kind = SK_STR;
        }
    }
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decode standard padded base64 the way Go's base64.StdEncoding does (CR and LF are
 * skipped). With out NULL only validates. out, when given, has room for len bytes;
 * its length goes to out->len. */
static bool base64_decode(const char *s, size_t len, struct kt_buf *out)
{
    unsigned acc = 0;
    size_t bits = 0;
    size_t chars = 0;
    size_t pad = 0;
    size_t i;

    for (i = 0; i < len; i++) {
        int v;
        char byte;

        if (s[i] == '\r' || s[i] == '\n') {
            continue;
        }
        chars++;
        if (s[i] == '=') {
            pad++;
            continue;
        }
        v = b64_value(s[i]);
        if (v < 0 || pad) {
            return false;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            byte = (char)((acc >> bits) & 0xFF);
            if (out && kt_buf_append(out, &byte, 1, NULL) < 0) {
                return false;
            }
        }
    }
    /* Like Go's non-strict decoder, leftover bits before the padding are ignored. */
    return chars % 4 == 0 && pad <= 2;
}

/* Length of the valid UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p, size_t left)
{
    size_t n;
    unsigned cp;
    size_t i;

    if (p[0] < 0x80) {
        return 1;
    }
    n = (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (!n || n > left) {
        return 0;
    }
    cp = p[0] & (0xFFu >> (n + 1));
    for (i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    return n;
}

/* The string a !!binary scalar stands for: its bytes, each invalid UTF-8 byte replaced
 * by U+FFFD as Go's encoding/json does. Caller owns the result; NULL on bad base64. */
static json_t *binary_json(const char *s, size_t len)
{
    struct kt_buf raw;
    struct kt_buf txt;
    size_t i = 0;
    json_t *v = NULL;

    kt_buf_init(&raw, len + 1);
    kt_buf_init(&txt, 3 * len + 1);
    if (!base64_decode(s, len, &raw) || kt_buf_append(&raw, "", 0, NULL) < 0) {
        goto out;
    }
    while (i < raw.len) {
        size_t n = utf8_len((const unsigned char *)raw.data + i, raw.len - i);

        if (n ? kt_buf_append(&txt, raw.data + i, n, NULL) < 0
              : kt_buf_append(&txt, "\xEF\xBF\xBD", 3, NULL) < 0) {
            goto out;
        }
        i += n ? n : 1;
    }
    v = json_stringn(txt.data ? txt.data : "", txt.len);
out:
    kt_buf_release(&raw);
    kt_buf_release(&txt);
    return v;
}

static const char *kind_tag(enum skind k)
{
    switch (k) {
    case SK_NULL:
        return "!!null";
    case SK_BOOL:
        return "!!bool";
    case SK_INT:
        return "!!int";
    case SK_FLOAT:
        return "!!float";
    case SK_STR:
    default:
        return "!!str";
    }
}

/* Resolve a scalar event: quoted and block scalars are strings unless tagged; tags
 * !!int/!!float/!!bool must match what the text resolves to (an int may be a float). */
static int resolve_scalar(const yaml_event_t *ev, struct scalar *out, struct kt_err *err)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    const char *want = NULL;

    memset(out, 0, sizeof(*out));
    out->kind = SK_STR;
    if (!tag) {
        if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
            resolve_plain(s, len, out);
        }
        return 0;
    }
    if (strcmp(tag, TAG_PREFIX "int") == 0) {
        want = "!!int";
    } else if (strcmp(tag, TAG_PREFIX "float") == 0) {
        want = "!!float";
    } else if (strcmp(tag, TAG_PREFIX "bool") == 0) {
        want = "!!bool";
    } else if (strcmp(tag, TAG_PREFIX "null") == 0) {
        want = "!!null";
    } else if (strcmp(tag, TAG_PREFIX "binary") == 0) {
        out->binary = true;
        if (!base64_decode(s, len, NULL)) {
            return kt_err_set(err, KT_EPARSE,
                              "line %zu: !!binary value contains invalid base64 data",
                              ev->start_mark.line + 1);
        }
        return 0;
    } else {
        return 0; /* !!str, !!timestamp, custom tags: the text itself */
    }
    resolve_plain(s, len, out);
    if (strcmp(want, "!!float") == 0 && out->kind == SK_INT) {
        out->kind = SK_FLOAT;
        out->f = (double)out->i;
    }
    if (strcmp(kind_tag(out->kind), want) != 0) {
        return kt_err_set(err, KT_EPARSE, "line %zu: cannot decode %s `%.*s` as a %s",
                          ev->start_mark.line + 1, kind_tag(out->kind), len > 64 ? 64 : (int)len, s,
                          want);
    }
    return 0;
}

/* ---- building the tree ---- */

struct frame {
    json_t *node;          /* object or array under construction; owned */
    char *anchor;          /* owned; NULL when the node has none */
    size_t line;           /* 1-based line where the node starts */
    size_t nodes0;         /* builder node count when the node started */
    size_t height;         /* collection levels below this node so far */
    size_t ptr_len;        /* length of this node's JSON Pointer in the builder's ptr */
    char *key;             /* pending key of a mapping; owned; NULL when a key comes next */
    size_t key_line;       /* line of the pending key */
    bool merge;            /* the pending key is the merge key `<<` */
    bool record;           /* keep lines of the children */
    json_t *explicit_keys; /* keys written explicitly, kept once a merge happened; owned */
};

struct anchor {
    char *name;    /* owned */
    json_t *value; /* owned reference */
    size_t nodes;  /* nodes the value stands for, aliases expanded */
    size_t height; /* collection levels of the value (0 for a scalar) */
};

struct builder {
    const struct kt_yaml_limits *lim;
    struct kt_err *err;
    struct frame *stack;
    size_t depth;
    size_t stack_cap;
    struct anchor *anchors;
    size_t nanchors;
    size_t anchors_cap;
    json_t *anchor_index; /* name -> index into anchors */
    size_t nodes;         /* nodes produced in the whole stream, aliases expanded */
    char *ptr;            /* JSON Pointer of the node being started */
    size_t ptr_len;
    size_t ptr_cap;
    struct kt_yaml_doc doc; /* the document being read */
};

static void ptr_truncate_append(struct builder *bd, size_t at, const char *seg, size_t n)
{
    size_t i;

    if (at + 1 + 2 * n + 1 > bd->ptr_cap) {
        bd->ptr_cap = (at + 1 + 2 * n + 1) * 2;
        bd->ptr = kt_xrealloc(bd->ptr, bd->ptr_cap);
    }
    bd->ptr_len = at;
    bd->ptr[bd->ptr_len++] = '/';
    for (i = 0; i < n; i++) {
        if (seg[i] == '~' || seg[i] == '/') {
            bd->ptr[bd->ptr_len++] = '~';
            bd->ptr[bd->ptr_len++] = seg[i] == '~' ? '0' : '1';
        } else {
            bd->ptr[bd->ptr_len++] = seg[i];
        }
    }
    bd->ptr[bd->ptr_len] = '\0';
}

/* Compute the pointer of a node that starts now and record its line. Returns whether
 * its own children should be recorded. */
static bool begin_value(struct builder *bd, size_t line)
{
    struct frame *p;
    char idx[32];
    int n;

    if (bd->depth == 0) {
        bd->ptr_len = 0;
        if (!bd->ptr) {
            bd->ptr_cap = 64;
            bd->ptr = kt_xmalloc(bd->ptr_cap);
        }
        bd->ptr[0] = '\0';
        bd->doc.line = line;
        json_object_set_new(bd->doc.lines, "", json_integer((json_int_t)line));
        return true;
    }
    p = &bd->stack[bd->depth - 1];
    if (!p->record || p->merge) {
        return false;
    }
    if (json_is_array(p->node)) {
        n = snprintf(idx, sizeof(idx), "%zu", json_array_size(p->node));
        ptr_truncate_append(bd, p->ptr_len, idx, (size_t)n);
    } else {
        ptr_truncate_append(bd, p->ptr_len, p->key, strlen(p->key));
        line = p->key_line;
    }
    json_object_set_new(bd->doc.lines, bd->ptr, json_integer((json_int_t)line));
    return true;
}

static int count_nodes(struct builder *bd, size_t add, bool alias, size_t line)
{
    if (add > bd->lim->max_nodes || bd->nodes > bd->lim->max_nodes - add) {
        return kt_err_set(bd->err, KT_ERANGE,
                          alias ? "line %zu: too many nodes (alias expansion): more than %zu"
                                : "line %zu: too many nodes: more than %zu",
                          line, bd->lim->max_nodes);
    }
    bd->nodes += add;
    return 0;
}

static void anchor_set(struct builder *bd, const char *name, json_t *v, size_t nodes, size_t height)
{
    json_t *idx = json_object_get(bd->anchor_index, name);
    struct anchor *a;

    if (idx) {
        a = &bd->anchors[json_integer_value(idx)];
        json_decref(a->value);
    } else {
        if (bd->nanchors == bd->anchors_cap) {
            bd->anchors_cap = bd->anchors_cap ? bd->anchors_cap * 2 : 8;
            bd->anchors = kt_xrealloc(bd->anchors, bd->anchors_cap * sizeof(*bd->anchors));
        }
        a = &bd->anchors[bd->nanchors];
        a->name = kt_xstrdup(name);
        json_object_set_new(bd->anchor_index, name, json_integer((json_int_t)bd->nanchors));
        bd->nanchors++;
    }
    a->value = json_incref(v);
    a->nodes = nodes;
    a->height = height;
}

static void anchors_clear(struct builder *bd)
{
    size_t i;

    for (i = 0; i < bd->nanchors; i++) {
        free(bd->anchors[i].name);
        json_decref(bd->anchors[i].value);
    }
    bd->nanchors = 0;
    json_object_clear(bd->anchor_index);
}

/* The string a scalar key becomes (sigs.k8s.io/yaml): ints in decimal, floats as
 * FormatFloat(f, 'g', -1, 32), booleans true/false. Null keys are rejected. */
static char *key_string(const json_t *v, size_t line, struct kt_err *err)
{
    char num[KT_JSON_REAL_MAX];

    switch (json_typeof(v)) {
    case JSON_STRING:
        return kt_xstrdup(json_string_value(v));
    case JSON_INTEGER:
        return kt_xasprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL:
        kt_json_format_float32_key(json_real_value(v), num);
        return kt_xstrdup(num);
    case JSON_TRUE:
        return kt_xstrdup("true");
    case JSON_FALSE:
        return kt_xstrdup("false");
    case JSON_NULL:
        kt_err_set(err, KT_EPARSE, "line %zu: unsupported map key: null", line);
        return NULL;
    default:
        kt_err_set(err, KT_EPARSE, "line %zu: a mapping or sequence cannot be a map key", line);
        return NULL;
    }
}

static json_t *scalar_json(const struct scalar *sc, const yaml_event_t *ev, struct kt_err *err)
{
    json_t *v;

    switch (sc->kind) {
    case SK_NULL:
        return json_null();
    case SK_BOOL:
        return json_boolean(sc->b);
    case SK_INT:
        return json_integer((json_int_t)sc->i);
    case SK_FLOAT:
        if (isnan(sc->f) || isinf(sc->f)) {
            /* Go's encoding/json refuses these, so sigs.k8s.io/yaml fails too. */
            kt_err_set(err, KT_EPARSE, "line %zu: unsupported value: %s", ev->start_mark.line + 1,
                       isnan(sc->f) ? "NaN"
                       : sc->f > 0  ? "+Inf"
                                    : "-Inf");
            return NULL;
        }
        return json_real(sc->f);
    case SK_STR:
    default:
        if (sc->binary) {
            v = binary_json((const char *)ev->data.scalar.value, ev->data.scalar.length);
        } else {
            v = json_stringn((const char *)ev->data.scalar.value, ev->data.scalar.length);
        }
        if (!v) {
            kt_err_set(err, KT_EPARSE, "line %zu: invalid UTF-8 in a string",
                       ev->start_mark.line + 1);
        }
        return v;
    }
}

static char *scalar_key(const struct scalar *sc, const yaml_event_t *ev, struct kt_err *err)
{
    char num[KT_JSON_REAL_MAX];

    switch (sc->kind) {
    case SK_NULL:
        kt_err_set(err, KT_EPARSE, "line %zu: unsupported map key: null", ev->start_mark.line + 1);
        return NULL;
    case SK_BOOL:
        return kt_xstrdup(sc->b ? "true" : "false");
    case SK_INT:
        return kt_xasprintf("%" PRId64, sc->i);
    case SK_FLOAT:
        kt_json_format_float32_key(sc->f, num);
        return kt_xstrdup(num);
    case SK_STR:
    default:
        if (sc->binary) {
            json_t *v = binary_json((const char *)ev->data.scalar.value, ev->data.scalar.length);
            char *k = kt_xstrdup(v ? json_string_value(v) : "");

            json_decref(v);
            return k;
        }
        return kt_xstrndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
    }
}

static void warn_duplicate(struct builder *bd, const char *key, size_t line)
{
    char *w = kt_xasprintf("%zu: duplicate key \"%s\"", line, key);

    kt_strv_push(&bd->doc.warnings, w);
    free(w);
}

static void merge_object(struct frame *p, json_t *src)
{
    const char *k;
    json_t *val;

    if (!p->explicit_keys) {
        /* Every key so far was written explicitly; later duplicates of them still warn. */
        p->explicit_keys = json_object();
        json_object_foreach(p->node, k, val)
        {
            json_object_set_new(p->explicit_keys, k, json_true());
        }
    }
    json_object_foreach(src, k, val)
    {
        json_object_set(p->node, k, val);
    }
}

/* go-yaml v2 merges in document order: a merge overwrites keys written before it and
 * later keys overwrite merged ones. Of a list of maps, earlier maps take precedence. */
static int merge_value(struct frame *p, json_t *v, size_t line, struct kt_err *err)
{
    size_t i;

    if (json_is_object(v)) {
        merge_object(p, v);
        return 0;
    }
    if (json_is_array(v)) {
        for (i = 0; i < json_array_size(v); i++) {
            if (!json_is_object(json_array_get(v, i))) {
                goto bad;
            }
        }
        for (i = json_array_size(v); i > 0; i--) {
            merge_object(p, json_array_get(v, i - 1));
        }
        return 0;
    }
bad:
    return kt_err_set(err, KT_EPARSE,
                      "line %zu: map merge requires map or sequence of maps as the value", line);
}

/* Attach a finished value (owned) to its parent or make it the document root. */
static int value_done(struct builder *bd, json_t *v, size_t line, size_t height, size_t nodes,
                      char *anchor)
{
    struct frame *p;
    int rc = 0;

    if (anchor) {
        anchor_set(bd, anchor, v, nodes, height);
        free(anchor);
    }
    if (bd->depth == 0) {
        json_decref(bd->doc.root);
        bd->doc.root = v;
        return 0;
    }
    p = &bd->stack[bd->depth - 1];
    if (height > p->height) {
        p->height = height;
    }
    if (json_is_array(p->node)) {
        json_array_append_new(p->node, v);
        return 0;
    }
    if (p->merge) {
        rc = merge_value(p, v, line, bd->err);
        json_decref(v);
    } else {
        if (json_object_get(p->node, p->key) &&
            (!p->explicit_keys || json_object_get(p->explicit_keys, p->key))) {
            warn_duplicate(bd, p->key, p->key_line);
        }
        if (p->explicit_keys) {
            json_object_set_new(p->explicit_keys, p->key, json_true());
        }
        json_object_set_new(p->node, p->key, v);
    }
    free(p->key);
    p->key = NULL;
    p->merge = false;
    return rc;
}

static bool key_position(const struct builder *bd)
{
    const struct frame *p;

    if (bd->depth == 0) {
        return false;
    }
    p = &bd->stack[bd->depth - 1];
    return json_is_object(p->node) && !p->key;
}

static int on_scalar(struct builder *bd, const yaml_event_t *ev)
{
    struct scalar sc;
    size_t line = ev->start_mark.line + 1;
    const char *anchor = (const char *)ev->data.scalar.anchor;
    json_t *v;

    if (resolve_scalar(ev, &sc, bd->err) < 0 || count_nodes(bd, 1, false, line) < 0) {
        return -1;
    }
    if (key_position(bd)) {
        struct frame *p = &bd->stack[bd->depth - 1];
        const char *tag = (const char *)ev->data.scalar.tag;

        p->key = scalar_key(&sc, ev, bd->err);
        if (!p->key) {
            return -1;
        }
        p->key_line = line;
        p->merge = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && strcmp(p->key, "<<") == 0 &&
                   (!tag || strcmp(tag, TAG_PREFIX "merge") == 0);
        if (anchor) {
            v = scalar_json(&sc, ev, NULL);
            if (!v) {
                v = json_string(p->key);
            }
            anchor_set(bd, anchor, v, 1, 0);
            json_decref(v);
        }
        return 0;
    }
    begin_value(bd, line);
    v = scalar_json(&sc, ev, bd->err);
    if (!v) {
        return -1;
    }
    return value_done(bd, v, line, 0, 1, anchor ? kt_xstrdup(anchor) : NULL);
}

static int on_alias(struct builder *bd, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    size_t line = ev->start_mark.line + 1;
    json_t *idx = json_object_get(bd->anchor_index, name);
    const struct anchor *a;

    if (!idx) {
        return kt_err_set(bd->err, KT_EPARSE, "line %zu: unknown anchor '%.64s' referenced", line,
                          name);
    }
    a = &bd->anchors[json_integer_value(idx)];
    if (count_nodes(bd, a->nodes, true, line) < 0) {
        return -1;
    }
    if (key_position(bd)) {
        struct frame *p = &bd->stack[bd->depth - 1];

        p->key = key_string(a->value, line, bd->err);
        p->key_line = line;
        p->merge = false;
        return p->key ? 0 : -1;
    }
    if (bd->depth + a->height > bd->lim->max_depth) {
        return kt_err_set(bd->err, KT_ERANGE, "line %zu: nesting deeper than %zu levels", line,
                          bd->lim->max_depth);
    }
    begin_value(bd, line);
    return value_done(bd, json_deep_copy(a->value), line, a->height, a->nodes, NULL);
}

static int on_start(struct builder *bd, const yaml_event_t *ev, bool mapping)
{
    size_t line = ev->start_mark.line + 1;
    const yaml_char_t *anchor =
        mapping ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    struct frame *f;
    bool record;

    if (key_position(bd)) {
        return kt_err_set(bd->err, KT_EPARSE, "line %zu: a mapping or sequence cannot be a map key",
                          line);
    }
    if (bd->depth + 1 > bd->lim->max_depth) {
        return kt_err_set(bd->err, KT_ERANGE, "line %zu: nesting deeper than %zu levels", line,
                          bd->lim->max_depth);
    }
    if (count_nodes(bd, 1, false, line) < 0) {
        return -1;
    }
    record = begin_value(bd, line);
    if (bd->depth == bd->stack_cap) {
        bd->stack_cap = bd->stack_cap ? bd->stack_cap * 2 : 16;
        bd->stack = kt_xrealloc(bd->stack, bd->stack_cap * sizeof(*bd->stack));
    }
    f = &bd->stack[bd->depth++];
    memset(f, 0, sizeof(*f));
    f->node = mapping ? json_object() : json_array();
    f->anchor = anchor ? kt_xstrdup((const char *)anchor) : NULL;
    f->line = line;
    f->nodes0 = bd->nodes - 1;
    f->ptr_len = bd->ptr_len;
    f->record = record;
    return 0;
}

static int on_end(struct builder *bd)
{
    struct frame f;

    KT_ASSERT(bd->depth > 0);
    f = bd->stack[--bd->depth];
    free(f.key);
    json_decref(f.explicit_keys);
    return value_done(bd, f.node, f.line, f.height + 1, bd->nodes - f.nodes0, f.anchor);
}

static void doc_release(struct kt_yaml_doc *d)
{
    json_decref(d->root);
    json_decref(d->lines);
    kt_strv_release(&d->warnings);
    memset(d, 0, sizeof(*d));
}

static void on_doc_start(struct builder *bd, const yaml_event_t *ev)
{
    doc_release(&bd->doc);
    bd->doc.lines = json_object();
    kt_strv_init(&bd->doc.warnings);
    bd->doc.line = ev->start_mark.line + 1;
}

static void on_doc_end(struct builder *bd, struct kt_yaml_stream *out)
{
    if (json_is_null(bd->doc.root)) {
        json_decref(bd->doc.root);
        bd->doc.root = NULL;
    }
    if ((out->len & (out->len - 1)) == 0) { /* capacity doubles at powers of two */
        out->docs = kt_xrealloc(out->docs, (out->len ? 2 * out->len : 1) * sizeof(*out->docs));
    }
    out->docs[out->len++] = bd->doc;
    memset(&bd->doc, 0, sizeof(bd->doc));
    anchors_clear(bd);
}

static int on_event(struct builder *bd, const yaml_event_t *ev, struct kt_yaml_stream *out)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        on_doc_start(bd, ev);
        return 0;
    case YAML_DOCUMENT_END_EVENT:
        on_doc_end(bd, out);
        return 0;
    case YAML_SCALAR_EVENT:
        return on_scalar(bd, ev);
    case YAML_ALIAS_EVENT:
        return on_alias(bd, ev);
    case YAML_MAPPING_START_EVENT:
        return on_start(bd, ev, true);
    case YAML_SEQUENCE_START_EVENT:
        return on_start(bd, ev, false);
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT:
        return on_end(bd);
    case YAML_STREAM_START_EVENT:
    case YAML_STREAM_END_EVENT:
    case YAML_NO_EVENT:
    default:
        return 0;
    }
}

static size_t line_of_offset(const char *data, size_t len, size_t off)
{
    size_t line = 1;
    size_t i;

    for (i = 0; i < off && i < len; i++) {
        if (data[i] == '\n') {
            line++;
        }
    }
    return line;
}

static int parser_error(const yaml_parser_t *ps, const char *data, size_t len, struct kt_err *err)
{
    const char *problem = ps->problem ? ps->problem : "invalid YAML";
    size_t line;

    switch (ps->error) {
    case YAML_READER_ERROR:
        line = line_of_offset(data, len, ps->problem_offset);
        break;
    case YAML_SCANNER_ERROR:
    case YAML_PARSER_ERROR:
        line = ps->problem_mark.line + 1;
        if (ps->context) {
            return kt_err_set(err, KT_EPARSE, "line %zu: %s (%s at line %zu)", line, problem,
                              ps->context, ps->context_mark.line + 1);
        }
        break;
    case YAML_MEMORY_ERROR:
    case YAML_NO_ERROR:
    case YAML_COMPOSER_ERROR:
    case YAML_WRITER_ERROR:
    case YAML_EMITTER_ERROR:
    default:
        line = ps->problem_mark.line + 1;
        break;
    }
    return kt_err_set(err, KT_EPARSE, "line %zu: %s", line, problem);
}

static void builder_release(struct builder *bd)
{
    size_t i;

    for (i = 0; i < bd->depth; i++) {
        json_decref(bd->stack[i].node);
        free(bd->stack[i].anchor);
        free(bd->stack[i].key);
        json_decref(bd->stack[i].explicit_keys);
    }
    free(bd->stack);
    anchors_clear(bd);
    free(bd->anchors);
    json_decref(bd->anchor_index);
    free(bd->ptr);
    doc_release(&bd->doc);
}

int kt_yaml_parse(const char *data, size_t len, const struct kt_yaml_limits *lim,
                  struct kt_yaml_stream *out, struct kt_err *err)
{
    struct kt_yaml_limits def;
    struct builder bd;
    yaml_parser_t ps;
    yaml_event_t ev;
    int rc = -1;
    bool done = false;

    memset(out, 0, sizeof(*out));
    if (!lim) {
        kt_yaml_limits_default(&def);
        lim = &def;
    }
    if (len > lim->max_bytes) {
        return kt_err_set(err, KT_ETOOBIG, "YAML input of %zu bytes exceeds the limit of %zu", len,
                          lim->max_bytes);
    }
    memset(&bd, 0, sizeof(bd));
    bd.lim = lim;
    bd.err = err;
    bd.anchor_index = json_object();
    if (!yaml_parser_initialize(&ps)) {
        json_decref(bd.anchor_index);
        return kt_err_set(err, KT_EINTERNAL, "cannot initialize the YAML parser");
    }
    yaml_parser_set_input_string(&ps, (const unsigned char *)(data ? data : ""), data ? len : 0);
    while (!done) {
        if (!yaml_parser_parse(&ps, &ev)) {
            parser_error(&ps, data, len, err);
            goto out;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        if (on_event(&bd, &ev, out) < 0) {
            yaml_event_delete(&ev);
            goto out;
        }
        yaml_event_delete(&ev);
    }
    rc = 0;
out:
    yaml_parser_delete(&ps);
    builder_release(&bd);
    return rc;
}

size_t kt_yaml_line(const struct kt_yaml_doc *doc, const char *ptr)
{
    char *p;
    char *slash;
    json_t *v;
    size_t line = doc->line;

    if (!doc->lines || !ptr) {
        return line;
    }
    /* Fall back to the nearest ancestor (merged or alias-expanded nodes have no entry). */
    p = kt_xstrdup(ptr);
    for (;;) {
        v = json_object_get(doc->lines, p);
        if (v) {
            line = (size_t)json_integer_value(v);
            break;
        }
        slash = strrchr(p, '/');
        if (!slash) {
            break;
        }
        *slash = '\0';
    }
    free(p);
    return line;
}

void kt_yaml_stream_release(struct kt_yaml_stream *s)
{
    size_t i;

    for (i = 0; i < s->len; i++) {
        doc_release(&s->docs[i]);
    }
    free(s->docs);
    s->docs = NULL;
    s->len = 0;
}

/* ---- writing ---- */

/* jansson's iteration API takes non-const pointers even for reading. */
static json_t *unconst_json(const json_t *v)
{
    json_t *r;

    memcpy(&r, &v, sizeof(r));
    return r;
}

struct emitter {
    struct kt_buf *b;
    struct kt_err *err;
};

/* Keys longer than this use the explicit "? key" form: libyaml limits simple keys to
 * 1024 characters. */
#define LONG_KEY 512

static int out(struct emitter *e, const char *s, size_t n)
{
    return kt_buf_append(e->b, s, n, e->err);
}

static int out_indent(struct emitter *e, size_t n)
{
    static const char spaces[] = "                                ";

    while (n > 0) {
        size_t k = n > 32 ? 32 : n;
        if (out(e, spaces, k) < 0) {
            return -1;
        }
        n -= k;
    }
    return 0;
}

/* Length of a character YAML must not see raw (C1 controls, NEL, LS, PS, BOM) at p,
 * or 0. p points into valid UTF-8. */
static size_t special_unicode(const unsigned char *p, size_t left)
{
    if (left >= 2 && p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
        return 2;
    }
    if (left >= 3 && p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9)) {
        return 3;
    }
    if (left >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) {
        return 3;
    }
    if (left >= 3 && p[0] == 0xEF && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF)) {
        return 3;
    }
    return 0;
}

/* Bytes that are fine inside a plain or literal scalar (no controls, no odd Unicode). */
static bool printable(const char *s, size_t len, bool allow_newline)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i;

    for (i = 0; i < len; i++) {
        if (p[i] == '\n' && allow_newline) {
            continue;
        }
        if (p[i] < 0x20 || p[i] == 0x7F || special_unicode(p + i, len - i)) {
            return false;
        }
    }
    return true;
}

/* Would s read back, unquoted, as the same string? */
static bool plain_ok(const char *s, size_t len)
{
    struct scalar sc;

    if (len == 0 || !printable(s, len, false) || strchr("-?:,[]{}#&*!|>'\"%@` ", s[0]) ||
        s[len - 1] == ' ' || s[len - 1] == ':' || (len >= 3 && memcmp(s, "...", 3) == 0) ||
        (len == 2 && memcmp(s, "<<", 2) == 0) || memchr(s, '\0', len)) {
        return false;
    }
    for (size_t i = 0; i + 1 < len; i++) {
        if ((s[i] == ':' && s[i + 1] == ' ') || (s[i] == ' ' && s[i + 1] == '#')) {
            return false;
        }
    }
    resolve_plain(s, len, &sc);
    return sc.kind == SK_STR;
}

/* Can s be written as a literal block (|) and read back unchanged? */
static bool literal_ok(const char *s, size_t len)
{
    size_t i;

    if (len < 2 || !memchr(s, '\n', len) || s[0] == ' ' || s[0] == '\n' ||
        !printable(s, len, true)) {
        return false;
    }
    for (i = 0; i < len; i++) {
        if (s[i] == ' ' && (i + 1 == len || s[i + 1] == '\n')) {
            return false;
        }
    }
    return true;
}

static int emit_dq(struct emitter *e, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    size_t run = 0;
    char esc[16];
    size_t n;
    size_t sp;

    if (out(e, "\"", 1) < 0) {
        return -1;
    }
    while (i < len) {
        sp = special_unicode(p + i, len - i);
        n = 0;
        if (p[i] == '"' || p[i] == '\\') {
            n = (size_t)snprintf(esc, sizeof(esc), "\\%c", p[i]);
        } else if (p[i] == '\n') {
            n = (size_t)snprintf(esc, sizeof(esc), "\\n");
        } else if (p[i] == '\t') {
            n = (size_t)snprintf(esc, sizeof(esc), "\\t");
        } else if (p[i] < 0x20 || p[i] == 0x7F) {
            n = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
        } else if (sp == 2) {
            n = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", p[i + 1]);
        } else if (sp == 3) {
            unsigned cp = ((p[i] & 0x0Fu) << 12) | ((p[i + 1] & 0x3Fu) << 6) | (p[i + 2] & 0x3Fu);
            n = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", cp);
        }
        if (!n) {
            i++;
            continue;
        }
        if (out(e, s + run, i - run) < 0 || out(e, esc, n) < 0) {
            return -1;
        }
        i += sp ? sp : 1;
        run = i;
    }
    if (out(e, s + run, i - run) < 0) {
        return -1;
    }
    return out(e, "\"", 1);
}

/* A literal block whose content lines are indented by indent; ends with a newline. */
static int emit_literal(struct emitter *e, const char *s, size_t len, size_t indent)
{
    size_t trail = 0;
    size_t i = 0;
    const char *head;

    while (trail < len && s[len - 1 - trail] == '\n') {
        trail++;
    }
    head = trail == 0 ? "|-\n" : trail == 1 ? "|\n" : "|+\n";
    if (out(e, head, 3 - (trail == 1)) < 0) {
        return -1;
    }
    while (i < len - trail) {
        const char *nl = memchr(s + i, '\n', len - trail - i);
        size_t end = nl ? (size_t)(nl - s) : len - trail;

        if (end > i && (out_indent(e, indent) < 0 || out(e, s + i, end - i) < 0)) {
            return -1;
        }
        if (out(e, "\n", 1) < 0) {
            return -1;
        }
        i = end + 1;
    }
    for (i = 1; i < trail; i++) {
        if (out(e, "\n", 1) < 0) {
            return -1;
        }
    }
    return 0;
}

static int emit_string(struct emitter *e, const char *s, size_t len)
{
    if (plain_ok(s, len)) {
        return out(e, s, len);
    }
    return emit_dq(e, s, len);
}

/* A scalar or empty collection followed by a newline. Literal content gets indent. */
static int emit_scalar(struct emitter *e, const json_t *v, size_t indent)
{
    char num[KT_JSON_REAL_MAX];
    int n;
    int rc;

    switch (json_typeof(v)) {
    case JSON_STRING:
        if (literal_ok(json_string_value(v), json_string_length(v))) {
            return emit_literal(e, json_string_value(v), json_string_length(v), indent);
        }
        rc = emit_string(e, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        rc = out(e, num, (size_t)n);
        break;
    case JSON_REAL:
        rc = out(e, num, kt_json_format_real(json_real_value(v), num));
        break;
    case JSON_TRUE:
        rc = out(e, "true", 4);
        break;
    case JSON_FALSE:
        rc = out(e, "false", 5);
        break;
    case JSON_OBJECT:
        rc = out(e, "{}", 2);
        break;
    case JSON_ARRAY:
        rc = out(e, "[]", 2);
        break;
    case JSON_NULL:
    default:
        rc = out(e, "null", 4);
        break;
    }
    return rc < 0 ? -1 : out(e, "\n", 1);
}

static bool is_block(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v) > 0) ||
           (json_is_array(v) && json_array_size(v) > 0);
}

static int emit_map(struct emitter *e, const json_t *obj, size_t indent, bool inline_first);
static int emit_seq(struct emitter *e, const json_t *arr, size_t indent, bool inline_first);

/* The value after "- " or an explicit ": " whose column is indent. */
static int emit_item(struct emitter *e, const json_t *v, size_t indent)
{
    if (json_is_object(v) && json_object_size(v) > 0) {
        return emit_map(e, v, indent, true);
    }
    if (json_is_array(v) && json_array_size(v) > 0) {
        return emit_seq(e, v, indent, true);
    }
    return emit_scalar(e, v, indent);
}

static int emit_member(struct emitter *e, const char *key, const json_t *v, size_t indent)
{
    size_t klen = strlen(key);

    if (klen > LONG_KEY) {
        if (out(e, "? ", 2) < 0 || emit_dq(e, key, klen) < 0 || out(e, "\n", 1) < 0 ||
            out_indent(e, indent) < 0 || out(e, ": ", 2) < 0) {
            return -1;
        }
        return emit_item(e, v, indent + 2);
    }
    if (emit_string(e, key, klen) < 0 || out(e, ":", 1) < 0) {
        return -1;
    }
    if (json_is_object(v) && json_object_size(v) > 0) {
        return out(e, "\n", 1) < 0 ? -1 : emit_map(e, v, indent + 2, false);
    }
    if (json_is_array(v) && json_array_size(v) > 0) {
        return out(e, "\n", 1) < 0 ? -1 : emit_seq(e, v, indent, false);
    }
    return out(e, " ", 1) < 0 ? -1 : emit_scalar(e, v, indent + 2);
}

static int emit_map(struct emitter *e, const json_t *obj, size_t indent, bool inline_first)
{
    const char *key;
    json_t *v;
    bool first = true;
    void *it;

    for (it = json_object_iter(unconst_json(obj)); it;
         it = json_object_iter_next(unconst_json(obj), it)) {
        key = json_object_iter_key(it);
        v = json_object_iter_value(it);
        if ((!first || !inline_first) && out_indent(e, indent) < 0) {
            return -1;
        }
        first = false;
        if (emit_member(e, key, v, indent) < 0) {
            return -1;
        }
    }
    return 0;
}

static int emit_seq(struct emitter *e, const json_t *arr, size_t indent, bool inline_first)
{
    size_t i;

    for (i = 0; i < json_array_size(arr); i++) {
        if ((i > 0 || !inline_first) && out_indent(e, indent) < 0) {
            return -1;
        }
        if (out(e, "- ", 2) < 0 || emit_item(e, json_array_get(arr, i), indent + 2) < 0) {
            return -1;
        }
    }
    return 0;
}

int kt_yaml_emit(const json_t *v, struct kt_buf *b, struct kt_err *err)
{
    struct emitter e = {.b = b, .err = err};

    if (b->len > 0 && out(&e, "---\n", 4) < 0) {
        return -1;
    }
    if (!v) {
        return out(&e, "null\n", 5);
    }
    if (is_block(v)) {
        return json_is_object(v) ? emit_map(&e, v, 0, false) : emit_seq(&e, v, 0, false);
    }
    return emit_scalar(&e, v, 2);
}

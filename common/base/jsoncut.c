/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/jsoncut.c - drop metadata.managedFields from JSON text (jsoncut.h).
 *
 * Two passes: a walk that checks the text is well-formed JSON and notes the byte ranges to
 * cut, then, only when the walk succeeded, one compaction that moves the kept ranges down.
 * Before both, a byte search for each rule's member name (has_key) skips text that cannot
 * hold one. */
#include "common/base/jsoncut.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/mem.h"

#define DEPTH_MAX 64
#define KEY_MF "managedFields"

const struct kt_json_cut_rule KT_JSON_CUT_MANAGED_FIELDS[2] = {
    {.parent = "metadata", .member = KEY_MF}, KT_JSON_CUT_END};

struct range {
    size_t from, to; /* [from, to) is cut */
};

struct walk {
    const char *t;
    size_t len;
    const struct kt_json_cut_rule *rules; /* borrowed; at most KT_JSON_CUT_RULES_MAX */
    size_t n_rules;
    struct range *cuts; /* owned */
    size_t n, cap;
};

/* A set of rules, as bits: those whose parent is a member's key, or whose member may be cut
 * from the object in hand. */
typedef unsigned rule_set;

static size_t skip_ws(const struct walk *w, size_t i)
{
    while (i < w->len &&
           (w->t[i] == ' ' || w->t[i] == '\t' || w->t[i] == '\n' || w->t[i] == '\r')) {
        i++;
    }
    return i;
}

/* t[i] is '"': the index after the closing quote, or SIZE_MAX. */
static size_t skip_string(const struct walk *w, size_t i)
{
    for (i++; i < w->len; i++) {
        const char *q = memchr(w->t + i, '"', w->len - i);
        if (!q) {
            return SIZE_MAX;
        }
        size_t at = (size_t)(q - w->t);
        size_t bs = 0; /* backslashes right before the quote */
        while (at - bs > i && w->t[at - bs - 1] == '\\') {
            bs++;
        }
        if (bs % 2 == 0) {
            return at + 1;
        }
        i = at;
    }
    return SIZE_MAX;
}

/* A number or literal: up to the next delimiter; SIZE_MAX when empty or not one of them. */
static size_t skip_scalar(const struct walk *w, size_t i)
{
    size_t s = i;
    while (i < w->len && !strchr(",}] \t\r\n", w->t[i])) {
        char c = w->t[i];
        if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' ||
              (c >= 'a' && c <= 'z'))) {
            return SIZE_MAX;
        }
        i++;
    }
    return i > s ? i : SIZE_MAX;
}

static void add_cut(struct walk *w, size_t from, size_t to)
{
    while (w->n > 0 && w->cuts[w->n - 1].from >= from) {
        w->n--; /* inside this one (a managedFields within a managedFields) */
    }
    if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 8;
        w->cuts = kt_xrealloc(w->cuts, w->cap * sizeof(*w->cuts));
    }
    w->cuts[w->n++] = (struct range){from, to};
}

static size_t walk_value(struct walk *w, size_t i, int depth, rule_set parents);

static bool key_is(const struct walk *w, size_t ks, size_t ke, const char *k)
{
    size_t n = strlen(k);
    return ke - ks == n + 2 && memcmp(w->t + ks + 1, k, n) == 0;
}

/* The rules whose parent is the key at [ks, ke). */
static rule_set parents_of(const struct walk *w, size_t ks, size_t ke)
{
    rule_set s = 0;
    for (size_t r = 0; r < w->n_rules; r++) {
        if (key_is(w, ks, ke, w->rules[r].parent)) {
            s |= 1u << r;
        }
    }
    return s;
}

/* Whether a rule of `in` cuts the member whose key is at [ks, ke). */
static bool cut_here(const struct walk *w, rule_set in, size_t ks, size_t ke)
{
    for (size_t r = 0; in && r < w->n_rules; r++) {
        if ((in & (1u << r)) && key_is(w, ks, ke, w->rules[r].member)) {
            return true;
        }
    }
    return false;
}

/* t[i] is '{': the index after the object, or SIZE_MAX. In an object that is the value of a
 * rule's parent (in: those rules), notes each member a rule names with the comma that
 * separates it. */
static size_t walk_object(struct walk *w, size_t i, int depth, rule_set in)
{
    size_t prev_comma = SIZE_MAX; /* the comma before this member, if any */

    i = skip_ws(w, i + 1);
    if (i < w->len && w->t[i] == '}') {
        return i + 1;
    }
    for (;;) {
        if (i >= w->len || w->t[i] != '"') {
            return SIZE_MAX;
        }
        size_t ks = i, ke = skip_string(w, i);
        if (ke == SIZE_MAX) {
            return SIZE_MAX;
        }
        i = skip_ws(w, ke);
        if (i >= w->len || w->t[i] != ':') {
            return SIZE_MAX;
        }
        size_t ve = walk_value(w, skip_ws(w, i + 1), depth + 1, parents_of(w, ks, ke));
        if (ve == SIZE_MAX) {
            return SIZE_MAX;
        }
        i = skip_ws(w, ve);
        if (i >= w->len || (w->t[i] != ',' && w->t[i] != '}')) {
            return SIZE_MAX;
        }
        bool last = w->t[i] == '}';
        if (cut_here(w, in, ks, ke)) {
            if (!last) {
                add_cut(w, ks, skip_ws(w, i + 1)); /* the member, its comma, the blanks after */
            } else if (prev_comma != SIZE_MAX) {
                add_cut(w, prev_comma, ve); /* the comma before it, the member */
            } else {
                add_cut(w, ks, ve); /* the only member */
            }
        }
        if (last) {
            return i + 1;
        }
        prev_comma = i;
        i = skip_ws(w, i + 1);
    }
}

/* t[i] is '[': the index after the array, or SIZE_MAX. */
static size_t walk_array(struct walk *w, size_t i, int depth)
{
    i = skip_ws(w, i + 1);
    if (i < w->len && w->t[i] == ']') {
        return i + 1;
    }
    for (;;) {
        size_t ve = walk_value(w, i, depth + 1, 0);
        if (ve == SIZE_MAX) {
            return SIZE_MAX;
        }
        i = skip_ws(w, ve);
        if (i >= w->len || (w->t[i] != ',' && w->t[i] != ']')) {
            return SIZE_MAX;
        }
        if (w->t[i] == ']') {
            return i + 1;
        }
        i = skip_ws(w, i + 1);
    }
}

static size_t walk_value(struct walk *w, size_t i, int depth, rule_set parents)
{
    if (i >= w->len || depth > DEPTH_MAX) {
        return SIZE_MAX;
    }
    switch (w->t[i]) {
    case '{':
        return walk_object(w, i, depth, parents);
    case '[':
        return walk_array(w, i, depth);
    case '"':
        return skip_string(w, i);
    default:
        return skip_scalar(w, i);
    }
}

/* How common byte c is in API object JSON text, by a fixed ranking: 0 for the rarest (capitals
 * and every byte not listed), then lowercase letters from the rarest to the most common in
 * English, then digits and JSON's punctuation. */
static size_t commonness(unsigned char c)
{
    static const char by_rank[] = "zqxjkvbpygfwmucldrhsnioate-./0123456789 ,:\"";
    const char *p = c ? memchr(by_rank, c, sizeof(by_rank) - 1) : NULL;
    return p ? (size_t)(p - by_rank) + 1 : 0;
}

/* Whether t[0..len) holds `"name"`: a memchr for the name's rarest byte (commonness), then the
 * quoted name around each one found. A precheck: the name as a value or inside a string
 * counts too (a false positive costs a walk), a key written so is never missed. */
static bool has_key(const char *t, size_t len, const char *name)
{
    const size_t n = strlen(name), m = n + 2; /* the pattern: the name in quotes */
    size_t f = 0;                             /* where in the pattern its rarest byte is */

    for (size_t k = 1; k <= n; k++) {
        if (f == 0 ||
            commonness((unsigned char)name[k - 1]) < commonness((unsigned char)name[f - 1])) {
            f = k;
        }
    }
    const char c = f > 0 ? name[f - 1] : '"';
    /* i: where the rare byte would be; the pattern starts at i - f and ends by len. */
    for (size_t i = f; t && i + (m - f) <= len; i++) {
        const char *q = memchr(t + i, c, len - (m - f) + 1 - i);
        if (!q) {
            return false;
        }
        i = (size_t)(q - t);
        const char *at = t + i - f;
        if (at[0] == '"' && memcmp(at + 1, name, n) == 0 && at[n + 1] == '"') {
            return true;
        }
    }
    return false;
}

/* Whether one of the n rules' member may be in the text: the cheap test before the walk. */
static bool may_cut(const char *t, size_t len, const struct kt_json_cut_rule *rules, size_t n)
{
    for (size_t r = 0; t && r < n; r++) {
        if (has_key(t, len, rules[r].member)) {
            return true;
        }
    }
    return false;
}

/* How many rules the list holds, counting no further than one past the bound. */
static size_t count_rules(const struct kt_json_cut_rule *rules)
{
    size_t n = 0;
    while (rules && n <= KT_JSON_CUT_RULES_MAX && rules[n].parent && rules[n].member) {
        n++;
    }
    return n;
}

/* Walk t; true with w->cuts set when it is one well-formed value with something to cut. */
static bool plan(struct walk *w, const char *t, size_t len, const struct kt_json_cut_rule *rules)
{
    size_t n = count_rules(rules);

    *w = (struct walk){.t = t, .len = len, .rules = rules, .n_rules = n};
    if (n == 0 || n > KT_JSON_CUT_RULES_MAX || !may_cut(t, len, rules, n)) {
        return false;
    }
    size_t end = walk_value(w, skip_ws(w, 0), 0, 0);
    if (end == SIZE_MAX || skip_ws(w, end) != len || w->n == 0) {
        free(w->cuts);
        w->cuts = NULL;
        return false;
    }
    return true;
}

/* Copy t without the cuts to out (out may be t: it never runs ahead); the new length. */
static size_t compact(const struct walk *w, char *out)
{
    size_t o = 0, from = 0;

    for (size_t k = 0; k < w->n; k++) {
        memmove(out + o, w->t + from, w->cuts[k].from - from);
        o += w->cuts[k].from - from;
        from = w->cuts[k].to;
    }
    memmove(out + o, w->t + from, w->len - from);
    o += w->len - from;
    out[o] = '\0';
    return o;
}

bool kt_json_may_cut(const char *t, size_t len, const struct kt_json_cut_rule *rules)
{
    size_t n = count_rules(rules);

    return n <= KT_JSON_CUT_RULES_MAX && may_cut(t, len, rules, n);
}

bool kt_json_cut_members(char *t, size_t *len, const struct kt_json_cut_rule *rules)
{
    struct walk w;

    if (!plan(&w, t, *len, rules)) {
        return false;
    }
    *len = compact(&w, t);
    free(w.cuts);
    return true;
}

bool kt_json_cut_members_to(const char *t, size_t len, const struct kt_json_cut_rule *rules,
                            char *out, size_t *out_len)
{
    struct walk w;

    if (!plan(&w, t, len, rules)) {
        return false;
    }
    *out_len = compact(&w, out);
    free(w.cuts);
    return true;
}

bool kt_json_cut_managed_fields(char *t, size_t *len)
{
    return kt_json_cut_members(t, len, KT_JSON_CUT_MANAGED_FIELDS);
}

bool kt_json_cut_managed_fields_to(const char *t, size_t len, char *out, size_t *out_len)
{
    return kt_json_cut_members_to(t, len, KT_JSON_CUT_MANAGED_FIELDS, out, out_len);
}

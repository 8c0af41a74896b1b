/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_json_arena.c - the jansson arena (common/base/mem.h): trees decoded in a
 * scope come from it and go at leave; paused code allocates on the heap; what does not fit
 * spills to the heap; malformed, truncated, huge and escaped watch events decode in it as
 * they do without it. Run under ASan (poisoned after leave) and valgrind by `make check`. */
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/buf.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "common/kube/kube.h"

#define EVENT                                                                                      \
    "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","             \
    "\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"resourceVersion\":\"42\","                 \
    "\"labels\":{\"x\":\"y\"}},\"data\":{\"k\":\"v\"}}}"

static size_t used_of(const struct kt_json_arena *a)
{
    struct kt_json_arena_stats st;
    kt_json_arena_stats(a, &st);
    return st.used;
}

static void test_scope(void)
{
    struct kt_json_arena *a = kt_json_arena_new(1024 * 1024);
    struct kt_kube_watch_event ev;
    struct kt_err err = {0};

    for (int round = 0; round < 3; round++) { /* the same pages serve every scope */
        kt_json_arena_enter(a);
        CHECK_EQ_INT(used_of(a), 0);
        CHECK_OK(kt_kube_watch_decode_line(EVENT, sizeof(EVENT) - 1, &ev, &err));
        CHECK(used_of(a) > 0);
        CHECK_EQ_INT(ev.type, KT_WATCH_MODIFIED);
        CHECK_EQ_STR(ev.rv, "42");
        CHECK_EQ_STR(kt_json_str(json_object_get(ev.object, "data"), "k", ""), "v");
        char *text = kt_json_dump(ev.object); /* kt_json_dump's result is malloc'd */
        kt_kube_watch_event_release(&ev);
        kt_json_arena_leave(a);
        CHECK_EQ_INT(used_of(a), 0);
        CHECK_CONTAINS(text, "\"name\":\"a\"");
        free(text);
    }
    kt_json_arena_free(a);
}

/* Paused code allocates on the heap: what it makes outlives the scope. Freeing arena
 * memory while paused is a no-op. */
static void test_pause(void)
{
    struct kt_json_arena *a = kt_json_arena_new(1024 * 1024);
    struct kt_err err = {0};
    json_t *kept;

    kt_json_arena_enter(a);
    json_t *v = kt_json_parse(EVENT, sizeof(EVENT) - 1, &err);
    size_t before = used_of(a);
    kt_json_arena_pause();
    kt_json_arena_pause(); /* pauses nest */
    kt_json_arena_resume();
    kept = json_deep_copy(json_object_get(v, "object"));
    CHECK_EQ_INT(used_of(a), before);
    json_decref(v); /* arena memory freed while paused: no-op */
    kt_json_arena_resume();
    json_t *after = json_string("in the arena again");
    CHECK(used_of(a) > before);
    json_decref(after);
    kt_json_arena_leave(a);
    /* Under ASan, reading arena memory here would fail; the copy is the heap's. */
    CHECK_EQ_STR(kt_json_str(json_object_get(kept, "metadata"), "namespace", ""), "n");
    json_decref(kept);
    /* Negative: outside any scope nothing comes from the arena. */
    json_t *plain = json_object();
    CHECK_EQ_INT(used_of(a), 0);
    json_decref(plain);
    kt_json_arena_free(a);
}

/* An event larger than the arena spills over to the heap part by part; freeing the mixed
 * tree frees the heap parts (valgrind and ASan see no leak and no bad free). */
static void test_huge_spills(void)
{
    struct kt_json_arena *a = kt_json_arena_new(16 * 1024);
    struct kt_json_arena_stats st;
    struct kt_kube_watch_event ev;
    struct kt_err err = {0};
    struct kt_buf b;

    kt_buf_init(&b, SIZE_MAX / 2);
    CHECK_OK(kt_buf_puts(&b,
                         "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"big\","
                         "\"resourceVersion\":\"7\"},\"data\":{",
                         NULL));
    int rc = 0;
    for (int i = 0; i < 5000; i++) {
        rc |= kt_buf_printf(&b, NULL, "%s\"k%d\":\"%0200d\"", i ? "," : "", i, i);
    }
    CHECK_OK(rc);
    CHECK_OK(kt_buf_puts(&b, "}}}", NULL));
    kt_json_arena_enter(a);
    CHECK_OK(kt_kube_watch_decode_line(b.data, b.len, &ev, &err));
    kt_json_arena_stats(a, &st);
    CHECK(st.fallbacks > 0);
    CHECK(st.used <= 16 * 1024);
    CHECK_EQ_INT(json_object_size(json_object_get(ev.object, "data")), 5000);
    CHECK_EQ_INT(strlen(kt_json_str(json_object_get(ev.object, "data"), "k4999", "")), 200);
    kt_kube_watch_event_release(&ev);
    kt_json_arena_leave(a);
    kt_buf_release(&b);
    kt_json_arena_free(a);
}

/* A large event's pages beyond KT_JSON_ARENA_KEEP go back at leave. */
static void test_high_water_returned(void)
{
    struct kt_json_arena *a = kt_json_arena_new(8 * 1024 * 1024);
    struct kt_json_arena_stats st;
    struct kt_err err = {0};
    struct kt_buf b;

    kt_buf_init(&b, SIZE_MAX / 2);
    CHECK_OK(kt_buf_puts(&b, "[", NULL));
    int rc = 0;
    for (int i = 0; i < 20000; i++) {
        rc |= kt_buf_printf(&b, NULL, "%s{\"i\":%d}", i ? "," : "", i);
    }
    CHECK_OK(rc);
    CHECK_OK(kt_buf_puts(&b, "]", NULL));
    kt_json_arena_enter(a);
    json_t *v = kt_json_parse(b.data, b.len, &err);
    CHECK_EQ_INT(json_array_size(v), 20000);
    kt_json_arena_stats(a, &st);
    CHECK(st.high > KT_JSON_ARENA_KEEP);
    CHECK_EQ_INT(st.fallbacks, 0);
    json_decref(v);
    kt_json_arena_leave(a);
    kt_json_arena_stats(a, &st);
    CHECK_EQ_INT(st.high, KT_JSON_ARENA_KEEP);
    kt_buf_release(&b);
    kt_json_arena_free(a);
}

/* Malformed and truncated events fail in the arena as without it, and the arena serves the
 * next event; escapes decode the same. */
static void test_malformed_and_escapes(void)
{
    static const char *const bad[] = {
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"", /* truncated */
        "{\"type\":\"ADDED\",\"object\":{\"a\":tru}}",                  /* bad literal */
        "{\"type\":\"ADDED\",\"object\":{\"a\":\"\\ud800\"}}",          /* lone surrogate */
        "{\"type\":\"ADDED\"}",                                         /* no object */
        "{\"type\":\"ADDED\",\"object\":{\"a\":\"\\u0000\"}}",          /* NUL in a string */
    };
    static const char esc[] = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":"
                              "\"caf\\u00e9\"},\"s\":\"\\ud83d\\ude00 \\\"q\\\" \\\\\"}}";
    struct kt_json_arena *a = kt_json_arena_new(64 * 1024);
    struct kt_kube_watch_event ev;

    for (size_t i = 0; i < KT_ARRAY_SIZE(bad); i++) {
        struct kt_err err = {0};
        kt_json_arena_enter(a);
        CHECK_EQ_INT(kt_kube_watch_decode_line(bad[i], strlen(bad[i]), &ev, &err), -1);
        CHECK(err.msg[0] != '\0');
        CHECK(ev.object == NULL);
        kt_json_arena_leave(a);
    }
    struct kt_err err = {0};
    kt_json_arena_enter(a);
    CHECK_OK(kt_kube_watch_decode_line(esc, sizeof(esc) - 1, &ev, &err));
    CHECK_EQ_STR(kt_json_str(json_object_get(ev.object, "metadata"), "name", ""), "caf\xc3\xa9");
    CHECK_EQ_STR(kt_json_str(ev.object, "s", ""), "\xf0\x9f\x98\x80 \"q\" \\");
    kt_kube_watch_event_release(&ev);
    kt_json_arena_leave(a);
    kt_json_arena_free(a);
}

int main(void)
{
    kt_mem_init();
    test_scope();
    test_pause();
    test_huge_spills();
    test_high_water_returned();
    test_malformed_and_escapes();
    return test_report();
}

/* tests/unit/test_reconciler_status.c - reconciler/status.c, the pure status steps of the
 * TrainJob reconcile (SPEC §5.1 steps 6-9): time parsing, conditions with upstream's
 * SetStatusCondition rule, Suspended/Resumed, the DeadlineExceeded preservation, the active
 * deadline on an injected clock, the status merge patch and the event note truncation.
 * Compiled in directly because reconciler/ is not part of libkt.a. */
#include "tests/test.h"

#include <stdlib.h>

#include "api/trainjob.h"
#include "common/base/json.h"
#include "common/base/mem.h"
#include "reconciler/status.c"

#define T0 1767225600 /* 2026-01-01T00:00:00Z */

static json_t *parse(const char *s)
{
    struct kt_err err = {0};
    json_t *v = kt_json_parse(s, strlen(s), &err);
    KT_ASSERT(v);
    return v;
}

static void test_time(void)
{
    char buf[32];
    kt_rec_format_time(T0 + 61, buf);
    CHECK_EQ_STR(buf, "2026-01-01T00:01:01Z");
    CHECK_EQ_INT(kt_rec_parse_time("2026-01-01T00:01:01Z"), T0 + 61);
    CHECK_EQ_INT(kt_rec_parse_time("2026-01-01T00:01:01.123456Z"), T0 + 61);
    CHECK_EQ_INT(kt_rec_parse_time("2026-01-01T02:01:01+02:00"), T0 + 61);
    CHECK_EQ_INT(kt_rec_parse_time("1970-01-01T00:00:00Z"), 0);
    CHECK_EQ_INT(kt_rec_parse_time("2026-01-01 00:01:01Z"), -1);
    CHECK_EQ_INT(kt_rec_parse_time("2026-01-01T00:01:01"), -1);
    CHECK_EQ_INT(kt_rec_parse_time(""), -1);
    CHECK_EQ_INT(kt_rec_parse_time(NULL), -1);
}

static void test_conditions(void)
{
    json_t *st = json_object();
    CHECK(!kt_rec_finished(st));
    kt_rec_set_suspended(st, false, T0); /* never suspended: untouched */
    CHECK(json_object_get(st, "conditions") == NULL);
    kt_rec_set_suspended(st, true, T0);
    json_t *c = kt_rec_cond_find(st, "Suspended");
    CHECK_EQ_STR(kt_json_str(c, "status", ""), "True");
    CHECK_EQ_STR(kt_json_str(c, "reason", ""), "Suspended");
    CHECK_EQ_STR(kt_json_str(c, "message", ""), "TrainJob is suspended");
    CHECK_EQ_STR(kt_json_str(c, "lastTransitionTime", ""), "2026-01-01T00:00:00Z");
    kt_rec_set_suspended(st, true, T0 + 5); /* same status: time kept */
    CHECK_EQ_STR(kt_json_str(c, "lastTransitionTime", ""), "2026-01-01T00:00:00Z");
    kt_rec_set_suspended(st, false, T0 + 10);
    c = kt_rec_cond_find(st, "Suspended");
    CHECK_EQ_STR(kt_json_str(c, "status", ""), "False");
    CHECK_EQ_STR(kt_json_str(c, "reason", ""), "Resumed");
    CHECK_EQ_STR(kt_json_str(c, "message", ""), "TrainJob is resumed");
    CHECK_EQ_STR(kt_json_str(c, "lastTransitionTime", ""), "2026-01-01T00:00:10Z");
    kt_rec_set_suspended(st, false, T0 + 20); /* resumed stays as it was */
    CHECK_EQ_STR(kt_json_str(c, "lastTransitionTime", ""), "2026-01-01T00:00:10Z");
    CHECK_EQ_INT(json_array_size(json_object_get(st, "conditions")), 1);
    CHECK(!kt_rec_finished(st));
    kt_rec_set_condition(st, "Failed", "True", "TrainingRuntimeNotSupported",
                         "unsupported runtime: X", T0);
    CHECK(kt_rec_finished(st));
    CHECK(kt_rec_cond_true(st, "Failed"));
    CHECK(!kt_rec_cond_true(st, "Complete"));
    CHECK(!kt_rec_cond_true(NULL, "Failed"));
    json_decref(st);
}

static void test_plugin_status(void)
{
    json_t *st = parse("{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\","
                       "\"reason\":\"DeadlineExceeded\",\"message\":\"m\","
                       "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}");
    json_t *pst = parse("{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\","
                        "\"reason\":\"FailedJobs\",\"message\":\"x\"}],\"jobsStatus\":[]}");
    json_t *out = kt_rec_take_plugin_status(st, pst);
    CHECK(out == pst);
    CHECK_EQ_STR(kt_json_str(kt_rec_cond_find(out, "Failed"), "reason", ""), "DeadlineExceeded");
    CHECK_EQ_INT(json_array_size(json_object_get(out, "conditions")), 1);
    json_decref(out);
    /* no plugin status: unchanged; other Failed reasons are not preserved specially */
    st = parse("{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\",\"reason\":\"R\"}]}");
    CHECK(kt_rec_take_plugin_status(st, NULL) == st);
    pst = parse("{\"jobsStatus\":[{\"name\":\"node\"}]}");
    out = kt_rec_take_plugin_status(st, pst);
    CHECK(kt_rec_cond_find(out, "Failed") == NULL);
    json_decref(out);
}

static void decode_tj(const char *extra_spec, const char *status, struct kt_trainjob *tj)
{
    char *s =
        kt_xasprintf("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
                     "\"metadata\":{\"name\":\"j\",\"namespace\":\"n\","
                     "\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
                     "\"spec\":{\"runtimeRef\":{\"name\":\"r\"}%s}%s%s}",
                     extra_spec, status ? ",\"status\":" : "", status ? status : "");
    struct kt_err err = {0};
    KT_ASSERT(kt_trainjob_decode(parse(s), tj, &err) == 0);
    free(s);
}

static void test_deadline(void)
{
    struct kt_trainjob tj;
    double rem;
    json_t *st;

    decode_tj(",\"activeDeadlineSeconds\":60", NULL, &tj);
    st = json_object();
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, st, T0 + 10.5, &rem), KT_DEADLINE_PENDING);
    CHECK(rem == 49.5);
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, st, T0 + 59.5, &rem), KT_DEADLINE_PENDING);
    CHECK(rem == 1); /* at least one second */
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, st, T0 + 60, &rem), KT_DEADLINE_PENDING);
    CHECK(json_object_get(st, "conditions") == NULL);
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, st, T0 + 60.001, &rem), KT_DEADLINE_EXCEEDED);
    json_t *c = kt_rec_cond_find(st, "Failed");
    CHECK_EQ_STR(kt_json_str(c, "reason", ""), "DeadlineExceeded");
    CHECK_EQ_STR(kt_json_str(c, "message", ""), "TrainJob exceeded its active deadline");
    CHECK_EQ_STR(kt_json_str(c, "lastTransitionTime", ""), "2026-01-01T00:01:00Z");
    /* finished: nothing more */
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, st, T0 + 1000, &rem), KT_DEADLINE_NONE);
    json_decref(st);
    kt_trainjob_release(&tj);

    /* resumed: the clock restarts at the Suspended=False transition */
    decode_tj(",\"activeDeadlineSeconds\":60",
              "{\"conditions\":[{\"type\":\"Suspended\",\"status\":\"False\","
              "\"lastTransitionTime\":\"2026-01-01T01:00:00Z\"}]}",
              &tj);
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, tj.status, T0 + 3600 + 30, &rem), KT_DEADLINE_PENDING);
    CHECK(rem == 30);
    kt_trainjob_release(&tj);

    /* suspended, or no deadline: never */
    decode_tj(",\"activeDeadlineSeconds\":1,\"suspend\":true", NULL, &tj);
    st = json_object();
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, st, T0 + 1e6, &rem), KT_DEADLINE_NONE);
    kt_trainjob_release(&tj);
    decode_tj("", NULL, &tj);
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, st, T0 + 1e6, &rem), KT_DEADLINE_NONE);
    CHECK(rem == 0);
    kt_trainjob_release(&tj);
    json_decref(st);
}

static void test_merge_patch(void)
{
    json_t *a = parse("{\"conditions\":[{\"type\":\"A\"}],\"jobsStatus\":[1],\"x\":{\"y\":1,"
                      "\"z\":2},\"same\":true}");
    json_t *b = parse("{\"conditions\":[{\"type\":\"A\"},{\"type\":\"B\"}],\"x\":{\"y\":1,"
                      "\"z\":3,\"w\":4},\"same\":true}");
    json_t *p = kt_rec_merge_patch(a, b);
    char *s = kt_json_dump(p);
    CHECK_EQ_STR(s, "{\"jobsStatus\":null,\"conditions\":[{\"type\":\"A\"},{\"type\":\"B\"}],"
                    "\"x\":{\"z\":3,\"w\":4}}");
    free(s);
    json_decref(p);
    p = kt_rec_merge_patch(a, a);
    CHECK_EQ_INT(json_object_size(p), 0);
    json_decref(p);
    p = kt_rec_merge_patch(NULL, b);
    CHECK_EQ_INT(json_object_size(p), 3);
    json_decref(p);
    json_decref(a);
    json_decref(b);
}

static void test_event_note(void)
{
    char *n = kt_rec_event_note("boom");
    CHECK_EQ_STR(n, "TrainJob resources reconciliation failed: boom");
    free(n);
    char *long_msg = kt_xmalloc(1201);
    memset(long_msg, 'a', 1200);
    long_msg[1200] = '\0';
    n = kt_rec_event_note(long_msg);
    CHECK_EQ_INT(strlen(n), strlen("TrainJob resources reconciliation failed: ") + 950 + 4);
    CHECK(strcmp(n + strlen(n) - 4, " ...") == 0);
    free(n);
    long_msg[950] = '\0'; /* exactly 950: no suffix */
    n = kt_rec_event_note(long_msg);
    CHECK(strcmp(n + strlen(n) - 4, "aaaa") == 0);
    free(n);
    /* 950 characters, not bytes: a 2-byte character is not cut in half */
    memset(long_msg, 'a', 1200);
    long_msg[948] = (char)0xc3;
    long_msg[949] = (char)0xa9;
    long_msg[1200] = '\0';
    n = kt_rec_event_note(long_msg);
    CHECK_EQ_INT(strlen(n), strlen("TrainJob resources reconciliation failed: ") + 951 + 4);
    free(n);
    free(long_msg);
}

int main(void)
{
    kt_mem_init();
    test_time();
    test_conditions();
    test_plugin_status();
    test_deadline();
    test_merge_patch();
    test_event_note();
    return test_report();
}

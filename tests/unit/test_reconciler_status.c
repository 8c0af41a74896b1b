/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_reconciler_status.c - reconciler/status.c, the pure status steps of the
 * TrainJob reconcile (docs/internals/upstream.md#trainjob-reconcile steps 6-9): time parsing,
 * conditions with upstream's SetStatusCondition rule, Suspended/Resumed, the DeadlineExceeded
 * preservation, the active deadline on an injected clock, the status merge patch and the event note
 * truncation; the provisional KEP-2899 steps: value resolution, start/completion times,
 * ttlSecondsAfterFinished; which status writes may be held back (held.h). Compiled in directly
 * because reconciler/ is not part of libkt.a. */
#include "tests/test.h"

#include <stdlib.h>

#include "api/runtime.h"
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
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, tj.active_deadline_seconds, st, T0 + 10.5, &rem),
                 KT_DEADLINE_PENDING);
    CHECK(rem == 49.5);
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, tj.active_deadline_seconds, st, T0 + 59.5, &rem),
                 KT_DEADLINE_PENDING);
    CHECK(rem == 1); /* at least one second */
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, tj.active_deadline_seconds, st, T0 + 60, &rem),
                 KT_DEADLINE_PENDING);
    CHECK(json_object_get(st, "conditions") == NULL);
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, tj.active_deadline_seconds, st, T0 + 60.001, &rem),
                 KT_DEADLINE_EXCEEDED);
    json_t *c = kt_rec_cond_find(st, "Failed");
    CHECK_EQ_STR(kt_json_str(c, "reason", ""), "DeadlineExceeded");
    CHECK_EQ_STR(kt_json_str(c, "message", ""), "TrainJob exceeded its active deadline");
    CHECK_EQ_STR(kt_json_str(c, "lastTransitionTime", ""), "2026-01-01T00:01:00Z");
    /* finished: nothing more */
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, tj.active_deadline_seconds, st, T0 + 1000, &rem),
                 KT_DEADLINE_NONE);
    json_decref(st);
    kt_trainjob_release(&tj);

    /* resumed: the clock restarts at the Suspended=False transition */
    decode_tj(",\"activeDeadlineSeconds\":60",
              "{\"conditions\":[{\"type\":\"Suspended\",\"status\":\"False\","
              "\"lastTransitionTime\":\"2026-01-01T01:00:00Z\"}]}",
              &tj);
    CHECK_EQ_INT(
        kt_rec_check_deadline(&tj, tj.active_deadline_seconds, tj.status, T0 + 3600 + 30, &rem),
        KT_DEADLINE_PENDING);
    CHECK(rem == 30);
    kt_trainjob_release(&tj);

    /* suspended, or no deadline: never */
    decode_tj(",\"activeDeadlineSeconds\":1,\"suspend\":true", NULL, &tj);
    st = json_object();
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, tj.active_deadline_seconds, st, T0 + 1e6, &rem),
                 KT_DEADLINE_NONE);
    kt_trainjob_release(&tj);
    decode_tj("", NULL, &tj);
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, tj.active_deadline_seconds, st, T0 + 1e6, &rem),
                 KT_DEADLINE_NONE);
    CHECK(rem == 0);
    kt_trainjob_release(&tj);
    json_decref(st);
}

/* KEP-2899 value resolution: the TrainJob's own value over the runtime's runPolicy over none. */
static void test_resolve(void)
{
    struct kt_opt_i64 none = {false, 0}, job = {true, 30}, zero = {true, 0}, rt = {true, 600};
    struct kt_opt_i64 r = kt_rec_resolve(job, &rt);
    CHECK(r.has && r.v == 30);
    r = kt_rec_resolve(zero, &rt); /* a job's own 0 overrides a runtime's 600 */
    CHECK(r.has && r.v == 0);
    r = kt_rec_resolve(none, &rt);
    CHECK(r.has && r.v == 600);
    r = kt_rec_resolve(none, &none);
    CHECK(!r.has);
    r = kt_rec_resolve(none, NULL); /* no runtime at hand */
    CHECK(!r.has);
    r = kt_rec_resolve(job, NULL);
    CHECK(r.has && r.v == 30);

    /* from the TrainJob and runtime codecs */
    struct kt_trainjob tj;
    decode_tj(",\"ttlSecondsAfterFinished\":0", NULL, &tj);
    CHECK(tj.ttl_seconds_after_finished.has && tj.ttl_seconds_after_finished.v == 0);
    kt_trainjob_release(&tj);
    decode_tj("", NULL, &tj);
    CHECK(!tj.ttl_seconds_after_finished.has);
    kt_trainjob_release(&tj);
    struct kt_runtime rtm;
    struct kt_err err = {0};
    CHECK_OK(kt_runtime_decode(parse("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\","
                                     "\"kind\":\"ClusterTrainingRuntime\",\"metadata\":{\"name\":"
                                     "\"r\"},\"spec\":{\"runPolicy\":{\"activeDeadlineSeconds\":7,"
                                     "\"ttlSecondsAfterFinished\":600}}}"),
                               &rtm, &err));
    CHECK(rtm.run_policy.active_deadline_seconds.v == 7);
    CHECK(rtm.run_policy.ttl_seconds_after_finished.has &&
          rtm.run_policy.ttl_seconds_after_finished.v == 600);
    kt_runtime_release(&rtm);
    /* negative: a TTL beyond int32 is refused by the decode, as the API's int32 field */
    CHECK_EQ_INT(kt_runtime_decode(parse("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\","
                                         "\"kind\":\"ClusterTrainingRuntime\",\"metadata\":{"
                                         "\"name\":\"r\"},\"spec\":{\"runPolicy\":{"
                                         "\"ttlSecondsAfterFinished\":4294967296}}}"),
                                   &rtm, &err),
                 -1);
}

static json_t *finished_status(const char *type, const char *ltt)
{
    json_t *st = json_object();
    kt_rec_set_condition(st, type, "True", "R", "m", kt_rec_parse_time(ltt));
    return st;
}

/* startTime / completionTime: set once, startTime cleared while suspended. */
static void test_times(void)
{
    json_t *st = json_object();
    kt_rec_set_times(st, true, T0, -1); /* created suspended: no start */
    CHECK(json_object_get(st, "startTime") == NULL);
    kt_rec_set_times(st, false, T0 + 5, -1);
    CHECK_EQ_STR(kt_json_str(st, "startTime", ""), "2026-01-01T00:00:05Z");
    kt_rec_set_times(st, false, T0 + 9, -1); /* set once */
    CHECK_EQ_STR(kt_json_str(st, "startTime", ""), "2026-01-01T00:00:05Z");
    kt_rec_set_times(st, true, T0 + 10, -1); /* suspended: the clock stops */
    CHECK(json_object_get(st, "startTime") == NULL);
    kt_rec_set_times(st, false, T0 + 20, -1); /* resumed: a new start */
    CHECK_EQ_STR(kt_json_str(st, "startTime", ""), "2026-01-01T00:00:20Z");
    CHECK(json_object_get(st, "completionTime") == NULL);
    kt_rec_set_condition(st, "Complete", "True", "AllJobsCompleted", "m", T0 + 30);
    kt_rec_set_times(st, false, T0 + 31, -1);
    CHECK_EQ_STR(kt_json_str(st, "completionTime", ""), "2026-01-01T00:00:30Z");
    CHECK_EQ_STR(kt_json_str(st, "startTime", ""), "2026-01-01T00:00:20Z");
    kt_rec_set_times(st, true, T0 + 99, -1); /* finished: both kept */
    CHECK_EQ_STR(kt_json_str(st, "completionTime", ""), "2026-01-01T00:00:30Z");
    CHECK_EQ_STR(kt_json_str(st, "startTime", ""), "2026-01-01T00:00:20Z");
    json_decref(st);
    /* a held startTime (held.h): written with the value chosen when it was first computed */
    st = json_object();
    kt_rec_set_times(st, false, T0 + 12, T0 + 3);
    CHECK_EQ_STR(kt_json_str(st, "startTime", ""), "2026-01-01T00:00:03Z");
    kt_rec_set_times(st, false, T0 + 13, T0 + 7); /* present: not moved */
    CHECK_EQ_STR(kt_json_str(st, "startTime", ""), "2026-01-01T00:00:03Z");
    json_decref(st);
    st = json_object();
    kt_rec_set_times(st, true, T0 + 12, T0 + 3); /* suspended: none, held value or not */
    CHECK(json_object_get(st, "startTime") == NULL);
    json_decref(st);
    /* finished before the held start went out: it goes out with the finish */
    st = finished_status("Complete", "2026-01-01T00:00:08Z");
    kt_rec_set_times(st, false, T0 + 9, T0 + 3);
    CHECK_EQ_STR(kt_json_str(st, "startTime", ""), "2026-01-01T00:00:03Z");
    CHECK_EQ_STR(kt_json_str(st, "completionTime", ""), "2026-01-01T00:00:08Z");
    json_decref(st);
    /* finished with no start held (never seen running, e.g. an unsupported runtime): none */
    st = finished_status("Failed", "2026-01-01T00:00:08Z");
    kt_rec_set_times(st, false, T0 + 9, -1);
    CHECK(json_object_get(st, "startTime") == NULL);
    json_decref(st);
    /* a terminal time ahead of our clock (skew): completionTime is now, not the future */
    st = finished_status("Failed", "2026-01-01T01:00:00Z");
    kt_rec_set_times(st, false, T0 + 10, -1);
    CHECK_EQ_STR(kt_json_str(st, "completionTime", ""), "2026-01-01T00:00:10Z");
    json_decref(st);
}

/* kt_rec_status_write_can_wait(orig, st), both given as JSON text. */
static bool can_wait(const char *orig, const char *st)
{
    json_t *o = parse(orig), *s = parse(st);
    bool r = kt_rec_status_write_can_wait(o, s);
    json_decref(o);
    json_decref(s);
    return r;
}

/* Which status writes may be held back and folded into a later one: startTime added,
 * jobsStatus moved; never a condition, completionTime, a removed or moved startTime, another
 * field, nor a write of nothing. */
static void test_write_can_wait(void)
{
#define JS(a) "\"jobsStatus\":[{\"name\":\"node\",\"active\":" #a "}]"
#define START "\"startTime\":\"2026-01-01T00:00:05Z\""
#define COND(t) "\"conditions\":[{\"type\":\"" t "\",\"status\":\"True\"}]"
    /* may wait */
    CHECK(can_wait("{}", "{" START "}"));                              /* first start */
    CHECK(can_wait("{}", "{" START "," JS(0) "}"));                    /* start + first step */
    CHECK(can_wait("{" START "," JS(0) "}", "{" START "," JS(1) "}")); /* a step */
    CHECK(can_wait("{" START "}", "{" START "," JS(1) "}"));           /* first step */
    CHECK(can_wait("{" START "," JS(1) "}", "{" START "}"));           /* jobsStatus gone */
    CHECK(can_wait("{" COND("Suspended") "}", "{" COND("Suspended") "," JS(0) "}"));
    /* written at once */
    CHECK(!can_wait("{}", "{}"));                                       /* nothing to write */
    CHECK(!can_wait("{" START "," JS(1) "}", "{" START "," JS(1) "}")); /* the same */
    CHECK(!can_wait("{" START "," JS(1) "}", "{" START "," JS(1) "," COND("Complete") "}"));
    CHECK(!can_wait("{}", "{" START "," COND("Failed") "}")); /* a condition */
    CHECK(!can_wait("{" COND("Suspended") "}",
                    "{\"conditions\":[{\"type\":\"Suspended\",\"status\":\"False\"}]}"));
    CHECK(!can_wait("{" COND("Suspended") "}", "{}")); /* condition removed */
    CHECK(!can_wait("{" START "}", "{}"));             /* suspended: removed */
    CHECK(!can_wait("{" START "}", "{\"startTime\":\"2026-01-01T00:00:09Z\"}")); /* moved */
    CHECK(!can_wait("{" START "}", "{" START ",\"completionTime\":\"2026-01-01T00:01:00Z\"}"));
    CHECK(!can_wait("{}", "{\"other\":1}")); /* any other field */
    CHECK(!can_wait("{\"other\":1}", "{" START "}"));
#undef JS
#undef START
#undef COND
}

static void test_ttl(void)
{
    struct kt_opt_i64 ttl = {true, 60}, zero = {true, 0}, none = {false, 0};
    double rem;
    json_t *running = json_object();
    CHECK_EQ_INT(kt_rec_check_ttl(running, zero, T0, &rem), KT_TTL_NONE); /* not finished */
    json_decref(running);
    json_t *st = finished_status("Complete", "2026-01-01T00:00:00Z");
    CHECK_EQ_INT(kt_rec_check_ttl(st, none, T0 + 1e6, &rem), KT_TTL_NONE); /* absent = never */
    CHECK_EQ_INT(kt_rec_check_ttl(st, zero, T0, &rem), KT_TTL_EXPIRED);    /* 0 = at once */
    CHECK_EQ_INT(kt_rec_check_ttl(st, ttl, T0 + 20.5, &rem), KT_TTL_PENDING);
    CHECK(rem == 39.5);
    CHECK_EQ_INT(kt_rec_check_ttl(st, ttl, T0 + 59.9, &rem), KT_TTL_PENDING);
    CHECK_EQ_INT(kt_rec_check_ttl(st, ttl, T0 + 60, &rem), KT_TTL_EXPIRED);
    CHECK_EQ_INT(kt_rec_check_ttl(st, ttl, T0 + 3600, &rem),
                 KT_TTL_EXPIRED); /* expired while down */
    json_decref(st);
    /* Failed counts too, and a Suspended=True condition does not */
    st = finished_status("Failed", "2026-01-01T00:00:00Z");
    CHECK_EQ_INT(kt_rec_check_ttl(st, ttl, T0 + 61, &rem), KT_TTL_EXPIRED);
    json_decref(st);
    st = finished_status("Suspended", "2026-01-01T00:00:00Z");
    CHECK_EQ_INT(kt_rec_check_ttl(st, zero, T0 + 61, &rem), KT_TTL_NONE);
    json_decref(st);
    /* skew: a terminal time an hour ahead is bounded by completionTime, then by now */
    st = finished_status("Complete", "2026-01-01T01:00:00Z");
    CHECK_EQ_INT(kt_rec_check_ttl(st, ttl, T0 + 10, &rem), KT_TTL_PENDING);
    CHECK(rem == 60);
    json_object_set_new(st, "completionTime", json_string("2026-01-01T00:00:05Z"));
    CHECK_EQ_INT(kt_rec_check_ttl(st, ttl, T0 + 10, &rem), KT_TTL_PENDING);
    CHECK(rem == 55);
    CHECK_EQ_INT(kt_rec_check_ttl(st, ttl, T0 + 65, &rem), KT_TTL_EXPIRED);
    json_decref(st);
}

/* The deadline from the runtime's runPolicy when the TrainJob has none. */
static void test_deadline_resolved(void)
{
    struct kt_trainjob tj;
    struct kt_opt_i64 rt = {true, 60};
    double rem;
    decode_tj("", NULL, &tj);
    json_t *st = json_object();
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, kt_rec_resolve(tj.active_deadline_seconds, &rt), st,
                                       T0 + 10, &rem),
                 KT_DEADLINE_PENDING);
    CHECK(rem == 50);
    CHECK_EQ_INT(kt_rec_check_deadline(&tj, kt_rec_resolve(tj.active_deadline_seconds, NULL), st,
                                       T0 + 1e6, &rem),
                 KT_DEADLINE_NONE);
    json_decref(st);
    kt_trainjob_release(&tj);
}

/* ResourcesCreationFailed: set with the event's reason and note, kept while it fails (its
 * time moves only with its status), removed after a successful build; conflicts ignored. */
static void test_creation_failed(void)
{
    json_t *st = json_object();
    struct kt_err e = {0};
    kt_err_set(&e, KT_EFORBIDDEN, "jobsets.jobset.x-k8s.io \"q\" is forbidden: exceeded quota");
    kt_rec_set_creation_failed(st, &e, T0);
    json_t *c = kt_rec_cond_find(st, "ResourcesCreationFailed");
    CHECK_EQ_STR(kt_json_str(c, "status", ""), "True");
    CHECK_EQ_STR(kt_json_str(c, "reason", ""), "TrainJobResourcesCreationFailed");
    CHECK_EQ_STR(kt_json_str(c, "message", ""),
                 "TrainJob resources reconciliation failed: jobsets.jobset.x-k8s.io \"q\" is "
                 "forbidden: exceeded quota");
    kt_rec_set_creation_failed(st, &e, T0 + 60);
    CHECK_EQ_STR(kt_json_str(c, "lastTransitionTime", ""), "2026-01-01T00:00:00Z");
    CHECK(!kt_rec_finished(st)); /* not terminal */
    kt_rec_set_suspended(st, true, T0);
    kt_rec_remove_condition(st, "ResourcesCreationFailed");
    CHECK(kt_rec_cond_find(st, "ResourcesCreationFailed") == NULL);
    CHECK(kt_rec_cond_true(st, "Suspended")); /* the others stay */
    kt_rec_remove_condition(st, "Suspended");
    CHECK(json_object_get(st, "conditions") == NULL); /* no empty list left behind */
    kt_rec_remove_condition(st, "Suspended");         /* absent: nothing happens */
    /* negative: a conflict is a race the retry resolves, not news for the user */
    kt_err_set(&e, KT_ECONFLICT, "the object has been modified");
    kt_rec_set_creation_failed(st, &e, T0);
    CHECK(json_object_get(st, "conditions") == NULL);
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
    test_resolve();
    test_times();
    test_write_can_wait();
    test_ttl();
    test_deadline_resolved();
    test_creation_failed();
    test_merge_patch();
    test_event_note();
    return test_report();
}

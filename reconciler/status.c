/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/status.c - see status.h. */
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/json.h"
#include "common/base/mem.h"

void kt_rec_format_time(int64_t t, char out[32])
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int64_t kt_rec_parse_time(const char *s)
{
    int y, mo, d, h, mi, se, n = 0;
    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se, &n) != 6 ||
        n != 19) {
        return -1;
    }
    const char *p = s + n;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++) {
        }
    }
    int64_t off = 0;
    if (*p == '+' || *p == '-') {
        int oh, om;
        if (sscanf(p + 1, "%2d:%2d", &oh, &om) != 2) {
            return -1;
        }
        off = (*p == '+' ? 1 : -1) * (int64_t)(oh * 3600 + om * 60);
    } else if (*p != 'Z' && *p != 'z') {
        return -1;
    }
    return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
}

json_t *kt_rec_cond_find(const json_t *status, const char *type)
{
    return kt_json_arr_find(json_object_get(status, "conditions"), "type", type, NULL);
}

bool kt_rec_cond_true(const json_t *status, const char *type)
{
    const json_t *c = kt_rec_cond_find(status, type);
    return c && strcmp(kt_json_str(c, "status", ""), "True") == 0;
}

void kt_rec_set_condition(json_t *status, const char *type, const char *cond_status,
                          const char *reason, const char *message, int64_t now)
{
    char ts[32];
    kt_rec_format_time(now, ts);
    json_t *conds = kt_json_arr_ensure(status, "conditions");
    json_t *c = kt_json_arr_find(conds, "type", type, NULL);
    if (!c) {
        c = json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status", cond_status,
                      "lastTransitionTime", ts, "reason", reason, "message", message);
        json_array_append_new(conds, c);
        return;
    }
    if (strcmp(kt_json_str(c, "status", ""), cond_status) != 0) {
        json_object_set_new(c, "status", json_string(cond_status));
        json_object_set_new(c, "lastTransitionTime", json_string(ts));
    }
    json_object_set_new(c, "reason", json_string(reason));
    json_object_set_new(c, "message", json_string(message));
}

void kt_rec_remove_condition(json_t *status, const char *type)
{
    size_t idx;
    json_t *conds = json_object_get(status, "conditions");
    if (kt_json_arr_find(conds, "type", type, &idx)) {
        json_array_remove(conds, idx);
    }
    if (conds && json_array_size(conds) == 0) {
        json_object_del(status, "conditions");
    }
}

void kt_rec_set_creation_failed(json_t *status, const struct kt_err *err, int64_t now)
{
    if (err->code == KT_ECONFLICT) {
        return;
    }
    char *note = kt_rec_event_note(err->msg);
    kt_rec_set_condition(status, KT_COND_CREATION_FAILED, "True", KT_EVENT_REASON_FAILED, note,
                         now);
    free(note);
}

bool kt_rec_finished(const json_t *status)
{
    return kt_rec_cond_true(status, KT_COND_COMPLETE) || kt_rec_cond_true(status, KT_COND_FAILED);
}

void kt_rec_set_suspended(json_t *status, bool suspend, int64_t now)
{
    if (suspend) {
        kt_rec_set_condition(status, KT_COND_SUSPENDED, "True", "Suspended",
                             "TrainJob is suspended", now);
    } else if (kt_rec_cond_true(status, KT_COND_SUSPENDED)) {
        kt_rec_set_condition(status, KT_COND_SUSPENDED, "False", "Resumed", "TrainJob is resumed",
                             now);
    }
}

json_t *kt_rec_take_plugin_status(json_t *status, json_t *plugin_status)
{
    if (!plugin_status) {
        return status;
    }
    json_t *failed = kt_rec_cond_find(status, KT_COND_FAILED);
    if (failed && strcmp(kt_json_str(failed, "reason", ""), KT_REASON_DEADLINE) == 0) {
        json_t *conds = kt_json_arr_ensure(plugin_status, "conditions");
        size_t idx;
        if (kt_json_arr_find(conds, "type", KT_COND_FAILED, &idx)) {
            json_array_set(conds, idx, failed);
        } else {
            json_array_append(conds, failed);
        }
    }
    json_decref(status);
    return plugin_status;
}

enum kt_rec_deadline kt_rec_check_deadline(const struct kt_trainjob *tj, struct kt_opt_i64 limit,
                                           json_t *status, double now, double *remaining_s)
{
    *remaining_s = 0;
    if (!limit.has || limit.v <= 0 || kt_rec_finished(status) || tj->suspend) {
        return KT_DEADLINE_NONE;
    }
    json_t *meta = json_object_get(tj->obj, "metadata");
    int64_t start = kt_rec_parse_time(kt_json_str(meta, "creationTimestamp", ""));
    const json_t *susp = kt_rec_cond_find(status, KT_COND_SUSPENDED);
    if (susp && strcmp(kt_json_str(susp, "status", ""), "False") == 0) {
        start = kt_rec_parse_time(kt_json_str(susp, "lastTransitionTime", ""));
    }
    if (start < 0) {
        return KT_DEADLINE_NONE;
    }
    double deadline = (double)start + (double)limit.v;
    if (now > deadline) {
        kt_rec_set_condition(status, KT_COND_FAILED, "True", KT_REASON_DEADLINE, KT_MSG_DEADLINE,
                             (int64_t)floor(now));
        return KT_DEADLINE_EXCEEDED;
    }
    *remaining_s = deadline - now < 1 ? 1 : deadline - now;
    return KT_DEADLINE_PENDING;
}

struct kt_opt_i64 kt_rec_resolve(struct kt_opt_i64 job, const struct kt_opt_i64 *runtime)
{
    if (job.has || !runtime) {
        return job;
    }
    return *runtime;
}

/* Epoch seconds of the earliest lastTransitionTime of a True Complete/Failed condition, now
 * when a True one has no parsable time, -1 when neither is True. */
static double terminal_time(const json_t *status, double now)
{
    static const char *const types[] = {KT_COND_COMPLETE, KT_COND_FAILED};
    double at = -1;
    for (size_t i = 0; i < 2; i++) {
        if (!kt_rec_cond_true(status, types[i])) {
            continue;
        }
        const json_t *c = kt_rec_cond_find(status, types[i]);
        int64_t t = kt_rec_parse_time(kt_json_str(c, "lastTransitionTime", ""));
        double ti = t < 0 ? now : (double)t;
        at = at < 0 || ti < at ? ti : at;
    }
    return at;
}

void kt_rec_set_times(json_t *status, bool suspend, int64_t now, int64_t start)
{
    char ts[32];
    double fin = terminal_time(status, (double)now);
    if (fin >= 0) {
        if (!json_object_get(status, "completionTime")) {
            kt_rec_format_time(fin > (double)now ? now : (int64_t)fin, ts);
            json_object_set_new(status, "completionTime", json_string(ts));
        }
        if (start >= 0 && !json_object_get(status, "startTime")) {
            kt_rec_format_time(start, ts); /* a held start goes out with the finish */
            json_object_set_new(status, "startTime", json_string(ts));
        }
        return;
    }
    if (suspend) {
        json_object_del(status, "startTime");
        return;
    }
    if (!json_object_get(status, "startTime")) {
        kt_rec_format_time(start >= 0 ? start : now, ts);
        json_object_set_new(status, "startTime", json_string(ts));
    }
}

/* Whether field k may differ between orig (o, NULL = absent) and st (s) in a write that waits. */
static bool field_can_wait(const char *k, const json_t *o, const json_t *s)
{
    if (o && s && kt_json_equal(o, s)) {
        return true;
    }
    if (strcmp(k, "jobsStatus") == 0) {
        return true;
    }
    return strcmp(k, "startTime") == 0 && !o && s; /* added, not removed or moved */
}

bool kt_rec_status_write_can_wait(json_t *orig, json_t *st)
{
    const char *k;
    json_t *v;
    bool differs = false;
    json_object_foreach(orig, k, v)
    {
        const json_t *s = json_object_get(st, k);
        if (!field_can_wait(k, v, s)) {
            return false;
        }
        differs = differs || !s || !kt_json_equal(v, s);
    }
    json_object_foreach(st, k, v)
    {
        const json_t *o = json_object_get(orig, k);
        if (!o && !field_can_wait(k, NULL, v)) {
            return false;
        }
        differs = differs || !o;
    }
    return differs;
}

enum kt_rec_ttl kt_rec_check_ttl(const json_t *status, struct kt_opt_i64 ttl, double now,
                                 double *remaining_s)
{
    *remaining_s = 0;
    double fin = terminal_time(status, now);
    if (!ttl.has || ttl.v < 0 || fin < 0) {
        return KT_TTL_NONE;
    }
    int64_t done = kt_rec_parse_time(kt_json_str(status, "completionTime", ""));
    if (done >= 0 && (double)done < fin) {
        fin = (double)done;
    }
    if (fin > now) {
        fin = now;
    }
    double due = fin + (double)ttl.v;
    if (now >= due) {
        return KT_TTL_EXPIRED;
    }
    *remaining_s = due - now;
    return KT_TTL_PENDING;
}

json_t *kt_rec_merge_patch(json_t *from, json_t *to)
{
    json_t *patch = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(from, k, v)
    {
        if (!json_object_get(to, k)) {
            json_object_set_new(patch, k, json_null());
        }
    }
    json_object_foreach(to, k, v)
    {
        json_t *old = json_object_get(from, k);
        if (old && kt_json_equal(old, v)) {
            continue;
        }
        if (json_is_object(old) && json_is_object(v)) {
            json_object_set_new(patch, k, kt_rec_merge_patch(old, v));
        } else {
            json_object_set_new(patch, k, json_deep_copy(v));
        }
    }
    return patch;
}

char *kt_rec_event_note(const char *msg)
{
    static const char prefix[] = "TrainJob resources reconciliation failed: ";
    size_t len = strlen(msg), cut = 0, runes = 0;
    while (cut < len && runes < 950) {
        unsigned char ch = (unsigned char)msg[cut++];
        if (ch >= 0xc0) {
            while (cut < len && ((unsigned char)msg[cut] & 0xc0) == 0x80) {
                cut++;
            }
        }
        runes++;
    }
    return kt_xasprintf("%s%.*s%s", prefix, (int)cut, msg, len > 950 ? " ..." : "");
}

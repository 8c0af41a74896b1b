/* SPDX-License-Identifier: Apache-2.0 */
/* reconciler/podevents.c - see podevents.h. */
#include "podevents.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/hash.h"
#include "common/base/json.h"
#include "common/base/log.h"
#include "common/base/mem.h"

#define LOG "podevents"
#define TJ_GROUP_PREFIX "trainer.kubeflow.org/"
#define EVLIMIT_SLOTS 1024

/* ---- the pod store ---- */

static void copy_member(json_t *to, const json_t *from, const char *key)
{
    json_t *v = json_object_get(from, key);
    if (v) {
        json_object_set(to, key, v);
    }
}

json_t *kt_pod_slim(json_t *pod, void *ud)
{
    (void)ud;
    static const char *const meta_keys[] = {"name", "namespace", "uid", "resourceVersion"};
    static const char *const label_keys[] = {KT_JOBSET_NAME_LABEL, KT_JOBSET_UID_LABEL,
                                             KT_JOBSET_RJOB_LABEL};
    const json_t *meta = json_object_get(pod, "metadata");
    const json_t *labels = json_object_get(meta, "labels");
    json_t *slim = json_object(), *smeta = json_object(), *slabels = json_object();
    copy_member(slim, pod, "apiVersion");
    copy_member(slim, pod, "kind");
    for (size_t i = 0; i < KT_ARRAY_SIZE(meta_keys); i++) {
        copy_member(smeta, meta, meta_keys[i]);
    }
    for (size_t i = 0; i < KT_ARRAY_SIZE(label_keys); i++) {
        copy_member(slabels, labels, label_keys[i]);
    }
    json_object_set_new(smeta, "labels", slabels);
    json_object_set_new(slim, "metadata", smeta);
    json_t *conds = json_object_get(json_object_get(pod, "status"), "conditions");
    json_t *sched = kt_json_arr_find(conds, "type", "PodScheduled", NULL);
    if (sched) {
        json_object_set_new(slim, "status", json_pack("{s:[O]}", "conditions", sched));
    }
    json_decref(pod);
    return slim;
}

const char *kt_pod_unschedulable(const json_t *pod)
{
    json_t *conds = json_object_get(json_object_get(pod, "status"), "conditions");
    json_t *c = kt_json_arr_find(conds, "type", "PodScheduled", NULL);
    if (!c || strcmp(kt_json_str(c, "status", ""), "False") != 0 ||
        strcmp(kt_json_str(c, "reason", ""), "Unschedulable") != 0) {
        return NULL;
    }
    return kt_json_str(c, "message", "");
}

/* The length of the longest prefix of s (len bytes) that fits in max bytes and does not end
 * inside a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max) {
        return len;
    }
    size_t cut = max;
    while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80) {
        cut--;
    }
    return cut;
}

char *kt_pod_sched_note(const char *rjob, const char *msg)
{
    static const char more[] = " ...";
    char *full =
        rjob && *rjob ? kt_xasprintf("replicatedJob \"%s\": %s", rjob, msg) : kt_xstrdup(msg);
    size_t len = strlen(full);
    if (len <= KT_SCHED_NOTE_MAX) {
        return full;
    }
    size_t cut = utf8_cut(full, len, KT_SCHED_NOTE_MAX - (sizeof(more) - 1));
    memcpy(full + cut, more, sizeof(more));
    return full;
}

/* ---- the limiter ---- */

struct kt_evlimit {
    pthread_mutex_t mu;
    struct {
        uint64_t hash; /* of uid and message; 0 = empty */
        double at;
    } seen[EVLIMIT_SLOTS];
    struct {
        uint64_t hash; /* of uid; 0 = empty */
        double tokens, at;
    } bucket[EVLIMIT_SLOTS];
};

struct kt_evlimit *kt_evlimit_new(void)
{
    struct kt_evlimit *l = kt_xcalloc(1, sizeof(*l));
    pthread_mutex_init(&l->mu, NULL);
    return l;
}

void kt_evlimit_free(struct kt_evlimit *l)
{
    if (!l) {
        return;
    }
    pthread_mutex_destroy(&l->mu);
    free(l);
}

/* Take a token from uid's bucket (refilled at one per KT_SCHED_EVENT_REFILL_S up to
 * KT_SCHED_EVENT_BURST); false when it is empty. Caller holds l->mu. */
static bool take_token(struct kt_evlimit *l, uint64_t uh, double now)
{
    size_t i = (size_t)(uh % EVLIMIT_SLOTS);
    if (l->bucket[i].hash != uh) {
        l->bucket[i].hash = uh;
        l->bucket[i].tokens = KT_SCHED_EVENT_BURST;
        l->bucket[i].at = now;
    }
    double t = l->bucket[i].tokens + (now - l->bucket[i].at) / KT_SCHED_EVENT_REFILL_S;
    l->bucket[i].tokens = t > KT_SCHED_EVENT_BURST ? KT_SCHED_EVENT_BURST : t;
    l->bucket[i].at = now;
    if (l->bucket[i].tokens < 1.0) {
        return false;
    }
    l->bucket[i].tokens -= 1.0;
    return true;
}

bool kt_evlimit_allow(struct kt_evlimit *l, const char *uid, const char *msg, double now)
{
    uint64_t uh = kt_fnv64_sep(kt_fnv64_str(KT_FNV64_BASIS, uid)) | 1;
    uint64_t mh = kt_fnv64_sep(kt_fnv64_str(uh, msg)) | 1;
    size_t i = (size_t)(mh % EVLIMIT_SLOTS);
    bool ok = false;
    pthread_mutex_lock(&l->mu);
    if (!(l->seen[i].hash == mh && now - l->seen[i].at < KT_SCHED_EVENT_DEDUP_S) &&
        take_token(l, uh, now)) {
        l->seen[i].hash = mh;
        l->seen[i].at = now;
        ok = true;
    }
    pthread_mutex_unlock(&l->mu);
    return ok;
}

/* ---- posting ---- */

static const char *uid_of(const json_t *obj)
{
    return kt_json_str(json_object_get(obj, "metadata"), "uid", "");
}

/* True when the controller reference of jobset is the TrainJob named name with uid tj_uid
 * (kt names the JobSet after its TrainJob). */
static bool controlled_by(const json_t *jobset, const char *name, const char *tj_uid)
{
    json_t *refs = json_object_get(json_object_get(jobset, "metadata"), "ownerReferences");
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        if (kt_json_bool(ref, "controller", false)) {
            return strcmp(kt_json_str(ref, "kind", ""), "TrainJob") == 0 &&
                   strncmp(kt_json_str(ref, "apiVersion", ""), TJ_GROUP_PREFIX,
                           strlen(TJ_GROUP_PREFIX)) == 0 &&
                   strcmp(kt_json_str(ref, "name", ""), name) == 0 &&
                   strcmp(kt_json_str(ref, "uid", ""), tj_uid) == 0;
        }
    }
    return false;
}

/* The cached TrainJob that owns the pod's JobSet, or NULL. Caller owns the result. */
static json_t *owner_trainjob(const struct kt_podevent_src *r, const char *ns, const json_t *labels)
{
    const char *js_name = kt_json_str(labels, KT_JOBSET_NAME_LABEL, "");
    const char *js_uid = kt_json_str(labels, KT_JOBSET_UID_LABEL, NULL);
    if (!*js_name) {
        return NULL;
    }
    json_t *js = kt_informer_get(r->jobsets, ns, js_name);
    json_t *tj = js ? kt_informer_get(r->trainjobs, ns, js_name) : NULL;
    bool ours = tj && (!js_uid || strcmp(js_uid, uid_of(js)) == 0) &&
                controlled_by(js, js_name, uid_of(tj));
    json_decref(js);
    if (!ours) {
        json_decref(tj);
        return NULL;
    }
    return tj;
}

static void post(struct kt_kube_client *c, const json_t *tj, const char *note)
{
    struct kt_kube_event ev = {.involved = tj,
                               .type = "Warning",
                               .reason = KT_EVENT_REASON_FAILED_SCHEDULING,
                               .message = note,
                               .component = KT_EVENT_COMPONENT};
    struct kt_err err = {0};
    const json_t *meta = json_object_get(tj, "metadata");
    if (kt_kube_event_create(c, &ev, &err) != 0) {
        kt_log_warn(LOG, "FailedScheduling event for trainjob %s/%s failed: %s",
                    kt_json_str(meta, "namespace", ""), kt_json_str(meta, "name", ""), err.msg);
    } else {
        kt_log_info(LOG, "FailedScheduling event for trainjob %s/%s: %s",
                    kt_json_str(meta, "namespace", ""), kt_json_str(meta, "name", ""), note);
    }
}

void kt_rec_pod_event(const struct kt_podevent_src *r, struct kt_kube_client *c, const char *ns,
                      const char *name, double now)
{
    json_t *pod = r->pods ? kt_informer_get(r->pods, ns, name) : NULL;
    const char *msg = pod ? kt_pod_unschedulable(pod) : NULL;
    json_t *labels = json_object_get(json_object_get(pod, "metadata"), "labels");
    json_t *tj = msg ? owner_trainjob(r, ns, labels) : NULL;
    if (tj) {
        char *note = kt_pod_sched_note(kt_json_str(labels, KT_JOBSET_RJOB_LABEL, NULL), msg);
        if (kt_evlimit_allow(r->sched_limit, uid_of(tj), note, now)) {
            post(c, tj, note);
        } else {
            kt_log_debug(LOG, "pod %s/%s: FailedScheduling event suppressed (repeat or rate)", ns,
                         name);
        }
        free(note);
    }
    json_decref(tj);
    json_decref(pod);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* common/config/config.c - load the Configuration file
 * (docs/internals/upstream.md#configuration-file).
 *
 * A table per Go struct drives a strict decoder over the YAML's JSON tree: known fields are
 * stored with type checks, unknown ones are collected as upstream's strict decoding errors.
 * Then defaults (pkg/apis/config/v1alpha1/defaults.go) and validation (pkg/config/validation.go)
 * apply. Does not watch the file or apply anything to servers. */
#include "common/config/config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base/buf.h"
#include "common/base/quantity.h"
#include "common/base/fielderr.h"
#include "common/base/mem.h"
#include "common/net/tlsopts.h"
#include "common/base/yaml.h"

#define CONFIG_MAX_BYTES (1024 * 1024)

enum ftype {
    F_TYPEMETA, /* apiVersion / kind: checked before decoding */
    F_INT32,
    F_FLOAT32,
    F_BOOL,
    F_STRING,
    F_DURATION,
    F_OBJECT,
    F_GK_MAP,
    F_GATE_MAP,
    F_STRV
};

struct schema;

struct field {
    const char *name;
    enum ftype type;
    size_t off;               /* offset in struct kt_config */
    const struct schema *sub; /* F_OBJECT */
};

struct schema {
    const char *go_type; /* for type errors: "ControllerWebhook" */
    const struct field *fields;
    size_t len;
    size_t present_off; /* bool set when the object is given, or SIZE_MAX */
};

#define OFF(member) offsetof(struct kt_config, member)
#define SCHEMA(go, arr, present)                                                                   \
    {                                                                                              \
        go, arr, KT_ARRAY_SIZE(arr), present                                                       \
    }

static const struct field WEBHOOK[] = {
    {"port", F_INT32, OFF(webhook.port), NULL},
    {"host", F_STRING, OFF(webhook.host), NULL},
};
static const struct field LEADER[] = {
    {"leaderElect", F_BOOL, OFF(leader_election.leader_elect), NULL},
    {"leaseDuration", F_DURATION, OFF(leader_election.lease_duration_ms), NULL},
    {"renewDeadline", F_DURATION, OFF(leader_election.renew_deadline_ms), NULL},
    {"retryPeriod", F_DURATION, OFF(leader_election.retry_period_ms), NULL},
    {"resourceLock", F_STRING, OFF(leader_election.resource_lock), NULL},
    {"resourceName", F_STRING, OFF(leader_election.resource_name), NULL},
    {"resourceNamespace", F_STRING, OFF(leader_election.resource_namespace), NULL},
};
static const struct field METRICS_AUTH[] = {
    {"enabled", F_BOOL, OFF(metrics.auth_enabled), NULL},
};
static const struct schema METRICS_AUTH_S = SCHEMA("ControllerMetricsAuth", METRICS_AUTH, SIZE_MAX);
static const struct field METRICS[] = {
    {"bindAddress", F_STRING, OFF(metrics.bind_address), NULL},
    {"secureServing", F_BOOL, OFF(metrics.secure_serving), NULL},
    {"auth", F_OBJECT, 0, &METRICS_AUTH_S},
};
static const struct field HEALTH[] = {
    {"healthProbeBindAddress", F_STRING, OFF(health.probe_bind_address), NULL},
    {"readinessEndpointName", F_STRING, OFF(health.readiness_endpoint_name), NULL},
    {"livenessEndpointName", F_STRING, OFF(health.liveness_endpoint_name), NULL},
};
static const struct field CONTROLLER[] = {
    {"groupKindConcurrency", F_GK_MAP, OFF(group_kind_concurrency), NULL},
};
static const struct field CERTS[] = {
    {"enable", F_BOOL, OFF(cert_management.enable), NULL},
    {"webhookServiceName", F_STRING, OFF(cert_management.webhook_service_name), NULL},
    {"webhookSecretName", F_STRING, OFF(cert_management.webhook_secret_name), NULL},
};
static const struct field CLIENT[] = {
    {"qps", F_FLOAT32, OFF(client_connection.qps), NULL},
    {"burst", F_INT32, OFF(client_connection.burst), NULL},
};
static const struct field STATUS[] = {
    {"port", F_INT32, OFF(status_server.port), NULL},
    {"qps", F_FLOAT32, OFF(status_server.qps), NULL},
    {"burst", F_INT32, OFF(status_server.burst), NULL},
};
static const struct field TLS[] = {
    {"minVersion", F_STRING, OFF(tls.min_version), NULL},
    {"cipherSuites", F_STRV, OFF(tls.cipher_suites), NULL},
    {"nextProtos", F_STRV, OFF(tls.next_protos), NULL},
};

static const struct schema WEBHOOK_S = SCHEMA("ControllerWebhook", WEBHOOK, SIZE_MAX);
static const struct schema LEADER_S =
    SCHEMA("LeaderElectionConfiguration", LEADER, OFF(leader_election.present));
static const struct schema METRICS_S = SCHEMA("ControllerMetrics", METRICS, SIZE_MAX);
static const struct schema HEALTH_S = SCHEMA("ControllerHealth", HEALTH, SIZE_MAX);
static const struct schema CONTROLLER_S =
    SCHEMA("ControllerConfigurationSpec", CONTROLLER, SIZE_MAX);
static const struct schema CERTS_S = SCHEMA("CertManagement", CERTS, SIZE_MAX);
static const struct schema CLIENT_S = SCHEMA("ClientConnection", CLIENT, SIZE_MAX);
static const struct schema STATUS_S = SCHEMA("StatusServer", STATUS, SIZE_MAX);
static const struct schema TLS_S = SCHEMA("TLSOptions", TLS, SIZE_MAX);

/* statusServer is docs/internals/upstream.md#configuration-file's key; some upstream revisions
 * spell it trainJobStatusServer, so both are read (into the same settings). */
static const struct field ROOT[] = {
    {"apiVersion", F_TYPEMETA, 0, NULL},
    {"kind", F_TYPEMETA, 0, NULL},
    {"webhook", F_OBJECT, 0, &WEBHOOK_S},
    {"leaderElection", F_OBJECT, 0, &LEADER_S},
    {"metrics", F_OBJECT, 0, &METRICS_S},
    {"health", F_OBJECT, 0, &HEALTH_S},
    {"controller", F_OBJECT, 0, &CONTROLLER_S},
    {"certManagement", F_OBJECT, 0, &CERTS_S},
    {"clientConnection", F_OBJECT, 0, &CLIENT_S},
    {"statusServer", F_OBJECT, 0, &STATUS_S},
    {"trainJobStatusServer", F_OBJECT, 0, &STATUS_S},
    {"featureGates", F_GATE_MAP, OFF(feature_gates), NULL},
    {"tls", F_OBJECT, 0, &TLS_S},
    {"watchNamespaces", F_STRV, OFF(watch_namespaces), NULL},
};
static const struct schema ROOT_S = SCHEMA("Configuration", ROOT, SIZE_MAX);

/* Decoder state: the dotted field path and JSON Pointer of the node being read. */
struct dec {
    const char *name;
    const struct kt_yaml_doc *doc;
    struct kt_config *cfg;
    char path[512];
    char ptr[512];
    struct kt_strv unknown; /* strict errors, in document order */
    size_t unknown_line;
    const char *status_key; /* the key statusServer settings came from */
};

static void *at(struct kt_config *cfg, size_t off)
{
    return (char *)cfg + off;
}

static void set_str(char **slot, const char *v)
{
    free(*slot);
    *slot = kt_xstrdup(v);
}

void kt_config_default(struct kt_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->webhook.port = 9443;
    cfg->webhook.host = kt_xstrdup("");
    cfg->leader_election.resource_lock = kt_xstrdup("");
    cfg->leader_election.resource_name = kt_xstrdup("");
    cfg->leader_election.resource_namespace = kt_xstrdup("");
    cfg->leader_election.lease_duration_ms = 15000;
    cfg->leader_election.renew_deadline_ms = 10000;
    cfg->leader_election.retry_period_ms = 2000;
    cfg->metrics.bind_address = kt_xstrdup(":8443");
    cfg->metrics.secure_serving = true;
    cfg->health.probe_bind_address = kt_xstrdup(":8081");
    cfg->health.readiness_endpoint_name = kt_xstrdup("readyz");
    cfg->health.liveness_endpoint_name = kt_xstrdup("healthz");
    cfg->cert_management.enable = true;
    cfg->cert_management.webhook_service_name = kt_xstrdup("kubeflow-trainer-controller-manager");
    cfg->cert_management.webhook_secret_name = kt_xstrdup("kubeflow-trainer-webhook-cert");
    cfg->client_connection.qps = 50;
    cfg->client_connection.burst = 100;
    cfg->status_server.port = 10443;
    cfg->status_server.qps = 5;
    cfg->status_server.burst = 10;
    cfg->tls.min_version = kt_xstrdup("");
    kt_strv_init(&cfg->tls.cipher_suites);
    kt_strv_init(&cfg->tls.next_protos);
    kt_strv_push(&cfg->tls.next_protos, "http/1.1");
    kt_strv_init(&cfg->watch_namespaces);
    kt_strv_init(&cfg->warnings);
}

void kt_config_release(struct kt_config *cfg)
{
    char **strs[] = {&cfg->webhook.host,
                     &cfg->leader_election.resource_lock,
                     &cfg->leader_election.resource_name,
                     &cfg->leader_election.resource_namespace,
                     &cfg->metrics.bind_address,
                     &cfg->health.probe_bind_address,
                     &cfg->health.readiness_endpoint_name,
                     &cfg->health.liveness_endpoint_name,
                     &cfg->cert_management.webhook_service_name,
                     &cfg->cert_management.webhook_secret_name,
                     &cfg->tls.min_version};
    for (size_t i = 0; i < KT_ARRAY_SIZE(strs); i++) {
        free(*strs[i]);
    }
    for (size_t i = 0; i < cfg->group_kind_concurrency.len; i++) {
        free(cfg->group_kind_concurrency.items[i].group_kind);
    }
    free(cfg->group_kind_concurrency.items);
    for (size_t i = 0; i < cfg->feature_gates.len; i++) {
        free(cfg->feature_gates.items[i].name);
    }
    free(cfg->feature_gates.items);
    kt_strv_release(&cfg->tls.cipher_suites);
    kt_strv_release(&cfg->tls.next_protos);
    kt_strv_release(&cfg->watch_namespaces);
    kt_strv_release(&cfg->warnings);
    memset(cfg, 0, sizeof(*cfg));
}

bool kt_config_gate(const struct kt_config *cfg, const char *name, bool def)
{
    for (size_t i = 0; i < cfg->feature_gates.len; i++) {
        if (strcmp(cfg->feature_gates.items[i].name, name) == 0) {
            return cfg->feature_gates.items[i].enabled;
        }
    }
    return def;
}

static void set_gate(struct kt_config *cfg, const char *name, size_t n, bool on)
{
    for (size_t i = 0; i < cfg->feature_gates.len; i++) {
        if (strlen(cfg->feature_gates.items[i].name) == n &&
            strncmp(cfg->feature_gates.items[i].name, name, n) == 0) {
            cfg->feature_gates.items[i].enabled = on;
            return;
        }
    }
    size_t i = cfg->feature_gates.len++;
    cfg->feature_gates.items =
        kt_xrealloc(cfg->feature_gates.items, (i + 1) * sizeof(struct kt_config_gate));
    cfg->feature_gates.items[i].name = kt_xstrndup(name, n);
    cfg->feature_gates.items[i].enabled = on;
}

int kt_config_set_gates(struct kt_config *cfg, const char *spec, struct kt_err *err)
{
    static const char *const known[] = {KT_GATE_TRAINJOB_STATUS, KT_GATE_DRA};
    const char *p = spec;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        size_t n = eq ? (size_t)(eq - p) : len;
        bool ok = false;
        for (size_t k = 0; k < KT_ARRAY_SIZE(known); k++) {
            ok = ok || (strlen(known[k]) == n && strncmp(known[k], p, n) == 0);
        }
        if (!ok) {
            return kt_err_set(err, KT_EINVAL, "unrecognized feature gate: %.*s", (int)n, p);
        }
        const char *v = eq ? eq + 1 : "";
        size_t vn = eq ? len - n - 1 : 0;
        bool on = vn == 4 && strncasecmp(v, "true", 4) == 0;
        if (!eq || (!on && !(vn == 5 && strncasecmp(v, "false", 5) == 0))) {
            return kt_err_set(err, KT_EINVAL,
                              "invalid value of %.*s=%.*s, err: must be true or false", (int)n, p,
                              (int)vn, v);
        }
        set_gate(cfg, p, n, on);
        p = end ? end + 1 : p + len;
    }
    return 0;
}

/* Append ".key" / "/key" (JSON Pointer escaped) and return the old lengths for pop(). */
static void push(struct dec *d, const char *key, size_t saved[2])
{
    size_t pl = strlen(d->path), tl = strlen(d->ptr);
    saved[0] = pl;
    saved[1] = tl;
    snprintf(d->path + pl, sizeof(d->path) - pl, "%s%s", pl ? "." : "", key);
    for (const char *k = key; *k != '\0' && tl + 3 < sizeof(d->ptr); k++) {
        if (k == key) {
            d->ptr[tl++] = '/';
        }
        if (*k == '~' || *k == '/') {
            d->ptr[tl++] = '~';
            d->ptr[tl++] = *k == '~' ? '0' : '1';
        } else {
            d->ptr[tl++] = *k;
        }
    }
    if (*key == '\0' && tl + 1 < sizeof(d->ptr)) {
        d->ptr[tl++] = '/';
    }
    d->ptr[tl] = '\0';
}

static void pop(struct dec *d, const size_t saved[2])
{
    d->path[saved[0]] = '\0';
    d->ptr[saved[1]] = '\0';
}

static size_t line_here(const struct dec *d)
{
    return d->doc ? kt_yaml_line(d->doc, d->ptr) : 0;
}

/* "PATH:LINE: " (or "PATH: ") in front of an error already in err. */
static int fail_at(const struct dec *d, size_t line, struct kt_err *err)
{
    if (line > 0) {
        return kt_err_prefix(err, "%s:%zu", d->name, line);
    }
    return kt_err_prefix(err, "%s", d->name);
}

/* Go's name for the JSON type of v in "cannot unmarshal X into ...". */
static void json_kind(const json_t *v, char *buf, size_t size)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        snprintf(buf, size, "string");
        break;
    case JSON_INTEGER:
        snprintf(buf, size, "number %" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        snprintf(buf, size, "number %g", json_real_value(v));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        snprintf(buf, size, "bool");
        break;
    case JSON_ARRAY:
        snprintf(buf, size, "array");
        break;
    default:
        snprintf(buf, size, "object");
        break;
    }
}

static int type_error(const struct dec *d, const struct schema *s, const json_t *v,
                      const char *go_type, struct kt_err *err)
{
    char kind[64];

    json_kind(v, kind, sizeof(kind));
    /* Go prints the number's literal only when the target is itself numeric. */
    if (json_is_number(v) && strcmp(go_type, "int32") != 0 && strcmp(go_type, "float32") != 0) {
        snprintf(kind, sizeof(kind), "number");
    }
    kt_err_set(err, KT_EPARSE, "json: cannot unmarshal %s into Go struct field %s.%s of type %s",
               kind, s->go_type, d->path, go_type);
    return fail_at(d, line_here(d), err);
}

/* Nanoseconds per unit of Go's time.ParseDuration, or 0 for an unknown unit. */
static int64_t duration_unit(const char *u, size_t ul)
{
    static const struct {
        const char *unit;
        int64_t ns;
    } units[] = {{"ns", 1},       {"us", 1000},      {"\xc2\xb5s", 1000},  {"\xce\xbcs", 1000},
                 {"ms", 1000000}, {"s", 1000000000}, {"m", 60000000000LL}, {"h", 3600000000000LL}};

    for (size_t i = 0; i < KT_ARRAY_SIZE(units); i++) {
        if (strlen(units[i].unit) == ul && strncmp(units[i].unit, u, ul) == 0) {
            return units[i].ns;
        }
    }
    return 0;
}

/* One "<int>[.<frac>]" of a duration: value = ip + frac/scale. NULL when invalid. */
static const char *duration_number(const char *p, kt_i128 *ip, kt_i128 *frac, kt_i128 *scale)
{
    bool digits = false;

    *ip = 0;
    *frac = 0;
    *scale = 1;
    for (; *p >= '0' && *p <= '9'; p++, digits = true) {
        *ip = *ip * 10 + (*p - '0');
        if (*ip > (kt_i128)INT64_MAX) {
            return NULL;
        }
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, digits = true) {
            if (*scale < (kt_i128)1000000000000000000LL) {
                *frac = *frac * 10 + (*p - '0');
                *scale *= 10;
            }
        }
    }
    return digits ? p : NULL;
}

/* "<text><orig, Go-quoted>", as time.ParseDuration's errors. Returns -1. */
static int duration_error(struct kt_err *err, const char *text, const char *orig)
{
    char *q = kt_go_quote(orig);
    kt_err_set(err, KT_EPARSE, "%s%s", text, q);
    free(q);
    return -1;
}

/* Go's time.ParseDuration, in nanoseconds; err gets Go's texts. */
static int go_duration(const char *orig, int64_t *out, struct kt_err *err)
{
    const char *p = orig;
    bool neg = *p == '-';
    kt_i128 total = 0, ip, frac, scale;

    p += (*p == '-' || *p == '+') ? 1 : 0;
    if (strcmp(p, "0") == 0) {
        *out = 0;
        return 0;
    }
    if (*p == '\0') {
        return duration_error(err, "time: invalid duration ", orig);
    }
    while (*p != '\0') {
        p = duration_number(p, &ip, &frac, &scale);
        if (p == NULL) {
            return duration_error(err, "time: invalid duration ", orig);
        }
        const char *u = p;
        while (*p != '\0' && *p != '.' && !(*p >= '0' && *p <= '9')) {
            p++;
        }
        if (u == p) {
            return duration_error(err, "time: missing unit in duration ", orig);
        }
        int64_t unit = duration_unit(u, (size_t)(p - u));
        if (unit == 0) {
            char *uq = kt_xstrndup(u, (size_t)(p - u));
            char *q = kt_go_quote(uq);
            char *text = kt_xasprintf("time: unknown unit %s in duration ", q);
            duration_error(err, text, orig);
            free(text);
            free(q);
            free(uq);
            return -1;
        }
        total += ip * unit + frac * unit / scale;
        if (total > (kt_i128)INT64_MAX) {
            return duration_error(err, "time: invalid duration ", orig);
        }
    }
    *out = (int64_t)(neg ? -total : total);
    return 0;
}

static int decode_object(struct dec *d, const struct schema *s, const json_t *obj,
                         struct kt_err *err);

static int decode_int32(struct dec *d, const struct schema *s, const json_t *v, int32_t *slot,
                        struct kt_err *err)
{
    double r = json_is_real(v) ? json_real_value(v) : 0;

    if (json_is_integer(v) && json_integer_value(v) >= INT32_MIN &&
        json_integer_value(v) <= INT32_MAX) {
        *slot = (int32_t)json_integer_value(v);
        return 0;
    }
    /* An integral real (YAML "9443.0") reaches Go's decoder as 9443 and is accepted. */
    if (json_is_real(v) && r == (double)(int32_t)r && r >= INT32_MIN && r <= INT32_MAX) {
        *slot = (int32_t)r;
        return 0;
    }
    return type_error(d, s, v, "int32", err);
}

static int decode_float32(struct dec *d, const struct schema *s, const json_t *v, double *slot,
                          struct kt_err *err)
{
    if (!json_is_number(v) || json_number_value(v) > 3.4028234663852886e38 ||
        json_number_value(v) < -3.4028234663852886e38) {
        return type_error(d, s, v, "float32", err);
    }
    /* Kept as written: float32 rounding would print -0.1 as -0.10000000149 in messages. */
    *slot = json_number_value(v);
    return 0;
}

static int decode_duration(struct dec *d, const struct schema *s, const json_t *v, int64_t *slot,
                           struct kt_err *err)
{
    int64_t ns = 0;

    if (!json_is_string(v)) {
        return type_error(d, s, v, "string", err);
    }
    if (go_duration(json_string_value(v), &ns, err) < 0) {
        return fail_at(d, line_here(d), err);
    }
    *slot = ns / 1000000;
    return 0;
}

static int decode_gk_map(struct dec *d, const struct schema *s, const json_t *v, struct kt_err *err)
{
    const char *key;
    json_t *val;

    if (!json_is_object(v)) {
        return type_error(d, s, v, "map[string]int32", err);
    }
    json_object_foreach((json_t *)(uintptr_t)v, key, val)
    {
        int32_t n = 0;
        size_t saved[2];
        push(d, key, saved);
        d->path[saved[0]] = '\0'; /* Go's message names the map, not the key */
        int rc = json_is_null(val) ? 0 : decode_int32(d, s, val, &n, err);
        pop(d, saved);
        if (rc < 0) {
            return -1;
        }
        struct kt_config *cfg = d->cfg;
        size_t i = cfg->group_kind_concurrency.len++;
        cfg->group_kind_concurrency.items =
            kt_xrealloc(cfg->group_kind_concurrency.items, (i + 1) * sizeof(struct kt_config_gk));
        cfg->group_kind_concurrency.items[i].group_kind = kt_xstrdup(key);
        cfg->group_kind_concurrency.items[i].concurrency = n;
    }
    return 0;
}

static int decode_gate_map(struct dec *d, const struct schema *s, const json_t *v,
                           struct kt_err *err)
{
    const char *key;
    json_t *val;

    if (!json_is_object(v)) {
        return type_error(d, s, v, "map[string]bool", err);
    }
    json_object_foreach((json_t *)(uintptr_t)v, key, val)
    {
        if (!json_is_boolean(val) && !json_is_null(val)) {
            size_t saved[2];
            push(d, key, saved);
            d->path[saved[0]] = '\0';
            type_error(d, s, val, "bool", err);
            pop(d, saved);
            return -1;
        }
        struct kt_config *cfg = d->cfg;
        size_t i = cfg->feature_gates.len++;
        cfg->feature_gates.items =
            kt_xrealloc(cfg->feature_gates.items, (i + 1) * sizeof(struct kt_config_gate));
        cfg->feature_gates.items[i].name = kt_xstrdup(key);
        cfg->feature_gates.items[i].enabled = json_is_true(val);
    }
    return 0;
}

static int decode_strv(struct dec *d, const struct schema *s, const json_t *v, struct kt_strv *slot,
                       struct kt_err *err)
{
    size_t i;
    json_t *item;

    if (!json_is_array(v)) {
        return type_error(d, s, v, "[]string", err);
    }
    kt_strv_release(slot);
    kt_strv_init(slot);
    json_array_foreach(v, i, item)
    {
        if (!json_is_string(item)) {
            return type_error(d, s, item, "string", err);
        }
        kt_strv_push(slot, json_string_value(item));
    }
    return 0;
}

static int decode_field(struct dec *d, const struct schema *s, const struct field *f,
                        const json_t *v, struct kt_err *err)
{
    void *slot = at(d->cfg, f->off);
    char go_type[64];

    if (json_is_null(v)) {
        return 0; /* Go leaves the field (or pointer) unset */
    }
    switch (f->type) {
    case F_TYPEMETA:
        return 0;
    case F_INT32:
        return decode_int32(d, s, v, slot, err);
    case F_FLOAT32:
        return decode_float32(d, s, v, slot, err);
    case F_BOOL:
        if (!json_is_boolean(v)) {
            return type_error(d, s, v, "bool", err);
        }
        *(bool *)slot = json_is_true(v);
        return 0;
    case F_STRING:
        if (!json_is_string(v)) {
            return type_error(d, s, v, "string", err);
        }
        set_str(slot, json_string_value(v));
        return 0;
    case F_DURATION:
        return decode_duration(d, s, v, slot, err);
    case F_OBJECT:
        if (!json_is_object(v)) {
            snprintf(go_type, sizeof(go_type), "v1alpha1.%s", f->sub->go_type);
            return type_error(d, s, v, go_type, err);
        }
        return decode_object(d, f->sub, v, err);
    case F_GK_MAP:
        return decode_gk_map(d, s, v, err);
    case F_GATE_MAP:
        return decode_gate_map(d, s, v, err);
    case F_STRV:
        return decode_strv(d, s, v, slot, err);
    default:
        KT_ASSERT(0);
        return -1;
    }
}

static const struct field *find_field(const struct schema *s, const char *key)
{
    for (size_t i = 0; i < s->len; i++) {
        if (strcmp(s->fields[i].name, key) == 0) {
            return &s->fields[i];
        }
    }
    return NULL;
}

static int decode_object(struct dec *d, const struct schema *s, const json_t *obj,
                         struct kt_err *err)
{
    const char *key;
    json_t *val;

    if (s->present_off != SIZE_MAX) {
        *(bool *)at(d->cfg, s->present_off) = true;
    }
    json_object_foreach((json_t *)(uintptr_t)obj, key, val)
    {
        size_t saved[2];
        const struct field *f = find_field(s, key);
        push(d, key, saved);
        if (f == NULL) {
            char *msg = kt_xasprintf("unknown field \"%s\"", d->path);
            if (d->unknown.len == 0) {
                d->unknown_line = line_here(d);
            }
            kt_strv_push(&d->unknown, msg);
            free(msg);
            pop(d, saved);
            continue;
        }
        if (s == &ROOT_S && f->sub == &STATUS_S) {
            d->status_key = f->name;
        }
        int rc = decode_field(d, s, f, val, err);
        pop(d, saved);
        if (rc < 0) {
            return -1;
        }
    }
    return 0;
}

/* Go's type name of a JSON value in Interpret's error ("cannot unmarshal X"). */
static const char *go_value_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    case JSON_ARRAY:
        return "array";
    default:
        return "object";
    }
}

/* apiVersion/kind as the universal decoder checks them: absent ones default to ours. */
static int check_typemeta(const struct dec *d, const json_t *root, struct kt_err *err)
{
    static const char *const keys[] = {"apiVersion", "kind"};
    const char *vals[2] = {"", ""};

    if (!json_is_object(root)) {
        kt_err_set(
            err, KT_EPARSE,
            "couldn't get version/kind; json parse error: json: cannot unmarshal %s into "
            "Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
            "Kind string \"json:\\\"kind,omitempty\\\"\" }",
            go_value_kind(root));
        return fail_at(d, d->doc->line, err);
    }
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(root, keys[i]);
        if (v != NULL && !json_is_null(v) && !json_is_string(v)) {
            kt_err_set(err, KT_EPARSE,
                       "couldn't get version/kind; json parse error: json: cannot unmarshal %s "
                       "into Go struct field .%s of type string",
                       go_value_kind(v), keys[i]);
            return fail_at(d, kt_yaml_line(d->doc, i == 0 ? "/apiVersion" : "/kind"), err);
        }
        vals[i] = json_is_string(v) ? json_string_value(v) : "";
    }
    const char *api = vals[0][0] != '\0' ? vals[0] : KT_CONFIG_API_VERSION;
    const char *kind = vals[1][0] != '\0' ? vals[1] : KT_CONFIG_KIND;
    if (strcmp(api, KT_CONFIG_API_VERSION) != 0 || strcmp(kind, KT_CONFIG_KIND) != 0) {
        /* Upstream appends ` in scheme "<file:line>"`, which names its own source. */
        kt_err_set(err, KT_EPARSE, "no kind \"%s\" is registered for version \"%s\"", kind, api);
        return fail_at(d, kt_yaml_line(d->doc, vals[1][0] != '\0' ? "/kind" : "/apiVersion"), err);
    }
    return 0;
}

/* YAML duplicate keys ("N: duplicate key \"k\"") and unknown fields, as the strict codec's
 * one error: "strict decoding error: yaml: unmarshal errors:\n  line N: key "k" already set
 * in map, unknown field "a", ...". Returns 0 when there is nothing to report. */
static int strict_errors(struct dec *d, struct kt_err *err)
{
    struct kt_buf b;
    size_t first_line = 0;

    if (d->doc->warnings.len == 0 && d->unknown.len == 0) {
        return 0;
    }
    kt_buf_init(&b, 4096);
    int rc = kt_buf_puts(&b, "strict decoding error: ", NULL);
    for (size_t i = 0; rc == 0 && i < d->doc->warnings.len; i++) {
        const char *w = d->doc->warnings.items[i];
        char *rest = NULL;
        unsigned long line = strtoul(w, &rest, 10);
        const char *key = strstr(rest, "duplicate key ");
        first_line = first_line ? first_line : line;
        rc = kt_buf_printf(&b, NULL, "%s  line %lu: key %s already set in map",
                           i == 0 ? "yaml: unmarshal errors:\n" : "\n", line,
                           key ? key + strlen("duplicate key ") : rest);
    }
    kt_strv_sort(&d->unknown);
    for (size_t i = 0; rc == 0 && i < d->unknown.len; i++) {
        bool sep = i > 0 || d->doc->warnings.len > 0;
        rc = kt_buf_printf(&b, NULL, "%s%s", sep ? ", " : "", d->unknown.items[i]);
    }
    kt_err_set(err, KT_EPARSE, "%s", rc == 0 ? b.data : "strict decoding error");
    kt_buf_release(&b);
    return fail_at(d, first_line ? first_line : d->unknown_line, err);
}

/* Defaulting of string fields left empty, as SetDefaults_Configuration. */
static void apply_defaults(struct kt_config *cfg)
{
    struct {
        char **slot;
        const char *def;
    } defs[] = {
        {&cfg->metrics.bind_address, ":8443"},
        {&cfg->health.probe_bind_address, ":8081"},
        {&cfg->health.readiness_endpoint_name, "readyz"},
        {&cfg->health.liveness_endpoint_name, "healthz"},
        {&cfg->cert_management.webhook_service_name, "kubeflow-trainer-controller-manager"},
        {&cfg->cert_management.webhook_secret_name, "kubeflow-trainer-webhook-cert"},
    };
    for (size_t i = 0; i < KT_ARRAY_SIZE(defs); i++) {
        if ((*defs[i].slot)[0] == '\0') {
            set_str(defs[i].slot, defs[i].def);
        }
    }
    if (cfg->tls.next_protos.len == 0) {
        kt_strv_push(&cfg->tls.next_protos, "http/1.1");
    }
}

/* Record "NAME:LINE: <text>\"<value>\"" as a warning. */
static void warn(struct dec *d, const char *ptr, const char *text, const char *value)
{
    char *msg = kt_xasprintf("%s:%zu: %s\"%s\"", d->name, kt_yaml_line(d->doc, ptr), text, value);
    kt_strv_push(&d->cfg->warnings, msg);
    free(msg);
}

/* tls values we cannot honour are warnings (docs/internals/upstream.md#configuration-file): the
 * library default is used. */
static void check_tls(struct dec *d)
{
    struct kt_config *cfg = d->cfg;
    static const char *const versions[] = {"", "1.0", "1.1", "1.2", "1.3"};
    bool known = false;

    for (size_t i = 0; i < KT_ARRAY_SIZE(versions); i++) {
        known = known || strcmp(cfg->tls.min_version, versions[i]) == 0;
    }
    if (!known) {
        warn(d, "/tls/minVersion",
             "tls.minVersion: unknown TLS version, using the default: ", cfg->tls.min_version);
        set_str(&cfg->tls.min_version, "");
    }
    struct kt_strv kept;
    kt_strv_init(&kept);
    for (size_t i = 0; i < cfg->tls.cipher_suites.len; i++) {
        const char *name = cfg->tls.cipher_suites.items[i];
        if (kt__tls_suite_known(name)) {
            kt_strv_push(&kept, name);
            continue;
        }
        char ptr[64];
        snprintf(ptr, sizeof(ptr), "/tls/cipherSuites/%zu", i);
        warn(d, ptr, "tls.cipherSuites: unknown cipher suite, ignored: ", name);
    }
    kt_strv_release(&cfg->tls.cipher_suites);
    cfg->tls.cipher_suites = kept;
}

/* A float32 value the way field.Invalid prints it (%v): integral values without ".0". */
static void add_invalid_float(struct kt_ferrs *l, const char *field, double v, const char *detail)
{
    if (v == (double)(long long)v) {
        kt_ferrs_add_int(l, KT_FERR_INVALID, field, (long long)v, "%s", detail);
        return;
    }
    json_t *j = json_real(v);
    kt_ferrs_add(l, KT_FERR_INVALID, field, j, KT_GO_ANY, "%s", detail);
    json_decref(j);
}

/* Remember the line of the first failing node. */
static void note_line(const struct dec *d, size_t *line, const char *ptr)
{
    if (*line == 0) {
        *line = kt_yaml_line(d->doc, ptr);
    }
}

/* A namespace name: an RFC 1123 label, [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 bytes. */
static bool dns1123_label(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-') {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) {
            return false;
        }
    }
    return true;
}

/* watchNamespaces (kt's, not upstream's: docs/install.md "Namespace-scoped install"): namespace
 * names, each once. Returns the number of errors added. */
size_t kt_config_check_namespaces(const struct kt_strv *ns, struct kt_ferrs *l)
{
    size_t before = l->len;
    char path[64];
    for (size_t i = 0; i < ns->len; i++) {
        snprintf(path, sizeof(path), "watchNamespaces[%zu]", i);
        if (!dns1123_label(ns->items[i])) {
            kt_ferrs_add_str(l, KT_FERR_INVALID, path, ns->items[i], "%s", KT_CONFIG_NS_DETAIL);
            continue;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(ns->items[i], ns->items[j]) == 0) {
                kt_ferrs_add_str(l, KT_FERR_INVALID, path, ns->items[i], "duplicate namespace");
                break;
            }
        }
    }
    return l->len - before;
}

/* pkg/config/validation.go, field by field, with upstream's paths and texts. */
static void validate(const struct dec *d, struct kt_ferrs *l, size_t *line)
{
    const struct kt_config *cfg = d->cfg;
    static const char between[] = "must be between 1 and 65535";
    static const char nonneg[] = "must be greater than or equal to 0";
    char path[600], ptr[600];

    if (cfg->webhook.port < 1 || cfg->webhook.port > 65535) {
        kt_ferrs_add_int(l, KT_FERR_INVALID, "webhook.port", cfg->webhook.port, "%s", between);
        note_line(d, line, "/webhook/port");
    }
    if (cfg->client_connection.qps < 0) {
        add_invalid_float(l, "clientConnection.qps", cfg->client_connection.qps, nonneg);
        note_line(d, line, "/clientConnection/qps");
    }
    if (cfg->client_connection.burst < 0) {
        kt_ferrs_add_int(l, KT_FERR_INVALID, "clientConnection.burst", cfg->client_connection.burst,
                         "%s", nonneg);
        note_line(d, line, "/clientConnection/burst");
    }
    for (size_t i = 0; i < cfg->group_kind_concurrency.len; i++) {
        const struct kt_config_gk *gk = &cfg->group_kind_concurrency.items[i];
        if (gk->concurrency >= 1) {
            continue;
        }
        snprintf(path, sizeof(path), "controller.groupKindConcurrency[%s]", gk->group_kind);
        kt_ferrs_add_int(l, KT_FERR_INVALID, path, gk->concurrency, "must be greater than 0");
        snprintf(ptr, sizeof(ptr), "/controller/groupKindConcurrency/%s", gk->group_kind);
        note_line(d, line, ptr);
    }
    const char *sk = d->status_key ? d->status_key : "statusServer";
    const struct {
        bool bad;
        const char *name;
        double value;
        const char *detail;
    } status[] = {
        {cfg->status_server.port < 1 || cfg->status_server.port > 65535, "port",
         cfg->status_server.port, between},
        {cfg->status_server.qps < 0, "qps", cfg->status_server.qps, nonneg},
        {cfg->status_server.burst < 0, "burst", cfg->status_server.burst, nonneg},
    };
    for (size_t i = 0; i < KT_ARRAY_SIZE(status); i++) {
        if (!status[i].bad) {
            continue;
        }
        snprintf(path, sizeof(path), "%s.%s", sk, status[i].name);
        add_invalid_float(l, path, status[i].value, status[i].detail);
        snprintf(ptr, sizeof(ptr), "/%s/%s", sk, status[i].name);
        note_line(d, line, ptr);
    }
    if (kt_config_check_namespaces(&cfg->watch_namespaces, l) > 0) {
        note_line(d, line, "/watchNamespaces");
    }
}

static int decode_doc(struct dec *d, struct kt_err *err)
{
    struct kt_ferrs errs;
    size_t line = 0;

    if (check_typemeta(d, d->doc->root, err) < 0) {
        return -1;
    }
    if (decode_object(d, &ROOT_S, d->doc->root, err) < 0) {
        return -1;
    }
    if (strict_errors(d, err) < 0) {
        return -1;
    }
    apply_defaults(d->cfg);
    check_tls(d);
    kt_ferrs_init(&errs);
    validate(d, &errs, &line);
    if (errs.len > 0) {
        char *agg = kt_ferrs_string(&errs);
        kt_err_set(err, KT_EINVAL, "invalid configuration: %s", agg);
        free(agg);
        kt_ferrs_release(&errs);
        return fail_at(d, line, err);
    }
    kt_ferrs_release(&errs);
    return 0;
}

/* "line N: text" from the YAML reader becomes "NAME:N: text"; anything else "NAME: text". */
static void yaml_error(const char *name, struct kt_err *err)
{
    char *end = NULL;
    unsigned long line = 0;

    if (err == NULL) {
        return;
    }
    if (strncmp(err->msg, "line ", 5) == 0) {
        line = strtoul(err->msg + 5, &end, 10);
    }
    if (line == 0 || end == NULL || strncmp(end, ": ", 2) != 0) {
        kt_err_prefix(err, "%s", name);
        return;
    }
    char *rest = kt_xstrdup(end + 2);
    kt_err_set(err, err->code, "%s:%lu: %s", name, line, rest);
    free(rest);
}

int kt_config_load_data(const char *name, const char *data, size_t len, struct kt_config *out,
                        struct kt_err *err)
{
    struct kt_yaml_limits lim;
    struct kt_yaml_stream st = {0};
    struct dec d = {.name = name, .cfg = out};
    int rc = -1;

    kt_config_default(out);
    kt_strv_init(&d.unknown);
    kt_yaml_limits_default(&lim);
    if (kt_yaml_parse(data, len, &lim, &st, err) < 0) {
        yaml_error(name, err);
        goto out;
    }
    /* Like upstream's YAML reader, only the first document counts; none means defaults. */
    for (size_t i = 0; i < st.len && d.doc == NULL; i++) {
        if (st.docs[i].root != NULL) {
            d.doc = &st.docs[i];
        }
    }
    if (d.doc != NULL && decode_doc(&d, err) < 0) {
        goto out;
    }
    rc = 0;
out:
    kt_strv_release(&d.unknown);
    kt_yaml_stream_release(&st);
    return rc;
}

int kt_config_load(const char *path, struct kt_config *out, struct kt_err *err)
{
    struct kt_buf b;

    kt_buf_init(&b, CONFIG_MAX_BYTES);
    if (kt_buf_read_file(&b, path, err) < 0) {
        kt_config_default(out);
        return -1; /* the message already names the path */
    }
    int rc = kt_config_load_data(path, b.data ? b.data : "", b.len, out, err);
    kt_buf_release(&b);
    return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_config.c - the Configuration file loader
 * (docs/internals/upstream.md#configuration-file): defaults, the shipped file, strict decoding,
 * upstream's validation texts, warnings, I/O errors. Expected texts were checked against
 * apimachinery v0.35.4's strict codec and pkg/config/validation.go. */
#include "tests/test.h"

#include <stdlib.h>
#include <unistd.h>

#include "common/config/config.h"
#include "common/base/mem.h"

#define HEAD "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\n"

/* Load text; returns the rc and leaves the message in err. */
static int load(const char *text, struct kt_config *cfg, struct kt_err *err)
{
    memset(err, 0, sizeof(*err));
    return kt_config_load_data("cfg.yaml", text, strlen(text), cfg, err);
}

static void check_defaults(const struct kt_config *c)
{
    CHECK_EQ_INT(c->webhook.port, 9443);
    CHECK_EQ_STR(c->webhook.host, "");
    CHECK(!c->leader_election.present);
    CHECK(!c->leader_election.leader_elect);
    CHECK_EQ_STR(c->metrics.bind_address, ":8443");
    CHECK(c->metrics.secure_serving);
    CHECK(!c->metrics.auth_enabled);
    CHECK_EQ_STR(c->health.probe_bind_address, ":8081");
    CHECK_EQ_STR(c->health.readiness_endpoint_name, "readyz");
    CHECK_EQ_STR(c->health.liveness_endpoint_name, "healthz");
    CHECK_EQ_INT(c->group_kind_concurrency.len, 0);
    CHECK(c->cert_management.enable);
    CHECK_EQ_STR(c->cert_management.webhook_service_name, "kubeflow-trainer-controller-manager");
    CHECK_EQ_STR(c->cert_management.webhook_secret_name, "kubeflow-trainer-webhook-cert");
    CHECK(c->client_connection.qps == 50);
    CHECK_EQ_INT(c->client_connection.burst, 100);
    CHECK_EQ_INT(c->status_server.port, 10443);
    CHECK(c->status_server.qps == 5);
    CHECK_EQ_INT(c->status_server.burst, 10);
    CHECK_EQ_INT(c->feature_gates.len, 0);
    CHECK_EQ_STR(c->tls.min_version, "");
    CHECK_EQ_INT(c->tls.cipher_suites.len, 0);
    CHECK_EQ_INT(c->tls.next_protos.len, 1);
    CHECK_EQ_STR(c->tls.next_protos.items[0], "http/1.1");
    CHECK_EQ_INT(c->watch_namespaces.len, 0);
    CHECK_EQ_INT(c->warnings.len, 0);
}

static void test_defaults(void)
{
    struct kt_config c;
    struct kt_err err;

    kt_config_default(&c);
    check_defaults(&c);
    kt_config_release(&c);
    kt_config_release(&c); /* twice is fine */

    /* An empty file, a file with only the type, and one without it all mean defaults. */
    const char *texts[] = {"", HEAD, "webhook: {}\n", "---\n", HEAD "webhook:\nmetrics: null\n"};
    for (size_t i = 0; i < KT_ARRAY_SIZE(texts); i++) {
        CHECK_OK(load(texts[i], &c, &err));
        check_defaults(&c);
        kt_config_release(&c);
    }
    /* Empty strings take their defaults, as SetDefaults_Configuration does. */
    CHECK_OK(load(HEAD "metrics:\n  bindAddress: \"\"\nhealth:\n  healthProbeBindAddress: \"\"\n",
                  &c, &err));
    CHECK_EQ_STR(c.metrics.bind_address, ":8443");
    CHECK_EQ_STR(c.health.probe_bind_address, ":8081");
    kt_config_release(&c);
}

static const char SHIPPED[] = HEAD "health:\n"
                                   "  healthProbeBindAddress: :8081\n"
                                   "  readinessEndpointName: readyz\n"
                                   "  livenessEndpointName: healthz\n"
                                   "metrics:\n"
                                   "  bindAddress: :8443\n"
                                   "  secureServing: true\n"
                                   "webhook:\n"
                                   "  port: 9443\n"
                                   "  host: \"\"\n"
                                   "leaderElection:\n"
                                   "  leaderElect: true\n"
                                   "  resourceName: trainer.kubeflow.org\n"
                                   "  resourceNamespace: \"\"\n"
                                   "  leaseDuration: 15s\n"
                                   "  renewDeadline: 10s\n"
                                   "  retryPeriod: 2s\n"
                                   "controller:\n"
                                   "  groupKindConcurrency:\n"
                                   "    TrainJob.trainer.kubeflow.org: 5\n"
                                   "    TrainingRuntime.trainer.kubeflow.org: 1\n"
                                   "    ClusterTrainingRuntime.trainer.kubeflow.org: 1\n"
                                   "certManagement:\n"
                                   "  enable: true\n"
                                   "  webhookServiceName: kubeflow-trainer-controller-manager\n"
                                   "  webhookSecretName: kubeflow-trainer-webhook-cert\n"
                                   "clientConnection:\n"
                                   "  qps: 50\n"
                                   "  burst: 100\n"
                                   "statusServer:\n"
                                   "  port: 10443\n"
                                   "  qps: 5\n"
                                   "  burst: 10\n";

static void check_shipped(const struct kt_config *c)
{
    CHECK_EQ_INT(c->webhook.port, 9443);
    CHECK(c->leader_election.present);
    CHECK(c->leader_election.leader_elect);
    CHECK_EQ_STR(c->leader_election.resource_name, "trainer.kubeflow.org");
    CHECK_EQ_STR(c->leader_election.resource_namespace, "");
    CHECK_EQ_STR(c->leader_election.resource_lock, "");
    CHECK_EQ_INT(c->leader_election.lease_duration_ms, 15000);
    CHECK_EQ_INT(c->leader_election.renew_deadline_ms, 10000);
    CHECK_EQ_INT(c->leader_election.retry_period_ms, 2000);
    CHECK_EQ_INT(c->group_kind_concurrency.len, 3);
    if (c->group_kind_concurrency.len == 3) {
        CHECK_EQ_STR(c->group_kind_concurrency.items[0].group_kind,
                     "TrainJob.trainer.kubeflow.org");
        CHECK_EQ_INT(c->group_kind_concurrency.items[0].concurrency, 5);
        CHECK_EQ_INT(c->group_kind_concurrency.items[2].concurrency, 1);
    }
    CHECK_EQ_INT(c->status_server.port, 10443);
    CHECK(c->client_connection.qps == 50);
    CHECK_EQ_INT(c->warnings.len, 0);
}

static void test_shipped_file(void)
{
    struct kt_config c;
    struct kt_err err = {0};
    char dir[] = "/tmp/kt-config-XXXXXX";
    char path[64];

    KT_ASSERT(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/config.yaml", dir);
    FILE *f = fopen(path, "w");
    KT_ASSERT(f != NULL);
    fputs(SHIPPED, f);
    fclose(f);
    CHECK_OK(kt_config_load(path, &c, &err));
    check_shipped(&c);
    kt_config_release(&c);
    unlink(path);
    rmdir(dir);

    /* The same settings in JSON, and with the other status-server key some releases use. */
    CHECK_OK(load("{\"apiVersion\":\"config.trainer.kubeflow.org/v1alpha1\",\"kind\":"
                  "\"Configuration\",\"webhook\":{\"port\":8443,\"host\":\"0.0.0.0\"},"
                  "\"trainJobStatusServer\":{\"port\":11443},\"featureGates\":"
                  "{\"TrainJobStatus\":true},\"metrics\":{\"auth\":{\"enabled\":true}}}",
                  &c, &err));
    CHECK_EQ_INT(c.webhook.port, 8443);
    CHECK_EQ_STR(c.webhook.host, "0.0.0.0");
    CHECK_EQ_INT(c.status_server.port, 11443);
    CHECK(c.metrics.auth_enabled);
    CHECK(kt_config_gate(&c, "TrainJobStatus", false));
    CHECK(!kt_config_gate(&c, "Other", false));
    CHECK(kt_config_gate(&c, "Other", true));
    kt_config_release(&c);
}

static void test_durations(void)
{
    static const struct {
        const char *text;
        long long ms;
        const char *err;
    } cases[] = {
        {"1m30s", 90000, NULL},
        {"1.5s", 1500, NULL},
        {"2h", 7200000, NULL},
        {"500ms", 500, NULL},
        {"\"0\"", 0, NULL},
        {"1500000us", 1500, NULL},
        {"\"15\"", 0, "cfg.yaml:5: time: missing unit in duration \"15\""},
        {"15x", 0, "cfg.yaml:5: time: unknown unit \"x\" in duration \"15x\""},
        {"abc", 0, "cfg.yaml:5: time: invalid duration \"abc\""},
        {"\"\"", 0, "cfg.yaml:5: time: invalid duration \"\""},
        {"99999999999h", 0, "cfg.yaml:5: time: invalid duration \"99999999999h\""},
        {"15.", 0, NULL},
    };
    for (size_t i = 0; i < KT_ARRAY_SIZE(cases); i++) {
        struct kt_config c;
        struct kt_err err;
        char text[256];
        snprintf(text, sizeof(text),
                 HEAD "leaderElection:\n  leaderElect: true\n  leaseDuration: %s\n", cases[i].text);
        int rc = load(text, &c, &err);
        if (cases[i].err) {
            CHECK_EQ_INT(rc, -1);
            CHECK_EQ_STR(err.msg, cases[i].err);
        } else if (strcmp(cases[i].text, "15.") == 0) {
            CHECK_EQ_INT(rc, -1); /* missing unit */
        } else {
            CHECK_EQ_INT(rc, 0);
            CHECK_EQ_INT(c.leader_election.lease_duration_ms, cases[i].ms);
        }
        kt_config_release(&c);
    }
}

struct err_case {
    const char *text;
    const char *msg;
    enum kt_code code;
};

static const struct err_case ERR_CASES[] = {
    {HEAD "webhook:\n  prot: 1\n  port: 2\nfoo: 1\ncontroller:\n  x: 1\n",
     "cfg.yaml:4: strict decoding error: unknown field \"controller.x\", unknown field \"foo\", "
     "unknown field \"webhook.prot\"",
     KT_EPARSE},
    {HEAD "webhook:\n  port: 1\n  port: 2\n  x: 1\n",
     "cfg.yaml:5: strict decoding error: yaml: unmarshal errors:\n  line 5: key \"port\" already "
     "set in map, unknown field \"webhook.x\"",
     KT_EPARSE},
    {"apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Foo\n",
     "cfg.yaml:2: no kind \"Foo\" is registered for version "
     "\"config.trainer.kubeflow.org/v1alpha1\"",
     KT_EPARSE},
    {"apiVersion: foo/v1\nkind: Configuration\n",
     "cfg.yaml:2: no kind \"Configuration\" is registered for version \"foo/v1\"", KT_EPARSE},
    {"apiVersion: v1alpha1\n",
     "cfg.yaml:1: no kind \"Configuration\" is registered for version \"v1alpha1\"", KT_EPARSE},
    {"- a\n",
     "cfg.yaml:1: couldn't get version/kind; json parse error: json: cannot unmarshal array into "
     "Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind "
     "string \"json:\\\"kind,omitempty\\\"\" }",
     KT_EPARSE},
    {"kind: 5\n",
     "cfg.yaml:1: couldn't get version/kind; json parse error: json: cannot unmarshal number into "
     "Go struct field .kind of type string",
     KT_EPARSE},
    {HEAD "webhook:\n  port: \"abc\"\n",
     "cfg.yaml:4: json: cannot unmarshal string into Go struct field "
     "ControllerWebhook.webhook.port "
     "of type int32",
     KT_EPARSE},
    {HEAD "webhook:\n  port: 99999999999\n",
     "cfg.yaml:4: json: cannot unmarshal number 99999999999 into Go struct field "
     "ControllerWebhook.webhook.port of type int32",
     KT_EPARSE},
    {HEAD "webhook:\n  port: 1.5\n",
     "cfg.yaml:4: json: cannot unmarshal number 1.5 into Go struct field "
     "ControllerWebhook.webhook.port of type int32",
     KT_EPARSE},
    {HEAD "webhook: 5\n",
     "cfg.yaml:3: json: cannot unmarshal number into Go struct field Configuration.webhook of "
     "type v1alpha1.ControllerWebhook",
     KT_EPARSE},
    {HEAD "controller:\n  groupKindConcurrency:\n    a: x\n",
     "cfg.yaml:5: json: cannot unmarshal string into Go struct field "
     "ControllerConfigurationSpec.controller.groupKindConcurrency of type int32",
     KT_EPARSE},
    {HEAD "leaderElection:\n  leaseDuration: 15\n",
     "cfg.yaml:4: json: cannot unmarshal number into Go struct field "
     "LeaderElectionConfiguration.leaderElection.leaseDuration of type string",
     KT_EPARSE},
    {HEAD "featureGates:\n  A: \"true\"\n",
     "cfg.yaml:4: json: cannot unmarshal string into Go struct field Configuration.featureGates "
     "of type bool",
     KT_EPARSE},
    {HEAD "clientConnection:\n  qps: \"1\"\n",
     "cfg.yaml:4: json: cannot unmarshal string into Go struct field "
     "ClientConnection.clientConnection.qps of type float32",
     KT_EPARSE},
    {HEAD "metrics:\n  secureServing: yes please\n",
     "cfg.yaml:4: json: cannot unmarshal string into Go struct field "
     "ControllerMetrics.metrics.secureServing of type bool",
     KT_EPARSE},
    {HEAD "tls:\n  nextProtos: h2\n",
     "cfg.yaml:4: json: cannot unmarshal string into Go struct field TLSOptions.tls.nextProtos of "
     "type []string",
     KT_EPARSE},
    {HEAD "webhook:\n  port: 70000\n",
     "cfg.yaml:4: invalid configuration: webhook.port: Invalid value: 70000: must be between 1 "
     "and 65535",
     KT_EINVAL},
    {HEAD "webhook:\n  port: 0\n",
     "cfg.yaml:4: invalid configuration: webhook.port: Invalid value: 0: must be between 1 and "
     "65535",
     KT_EINVAL},
    {HEAD "controller:\n  groupKindConcurrency:\n    TrainJob.trainer.kubeflow.org: 0\n",
     "cfg.yaml:5: invalid configuration: controller.groupKindConcurrency"
     "[TrainJob.trainer.kubeflow.org]: Invalid value: 0: must be greater than 0",
     KT_EINVAL},
    {HEAD "clientConnection:\n  qps: -1\n  burst: -2\n",
     "cfg.yaml:4: invalid configuration: [clientConnection.qps: Invalid value: -1: must be greater "
     "than or equal to 0, clientConnection.burst: Invalid value: -2: must be greater than or "
     "equal to 0]",
     KT_EINVAL},
    {HEAD "clientConnection:\n  qps: -0.5\n",
     "cfg.yaml:4: invalid configuration: clientConnection.qps: Invalid value: -0.5: must be "
     "greater than or equal to 0",
     KT_EINVAL},
    {HEAD "statusServer:\n  qps: -0.1\n",
     "cfg.yaml:4: invalid configuration: statusServer.qps: Invalid value: -0.1: must be "
     "greater than or equal to 0",
     KT_EINVAL},
    {HEAD "statusServer:\n  port: 65536\n  qps: -1\n  burst: -1\n",
     "cfg.yaml:4: invalid configuration: [statusServer.port: Invalid value: 65536: must be between "
     "1 and 65535, statusServer.qps: Invalid value: -1: must be greater than or equal to 0, "
     "statusServer.burst: Invalid value: -1: must be greater than or equal to 0]",
     KT_EINVAL},
    {HEAD "trainJobStatusServer:\n  port: -1\n",
     "cfg.yaml:4: invalid configuration: trainJobStatusServer.port: Invalid value: -1: must be "
     "between 1 and 65535",
     KT_EINVAL},
    {HEAD "webhook:\n  port: [\n", "cfg.yaml:5: ", KT_EPARSE},
};

static void test_errors(void)
{
    for (size_t i = 0; i < KT_ARRAY_SIZE(ERR_CASES); i++) {
        struct kt_config c;
        struct kt_err err;
        CHECK_EQ_INT(load(ERR_CASES[i].text, &c, &err), -1);
        CHECK_EQ_INT(err.code, ERR_CASES[i].code);
        if (strcmp(ERR_CASES[i].msg, "cfg.yaml:5: ") == 0) {
            CHECK_CONTAINS(err.msg, ERR_CASES[i].msg); /* the YAML reader's own text follows */
        } else {
            CHECK_EQ_STR(err.msg, ERR_CASES[i].msg);
        }
        kt_config_release(&c);
    }
}

static void test_tls_warnings(void)
{
    struct kt_config c;
    struct kt_err err;

    CHECK_OK(load(HEAD "tls:\n  minVersion: \"1.4\"\n  cipherSuites:\n"
                       "  - TLS_AES_128_GCM_SHA256\n  - TLS_NOPE\n  nextProtos: [h2, http/1.1]\n",
                  &c, &err));
    CHECK_EQ_STR(c.tls.min_version, "");
    CHECK_EQ_INT(c.tls.cipher_suites.len, 1);
    CHECK_EQ_STR(c.tls.cipher_suites.items[0], "TLS_AES_128_GCM_SHA256");
    CHECK_EQ_INT(c.tls.next_protos.len, 2);
    CHECK_EQ_STR(c.tls.next_protos.items[0], "h2");
    CHECK_EQ_INT(c.warnings.len, 2);
    if (c.warnings.len == 2) {
        CHECK_EQ_STR(c.warnings.items[0],
                     "cfg.yaml:4: tls.minVersion: unknown TLS version, using the default: \"1.4\"");
        CHECK_EQ_STR(c.warnings.items[1],
                     "cfg.yaml:7: tls.cipherSuites: unknown cipher suite, ignored: \"TLS_NOPE\"");
    }
    kt_config_release(&c);

    CHECK_OK(load(HEAD "tls:\n  minVersion: \"1.3\"\n  nextProtos: []\n", &c, &err));
    CHECK_EQ_STR(c.tls.min_version, "1.3");
    CHECK_EQ_INT(c.tls.next_protos.len, 1);
    CHECK_EQ_INT(c.warnings.len, 0);
    kt_config_release(&c);
}

static void test_missing_file(void)
{
    struct kt_config c;
    struct kt_err err = {0};

    CHECK_EQ_INT(kt_config_load("/nonexistent/kt/config.yaml", &c, &err), -1);
    CHECK_EQ_INT(err.code, KT_EIO);
    CHECK_CONTAINS(err.msg, "/nonexistent/kt/config.yaml");
    check_defaults(&c);
    kt_config_release(&c);
}

/* --feature-gates over the file's featureGates (docs/internals/upstream.md#manager-process). */
static void test_feature_gates(void)
{
    struct kt_config c;
    struct kt_err err = {0};
    kt_config_default(&c);
    CHECK(!kt_config_gate(&c, KT_GATE_TRAINJOB_STATUS, false)); /* off by default */
    CHECK_OK(kt_config_set_gates(&c, "TrainJobStatus=true", &err));
    CHECK(kt_config_gate(&c, KT_GATE_TRAINJOB_STATUS, false));
    CHECK_OK(kt_config_set_gates(&c, "TrainJobStatus=False", &err));
    CHECK(!kt_config_gate(&c, KT_GATE_TRAINJOB_STATUS, true));
    CHECK_EQ_INT((int)c.feature_gates.len, 1);
    CHECK_OK(kt_config_set_gates(&c, "", &err));
    CHECK(kt_config_set_gates(&c, "Nope=true", &err) != 0);
    CHECK_EQ_STR(err.msg, "unrecognized feature gate: Nope");
    CHECK(kt_config_set_gates(&c, "TrainJobStatus=yes", &err) != 0);
    CHECK_EQ_STR(err.msg, "invalid value of TrainJobStatus=yes, err: must be true or false");
    CHECK(kt_config_set_gates(&c, "TrainJobStatus", &err) != 0);
    CHECK(!kt_config_gate(&c, KT_GATE_TRAINJOB_STATUS, true)); /* unchanged by the failures */
    kt_config_release(&c);
    /* the file's featureGates, then the flag */
    static const char file[] = "apiVersion: config.trainer.kubeflow.org/v1alpha1\n"
                               "kind: Configuration\nfeatureGates:\n  TrainJobStatus: true\n";
    CHECK_OK(kt_config_load_data("c.yaml", file, sizeof(file) - 1, &c, &err));
    CHECK(kt_config_gate(&c, KT_GATE_TRAINJOB_STATUS, false));
    CHECK_OK(kt_config_set_gates(&c, "TrainJobStatus=false", &err));
    CHECK(!kt_config_gate(&c, KT_GATE_TRAINJOB_STATUS, true));
    kt_config_release(&c);
}

/* watchNamespaces (kt's own field): RFC 1123 labels, each once, [] = all namespaces. */
static void test_watch_namespaces(void)
{
    static const char *const bad[][2] = {
        {HEAD "watchNamespaces:\n  - a\n  - Team_B\n",
         "cfg.yaml:3: invalid configuration: watchNamespaces[1]: Invalid value: \"Team_B\": "
         "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
         "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
         "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"},
        {HEAD "watchNamespaces: [a, b, a]\n",
         "cfg.yaml:3: invalid configuration: watchNamespaces[2]: Invalid value: \"a\": "
         "duplicate namespace"},
        {HEAD "watchNamespaces: a\n",
         "cfg.yaml:3: json: cannot unmarshal string into Go struct field "
         "Configuration.watchNamespaces of type []string"},
        {HEAD "watchNamespaces: [\"\"]\n", "watchNamespaces[0]: Invalid value: \"\""},
        {HEAD "watchNamespaces: [-a]\n", "watchNamespaces[0]: Invalid value: \"-a\""},
        {HEAD "watchNamespaces: [a-]\n", "watchNamespaces[0]: Invalid value: \"a-\""},
        {HEAD "watchNamespaces: [a.b]\n", "watchNamespaces[0]: Invalid value: \"a.b\""},
        {HEAD
         "watchNamespaces: [aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n",
         "Invalid value: \"aaaa"}, /* 64 bytes */
    };
    struct kt_config c;
    struct kt_err err;
    for (size_t i = 0; i < KT_ARRAY_SIZE(bad); i++) {
        CHECK_EQ_INT(load(bad[i][0], &c, &err), -1);
        CHECK_CONTAINS(err.msg, bad[i][1]);
        kt_config_release(&c);
    }
    CHECK_OK(load(HEAD "watchNamespaces:\n  - team-a\n  - 0b\n  - "
                       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
                  &c, &err));
    CHECK_EQ_INT(c.watch_namespaces.len, 3);
    CHECK_EQ_STR(c.watch_namespaces.items[0], "team-a");
    CHECK_EQ_STR(c.watch_namespaces.items[1], "0b");
    kt_config_release(&c);
    CHECK_OK(load(HEAD "watchNamespaces: []\n", &c, &err));
    CHECK_EQ_INT(c.watch_namespaces.len, 0);
    kt_config_release(&c);
    /* the check --namespaces uses */
    struct kt_strv v;
    struct kt_ferrs fe;
    kt_strv_init(&v);
    kt_ferrs_init(&fe);
    CHECK_EQ_INT(kt_config_check_namespaces(&v, &fe), 0);
    kt_strv_push(&v, "ok");
    kt_strv_push(&v, "");
    kt_strv_push(&v, "ok");
    CHECK_EQ_INT(kt_config_check_namespaces(&v, &fe), 2);
    char *msg = kt_ferrs_string(&fe);
    CHECK_CONTAINS(msg, "[watchNamespaces[1]: Invalid value: \"\": a lowercase RFC 1123");
    CHECK_CONTAINS(msg, "watchNamespaces[2]: Invalid value: \"ok\": duplicate namespace]");
    free(msg);
    kt_ferrs_release(&fe);
    kt_strv_release(&v);
}

int main(void)
{
    kt_mem_init();
    test_defaults();
    test_shipped_file();
    test_durations();
    test_feature_gates();
    test_errors();
    test_watch_namespaces();
    test_tls_warnings();
    test_missing_file();
    return test_report();
}

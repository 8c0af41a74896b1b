/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_flux.c - the Flux plugin
 * (docs/internals/upstream.md#plainml-jax-xgboost-flux): broker settings, the entrypoint command
 * rewrite, the flux-installer init container, volumes and mounts, the scripts ConfigMap and the
 * deterministic CURVE Secret, and its validation. Matches upstream
 * `pkg/runtime/framework/plugins/flux`. The two scripts are our own text (comments, layout)
 * running upstream v2.3.0's commands in its order with its output (tests/parity/tier.sh runs
 * both and compares); docs/compatibility.md lists what is left of the difference. */
#include "common/plugins/plugins.h"

#include <stdlib.h>
#include <string.h>

#include "common/base/buf.h"
#include "common/crypto/crypto.h"
#include "common/base/json.h"
#include "common/base/mem.h"

#define INSTALLER "flux-installer"
#define CM_SUFFIX "-flux-entrypoint"
#define CURVE_SUFFIX "-flux-curve"
#define CURVE_VOLUME "flux-curve"
#define INSTALL_VOLUME "flux-install"
#define SPACK_VOLUME "spack-install"
#define SHM_VOLUME "shared-memory"
#define CONFIG_DIR "/etc/flux-config"
#define MODE_0755 493
#define MODE_0400 256
#define SCRIPT_MAX (1u << 20)

static const char *const flux_watches[] = {"v1/ConfigMap", "v1/Secret", NULL};

enum { S_VIEW_IMAGE, S_NETWORK_DEVICE, S_QUEUE_POLICY, S_N };
static const char *const setting_names[S_N] = {"FLUX_VIEW_IMAGE", "FLUX_NETWORK_DEVICE",
                                               "FLUX_QUEUE_POLICY"};
static const char *const setting_defaults[S_N] = {
    "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy", "eth0", "fcfs"};

/* Settings borrow their strings from the runtime/TrainJob objects or the defaults. */
struct settings {
    const char *v[S_N];
};

static bool is_flux(const struct kt_runtime *rt)
{
    return rt->ml.present && rt->ml.kind == KT_POLICY_FLUX;
}

static void apply_envs(struct settings *s, const json_t *env, bool need_value)
{
    size_t i;
    json_t *e;
    json_array_foreach(env, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        const char *val = json_string_value(json_object_get(e, "value"));
        if (!n || (need_value && !val)) {
            continue;
        }
        for (int k = 0; k < S_N; k++) {
            if (strcmp(n, setting_names[k]) == 0) {
                s->v[k] = val ? val : "";
            }
        }
    }
}

/* Defaults, then the runtime trainer `node` container env, then the TrainJob env. */
static struct settings settings_of(const struct kt_info *info, const struct kt_trainjob *tj)
{
    struct settings s;
    for (int k = 0; k < S_N; k++) {
        s.v[k] = setting_defaults[k];
    }
    struct kt_podset *ps = kt_info_podset_by_ancestor(info, KT_ANCESTOR_TRAINER);
    json_t *c = ps ? kt_podset_container(ps, KT_NODE) : NULL;
    apply_envs(&s, json_object_get(c, "env"), true);
    apply_envs(&s, tj->trainer.env, false);
    return s;
}

/* The wrapped command: TrainJob command (else the runtime's) and args, space-joined and
 * trimmed. Caller owns the result; free with free(). */
static char *original_command(const struct kt_info *info, const struct kt_trainjob *tj)
{
    struct kt_podset *ps = kt_info_podset_by_ancestor(info, KT_ANCESTOR_TRAINER);
    json_t *c = ps ? kt_podset_container(ps, KT_NODE) : NULL;
    const json_t *cmd = tj->trainer.command ? tj->trainer.command : json_object_get(c, "command");
    const json_t *parts[2] = {cmd, tj->trainer.args};
    struct kt_buf b;
    bool first = true;
    kt_buf_init(&b, SCRIPT_MAX);
    for (int p = 0; p < 2; p++) {
        size_t i;
        json_t *s;
        json_array_foreach(parts[p], i, s)
        {
            const char *t = json_string_value(s);
            if (kt_buf_printf(&b, NULL, "%s%s", first ? "" : " ", t ? t : "") != 0) {
                return kt_xstrdup("");
            }
            first = false;
        }
    }
    char *out = kt_buf_take(&b, NULL);
    char *start = out;
    while (*start == ' ' || *start == '\t' || *start == '\n' || *start == '\r') {
        start++;
    }
    size_t n = strlen(start);
    while (n > 0 && strchr(" \t\n\r", start[n - 1])) {
        n--;
    }
    char *trimmed = kt_xstrndup(start, n);
    free(out);
    return trimmed;
}

static json_t *mount(const char *name, const char *path, bool ro)
{
    json_t *m = json_pack("{s:s, s:s}", "name", name, "mountPath", path);
    if (ro) {
        json_object_set_new(m, "readOnly", json_true());
    }
    return m;
}

static void add_volumes(json_t *pod, const char *cm, const char *curve)
{
    json_t *vols = json_array();
    json_array_append_new(vols, json_pack("{s:s, s:{}}", "name", SPACK_VOLUME, "emptyDir"));
    json_array_append_new(vols, json_pack("{s:s, s:{}}", "name", INSTALL_VOLUME, "emptyDir"));
    json_array_append_new(vols, json_pack("{s:s, s:{s:s, s:i}}", "name", cm, "configMap", "name",
                                          cm, "defaultMode", MODE_0755));
    json_array_append_new(
        vols, json_pack("{s:s, s:{s:s}}", "name", SHM_VOLUME, "emptyDir", "medium", "Memory"));
    json_array_append_new(vols, json_pack("{s:s, s:{s:s, s:i}}", "name", CURVE_VOLUME, "secret",
                                          "secretName", curve, "defaultMode", MODE_0400));
    size_t i;
    json_t *v;
    json_array_foreach(vols, i, v)
    {
        kt_upsert_volume(pod, v);
    }
    json_decref(vols);
}

static void add_installer(json_t *pod, const char *image, const char *cm)
{
    json_t *init = kt_json_arr_ensure(pod, "initContainers");
    json_t *c = json_pack("{s:s, s:s, s:[s, s], s:[o, o]}", "name", INSTALLER, "image", image,
                          "command", "/bin/bash", CONFIG_DIR "/init.sh", "volumeMounts",
                          mount(INSTALL_VOLUME, "/mnt/flux", false), mount(cm, CONFIG_DIR, true));
    if (init) {
        json_array_append_new(init, c);
    } else {
        json_decref(c);
    }
}

static void add_mounts(json_t *c, const char *cm)
{
    json_t *ms[] = {mount(INSTALL_VOLUME, "/mnt/flux", false),
                    mount(SPACK_VOLUME, "/opt/software", false), mount(cm, CONFIG_DIR, true),
                    mount(CURVE_VOLUME, "/curve", true), mount(SHM_VOLUME, "/dev/shm", true)};
    for (size_t i = 0; i < KT_ARRAY_SIZE(ms); i++) {
        kt_upsert_mount(c, ms[i]);
        json_decref(ms[i]);
    }
}

/* Upstream dereferences spec.trainer and spec.trainer.numNodes (a Go panic when unset);
 * we fail the build instead. */
static int require_trainer(const struct kt_trainjob *tj, struct kt_err *err)
{
    if (!tj->trainer.present || !tj->trainer.num_nodes.has) {
        return kt_err_set(err, KT_EINVAL,
                          "flux: spec.trainer.numNodes must be set for a Flux runtime");
    }
    return 0;
}

static int flux_enforce(struct kt_build *b, struct kt_err *err)
{
    const struct kt_trainjob *tj = b->tj;
    if (!is_flux(b->rt)) {
        return 0;
    }
    if (require_trainer(tj, err) != 0) {
        return -1;
    }
    struct settings s = settings_of(&b->info, tj);
    char *orig = original_command(&b->info, tj);
    json_decref(b->trainer_command);
    b->trainer_command = json_pack("[s, s, s]", "/bin/bash", CONFIG_DIR "/entrypoint.sh", orig);
    json_decref(b->trainer_args);
    b->trainer_args = NULL;
    free(orig);
    char *cm = kt_xasprintf("%s%s", tj->name, CM_SUFFIX);
    char *curve = kt_xasprintf("%s%s", tj->name, CURVE_SUFFIX);
    for (size_t i = 0; i < b->info.n_podsets; i++) {
        struct kt_podset *ps = &b->info.podsets[i];
        if (strcmp(ps->name, KT_NODE) != 0) {
            continue;
        }
        add_volumes(ps->pod_spec, cm, curve);
        add_installer(ps->pod_spec, s.v[S_VIEW_IMAGE], cm);
        size_t k;
        json_t *c;
        json_array_foreach(json_object_get(ps->pod_spec, "containers"), k, c)
        {
            if (strcmp(kt_json_str(c, "name", ""), KT_NODE) == 0) {
                add_mounts(c, cm);
            }
        }
    }
    free(cm);
    free(curve);
    return 0;
}
/* Script templates (printf formats), the entrypoint in two parts (C99's string length
 * limit). entrypoint_head: R spec; entrypoint_tail: main host, flux run flags. */
static const char entrypoint_head_fmt[] =
    "#!/bin/bash\n"
    "# Flux entrypoint of the trainer node container, written by the Kubeflow Trainer control\n"
    "# plane (kt). Its argument is the wrapped training command. Same commands, in the same\n"
    "# order, with the same output as upstream v2.3.0's entrypoint.sh (README, Compatibility).\n"
    "\n"
    "fluxuser=$(whoami)\n"
    "fluxuid=$(id -u $fluxuser)\n"
    "\n"
    "# The flux-installer init container copied the view to this shared volume.\n"
    "viewbase=\"/mnt/flux\"\n"
    "viewroot=${viewbase}/view\n"
    "configroot=${viewbase}/config\n"
    "viewbin=\"${viewroot}/bin\"\n"
    "# Appended so that software of the image (such as Python) keeps precedence.\n"
    "export PATH=$PATH:${viewbin}\n"
    "\n"
    "# Restore the spack software tree the view links to.\n"
    "cp -R ${viewbase}/software/* /opt/software/\n"
    "\n"
    "# Flux uses the Python of its own view (the shell expands the -path glob, as upstream's).\n"
    "foundroot=$(find $viewroot -maxdepth 2 -type d -path $viewroot/lib/python3*) > /dev/null "
    "2>&1\n"
    "pythonversion=$(basename ${foundroot})\n"
    "pythonversion=${viewroot}/bin/${pythonversion}\n"
    "echo \"Python version: $pythonversion\"\n"
    "echo \"Python root: $foundroot\"\n"
    "if [[ -f \"${pythonversion}\" ]]; then\n"
    "  rm -rf $viewroot/bin/python3\n"
    "  rm -rf $viewroot/bin/python\n"
    "  ln -s ${pythonversion} $viewroot/lib/python || true\n"
    "  ln -s ${pythonversion} $viewroot/lib/python3 || true\n"
    "fi\n"
    "export PYTHONPATH=${PYTHONPATH:-\"\"}:${foundroot}/site-packages\n"
    "export FLUX_RC_EXTRA=$viewroot/etc/flux/rc1.d\n"
    "\n"
    "# Helpers for interactive sessions: switch to fluxion, and the view environment\n"
    "# (expanded now).\n"
    "cat <<EOT >> /tmp/load-fluxion.sh\n"
    "flux module remove sched-simple\n"
    "flux module load sched-fluxion-resource\n"
    "flux module load sched-fluxion-qmanager\n"
    "EOT\n"
    "mv /tmp/load-fluxion.sh ${viewbase}/load-fluxion.sh\n"
    "cat <<EOT >> /tmp/flux-view.sh\n"
    "#!/bin/bash\n"
    "export PATH=$PATH\n"
    "export PYTHONPATH=$PYTHONPATH\n"
    "export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-\"\"}:$viewroot/lib\n"
    "export fluxsocket=local://${configroot}/run/flux/local\n"
    "EOT\n"
    "mv /tmp/flux-view.sh ${viewbase}/flux-view.sh\n"
    "\n"
    "cfg=\"${configroot}/etc/flux/config\"\n"
    "command=\"$@\"\n"
    "\n"
    "# The CURVE certificate (from the <trainjob>-flux-curve Secret), for the flux user only.\n"
    "curvepath=/mnt/flux/config/etc/curve/curve.cert\n"
    "cp /curve/curve.cert ${curvepath}\n"
    "chmod o-r ${curvepath}\n"
    "chmod g-r ${curvepath}\n"
    "chown -R ${fluxuid} ${curvepath}\n"
    "\n"
    "# Resource description (R) of every host of the hostlist.\n"
    "hosts=$(cat ${configroot}/etc/flux/system/hostlist)\n"
    "flux R encode --hosts=${hosts} %s > /tmp/R\n"
    "mv /tmp/R ${configroot}/etc/flux/system/R\n"
    "\n";
static const char entrypoint_tail_fmt[] =
    "export STATE_DIR=${configroot}/var/lib/flux\n"
    "export FLUX_OUTPUT_DIR=/tmp/fluxout\n"
    "mkdir -p ${STATE_DIR} ${FLUX_OUTPUT_DIR}\n"
    "\n"
    "# The lead broker runs on the first pod of the node job. The spacing inside brokerOptions\n"
    "# and flags shows in the log lines.\n"
    "mainHost=\"%s\"\n"
    "mkdir -p ${configroot}/etc/flux/system/cron.d\n"
    "brokerOptions=\"-Scron.directory=${configroot}/etc/flux/system/cron.d \\\n"
    "  -Stbon.fanout=256 \\\n"
    "  -Srundir=${configroot}/run/flux  \\\n"
    "  -Sstatedir=${STATE_DIR} -Slocal-uri=local://$configroot/run/flux/local \\\n"
    "  -Slog-stderr-level=0  \\\n"
    "  -Slog-stderr-mode=local\"\n"
    "\n"
    "if [ \"$(hostname)\" = \"${mainHost}\" ]; then\n"
    "  echo \"Command provided is: ${command}\"\n"
    "  if [ -z \"${command}\" ]; then\n"
    "    # No command: an interactive cluster.\n"
    "    echo \"\xf0\x9f\x8c\x80 flux broker --config-path ${cfg} ${brokerOptions}\"\n"
    "    flux broker --config-path ${cfg} ${brokerOptions}\n"
    "  else\n"
    "    flags=\"%s  \"\n"
    "    echo \"Flags for flux are ${flags}\"\n"
    "    # (upstream's log line names \"flux submit\"; it runs \"flux run\")\n"
    "    echo \"\xf0\x9f\x8c\x80 flux start  -o --config ${cfg} ${brokerOptions} flux submit "
    "${flags} --quiet --watch ${command}\"\n"
    "    flux start -o --config ${cfg} ${brokerOptions} flux run ${flags} ${command}\n"
    "  fi\n"
    "else\n"
    "  # Followers join the lead broker, retrying until they exit cleanly.\n"
    "  echo \"\xf0\x9f\x8c\x80 flux start  -o --config ${configroot}/etc/flux/config "
    "${brokerOptions}\"\n"
    "  while true; do\n"
    "    flux start -o --config ${configroot}/etc/flux/config ${brokerOptions}\n"
    "    retval=$?\n"
    "    if [[ \"${retval}\" -eq 0 ]]; then\n"
    "      echo \"The follower worker exited cleanly. Goodbye!\"\n"
    "      break\n"
    "    fi\n"
    "    echo \"Return value for follower worker is ${retval}\"\n"
    "    echo \"\xf0\x9f\x98\xaa Sleeping 15s to try again...\"\n"
    "    sleep 15\n"
    "  done\n"
    "fi\n"
    "\n"
    "# Completion marker; its status is the script's (0 whatever flux returned, as upstream's).\n"
    "touch $viewbase/flux-operator-complete.txt\n";

/* init: flux root, main host, hostlist, broker.toml. */
static const char init_fmt[] =
    "#!/bin/bash\n"
    "# Flux setup of the flux-installer init container, written by the Kubeflow Trainer control\n"
    "# plane (kt): hostlist, broker configuration, and a copy of the flux view. Same commands, in\n"
    "# the same order, with the same output as upstream v2.3.0's init.sh (README, Compatibility).\n"
    "fluxroot=%s\n"
    "mainHost=%s\n"
    "\n"
    "# Configuration goes to the shared volume (/opt/view may be read-only).\n"
    "installRoot=/mnt/flux/config\n"
    "echo \"Hello I am hostname $(hostname) running setup.\"\n"
    "echo \"Flux install root: ${fluxroot}\"\n"
    "export fluxroot\n"
    "export PATH=/opt/view/bin:$PATH\n"
    "mkdir -p $fluxroot/bin\n"
    "mkdir -p $installRoot/etc/flux/system/cron.d\n"
    "mkdir -p $installRoot/var/lib/flux\n"
    "mkdir -p $installRoot/etc/flux/system\n"
    "\n"
    "# Every host of the node job, for flux R encode in the main container.\n"
    "hosts=\"%s\"\n"
    "echo \"${hosts}\" > ${installRoot}/etc/flux/system/hostlist\n"
    "\n"
    "# broker.toml, appended and shell-expanded as upstream's.\n"
    "mkdir -p ${installRoot}/etc/flux/config\n"
    "cat <<EOT >> ${installRoot}/etc/flux/config/broker.toml\n"
    "%s\n"
    "EOT\n"
    "\n"
    "echo\n"
    "echo \"\xf0\x9f\x90\xb8 Broker Configuration\"\n"
    "cat ${installRoot}/etc/flux/config/broker.toml\n"
    "\n"
    "# Run and state directories and the certificate location.\n"
    "mkdir -p ${installRoot}/run/flux ${installRoot}/etc/curve\n"
    "\n"
    "# Copy the finished spack view (/opt/view links into /opt/views/._view) and the software\n"
    "# it links to onto the shared volume.\n"
    "viewroot=/mnt/flux\n"
    "mkdir -p $viewroot/view\n"
    "echo \"Moving content from /opt/view to be in shared volume at $viewroot\"\n"
    "view=$(ls /opt/views/._view/)\n"
    "view=\"/opt/views/._view/${view}\"\n"
    "cp -R ${view}/* $viewroot/view\n"
    "cp -R /opt/software $viewroot/\n"
    "\n"
    "# Marks the copy as done.\n"
    "touch $viewroot/flux-operator-done.txt\n"
    "echo \"Application is done.\"\n";

/* broker.toml: bind, connect, hosts, queue policy. */
static const char broker_fmt[] = "[access]\n"
                                 "allow-guest-user = true\n"
                                 "allow-root-owner = true\n"
                                 "\n"
                                 "[resource]\n"
                                 "path = \"/mnt/flux/config/etc/flux/system/R\"\n"
                                 "\n"
                                 "[bootstrap]\n"
                                 "curve_cert = \"/mnt/flux/config/etc/curve/curve.cert\"\n"
                                 "default_port = 8050\n"
                                 "default_bind = \"%s\"\n"
                                 "default_connect = \"%s\"\n"
                                 "hosts = [\n"
                                 "{ host=\"%s\"},\n"
                                 "]\n"
                                 "\n"
                                 "[archive]\n"
                                 "dbpath = \"/mnt/flux/config/var/lib/flux/job-archive.sqlite\"\n"
                                 "period = \"1m\"\n"
                                 "busytimeout = \"50s\"\n"
                                 "\n"
                                 "[sched-fluxion-qmanager]\n"
                                 "queue-policy = \"%s\"\n";

/* "start" for one, "start-end" otherwise (upstream's generateRange, also for 0). */
static char *range(int64_t size, int64_t start)
{
    if (size == 1) {
        return kt_xasprintf("%lld", (long long)start);
    }
    return kt_xasprintf("%lld-%lld", (long long)start, (long long)(start + size - 1));
}

static char *entrypoint_script(const struct kt_build *b)
{
    const struct kt_trainjob *tj = b->tj;
    int64_t nodes = tj->trainer.num_nodes.v;
    int64_t tasks = tj->trainer.num_proc_per_node.has ? tj->trainer.num_proc_per_node.v
                                                      : b->rt->ml.flux_num_proc_per_node;
    int64_t gpus = kt_build_gpus(b);
    char *cores = range(tasks, 0);
    char *rspec = kt_xasprintf("--cores=%s", cores);
    char *flags = kt_xasprintf("-N %lld -n %lld", (long long)nodes, (long long)(tasks * nodes));
    if (gpus > 0) {
        char *g = range(gpus, 0);
        char *r2 = kt_xasprintf("%s --gpu=%s", rspec, g);
        char *f2 = kt_xasprintf("%s -g %lld", flags, (long long)gpus);
        free(g);
        free(rspec);
        free(flags);
        rspec = r2;
        flags = f2;
    }
    char *main_host = kt_xasprintf("%s-%s-0-0", tj->name, KT_NODE);
    char *head = kt_xasprintf(entrypoint_head_fmt, rspec);
    char *tail = kt_xasprintf(entrypoint_tail_fmt, main_host, flags);
    char *out = kt_xasprintf("%s%s", head, tail);
    free(head);
    free(tail);
    free(cores);
    free(rspec);
    free(flags);
    free(main_host);
    return out;
}

static char *init_script(const struct kt_build *b, const struct settings *s)
{
    const struct kt_trainjob *tj = b->tj;
    char *r = range(tj->trainer.num_nodes.v, 0);
    char *hosts = kt_xasprintf("%s-%s-0-[%s]", tj->name, KT_NODE, r);
    char *bind = kt_xasprintf("tcp://%s:%%p", s->v[S_NETWORK_DEVICE]);
    char *connect = kt_xasprintf("tcp://%%h.%s.%s.svc.cluster.local:%%p", tj->name, tj->namespace_);
    char *broker = kt_xasprintf(broker_fmt, bind, connect, hosts, s->v[S_QUEUE_POLICY]);
    char *main_host = kt_xasprintf("%s-0", tj->name);
    char *out = kt_xasprintf(init_fmt, "/opt/view", main_host, hosts, broker);
    free(r);
    free(hosts);
    free(bind);
    free(connect);
    free(broker);
    free(main_host);
    return out;
}

static json_t *meta(const struct kt_trainjob *tj, const char *suffix)
{
    char *name = kt_xasprintf("%s%s", tj->name, suffix);
    json_t *m = json_pack("{s:s, s:s}", "name", name, "namespace", tj->namespace_);
    free(name);
    return m;
}

static int flux_build(struct kt_build *b, json_t *objects, struct kt_err *err)
{
    const struct kt_trainjob *tj = b->tj;
    if (!is_flux(b->rt)) {
        return 0;
    }
    if (require_trainer(tj, err) != 0) {
        return -1;
    }
    struct settings s = settings_of(&b->info, tj);
    char *entry = entrypoint_script(b);
    char *init = init_script(b, &s);
    json_array_append_new(objects, json_pack("{s:s, s:s, s:o, s:{s:s, s:s}}", "apiVersion", "v1",
                                             "kind", "ConfigMap", "metadata", meta(tj, CM_SUFFIX),
                                             "data", "entrypoint.sh", entry, "init.sh", init));
    free(entry);
    free(init);
    char *cert = kt_crypto_flux_curve_cert(tj->name, tj->uid);
    char *enc = kt_crypto_base64_encode(cert, strlen(cert));
    json_array_append_new(objects, json_pack("{s:s, s:s, s:o, s:{s:s}}", "apiVersion", "v1", "kind",
                                             "Secret", "metadata", meta(tj, CURVE_SUFFIX), "data",
                                             "curve.cert", enc));
    free(cert);
    free(enc);
    return 0;
}

static void flux_validate(const struct kt_validation *v, struct kt_ferrs *errs,
                          struct kt_strv *warnings)
{
    (void)warnings;
    if (!is_flux(v->rt)) {
        return;
    }
    /* At least one process per node, from the TrainJob or else the runtime's flux policy. */
    int64_t npp = v->tj->trainer.num_proc_per_node.has ? v->tj->trainer.num_proc_per_node.v
                                                       : v->rt->ml.flux_num_proc_per_node;
    if (npp < 1) {
        kt_ferrs_add_int(errs, KT_FERR_INVALID, "spec.trainer.numProcPerNode", npp,
                         "must be greater than or equal to 1 for Flux TrainJob");
    }
    for (size_t i = 0; i < v->info->n_podsets; i++) {
        const struct kt_podset *ps = &v->info->podsets[i];
        size_t k;
        json_t *c;
        if (strcmp(ps->name, KT_NODE) != 0) {
            continue;
        }
        json_array_foreach(json_object_get(ps->pod_spec, "initContainers"), k, c)
        {
            if (strcmp(kt_json_str(c, "name", ""), INSTALLER) == 0) {
                kt_ferrs_add_str(errs, KT_FERR_INVALID, "spec.trainer.initContainers", INSTALLER,
                                 "InitContainer 'flux-installer' is reserved");
            }
        }
    }
}

const struct kt_plugin kt_plugin_flux = {
    .abi = KT_PLUGIN_ABI,
    .size = sizeof(struct kt_plugin),
    .name = "Flux",
    .watches = flux_watches,
    .validate = flux_validate,
    .enforce_ml_policy = flux_enforce,
    .build = flux_build,
};

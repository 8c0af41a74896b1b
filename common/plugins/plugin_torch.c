/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_torch.c - the Torch plugin (docs/internals/upstream.md#torch):
 * numProcPerNode resolution, PET_* envs and port, envInjection, torchtune command and recipes, and
 * its validation. Matches upstream `pkg/runtime/framework/plugins/torch` (torch.go, torchtune.go).
 */
#include "common/plugins/plugins.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base/json.h"
#include "common/base/mem.h"

#define PET_NNODES "PET_NNODES"
#define PET_NPROC "PET_NPROC_PER_NODE"
#define PET_RANK "PET_NODE_RANK"
#define PET_ADDR "PET_MASTER_ADDR"
#define PET_PORT "PET_MASTER_PORT"

static const char *const tune_run[] = {"tune", "run"};
static const char *const immutable_cfgs[] = {
    "output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file"};
static const char *const supported_models[] = {"llama3_2/1B", "llama3_2/3B", "llama3_3/70B",
                                               "qwen2_5/1.5B"};

/* numProcPerNode: an integer, or "auto" (auto == true). */
struct npp {
    bool is_auto;
    int64_t n;
};

static bool is_torch(const struct kt_runtime *rt)
{
    return rt->ml.present && rt->ml.kind == KT_POLICY_TORCH;
}

static bool is_torchtune(const json_t *command)
{
    return kt_json_strings_eq(command, tune_run, 2);
}

static char *npp_str(struct npp v)
{
    return v.is_auto ? kt_xstrdup("auto") : kt_xasprintf("%lld", (long long)v.n);
}

/* Model name from the runtime name torchtune-<family>-<size>: "llama3_2/1B". Caller owns
 * the result; free with free(). "" when the name has another shape. */
static char *torchtune_model(const char *rt_name)
{
    const char *d1 = strchr(rt_name, '-');
    const char *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
    if (!d1 || !d2 || strchr(d2 + 1, '-')) {
        return kt_xstrdup("");
    }
    char *m = kt_xasprintf("%.*s/%s", (int)(d2 - d1 - 1), d1 + 1, d2 + 1);
    for (char *p = m; *p && *p != '/'; p++) {
        *p = *p == '.' ? '_' : *p;
    }
    for (char *p = strchr(m, '/'); p && *p; p++) {
        *p = (char)toupper((unsigned char)*p);
    }
    return m;
}

/* An arg "<prefix>key=value" whose key ends with suffix and value equals "true" (any case). */
static bool arg_true(const json_t *args, const char *suffix)
{
    size_t i;
    json_t *a;
    json_array_foreach(args, i, a)
    {
        const char *s = json_string_value(a);
        const char *eq = s ? strchr(s, '=') : NULL;
        size_t klen = eq ? (size_t)(eq - s) : 0, slen = strlen(suffix);
        if (eq && klen >= slen && strncmp(eq - slen, suffix, slen) == 0 &&
            strcasecmp(eq + 1, "true") == 0) {
            return true;
        }
    }
    return false;
}

static bool arg_contains(const json_t *args, const char *needle)
{
    size_t i;
    json_t *a;
    json_array_foreach(args, i, a)
    {
        const char *s = json_string_value(a);
        if (s && strstr(s, needle)) {
            return true;
        }
    }
    return false;
}

struct tune_choice {
    const char *recipe;
    const char *suffix;
    bool lora;
    bool qlora;
};

static struct tune_choice tune_select(int64_t nodes, struct npp npp, int64_t gpu,
                                      const json_t *args)
{
    struct tune_choice c = {0};
    c.qlora = arg_true(args, "model.quantize_base") && !arg_true(args, "model.use_dora");
    c.lora = arg_contains(args, "model.lora_attn_modules");
    bool single = nodes == 1 && ((!npp.is_auto && npp.n == 1) || gpu == 1);
    if (nodes > 1) {
        c.recipe = "full_finetune_distributed";
        c.suffix = "_full_multinode";
    } else if (single) {
        c.recipe =
            c.qlora || c.lora ? "lora_finetune_single_device" : "full_finetune_single_device";
        c.suffix = c.qlora  ? "_qlora_single_device"
                   : c.lora ? "_lora_single_device"
                            : "_full_single_device";
    } else {
        c.recipe = c.qlora || c.lora ? "lora_finetune_distributed" : "full_finetune_distributed";
        c.suffix = c.qlora ? "_qlora" : c.lora ? "_lora" : "_full";
    }
    return c;
}

static bool is_immutable_cfg(const char *arg, size_t *which)
{
    const char *eq = strchr(arg, '=');
    size_t klen = eq ? (size_t)(eq - arg) : strlen(arg);
    for (size_t i = 0; i < KT_ARRAY_SIZE(immutable_cfgs); i++) {
        if (strlen(immutable_cfgs[i]) == klen && strncmp(arg, immutable_cfgs[i], klen) == 0) {
            *which = i;
            return true;
        }
    }
    return false;
}

/* The torchtune command: tune run [--rdzv_endpoint] recipe --config config [runtime
 * overrides]. Steals nothing; returns a new array. */
static json_t *tune_command(struct kt_build *b, const struct kt_podset *ps, struct npp npp,
                            int64_t gpu)
{
    const struct kt_trainjob *tj = b->tj;
    json_t *cmd = kt_json_clone(b->trainer_command);
    struct tune_choice c = tune_select(ps->count, npp, gpu, b->trainer_args);
    if (ps->count > 1 || (!npp.is_auto && npp.n > 1) || (npp.is_auto && gpu > 1)) {
        char *ep =
            kt_xasprintf("--rdzv_endpoint=%s-node-0-0.%s:%d", tj->name, tj->name, KT_TRAINER_PORT);
        json_array_append_new(cmd, json_string(ep));
        free(ep);
    }
    char *model = torchtune_model(b->rt->name ? b->rt->name : "");
    char *config = kt_xasprintf("%s%s", model, c.suffix);
    json_array_append_new(cmd, json_string(c.recipe));
    json_array_append_new(cmd, json_string("--config"));
    json_array_append_new(cmd, json_string(config));
    free(model);
    free(config);
    json_t *node = kt_podset_container(ps, KT_NODE);
    size_t i, which;
    json_t *a;
    json_array_foreach(json_object_get(node, "command"), i, a)
    {
        const char *s = json_string_value(a);
        if (s && strchr(s, '=') && is_immutable_cfg(s, &which)) {
            json_array_append_new(cmd, json_string(s));
        }
    }
    return cmd;
}

static void add_pet_envs(json_t *c, const struct kt_trainjob *tj, int64_t count, struct npp npp,
                         bool master)
{
    char *nn = kt_xasprintf("%lld", (long long)count);
    char *np = npp_str(npp);
    json_t *e[5] = {kt_env_value(PET_NNODES, nn), kt_env_value(PET_NPROC, np),
                    kt_env_field_ref(PET_RANK, KT_COMPLETION_INDEX_PATH), NULL, NULL};
    if (master) {
        char *addr = kt_xasprintf("%s-node-0-0.%s", tj->name, tj->name);
        char *port = kt_xasprintf("%d", KT_TRAINER_PORT);
        e[3] = kt_env_value(PET_ADDR, addr);
        e[4] = kt_env_value(PET_PORT, port);
        free(addr);
        free(port);
    }
    for (int i = 0; i < 5; i++) {
        if (e[i]) {
            kt_upsert_env(c, e[i]);
            json_decref(e[i]);
        }
    }
    free(nn);
    free(np);
}

/* A container of the PodSet named job: regular containers first, then init containers. */
static json_t *target_container(const struct kt_info *info, const char *job, const char *name)
{
    struct kt_podset *ps = kt_info_podset_by_name(info, job);
    if (!ps) {
        return NULL;
    }
    json_t *c = kt_podset_container(ps, name);
    return c ? c : kt_podset_init_container(ps, name);
}

static json_t *env_targets(const struct kt_runtime *rt)
{
    json_t *ei = json_object_get(rt->ml.source, "envInjection");
    return json_is_object(ei) ? json_object_get(ei, "targets") : NULL;
}

static int inject_targets(struct kt_build *b, int64_t count, struct npp npp, struct kt_err *err)
{
    size_t i, j;
    json_t *t, *cn;
    json_array_foreach(env_targets(b->rt), i, t)
    {
        const char *job = json_string_value(json_object_get(t, "jobName"));
        json_array_foreach(json_object_get(t, "containerNames"), j, cn)
        {
            const char *name = json_string_value(cn);
            json_t *c = job && name ? target_container(&b->info, job, name) : NULL;
            if (!c) {
                return kt_err_set(err, KT_EINVAL,
                                  "envInjection target podSet \"%s\" container \"%s\" not found "
                                  "in runtime template",
                                  job ? job : "", name ? name : "");
            }
            add_pet_envs(c, b->tj, count, npp, true);
        }
    }
    return 0;
}

static int torch_enforce(struct kt_build *b, struct kt_err *err)
{
    const struct kt_trainjob *tj = b->tj;
    if (!is_torch(b->rt)) {
        return 0;
    }
    struct kt_podset *ps = kt_info_podset_by_ancestor(&b->info, KT_ANCESTOR_TRAINER);
    if (ps && tj->trainer.present && tj->trainer.num_nodes.has) {
        ps->count = tj->trainer.num_nodes.v;
    }
    struct npp npp = {.is_auto = true};
    if (tj->trainer.present && tj->trainer.num_proc_per_node.has) {
        npp.is_auto = false;
        npp.n = tj->trainer.num_proc_per_node.v;
    }
    const json_t *res = kt_info_resources_per_node(&b->info, tj);
    int64_t gpu = kt_resources_gpu_count(res);
    if (npp.is_auto && gpu == 0 && b->dra_devices > 0) {
        /* Devices by claim (gate DynamicResourceAllocation): their count, written out, since
         * torchrun's own "auto" sees only CUDA devices (docs/api.md#dynamic-resource-allocation).
         */
        gpu = b->dra_devices;
        npp.is_auto = false;
        npp.n = gpu;
    }
    if (npp.is_auto && gpu == 0) {
        int64_t cpu = kt_resources_cpu_count(res);
        npp.is_auto = false;
        npp.n = cpu > 1 ? cpu : 1;
    }
    int64_t count = ps ? ps->count : 1;
    json_t *c = ps && tj->trainer.present ? kt_podset_container(ps, KT_NODE) : NULL;
    if (c) {
        bool tune = is_torchtune(b->trainer_command);
        json_t *env = kt_env_convert(tj->trainer.env);
        kt_upsert_envs(c, env);
        json_decref(env);
        add_pet_envs(c, tj, count, npp, !tune);
        json_t *port = json_pack("{s:i}", "containerPort", KT_TRAINER_PORT);
        kt_upsert_port(c, port);
        json_decref(port);
        if (tune) {
            json_t *cmd = tune_command(b, ps, npp, gpu);
            json_decref(b->trainer_command);
            b->trainer_command = cmd;
        }
    }
    return inject_targets(b, count, npp, err);
}

/* ---- validation ---- */

static void validate_targets(const struct kt_validation *v, struct kt_ferrs *errs)
{
    size_t i, j;
    json_t *t, *cn;
    json_array_foreach(env_targets(v->rt), i, t)
    {
        const char *job = json_string_value(json_object_get(t, "jobName"));
        json_array_foreach(json_object_get(t, "containerNames"), j, cn)
        {
            const char *name = json_string_value(cn);
            if (!job || !name || !target_container(v->info, job, name)) {
                kt_ferrs_add(errs, KT_FERR_INVALID, "spec.runtimeRef", t, KT_GO_ENV_TARGET,
                             "envInjection target podSet \"%s\" container \"%s\" not found in "
                             "runtime template",
                             job ? job : "", name ? name : "");
            }
        }
    }
}

void kt__validate_reserved_envs(const struct kt_trainjob *tj, const char *const *reserved,
                                size_t n_reserved, struct kt_ferrs *errs)
{
    struct kt_strv bad;
    size_t i;
    json_t *e;
    kt_strv_init(&bad);
    json_array_foreach(tj->trainer.env, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        for (size_t k = 0; n && k < n_reserved; k++) {
            if (strcmp(n, reserved[k]) == 0 && !kt_strv_contains(&bad, n)) {
                kt_strv_push(&bad, n);
            }
        }
    }
    if (bad.len > 0) {
        char *list = kt_xstrdup("");
        kt_strv_sort(&bad);
        for (i = 0; i < bad.len; i++) {
            char *next = kt_xasprintf("%s%s%s", list, i ? " " : "", bad.items[i]);
            free(list);
            list = next;
        }
        kt_ferrs_add(errs, KT_FERR_INVALID, "spec.trainer.env", tj->trainer.env, KT_GO_ENV_LIST,
                     "must not have reserved envs, invalid envs configured: [%s]", list);
        free(list);
    }
    kt_strv_release(&bad);
}

static void validate_reserved(const struct kt_trainjob *tj, struct kt_ferrs *errs)
{
    static const char *const reserved[] = {PET_NNODES, PET_NPROC, PET_RANK, PET_ADDR, PET_PORT};
    kt__validate_reserved_envs(tj, reserved, KT_ARRAY_SIZE(reserved), errs);
}

static bool model_supported(const char *model)
{
    for (size_t i = 0; i < KT_ARRAY_SIZE(supported_models); i++) {
        if (strcmp(model, supported_models[i]) == 0) {
            return true;
        }
    }
    return false;
}

static void validate_qlora(const struct kt_validation *v, const char *model, struct npp npp,
                           struct kt_ferrs *errs)
{
    const struct kt_trainjob *tj = v->tj;
    const char *rt_name = tj->runtime_ref.name ? tj->runtime_ref.name : "";
    if (strncmp(model, "qwen", 4) == 0) {
        kt_ferrs_add_str(errs, KT_FERR_INVALID, "spec.runtimeRef.name", rt_name,
                         "QLoRA is not supported for %s model", model);
        return;
    }
    if (strcmp(model, "llama3_2/1B") != 0 && strcmp(model, "llama3_2/3B") != 0) {
        return;
    }
    if (npp.is_auto) {
        kt_ferrs_add_str(errs, KT_FERR_INVALID, "spec.trainer.numProcPerNode", "auto",
                         "must be auto or 1 for %s model when using QLoRA", model);
    } else {
        kt_ferrs_add_int(errs, KT_FERR_INVALID, "spec.trainer.numProcPerNode", (long long)npp.n,
                         "must be auto or 1 for %s model when using QLoRA", model);
    }
    kt_ferrs_add(errs, KT_FERR_INVALID, "spec.trainer.resourcesPerNode",
                 tj->trainer.resources_per_node, KT_GO_RESOURCES,
                 "must have gpu resource with value 1 for %s model when using QLoRA", model);
}

static void validate_args(const struct kt_trainjob *tj, struct kt_ferrs *errs)
{
    size_t i, which;
    json_t *a;
    json_array_foreach(tj->trainer.args, i, a)
    {
        const char *s = json_string_value(a);
        if (s && is_immutable_cfg(s, &which)) {
            char *path = kt_xasprintf("spec.trainer.args[%zu]", i);
            kt_ferrs_add_str(errs, KT_FERR_INVALID, path, s,
                             "must not set immutable config \"%s\" in trainer args; it is "
                             "managed by the runtime",
                             immutable_cfgs[which]);
            free(path);
        }
    }
}

static void validate_torchtune(const struct kt_validation *v, struct kt_ferrs *errs)
{
    const struct kt_trainjob *tj = v->tj;
    const char *rt_name = tj->runtime_ref.name ? tj->runtime_ref.name : "";
    char *model = torchtune_model(rt_name);
    int64_t nodes = tj->trainer.num_nodes.has ? tj->trainer.num_nodes.v : 1;
    struct npp npp = {.is_auto = !tj->trainer.num_proc_per_node.has,
                      .n = tj->trainer.num_proc_per_node.v};
    if (!model_supported(model)) {
        kt_ferrs_add_str(errs, KT_FERR_INVALID, "spec.runtimeRef.name", rt_name,
                         "must have a supported pretrained model, invalid model configured: %s",
                         model);
        free(model);
        return;
    }
    if (nodes > 1 && strcmp(model, "llama3_3/70B") != 0) {
        kt_ferrs_add_int(errs, KT_FERR_INVALID, "spec.trainer.numNodes", (long long)nodes,
                         "must be 1 for %s model", model);
    }
    int64_t gpu = kt_resources_gpu_count(kt_info_resources_per_node(v->info, tj));
    struct tune_choice c = tune_select(nodes, npp, gpu, tj->trainer.args);
    if (strstr(c.suffix, "_qlora") && strcmp(c.suffix, "_qlora_single_device") != 0) {
        validate_qlora(v, model, npp, errs);
    } else if (strstr(c.suffix, "_qlora") && strncmp(model, "qwen", 4) == 0) {
        validate_qlora(v, model, npp, errs);
    }
    if (nodes > 1 && (c.lora || c.qlora)) {
        kt_ferrs_add_int(errs, KT_FERR_INVALID, "spec.trainer.numNodes", (long long)nodes,
                         "LoRA fine-tuning is not supported for multi-node training in TorchTune");
    }
    validate_args(tj, errs);
    free(model);
}

static void torch_validate(const struct kt_validation *v, struct kt_ferrs *errs,
                           struct kt_strv *warnings)
{
    (void)warnings;
    if (!is_torch(v->rt)) {
        return;
    }
    validate_targets(v, errs);
    if (!v->tj->trainer.present) {
        return;
    }
    validate_reserved(v->tj, errs);
    if (is_torchtune(v->tj->trainer.command)) {
        validate_torchtune(v, errs);
    }
}

const struct kt_plugin kt_plugin_torch = {
    .abi = KT_PLUGIN_ABI,
    .size = sizeof(struct kt_plugin),
    .name = "Torch",
    .validate = torch_validate,
    .enforce_ml_policy = torch_enforce,
};

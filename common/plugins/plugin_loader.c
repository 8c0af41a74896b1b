/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_loader.c - dlopen() external plugins, check them against the public ABI
 * (api/kt_plugin.h) and build the framework table: built-ins first, externals after, in
 * command-line order. */
#include "common/plugins/plugin_loader.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/mem.h"
#include "common/plugins/plugins.h"

/* sizeof(struct kt_plugin_def) of ABI 1.0: every member through `status`. */
#define DEF_SIZE_1_0 (offsetof(struct kt_plugin_def, status) + sizeof(kt_plugin_fn))

void kt_plugin_flags_init(struct kt_plugin_flags *f)
{
    kt_strv_init(&f->specs);
    f->status_plugin = NULL;
}

void kt_plugin_flags_release(struct kt_plugin_flags *f)
{
    kt_strv_release(&f->specs);
}

int kt_plugin_flags_parse(struct kt_plugin_flags *f, int argc, char **argv, int *i)
{
    bool missing = false;
    const char *v = kt_flag_value(argc, argv, i, "--plugin", &missing);
    if (v) {
        if (*v == '\0') {
            return -1;
        }
        kt_strv_push(&f->specs, v);
        return 1;
    }
    if (missing) {
        return -1;
    }
    v = kt_flag_value(argc, argv, i, "--trainjob-status-plugin", &missing);
    if (v) {
        f->status_plugin = v;
        return *v == '\0' ? -1 : 1;
    }
    return missing ? -1 : 0;
}

const char *kt_plugin_flags_usage(void)
{
    return "  --plugin FILE[,CONFIG]  load an external plugin (api/kt_plugin.h); repeatable\n"
           "  --trainjob-status-plugin NAME  let the external plugin NAME replace the\n"
           "                          built-in TrainJobStatus (JobSet)\n";
}

static int check_points(const struct kt_plugin_def *d, const char *path, struct kt_err *err)
{
    static const char *const names[] = {
        "WatchExtension", "CustomValidation", "EnforceMLPolicy",  "EnforcePodGroupPolicy",
        "EnforcePodSpec", "PreBuildSync",     "ComponentBuilder", "TrainJobStatus"};
    const bool set[] = {d->watches != NULL,
                        d->validate != NULL,
                        d->enforce_ml_policy != NULL,
                        d->enforce_podgroup_policy != NULL,
                        d->enforce_podspec != NULL,
                        d->pre_build_sync != NULL,
                        d->build != NULL,
                        d->status != NULL};
    if ((d->points & ~KT_EP_ALL_1_0) != 0) {
        return kt_err_set(err, KT_EINVAL,
                          "plugin %s (%s): claims unknown extension points 0x%x (this kt "
                          "speaks plugin ABI %d.%d)",
                          d->name, path, d->points & ~KT_EP_ALL_1_0, KT_PLUGIN_ABI_MAJOR,
                          KT_PLUGIN_ABI_MINOR);
    }
    for (unsigned k = 0; k < 8; k++) {
        bool claimed = (d->points & (1u << k)) != 0;
        if (claimed != set[k]) {
            return kt_err_set(err, KT_EINVAL, "plugin %s (%s): %s %s but %s", d->name, path,
                              claimed ? "claims" : "does not claim", names[k],
                              claimed ? "does not implement it" : "implements it");
        }
    }
    return 0;
}

static int check_def(const struct kt_plugin_def *d, const char *path, struct kt_err *err)
{
    if (d->abi_major != KT_PLUGIN_ABI_MAJOR || d->abi_minor > KT_PLUGIN_ABI_MINOR) {
        return kt_err_set(err, KT_EINVAL,
                          "plugin %s: built for plugin ABI %u.%u, this kt speaks %d.%d; "
                          "rebuild it against this release's api/kt_plugin.h",
                          path, d->abi_major, d->abi_minor, KT_PLUGIN_ABI_MAJOR,
                          KT_PLUGIN_ABI_MINOR);
    }
    if (d->size < DEF_SIZE_1_0) {
        return kt_err_set(err, KT_EINVAL,
                          "plugin %s: descriptor size %u is smaller than ABI %u.%u's %zu", path,
                          d->size, d->abi_major, d->abi_minor, (size_t)DEF_SIZE_1_0);
    }
    if (!d->name || *d->name == '\0') {
        return kt_err_set(err, KT_EINVAL, "plugin %s: descriptor has no name", path);
    }
    return check_points(d, path, err);
}

/* Open one "FILE[,CONFIG]" into ext (zeroed by the caller). */
static int open_one(struct kt_plugin_ext *ext, const char *spec, struct kt_err *err)
{
    const char *comma = strchr(spec, ',');
    ext->path = comma ? kt_xstrndup(spec, (size_t)(comma - spec)) : kt_xstrdup(spec);
    /* RTLD_LOCAL: plugins do not see each other's symbols; RTLD_NOW: fail here, not later. */
    ext->handle = dlopen(ext->path, RTLD_NOW | RTLD_LOCAL);
    if (!ext->handle) {
        const char *why = dlerror();
        return kt_err_set(err, KT_EINVAL, "plugin %s: cannot load: %s", ext->path,
                          why ? why : "unknown error");
    }
    ext->def = dlsym(ext->handle, KT_PLUGIN_SYMBOL);
    if (!ext->def) {
        return kt_err_set(err, KT_EINVAL, "plugin %s: no %s symbol (not a kt plugin?)", ext->path,
                          KT_PLUGIN_SYMBOL);
    }
    if (check_def(ext->def, ext->path, err) != 0) {
        ext->def = NULL;
        return -1;
    }
    if (kt__plugin_ext_init(ext, comma ? comma + 1 : NULL, err) != 0) {
        ext->def = NULL;
        return -1;
    }
    return 0;
}

static const struct kt_plugin_ext *find_ext(const struct kt_plugin_set *set, const char *name)
{
    for (size_t i = 0; i < set->n_ext; i++) {
        if (set->exts[i].def && strcmp(set->exts[i].def->name, name) == 0) {
            return &set->exts[i];
        }
    }
    return NULL;
}

/* Each name unique (externals among themselves and against the built-ins). */
static int check_names(const struct kt_plugin_set *set, struct kt_err *err)
{
    struct kt_framework builtin;
    kt_framework_default(&builtin);
    for (size_t i = 0; i < set->n_ext; i++) {
        const char *name = set->exts[i].def->name;
        bool dup = find_ext(set, name) != &set->exts[i];
        for (size_t k = 0; k < builtin.n && !dup; k++) {
            dup = strcmp(builtin.plugins[k]->name, name) == 0;
        }
        if (dup) {
            return kt_err_set(err, KT_EINVAL, "plugin %s: a plugin named %s is already registered",
                              set->exts[i].path, name);
        }
    }
    return 0;
}

/* The TrainJobStatus rule: the built-in JobSet status unless status_plugin names a loaded
 * external that implements it; any other external status is one too many. */
static int pick_status(struct kt_plugin_set *set, const char *status_plugin, struct kt_err *err)
{
    const struct kt_plugin_ext *chosen = NULL;
    if (status_plugin) {
        chosen = find_ext(set, status_plugin);
        if (!chosen || !(chosen->def->points & KT_EP_STATUS)) {
            return kt_err_set(err, KT_EINVAL,
                              "--trainjob-status-plugin %s: no loaded plugin of that name "
                              "implements TrainJobStatus",
                              status_plugin);
        }
    }
    for (size_t i = 0; i < set->n_ext; i++) {
        if (&set->exts[i] != chosen && (set->exts[i].def->points & KT_EP_STATUS)) {
            return kt_err_set(err, KT_EINVAL,
                              "too many TrainJobStatus plugins are registered (plugin %s from "
                              "%s; pass --trainjob-status-plugin %s to replace the built-in one)",
                              set->exts[i].def->name, set->exts[i].path, set->exts[i].def->name);
        }
    }
    set->jobset_nostatus = kt_plugin_jobset;
    if (chosen) {
        set->jobset_nostatus.status = NULL;
    }
    return 0;
}

static void build_table(struct kt_plugin_set *set)
{
    struct kt_framework builtin;
    kt_framework_default(&builtin);
    size_t n = builtin.n + set->n_ext;
    set->table = kt_xcalloc(n, sizeof(*set->table));
    set->entries = kt_xcalloc(set->n_ext ? set->n_ext : 1, sizeof(*set->entries));
    for (size_t k = 0; k < builtin.n; k++) {
        const struct kt_plugin *p = builtin.plugins[k];
        set->table[k] = p == &kt_plugin_jobset ? &set->jobset_nostatus : p;
    }
    for (size_t i = 0; i < set->n_ext; i++) {
        struct kt_plugin *e = &set->entries[i];
        e->abi = KT_PLUGIN_ABI;
        e->size = sizeof(*e);
        e->name = set->exts[i].def->name;
        e->watches = set->exts[i].def->watches;
        e->adapter = &kt__plugin_abi_adapter;
        e->ext = &set->exts[i];
        set->table[builtin.n + i] = e;
    }
    set->fw.plugins = set->table;
    set->fw.n = n;
}

int kt_plugin_set_load(struct kt_plugin_set *set, const struct kt_plugin_flags *f,
                       struct kt_err *err)
{
    memset(set, 0, sizeof(*set));
    set->exts = kt_xcalloc(f->specs.len ? f->specs.len : 1, sizeof(*set->exts));
    for (size_t i = 0; i < f->specs.len; i++) {
        set->n_ext = i + 1;
        if (open_one(&set->exts[i], f->specs.items[i], err) != 0) {
            goto fail;
        }
    }
    if (check_names(set, err) != 0 || pick_status(set, f->status_plugin, err) != 0) {
        goto fail;
    }
    build_table(set);
    if (kt_framework_check(&set->fw, err) != 0) {
        goto fail;
    }
    return 0;
fail:
    kt_plugin_set_release(set);
    return -1;
}

void kt_plugin_set_release(struct kt_plugin_set *set)
{
    for (size_t i = 0; i < set->n_ext; i++) {
        struct kt_plugin_ext *e = &set->exts[i];
        if (e->def && e->def->fini) {
            e->def->fini(e->state);
        }
        if (e->handle) {
            dlclose(e->handle);
        }
        free(e->path);
    }
    free(set->exts);
    free(set->entries);
    free(set->table);
    memset(set, 0, sizeof(*set));
}

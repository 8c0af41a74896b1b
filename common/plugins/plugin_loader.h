/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugin_loader.h - load external plugins (api/kt_plugin.h) with dlopen() and build
 * the framework table every binary uses: the built-in plugins in their fixed order, then the
 * external ones in the order given.
 *
 * Checks at load time, each refusal a KT_EINVAL error naming the file: the shared object
 * opens and exports `kt_plugin_def`; its ABI major equals ours and its minor is not newer;
 * its size covers the 1.0 descriptor; its claimed extension points are known and match
 * exactly the callbacks it sets; its name is unique; at most one TrainJobStatus is active
 * (an external one replaces the built-in JobSet status only when status_plugin names it,
 * else "too many TrainJobStatus plugins are registered"); its init succeeds.
 *
 * Flags (kt-webhook, kt-reconciler, ktctl): `--plugin FILE[,CONFIG]` (repeatable; CONFIG is
 * the plugin's own text, given to its init) and `--trainjob-status-plugin NAME`. */
#ifndef KT_PLUGIN_LOADER_H
#define KT_PLUGIN_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include "api/kt_plugin.h"
#include "common/base/err.h"
#include "common/framework/framework.h"
#include "common/base/str.h"

/* One loaded external plugin, the target of a framework entry's `ext`. */
struct kt_plugin_ext {
    const struct kt_plugin_def *def; /* borrowed from the shared object */
    void *state;                     /* from def->init */
    char *path;                      /* owned: the file, for messages */
    void *handle;                    /* owned: dlopen() handle */
};

/* Plugin flags as parsed from a command line. */
struct kt_plugin_flags {
    struct kt_strv specs;      /* owned: "FILE[,CONFIG]" in order */
    const char *status_plugin; /* borrowed from argv: --trainjob-status-plugin, or NULL */
};

/* The table: built-ins + externals. fw is valid (and may be copied by value) until
 * kt_plugin_set_release. */
struct kt_plugin_set {
    struct kt_framework fw;
    const struct kt_plugin **table; /* owned array of fw.n entries */
    struct kt_plugin *entries;      /* owned: adapter entries of the externals */
    struct kt_plugin_ext *exts;     /* owned, n_ext */
    size_t n_ext;
    struct kt_plugin jobset_nostatus; /* the JobSet plugin minus status, when replaced */
};

void kt_plugin_flags_init(struct kt_plugin_flags *f);
void kt_plugin_flags_release(struct kt_plugin_flags *f);
/* If argv[*i] is `--plugin` / `--trainjob-status-plugin` (with its value as the next
 * argument or after `=`), record it, advance *i past the value and return 1. Return 0 when
 * argv[*i] is another argument, -1 when the value is missing. */
int kt_plugin_flags_parse(struct kt_plugin_flags *f, int argc, char **argv, int *i);
/* The usage lines of those two flags. */
const char *kt_plugin_flags_usage(void);

/* Load every plugin of flags and build the table. On failure set is released (the
 * built-in table is NOT installed) and err says which file and why. */
KT_MUST_CHECK int kt_plugin_set_load(struct kt_plugin_set *set, const struct kt_plugin_flags *f,
                                     struct kt_err *err);
/* Call each plugin's fini, dlclose, free. Accepts a zeroed set. fw must no longer be used. */
void kt_plugin_set_release(struct kt_plugin_set *set);

/* The host table handed to plugins (plugin_abi.c). Valid forever. */
const struct kt_plugin_host *kt__plugin_host(void);
/* Run def->init (when set) for ext with config; -1 + err with the plugin's message. */
int kt__plugin_ext_init(struct kt_plugin_ext *ext, const char *config, struct kt_err *err);

/* The framework's vtable for external entries (plugin_abi.c); the loader puts it in every
 * entry it builds (with ext as its context). Valid forever. */
extern const struct kt_plugin_adapter kt__plugin_abi_adapter;
/* True when the external entry p implements extension point bit (KT_EP_* of kt_plugin.h). */
bool kt__plugin_ext_has(const struct kt_plugin *p, unsigned bit);
/* Run p's build-side point (0 ml, 1 podgroup, 2 podspec, 3 pre-build sync, 4 build; objects
 * only for 4). -1 + err when the plugin fails. */
int kt__plugin_ext_build(const struct kt_plugin *p, int phase, struct kt_build *b, json_t *objects,
                         struct kt_err *err);
void kt__plugin_ext_validate(const struct kt_plugin *p, const struct kt_validation *v,
                             struct kt_ferrs *errs, struct kt_strv *warnings);
int kt__plugin_ext_status(const struct kt_plugin *p, const struct kt_trainjob *tj,
                          const struct kt_view *view, json_t **out, struct kt_err *err);

#endif

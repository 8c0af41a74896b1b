/* SPDX-License-Identifier: Apache-2.0 */
/* cli/main.c - ktctl: dispatch to a subcommand. Only wiring: every subcommand lives in its
 * own cli/<name>.c and is one entry of the table below (validate and certs join it).
 * `-h`/`--help` among a subcommand's options (or `ktctl help CMD`) prints its usage to stdout
 * and exits 0 before the subcommand parses anything.
 *
 * Global flags, accepted before or after the subcommand and removed before it parses its
 * own: `--plugin FILE[,CONFIG]` (repeatable) and `--trainjob-status-plugin NAME`
 * (common/plugins/plugin_loader.h); a "--" ends them. stdout is line-buffered. A plugin that is
 * refused stops ktctl with exit code 2. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "api/types.h"
#include "cli/cli.h"
#include "common/base/mem.h"
#include "common/plugins/plugin_loader.h"

struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv, const struct kt_framework *fw);
    void (*usage)(FILE *f);
};

static const struct subcommand subcommands[] = {
    {"render", cli_render, cli_render_usage},
    {"validate", cli_validate, cli_validate_usage},
    {"certs", cli_certs, cli_certs_usage},
    {"status", cli_status, cli_status_usage},
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: ktctl [--plugin FILE[,CONFIG]]... <command> [options]\n"
               "   or: ktctl --version\n\ncommands:\n");
    for (size_t i = 0; i < KT_ARRAY_SIZE(subcommands); i++) {
        subcommands[i].usage(f);
    }
    fprintf(f, "\nglobal options:\n%s", kt_plugin_flags_usage());
}

/* Move the plugin flags out of argv (in place); *argc becomes the count of what is left.
 * -1 on a flag without its value. */
static int take_plugin_flags(int *argc, char **argv, struct kt_plugin_flags *f)
{
    int out = 1, i = 1;
    for (; i < *argc && strcmp(argv[i], "--") != 0; i++) {
        int r = kt_plugin_flags_parse(f, *argc, argv, &i);
        if (r < 0) {
            fprintf(stderr, "ktctl: %s needs a value\n", argv[i]);
            return -1;
        }
        if (r == 0) {
            argv[out++] = argv[i];
        }
    }
    for (; i < *argc; i++) { /* after "--": operands, not flags */
        argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = NULL;
    return 0;
}

static bool is_help(const char *a)
{
    return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
}

/* -h or --help among a subcommand's options (before a "--"). */
static bool wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (is_help(argv[i])) {
            return true;
        }
    }
    return false;
}

static const struct subcommand *find_subcommand(const char *name)
{
    for (size_t i = 0; i < KT_ARRAY_SIZE(subcommands); i++) {
        if (strcmp(name, subcommands[i].name) == 0) {
            return &subcommands[i];
        }
    }
    return NULL;
}

/* `ktctl CMD --help`, `ktctl help CMD`: the subcommand's usage on stdout, exit 0. */
static int subcommand_help(const struct subcommand *c)
{
    printf("Usage: ktctl [--plugin FILE[,CONFIG]]... %s [options]\n", c->name);
    c->usage(stdout);
    printf("\nglobal options:\n%s", kt_plugin_flags_usage());
    return KT_EXIT_OK;
}

static int dispatch(int argc, char **argv, const struct kt_framework *fw)
{
    if (argc < 2) {
        usage(stderr);
        return KT_EXIT_USAGE;
    }
    if (strcmp(argv[1], "help") == 0 && argc > 2 && find_subcommand(argv[2])) {
        return subcommand_help(find_subcommand(argv[2]));
    }
    if (is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return KT_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("ktctl %s (API " KT_API_VERSION ", Kubeflow Trainer %s)\n", KT_RELEASE,
               KT_UPSTREAM_RELEASE);
        return KT_EXIT_OK;
    }
    const struct subcommand *c = find_subcommand(argv[1]);
    if (c && wants_help(argc - 2, argv + 2)) {
        return subcommand_help(c);
    }
    if (c) {
        return c->run(argc - 2, argv + 2, fw);
    }
    fprintf(stderr, "ktctl: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return KT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    struct kt_plugin_flags flags;
    struct kt_plugin_set plugins;
    struct kt_err err = {0};
    int rc = KT_EXIT_USAGE;
    /* Line-buffered stdout: in a pipe (every CI log) the problems come before the summary
     * that stderr prints, as on a terminal. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    kt_mem_init();
    kt_plugin_flags_init(&flags);
    if (take_plugin_flags(&argc, argv, &flags) != 0) {
        goto out;
    }
    if (kt_plugin_set_load(&plugins, &flags, &err) != 0) {
        fprintf(stderr, "ktctl: %s\n", err.msg);
        goto out;
    }
    rc = dispatch(argc, argv, &plugins.fw);
    kt_plugin_set_release(&plugins);
out:
    kt_plugin_flags_release(&flags);
    return rc;
}

/* cli/main.c - ktctl: dispatch to a subcommand. Only wiring: every subcommand lives in its
 * own cli/<name>.c and is one entry of the table below (validate and certs join it). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/mem.h"

struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    void (*usage)(FILE *f);
};

static const struct subcommand subcommands[] = {
    {"render", cli_render, cli_render_usage},
    {"validate", cli_validate, cli_validate_usage},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: ktctl <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
        subcommands[i].usage(f);
    }
}

int main(int argc, char **argv)
{
    kt_mem_init();
    if (argc < 2) {
        usage(stderr);
        return KT_EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return KT_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
        if (strcmp(argv[1], subcommands[i].name) == 0) {
            return subcommands[i].run(argc - 2, argv + 2);
        }
    }
    fprintf(stderr, "ktctl: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return KT_EXIT_USAGE;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* cli/cli.h - ktctl subcommands. Each takes the arguments after its name and returns the
 * process exit code (0 ok, 1 invalid input or denial, 2 usage error or unreadable input). */
#ifndef KT_CLI_H
#define KT_CLI_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "common/base/version.h"
#include "common/framework/framework.h"

#define KT_EXIT_OK 0
#define KT_EXIT_INVALID 1
#define KT_EXIT_USAGE 2

/* fw: the plugin table (built-ins + --plugin externals), borrowed for the call. */
int cli_render(int argc, char **argv, const struct kt_framework *fw);
void cli_render_usage(FILE *f);
int cli_validate(int argc, char **argv, const struct kt_framework *fw);
void cli_validate_usage(FILE *f);
/* fw is unused: certificates need no plugins. */
int cli_certs(int argc, char **argv, const struct kt_framework *fw);
void cli_certs_usage(FILE *f);

/* fw is unused: status only reads the API server. */
int cli_status(int argc, char **argv, const struct kt_framework *fw);
void cli_status_usage(FILE *f);

/* The source line of the node at JSON pointer prefix+ptr (ptr NULL = "") or of its nearest
 * ancestor, from lines (an object mapping JSON pointers to line numbers, as the YAML loader
 * records them); fallback when none is recorded. Borrows lines; retains nothing. */
size_t cli_node_line(const json_t *lines, const char *prefix, const char *ptr, size_t fallback);

#endif

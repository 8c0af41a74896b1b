/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/log.h - the one structured logger (docs/internals/style.md#one-logger).
 *
 * One line per event on stderr: RFC3339 time, level, component, message, then
 * key=value pairs the caller writes into the message. Thread-safe (one fprintf per
 * line). Signal handlers must not log. */
#ifndef KT_LOG_H
#define KT_LOG_H

#include <stdbool.h>

#include "common/base/err.h"

enum kt_log_level { KT_LOG_DEBUG, KT_LOG_INFO, KT_LOG_WARN, KT_LOG_ERROR, KT_LOG_OFF };

/* Set the lowest level printed (default INFO). Not thread-safe: call at startup. */
void kt_log_set_level(enum kt_log_level level);
/* Parse "debug|info|warn|error|off" (also numeric 0-4). Returns -1 on an unknown name. */
KT_MUST_CHECK int kt_log_level_parse(const char *s, enum kt_log_level *out);
/* Select components: "a,b" prints only a and b, "-c" hides c. NULL/"" = all.
 * Does not retain spec. Not thread-safe: call at startup. */
void kt_log_set_components(const char *spec);
bool kt_log_enabled(enum kt_log_level level, const char *component);

void kt_log(enum kt_log_level level, const char *component, const char *fmt, ...) KT_PRINTF(3, 4);

#define KT_LOG_AT(lvl, comp, ...)                                                                  \
    do {                                                                                           \
        if (kt_log_enabled((lvl), (comp))) {                                                       \
            kt_log((lvl), (comp), __VA_ARGS__);                                                    \
        }                                                                                          \
    } while (0)
#define kt_log_debug(comp, ...) KT_LOG_AT(KT_LOG_DEBUG, comp, __VA_ARGS__)
#define kt_log_info(comp, ...) KT_LOG_AT(KT_LOG_INFO, comp, __VA_ARGS__)
#define kt_log_warn(comp, ...) KT_LOG_AT(KT_LOG_WARN, comp, __VA_ARGS__)
#define kt_log_error(comp, ...) KT_LOG_AT(KT_LOG_ERROR, comp, __VA_ARGS__)

#endif

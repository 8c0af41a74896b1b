/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/log.c - level and component filtering, one formatted line per call. */
#include "common/base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The log level and component filter are the two globals docs/internals/style.md#almost-no-globals
 * allows. */
static enum kt_log_level g_level = KT_LOG_INFO;
static char g_components[256];

static const char *const level_names[] = {"debug", "info", "warn", "error", "off"};

void kt_log_set_level(enum kt_log_level level)
{
    g_level = level;
}

int kt_log_level_parse(const char *s, enum kt_log_level *out)
{
    for (int i = 0; i <= KT_LOG_OFF; i++) {
        if (strcmp(s, level_names[i]) == 0 || (s[0] == '0' + i && s[1] == '\0')) {
            *out = (enum kt_log_level)i;
            return 0;
        }
    }
    return -1;
}

void kt_log_set_components(const char *spec)
{
    snprintf(g_components, sizeof(g_components), ",%s,", spec ? spec : "");
}

static bool component_selected(const char *component)
{
    char key[80];
    bool any_positive = false;

    if (g_components[0] == '\0' || strcmp(g_components, ",,") == 0) {
        return true;
    }
    snprintf(key, sizeof(key), ",-%s,", component);
    if (strstr(g_components, key)) {
        return false;
    }
    snprintf(key, sizeof(key), ",%s,", component);
    if (strstr(g_components, key)) {
        return true;
    }
    for (const char *p = g_components; *p; p++) {
        if (p[0] == ',' && p[1] != '-' && p[1] != ',' && p[1] != '\0') {
            any_positive = true;
        }
    }
    return !any_positive;
}

bool kt_log_enabled(enum kt_log_level level, const char *component)
{
    return level >= g_level && level != KT_LOG_OFF && component_selected(component);
}

/* Copy msg into out (cap bytes) with control characters escaped (\n, \r, \xHH), so one
 * record is always one line whatever the message quotes (a server's error text, a name). */
static void escape_controls(const char *msg, char *out, size_t cap)
{
    size_t o = 0;

    for (const unsigned char *p = (const unsigned char *)msg; *p && o + 5 < cap; p++) {
        if (*p == '\n' || *p == '\r') {
            out[o++] = '\\';
            out[o++] = *p == '\n' ? 'n' : 'r';
        } else if (*p < 0x20 && *p != '\t') {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *p);
        } else {
            out[o++] = (char)*p;
        }
    }
    out[o] = '\0';
}

void kt_log(enum kt_log_level level, const char *component, const char *fmt, ...)
{
    char msg[2048], line[4096];
    char ts[40];
    struct timespec now;
    struct tm tm;
    va_list ap;

    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    escape_controls(msg, line, sizeof(line));
    fprintf(stderr, "%s.%03ldZ %-5s %s %s\n", ts, now.tv_nsec / 1000000L,
            level_names[level < KT_LOG_OFF ? level : KT_LOG_ERROR], component, line);
}

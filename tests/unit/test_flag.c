/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_flag.c - kt_flag_value (common/base/str.c), the "--name value" / "--name=value"
 * scanner the daemons and the plugin flags share, and kt__tls_suite_known (common/net/tlsopts.c),
 * the Go cipher suite names the Configuration loader accepts. */
#include "tests/test.h"

#include <stdbool.h>
#include <stdlib.h>

#include "common/base/mem.h"
#include "common/plugins/plugin_loader.h"
#include "common/base/str.h"
#include "common/net/tlsopts.h"

/* argv for the scanner (char **, as main() gets it): owned copies of src, NULL-terminated.
 * Free with free_argv. */
static char **mk_argv(const char *const *src, int n)
{
    char **v = kt_xcalloc((size_t)n + 1, sizeof(*v));
    for (int i = 0; i < n; i++) {
        v[i] = kt_xstrdup(src[i]);
    }
    return v;
}

static void free_argv(char **v)
{
    for (int i = 0; v[i]; i++) {
        free(v[i]);
    }
    free(v);
}

static void test_separate_and_equals(void)
{
    const char *const argv_src[] = {"prog", "--listen", ":9443", "--threads=8"};
    char **argv = mk_argv(argv_src, 4);
    int i = 1;
    bool missing = false;

    CHECK_EQ_STR(kt_flag_value(4, argv, &i, "--listen", &missing), ":9443");
    CHECK_EQ_INT(i, 2);
    i = 3;
    CHECK_EQ_STR(kt_flag_value(4, argv, &i, "--threads", &missing), "8");
    CHECK_EQ_INT(i, 3);
    CHECK(!missing);
    free_argv(argv);
}

static void test_not_this_flag(void)
{
    const char *const argv_src[] = {"prog", "--listener", "x", "--lis", "--listen="};
    char **argv = mk_argv(argv_src, 5);
    int i = 1;
    bool missing = false;

    CHECK(kt_flag_value(5, argv, &i, "--listen", &missing) == NULL);
    CHECK_EQ_INT(i, 1);
    i = 3;
    CHECK(kt_flag_value(5, argv, &i, "--listen", &missing) == NULL);
    CHECK_EQ_INT(i, 3);
    i = 4;
    CHECK_EQ_STR(kt_flag_value(5, argv, &i, "--listen", &missing), "");
    CHECK(!missing);
    free_argv(argv);
}

static void test_missing_value(void)
{
    const char *const argv_src[] = {"prog", "--portfile"};
    char **argv = mk_argv(argv_src, 2);
    int i = 1;
    bool missing = false;

    CHECK(kt_flag_value(2, argv, &i, "--portfile", &missing) == NULL);
    CHECK(missing);
    CHECK_EQ_INT(i, 1);
    CHECK(kt_flag_value(2, argv, &i, "--portfile", NULL) == NULL);
    free_argv(argv);
}

static void test_plugin_flags(void)
{
    const char *const ok_src[] = {"prog", "--plugin", "a.so", "--plugin=b.so,cfg"};
    char **ok = mk_argv(ok_src, 4);
    const char *const bare_src[] = {"prog", "--plugin"};
    char **bare = mk_argv(bare_src, 2);
    const char *const status_src[] = {"prog", "--trainjob-status-plugin"};
    char **status = mk_argv(status_src, 2);
    const char *const other_src[] = {"prog", "--other"};
    char **other = mk_argv(other_src, 2);
    const char *const empty_src[] = {"prog", "--plugin="};
    char **empty = mk_argv(empty_src, 2);
    struct kt_plugin_flags f;
    int i = 1;

    kt_plugin_flags_init(&f);
    CHECK_EQ_INT(kt_plugin_flags_parse(&f, 4, ok, &i), 1);
    i++;
    CHECK_EQ_INT(kt_plugin_flags_parse(&f, 4, ok, &i), 1);
    CHECK_EQ_INT((int)f.specs.len, 2);
    if (f.specs.len == 2) {
        CHECK_EQ_STR(f.specs.items[1], "b.so,cfg");
    }
    i = 1;
    CHECK_EQ_INT(kt_plugin_flags_parse(&f, 2, bare, &i), -1);
    i = 1;
    CHECK_EQ_INT(kt_plugin_flags_parse(&f, 2, status, &i), -1);
    i = 1;
    CHECK_EQ_INT(kt_plugin_flags_parse(&f, 2, empty, &i), -1);
    i = 1;
    CHECK_EQ_INT(kt_plugin_flags_parse(&f, 2, other, &i), 0);
    kt_plugin_flags_release(&f);
    free_argv(ok);
    free_argv(bare);
    free_argv(status);
    free_argv(other);
    free_argv(empty);
}

static void test_tls_suite_known(void)
{
    CHECK(kt__tls_suite_known("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"));
    CHECK(kt__tls_suite_known("TLS_RSA_WITH_RC4_128_SHA"));
    CHECK(kt__tls_suite_known("TLS_AES_128_GCM_SHA256"));
    CHECK(!kt__tls_suite_known("TLS_FAKE_SUITE"));
    CHECK(!kt__tls_suite_known(""));
}

int main(void)
{
    kt_mem_init();
    test_separate_and_equals();
    test_not_this_flag();
    test_missing_value();
    test_plugin_flags();
    test_tls_suite_known();
    return test_report();
}

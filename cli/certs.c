/* SPDX-License-Identifier: Apache-2.0 */
/* cli/certs.c - `ktctl certs`: a CA and a serving certificate for kt-webhook in a folder
 * (ca.crt, ca.key, tls.crt, tls.key; the layout of the kubeflow-trainer-webhook-cert
 * Secret), e.g. for local runs where no kubelet mounts the Secret. Argument handling only;
 * issuing lives in certs/certs.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "certs/certs.h"
#include "cli/cli.h"
#include "common/base/mem.h"
#include "common/base/str.h"

#define MAX_SANS 32

struct certs_args {
    const char *dir;
    const char *service;
    const char *namespace;
    const char *sans[MAX_SANS];
    size_t n_sans;
    int64_t issued_at; /* 0 = now */
    bool quiet;
    bool renew_server; /* keep DIR's CA, issue a new serving certificate */
    bool force;        /* replace a CA already in DIR */
};

void cli_certs_usage(FILE *f)
{
    fprintf(f, "  certs [--dir DIR] [--service NAME] [--namespace NS] [--san DNS:x|IP:y]...\n"
               "        [--renew-server | --force] [--issued-at UNIX_SECONDS] [-q]\n"
               "      Generate a CA and a serving certificate for kt-webhook into DIR: ca.crt\n"
               "      ca.key tls.crt tls.key, the layout of the kubeflow-trainer-webhook-cert\n"
               "      Secret. A CA already in DIR is never replaced silently.\n"
               "      --dir DIR           where to write (default .; created if missing)\n"
               "      --service NAME      the certificate is for NAME.NS.svc (default\n"
               "                          kubeflow-trainer-controller-manager)\n"
               "      --namespace NS      (default kubeflow-system)\n"
               "      --san DNS:x|IP:y    an extra name, repeatable (e.g. IP:127.0.0.1)\n"
               "      --renew-server      keep DIR's CA, issue only a new serving certificate\n"
               "      --force             replace the CA already in DIR with a new one\n"
               "      --issued-at SECONDS issue as of that Unix time (rotation tests)\n"
               "      -q, --quiet         print nothing\n"
               "      Exit 0 ok, 1 failed (also: a CA in DIR and neither of the two flags\n"
               "      above), 2 usage error.\n");
}

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "ktctl certs: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    cli_certs_usage(stderr);
    return KT_EXIT_USAGE;
}

static int parse_one(int argc, char **argv, int *i, struct certs_args *a)
{
    bool missing = false;
    const char *v;

    if (strcmp(argv[*i], "-q") == 0 || strcmp(argv[*i], "--quiet") == 0) {
        a->quiet = true;
        return 0;
    }
    if (strcmp(argv[*i], "--renew-server") == 0) {
        a->renew_server = true;
        return 0;
    }
    if (strcmp(argv[*i], "--force") == 0) {
        a->force = true;
        return 0;
    }
    /* Table of the flags taking a value, in the order they are tried. */
    static const char *const names[] = {"--dir", "--service", "--namespace", "--san",
                                        "--issued-at"};
    size_t k = 0;

    v = NULL;
    for (; k < KT_ARRAY_SIZE(names); k++) {
        v = kt_flag_value(argc, argv, i, names[k], &missing);
        if (v || missing) {
            break;
        }
    }
    if (!v) {
        return usage_error(missing ? "flag needs a value" : "unknown argument", argv[*i]);
    }
    switch (k) {
    case 0:
        a->dir = v;
        break;
    case 1:
        a->service = v;
        break;
    case 2:
        a->namespace = v;
        break;
    case 3:
        if (a->n_sans == MAX_SANS) {
            return usage_error("too many --san flags", NULL);
        }
        a->sans[a->n_sans++] = v;
        break;
    default:
        if (kt_str_to_i64(kt_str_c(v), 1, INT64_MAX / 2, &a->issued_at, NULL) != 0) {
            return usage_error("--issued-at must be Unix seconds", v);
        }
        break;
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct certs_args *a)
{
    for (int i = 0; i < argc; i++) {
        int rc = parse_one(argc, argv, &i, a);
        if (rc != 0) {
            return rc;
        }
    }
    if (!a->dir) {
        a->dir = ".";
    }
    if (!*a->dir) {
        return usage_error("--dir must not be empty", NULL);
    }
    if (a->force && a->renew_server) {
        return usage_error("--force replaces the CA, --renew-server keeps it: give one", NULL);
    }
    return 0;
}

/* mkdir -p dir (0700 for what it creates); -1 with a message on failure. */
static int ensure_dir(const char *dir)
{
    char *path = kt_xstrdup(dir);
    struct stat st;
    int rc = 0;

    for (char *p = path + 1; rc == 0; p++) {
        bool end = *p == '\0';
        if (*p != '/' && !end) {
            continue;
        }
        *p = '\0';
        if (stat(path, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                fprintf(stderr, "ktctl certs: %s: not a directory\n", path);
                rc = -1;
            }
        } else if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            fprintf(stderr, "ktctl certs: mkdir %s: %s\n", path, strerror(errno));
            rc = -1;
        }
        if (end) {
            break;
        }
        *p = '/';
    }
    free(path);
    return rc;
}

static void report(const struct certs_args *a, const struct kt_certs_opts *o, int64_t now)
{
    char *name = kt_certs_server_name(o);
    time_t until = (time_t)(now + KT_CERTS_SERVER_VALIDITY_S);
    struct tm tm;
    char when[32] = "?";

    if (gmtime_r(&until, &tm)) {
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    printf("wrote %s/ca.crt %s/ca.key %s/tls.crt %s/tls.key\n", a->dir, a->dir, a->dir, a->dir);
    printf("serving certificate: DNS:%s", name);
    for (size_t i = 0; i < a->n_sans; i++) {
        printf(", %s", a->sans[i]);
    }
    printf("; valid until %s (CA: %s, 10 years)\n", when, KT_CERTS_CA_NAME);
    free(name);
}

/* New certificates, or (--renew-server) DIR's CA with a new serving certificate. Returns 0,
 * or the exit code: usage error for a bad --san, else failure. */
static int issue(const struct certs_args *a, const struct kt_certs_opts *o, int64_t now,
                 struct kt_certs *out)
{
    struct kt_err err = {0};
    struct stat st;

    if (!a->renew_server && !a->force) {
        for (size_t i = 0; i < 2; i++) {
            char *p = kt_xasprintf("%s/%s", a->dir, i == 0 ? "ca.crt" : "ca.key");
            bool there = stat(p, &st) == 0;
            if (there) {
                fprintf(stderr,
                        "ktctl certs: %s exists: --renew-server keeps that CA and issues a new "
                        "serving certificate; --force replaces the CA (everything that trusts "
                        "it must get the new ca.crt)\n",
                        p);
            }
            free(p);
            if (there) {
                return KT_EXIT_INVALID;
            }
        }
    }
    if (!a->renew_server) {
        if (kt_certs_generate(o, now, out, &err) == 0) {
            return 0;
        }
    } else if (kt_certs_load_dir(a->dir, out, &err) == 0) {
        if (!out->ca_key) {
            kt_err_set(&err, KT_ENOENT, "%s/ca.key: no such file (needed to sign)", a->dir);
        } else if (kt_certs_renew_server(o, now, out, &err) == 0) {
            return 0;
        }
        kt_certs_release(out);
    }
    fprintf(stderr, "ktctl certs: %s\n", err.msg);
    return err.code == KT_EINVAL ? KT_EXIT_USAGE : KT_EXIT_INVALID;
}

int cli_certs(int argc, char **argv, const struct kt_framework *fw)
{
    (void)fw;
    struct certs_args a = {0};
    struct kt_certs certs = {0};
    struct kt_err err = {0};
    int rc = parse_args(argc, argv, &a);

    if (rc != 0) {
        return rc;
    }
    struct kt_certs_opts o = {.service = a.service,
                              .namespace = a.namespace,
                              .extra_sans = a.sans,
                              .n_extra_sans = a.n_sans};
    int64_t now = a.issued_at ? a.issued_at : (int64_t)time(NULL);
    rc = issue(&a, &o, now, &certs);
    if (rc != 0) {
        return rc;
    }
    rc = KT_EXIT_INVALID;
    if (ensure_dir(a.dir) != 0) {
        goto out;
    }
    if (kt_certs_write_dir(&certs, a.dir, &err) != 0) {
        fprintf(stderr, "ktctl certs: %s\n", err.msg);
        goto out;
    }
    if (!a.quiet) {
        report(&a, &o, now);
    }
    rc = KT_EXIT_OK;
out:
    kt_certs_release(&certs);
    return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_reconciler_apply.c - reconciler/apply.c without a server: the built-in
 * kind table, the discovered-kind cache's lookups and the inputs rejected before any request
 * (discovery itself runs in tests/integration/reconciler_test.sh, plugin-kind case).
 * Compiled in directly because reconciler/ is not part of libkt.a. */
#include "tests/test.h"

#include "reconciler/apply.c"
#include "common/base/mem.h"

static void test_builtin(void)
{
    CHECK(kt_rec_gvr_of("v1", "ConfigMap") == &KT_GVR_CONFIGMAPS);
    CHECK(kt_rec_gvr_of("v1", "Secret") == &KT_GVR_SECRETS);
    CHECK(kt_rec_gvr_of("jobset.x-k8s.io/v1alpha2", "JobSet") == &KT_GVR_JOBSETS);
    CHECK(kt_rec_gvr_of("scheduling.x-k8s.io/v1alpha1", "PodGroup") == &KT_GVR_PODGROUPS_SP);
    CHECK(kt_rec_gvr_of("scheduling.volcano.sh/v1beta1", "PodGroup") == &KT_GVR_PODGROUPS_VOLCANO);
    /* wrong version or kind, NULLs */
    CHECK(kt_rec_gvr_of("jobset.x-k8s.io/v1alpha1", "JobSet") == NULL);
    CHECK(kt_rec_gvr_of("v1", "Service") == NULL);
    CHECK(kt_rec_gvr_of(NULL, "ConfigMap") == NULL);
    CHECK(kt_rec_gvr_of("v1", NULL) == NULL);
    CHECK(kt_rec_gvr_of_builtin(&KT_GVR_JOBSETS));
    CHECK(!kt_rec_gvr_of_builtin(&KT_GVR_TRAINJOBS));
}

static void test_cache_without_server(void)
{
    struct kt_rec_kinds *k = kt_rec_kinds_new();
    const struct kt_kube_gvr *g = NULL;
    struct kt_err err = {0};
    /* built-in kinds never need the server (no client given) */
    CHECK_OK(kt_rec_kinds_resolve(k, NULL, "v1", "Secret", &g, &err));
    CHECK(g == &KT_GVR_SECRETS);
    CHECK(kt_rec_kinds_lookup(k, "v1", "ConfigMap") == &KT_GVR_CONFIGMAPS);
    /* nothing discovered yet */
    CHECK(kt_rec_kinds_lookup(k, "v1", "Service") == NULL);
    CHECK(kt_rec_kinds_lookup(NULL, "v1", "Service") == NULL);
    /* without a cache only the table answers */
    CHECK(kt_rec_kinds_resolve(NULL, NULL, "v1", "Service", &g, &err) == -1);
    CHECK_EQ_INT(err.code, KT_EUNSUPPORTED);
    CHECK_CONTAINS(err.msg, "cannot apply v1 Service: unknown kind");
    /* malformed apiVersion/kind are refused before any request */
    const char *bad[][2] = {{"", "Service"}, {"v1", ""}, {"a/v1?x=y", "K"}, {"../v1", "K"}};
    for (size_t i = 0; i < KT_ARRAY_SIZE(bad); i++) {
        err = (struct kt_err){0};
        CHECK(kt_rec_kinds_resolve(k, NULL, bad[i][0], bad[i][1], &g, &err) == -1);
        CHECK_EQ_INT(err.code, KT_EUNSUPPORTED);
        CHECK(g == NULL);
    }
    kt_rec_kinds_free(k);
    kt_rec_kinds_free(NULL);
}

static void test_publish(void)
{
    struct kt_rec_kinds *k = kt_rec_kinds_new();
    struct kt_err err = {0};
    const struct kt_kube_gvr *g = publish(k, "example.com/v1", "Widget", "widgets", &err);
    CHECK(g != NULL);
    CHECK_EQ_STR(g->group, "example.com");
    CHECK_EQ_STR(g->version, "v1");
    CHECK_EQ_STR(g->resource, "widgets");
    CHECK(kt_rec_kinds_lookup(k, "example.com/v1", "Widget") == g);
    /* the same kind again: the entry already published */
    CHECK(publish(k, "example.com/v1", "Widget", "widgets", &err) == g);
    g = publish(k, "v1", "Service", "services", &err);
    CHECK(g && strcmp(g->group, "") == 0 && strcmp(g->version, "v1") == 0);
    /* bounded: past KT_REC_KINDS_MAX nothing more is remembered */
    for (int i = 0; i < KT_REC_KINDS_MAX; i++) {
        char kind[32];
        snprintf(kind, sizeof(kind), "K%d", i);
        g = publish(k, "example.com/v2", kind, "ks", &err);
    }
    CHECK(g == NULL);
    CHECK_EQ_INT(err.code, KT_ETOOBIG);
    CHECK(kt_rec_kinds_lookup(k, "example.com/v1", "Widget") != NULL);
    kt_rec_kinds_free(k);
}

static void test_resource_of(void)
{
    struct kt_err err = {0};
    const char *doc = "{\"resources\":[{\"name\":\"widgets/status\",\"kind\":\"Widget\"},"
                      "{\"name\":\"widgets\",\"kind\":\"Widget\"},{\"name\":\"gadgets\","
                      "\"kind\":\"Gadget\"}]}";
    json_t *list = kt_json_parse(doc, strlen(doc), &err);
    CHECK(list != NULL);
    CHECK_EQ_STR(resource_of(list, "Widget"), "widgets");
    CHECK_EQ_STR(resource_of(list, "Gadget"), "gadgets");
    CHECK(resource_of(list, "Nope") == NULL);
    CHECK(resource_of(NULL, "Widget") == NULL);
    json_decref(list);
}

int main(void)
{
    kt_mem_init();
    test_builtin();
    test_cache_without_server();
    test_publish();
    test_resource_of();
    return test_report();
}

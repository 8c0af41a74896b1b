/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/test_hash.c - kt_htab, the one hash table (common/base/hash.h): insert, find,
 * replace, delete, growth, collisions and iteration. */
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/hash.h"
#include "common/base/mem.h"

struct item {
    int pad; /* the node is not first: KT_HNODE_ENTRY must subtract its offset */
    struct kt_hnode node;
    char key[16];
    int value;
};

static bool constant_hash; /* every key hashes to 7: one chain holds everything */

static uint64_t key_hash(const char *key)
{
    return constant_hash ? 7 : kt_fnv64_str(KT_FNV64_BASIS, key);
}

static uint64_t item_hash(const struct kt_hnode *n)
{
    return key_hash(KT_HNODE_CENTRY(n, struct item, node)->key);
}

static bool item_eq(const struct kt_hnode *n, const void *key)
{
    return strcmp(KT_HNODE_CENTRY(n, struct item, node)->key, key) == 0;
}

static struct item *item_new(int i)
{
    struct item *it = kt_xcalloc(1, sizeof(*it));
    snprintf(it->key, sizeof(it->key), "k%d", i);
    it->value = i;
    return it;
}

static struct item *find(const struct kt_htab *t, const char *key)
{
    struct kt_hnode *n = kt_htab_find(t, key_hash(key), item_eq, key);
    return n ? KT_HNODE_ENTRY(n, struct item, node) : NULL;
}

static void free_all(struct kt_htab *t)
{
    struct kt_hiter it;
    for (struct kt_hnode *n = kt_hiter_first(&it, t); n; n = kt_hiter_next(&it)) {
        free(KT_HNODE_ENTRY(n, struct item, node));
    }
    kt_htab_fini(t);
}

/* An empty table answers every question with nothing and holds no memory. */
static void test_empty(void)
{
    struct kt_htab t;
    struct kt_hiter it;

    kt_htab_init(&t, item_hash, 4);
    CHECK(find(&t, "k1") == NULL);
    CHECK(kt_htab_del(&t, key_hash("k1"), item_eq, "k1") == NULL);
    CHECK_EQ_INT(kt_htab_del_all(&t, key_hash("k1"), item_eq, "k1", NULL, NULL), 0);
    CHECK(kt_hiter_first(&it, &t) == NULL);
    CHECK(t.b == NULL);
    kt_htab_fini(&t);
}

/* n items in: each found with its own value, a key never inserted is not; the table grew
 * from 4 buckets to keep the chains short. */
static void insert_find(int n)
{
    struct kt_htab t;

    kt_htab_init(&t, item_hash, 4);
    for (int i = 0; i < n; i++) {
        struct item *it = item_new(i);
        kt_htab_add(&t, &it->node, key_hash(it->key));
    }
    CHECK_EQ_INT(t.n, n);
    CHECK(t.nb >= (size_t)n);
    CHECK_EQ_INT(t.nb & (t.nb - 1), 0);
    for (int i = 0; i < n; i++) {
        char key[16];
        snprintf(key, sizeof(key), "k%d", i);
        const struct item *it = find(&t, key);
        CHECK(it != NULL);
        CHECK_EQ_INT(it ? it->value : -1, i);
    }
    CHECK(find(&t, "k-1") == NULL);
    CHECK(find(&t, "") == NULL);
    free_all(&t);
}

static void test_insert_find_grow(void)
{
    constant_hash = false;
    insert_find(1000);
}

/* The same with every key in one chain: equality, not the hash, tells them apart. */
static void test_collisions(void)
{
    constant_hash = true;
    insert_find(200);
    constant_hash = false;
}

/* put replaces the node with the same key and hands the old one back; a new key gives NULL. */
static void test_put_replace(void)
{
    struct kt_htab t;
    struct item *a = item_new(1), *b = item_new(1), *c = item_new(2);

    kt_htab_init(&t, item_hash, 0);
    b->value = 100;
    CHECK(kt_htab_put(&t, &a->node, key_hash("k1"), item_eq, "k1") == NULL);
    CHECK(kt_htab_put(&t, &c->node, key_hash("k2"), item_eq, "k2") == NULL);
    CHECK(kt_htab_put(&t, &b->node, key_hash("k1"), item_eq, "k1") == &a->node);
    CHECK_EQ_INT(t.n, 2);
    CHECK_EQ_INT(t.nb, 16);
    CHECK_EQ_INT(find(&t, "k1")->value, 100);
    CHECK_EQ_INT(find(&t, "k2")->value, 2);
    free(a);
    free_all(&t);
}

/* del unlinks one key (a second del finds nothing); unlink takes a known node; the rest stay. */
static void test_delete(void)
{
    struct kt_htab t;
    struct item *items[50];

    for (int pass = 0; pass < 2; pass++) {
        constant_hash = pass == 1;
        kt_htab_init(&t, item_hash, 4);
        for (int i = 0; i < 50; i++) {
            items[i] = item_new(i);
            kt_htab_add(&t, &items[i]->node, key_hash(items[i]->key));
        }
        struct kt_hnode *n = kt_htab_del(&t, key_hash("k10"), item_eq, "k10");
        CHECK(n == &items[10]->node);
        CHECK(kt_htab_del(&t, key_hash("k10"), item_eq, "k10") == NULL);
        kt_htab_unlink(&t, &items[20]->node, key_hash("k20"));
        CHECK_EQ_INT(t.n, 48);
        CHECK(find(&t, "k10") == NULL);
        CHECK(find(&t, "k20") == NULL);
        CHECK(find(&t, "k0") == items[0]);
        CHECK(find(&t, "k49") == items[49]);
        free(items[10]);
        free(items[20]);
        free_all(&t);
    }
    constant_hash = false;
}

static bool starts_with_k1(const struct kt_hnode *n, const void *key)
{
    (void)key;
    return KT_HNODE_CENTRY(n, struct item, node)->key[1] == '1';
}

static void count_and_free(struct kt_hnode *n, void *ctx)
{
    (*(int *)ctx)++;
    free(KT_HNODE_ENTRY(n, struct item, node));
}

/* del_all removes every node of one chain that matches, and only those. */
static void test_del_all(void)
{
    struct kt_htab t;
    int freed = 0;

    constant_hash = true;
    kt_htab_init(&t, item_hash, 0);
    for (int i = 0; i < 30; i++) {
        struct item *it = item_new(i);
        kt_htab_add(&t, &it->node, 7);
    }
    /* k1, k10..k19: 11 keys */
    CHECK_EQ_INT(kt_htab_del_all(&t, 7, starts_with_k1, NULL, count_and_free, &freed), 11);
    CHECK_EQ_INT(freed, 11);
    CHECK_EQ_INT(t.n, 19);
    CHECK(find(&t, "k15") == NULL);
    CHECK(find(&t, "k25") != NULL);
    CHECK_EQ_INT(kt_htab_del_all(&t, 7, starts_with_k1, NULL, count_and_free, &freed), 0);
    free_all(&t);
    constant_hash = false;
}

/* Iteration visits every node exactly once, also while it frees what it visits. */
static void test_iteration(void)
{
    struct kt_htab t;
    struct kt_hiter it;
    int seen[300] = {0}, visits = 0;

    kt_htab_init(&t, item_hash, 0);
    for (int i = 0; i < 300; i++) {
        struct item *x = item_new(i);
        kt_htab_add(&t, &x->node, key_hash(x->key));
    }
    for (struct kt_hnode *n = kt_hiter_first(&it, &t); n; n = kt_hiter_next(&it)) {
        seen[KT_HNODE_ENTRY(n, struct item, node)->value]++;
        visits++;
    }
    CHECK_EQ_INT(visits, 300);
    int once = 0;
    for (int i = 0; i < 300; i++) {
        once += seen[i] == 1;
    }
    CHECK_EQ_INT(once, 300);
    free_all(&t);
    CHECK(t.b == NULL);
    CHECK_EQ_INT(t.n, 0);
}

int main(void)
{
    kt_mem_init();
    test_empty();
    test_insert_find_grow();
    test_collisions();
    test_put_replace();
    test_delete();
    test_del_all();
    test_iteration();
    return test_report();
}

/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_render.c - libFuzzer target for the whole render pipeline.
 *
 * Target: kt_render_trainjob (kt_trainjob_decode, kt_runtime_decode, kt_framework_validate,
 * kt_framework_build, kt_snapshot_read, the plugins)
 * The input is a YAML stream: TrainJob documents are rendered against the runtime
 * documents of the same stream, every other document is cluster state (so existing JobSets
 * and snapshots are reached too). Each TrainJob renders with and without validation.
 * Deterministic: the only entropy consumer (the MPI SSH key) gets a fixed test-only PEM. Property:
 * no crash, leak or hang, and a successful render returns only objects with apiVersion, kind and
 * metadata.name. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/framework/framework.h"
#include "common/base/mem.h"
#include "common/framework/render.h"
#include "common/base/yaml.h"
#include "common/plugins/plugins.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A throwaway P-521 key for determinism; never used for anything real. */
static const char fixed_key[] = "-----BEGIN EC PRIVATE KEY-----\n"
                                "MIHcAgEBBEIBmiKRt0CDe41tQQat5bi063UXKsyO1d5m10KsHjr72aNtnRsgTLlw\n"
                                "u4CjD9Fmx+w4owYOtPTPAzi+U92kQVjbxC6gBwYFK4EEACOhgYkDgYYABAGvEdz0\n"
                                "t8wBCqAyCIFAzg2YaqRzAp16uoVEkAY631mrvn8+iENStkNv5oEIUyIntqwBzeVC\n"
                                "nqjQhcvl/PK2wvUBIgGZW/TkgaD46nGN//EXpeWRKcCtiE6AsW4aD9/PA9lhoHkf\n"
                                "NgeNGoOSKDooqHEyKKAp2/ky7V/+yoPw6onVLN9vLQ==\n"
                                "-----END EC PRIVATE KEY-----\n";

static void check_items(const json_t *items)
{
    size_t i;
    json_t *o;
    json_array_foreach(items, i, o)
    {
        json_t *meta = json_object_get(o, "metadata");
        if (!json_is_string(json_object_get(o, "apiVersion")) ||
            !json_is_string(json_object_get(o, "kind")) ||
            !json_is_string(json_object_get(meta, "name"))) {
            abort();
        }
    }
}

static void render_all(const json_t *tjs, const json_t *runtimes, const json_t *objects)
{
    struct kt_framework fw;
    size_t i;
    json_t *tj;
    kt_framework_default(&fw);
    json_array_foreach(tjs, i, tj)
    {
        for (int nv = 0; nv < 2; nv++) {
            struct kt_render_opts opts = {.ssh_key_pem = fixed_key, .no_validate = nv == 1};
            struct kt_ferrs denial;
            struct kt_strv warnings;
            struct kt_err err = {0};
            json_t *items = json_array();
            kt_ferrs_init(&denial);
            kt_strv_init(&warnings);
            struct kt_render_req req = {
                .trainjob = tj, .runtimes = runtimes, .objects = objects, .opts = &opts};
            if (kt_render_trainjob(&fw, &req, items, &denial, &warnings, &err) == 0) {
                check_items(items);
            }
            char *msg = kt_ferrs_string(&denial);
            free(msg);
            json_decref(items);
            kt_ferrs_release(&denial);
            kt_strv_release(&warnings);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kt_yaml_limits lim;
    struct kt_yaml_stream s = {0};
    json_t *tjs = json_array(), *runtimes = json_array(), *objects = json_array();
    kt_mem_init();
    kt_yaml_limits_default(&lim);
    lim.max_bytes = 1 << 16;
    lim.max_nodes = 20000;
    if (kt_yaml_parse((const char *)data, size, &lim, &s, NULL) == 0) {
        for (size_t d = 0; d < s.len; d++) {
            json_t *root = s.docs[d].root;
            if (!json_is_object(root)) {
                continue;
            }
            if (kt_render_is_kind(root, "TrainJob")) {
                json_array_append(tjs, root);
            } else if (kt_render_is_kind(root, "TrainingRuntime") ||
                       kt_render_is_kind(root, "ClusterTrainingRuntime")) {
                json_array_append(runtimes, root);
            } else {
                json_array_append(objects, root);
            }
        }
        render_all(tjs, runtimes, objects);
    }
    kt_yaml_stream_release(&s);
    json_decref(tjs);
    json_decref(runtimes);
    json_decref(objects);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_quantity.c - libFuzzer target for quantity parsing and printing.
 *
 * Property: any accepted input prints a string that parses again to the same value, and
 * printing is stable from then on. Two upstream behaviours are allowed for: decimal values
 * whose canonical exponent has no suffix (10^21 and up print their bare mantissa: lossy), and
 * a BinarySI value that is no multiple of 1024 printing bare, which parses again as DecimalSI
 * and may print differently ("99999012937.5Ki" -> "102398989248000" -> "102398989248k",
 * as apimachinery v0.35.4 does; the value is the same). */
/* Target: kt_quantity_parse */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/mem.h"
#include "common/base/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static kt_i128 pow10_i128(int n)
{
    kt_i128 v = 1;
    while (n-- > 0) {
        v *= 10;
    }
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kt_quantity q1, q2, q3;
    struct kt_err err = {0};
    char s1[KT_QUANTITY_STR_MAX], s2[KT_QUANTITY_STR_MAX], s3[KT_QUANTITY_STR_MAX];

    kt_mem_init();
    if (kt_quantity_parse((const char *)data, size, &q1, &err) < 0) {
        return 0;
    }
    kt_quantity_format(&q1, s1, sizeof(s1));
    if (kt_quantity_parse_c(s1, &q2, &err) < 0) {
        abort();
    }
    kt_quantity_format(&q2, s2, sizeof(s2));
    size_t n1 = strlen(s1);
    bool bare = n1 > 0 && s1[n1 - 1] >= '0' && s1[n1 - 1] <= '9';
    if (strcmp(s1, s2) != 0 && !(q1.format == KT_QF_BINARY_SI && bare)) {
        abort();
    }
    if (kt_quantity_parse_c(s2, &q3, &err) < 0) {
        abort();
    }
    kt_quantity_format(&q3, s3, sizeof(s3));
    if (strcmp(s2, s3) != 0) {
        abort();
    }
    kt_i128 mag = q1.nano < 0 ? -q1.nano : q1.nano;
    if (mag < pow10_i128(30) && kt_quantity_cmp(&q1, &q2) != 0) {
        abort();
    }
    /* Arithmetic must never crash and must keep exactness when it succeeds. */
    q3 = q1;
    if (kt_quantity_add(&q3, &q2, &err) == 0 && kt_quantity_sub(&q3, &q2, &err) == 0 &&
        kt_quantity_cmp(&q3, &q1) != 0) {
        abort();
    }
    q3 = q1;
    if (kt_quantity_mul(&q3, 3, &err) == 0 && q3.nano != q1.nano * 3) {
        abort();
    }
    return 0;
}

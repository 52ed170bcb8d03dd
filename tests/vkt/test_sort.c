/* test_sort.c — vkt_sort and vkt_argsort natively against the host reference:
 * every axis of rank-3 tensors, ties (stability shows in argsort), NaN and
 * signed zeros, descending order, rows shorter and longer than one shared-
 * memory block (2,048), and the error contract. Sorting is exact: results must
 * match bit for bit (H_EXACT; NaN meets NaN). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

TestSuite(sort, .init = h_setup, .fini = h_teardown);

typedef struct sort_arg {
    int axis;
    bool desc, arg;
} sort_arg;

static int call_sort(vkt_tensor *const *in, const void *arg, vkt_tensor **out)
{
    const sort_arg *a = arg;
    return a->arg ? vkt_argsort(in[0], a->axis, a->desc, out)
                  : vkt_sort(in[0], a->axis, a->desc, out);
}

static void check_all(vkt_tensor *x, const h_shape *s, const char *label)
{
    for (int axis = 0; axis < (s->rank > 0 ? s->rank : 1); axis++)
        for (int desc = 0; desc < 2; desc++)
            for (int arg = 0; arg < 2; arg++) {
                sort_arg a = {axis, desc, arg};
                char what[160];
                snprintf(what, sizeof what, "%s %s%s axis %d%s", arg ? "argsort" : "sort", label,
                         h_shape_str(s), axis, desc ? " desc" : "");
                h_check(call_sort, &x, 1, &a, H_EXACT, what);
            }
}

Test(sort, every_axis_with_ties_and_nan)
{
    /* Few distinct values, so ties abound; NaN, infinities and both zeros. */
    static const double vals[] = {3, 1,         NAN, -0.0, 2,  1, 0.0, INFINITY,
                                  3, -INFINITY, 1,   NAN,  -2, 2, 0.5};
    static const h_shape shapes[] = {{3, {4, 5, 6}}, {3, {1, 7, 1}}, {3, {3, 33, 2}},
                                     {3, {2, 0, 3}}, {1, {1}},       {0, {0}},
                                     {2, {300, 3}}};
    static const vkt_dtype dts[] = {VKT_F32, VKT_F64, VKT_S32, VKT_U8};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int d = 0; d < 4; d++) {
            /* Integer dtypes get the same pattern without NaN and infinities. */
            double iv[sizeof vals / sizeof vals[0]];
            for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++)
                iv[k] = isfinite(vals[k]) ? fabs(vals[k]) * 7 : 5;
            vkt_tensor *x =
                h_from(dts[d], &shapes[i], dts[d] == VKT_F32 || dts[d] == VKT_F64 ? vals : iv,
                       sizeof vals / sizeof vals[0]);
            check_all(x, &shapes[i], vkt_dtype_name(dts[d]));
            vkt_tensor_free(x);
        }
}

/* Subnormals are values: they sort between the zeros and the normals on every
 * device (f32 keys compare on the bits), and -0 ties with +0 (stable). */
Test(sort, subnormals_and_signed_zeros)
{
    static const double vals[] = {1e-40,     0.0, -1e-40, -0.0,   0x1p-149, 1e-30,
                                  -0x1p-149, 0.0, 1e-40,  -1e-30, 0x1p-126, -0.0};
    static const h_shape shapes[] = {{1, {12}}, {2, {3, 4}}, {2, {4, 3}}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int d = 0; d < 2; d++) {
            vkt_dtype dt = d ? VKT_F64 : VKT_F32;
            vkt_tensor *x = h_from(dt, &shapes[i], vals, sizeof vals / sizeof vals[0]);
            check_all(x, &shapes[i], vkt_dtype_name(dt));
            vkt_tensor_free(x);
        }
}

Test(sort, long_rows_merge)
{
    /* Rows past one block (2,048) go through merge passes: powers of two and
     * not, along the last axis and along a strided one. */
    static const h_shape shapes[] = {{1, {2049}}, {2, {2, 5000}}, {2, {4096, 2}}, {1, {20000}}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        vkt_tensor *r = h_rand(VKT_F32, &shapes[i], -100, 100, 7 + i);
        check_all(r, &shapes[i], "f32 random");
        vkt_tensor_free(r);
        /* Heavy ties in long rows: stability across merges. */
        static const double few[] = {2, 1, 3, 1, NAN, 2};
        vkt_tensor *t = h_from(VKT_F32, &shapes[i], few, 6);
        check_all(t, &shapes[i], "f32 ties");
        vkt_tensor_free(t);
        vkt_tensor *u = h_rand(VKT_U8, &shapes[i], 0, 255, 11 + i);
        check_all(u, &shapes[i], "u8");
        vkt_tensor_free(u);
    }
}

Test(sort, many_rows)
{
    /* Many short rows packed into shared blocks (8 slots each, 256 rows a
     * workgroup). Past 65,535 workgroups, or 65,535 * 256 elements in a merge
     * pass, takes minutes on lavapipe: those grid loops are left to GPU runs. */
    h_shape s = {2, {300000, 5}};
    vkt_tensor *x = h_rand(VKT_S32, &s, -3, 3, 21);
    sort_arg a = {1, false, true};
    h_check(call_sort, &x, 1, &a, H_EXACT, "argsort s32[300000,5] axis 1");
    vkt_tensor_free(x);
}

/* Lavapipe ends an invocation's loops after 65,535 iterations in all. Sorting
 * keeps every invocation's walk short whatever the row length: a block pass
 * is ~440 loop steps per workgroup slot (11 bitonic stages over 2,048 slots)
 * and a merge pass one binary search (log2 of the run width, at most 25) per
 * element, one dispatch per doubling. These rows are the longest the suite can
 * afford on lavapipe: 131,073 along a strided axis (merges across 7 doublings
 * with a partial last run) and 2,097,152 + 5 along the last axis (11 merge
 * passes, binary searches of 20 steps); values and indices must match. */
Test(sort, loop_limit_long_axes, .timeout = 240)
{
    h_shape s = {2, {131073, 2}};
    vkt_tensor *x = h_rand(VKT_F32, &s, -1000, 1000, 41);
    sort_arg a = {0, false, true};
    h_check(call_sort, &x, 1, &a, H_EXACT, "argsort f32[131073,2] axis 0");
    vkt_tensor_free(x);
    h_shape l = {1, {2097157}};
    vkt_tensor *y = h_rand(VKT_S32, &l, -50000, 50000, 42);
    sort_arg b = {0, true, false};
    h_check(call_sort, &y, 1, &b, H_EXACT, "sort s32[2097157] desc");
    sort_arg c = {0, false, true};
    h_check(call_sort, &y, 1, &c, H_EXACT, "argsort s32[2097157]");
    vkt_tensor_free(y);
}

/* Rows longer than a block merge through two s32 index buffers of the whole tensor;
 * past maxStorageBufferRange (128 MiB on lavapipe: 32M elements) they cannot bind,
 * so a u8 tensor small enough itself falls back, with its reason, and stays right. */
Test(sort, merge_scratch_past_the_buffer_range_falls_back, .timeout = 240)
{
    /* The merge keeps a 4-byte index an element: past a quarter of the range. */
    int64_t n = h_past_range(4, 5);
    h_shape s = {1, {n}};
    vkt_tensor *x = h_rand(VKT_U8, &s, 0, 255, 43), *y = NULL;
    vkt_stats_reset();
    cr_assert_eq(vkt_sort(x, 0, false, &y), VKT_OK, "%s", vkt_last_error());
    vkt_stats_entry e[64];
    size_t ns = vkt_stats(e, 64), fallbacks = 0;
    for (size_t i = 0; i < ns && i < 64; i++)
        if (strcmp(e[i].op, "sort") == 0)
            fallbacks = e[i].fallback;
    cr_expect_eq(fallbacks, 1, "u8[%lld] sort: %zu fallbacks, want 1 (the scratch gate)",
                 (long long)n, fallbacks);
    uint8_t *v = malloc((size_t)s.d[0]);
    cr_assert_not_null(v);
    cr_assert_eq(vkt_tensor_read(y, v, (size_t)s.d[0]), VKT_OK);
    size_t bad = 0;
    for (int64_t i = 1; i < s.d[0]; i++)
        bad += v[i - 1] > v[i];
    cr_expect_eq(bad, 0, "%zu elements out of order", bad);
    free(v);
    vkt_tensor_free(y);
    vkt_tensor_free(x);
}

Test(sort, errors)
{
    h_shape s = {2, {3, 4}};
    vkt_tensor *x = h_rand(VKT_F32, &s, -1, 1, 1), *out = (vkt_tensor *)1;
    cr_expect_eq(vkt_sort(x, 2, false, &out), VKT_EAXIS);
    cr_expect_null(out);
    cr_expect_eq(vkt_argsort(x, -3, false, &out), VKT_EAXIS);
    cr_expect_eq(vkt_sort(x, 0, false, NULL), VKT_EINVAL);
    cr_expect_eq(vkt_argsort(NULL, 0, false, &out), VKT_EINVAL);
    H_NATIVE(vkt_sort(x, -1, true, &out));
    cr_expect_eq(vkt_tensor_dtype(out), VKT_F32);
    vkt_tensor_free(out);
    H_NATIVE(vkt_argsort(x, 0, false, &out));
    cr_expect_eq(vkt_tensor_dtype(out), VKT_S32);
    vkt_tensor_free(out);
    vkt_tensor_free(x);
}

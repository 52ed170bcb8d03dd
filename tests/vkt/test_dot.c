/* test_dot.c — vkt_dot natively against the host reference over many shapes
 * and axis combinations, and its error contract.
 *
 * Tolerance: the GPU accumulates in the compute dtype (f32 or f64), the
 * reference in double, so an output differs by at most about K * eps * sum|a b|.
 * With inputs in [-1, 1] we allow |gpu - ref| <= 1e-5 * K * max|a| * max|b| for
 * f32 (about 170 f32 epsilons per term, far above the typical sqrt(K) growth)
 * and 1e-13 * K for f64; integers (wrapping) and u8 compare exactly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

TestSuite(dot, .init = h_setup, .fini = h_teardown);

typedef struct dot_arg {
    int ca[VKT_MAX_RANK], ba[VKT_MAX_RANK], cb[VKT_MAX_RANK], bb[VKT_MAX_RANK];
    int nc, nb;
} dot_arg;

static int call_dot(vkt_tensor *const *in, const void *arg, vkt_tensor **out)
{
    const dot_arg *d = arg;
    return vkt_dot(in[0], d->ca, d->ba, in[1], d->cb, d->bb, d->nc, d->nb, out);
}

static h_shape shp(int rank, const int64_t *d)
{
    h_shape s = {.rank = rank};
    if (rank > 0) /* d may be NULL for a scalar */
        memcpy(s.d, d, sizeof(int64_t) * (size_t)rank);
    return s;
}

/* max|a| * max|b| scales the bound: inputs are not all in [-1, 1]. */
static h_tol tol_for(vkt_dtype dt, int64_t K, double amax, double bmax)
{
    double k = (K > 0 ? (double)K : 1.0) * amax * bmax;
    if (dt == VKT_F32)
        return (h_tol){1e-5 * k, 0, 0};
    if (dt == VKT_F64)
        return (h_tol){1e-13 * k, 0, 0};
    return H_EXACT;
}

static double range_of(vkt_dtype dt)
{
    return dt == VKT_U8 ? 255 : dt == VKT_S32 ? 100000 : 1;
}

/* Runs one contraction of random operands and checks it natively (h_check
 * checks the path too). */
static void check(vkt_dtype da, const h_shape *sa, vkt_dtype db, const h_shape *sb,
                  const dot_arg *arg, uint64_t seed)
{
    double ra = range_of(da), rb = range_of(db);
    vkt_tensor *in[2] = {h_rand(da, sa, da == VKT_U8 ? 0 : -ra, ra, seed),
                         h_rand(db, sb, db == VKT_U8 ? 0 : -rb, rb, seed + 1)};
    int64_t K = 1;
    for (int i = 0; i < arg->nc; i++)
        K *= sa->d[arg->ca[i] < 0 ? arg->ca[i] + sa->rank : arg->ca[i]];
    char what[256], astr[96];
    snprintf(astr, sizeof astr, "%s", h_shape_str(sa));
    snprintf(what, sizeof what, "dot %s%s x %s%s nc=%d nb=%d", vkt_dtype_name(da), astr,
             vkt_dtype_name(db), h_shape_str(sb), arg->nc, arg->nb);
    vkt_dtype dt = da;
    if (da == VKT_F64 || db == VKT_F64)
        dt = VKT_F64;
    else if (da == VKT_F32 || db == VKT_F32)
        dt = VKT_F32;
    else if (da == VKT_S32 || db == VKT_S32)
        dt = VKT_S32;
    h_check(call_dot, in, 2, arg, tol_for(dt, K, ra, rb), what);
    vkt_tensor_free(in[0]);
    vkt_tensor_free(in[1]);
}

Test(dot, matmul_sizes)
{
    static const int64_t sizes[] = {0, 1, 3, 17, 64, 129, 300};
    dot_arg arg = {.ca = {1}, .cb = {0}, .nc = 1};
    uint64_t seed = 1;
    for (size_t i = 0; i < 7; i++)
        for (size_t j = 0; j < 7; j++)
            for (size_t k = 0; k < 7; k++) {
                int64_t M = sizes[i], N = sizes[j], K = sizes[k];
                /* Large-by-large-by-large products only on the diagonal: the rest adds time,
                 * not cover. */
                if (M * N * K > 300 * 300 * 17 && !(i == j && j == k))
                    continue;
                h_shape sa = shp(2, (int64_t[]){M, K}), sb = shp(2, (int64_t[]){K, N});
                check(VKT_F32, &sa, VKT_F32, &sb, &arg, seed++);
            }
}

Test(dot, transposed_operands)
{
    static const int64_t sizes[][3] = {
        {1, 1, 1}, {3, 5, 7}, {64, 64, 64}, {129, 17, 300}, {300, 129, 33}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int64_t M = sizes[i][0], N = sizes[i][1], K = sizes[i][2];
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                dot_arg arg = {.ca = {ta ? 0 : 1}, .cb = {tb ? 1 : 0}, .nc = 1};
                h_shape sa = ta ? shp(2, (int64_t[]){K, M}) : shp(2, (int64_t[]){M, K});
                h_shape sb = tb ? shp(2, (int64_t[]){N, K}) : shp(2, (int64_t[]){K, N});
                check(VKT_F32, &sa, VKT_F32, &sb, &arg, 100 + i * 4 + (size_t)(ta * 2 + tb));
            }
    }
}

Test(dot, vectors_and_outer)
{
    static const int64_t ks[] = {0, 1, 5, 1000, 70001};
    for (size_t i = 0; i < 5; i++) {
        h_shape v = shp(1, (int64_t[]){ks[i]});
        dot_arg inner = {.ca = {0}, .cb = {0}, .nc = 1};
        check(VKT_F32, &v, VKT_F32, &v, &inner, 200 + i);
        h_shape m = shp(2, (int64_t[]){37, ks[i]}), mt = shp(2, (int64_t[]){ks[i], 37});
        dot_arg mv = {.ca = {1}, .cb = {0}, .nc = 1};
        check(VKT_F32, &m, VKT_F32, &v, &mv, 210 + i);
        dot_arg vm = {.ca = {0}, .cb = {0}, .nc = 1};
        check(VKT_F32, &v, VKT_F32, &mt, &vm, 220 + i);
    }
    /* No contraction: an outer product, and a scalar times a tensor. */
    h_shape a = shp(2, (int64_t[]){3, 70}), b = shp(1, (int64_t[]){129}), s = shp(0, NULL);
    dot_arg none = {.nc = 0};
    check(VKT_F32, &a, VKT_F32, &b, &none, 230);
    check(VKT_F32, &s, VKT_F32, &a, &none, 231);
    check(VKT_F32, &a, VKT_F32, &s, &none, 232);
}

Test(dot, axis_combinations)
{
    /* Batch axes not leading, contracting axes in the middle, two contracting
     * axes in either order, free axes that are not adjacent (these need the
     * packing copy), and negative axis numbers. */
    struct {
        h_shape a, b;
        dot_arg arg;
    } cases[] = {
        {shp(3, (int64_t[]){5, 4, 7}),
         shp(3, (int64_t[]){7, 4, 6}),
         {.ca = {2}, .ba = {1}, .cb = {0}, .bb = {1}, .nc = 1, .nb = 1}},
        {shp(3, (int64_t[]){5, 9, 7}),
         shp(3, (int64_t[]){6, 9, 5}),
         {.ca = {0}, .ba = {1}, .cb = {2}, .bb = {1}, .nc = 1, .nb = 1}},
        {shp(3, (int64_t[]){3, 33, 4}),
         shp(2, (int64_t[]){33, 6}),
         {.ca = {1}, .cb = {0}, .nc = 1}},
        {shp(3, (int64_t[]){3, 4, 5}),
         shp(3, (int64_t[]){4, 5, 6}),
         {.ca = {1, 2}, .cb = {0, 1}, .nc = 2}},
        {shp(3, (int64_t[]){3, 4, 5}),
         shp(3, (int64_t[]){5, 4, 6}),
         {.ca = {2, 1}, .cb = {0, 1}, .nc = 2}},
        {shp(3, (int64_t[]){3, 4, 5}),
         shp(3, (int64_t[]){6, 5, 4}),
         {.ca = {1, 2}, .cb = {2, 1}, .nc = 2}},
        {shp(4, (int64_t[]){2, 3, 4, 5}),
         shp(3, (int64_t[]){5, 3, 2}),
         {.ca = {1, -1}, .cb = {1, 0}, .nc = 2}},
        {shp(4, (int64_t[]){2, 7, 3, 5}),
         shp(4, (int64_t[]){3, 5, 2, 4}),
         {.ca = {3}, .ba = {2, 0}, .cb = {1}, .bb = {0, 2}, .nc = 1, .nb = 2}},
        {shp(4, (int64_t[]){6, 2, 65, 3}),
         shp(3, (int64_t[]){3, 6, 70}),
         {.ca = {3}, .ba = {0}, .cb = {0}, .bb = {1}, .nc = 1, .nb = 1}},
        {shp(5, (int64_t[]){2, 3, 1, 4, 5}),
         shp(4, (int64_t[]){5, 1, 3, 2}),
         {.ca = {4, 2}, .ba = {0}, .cb = {0, 1}, .bb = {3}, .nc = 2, .nb = 1}},
        {shp(3, (int64_t[]){4, 130, 129}),
         shp(3, (int64_t[]){4, 129, 131}),
         {.ca = {2}, .ba = {0}, .cb = {1}, .bb = {0}, .nc = 1, .nb = 1}},
        {shp(3, (int64_t[]){2, 0, 5}),
         shp(3, (int64_t[]){2, 5, 3}),
         {.ca = {2}, .ba = {0}, .cb = {1}, .bb = {0}, .nc = 1, .nb = 1}},
        {shp(3, (int64_t[]){2, 4, 0}),
         shp(3, (int64_t[]){2, 0, 3}),
         {.ca = {2}, .ba = {0}, .cb = {1}, .bb = {0}, .nc = 1, .nb = 1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(VKT_F32, &cases[i].a, VKT_F32, &cases[i].b, &cases[i].arg, 300 + i);
}

Test(dot, dtypes)
{
    static const vkt_dtype dts[] = {VKT_F32, VKT_F64, VKT_S32, VKT_U8};
    h_shape sa = shp(3, (int64_t[]){3, 19, 70}), sb = shp(3, (int64_t[]){70, 3, 23});
    dot_arg arg = {.ca = {2}, .ba = {0}, .cb = {0}, .bb = {1}, .nc = 1, .nb = 1};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            check(dts[i], &sa, dts[j], &sb, &arg, 400 + (uint64_t)(i * 4 + j));
}

Test(dot, grid_limits)
{
    /* More than 65,535 batches (the z loop) and more than 65,535 row tiles (the y loop). */
    h_shape qa = shp(3, (int64_t[]){70000, 2, 3}), qb = shp(3, (int64_t[]){70000, 3, 1});
    dot_arg bat = {.ca = {2}, .ba = {0}, .cb = {1}, .bb = {0}, .nc = 1, .nb = 1};
    check(VKT_F32, &qa, VKT_F32, &qb, &bat, 500);
    h_shape big = h_huge_shape();
    h_shape ma = shp(2, (int64_t[]){(int64_t)h_numel(&big), 1}), mb = shp(1, (int64_t[]){1});
    dot_arg mv = {.ca = {1}, .cb = {0}, .nc = 1};
    check(VKT_F32, &ma, VKT_F32, &mb, &mv, 501);
}

/* Every kernel on every operand layout, chosen through VKT_DOT_KERNEL (the
 * automatic choice never takes the large tiles on a CPU device, nor on the
 * small products a test can afford): row- and column-major operands, batches,
 * sizes that are not multiples of a tile, and K and M not multiples of 4,
 * where the 4-vector loads must stand aside. */
Test(dot, every_kernel_on_every_layout, .timeout = 240)
{
    static const char *const kernels[] = {"direct", "tiny", "small", "big", "big_vec", "tall_vec"};
    struct {
        h_shape a, b;
        dot_arg arg;
    } cases[] = {
        {shp(2, (int64_t[]){130, 36}),
         shp(2, (int64_t[]){36, 260}),
         {.ca = {1}, .cb = {0}, .nc = 1}},
        {shp(2, (int64_t[]){260, 36}),
         shp(2, (int64_t[]){36, 132}),
         {.ca = {1}, .cb = {0}, .nc = 1}},
        {shp(2, (int64_t[]){36, 132}),
         shp(2, (int64_t[]){36, 260}),
         {.ca = {0}, .cb = {0}, .nc = 1}},
        {shp(2, (int64_t[]){132, 36}),
         shp(2, (int64_t[]){264, 36}),
         {.ca = {1}, .cb = {1}, .nc = 1}},
        {shp(2, (int64_t[]){66, 37}),
         shp(2, (int64_t[]){37, 129}),
         {.ca = {1}, .cb = {0}, .nc = 1}},
        {shp(2, (int64_t[]){37, 66}),
         shp(2, (int64_t[]){130, 37}),
         {.ca = {0}, .cb = {1}, .nc = 1}},
        {shp(3, (int64_t[]){3, 40, 24}),
         shp(3, (int64_t[]){3, 24, 44}),
         {.ca = {2}, .ba = {0}, .cb = {1}, .bb = {0}, .nc = 1, .nb = 1}},
        /* LeNet's dense layers at batch 8: forward, weight and input gradients */
        {shp(2, (int64_t[]){8, 400}),
         shp(2, (int64_t[]){400, 120}),
         {.ca = {1}, .cb = {0}, .nc = 1}},
        {shp(2, (int64_t[]){8, 120}), shp(2, (int64_t[]){8, 400}), {.ca = {0}, .cb = {0}, .nc = 1}},
        {shp(2, (int64_t[]){8, 120}),
         shp(2, (int64_t[]){400, 120}),
         {.ca = {1}, .cb = {1}, .nc = 1}},
    };
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        h_teardown();
        cr_assert_eq(setenv("VKT_DOT_KERNEL", kernels[k], 1), 0);
        h_setup();
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            check(VKT_F32, &cases[i].a, VKT_F32, &cases[i].b, &cases[i].arg, 600 + 20 * k + i);
    }
    unsetenv("VKT_DOT_KERNEL");
}

Test(dot, errors)
{
    h_shape s34 = shp(2, (int64_t[]){3, 4}), s54 = shp(2, (int64_t[]){5, 4}),
            s234 = shp(3, (int64_t[]){2, 3, 4});
    vkt_tensor *a = h_rand(VKT_F32, &s34, -1, 1, 1), *b = h_rand(VKT_F32, &s54, -1, 1, 2),
               *c = h_rand(VKT_F32, &s234, -1, 1, 3), *out = (vkt_tensor *)1;
    int c0[] = {0}, c1[] = {1}, c2[] = {2}, c11[] = {1, 1}, c3[] = {3}, cm3[] = {-3};
    cr_expect_eq(vkt_dot(a, c0, NULL, b, c0, NULL, 1, 0, &out), VKT_ESHAPE,
                 "contracting sizes 3 and 5");
    cr_expect_null(out);
    cr_expect_eq(vkt_dot(a, c11, NULL, c, c11, NULL, 2, 0, &out), VKT_EAXIS, "repeated axis");
    cr_expect_eq(vkt_dot(a, c1, c1, c, c2, c0, 1, 1, &out), VKT_EAXIS,
                 "axis both batch and contracting");
    cr_expect_eq(vkt_dot(c, c2, c0, b, c1, c0, 1, 1, &out), VKT_ESHAPE, "batch sizes 2 and 5");
    cr_expect_eq(vkt_dot(a, c2, NULL, b, c1, NULL, 1, 0, &out), VKT_EAXIS, "axis 2 of a rank-2 a");
    cr_expect_eq(vkt_dot(a, c1, NULL, c, c3, NULL, 1, 0, &out), VKT_EAXIS, "axis 3 of a rank-3 b");
    cr_expect_eq(vkt_dot(a, cm3, NULL, b, c1, NULL, 1, 0, &out), VKT_EAXIS,
                 "axis -3 of a rank-2 a");
    cr_expect_eq(vkt_dot(a, NULL, NULL, b, c1, NULL, 1, 0, &out), VKT_EINVAL,
                 "NULL ca with nc = 1");
    cr_expect_eq(vkt_dot(a, c1, NULL, b, c1, NULL, -1, 0, &out), VKT_EINVAL, "negative nc");
    cr_expect_eq(vkt_dot(a, c1, NULL, b, c1, NULL, 1, 0, NULL), VKT_EINVAL, "NULL out");
    cr_expect_eq(vkt_dot(NULL, c1, NULL, b, c1, NULL, 1, 0, &out), VKT_EINVAL, "NULL a");
    /* Rank 7 result: 4 free axes of a and 3 of b. */
    h_shape r4 = shp(4, (int64_t[]){1, 1, 1, 1}), r3 = shp(3, (int64_t[]){1, 1, 1});
    vkt_tensor *x = h_rand(VKT_F32, &r4, -1, 1, 4), *y = h_rand(VKT_F32, &r3, -1, 1, 5);
    cr_expect_eq(vkt_dot(x, NULL, NULL, y, NULL, NULL, 0, 0, &out), VKT_ESHAPE, "rank 7 result");
    cr_expect_null(out);
    vkt_tensor_free(a);
    vkt_tensor_free(b);
    vkt_tensor_free(c);
    vkt_tensor_free(x);
    vkt_tensor_free(y);
}

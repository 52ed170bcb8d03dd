/* test_reduce.c — sum, product, reduce_max, reduce_min, all, any, argmax and
 * argmin on every dtype, native against the host reference, over the harness's
 * shapes with many axis sets (none, all, each, first+last, middle, negative,
 * kept), shapes that take each kernel shape and work split, one reduction past
 * 65,535 workgroups of 256, the longest walks lavapipe's loop limit could cut
 * (30M-100M elements), NaN and tie semantics, and the error contract.
 *
 * Tolerances (native vs the reference, which accumulates floats in double):
 *  - f32 sum: |got - want| <= 1e-5 * sum|x| (over the whole input, which bounds
 *    every output's sum|x|): the GPU adds in float in tree order.
 *  - f64 sum: 1e-13 * sum|x|.
 *  - f32 product: relative 1.2e-7 * (nred + 1), the first-order bound of nred
 *    float roundings in any order; f64 likewise with 2.3e-16.
 *  - everything else exact: max/min, all/any, argmax/argmin, and integer sums
 *    and products (both wrap to 32 bits).
 * Every native call must also count as native in vkt_stats (no silent fallback). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

TestSuite(reduce, .init = h_setup, .fini = h_teardown, .timeout = 240);

static const vkt_dtype dtypes[VKT_NUM_DTYPES] = {VKT_F32, VKT_F64, VKT_S32, VKT_U8};

typedef int (*red_fn)(const vkt_tensor *, const int *, int, bool, vkt_tensor **);
typedef int (*arg_fn)(const vkt_tensor *, int, bool, vkt_tensor **);

typedef struct red_op {
    const char *name;
    red_fn fn;  /* reductions over an axis set */
    arg_fn afn; /* argmax/argmin */
} red_op;

static const red_op ops[] = {
    {"sum", vkt_sum, NULL},
    {"product", vkt_product, NULL},
    {"reduce_max", vkt_reduce_max, NULL},
    {"reduce_min", vkt_reduce_min, NULL},
    {"all", vkt_all, NULL},
    {"any", vkt_any, NULL},
    {"argmax", NULL, vkt_argmax},
    {"argmin", NULL, vkt_argmin},
};

static const red_op *find_op(const char *name)
{
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(ops[i].name, name) == 0)
            return &ops[i];
    cr_assert_fail("no op %s", name);
    return NULL;
}

/* One call: axes/naxes/keep for reductions, axis/keep for argreduce. */
typedef struct red_call {
    const red_op *op;
    const int *axes;
    int naxes;
    int axis;
    bool keep;
} red_call;

static int call_red(vkt_tensor *const *in, const void *arg, vkt_tensor **out)
{
    const red_call *c = arg;
    if (c->op->fn)
        return c->op->fn(in[0], c->axes, c->naxes, c->keep, out);
    return c->op->afn(in[0], c->axis, c->keep, out);
}

/* ---- data ------------------------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double unif(double lo, double hi)
{
    return lo + (hi - lo) * (double)(rnd() >> 11) / 9007199254740992.0;
}

static int64_t irand(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* Values suited to each op: sums over the dtype's range (integers wrap),
 * products near 1 (floats) or small (integers wrap), ties and infinities for
 * max/min and argreduce (plus NaN for argreduce), sparse zeros for all and
 * sparse nonzeros (NaN among them) for any. */
static double gen_value(const char *op, vkt_dtype dt)
{
    bool fl = dt == VKT_F32 || dt == VKT_F64;
    if (!strcmp(op, "sum"))
        return fl              ? unif(-1, 1)
               : dt == VKT_S32 ? (double)irand(INT32_MIN, INT32_MAX)
                               : (double)irand(0, 255);
    if (!strcmp(op, "product"))
        return fl ? unif(0.95, 1.05) : dt == VKT_S32 ? (double)irand(-3, 3) : (double)irand(1, 3);
    if (!strcmp(op, "all") || !strcmp(op, "any")) {
        bool nz = !strcmp(op, "all") ? rnd() % 32 != 0 : rnd() % 32 == 0;
        if (!nz)
            return rnd() % 2 && fl ? -0.0 : 0.0;
        if (fl && rnd() % 4 == 0)
            return NAN;
        return fl ? unif(-2, 2) : (double)irand(1, 200);
    }
    /* max/min/argmax/argmin: few distinct values, so ties are common. */
    uint64_t r = rnd() % 64;
    if (fl) {
        if (r == 0)
            return INFINITY;
        if (r == 1)
            return -INFINITY;
        if (r == 2 && op[0] == 'a')
            return NAN;
        if (r == 3)
            return -0.0;
        return (double)irand(-8, 8) / 4;
    }
    if (dt == VKT_S32)
        return r == 0 ? INT32_MIN : r == 1 ? INT32_MAX : (double)irand(-5, 5);
    return r == 0 ? 255 : r == 1 ? 0 : (double)irand(3, 7);
}

static vkt_tensor *gen(const char *op, vkt_dtype dt, const h_shape *s, uint64_t seed,
                       double *abs_sum)
{
    size_t n = h_numel(s);
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    double *v = malloc((n ? n : 1) * sizeof *v);
    cr_assert_not_null(v);
    double a = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = gen_value(op, dt);
        if (dt == VKT_F32)
            v[i] = (float)v[i];
        a += fabs(v[i]);
    }
    if (n == 0)
        v[0] = 0;
    vkt_tensor *t = h_from(dt, s, v, n ? n : 1);
    free(v);
    if (abs_sum)
        *abs_sum = a;
    return t;
}

/* ---- checking one case ------------------------------------------------------------ */

static size_t reduced_count(const h_shape *s, const int *axes, int naxes)
{
    if (!axes)
        return h_numel(s);
    size_t n = 1;
    for (int i = 0; i < naxes; i++)
        n *= (size_t)s->d[axes[i] < 0 ? axes[i] + s->rank : axes[i]];
    return n;
}

static h_tol tol_for(const char *op, vkt_dtype dt, double abs_sum, size_t nred)
{
    bool fl = dt == VKT_F32 || dt == VKT_F64;
    if (!fl)
        return H_EXACT;
    if (!strcmp(op, "sum"))
        return (h_tol){(dt == VKT_F32 ? 1e-5 : 1e-13) * abs_sum + 1e-300, 0, 0};
    if (!strcmp(op, "product"))
        return (h_tol){0, (dt == VKT_F32 ? 1.2e-7 : 2.3e-16) * (double)(nred + 1), 0};
    return H_EXACT;
}

/* Runs one case through h_check (oracle, poison, native and its path, compare). */
static void check_case(const red_op *op, vkt_dtype dt, const h_shape *s, const int *axes, int naxes,
                       int axis, bool keep, uint64_t seed)
{
    char what[256];
    char ax[64] = "";
    if (op->fn) {
        if (!axes)
            snprintf(ax, sizeof ax, "all");
        for (int i = 0; axes && i < naxes; i++)
            snprintf(ax + strlen(ax), sizeof ax - strlen(ax), "%s%d", i ? "," : "", axes[i]);
    } else {
        snprintf(ax, sizeof ax, "%d", axis);
    }
    snprintf(what, sizeof what, "%s %s %s axes {%s}%s", op->name, vkt_dtype_name(dt),
             h_shape_str(s), ax, keep ? " keep" : "");
    double abs_sum = 0;
    vkt_tensor *x = gen(op->name, dt, s, seed, &abs_sum);
    size_t nred = op->fn ? reduced_count(s, axes, naxes) : h_numel(s);
    red_call c = {op, axes, naxes, axis, keep};
    vkt_tensor *in[1] = {x};
    h_check(call_red, in, 1, &c, tol_for(op->name, dt, abs_sum, nred), what);
    vkt_tensor_free(x);
}

/* Axis sets for a rank: all (NULL), none (naxes 0), each axis (negative on odd
 * ones), first+last, the middle axes, and every other axis in reverse order. */
typedef struct axis_set {
    int axes[VKT_MAX_RANK];
    int n;
    bool all;
} axis_set;

static int axis_sets(int rank, axis_set *sets)
{
    int k = 0;
    sets[k++] = (axis_set){{0}, 0, true};
    sets[k++] = (axis_set){{0}, 0, false};
    for (int a = 0; a < rank; a++)
        sets[k++] = (axis_set){{a % 2 ? a - rank : a}, 1, false};
    if (rank >= 2)
        sets[k++] = (axis_set){{0, -1}, 2, false};
    if (rank >= 3) {
        axis_set m = {{0}, 0, false};
        for (int a = 1; a < rank - 1; a++)
            m.axes[m.n++] = a;
        sets[k++] = m;
        axis_set e = {{0}, 0, false};
        for (int a = rank - 1; a >= 0; a -= 2)
            e.axes[e.n++] = a;
        sets[k++] = e;
    }
    return k;
}

/* Every dtype x the harness's shapes x axis sets (argreduce: every axis and
 * the flattened tensor), keep alternating. */
static void run_shapes(const char *name)
{
    const red_op *op = find_op(name);
    const h_shape *shapes;
    size_t ns = h_shapes(&shapes);
    uint64_t seed = 1;
    for (int di = 0; di < VKT_NUM_DTYPES; di++) {
        for (size_t si = 0; si < ns; si++) {
            const h_shape *s = &shapes[si];
            if (op->fn) {
                axis_set sets[VKT_MAX_RANK + 6];
                int n = axis_sets(s->rank, sets);
                for (int k = 0; k < n; k++, seed++)
                    check_case(op, dtypes[di], s, sets[k].all ? NULL : sets[k].axes, sets[k].n, 0,
                               (seed + (uint64_t)k) % 2 == 0, seed);
            } else {
                check_case(op, dtypes[di], s, NULL, 0, VKT_ALL_AXES, seed % 2 == 0, seed);
                seed++;
                for (int a = 0; a < s->rank; a++, seed++)
                    check_case(op, dtypes[di], s, NULL, 0, a % 2 ? a - s->rank : a,
                               (seed + (uint64_t)a) % 2 == 1, seed);
            }
        }
    }
}

/* Shapes that take every kernel shape and split: long rows split over many
 * workgroups (two passes), long columns split over threads, more than 65,535
 * rows, rows not a multiple of 4 (vec4 tails), several reduced groups with
 * short and long innermost runs, three kept and three reduced groups. */
typedef struct big_case {
    h_shape s;
    int axes[VKT_MAX_RANK];
    int naxes; /* -1: all axes */
} big_case;

static const big_case big_cases[] = {
    {{2, {3, 20000}}, {1}, 1},
    {{2, {20000, 3}}, {0}, 1},
    {{2, {70000, 33}}, {1}, 1},
    {{2, {70000, 5}}, {-1}, 1},
    {{2, {1, 100003}}, {0}, -1},
    {{2, {8, 12288}}, {1}, 1},
    {{2, {9, 10001}}, {1}, 1},
    {{4, {2, 300, 7, 5}}, {1, 3}, 2},
    {{4, {4, 50, 3, 40}}, {3, 1}, 2},
    {{6, {2, 40, 2, 40, 2, 33}}, {0, 2, 4}, 3},
    {{6, {3, 4, 2, 5, 3, 6}}, {1, 3, 5}, 3},
    {{3, {200, 300, 4}}, {0, 2}, 2},
};

/* Each case runs on one dtype, rotating, so every dtype meets every kernel
 * shape across the ops while lavapipe's run time stays small. */
static void run_big(const char *name, int rot)
{
    const red_op *op = find_op(name);
    for (size_t i = 0; i < sizeof big_cases / sizeof big_cases[0]; i++) {
        const big_case *b = &big_cases[i];
        vkt_dtype dt = dtypes[(i + (size_t)rot) % VKT_NUM_DTYPES];
        uint64_t seed = 1000 + i;
        if (op->fn) {
            check_case(op, dt, &b->s, b->naxes < 0 ? NULL : b->axes, b->naxes < 0 ? 0 : b->naxes, 0,
                       i % 2 == 1, seed);
        } else {
            int axis = b->naxes == 1 ? b->axes[0] : VKT_ALL_AXES;
            check_case(op, dt, &b->s, NULL, 0, axis, i % 2 == 1, seed);
        }
    }
}

#define OP_TESTS(n, rot)                                                                           \
    Test(reduce, n##_shapes)                                                                       \
    {                                                                                              \
        run_shapes(#n);                                                                            \
    }                                                                                              \
    Test(reduce, n##_split)                                                                        \
    {                                                                                              \
        run_big(#n, rot);                                                                          \
    }
OP_TESTS(sum, 0)
OP_TESTS(product, 1)
OP_TESTS(reduce_max, 2)
OP_TESTS(reduce_min, 3)
OP_TESTS(all, 1)
OP_TESTS(any, 2)
OP_TESTS(argmax, 3)
OP_TESTS(argmin, 0)

/* ---- past 65,535 workgroups ------------------------------------------------------ */

/* 2^24 + 257 elements: the full f32 sum (two passes, vec4 with a tail), the
 * flattened argmax, and a u8 "reduction" over no axes (a widening copy with
 * one thread per output, grid-stride past the 65,535-group cap). */
Test(reduce, past_65535_workgroups)
{
    h_shape s = h_huge_shape();
    check_case(find_op("sum"), VKT_F32, &s, NULL, 0, 0, false, 7);
    check_case(find_op("argmax"), VKT_F32, &s, NULL, 0, VKT_ALL_AXES, false, 8);
    int none[1] = {0};
    check_case(find_op("sum"), VKT_U8, &s, none, 0, 0, false, 9);
}

/* ---- lavapipe's loop limit ---------------------------------------------------------- */

/* Lavapipe ends an invocation's loops after 65,535 iterations in all, silently.
 * Within maxStorageBufferRange (128 MiB: 32M f32, 128M u8 elements) the work
 * split keeps every invocation far below that: at most ~64 vec4 per team
 * thread and 128-256 elements per column thread (reduce.c's rd_trips). These
 * are the longest per-invocation walks the planner can be led into: a 30M
 * full sum and argmax, a 100M u8 sum, long rows and long columns with few
 * outputs, and a two-group thread walk (carries in red_next); any split
 * regression (fewer parts, longer chunks) truncates them on lavapipe. */
Test(reduce, loop_limit_long_reductions)
{
    h_shape full = {1, {30000001}};
    check_case(find_op("sum"), VKT_F32, &full, NULL, 0, 0, false, 31);
    check_case(find_op("argmax"), VKT_F32, &full, NULL, 0, VKT_ALL_AXES, false, 32);
    h_shape bytes = {1, {100000003}};
    check_case(find_op("sum"), VKT_U8, &bytes, NULL, 0, 0, false, 33);
    h_shape rows = {2, {3, 10000001}}, cols = {2, {10000001, 3}};
    int last[1] = {1}, first[1] = {0};
    check_case(find_op("reduce_max"), VKT_F32, &rows, last, 1, 0, false, 34);
    check_case(find_op("argmin"), VKT_F32, &rows, NULL, 0, 1, false, 35);
    check_case(find_op("sum"), VKT_S32, &cols, first, 1, 0, true, 36);
    check_case(find_op("argmax"), VKT_F32, &cols, NULL, 0, 0, false, 37);
    h_shape two = {4, {100000, 3, 20, 5}};
    int gaps[2] = {0, 2};
    check_case(find_op("sum"), VKT_F32, &two, gaps, 2, 0, false, 38);
}

/* ---- semantics with hand-computed values ------------------------------------------ */

static vkt_tensor *row(vkt_dtype dt, const double *v, int n)
{
    h_shape s = {1, {n}};
    return h_from(dt, &s, v, (size_t)n);
}

static double one(const vkt_tensor *t)
{
    cr_assert_eq(vkt_tensor_numel(t), 1);
    void *d = h_read(t);
    double v = h_get(vkt_tensor_dtype(t), d, 0);
    free(d);
    return v;
}

static double red1(red_fn f, const vkt_tensor *x)
{
    vkt_tensor *o = NULL;
    H_NATIVE(f(x, NULL, 0, false, &o));
    double v = one(o);
    vkt_tensor_free(o);
    return v;
}

static double arg1(arg_fn f, const vkt_tensor *x)
{
    vkt_tensor *o = NULL;
    H_NATIVE(f(x, VKT_ALL_AXES, false, &o));
    cr_assert_eq(vkt_tensor_dtype(o), VKT_S32);
    double v = one(o);
    vkt_tensor_free(o);
    return v;
}

/* Subnormals are values, not zeros: max, min, their arg forms and any/all tell
 * 2^-140 from 0 and -0 on every device (f32 compares on the bits). */
Test(reduce, subnormal_semantics)
{
    const double a[] = {0.0, 0x1p-140, -0.0, 0x1p-145, 0.0},
                 b[] = {-0.0, -0x1p-140, 0.0, -0x1p-145};
    const double z[] = {0.0, -0.0, 0x1p-149};
    for (int f = 0; f < 2; f++) {
        vkt_dtype dt = f ? VKT_F64 : VKT_F32;
        vkt_tensor *ta = row(dt, a, 5), *tb = row(dt, b, 4), *tz = row(dt, z, 3);
        cr_expect_eq(red1(vkt_reduce_max, ta), 0x1p-140, "max of {0, 2^-140, -0, 2^-145, 0}");
        cr_expect_eq(red1(vkt_reduce_min, tb), -0x1p-140, "min of {-0, -2^-140, 0, -2^-145}");
        cr_expect_eq(arg1(vkt_argmax, ta), 1, "argmax picks 2^-140 over the zeros");
        cr_expect_eq(arg1(vkt_argmin, tb), 1, "argmin picks -2^-140 over the zeros");
        cr_expect_eq(arg1(vkt_argmin, ta), 0, "argmin: -0 ties with +0, the first wins");
        cr_expect_eq(red1(vkt_any, tz), 1, "2^-149 is true");
        cr_expect_eq(red1(vkt_all, tz), 0, "zeros are false");
        vkt_tensor_free(ta);
        vkt_tensor_free(tb);
        vkt_tensor_free(tz);
    }
}

Test(reduce, nan_semantics)
{
    for (int f = 0; f < 2; f++) {
        vkt_dtype dt = f ? VKT_F64 : VKT_F32;
        const double a[] = {1, NAN, 3, NAN, 3}, b[] = {NAN, NAN, NAN}, c[] = {NAN, 2, -1, -1, NAN};
        vkt_tensor *ta = row(dt, a, 5), *tb = row(dt, b, 3), *tc = row(dt, c, 5);
        cr_expect(isnan(red1(vkt_sum, ta)), "sum with NaN is NaN");
        cr_expect(isnan(red1(vkt_product, ta)), "product with NaN is NaN");
        cr_expect(isnan(red1(vkt_reduce_max, ta)), "max propagates NaN");
        cr_expect(isnan(red1(vkt_reduce_min, ta)), "min propagates NaN");
        cr_expect_eq(red1(vkt_all, tb), 1, "NaN is true");
        /* Nx (and torch): a slice with a NaN gives its first NaN, for both ops. */
        cr_expect_eq(arg1(vkt_argmax, ta), 1, "argmax is the first NaN");
        cr_expect_eq(arg1(vkt_argmin, ta), 1, "argmin is the first NaN");
        cr_expect_eq(arg1(vkt_argmin, tb), 0, "argmin of all NaN is 0");
        cr_expect_eq(arg1(vkt_argmax, tb), 0, "argmax of all NaN is 0");
        cr_expect_eq(arg1(vkt_argmin, tc), 0, "argmin: leading NaN");
        cr_expect_eq(arg1(vkt_argmax, tc), 0, "argmax: leading NaN");
        const double d[] = {2, NAN, 4};
        vkt_tensor *td = row(dt, d, 3);
        cr_expect_eq(arg1(vkt_argmin, td), 1, "argmin of [2, NaN, 4] is 1");
        vkt_tensor_free(td);
        vkt_tensor_free(ta);
        vkt_tensor_free(tb);
        vkt_tensor_free(tc);
    }
    /* A NaN deep inside a long row, and ties across workgroups and parts. */
    h_shape s = {1, {300000}};
    double *v = calloc(300000, sizeof *v);
    cr_assert_not_null(v);
    v[1000] = 5;
    v[250000] = 5;
    vkt_tensor *t = h_from(VKT_F32, &s, v, 300000);
    cr_expect_eq(arg1(vkt_argmax, t), 1000, "first of tied maxima far apart");
    cr_expect_eq(arg1(vkt_argmin, t), 0, "first of 299998 tied minima");
    vkt_tensor_free(t);
    v[200001] = NAN;
    v[299999] = NAN;
    t = h_from(VKT_F32, &s, v, 300000);
    cr_expect_eq(arg1(vkt_argmax, t), 200001, "first NaN of a long row");
    cr_expect_eq(arg1(vkt_argmin, t), 200001, "argmin: the first NaN of a long row too");
    cr_expect(isnan(red1(vkt_reduce_min, t)), "min of a long row with NaN");
    vkt_tensor_free(t);
    free(v);
}

Test(reduce, signed_zero_and_identities)
{
    const double z[] = {-0.0, 0.0, -0.0};
    vkt_tensor *t = row(VKT_F32, z, 3);
    cr_expect(!signbit(red1(vkt_reduce_max, t)), "max(-0, +0) is +0");
    cr_expect(signbit(red1(vkt_reduce_min, t)), "min(-0, +0) is -0");
    vkt_tensor_free(t);
    /* Empty reductions give the identity; argmax of nothing is 0. */
    h_shape e = {2, {3, 0}};
    for (int di = 0; di < VKT_NUM_DTYPES; di++) {
        vkt_dtype dt = dtypes[di];
        vkt_tensor *x = h_from(dt, &e, z, 1), *o = NULL;
        int ax[1] = {1};
        bool fl = dt == VKT_F32 || dt == VKT_F64;
        const double want_min = fl ? (double)INFINITY : dt == VKT_S32 ? (double)INT32_MAX : 255.0;
        const double want_max = fl ? -(double)INFINITY : dt == VKT_S32 ? (double)INT32_MIN : 0.0;
        struct {
            red_fn f;
            double want;
        } cases[] = {
            {vkt_sum, 0}, {vkt_product, 1}, {vkt_reduce_max, want_max}, {vkt_reduce_min, want_min},
            {vkt_all, 1}, {vkt_any, 0},
        };
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            H_NATIVE(cases[k].f(x, ax, 1, false, &o));
            cr_assert_eq(vkt_tensor_numel(o), 3);
            void *d = h_read(o);
            for (int i = 0; i < 3; i++)
                cr_expect_eq(h_get(vkt_tensor_dtype(o), d, (size_t)i), cases[k].want,
                             "%s %s empty row: %g", vkt_dtype_name(dt), ops[k].name,
                             h_get(vkt_tensor_dtype(o), d, (size_t)i));
            free(d);
            vkt_tensor_free(o);
        }
        H_NATIVE(vkt_argmax(x, 1, true, &o));
        cr_expect_eq(vkt_tensor_rank(o), 2);
        void *d = h_read(o);
        for (int i = 0; i < 3; i++)
            cr_expect_eq(((int32_t *)d)[i], 0);
        free(d);
        vkt_tensor_free(o);
        vkt_tensor_free(x);
    }
}

Test(reduce, output_shapes_and_dtypes)
{
    h_shape s = {4, {2, 3, 4, 5}};
    int ax[2] = {-1, 1};
    for (int di = 0; di < VKT_NUM_DTYPES; di++) {
        vkt_dtype dt = dtypes[di];
        bool fl = dt == VKT_F32 || dt == VKT_F64;
        vkt_tensor *x = gen("sum", dt, &s, 3, NULL), *o = NULL;
        H_NATIVE(vkt_sum(x, ax, 2, true, &o));
        cr_expect_eq(vkt_tensor_dtype(o), fl ? dt : VKT_S32);
        int64_t kept[4] = {2, 1, 4, 1};
        cr_assert_eq(vkt_tensor_rank(o), 4);
        for (int i = 0; i < 4; i++)
            cr_expect_eq(vkt_tensor_shape(o)[i], kept[i]);
        vkt_tensor_free(o);
        H_NATIVE(vkt_reduce_max(x, ax, 2, false, &o));
        cr_expect_eq(vkt_tensor_dtype(o), dt);
        cr_assert_eq(vkt_tensor_rank(o), 2);
        cr_expect_eq(vkt_tensor_shape(o)[0], 2);
        cr_expect_eq(vkt_tensor_shape(o)[1], 4);
        vkt_tensor_free(o);
        H_NATIVE(vkt_any(x, NULL, 0, false, &o));
        cr_expect_eq(vkt_tensor_dtype(o), VKT_U8);
        cr_expect_eq(vkt_tensor_rank(o), 0);
        vkt_tensor_free(o);
        H_NATIVE(vkt_argmin(x, VKT_ALL_AXES, true, &o));
        cr_expect_eq(vkt_tensor_dtype(o), VKT_S32);
        cr_expect_eq(vkt_tensor_rank(o), 4);
        vkt_tensor_free(o);
        vkt_tensor_free(x);
    }
}

Test(reduce, every_op_native_in_the_support_matrix)
{
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        size_t i = 0;
        while (i < vkt_op_count() && strcmp(vkt_op_name(i), ops[k].name) != 0)
            i++;
        cr_assert_lt(i, vkt_op_count(), "%s is not in the support matrix", ops[k].name);
        for (int di = 0; di < VKT_NUM_DTYPES; di++)
            cr_expect_eq(vkt_op_support(i, dtypes[di], NULL), VKT_NATIVE, "%s %s", ops[k].name,
                         vkt_dtype_name(dtypes[di]));
    }
}

/* ---- the error contract -------------------------------------------------------------- */

static void expect_error(int status, int want, const char *needle, vkt_tensor *const *out,
                         const char *what)
{
    cr_expect_eq(status, want, "%s: status %s, want %s", what, vkt_status_name(status),
                 vkt_status_name(want));
    cr_expect_null(*out, "%s: *out not NULL after an error", what);
    cr_expect(strstr(vkt_last_error(), needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what,
              vkt_last_error(), needle);
}

Test(reduce, bad_calls)
{
    h_shape s = {3, {2, 3, 4}};
    vkt_tensor *x = gen("sum", VKT_F32, &s, 5, NULL);
    vkt_tensor *o = (vkt_tensor *)&o; /* not NULL: the op must clear it */
    int rep[2] = {1, -2};
    int far[1] = {3};
    int neg[1] = {-4};
    for (size_t k = 0; k < 6; k++) {
        const red_op *op = &ops[k];
        char what[64];
        snprintf(what, sizeof what, "%s repeated axis", op->name);
        o = (vkt_tensor *)&o;
        expect_error(op->fn(x, rep, 2, false, &o), VKT_EAXIS, "repeated", &o, what);
        cr_expect(strstr(vkt_last_error(), op->name) != NULL, "message names the op: %s",
                  vkt_last_error());
        snprintf(what, sizeof what, "%s axis 3 of rank 3", op->name);
        o = (vkt_tensor *)&o;
        expect_error(op->fn(x, far, 1, false, &o), VKT_EAXIS, "out of range", &o, what);
        snprintf(what, sizeof what, "%s axis -4 of rank 3", op->name);
        o = (vkt_tensor *)&o;
        expect_error(op->fn(x, neg, 1, true, &o), VKT_EAXIS, "out of range", &o, what);
        snprintf(what, sizeof what, "%s 4 axes of rank 3", op->name);
        int four[4] = {0, 1, 2, 0};
        o = (vkt_tensor *)&o;
        expect_error(op->fn(x, four, 4, false, &o), VKT_EAXIS, "axes", &o, what);
        cr_expect_eq(op->fn(x, NULL, 0, false, NULL), VKT_EINVAL, "%s NULL out", op->name);
        cr_expect(strstr(vkt_last_error(), "out is NULL") != NULL, "%s: %s", op->name,
                  vkt_last_error());
        o = (vkt_tensor *)&o;
        cr_expect_neq(op->fn(NULL, NULL, 0, false, &o), VKT_OK, "%s NULL x", op->name);
        cr_expect_null(o);
    }
    for (size_t k = 6; k < 8; k++) {
        const red_op *op = &ops[k];
        o = (vkt_tensor *)&o;
        expect_error(op->afn(x, 3, false, &o), VKT_EAXIS, "out of range", &o, op->name);
        o = (vkt_tensor *)&o;
        expect_error(op->afn(x, -4, false, &o), VKT_EAXIS, "out of range", &o, op->name);
        cr_expect_eq(op->afn(x, 0, false, NULL), VKT_EINVAL, "%s NULL out", op->name);
        cr_expect(strstr(vkt_last_error(), "out is NULL") != NULL, "%s: %s", op->name,
                  vkt_last_error());
    }
    vkt_tensor_free(x);
}

/* test_elementwise.c — every unary and binary op, select, clip and as_type, on
 * every dtype, native against the host reference over the harness's shapes and
 * broadcasting pairs, with the tolerances of tolerances.md. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h" /* white-box: where results land, for the poisoning check */
#include "harness.h"

TestSuite(elementwise, .init = h_setup, .fini = h_teardown, .timeout = 240);

static const vkt_dtype dtypes[VKT_NUM_DTYPES] = {VKT_F32, VKT_F64, VKT_S32, VKT_U8};

static size_t op_index(const char *name)
{
    for (size_t i = 0; i < vkt_op_count(); i++)
        if (strcmp(vkt_op_name(i), name) == 0)
            return i;
    cr_assert_fail("op %s is not in the support matrix", name);
    return 0;
}

static bool is_float(vkt_dtype dt)
{
    return dt == VKT_F32 || dt == VKT_F64;
}

static vkt_dtype promote(vkt_dtype a, vkt_dtype b)
{
    static const int rank[VKT_NUM_DTYPES] = {2, 3, 1, 0}; /* u8 < s32 < f32 < f64 */
    return rank[a] >= rank[b] ? a : b;
}

/* Values every float op meets besides random ones: signed zeros, infinities,
 * NaN, extremes, subnormals and halfway points for round. */
static const double specials[] = {
    NAN,   INFINITY, -INFINITY, 0.0,     -0.0,     1.0, -1.0,  0.5,   -0.5,  1.5,    2.5,  -2.5,
    1e-30, -1e-30,   1e-40,     FLT_MAX, -FLT_MAX, 3.0, 100.0, -7.25, 0.999, -0.999, 88.0, -88.0};

/* On the specials, ops computed by builtin-based approximations are held to
 * the class of each result only: NaN where the reference has NaN, infinities
 * of the same sign. Their finite values there are not comparable: lavapipe
 * flushes subnormal inputs to zero and reduces huge trigonometric arguments
 * coarsely. Exactly rounded ops (ulp-only or exact) stay strict, and so do the
 * ops of shaders/elementwise/cmath.glsl (`ieee`: every f32 transcendental),
 * which decide specials and subnormals on the bits: they keep their tolerance
 * and the sign of zero. */
/* Arithmetic that a device flushing f32 subnormals (vkt_ctx_flushes_subnormals)
 * computes as if they were signed zeros: on such a device the f32 specials
 * feed it zeros in their place. Comparisons, min/max and the sign-bit ops are
 * exact on subnormals everywhere and keep them. */
static bool flushed_arith(const char *name)
{
    static const char *const ops[] = {"add", "subtract",  "multiply", "divide",
                                      "pow", "remainder", "atan2"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(ops[i], name) == 0)
            return vkt_ctx_flushes_subnormals(h_ctx) == 1;
    return false;
}

static double daz(double v)
{
    return v != 0 && fabs(v) < FLT_MIN ? copysign(0.0, v) : v;
}

static bool ieee_op(const char *name)
{
    static const char *const ops[] = {
        "atan2", "pow",   "remainder", "atan", "acosh", "asinh",   "log1p", "expm1", "cbrt",
        "exp",   "log",   "sin",       "cos",  "tan",   "asin",    "acos",  "sinh",  "cosh",
        "tanh",  "atanh", "sigmoid",   "erf",  "erfc",  "erf_inv", "sqrt",  "rsqrt"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(ops[i], name) == 0)
            return true;
    return false;
}

static h_tol specials_tol(h_tol t, const char *name)
{
    if (!ieee_op(name) && (t.abs > 0 || t.rel > 0))
        t.abs = INFINITY;
    return t;
}

/* Where native and reference results are both zero, their signs must agree
 * (h_compare sees -0 == +0): atan2, remainder and pow choose it by C's rules. */
static void check_zero_signs(h_call f, vkt_tensor *const *in, int nin, const void *arg,
                             const char *what)
{
    vkt_tensor *want = NULL, *got = NULL;
    H_OK(h_oracle(f, in, arg, &want));
    H_OK(h_run(f, in, nin, arg, &got, what));
    vkt_dtype dt = vkt_tensor_dtype(want);
    size_t n = vkt_tensor_numel(want);
    void *g = h_read(got), *w = h_read(want);
    for (size_t i = 0; i < n; i++) {
        double gv = h_get(dt, g, i), wv = h_get(dt, w, i);
        if (gv == 0 && wv == 0 && signbit(gv) != signbit(wv)) {
            free(g);
            free(w);
            cr_assert_fail("%s: element %zu is %s0, want %s0", what, i, signbit(gv) ? "-" : "+",
                           signbit(wv) ? "-" : "+");
        }
    }
    free(g);
    free(w);
    vkt_tensor_free(got);
    vkt_tensor_free(want);
}

/* ---- unary ----------------------------------------------------------------------- */

typedef int (*unary_fn)(const vkt_tensor *, vkt_tensor **);

typedef struct unary_case {
    const char *name;
    unary_fn fn;
    double lo, hi;  /* input domain of the random tensors */
    h_tol f32, f64; /* native f32 / f64 against the reference (tolerances.md) */
} unary_case;

#define EXACT                                                                                      \
    {                                                                                              \
        0, 0, 0                                                                                    \
    }
/* Ulp-bounded, with subnormal results free to flush to zero (FLT_MIN). */
#define ULPS(u)                                                                                    \
    {                                                                                              \
        FLT_MIN, 0, u                                                                              \
    }
/* f64 rows carry no absolute term: FLT_MIN would excuse any f64 result below it. */
// clang-format off
#define ULPS64(u) {0, 0, u}
// clang-format on
/* Default tolerance where a case does not say: exact. */
static const unary_case unary_cases[] = {
    {"negate", vkt_negate, -100, 100, EXACT, EXACT},
    {"abs", vkt_abs, -100, 100, EXACT, EXACT},
    {"sign", vkt_sign, -3, 3, EXACT, EXACT},
    {"floor", vkt_floor, -100, 100, EXACT, EXACT},
    {"ceil", vkt_ceil, -100, 100, EXACT, EXACT},
    {"round", vkt_round, -100, 100, EXACT, EXACT},
    {"exp", vkt_exp, -103, 88, ULPS(2), ULPS64(2)},
    {"expm1", vkt_expm1, -5, 5, ULPS(4), ULPS64(3)},
    {"log", vkt_log, 1e-3, 1e3, ULPS(2), ULPS64(2)},
    {"log1p", vkt_log1p, -0.99, 100, ULPS(3), ULPS64(2)},
    {"sqrt", vkt_sqrt, 0, 1e4, {0, 0, 2}, {0, 0, 2}},
    {"rsqrt", vkt_rsqrt, 1e-3, 1e4, {0, 0, 4}, {0, 0, 4}},
    {"cbrt", vkt_cbrt, -1e3, 1e3, ULPS(3), ULPS64(4)},
    {"sin", vkt_sin, -1e4, 1e4, ULPS(4), ULPS64(3)},
    {"cos", vkt_cos, -1e4, 1e4, ULPS(4), ULPS64(3)},
    {"tan", vkt_tan, -1e4, 1e4, ULPS(6), ULPS64(5)},
    {"asin", vkt_asin, -1, 1, ULPS(4), ULPS64(5)},
    {"acos", vkt_acos, -1, 1, ULPS(4), ULPS64(5)},
    {"atan", vkt_atan, -100, 100, ULPS(6), ULPS64(4)},
    {"sinh", vkt_sinh, -89, 89, ULPS(6), ULPS64(4)},
    {"cosh", vkt_cosh, -89, 89, ULPS(6), ULPS64(4)},
    {"tanh", vkt_tanh, -10, 10, ULPS(6), ULPS64(4)},
    {"asinh", vkt_asinh, -100, 100, ULPS(4), ULPS64(2)},
    {"acosh", vkt_acosh, 1, 100, ULPS(4), ULPS64(4)},
    {"atanh", vkt_atanh, -0.99, 0.99, ULPS(4), ULPS64(2)},
    {"sigmoid", vkt_sigmoid, -100, 30, ULPS(8), ULPS64(4)},
    {"erf", vkt_erf, -4, 4, ULPS(6), ULPS64(3)},
    {"erfc", vkt_erfc, -4, 10, ULPS(14), ULPS64(6)},
    {"erf_inv", vkt_erf_inv, -0.999, 0.999, ULPS(6), ULPS64(5)},
    {"is_nan", vkt_is_nan, -10, 10, EXACT, EXACT},
    {"is_infinity", vkt_is_infinity, -10, 10, EXACT, EXACT},
    {"logical_not", vkt_logical_not, -2, 2, EXACT, EXACT},
    {"bitwise_not", vkt_bitwise_not, -2147483648.0, 2147483647.0, EXACT, EXACT},
    {"count_leading_zeros", vkt_count_leading_zeros, -2147483648.0, 2147483647.0, EXACT, EXACT},
    {"population_count", vkt_population_count, -2147483648.0, 2147483647.0, EXACT, EXACT},
};
#define N_UNARY (sizeof unary_cases / sizeof unary_cases[0])

static int call_unary(vkt_tensor *const *in, const void *arg, vkt_tensor **out)
{
    return ((const unary_case *)arg)->fn(in[0], out);
}

Test(elementwise, unary_table_covers_every_op)
{
#define NAME(n, cls) #n,
    static const char *const all[] = {VKT_UNARY_OPS(NAME)};
#undef NAME
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        bool found = false;
        for (size_t k = 0; k < N_UNARY; k++)
            found |= strcmp(all[i], unary_cases[k].name) == 0;
        cr_assert(found, "unary op %s has no case in test_elementwise.c", all[i]);
    }
}

static const unary_case *unary_find(const char *name)
{
    for (size_t k = 0; k < N_UNARY; k++)
        if (strcmp(unary_cases[k].name, name) == 0)
            return &unary_cases[k];
    cr_assert_fail("no unary case %s", name);
    return NULL;
}

/* Integer inputs of math ops convert to f32 first, so they share f32's tolerance. */
static h_tol unary_tol(const unary_case *uc, vkt_dtype dt)
{
    return dt == VKT_F64 ? uc->f64 : uc->f32;
}

static void run_unary_case(const char *name)
{
    const unary_case *uc = unary_find(name);
    size_t idx = op_index(name);
    const h_shape *shapes;
    size_t nshapes = h_shapes(&shapes);
    char what[160];
    for (int d = 0; d < VKT_NUM_DTYPES; d++) {
        vkt_dtype dt = dtypes[d];
        vkt_support sup = vkt_op_support(idx, dt, NULL);
        for (size_t k = 0; k < nshapes; k++) {
            vkt_tensor *x = h_rand(dt, &shapes[k], uc->lo, uc->hi, 1000 * d + k);
            snprintf(what, sizeof what, "%s %s %s", name, vkt_dtype_name(dt),
                     h_shape_str(&shapes[k]));
            if (sup == VKT_UNDEFINED) {
                vkt_tensor *out = (vkt_tensor *)1;
                int s = uc->fn(x, &out);
                cr_assert_eq(s, VKT_EDTYPE, "%s: %s, want VKT_EDTYPE", what, vkt_status_name(s));
                cr_assert_null(out, "%s: *out not NULL after an error", what);
                cr_assert(strstr(vkt_last_error(), name), "%s: message '%s' does not name the op",
                          what, vkt_last_error());
            } else {
                vkt_tensor *in[1] = {x};
                h_check(call_unary, in, 1, uc, unary_tol(uc, dt), what);
            }
            vkt_tensor_free(x);
            if (sup == VKT_UNDEFINED)
                break; /* one shape is enough to see the refusal */
        }
        if (sup != VKT_UNDEFINED && is_float(dt)) {
            h_shape s = {1, {sizeof specials / sizeof specials[0]}};
            vkt_tensor *x = h_from(dt, &s, specials, sizeof specials / sizeof specials[0]);
            vkt_tensor *in[1] = {x};
            snprintf(what, sizeof what, "%s %s specials", name, vkt_dtype_name(dt));
            h_check(call_unary, in, 1, uc, specials_tol(unary_tol(uc, dt), name), what);
            if (ieee_op(name))
                check_zero_signs(call_unary, in, 1, uc, what);
            vkt_tensor_free(x);
        }
    }
}

#define UNARY_TEST(n, cls)                                                                         \
    Test(elementwise, unary_##n)                                                                   \
    {                                                                                              \
        run_unary_case(#n);                                                                        \
    }
VKT_UNARY_OPS(UNARY_TEST)

/* Where approximate builtins went wrong, for the f32 transcendentals: log next
 * to 1 (6 million ulp with GLSL's log), exp and sigmoid into the subnormals,
 * trigonometry far from 0 (argument reduction), sinh/tanh/atanh near 0
 * (cancellation), erfc's tail (rounding of z^2), every exponent by random
 * bits, sqrt/rsqrt of subnormals (flushed to 0 and inf on the H200). Each op
 * is held to its ulp row on all of them, strictly. */
static const double hard_points[] = {
    0.99999994, 1.00000012, 0.9999999, 1.0000002, 0.99,    1.01,  -87.5,   -95.0, -103.5,
    88.5,       89.2,       1e4,       123456.7,  1e10,    1e20,  1e30,    3e38,  -3e38,
    8.0,        9.0,        9.3,       10.0,      -10.0,   -30.0, 3e-8,    -3e-8, 1e-5,
    2.5e-4,     0.4999,     0.5001,    0.9999,    -0.9999, 0.84,  1.4e-45, 1e-38, -1e-38};

Test(elementwise, f32_transcendentals_hard_inputs)
{
    enum { NR = 8192, NB = 4096 };
    size_t nh = sizeof hard_points / sizeof hard_points[0], n = nh + NR + NB;
    double *v = malloc(n * sizeof *v);
    uint64_t st = 0x9e3779b97f4a7c15ull;
    for (size_t k = 0; k < N_UNARY; k++) {
        const unary_case *uc = &unary_cases[k];
        if (!ieee_op(uc->name))
            continue;
        memcpy(v, hard_points, sizeof hard_points);
        for (size_t i = 0; i < NR + NB; i++) {
            st ^= st << 13, st ^= st >> 7, st ^= st << 17;
            double u = (double)(st >> 11) / 9007199254740992.0;
            uint32_t bits = (uint32_t)(st >> 32);
            float f;
            memcpy(&f, &bits, 4);
            /* half the domain uniformly, half log-uniform magnitudes down to 2^-40 */
            double m = fmax(fabs(uc->lo), fabs(uc->hi)), w = ldexp(m, -(int)(u * 40));
            double d = i % 2 ? uc->lo + u * (uc->hi - uc->lo) : (uc->lo < 0 && (st & 1) ? -w : w);
            v[nh + i] =
                i < NR ? (d < uc->lo || d > uc->hi ? uc->lo + u * (uc->hi - uc->lo) : d) : f;
        }
        h_shape s = {1, {(int64_t)n}};
        vkt_tensor *x = h_from(VKT_F32, &s, v, n);
        vkt_tensor *in[1] = {x};
        char what[96];
        snprintf(what, sizeof what, "%s f32 hard inputs", uc->name);
        h_check(call_unary, in, 1, uc, uc->f32, what);
        check_zero_signs(call_unary, in, 1, uc, what);
        vkt_tensor_free(x);
    }
    free(v);
}

/* The f64 exp/log family and inverse trigonometry of cmath64.glsl on every exponent (random bits),
 * across each domain and on log-uniform magnitudes from 2^-60 to 2^30, held to its ulp
 * row strictly. The rows are measured against glibc, which is itself up to 3
 * ulp off for cbrt (2.76 ulp at -385.877...; cmath64.glsl is within 0.5 there). */
Test(elementwise, f64_cmath64_hard_inputs)
{
    static const struct {
        const char *name;
        double lo, hi;
    } dom[] = {
        {"exp", -745, 710},      {"expm1", -40, 710}, {"log", 0, 1e300},   {"log1p", -1, 1e10},
        {"cbrt", -1e300, 1e300}, {"sinh", -711, 711}, {"cosh", -711, 711}, {"tanh", -25, 25},
        {"asinh", -1e10, 1e10},  {"acosh", 1, 1e10},  {"atanh", -1, 1},    {"sigmoid", -745, 40},
        {"atan", -1e6, 1e6},     {"asin", -1, 1},     {"acos", -1, 1},     {"sin", -1e6, 1e6},
        {"cos", -1e6, 1e6},      {"tan", -1e6, 1e6},  {"erf", -7, 7},      {"erf_inv", -1, 1}};
    /* erfc is gated on f64 for now (tolerances.md: open on the H200). */
    enum { N = 12288 };
    double *v = malloc(N * sizeof *v);
    cr_assert_not_null(v);
    uint64_t st = 0x2545f4914f6cdd1dull;
    for (size_t k = 0; k < sizeof dom / sizeof dom[0]; k++) {
        const unary_case *uc = unary_find(dom[k].name);
        cr_assert_eq(vkt_op_support(op_index(dom[k].name), VKT_F64, NULL), VKT_NATIVE,
                     "%s f64 is native", dom[k].name);
        for (size_t i = 0; i < N; i++) {
            st ^= st << 13, st ^= st >> 7, st ^= st << 17;
            double u = (double)(st >> 11) / 9007199254740992.0;
            if (i % 3 == 0)
                memcpy(&v[i], &st, sizeof st); /* every exponent, NaNs, subnormals */
            else if (i % 3 == 1)
                v[i] = dom[k].lo + (dom[k].hi - dom[k].lo) * u;
            else
                v[i] = ldexp(1.0 + u, (int)(st % 91) - 60) * (dom[k].lo < 0 && (st & 1) ? -1 : 1) +
                       (dom[k].lo == 1 ? 1 : 0);
        }
        h_shape s = {1, {N}};
        vkt_tensor *x = h_from(VKT_F64, &s, v, N);
        vkt_tensor *in[1] = {x};
        char what[96];
        snprintf(what, sizeof what, "%s f64 hard inputs", dom[k].name);
        h_check(call_unary, in, 1, uc, uc->f64, what);
        check_zero_signs(call_unary, in, 1, uc, what);
        vkt_tensor_free(x);
    }
    free(v);
}

/* ---- binary ----------------------------------------------------------------------- */

typedef int (*binary_fn)(const vkt_tensor *, const vkt_tensor *, vkt_tensor **);

typedef struct binary_case {
    const char *name;
    binary_fn fn;
    double alo, ahi, blo, bhi;     /* float domains */
    double ialo, iahi, iblo, ibhi; /* integer domains (u8 clamps to 0..255) */
    h_tol f32;                     /* f64 and integers: exact unless f64 says */
    h_tol f64;
} binary_case;

static const binary_case binary_cases[] = {
    {"add", vkt_add, -100, 100, -100, 100, -2e9, 2e9, -2e9, 2e9, EXACT, EXACT},
    {"subtract", vkt_subtract, -100, 100, -100, 100, -2e9, 2e9, -2e9, 2e9, EXACT, EXACT},
    {"multiply", vkt_multiply, -100, 100, -100, 100, -70000, 70000, -70000, 70000, EXACT, EXACT},
    {"divide", vkt_divide, -100, 100, -100, 100, -1000, 1000, -5, 5, {0, 0, 2}, EXACT},
    {"pow", vkt_pow, 0.01, 10, -3, 3, -4, 4, -2, 9, {FLT_MIN, 1e-5, 0}, EXACT},
    {"min", vkt_min, -100, 100, -100, 100, -2e9, 2e9, -2e9, 2e9, EXACT, EXACT},
    {"max", vkt_max, -100, 100, -100, 100, -2e9, 2e9, -2e9, 2e9, EXACT, EXACT},
    {"remainder", vkt_remainder, -100, 100, -10, 10, -1000, 1000, -6, 6, EXACT, EXACT},
    {"atan2", vkt_atan2, -10, 10, -10, 10, -10, 10, -10, 10, ULPS(6), ULPS64(4)},
    {"quotient", vkt_quotient, 0, 0, 0, 0, -1000, 1000, -6, 6, EXACT, EXACT},
    {"equal", vkt_equal, -3, 3, -3, 3, -3, 3, -3, 3, EXACT, EXACT},
    {"not_equal", vkt_not_equal, -3, 3, -3, 3, -3, 3, -3, 3, EXACT, EXACT},
    {"less", vkt_less, -3, 3, -3, 3, -3, 3, -3, 3, EXACT, EXACT},
    {"less_equal", vkt_less_equal, -3, 3, -3, 3, -3, 3, -3, 3, EXACT, EXACT},
    {"greater", vkt_greater, -3, 3, -3, 3, -3, 3, -3, 3, EXACT, EXACT},
    {"greater_equal", vkt_greater_equal, -3, 3, -3, 3, -3, 3, -3, 3, EXACT, EXACT},
    {"logical_and", vkt_logical_and, -1, 1, -1, 1, -1, 1, -1, 1, EXACT, EXACT},
    {"logical_or", vkt_logical_or, -1, 1, -1, 1, -1, 1, -1, 1, EXACT, EXACT},
    {"logical_xor", vkt_logical_xor, -1, 1, -1, 1, -1, 1, -1, 1, EXACT, EXACT},
    {"bitwise_and", vkt_bitwise_and, 0, 0, 0, 0, -2147483648.0, 2147483647.0, -2147483648.0,
     2147483647.0, EXACT, EXACT},
    {"bitwise_or", vkt_bitwise_or, 0, 0, 0, 0, -2147483648.0, 2147483647.0, -2147483648.0,
     2147483647.0, EXACT, EXACT},
    {"bitwise_xor", vkt_bitwise_xor, 0, 0, 0, 0, -2147483648.0, 2147483647.0, -2147483648.0,
     2147483647.0, EXACT, EXACT},
    {"left_shift", vkt_left_shift, 0, 0, 0, 0, -2147483648.0, 2147483647.0, -3, 40, EXACT, EXACT},
    {"right_shift", vkt_right_shift, 0, 0, 0, 0, -2147483648.0, 2147483647.0, -3, 40, EXACT, EXACT},
};
#define N_BINARY (sizeof binary_cases / sizeof binary_cases[0])

static int call_binary(vkt_tensor *const *in, const void *arg, vkt_tensor **out)
{
    return ((const binary_case *)arg)->fn(in[0], in[1], out);
}

/* The class each op carries in vkt.h's lists is what its gate and its host
 * reference do: MATH takes integers as f32, PRED gives u8, INT refuses
 * floats, ARITH keeps the dtype; natively and with every native path off. */
typedef struct class_case {
    const char *name, *cls;
    int (*un)(const vkt_tensor *, vkt_tensor **);
    int (*bin)(const vkt_tensor *, const vkt_tensor *, vkt_tensor **);
} class_case;

static void check_class(const class_case *c, vkt_tensor *x, const char *how)
{
    vkt_tensor *o = NULL;
    int s = c->un ? c->un(x, &o) : c->bin(x, x, &o);
    vkt_dtype in = vkt_tensor_dtype(x);
    bool fl = in == VKT_F32, math = strcmp(c->cls, "MATH") == 0, pred = strcmp(c->cls, "PRED") == 0;
    if (strcmp(c->cls, "INT") == 0 && fl) {
        cr_expect_eq(s, VKT_EDTYPE, "%s (INT) on f32, %s: %s", c->name, how, vkt_status_name(s));
        return;
    }
    cr_assert_eq(s, VKT_OK, "%s (%s) on %s, %s: %s", c->name, c->cls, vkt_dtype_name(in), how,
                 vkt_last_error());
    vkt_dtype want = pred ? VKT_U8 : math ? VKT_F32 : in;
    cr_expect_eq(vkt_tensor_dtype(o), want, "%s (%s) on %s, %s: gives %s", c->name, c->cls,
                 vkt_dtype_name(in), how, vkt_dtype_name(vkt_tensor_dtype(o)));
    vkt_tensor_free(o);
}

Test(elementwise, op_classes_are_the_gates_and_the_reference)
{
#define UN_CLASS(n, cls) {#n, #cls, vkt_##n, NULL},
#define BIN_CLASS(n, cls) {#n, #cls, NULL, vkt_##n},
    static const class_case cases[] = {VKT_UNARY_OPS(UN_CLASS) VKT_BINARY_OPS(BIN_CLASS)};
#undef UN_CLASS
#undef BIN_CLASS
    h_shape s4 = {1, {4}};
    vkt_tensor *xi = h_rand(VKT_S32, &s4, 1, 9, 1), *xf = h_rand(VKT_F32, &s4, 1, 9, 2);
    for (int oracle = 0; oracle < 2; oracle++) {
        cr_assert_eq(vkt_ctx_set_native_disable(h_ctx, oracle ? "all" : ""), VKT_OK);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            check_class(&cases[i], xi, oracle ? "host reference" : "native");
            check_class(&cases[i], xf, oracle ? "host reference" : "native");
        }
    }
    h_native_disable_env();
    vkt_tensor_free(xi);
    vkt_tensor_free(xf);
}

Test(elementwise, binary_table_covers_every_op)
{
#define NAME(n, cls) #n,
    static const char *const all[] = {VKT_BINARY_OPS(NAME)};
#undef NAME
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        bool found = false;
        for (size_t k = 0; k < N_BINARY; k++)
            found |= strcmp(all[i], binary_cases[k].name) == 0;
        cr_assert(found, "binary op %s has no case in test_elementwise.c", all[i]);
    }
}

static const binary_case *binary_find(const char *name)
{
    for (size_t k = 0; k < N_BINARY; k++)
        if (strcmp(binary_cases[k].name, name) == 0)
            return &binary_cases[k];
    cr_assert_fail("no binary case %s", name);
    return NULL;
}

/* The dtype the op computes in: promotion, and f32 for integer divide/atan2. */
static vkt_dtype binary_compute(const char *name, vkt_dtype a, vkt_dtype b)
{
    vkt_dtype c = promote(a, b);
    if ((!strcmp(name, "divide") || !strcmp(name, "atan2")) && !is_float(c))
        c = VKT_F32;
    return c;
}

static void binary_one(const binary_case *bc, size_t idx, vkt_dtype da, vkt_dtype db,
                       const h_shape *sa, const h_shape *sb, uint64_t seed)
{
    char what[200];
    snprintf(what, sizeof what, "%s %s%s x %s%s", bc->name, vkt_dtype_name(da), h_shape_str(sa),
             vkt_dtype_name(db), h_shape_str(sb));
    vkt_tensor *a = is_float(da) ? h_rand(da, sa, bc->alo, bc->ahi, seed)
                                 : h_rand(da, sa, bc->ialo, bc->iahi, seed);
    vkt_tensor *b = is_float(db) ? h_rand(db, sb, bc->blo, bc->bhi, seed + 7)
                                 : h_rand(db, sb, bc->iblo, bc->ibhi, seed + 7);
    vkt_dtype c = binary_compute(bc->name, da, db);
    if (vkt_op_support(idx, c, NULL) == VKT_UNDEFINED) {
        vkt_tensor *out = (vkt_tensor *)1;
        int s = bc->fn(a, b, &out);
        cr_assert_eq(s, VKT_EDTYPE, "%s: %s, want VKT_EDTYPE", what, vkt_status_name(s));
        cr_assert_null(out);
        cr_assert(strstr(vkt_last_error(), bc->name), "%s: message '%s' does not name the op", what,
                  vkt_last_error());
    } else {
        vkt_tensor *in[2] = {a, b};
        h_check(call_binary, in, 2, bc, c == VKT_F64 ? bc->f64 : bc->f32, what);
    }
    vkt_tensor_free(a);
    vkt_tensor_free(b);
}

static void run_binary_case(const char *name)
{
    const binary_case *bc = binary_find(name);
    size_t idx = op_index(name);
    const h_shape *shapes;
    size_t nshapes = h_shapes(&shapes);
    /* Same dtype over every shape. */
    for (int d = 0; d < VKT_NUM_DTYPES; d++)
        for (size_t k = 0; k < nshapes; k++) {
            binary_one(bc, idx, dtypes[d], dtypes[d], &shapes[k], &shapes[k], 100 * d + k);
            if (vkt_op_support(idx, binary_compute(name, dtypes[d], dtypes[d]), NULL) ==
                VKT_UNDEFINED)
                break;
        }
    /* Every dtype pair (promotion) on one odd shape. */
    h_shape odd = {2, {3, 87}};
    for (int d = 0; d < VKT_NUM_DTYPES; d++)
        for (int e = 0; e < VKT_NUM_DTYPES; e++)
            binary_one(bc, idx, dtypes[d], dtypes[e], &odd, &odd, 7 * d + e);
    /* Broadcasting, both ways round. */
    const h_bcast *bp;
    size_t nb = h_bcast_pairs(&bp);
    vkt_dtype bdt = (vkt_op_support(idx, VKT_F32, NULL) == VKT_UNDEFINED) ? VKT_S32 : VKT_F32;
    for (size_t k = 0; k < nb; k++) {
        binary_one(bc, idx, bdt, bdt, &bp[k].a, &bp[k].b, 300 + k);
        binary_one(bc, idx, bdt, bdt, &bp[k].b, &bp[k].a, 400 + k);
    }
    /* Float specials against each other (NaN/Inf through comparisons, min, max). */
    if (vkt_op_support(idx, VKT_F32, NULL) != VKT_UNDEFINED) {
        size_t ns = sizeof specials / sizeof specials[0];
        double *av = malloc(ns * ns * sizeof *av), *bv = malloc(ns * ns * sizeof *bv);
        bool flush = flushed_arith(name);
        for (size_t i = 0; i < ns * ns; i++) {
            av[i] = specials[i / ns];
            bv[i] = specials[i % ns];
        }
        h_shape s = {2, {(int64_t)ns, (int64_t)ns}};
        for (int d = 0; d < 2; d++) {
            for (size_t i = 0; flush && d == 0 && i < ns * ns; i++) {
                av[i] = daz(av[i]);
                bv[i] = daz(bv[i]);
            }
            vkt_tensor *in[2] = {h_from(dtypes[d], &s, av, ns * ns),
                                 h_from(dtypes[d], &s, bv, ns * ns)};
            char what[96];
            snprintf(what, sizeof what, "%s %s specials", name, vkt_dtype_name(dtypes[d]));
            h_accept_ftz = flush && d == 0; /* and results below FLT_MIN flush too */
            h_check(call_binary, in, 2, bc, specials_tol(d ? bc->f64 : bc->f32, name), what);
            h_accept_ftz = false;
            if (ieee_op(name))
                check_zero_signs(call_binary, in, 2, bc, what);
            vkt_tensor_free(in[0]);
            vkt_tensor_free(in[1]);
        }
        free(av);
        free(bv);
    }
}

#define BINARY_TEST(n, cls)                                                                        \
    Test(elementwise, binary_##n)                                                                  \
    {                                                                                              \
        run_binary_case(#n);                                                                       \
    }
VKT_BINARY_OPS(BINARY_TEST)

/* Integer edge cases with defined results (ref/binary.c): INT_MIN / -1 wraps,
 * division by zero gives 0, shift counts outside 0..width-1 give 0 or the sign. */
/* f64 remainder is C's fmod exactly, and atan2 within its row, on operands of
 * every exponent: random bits, and magnitudes 2^-1074..2^1023 paired at random
 * (exponent gaps up to the whole range: the fmod loop's longest runs). */
Test(elementwise, f64_remainder_and_atan2_hard_inputs)
{
    enum { N = 12288 };
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    cr_assert(a && b);
    uint64_t st = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < N; i++) {
        double v[2];
        for (int k = 0; k < 2; k++) {
            st ^= st << 13, st ^= st >> 7, st ^= st << 17;
            double u = (double)(st >> 11) / 9007199254740992.0;
            if (i % 2 == 0)
                memcpy(&v[k], &st, sizeof st);
            else
                v[k] = ldexp(1.0 + u, (int)(st % 2098) - 1074) * ((st >> 40) & 1 ? -1 : 1);
        }
        a[i] = v[0];
        b[i] = v[1];
    }
    h_shape s = {1, {N}};
    static const char *const ops[] = {"remainder", "atan2"};
    for (int k = 0; k < 2; k++) {
        const binary_case *bc = binary_find(ops[k]);
        vkt_tensor *in[2] = {h_from(VKT_F64, &s, a, N), h_from(VKT_F64, &s, b, N)};
        char what[64];
        snprintf(what, sizeof what, "%s f64 hard inputs", ops[k]);
        h_check(call_binary, in, 2, bc, bc->f64, what);
        check_zero_signs(call_binary, in, 2, bc, what);
        vkt_tensor_free(in[0]);
        vkt_tensor_free(in[1]);
    }
    free(a);
    free(b);
}

Test(elementwise, integer_edges)
{
    static const double av[] = {
        -2147483648.0, -2147483648.0, 7, -7, 1, 0, 2147483647.0, -1, 255, 128};
    static const double bv[] = {-1, 0, 0, -1, 31, 32, 33, -1, -32, 8};
    h_shape s = {1, {10}};
    static const binary_fn fns[] = {vkt_quotient, vkt_remainder, vkt_left_shift, vkt_right_shift,
                                    vkt_divide,   vkt_multiply,  vkt_pow};
    static const char *const names[] = {"quotient", "remainder", "left_shift", "right_shift",
                                        "divide",   "multiply",  "pow"};
    for (int d = 2; d < 4; d++)
        for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
            vkt_tensor *in[2] = {h_from(dtypes[d], &s, av, 10), h_from(dtypes[d], &s, bv, 10)};
            char what[64];
            snprintf(what, sizeof what, "%s %s edges", names[f], vkt_dtype_name(dtypes[d]));
            /* Integer divide returns f32, so it gets f32 division's bound: Vulkan
             * allows 2.5 ulp and the H200 is 1 ulp off at 2147483647 / 33. */
            const binary_case *bc = binary_find(names[f]);
            h_check(call_binary, in, 2, bc, strcmp(names[f], "divide") ? H_EXACT : bc->f32, what);
            vkt_tensor_free(in[0]);
            vkt_tensor_free(in[1]);
        }
    /* And the values themselves, so both sides agreeing on a wrong answer fails. */
    vkt_tensor *a = h_from(VKT_S32, &s, av, 10), *b = h_from(VKT_S32, &s, bv, 10), *q;
    H_NATIVE(vkt_quotient(a, b, &q));
    int32_t *qv = h_read(q);
    cr_assert_eq(qv[0], INT32_MIN, "INT_MIN / -1 = %d", qv[0]);
    cr_assert_eq(qv[1], 0, "INT_MIN / 0 = %d", qv[1]);
    free(qv);
    vkt_tensor *r;
    H_NATIVE(vkt_right_shift(a, b, &r));
    int32_t *rv = h_read(r);
    cr_assert_eq(rv[3], -1, "-7 >> -1 = %d", rv[3]);
    cr_assert_eq(rv[7], -1, "-1 >> -1 = %d", rv[7]);
    free(rv);
    vkt_tensor_free(a);
    vkt_tensor_free(b);
    vkt_tensor_free(q);
    vkt_tensor_free(r);
}

/* ---- select, clip, as_type ----------------------------------------------------------- */

static int call_select(vkt_tensor *const *in, const void *arg, vkt_tensor **out)
{
    (void)arg;
    return vkt_select(in[0], in[1], in[2], out);
}

static int call_clip(vkt_tensor *const *in, const void *arg, vkt_tensor **out)
{
    (void)arg;
    return vkt_clip(in[0], in[1], in[2], out);
}

Test(elementwise, select)
{
    const h_shape *shapes;
    size_t nshapes = h_shapes(&shapes);
    char what[160];
    for (int p = 0; p < VKT_NUM_DTYPES; p++)
        for (int t = 0; t < VKT_NUM_DTYPES; t++) {
            vkt_dtype f = dtypes[(t + p) % VKT_NUM_DTYPES];
            for (size_t k = 0; k < nshapes; k += 3) {
                vkt_tensor *in[3] = {h_rand(dtypes[p], &shapes[k], -1, 1, k),
                                     h_rand(dtypes[t], &shapes[k], -50, 50, k + 1),
                                     h_rand(f, &shapes[k], -50, 50, k + 2)};
                snprintf(what, sizeof what, "select %s ? %s : %s %s", vkt_dtype_name(dtypes[p]),
                         vkt_dtype_name(dtypes[t]), vkt_dtype_name(f), h_shape_str(&shapes[k]));
                h_check(call_select, in, 3, NULL, H_EXACT, what);
                for (int i = 0; i < 3; i++)
                    vkt_tensor_free(in[i]);
            }
        }
    const h_bcast *bp;
    size_t nb = h_bcast_pairs(&bp);
    for (size_t k = 0; k < nb; k++) {
        vkt_tensor *in[3] = {h_rand(VKT_U8, &bp[k].a, 0, 1, k), h_rand(VKT_F32, &bp[k].b, -5, 5, k),
                             h_scalar(VKT_F32, NAN)};
        snprintf(what, sizeof what, "select bcast %s %s", h_shape_str(&bp[k].a),
                 h_shape_str(&bp[k].b));
        h_check(call_select, in, 3, NULL, H_EXACT, what);
        for (int i = 0; i < 3; i++)
            vkt_tensor_free(in[i]);
    }
}

Test(elementwise, clip)
{
    const h_shape *shapes;
    size_t nshapes = h_shapes(&shapes);
    char what[160];
    for (int d = 0; d < VKT_NUM_DTYPES; d++)
        for (int l = 0; l < VKT_NUM_DTYPES; l++) {
            for (size_t k = 0; k < nshapes; k += 2) {
                vkt_tensor *in[3] = {h_rand(dtypes[d], &shapes[k], -100, 200, k),
                                     h_scalar(dtypes[l], 3),
                                     h_rand(dtypes[l], &shapes[k], 20, 90, k + 5)};
                snprintf(what, sizeof what, "clip %s lo/hi %s %s", vkt_dtype_name(dtypes[d]),
                         vkt_dtype_name(dtypes[l]), h_shape_str(&shapes[k]));
                h_check(call_clip, in, 3, NULL, H_EXACT, what);
                for (int i = 0; i < 3; i++)
                    vkt_tensor_free(in[i]);
            }
        }
    /* NaN in x, lo or hi. */
    h_shape s = {1, {sizeof specials / sizeof specials[0]}};
    for (int d = 0; d < 2; d++) {
        vkt_tensor *in[3] = {h_from(dtypes[d], &s, specials, s.d[0]), h_scalar(dtypes[d], -1),
                             h_scalar(dtypes[d], NAN)};
        h_check(call_clip, in, 3, NULL, H_EXACT, "clip specials hi=NaN");
        vkt_tensor_free(in[2]);
        in[2] = h_scalar(dtypes[d], 2);
        h_check(call_clip, in, 3, NULL, H_EXACT, "clip specials");
        for (int i = 0; i < 3; i++)
            vkt_tensor_free(in[i]);
    }
}

static int call_as_type(vkt_tensor *const *in, const void *arg, vkt_tensor **out)
{
    return vkt_as_type(in[0], *(const vkt_dtype *)arg, out);
}

Test(elementwise, as_type_all_pairs)
{
    const h_shape *shapes;
    size_t nshapes = h_shapes(&shapes);
    static const double edges[] = {NAN,          INFINITY, -INFINITY, 0.0,          -0.0,
                                   0.7,          -0.7,     255.9,     256.0,        -1.0,
                                   -129.5,       3e9,      -3e9,      2147483647.0, -2147483648.0,
                                   2147483648.0, 1e300,    -1e300,    65535.0,      16777217.0};
    char what[160];
    for (int f = 0; f < VKT_NUM_DTYPES; f++)
        for (int t = 0; t < VKT_NUM_DTYPES; t++) {
            vkt_dtype to = dtypes[t];
            for (size_t k = 0; k < nshapes; k += 2) {
                vkt_tensor *in[1] = {h_rand(dtypes[f], &shapes[k], -3e5, 3e5, k)};
                snprintf(what, sizeof what, "as_type %s -> %s %s", vkt_dtype_name(dtypes[f]),
                         vkt_dtype_name(to), h_shape_str(&shapes[k]));
                h_check(call_as_type, in, 1, &to, H_EXACT, what);
                vkt_tensor_free(in[0]);
            }
            h_shape s = {1, {sizeof edges / sizeof edges[0]}};
            vkt_tensor *in[1] = {h_from(dtypes[f], &s, edges, s.d[0])};
            snprintf(what, sizeof what, "as_type %s -> %s edges", vkt_dtype_name(dtypes[f]),
                     vkt_dtype_name(to));
            h_check(call_as_type, in, 1, &to, H_EXACT, what);
            vkt_tensor_free(in[0]);
        }
}

/* The documented conversions themselves (vkt.h), not only agreement. */
Test(elementwise, as_type_semantics)
{
    static const double v[] = {NAN, -1.9, 1e10, -1e10, 300.0};
    h_shape s = {1, {5}};
    vkt_tensor *x = h_from(VKT_F32, &s, v, 5), *i, *u;
    H_NATIVE(vkt_as_type(x, VKT_S32, &i));
    H_NATIVE(vkt_as_type(i, VKT_U8, &u));
    int32_t *iv = h_read(i);
    uint8_t *uv = h_read(u);
    cr_assert_eq(iv[0], 0, "NaN -> %d", iv[0]);
    cr_assert_eq(iv[1], -1, "-1.9 -> %d", iv[1]);
    cr_assert_eq(iv[2], INT32_MAX, "1e10 -> %d", iv[2]);
    cr_assert_eq(iv[3], INT32_MIN, "-1e10 -> %d", iv[3]);
    cr_assert_eq(uv[4], 300 & 0xff, "300 s32 -> u8 %d", uv[4]);
    free(iv);
    free(uv);
    vkt_tensor_free(x);
    vkt_tensor_free(i);
    vkt_tensor_free(u);
}

/* ---- sizes past the dispatch limits ------------------------------------------------- */

Test(elementwise, past_65535_workgroups)
{
    h_shape big = h_huge_shape();
    vkt_tensor *a = h_rand(VKT_F32, &big, -10, 10, 1), *b = h_rand(VKT_F32, &big, -10, 10, 2);
    vkt_tensor *in[2] = {a, b};
    h_check(call_binary, in, 2, binary_find("add"), H_EXACT, "add past 65535 groups");
    h_check(call_unary, in, 1, unary_find("negate"), H_EXACT, "negate past 65535 groups");
    vkt_tensor_free(a);
    vkt_tensor_free(b);
}

/* ---- the poisoning itself ------------------------------------------------------------- */

/* h_poison's promise, checked white-box: after it, the op's result occupies the
 * poisoned range, which held the pattern until the op wrote it. */
Test(elementwise, poison_lands_on_the_result)
{
    static const int64_t sizes[] = {1, 3, 64, 257, 4096, 100000};
    /* Fragment the heap first: holes of assorted sizes before the poison. */
    vkt_tensor *keep[16] = {0};
    for (int i = 0; i < 16; i++) {
        h_shape s = {1, {(int64_t)(37 * i + 5)}};
        keep[i] = h_rand(VKT_F32, &s, 0, 1, (uint64_t)i);
    }
    for (int i = 0; i < 16; i += 2) {
        vkt_tensor_free(keep[i]);
        keep[i] = NULL;
    }
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        h_shape s = {1, {sizes[k]}};
        vkt_tensor *a = h_rand(VKT_F32, &s, -1, 1, k), *b = h_rand(VKT_F32, &s, -1, 1, k + 1), *out;
        size_t nb = (size_t)sizes[k] * 4;
        H_OK(vkt_sync(h_ctx));
        uint8_t *pat = malloc(nb);
        h_poison_fill(pat, nb);
        /* h_poison's steps, keeping the range's address. */
        int64_t pshape[1] = {(int64_t)nb};
        vkt_tensor *p;
        H_OK(vkt_tensor_from_host(h_ctx, VKT_U8, pshape, 1, pat, &p));
        const uint8_t *where = p->st->dev.mapped;
        VkDeviceSize off = p->st->dev.offset;
        VkBuffer buf = p->st->dev.buffer;
        vkt_tensor_free(p);
        if (!where) /* staged devices: the range cannot be read in place */
            cr_skip_test("storage on %s is not host-visible", vkt_ctx_device_name(h_ctx));
        cr_assert(memcmp(where, pat, nb) == 0, "freed range kept its contents");
        H_NATIVE(vkt_add(a, b, &out));
        cr_assert(out->st->dev.buffer == buf && out->st->dev.offset == off,
                  "size %lld: result at offset %llu, poisoned range at %llu", (long long)sizes[k],
                  (unsigned long long)out->st->dev.offset, (unsigned long long)off);
        free(pat);
        vkt_tensor_free(out);
        vkt_tensor_free(a);
        vkt_tensor_free(b);
    }
    for (int i = 0; i < 16; i++)
        vkt_tensor_free(keep[i]);
}

/* The pattern is recognised for every dtype, and real data is not. */
Test(elementwise, poison_pattern_is_recognised)
{
    for (int d = 0; d < VKT_NUM_DTYPES; d++) {
        size_t n = 33, nb = n * vkt_dtype_size(dtypes[d]);
        h_shape s = {1, {(int64_t)n}};
        vkt_tensor *z;
        uint8_t *raw = malloc(nb);
        h_poison_fill(raw, nb);
        H_OK(vkt_tensor_from_host(h_ctx, dtypes[d], s.d, 1, raw, &z));
        void *back = h_read(z);
        for (size_t i = 0; i < n; i++)
            cr_assert(h_is_poison(dtypes[d], back, i), "%s element %zu", vkt_dtype_name(dtypes[d]),
                      i);
        if (is_float(dtypes[d]))
            cr_assert(isnan(h_get(dtypes[d], back, 0)), "poison is a NaN for %s",
                      vkt_dtype_name(dtypes[d]));
        free(back);
        free(raw);
        vkt_tensor_free(z);
        vkt_tensor *r = h_rand(dtypes[d], &s, -5, 5, 9);
        back = h_read(r);
        for (size_t i = 0; i < n; i++)
            cr_assert(!h_is_poison(dtypes[d], back, i));
        free(back);
        vkt_tensor_free(r);
    }
}

/* The flushing property agrees with what the public add does to a subnormal,
 * and the sign-bit ops, comparisons and min/max keep subnormals either way. */
Test(elementwise, subnormal_flushing_is_reported)
{
    int f = vkt_ctx_flushes_subnormals(h_ctx);
    cr_assert(f == 0 || f == 1, "vkt_ctx_flushes_subnormals: %d (%s)", f, vkt_last_error());
    cr_expect_eq(vkt_ctx_flushes_subnormals(h_ctx), f, "measured once, then the same answer");
    cr_expect_lt(vkt_ctx_flushes_subnormals(NULL), 0);
    cr_expect_gt(vkt_ctx_max_tensor_bytes(h_ctx), 0);
    cr_expect_eq(vkt_ctx_max_tensor_bytes(NULL), 0);
    const double tiny[2] = {0x1p-140, -0x1p-140}, zero[2] = {0, 0};
    h_shape s = {1, {2}};
    vkt_tensor *x = h_from(VKT_F32, &s, tiny, 2), *z = h_from(VKT_F32, &s, zero, 2), *sum, *neg,
               *gt, *mx;
    H_NATIVE(vkt_add(x, z, &sum));
    H_NATIVE(vkt_negate(x, &neg));
    H_NATIVE(vkt_greater(x, z, &gt));
    H_NATIVE(vkt_max(x, z, &mx));
    float *sv = h_read(sum), *nv = h_read(neg), *mv = h_read(mx);
    uint8_t *gv = h_read(gt);
    cr_expect_eq(sv[0] == 0.0f, f == 1, "2^-140 + 0 = %g, but flushes_subnormals says %d", sv[0],
                 f);
    cr_expect_eq(nv[0], -0x1p-140f, "-(2^-140) = %g", nv[0]);
    cr_expect_eq(nv[1], 0x1p-140f, "-(-2^-140) = %g", nv[1]);
    cr_expect(gv[0] == 1 && gv[1] == 0, "2^-140 > 0: %d, -2^-140 > 0: %d", gv[0], gv[1]);
    cr_expect(mv[0] == 0x1p-140f && mv[1] == 0.0f, "max(2^-140, 0) = %g, max(-2^-140, 0) = %g",
              mv[0], mv[1]);
    free(sv);
    free(nv);
    free(mv);
    free(gv);
    vkt_tensor_free(x);
    vkt_tensor_free(z);
    vkt_tensor_free(sum);
    vkt_tensor_free(neg);
    vkt_tensor_free(gt);
    vkt_tensor_free(mx);
}

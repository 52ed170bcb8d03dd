/* test_fallback.c — the fallback exits as an interposer sees them: every op,
 * forced down the fallback, calls host_result exactly once through the PLT and
 * gives the reference's result; natural fallbacks do the same; host-resident
 * chains report host_resident_op once per op; and bad calls fail with the
 * exact status and a message naming the op.
 *
 * Linked with libvkt_interposer ahead of libvkt, so its host_result and
 * host_resident_op win the dynamic linker's lookup, as libfbcount's do. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h" /* white-box: storage sharing, device limits and the last gate's reason */
#include "harness.h"
#include "interposer.h"

TestSuite(fallback, .init = h_setup, .fini = h_teardown, .timeout = 240);

/* ---- helpers ------------------------------------------------------------------------ */

#define shp(r, d0, d1, d2, d3)                                                                     \
    {                                                                                              \
        r,                                                                                         \
        {                                                                                          \
            d0, d1, d2, d3, 0, 0                                                                   \
        }                                                                                          \
    }

static vkt_stats_entry stat_of(const char *op)
{
    vkt_stats_entry e[256];
    size_t n = vkt_stats(e, 256);
    for (size_t i = 0; i < n && i < 256; i++)
        if (strcmp(e[i].op, op) == 0)
            return e[i];
    return (vkt_stats_entry){op, 0, 0, 0};
}

static bool in_matrix(const char *op)
{
    for (size_t i = 0; i < vkt_op_count(); i++)
        if (strcmp(vkt_op_name(i), op) == 0)
            return true;
    return false;
}

/* ---- one valid call per op ------------------------------------------------------------ */

typedef struct input_spec {
    vkt_dtype dt;
    h_shape shape;
    double lo, hi;
} input_spec;

typedef struct op_case {
    const char *name;
    h_call call;
    int nin;
    input_spec in[3];
} op_case;

#define F32(...)                                                                                   \
    {                                                                                              \
        VKT_F32, __VA_ARGS__                                                                       \
    }
// clang-format off
#define S32(...) {VKT_S32, __VA_ARGS__}
// clang-format on

typedef int (*unary_fn)(const vkt_tensor *, vkt_tensor **);
typedef int (*binary_fn)(const vkt_tensor *, const vkt_tensor *, vkt_tensor **);

#define UNARY_CALL(n, cls)                                                                         \
    static int call_##n(vkt_tensor *const *in, const void *a, vkt_tensor **o)                      \
    {                                                                                              \
        (void)a;                                                                                   \
        return vkt_##n(in[0], o);                                                                  \
    }
#define BINARY_CALL(n, cls)                                                                        \
    static int call_##n(vkt_tensor *const *in, const void *a, vkt_tensor **o)                      \
    {                                                                                              \
        (void)a;                                                                                   \
        return vkt_##n(in[0], in[1], o);                                                           \
    }
VKT_UNARY_OPS(UNARY_CALL)
VKT_BINARY_OPS(BINARY_CALL)

static int call_select(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    return vkt_select(in[0], in[1], in[2], o);
}
static int call_clip(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    return vkt_clip(in[0], in[1], in[2], o);
}
static int call_as_type(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    return vkt_as_type(in[0], VKT_S32, o);
}
static const int axis1[] = {1};
#define REDUCE_CALL(n)                                                                             \
    static int call_##n(vkt_tensor *const *in, const void *a, vkt_tensor **o)                      \
    {                                                                                              \
        (void)a;                                                                                   \
        return vkt_##n(in[0], axis1, 1, false, o);                                                 \
    }
REDUCE_CALL(sum)
REDUCE_CALL(product)
REDUCE_CALL(reduce_max)
REDUCE_CALL(reduce_min)
REDUCE_CALL(all)
REDUCE_CALL(any)
static int call_argmax(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    return vkt_argmax(in[0], 1, false, o);
}
static int call_argmin(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    return vkt_argmin(in[0], VKT_ALL_AXES, true, o);
}
static int call_reshape(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    static const int64_t s[2] = {12, 5};
    return vkt_reshape(in[0], s, 2, o);
}
static int call_transpose(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    static const int perm[3] = {2, 0, 1};
    return vkt_transpose(in[0], perm, o);
}
static int call_broadcast(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    static const int64_t s[3] = {3, 4, 5};
    return vkt_broadcast(in[0], s, 3, NULL, o);
}
static int call_slice(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    static const int64_t start[3] = {0, 1, 1}, len[3] = {3, 2, 3}, str[3] = {1, 1, 2};
    return vkt_slice(in[0], start, len, str, o);
}
static int call_pad(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    static const int64_t lo[2] = {1, -1}, hi[2] = {0, 2}, interior[2] = {1, 0};
    return vkt_pad(in[0], in[1], lo, hi, interior, o);
}
static int call_reverse(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    static const int axes[2] = {0, 2};
    return vkt_reverse(in[0], axes, 2, o);
}
static int call_concatenate(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    const vkt_tensor *xs[2] = {in[0], in[1]};
    return vkt_concatenate(xs, 2, 0, o);
}
static int call_gather(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    return vkt_gather(in[0], in[1], NULL, o);
}
/* assign into a fresh tensor of in[0]'s shape, which is then the result. */
static int call_assign(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    vkt_tensor *dst = NULL;
    int s = vkt_zeros(h_ctx, vkt_tensor_dtype(in[0]), vkt_tensor_shape(in[0]),
                      vkt_tensor_rank(in[0]), &dst);
    if (s == VKT_OK)
        s = vkt_assign(dst, in[0]);
    if (s != VKT_OK) {
        vkt_tensor_free(dst);
        dst = NULL;
    }
    *o = dst;
    return s;
}
static int call_dot(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    static const int ca[1] = {1}, cb[1] = {0};
    return vkt_dot(in[0], ca, NULL, in[1], cb, NULL, 1, 0, o);
}
static int call_sort(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    return vkt_sort(in[0], 1, false, o);
}
static int call_argsort(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    return vkt_argsort(in[0], 1, true, o);
}
static int call_conv(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    return vkt_conv(in[0], in[1], NULL, o);
}
static const int64_t win[4] = {1, 1, 2, 2};
#define WINDOW_CALL(n)                                                                             \
    static int call_##n(vkt_tensor *const *in, const void *a, vkt_tensor **o)                      \
    {                                                                                              \
        (void)a;                                                                                   \
        return vkt_##n(in[0], win, NULL, o);                                                       \
    }
WINDOW_CALL(window_sum)
WINDOW_CALL(window_product)
WINDOW_CALL(window_max)
WINDOW_CALL(window_min)
static int call_window_scatter_max(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    vkt_window_opts opts = {.strides = {1, 1, 2, 2}};
    return vkt_window_scatter_max(in[0], in[1], in[2], win, &opts, o);
}
static int call_window_scatter_min(vkt_tensor *const *in, const void *a, vkt_tensor **o)
{
    (void)a;
    vkt_window_opts opts = {.strides = {1, 1, 2, 2}};
    return vkt_window_scatter_min(in[0], in[1], in[2], win, &opts, o);
}

/* Integer-only ops take s32, the rest f32 in (0.1, 0.9): inside every math
 * function's domain except acosh's, which gives NaN on both sides alike. */
#define U_F(n) {#n, call_##n, 1, {F32(shp(2, 3, 5, 0, 0), 0.1, 0.9)}},
#define U_I(n) {#n, call_##n, 1, {S32(shp(2, 3, 5, 0, 0), -100, 100)}},
#define B_F(n)                                                                                     \
    {#n, call_##n, 2, {F32(shp(2, 3, 5, 0, 0), 0.1, 0.9), F32(shp(1, 5, 0, 0, 0), 0.1, 0.9)}},
#define B_I(n)                                                                                     \
    {#n, call_##n, 2, {S32(shp(2, 3, 5, 0, 0), -100, 100), S32(shp(1, 5, 0, 0, 0), 0, 5)}},
#define X345 F32(shp(3, 3, 4, 5, 0), -2, 2)
static const op_case op_cases[] = {
    U_F(negate) U_F(abs) U_F(sign) U_F(floor) U_F(ceil) U_F(round) U_F(exp) U_F(expm1) U_F(log)
        U_F(log1p) U_F(sqrt) U_F(rsqrt) U_F(cbrt) U_F(sin) U_F(cos) U_F(tan) U_F(asin) U_F(acos)
            U_F(atan) U_F(sinh) U_F(cosh) U_F(tanh) U_F(asinh) U_F(acosh) U_F(atanh) U_F(sigmoid)
                U_F(erf) U_F(erfc) U_F(erf_inv) U_F(is_nan) U_F(is_infinity) U_F(logical_not)
                    U_I(bitwise_not) U_I(count_leading_zeros) U_I(population_count) B_F(add)
                        B_F(subtract) B_F(multiply) B_F(divide) B_F(pow) B_F(min) B_F(max) B_F(
                            remainder) B_F(atan2) B_I(quotient) B_F(equal) B_F(not_equal) B_F(less)
                            B_F(less_equal) B_F(greater) B_F(greater_equal) B_F(logical_and)
                                B_F(logical_or) B_F(logical_xor) B_I(bitwise_and) B_I(bitwise_or)
                                    B_I(bitwise_xor) B_I(left_shift)
                                        B_I(right_shift){"select",
                                                         call_select,
                                                         3,
                                                         {{VKT_U8, shp(2, 3, 5, 0, 0), 0, 1},
                                                          F32(shp(2, 3, 5, 0, 0), -1, 1),
                                                          F32(shp(1, 5, 0, 0, 0), -1, 1)}},
    {"clip",
     call_clip,
     3,
     {F32(shp(2, 3, 5, 0, 0), -2, 2), F32(shp(0, 0, 0, 0, 0), -1, -1),
      F32(shp(1, 5, 0, 0, 0), 0.5, 1)}},
    {"as_type", call_as_type, 1, {F32(shp(2, 3, 5, 0, 0), -100, 100)}},
    {"sum", call_sum, 1, {X345}},
    {"product", call_product, 1, {X345}},
    {"reduce_max", call_reduce_max, 1, {X345}},
    {"reduce_min", call_reduce_min, 1, {X345}},
    {"all", call_all, 1, {S32(shp(3, 3, 4, 5, 0), 0, 3)}},
    {"any", call_any, 1, {S32(shp(3, 3, 4, 5, 0), -1, 0)}},
    {"argmax", call_argmax, 1, {X345}},
    {"argmin", call_argmin, 1, {X345}},
    {"reshape", call_reshape, 1, {X345}},
    {"transpose", call_transpose, 1, {X345}},
    {"broadcast", call_broadcast, 1, {F32(shp(2, 4, 1, 0, 0), -2, 2)}},
    {"slice", call_slice, 1, {X345}},
    {"pad", call_pad, 2, {F32(shp(2, 3, 4, 0, 0), -2, 2), F32(shp(0, 0, 0, 0, 0), 7, 7)}},
    {"reverse", call_reverse, 1, {X345}},
    {"concatenate",
     call_concatenate,
     2,
     {F32(shp(2, 3, 4, 0, 0), -2, 2), F32(shp(2, 2, 4, 0, 0), -2, 2)}},
    {"gather", call_gather, 2, {F32(shp(2, 4, 5, 0, 0), -2, 2), S32(shp(2, 3, 1, 0, 0), 0, 3)}},
    {"assign", call_assign, 1, {X345}},
    {"dot", call_dot, 2, {F32(shp(2, 3, 4, 0, 0), -2, 2), F32(shp(2, 4, 5, 0, 0), -2, 2)}},
    {"sort", call_sort, 1, {F32(shp(2, 3, 7, 0, 0), -2, 2)}},
    {"argsort", call_argsort, 1, {S32(shp(2, 3, 7, 0, 0), -2, 2)}},
    {"conv", call_conv, 2, {F32(shp(4, 1, 2, 5, 5), -1, 1), F32(shp(4, 3, 2, 3, 3), -1, 1)}},
    {"window_sum", call_window_sum, 1, {F32(shp(4, 1, 1, 5, 5), -1, 1)}},
    {"window_product", call_window_product, 1, {F32(shp(4, 1, 1, 5, 5), -1, 1)}},
    {"window_max", call_window_max, 1, {F32(shp(4, 1, 1, 5, 5), -1, 1)}},
    {"window_min", call_window_min, 1, {F32(shp(4, 1, 1, 5, 5), -1, 1)}},
    {"window_scatter_max",
     call_window_scatter_max,
     3,
     {F32(shp(4, 1, 1, 4, 4), -1, 1), F32(shp(4, 1, 1, 2, 2), 0, 1),
      F32(shp(0, 0, 0, 0, 0), 0, 0)}},
    {"window_scatter_min",
     call_window_scatter_min,
     3,
     {F32(shp(4, 1, 1, 4, 4), -1, 1), F32(shp(4, 1, 1, 2, 2), 0, 1),
      F32(shp(0, 0, 0, 0, 0), 0, 0)}},
};
#define N_CASES (sizeof op_cases / sizeof op_cases[0])

static const op_case *case_of(const char *name)
{
    for (size_t k = 0; k < N_CASES; k++)
        if (strcmp(op_cases[k].name, name) == 0)
            return &op_cases[k];
    return NULL;
}

static void make_inputs(const op_case *oc, vkt_tensor **in, uint64_t seed)
{
    for (int i = 0; i < oc->nin; i++)
        in[i] =
            h_rand(oc->in[i].dt, &oc->in[i].shape, oc->in[i].lo, oc->in[i].hi, seed + (uint64_t)i);
}

static void free_inputs(const op_case *oc, vkt_tensor **in)
{
    for (int i = 0; i < oc->nin; i++)
        vkt_tensor_free(in[i]);
}

/* ---- (b) the build and the link order ---------------------------------------------------- */

Test(fallback, built_optimized)
{
    /* The PLT contract matters at the optimization level users build at. */
    const char *opt = VKT_TEST_OPTIMIZATION;
    cr_assert(
        !strcmp(opt, "2") || !strcmp(opt, "3"),
        "libvkt is built with -O%s; the fallback tests need -O2 or -O3 (meson -Dbuildtype=release)",
        opt);
}

Test(fallback, interposer_is_the_resolved_host_result)
{
    void *sym = dlsym(RTLD_DEFAULT, "host_result");
    cr_assert_eq(sym, ip_host_result_addr(),
                 "host_result resolves to %p, not the interposer's %p: link order?", sym,
                 ip_host_result_addr());
}

Test(fallback, every_op_has_a_call)
{
    for (size_t i = 0; i < vkt_op_count(); i++)
        cr_assert_not_null(case_of(vkt_op_name(i)),
                           "op %s is in the support matrix but not in test_fallback.c's "
                           "op_cases",
                           vkt_op_name(i));
    for (size_t k = 0; k < N_CASES; k++)
        cr_assert(in_matrix(op_cases[k].name),
                  "op_cases lists %s, which is not in the support matrix", op_cases[k].name);
}

/* reshape is a view: it has no native kernel to disable and no fallback; a
 * forced run is still one native call sharing its input's storage. */
static void check_view(const op_case *oc)
{
    vkt_tensor *in[3] = {0};
    make_inputs(oc, in, 11);
    H_OK(vkt_ctx_set_native_disable(h_ctx, oc->name));
    vkt_stats_entry s0 = stat_of(oc->name);
    ip_reset();
    vkt_tensor *v = NULL;
    H_OK(oc->call(in, NULL, &v));
    ip_counts c = ip_get();
    vkt_stats_entry s1 = stat_of(oc->name);
    H_OK(vkt_ctx_set_native_disable(h_ctx, ""));
    cr_assert_eq(c.host_result, 0, "%s forced: a view called host_result %lu times", oc->name,
                 c.host_result);
    cr_assert_eq(c.host_resident_op, 0);
    cr_assert_eq(s1.native - s0.native, 1, "%s forced: native counter +%llu", oc->name,
                 (unsigned long long)(s1.native - s0.native));
    cr_assert_eq(s1.fallback, s0.fallback);
    cr_assert_eq(v->st, in[0]->st, "%s: the view has storage of its own", oc->name);
    vkt_tensor_free(v);
    free_inputs(oc, in);
}

/* Native run, forced fallback and the oracle for one op: the native run runs
 * natively unless the static gates send it down the fallback (h_run), the
 * forced fallback calls host_result exactly once, equals the oracle bit for bit
 * and the native result within a loose bound (the per-op tolerances are the
 * family suites' job); the statistics move by exactly one call each time. */
static void check_forced(const op_case *oc)
{
    if (strcmp(oc->name, "reshape") == 0) {
        check_view(oc);
        return;
    }
    vkt_tensor *in[3] = {0};
    make_inputs(oc, in, 11);
    char what[96];

    vkt_stats_entry s0 = stat_of(oc->name);
    ip_reset();
    vkt_tensor *nat = NULL;
    H_OK(h_run(oc->call, in, oc->nin, NULL, &nat, oc->name));
    ip_counts c = ip_get();
    vkt_stats_entry s1 = stat_of(oc->name);
    cr_assert_eq(s1.native + s1.fallback - s0.native - s0.fallback, 1,
                 "%s: one call, counters moved by %llu", oc->name,
                 (unsigned long long)(s1.native + s1.fallback - s0.native - s0.fallback));
    cr_assert_eq(c.host_result, s1.fallback - s0.fallback,
                 "%s: %lu host_result calls, fallback counter +%llu", oc->name, c.host_result,
                 (unsigned long long)(s1.fallback - s0.fallback));
    cr_assert_eq(c.host_resident_op, 0);

    H_OK(vkt_ctx_set_native_disable(h_ctx, oc->name));
    ip_reset();
    vkt_tensor *forced = NULL;
    H_OK(oc->call(in, NULL, &forced));
    c = ip_get();
    H_OK(vkt_ctx_set_native_disable(h_ctx, ""));
    vkt_stats_entry s2 = stat_of(oc->name);
    cr_assert_eq(c.host_result, 1, "%s forced: %lu host_result calls, want 1", oc->name,
                 c.host_result);
    cr_assert_eq(c.host_resident_op, 0, "%s forced: %lu host_resident_op calls", oc->name,
                 c.host_resident_op);
    /* assign's fallback result is a temporary that is then copied into dst. */
    if (strcmp(oc->name, "assign") != 0)
        cr_assert_eq(c.last_out, forced,
                     "%s forced: host_result got another tensor than the result", oc->name);
    cr_assert_eq(c.last_nbytes, vkt_tensor_nbytes(forced));
    cr_assert_eq(s2.fallback - s1.fallback, 1, "%s forced: fallback counter +%llu", oc->name,
                 (unsigned long long)(s2.fallback - s1.fallback));
    cr_assert_eq(s2.native, s1.native);
    cr_assert_eq(vkt_tensor_residency(forced), VKT_DEVICE);

    vkt_tensor *oracle = NULL;
    H_OK(h_oracle(oc->call, in, NULL, &oracle));
    snprintf(what, sizeof what, "%s forced fallback vs oracle", oc->name);
    h_compare(forced, oracle, H_EXACT, what);
    snprintf(what, sizeof what, "%s forced fallback vs native", oc->name);
    h_compare(forced, nat, (h_tol){1e-3, 1e-3, 0}, what);

    vkt_tensor_free(nat);
    vkt_tensor_free(forced);
    vkt_tensor_free(oracle);
    free_inputs(oc, in);
}

static void check_ops(size_t part, size_t parts)
{
    for (size_t i = part; i < vkt_op_count(); i += parts) {
        const op_case *oc = case_of(vkt_op_name(i));
        cr_assert_not_null(oc, "op %s has no call in op_cases", vkt_op_name(i));
        check_forced(oc);
    }
}

Test(fallback, every_op_forced_part0)
{
    check_ops(0, 4);
}
Test(fallback, every_op_forced_part1)
{
    check_ops(1, 4);
}
Test(fallback, every_op_forced_part2)
{
    check_ops(2, 4);
}
Test(fallback, every_op_forced_part3)
{
    check_ops(3, 4);
}

/* ---- natural fallbacks ------------------------------------------------------------------ */

Test(fallback, f64_pow_falls_back_once)
{
    h_shape s = shp(1, 1000, 0, 0, 0);
    vkt_tensor *x = h_rand(VKT_F64, &s, 0.1, 5, 3), *e = h_rand(VKT_F64, &s, -3, 3, 4), *y = NULL,
               *ref = NULL;
    vkt_stats_entry s0 = stat_of("pow");
    ip_reset();
    H_OK(vkt_pow(x, e, &y));
    ip_counts c = ip_get();
    vkt_stats_entry s1 = stat_of("pow");
    cr_assert_eq(c.host_result, 1, "f64 pow: %lu host_result calls", c.host_result);
    cr_assert_eq(s1.fallback - s0.fallback, 1);
    cr_assert_eq(s1.native, s0.native);
    vkt_tensor *in[2] = {x, e};
    H_OK(h_oracle(call_pow, in, NULL, &ref));
    h_compare(y, ref, H_EXACT, "f64 pow vs oracle");
    vkt_tensor_free(x);
    vkt_tensor_free(e);
    vkt_tensor_free(y);
    vkt_tensor_free(ref);
}

/* 33,600,000 f32 = 134.4 MB: past lavapipe's 128 MiB maxStorageBufferRange. */
Test(fallback, past_max_storage_buffer_range_falls_back_once, .timeout = 200)
{
    /* Just past the range: 33,554,432 floats on lavapipe. */
    int64_t n = h_past_range(4, 45568);
    h_shape s = shp(1, n, 0, 0, 0);
    vkt_tensor *a = h_rand(VKT_F32, &s, -1, 1, 5), *b = h_rand(VKT_F32, &s, -1, 1, 6), *y = NULL;
    vkt_stats_entry s0 = stat_of("add");
    ip_reset();
    H_OK(vkt_add(a, b, &y));
    ip_counts c = ip_get();
    vkt_stats_entry s1 = stat_of("add");
    cr_assert_eq(c.host_result, 1, "large add: %lu host_result calls", c.host_result);
    cr_assert_eq(c.last_nbytes, (size_t)n * 4);
    cr_assert_eq(s1.fallback - s0.fallback, 1);
    cr_assert_eq(s1.native, s0.native);
    float *av = h_read(a), *bv = h_read(b), *yv = h_read(y);
    for (size_t i = 0; i < (size_t)n; i += 4099)
        cr_assert_eq(yv[i], av[i] + bv[i], "element %zu", i);
    cr_assert_eq(yv[n - 1], av[n - 1] + bv[n - 1]);
    free(av);
    free(bv);
    free(yv);
    vkt_tensor_free(a);
    vkt_tensor_free(b);
    vkt_tensor_free(y);
}

/* ---- (c) residency -------------------------------------------------------------------------- */

static int chain_step(int k, const vkt_tensor *x, vkt_tensor **out)
{
    static const int64_t s[2] = {6, 4};
    static const int perm[2] = {1, 0};
    static const int ax[1] = {0};
    switch (k) {
    case 0: return vkt_negate(x, out);
    case 1: return vkt_reshape(x, s, 2, out);
    case 2: return vkt_transpose(x, perm, out);
    case 3: return vkt_exp(x, out);
    case 4: return vkt_sum(x, ax, 1, false, out);
    default: return vkt_sqrt(x, out);
    }
}
#define CHAIN 6

/* Runs the chain from x: returns the last tensor. */
static vkt_tensor *run_chain(vkt_tensor *x)
{
    vkt_tensor *cur = x;
    for (int k = 0; k < CHAIN; k++) {
        vkt_tensor *next = NULL;
        H_OK(chain_step(k, cur, &next));
        if (cur != x)
            vkt_tensor_free(cur);
        cur = next;
    }
    return cur;
}

Test(fallback, host_resident_chain)
{
    h_shape s = shp(2, 4, 6, 0, 0);
    vkt_tensor *x = h_rand(VKT_F32, &s, -1, 1, 8), *h = NULL;
    H_OK(vkt_ctx_set_fallback_result(h_ctx, VKT_HOST));
    H_OK(vkt_ctx_set_native_disable(h_ctx, "abs"));
    ip_reset();
    H_OK(vkt_abs(x, &h));
    H_OK(vkt_ctx_set_native_disable(h_ctx, ""));
    cr_assert_eq(ip_get().host_result, 1);
    cr_assert_eq(vkt_tensor_residency(h), VKT_HOST,
                 "a fallback under VKT_HOST leaves its result on the host");

    vkt_stats_entry n0 = stat_of("negate");
    ip_reset();
    vkt_tensor *end = run_chain(h);
    ip_counts c = ip_get();
    cr_assert_eq(c.host_resident_op, CHAIN, "%lu host_resident_op calls for a chain of %d",
                 c.host_resident_op, CHAIN);
    cr_assert_eq(c.host_result, 0, "%lu host_result calls in a host-resident chain", c.host_result);
    cr_assert_eq(vkt_tensor_residency(end), VKT_HOST);
    cr_assert_eq(c.last_out, end);
    cr_assert_eq(stat_of("negate").host - n0.host, 1);

    /* The same chain on the device, under the oracle, gives the same bits. */
    H_OK(vkt_ctx_set_fallback_result(h_ctx, VKT_DEVICE));
    vkt_tensor *d = NULL;
    H_OK(vkt_ctx_set_native_disable(h_ctx, "all"));
    H_OK(vkt_abs(x, &d));
    vkt_tensor *dend = run_chain(d);
    H_OK(vkt_ctx_set_native_disable(h_ctx, ""));
    h_compare(end, dend, H_EXACT, "host-resident chain vs the oracle on the device");

    /* Mixed inputs go back to the device and run natively. */
    vkt_tensor *y = h_rand(VKT_F32, &s, -1, 1, 9), *m = NULL;
    cr_assert_eq(vkt_tensor_residency(h), VKT_HOST);
    vkt_stats_entry a0 = stat_of("add");
    ip_reset();
    H_OK(vkt_add(h, y, &m));
    c = ip_get();
    vkt_stats_entry a1 = stat_of("add");
    cr_assert_eq(vkt_tensor_residency(m), VKT_DEVICE);
    cr_assert_eq(c.host_resident_op, 0);
    cr_assert_eq(c.host_result, 0);
    cr_assert_eq(a1.native - a0.native, 1, "mixed add counted native +%llu",
                 (unsigned long long)(a1.native - a0.native));
    cr_assert_eq(a1.host, a0.host);

    vkt_tensor_free(m);
    vkt_tensor_free(y);
    vkt_tensor_free(d);
    vkt_tensor_free(dend);
    vkt_tensor_free(end);
    vkt_tensor_free(h);
    vkt_tensor_free(x);
}

/* Asserts that the latest op produced `out` on the host and reported it once
 * more through host_resident_op (`calls` in all since ip_reset), with its size. */
static void expect_host_op(const char *what, const vkt_tensor *out, unsigned long calls,
                           size_t nbytes)
{
    ip_counts c = ip_get();
    cr_assert_eq(c.host_resident_op, calls, "%s: %lu host_resident_op calls, want %lu", what,
                 c.host_resident_op, calls);
    cr_assert_eq(c.host_result, 0, "%s: %lu host_result calls on host-resident inputs", what,
                 c.host_result);
    cr_assert_eq(c.last_out, out, "%s: host_resident_op got another tensor than the result", what);
    cr_assert_eq(c.last_nbytes, nbytes, "%s: host_resident_op got %zu bytes, the result has %zu",
                 what, c.last_nbytes, nbytes);
    cr_assert_eq(vkt_tensor_nbytes(out), nbytes);
    cr_assert_eq(vkt_tensor_residency(out), VKT_HOST, "%s: result left the host", what);
    cr_assert_str_eq(h_ctx->last_gate, "inputs are host-resident");
}

static void expect_moved(const char *op, vkt_stats_entry before, uint64_t native, uint64_t fallback,
                         uint64_t host)
{
    vkt_stats_entry now = stat_of(op);
    cr_assert_eq(now.native - before.native, native, "%s: native counter +%llu, want +%llu", op,
                 (unsigned long long)(now.native - before.native), (unsigned long long)native);
    cr_assert_eq(now.fallback - before.fallback, fallback, "%s: fallback counter +%llu, want +%llu",
                 op, (unsigned long long)(now.fallback - before.fallback),
                 (unsigned long long)fallback);
    cr_assert_eq(now.host - before.host, host, "%s: host counter +%llu, want +%llu", op,
                 (unsigned long long)(now.host - before.host), (unsigned long long)host);
}

/* The downstream story of vkt(3)'s RESIDENCY AND FALLBACKS: a dot that falls back under
 * VKT_FALLBACK_RESULT=host leaves its result on the host, and the reshape,
 * transpose and sum of it then run there, each reported once with its size. */
static int dot_chain(const vkt_tensor *a, const vkt_tensor *b, vkt_tensor **d, vkt_tensor **r,
                     vkt_tensor **t, vkt_tensor **s, bool check)
{
    static const int ca[1] = {1}, cb[1] = {0}, perm[2] = {1, 0}, ax0[1] = {0};
    static const int64_t flat[1] = {24};
    int st = vkt_dot(a, ca, NULL, b, cb, NULL, 1, 0, d);
    if (st != VKT_OK)
        return st;
    if (check) {
        H_OK(vkt_ctx_set_native_disable(h_ctx, ""));
        ip_reset();
    }
    st = vkt_reshape(*d, flat, 1, r);
    if (check)
        expect_host_op("reshape of the dot's result", *r, 1, 24 * 4);
    if (st == VKT_OK)
        st = vkt_transpose(*d, perm, t);
    if (check)
        expect_host_op("transpose of the dot's result", *t, 2, 24 * 4);
    if (st == VKT_OK)
        st = vkt_sum(*t, ax0, 1, false, s);
    if (check)
        expect_host_op("sum of the transposed result", *s, 3, 6 * 4);
    return st;
}

Test(fallback, dot_fallback_host_result_then_host_resident_chain)
{
    h_shape sa = shp(2, 6, 5, 0, 0), sb = shp(2, 5, 4, 0, 0);
    vkt_tensor *a = h_rand(VKT_F32, &sa, -1, 1, 21), *b = h_rand(VKT_F32, &sb, -1, 1, 22);
    vkt_tensor *d = NULL, *r = NULL, *t = NULL, *s = NULL;
    H_OK(vkt_ctx_set_fallback_result(h_ctx, VKT_HOST));
    H_OK(vkt_ctx_set_native_disable(h_ctx, "dot"));
    vkt_stats_entry d0 = stat_of("dot"), r0 = stat_of("reshape"), t0 = stat_of("transpose"),
                    s0 = stat_of("sum");
    ip_reset();
    /* dot_chain checks the three downstream calls as they happen. */
    static const int ca[1] = {1}, cb[1] = {0};
    H_OK(vkt_dot(a, ca, NULL, b, cb, NULL, 1, 0, &d));
    ip_counts c = ip_get();
    cr_assert_eq(c.host_result, 1, "dot forced: %lu host_result calls", c.host_result);
    cr_assert_eq(c.last_nbytes, 24 * 4);
    cr_assert_eq(vkt_tensor_residency(d), VKT_HOST,
                 "a fallback under VKT_HOST leaves its result on the host");
    cr_assert_str_eq(h_ctx->last_gate, "disabled by VKT_NATIVE_DISABLE");
    vkt_tensor_free(d);
    d = NULL;
    H_OK(dot_chain(a, b, &d, &r, &t, &s, true));
    expect_moved("dot", d0, 0, 2, 0);
    expect_moved("reshape", r0, 0, 0, 1);
    expect_moved("transpose", t0, 0, 0, 1);
    expect_moved("sum", s0, 0, 0, 1);
    cr_assert_eq(r->st, d->st, "the host-resident reshape copied its input");

    /* The same chain with every op on the device path gives the same bits. */
    vkt_tensor *od = NULL, *or_ = NULL, *ot = NULL, *os = NULL;
    H_OK(vkt_ctx_set_fallback_result(h_ctx, VKT_DEVICE));
    H_OK(vkt_ctx_set_native_disable(h_ctx, "dot"));
    H_OK(dot_chain(a, b, &od, &or_, &ot, &os, false));
    H_OK(vkt_ctx_set_native_disable(h_ctx, ""));
    cr_assert_eq(vkt_tensor_residency(os), VKT_DEVICE);
    h_compare(r, or_, H_EXACT, "host-resident reshape vs device");
    h_compare(t, ot, H_EXACT, "host-resident transpose vs device");
    h_compare(s, os, (h_tol){1e-6, 1e-6, 0}, "host-resident sum vs the native sum");

    vkt_tensor *all[] = {a, b, d, r, t, s, od, or_, ot, os};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkt_tensor_free(all[i]);
}

/* reshape allocates nothing and binds nothing, so neither VKT_NATIVE_DISABLE
 * nor a tensor past maxStorageBufferRange turns it into a fallback. The limit is
 * lowered white-box so a 96-byte tensor stands for a 2 GiB one. */
/* ---- option names --------------------------------------------------------------------- */

/* The names vkt_ctx_set_native_disable takes are op names (or "all"): a typo
 * is VKT_EINVAL naming it, and the list stays as it was. */
Test(fallback, native_disable_names_are_checked)
{
    H_OK(vkt_ctx_set_native_disable(h_ctx, " dot, sum ,"));
    cr_assert_str_eq(h_ctx->native_disable, ",dot,sum,");
    int s = vkt_ctx_set_native_disable(h_ctx, "dot,dott");
    cr_assert_eq(s, VKT_EINVAL, "a name that is no op: %s", vkt_status_name(s));
    cr_assert(strstr(vkt_last_error(), "'dott' (did you mean dot?) is no op's name"), "message: %s",
              vkt_last_error());
    cr_assert_str_eq(h_ctx->native_disable, ",dot,sum,", "the list changed after a refused call");
    H_OK(vkt_ctx_set_native_disable(h_ctx, "all"));
    cr_assert_str_eq(h_ctx->native_disable, ",all,");
    H_OK(vkt_ctx_set_native_disable(h_ctx, " , "));
    cr_assert_null(h_ctx->native_disable);
    for (size_t i = 0; i < vkt_op_count(); i++)
        H_OK(vkt_ctx_set_native_disable(h_ctx, vkt_op_name(i)));
    H_OK(vkt_ctx_set_native_disable(h_ctx, ""));
}

/* Makes two contexts under the variables set now and returns what libvkt
 * wrote on standard error meanwhile (a static buffer); *first gets the
 * first context's options. */
static const char *stderr_of_two_contexts(vkt_ctx *first)
{
    static char text[4096];
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    cr_assert(saved >= 0 && tmp);
    cr_assert(dup2(fileno(tmp), 2) >= 0);
    for (int i = 0; i < 2; i++) {
        vkt_ctx *ctx = NULL;
        H_OK(vkt_ctx_create(NULL, &ctx));
        if (i == 0) {
            first->dot_kernel = ctx->dot_kernel;
            first->conv_kernel = ctx->conv_kernel;
            first->native_disable = ctx->native_disable ? strdup(ctx->native_disable) : NULL;
        }
        vkt_ctx_destroy(ctx);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(text, 1, sizeof text - 1, tmp);
    text[n] = '\0';
    fclose(tmp);
    return text;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The variables' names are checked when a context is made: a name that is no
 * op or kernel warns once per process, however many contexts read it, and is
 * ignored; the good ones apply. */
Test(fallback, option_variables_warn_once_and_keep_good_names)
{
    cr_assert_eq(setenv("VKT_NATIVE_DISABLE", "dott,dot", 1), 0);
    cr_assert_eq(setenv("VKT_DOT_KERNEL", "talll_vec", 1), 0);
    cr_assert_eq(setenv("VKT_CONV_KERNEL", "kgrad", 1), 0);
    vkt_ctx got = {0};
    const char *err = stderr_of_two_contexts(&got);
    cr_assert_eq(count_of(err, "VKT_NATIVE_DISABLE names no op 'dott' (did you mean dot?); "
                               "ignoring that name (vkt-ops-matrix lists every op"),
                 1, "stderr: %s", err);
    cr_assert_eq(
        count_of(
            err,
            "VKT_DOT_KERNEL=talll_vec names no kernel (auto, direct, tiny, small, big, big_vec, "
            "tall_vec)"),
        1, "stderr: %s", err);
    cr_assert_eq(count_of(err, "VKT_CONV_KERNEL"), 0, "stderr: %s", err);
    cr_assert_str_eq(got.native_disable, ",dot,");
    cr_assert_eq(got.dot_kernel, 0, "a bad VKT_DOT_KERNEL is the automatic choice");
    cr_assert_neq(got.conv_kernel, 0, "VKT_CONV_KERNEL=kgrad was read");
    free(got.native_disable);
    unsetenv("VKT_NATIVE_DISABLE");
    unsetenv("VKT_DOT_KERNEL");
    unsetenv("VKT_CONV_KERNEL");
}

static int call_dot_rows(vkt_tensor *const *in, const void *arg, vkt_tensor **o)
{
    static const int ca[1] = {1}, cb[1] = {0};
    (void)arg;
    return vkt_dot(in[0], ca, NULL, in[1], cb, NULL, 1, 0, o);
}

/* An interposer that refuses a fallback (libfbcount's FBCOUNT_MODE=error)
 * fails the op with VKT_EREFUSED and a message naming it; *out is NULL, the
 * result's memory is freed, nothing is counted as a fallback, and the next
 * op, native or fallen back, runs as before. */
Test(fallback, refused_fallback_fails_the_op_and_the_next_op_works)
{
    h_shape sa = shp(2, 6, 5, 0, 0), sb = shp(2, 5, 4, 0, 0);
    vkt_tensor *a = h_rand(VKT_F32, &sa, -1, 1, 31), *b = h_rand(VKT_F32, &sb, -1, 1, 32);
    vkt_tensor *const ab[2] = {a, b};
    H_OK(vkt_ctx_set_native_disable(h_ctx, "dot"));
    vkt_stats_entry d0 = stat_of("dot");
    ip_reset();
    ip_refuse(true);
    vkt_tensor *d = (vkt_tensor *)&d;
    int s = call_dot_rows(ab, NULL, &d);
    ip_refuse(false);
    cr_assert_eq(s, VKT_EREFUSED, "a refused fallback gave %s (%s)", vkt_status_name(s),
                 vkt_last_error());
    cr_assert_null(d, "*out after a refused fallback");
    cr_assert_str_eq(vkt_last_error(),
                     "vkt_dot: the fallback to the host was refused by the host_result exit "
                     "(FBCOUNT_MODE=error)");
    cr_assert_str_eq(vkt_status_name(VKT_EREFUSED), "VKT_EREFUSED");
    cr_assert_eq(ip_get().host_result, 1, "the exit was reached once");
    expect_moved("dot", d0, 0, 0, 0);

    /* The same op again, allowed, falls back and gives the reference's bits;
     * then natively. */
    vkt_tensor *want = NULL, *fell = NULL, *native = NULL;
    H_OK(call_dot_rows(ab, NULL, &fell));
    expect_moved("dot", d0, 0, 1, 0);
    H_OK(vkt_ctx_set_native_disable(h_ctx, ""));
    H_OK(call_dot_rows(ab, NULL, &native));
    expect_moved("dot", d0, 1, 1, 0);
    H_OK(h_oracle(call_dot_rows, ab, NULL, &want));
    h_compare(fell, want, H_EXACT, "the fallback after a refused one");
    h_compare(native, want, (h_tol){1e-6, 1e-6, 0}, "the native dot after a refused fallback");
    vkt_tensor *all[] = {a, b, want, fell, native};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkt_tensor_free(all[i]);
}

Test(fallback, reshape_is_a_view_past_every_gate)
{
    h_shape s = shp(3, 2, 3, 4, 0);
    static const int64_t flat[1] = {24}, back[3] = {4, 3, 2};
    vkt_tensor *x = h_rand(VKT_F32, &s, -1, 1, 31), *r = NULL, *r2 = NULL, *t = NULL;
    uint32_t range = h_ctx->props.limits.maxStorageBufferRange;
    h_ctx->props.limits.maxStorageBufferRange = 64;
    H_OK(vkt_ctx_set_native_disable(h_ctx, "all"));
    vkt_stats_entry r0 = stat_of("reshape"), t0 = stat_of("transpose");
    ip_reset();
    H_OK(vkt_reshape(x, flat, 1, &r));
    H_OK(vkt_reshape(r, back, 3, &r2));
    ip_counts c = ip_get();
    cr_assert_eq(c.host_result, 0, "reshape called host_result %lu times", c.host_result);
    cr_assert_eq(c.host_resident_op, 0);
    cr_assert_null(h_ctx->last_gate, "reshape reported a gate: %s", h_ctx->last_gate);
    expect_moved("reshape", r0, 2, 0, 0);
    cr_assert_eq(r->st, x->st, "reshape allocated storage of its own");
    cr_assert_eq(r2->st, x->st);
    cr_assert_eq(vkt_tensor_residency(r2), VKT_DEVICE);
    /* The same limit does gate a copy of the same tensor. */
    H_OK(vkt_ctx_set_native_disable(h_ctx, ""));
    H_OK(vkt_transpose(x, NULL, &t));
    cr_assert_eq(ip_get().host_result, 1, "transpose past the lowered range: %lu host_result calls",
                 ip_get().host_result);
    cr_assert_str_eq(h_ctx->last_gate, "tensor larger than maxStorageBufferRange");
    expect_moved("transpose", t0, 0, 1, 0);
    h_ctx->props.limits.maxStorageBufferRange = range;

    float *xv = h_read(x), *rv = h_read(r2);
    cr_assert_eq(memcmp(xv, rv, 24 * sizeof(float)), 0,
                 "the view reads other bytes than its input");
    free(xv);
    free(rv);
    vkt_tensor_free(x); /* the views keep the storage alive */
    rv = h_read(r);
    cr_assert_not_null(rv);
    free(rv);
    vkt_tensor_free(r);
    vkt_tensor_free(r2);
    vkt_tensor_free(t);
}

/* More inputs than an exec_call holds inline: the residency rule and the exits
 * see every input, and the op is still one call with at most one exit. */
static void check_concat_residency(int n)
{
    char what[64];
    vkt_tensor **xs = calloc((size_t)n, sizeof *xs);
    cr_assert_not_null(xs);
    size_t total = 0;
    for (int j = 0; j < n; j++) {
        h_shape s = shp(2, 2, 1 + j % 3, 0, 0);
        xs[j] = h_rand(VKT_F32, &s, -1, 1, 100 + (uint64_t)j);
        total += vkt_tensor_nbytes(xs[j]);
    }
    const vkt_tensor *const *cx = (const vkt_tensor *const *)xs;
    vkt_tensor *oracle = NULL, *y = NULL;
    H_OK(vkt_ctx_set_native_disable(h_ctx, "all"));
    H_OK(vkt_concatenate(cx, n, 1, &oracle));
    H_OK(vkt_ctx_set_native_disable(h_ctx, ""));
    cr_assert_eq(vkt_tensor_nbytes(oracle), total);

    /* all on the device: one native call */
    vkt_stats_entry s0 = stat_of("concatenate");
    ip_reset();
    H_OK(vkt_concatenate(cx, n, 1, &y));
    cr_assert_eq(ip_get().host_result + ip_get().host_resident_op, 0);
    expect_moved("concatenate", s0, 1, 0, 0);
    snprintf(what, sizeof what, "%d device inputs", n);
    h_compare(y, oracle, H_EXACT, what);
    vkt_tensor_free(y);

    /* all but the last on the host: mixed, so they come up and it runs natively */
    for (int j = 0; j < n - 1; j++)
        H_OK(vkt_tensor_move(xs[j], VKT_HOST));
    s0 = stat_of("concatenate");
    ip_reset();
    H_OK(vkt_concatenate(cx, n, 1, &y));
    cr_assert_eq(ip_get().host_result + ip_get().host_resident_op, 0,
                 "%d inputs, the last on the device", n);
    expect_moved("concatenate", s0, 1, 0, 0);
    cr_assert_eq(vkt_tensor_residency(y), VKT_DEVICE);
    snprintf(what, sizeof what, "%d inputs, the last on the device", n);
    h_compare(y, oracle, H_EXACT, what);
    vkt_tensor_free(y);

    /* all on the host: one host-resident op */
    for (int j = 0; j < n; j++)
        H_OK(vkt_tensor_move(xs[j], VKT_HOST));
    s0 = stat_of("concatenate");
    ip_reset();
    H_OK(vkt_concatenate(cx, n, 1, &y));
    snprintf(what, sizeof what, "%d host inputs", n);
    expect_host_op(what, y, 1, total);
    expect_moved("concatenate", s0, 0, 0, 1);
    h_compare(y, oracle, H_EXACT, what);
    vkt_tensor_free(y);

    /* forced down the fallback from the device: one host_result */
    for (int j = 0; j < n; j++)
        H_OK(vkt_tensor_move(xs[j], VKT_DEVICE));
    H_OK(vkt_ctx_set_native_disable(h_ctx, "concatenate"));
    s0 = stat_of("concatenate");
    ip_reset();
    H_OK(vkt_concatenate(cx, n, 1, &y));
    H_OK(vkt_ctx_set_native_disable(h_ctx, ""));
    cr_assert_eq(ip_get().host_result, 1, "%d inputs forced: %lu host_result calls", n,
                 ip_get().host_result);
    cr_assert_eq(ip_get().last_nbytes, total);
    expect_moved("concatenate", s0, 0, 1, 0);
    vkt_tensor_free(y);

    vkt_tensor_free(oracle);
    for (int j = 0; j < n; j++)
        vkt_tensor_free(xs[j]);
    free(xs);
}

Test(fallback, concatenate_1_8_9_40_inputs_residency)
{
    static const int counts[] = {1, 8, 9, 40};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        check_concat_residency(counts[k]);
}

/* A device without shaderFloat64 (has_f64 cleared white-box: lavapipe has it)
 * falls back, with that reason, for every call that does f64 arithmetic,
 * whatever the result's dtype, and keeps f64 movement native (64-bit words). */
typedef struct f64_case {
    const char *op;
    vkt_dtype dt[3];
    bool falls_back;
} f64_case;

Test(fallback, f64_gate_per_call_without_shader_float64)
{
    static const f64_case cases[] = {
        {"negate", {VKT_F64}, true},
        {"negate", {VKT_F32}, false},
        {"less", {VKT_F64, VKT_F64}, true}, /* f64 in, u8 out */
        {"add", {VKT_F32, VKT_F64}, true},  /* promotes to f64 */
        {"as_type", {VKT_F64}, true},       /* f64 in, s32 out */
        {"sum", {VKT_F64}, true},
        {"argmax", {VKT_F64}, true},
        {"sort", {VKT_F64}, true},
        {"dot", {VKT_F64, VKT_F64}, true},
        {"transpose", {VKT_F64}, false},
        {"reverse", {VKT_F64}, false},
        {"gather", {VKT_F64, VKT_S32}, false},
        {"concatenate", {VKT_F64, VKT_F64}, false},
        {"concatenate", {VKT_F32, VKT_F64}, true}, /* converts f32 to f64 */
        {"reshape", {VKT_F64}, false},
    };
    h_ctx->has_f64 = false;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const f64_case *fc = &cases[k];
        const op_case *oc = case_of(fc->op);
        cr_assert_not_null(oc, "%s has no call", fc->op);
        vkt_tensor *in[3] = {0};
        for (int i = 0; i < oc->nin; i++)
            in[i] =
                h_rand(fc->dt[i], &oc->in[i].shape, oc->in[i].lo, oc->in[i].hi, 40 + (uint64_t)i);
        vkt_stats_entry s0 = stat_of(fc->op);
        ip_reset();
        vkt_tensor *y = NULL, *ref = NULL;
        H_OK(oc->call(in, NULL, &y));
        ip_counts c = ip_get();
        char what[80];
        snprintf(what, sizeof what, "%s of %s without shaderFloat64", fc->op,
                 vkt_dtype_name(fc->dt[oc->nin - 1]));
        if (fc->falls_back) {
            cr_assert_eq(c.host_result, 1, "%s: %lu host_result calls, want 1", what,
                         c.host_result);
            cr_assert_str_eq(h_ctx->last_gate, "device lacks shaderFloat64", "%s: gate \"%s\"",
                             what, h_ctx->last_gate);
            expect_moved(fc->op, s0, 0, 1, 0);
        } else {
            cr_assert_eq(c.host_result, 0, "%s: fell back (%s)", what,
                         h_ctx->last_gate ? h_ctx->last_gate : "?");
            expect_moved(fc->op, s0, 1, 0, 0);
        }
        H_OK(h_oracle(oc->call, in, NULL, &ref));
        h_compare(y, ref, H_EXACT, what);
        vkt_tensor_free(y);
        vkt_tensor_free(ref);
        for (int i = 0; i < oc->nin; i++)
            vkt_tensor_free(in[i]);
    }
    h_ctx->has_f64 = true;
}

/* ---- (d) bad calls --------------------------------------------------------------------------- */

static vkt_tensor *const BAD_OUT = (vkt_tensor *)16;

/* Asserts the exact status, *out reset to NULL and a message naming the op. */
#define BAD(want, opname, expr)                                                                    \
    do {                                                                                           \
        o = BAD_OUT;                                                                               \
        int bad_s_ = (expr);                                                                       \
        cr_assert_eq(bad_s_, want, "%s: %s, want %s (%s)", #expr, vkt_status_name(bad_s_),         \
                     vkt_status_name(want), vkt_last_error());                                     \
        cr_assert(o == NULL || o == BAD_OUT, "%s: *out is neither NULL nor untouched", #expr);     \
        cr_assert(o == NULL || !strstr(#expr, "&o"), "%s: *out not set to NULL", #expr);           \
        cr_assert(vkt_last_error()[0] != '\0', "%s: empty vkt_last_error()", #expr);               \
        cr_assert(strstr(vkt_last_error(), opname), "%s: message \"%s\" does not name %s", #expr,  \
                  vkt_last_error(), opname);                                                       \
    } while (0)

Test(fallback, bad_calls_elementwise_and_tensors)
{
    vkt_tensor *o;
    h_shape s34 = shp(2, 3, 4, 0, 0), s5 = shp(1, 5, 0, 0, 0);
    vkt_tensor *a = h_rand(VKT_F32, &s34, -1, 1, 1), *b = h_rand(VKT_F32, &s5, -1, 1, 2);
    vkt_tensor *i = h_rand(VKT_S32, &s34, -9, 9, 3);
    int64_t rank7[7] = {1, 1, 1, 1, 1, 1, 1}, neg[2] = {3, -4};
    float buf[12] = {0};

    BAD(VKT_EINVAL, "exp", vkt_exp(NULL, &o));
    BAD(VKT_EINVAL, "exp", vkt_exp(a, NULL));
    BAD(VKT_EINVAL, "add", vkt_add(a, NULL, &o));
    BAD(VKT_EINVAL, "select", vkt_select(NULL, a, a, &o));
    BAD(VKT_EINVAL, "clip", vkt_clip(a, NULL, a, &o));
    BAD(VKT_ESHAPE, "add", vkt_add(a, b, &o));
    BAD(VKT_ESHAPE, "select", vkt_select(a, a, b, &o));
    BAD(VKT_EDTYPE, "bitwise_and", vkt_bitwise_and(a, a, &o));
    BAD(VKT_EDTYPE, "left_shift", vkt_left_shift(a, i, &o));
    BAD(VKT_EDTYPE, "quotient", vkt_quotient(a, a, &o));
    BAD(VKT_EDTYPE, "count_leading_zeros", vkt_count_leading_zeros(a, &o));
    BAD(VKT_EDTYPE, "bitwise_not", vkt_bitwise_not(a, &o));
    BAD(VKT_EDTYPE, "as_type", vkt_as_type(a, (vkt_dtype)9, &o));
    BAD(VKT_EDTYPE, "as_type", vkt_as_type(a, (vkt_dtype)-1, &o));
    BAD(VKT_EINVAL, "tensor_read", vkt_tensor_read(a, buf, sizeof buf - 4));
    BAD(VKT_EINVAL, "tensor_read", vkt_tensor_read(a, NULL, sizeof buf));
    BAD(VKT_EINVAL, "tensor_move", vkt_tensor_move(a, (vkt_residency)5));
    BAD(VKT_EINVAL, "sync", vkt_sync(NULL));
    BAD(VKT_EINVAL, "set_native_disable", vkt_ctx_set_native_disable(h_ctx, NULL));

    /* Creation: rank 7, negative dims and bad dtypes are refused. */
    BAD(VKT_ESHAPE, "rank 7", vkt_zeros(h_ctx, VKT_F32, rank7, 7, &o));
    BAD(VKT_ESHAPE, "negative", vkt_zeros(h_ctx, VKT_F32, neg, 2, &o));
    BAD(VKT_EDTYPE, "dtype", vkt_full(h_ctx, (vkt_dtype)4, neg, 1, 1.0, &o));
    BAD(VKT_ESHAPE, "rank -1", vkt_tensor_from_host(h_ctx, VKT_F32, neg, -1, buf, &o));
    BAD(VKT_EINVAL, "data is NULL", vkt_tensor_from_host(h_ctx, VKT_F32, neg, 1, NULL, &o));
    BAD(VKT_EAXIS, "iota", vkt_iota(h_ctx, VKT_S32, neg, 1, 1, &o));

    /* Tensors of two contexts in one op. */
    vkt_ctx *other = NULL;
    H_OK(vkt_ctx_create(NULL, &other));
    vkt_tensor *f = NULL;
    H_OK(vkt_zeros(other, VKT_F32, s34.d, 2, &f));
    BAD(VKT_ECTX, "add", vkt_add(a, f, &o));
    BAD(VKT_ECTX, "select", vkt_select(a, f, a, &o));
    vkt_tensor_free(f);
    vkt_ctx_destroy(other);

    vkt_tensor_free(a);
    vkt_tensor_free(b);
    vkt_tensor_free(i);
}

Test(fallback, bad_calls_other_families)
{
    vkt_tensor *o;
    h_shape s345 = shp(3, 3, 4, 5, 0), s34 = shp(2, 3, 4, 0, 0);
    vkt_tensor *x = h_rand(VKT_F32, &s345, -1, 1, 1), *m = h_rand(VKT_F32, &s34, -1, 1, 2);
    int64_t rank7[7] = {1, 1, 1, 1, 1, 1, 60}, neg[3] = {3, -4, -5}, s12[2] = {12, 6};
    static const int ax3[1] = {3}, axrep[2] = {0, 0}, axneg[1] = {-4};
    static const int permrep[3] = {0, 0, 1}, permbad[3] = {0, 1, 3};

    BAD(VKT_EAXIS, "sum", vkt_sum(x, ax3, 1, false, &o));
    BAD(VKT_EAXIS, "sum", vkt_sum(x, axrep, 2, false, &o));
    BAD(VKT_EAXIS, "reduce_max", vkt_reduce_max(x, axneg, 1, false, &o));
    BAD(VKT_EINVAL, "product", vkt_product(NULL, NULL, 0, false, &o));
    BAD(VKT_EAXIS, "argmax", vkt_argmax(x, 5, false, &o));
    BAD(VKT_EAXIS, "argmin", vkt_argmin(x, -4, false, &o));
    BAD(VKT_ESHAPE, "reshape", vkt_reshape(x, rank7, 7, &o));
    BAD(VKT_ESHAPE, "reshape", vkt_reshape(x, neg, 3, &o));
    BAD(VKT_ESHAPE, "reshape", vkt_reshape(x, s12, 2, &o));
    BAD(VKT_EAXIS, "transpose", vkt_transpose(x, permrep, &o));
    BAD(VKT_EAXIS, "transpose", vkt_transpose(x, permbad, &o));
    BAD(VKT_ESHAPE, "broadcast", vkt_broadcast(x, s12, 2, NULL, &o));
    BAD(VKT_EINVAL, "slice", vkt_slice(x, NULL, NULL, NULL, &o));
    BAD(VKT_EAXIS, "reverse", vkt_reverse(x, axrep, 2, &o));
    BAD(VKT_EAXIS, "reverse", vkt_reverse(x, ax3, 1, &o));
    const vkt_tensor *xs[2] = {x, m};
    BAD(VKT_ESHAPE, "concatenate", vkt_concatenate(xs, 2, 0, &o));
    BAD(VKT_EINVAL, "concatenate", vkt_concatenate(xs, 0, 0, &o));
    BAD(VKT_EAXIS, "concatenate", vkt_concatenate(xs, 1, 3, &o));
    BAD(VKT_EDTYPE, "gather", vkt_gather(x, m, NULL, &o));
    static const int c1[1] = {1}, c0[1] = {0}, c9[1] = {9};
    BAD(VKT_ESHAPE, "dot", vkt_dot(m, c1, NULL, m, c0, NULL, 1, 0, &o));
    BAD(VKT_EAXIS, "dot", vkt_dot(m, c9, NULL, m, c0, NULL, 1, 0, &o));
    BAD(VKT_EINVAL, "dot", vkt_dot(m, NULL, NULL, m, c0, NULL, 1, 0, &o));
    BAD(VKT_EAXIS, "sort", vkt_sort(m, 2, false, &o));
    BAD(VKT_EAXIS, "argsort", vkt_argsort(m, -3, false, &o));
    BAD(VKT_EINVAL, "sort", vkt_sort(NULL, 0, false, &o));
    BAD(VKT_ESHAPE, "conv", vkt_conv(m, m, NULL, &o));
    BAD(VKT_EINVAL, "conv", vkt_conv(x, x, NULL, NULL));
    static const int64_t w2[2] = {2, 2};
    BAD(VKT_EINVAL, "window_sum", vkt_window_sum(x, NULL, NULL, &o));
    BAD(VKT_EINVAL, "window_max", vkt_window_max(NULL, w2, NULL, &o));
    vkt_tensor_free(x);
    vkt_tensor_free(m);
}

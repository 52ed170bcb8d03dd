/* test_window.c — the window family against the host reference over many
 * shapes and options, against PyTorch golden data, gradients against finite
 * differences, and its error contract. Every native run must stay native: a
 * window op that fell back would pass on values alone.
 *
 * Tolerances (tests/vkt/tolerances.md, "window"). Max, min and the scatters'
 * selection are exact. Sums and products accumulate in the compute dtype in
 * window order, the reference in double rounded once: f32 within
 * 2e-7 * V * (1 + |want|) for a window of V elements (inputs of magnitude
 * <= 1, so partial sums stay below V), f64 within 1e-15 * V. Integers wrap and
 * compare exactly. Scatter sums: the same bound with V the most windows that
 * can cover one element. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../golden/window/window_golden.h"
#include "harness.h"

TestSuite(window, .init = h_setup, .fini = h_teardown);

enum { OP_SUM, OP_PRODUCT, OP_MAX, OP_MIN, OP_SMAX, OP_SMIN };
static const char *op_names[] = {"window_sum", "window_product",     "window_max",
                                 "window_min", "window_scatter_max", "window_scatter_min"};

typedef struct wcase {
    int op;
    int64_t window[VKT_MAX_RANK];
    vkt_window_opts o;
} wcase;

static int call_window(vkt_tensor *const *in, const void *arg, vkt_tensor **out)
{
    const wcase *w = arg;
    switch (w->op) {
    case OP_SUM: return vkt_window_sum(in[0], w->window, &w->o, out);
    case OP_PRODUCT: return vkt_window_product(in[0], w->window, &w->o, out);
    case OP_MAX: return vkt_window_max(in[0], w->window, &w->o, out);
    case OP_MIN: return vkt_window_min(in[0], w->window, &w->o, out);
    case OP_SMAX: return vkt_window_scatter_max(in[0], in[1], in[2], w->window, &w->o, out);
    default: return vkt_window_scatter_min(in[0], in[1], in[2], w->window, &w->o, out);
    }
}

static h_shape shp(int rank, const int64_t *d)
{
    h_shape s = {.rank = rank};
    memcpy(s.d, d, sizeof(int64_t) * (size_t)rank);
    return s;
}

static vkt_stats_entry op_stats(const char *name)
{
    vkt_stats_entry e[128], r = {name, 0, 0, 0};
    size_t n = vkt_stats(e, 128);
    for (size_t i = 0; i < n && i < 128; i++)
        if (strcmp(e[i].op, name) == 0)
            r = e[i];
    return r;
}

/* Windows along each axis of x under w (the reduction's shape). */
static h_shape win_shape(const h_shape *x, const wcase *w)
{
    h_shape s = {.rank = x->rank};
    for (int d = 0; d < x->rank; d++) {
        int64_t st = w->o.strides[d] ? w->o.strides[d] : 1,
                dil = w->o.window_dilations[d] ? w->o.window_dilations[d] : 1;
        int64_t padded = x->d[d] + w->o.padding_lo[d] + w->o.padding_hi[d],
                k = (w->window[d] - 1) * dil + 1;
        s.d[d] = padded < k ? 0 : (padded - k) / st + 1;
    }
    return s;
}

static double volume(const h_shape *x, const wcase *w)
{
    double v = 1;
    for (int d = 0; d < x->rank; d++) {
        int64_t st = w->o.strides[d] ? w->o.strides[d] : 1;
        v *= w->op >= OP_SMAX ? (double)((w->window[d] - 1) / st + 1) : (double)w->window[d];
    }
    return v;
}

static h_tol tol_for(vkt_dtype dt, const h_shape *x, const wcase *w)
{
    if (w->op == OP_MAX || w->op == OP_MIN || dt == VKT_S32 || dt == VKT_U8)
        return H_EXACT;
    double v = volume(x, w);
    return dt == VKT_F64 ? (h_tol){1e-15 * v, 1e-15 * v, 0} : (h_tol){2e-7 * v, 2e-7 * v, 0};
}

/* Native against the reference; the native run must not fall back. */
static void check_in(vkt_tensor *const *in, int nin, const wcase *w, h_tol tol, const char *what)
{
    h_check(call_window, in, nin, w, tol, what);
}

/* A reduction on random data (values in [-1, 1], or small integers). */
static void check_reduce(int op, vkt_dtype dt, const h_shape *x, const wcase *w0, uint64_t seed)
{
    wcase w = *w0;
    w.op = op;
    /* Floats in [-1, 1] (products in [0.5, 1.5] to stay finite); s32 wide
     * enough to mean something, narrow for products, which wrap anyway. */
    double lo = -1, hi = 1;
    if (dt == VKT_U8)
        lo = 0, hi = 3;
    else if (dt == VKT_S32)
        lo = op == OP_PRODUCT ? -3 : -50, hi = op == OP_PRODUCT ? 3 : 50;
    else if (op == OP_PRODUCT)
        lo = 0.5, hi = 1.5;
    vkt_tensor *t = h_rand(dt, x, lo, hi, seed);
    char what[256];
    snprintf(what, sizeof what, "%s %s x%s seed %llu", op_names[op], vkt_dtype_name(dt),
             h_shape_str(x), (unsigned long long)seed);
    check_in(&t, 1, &w, tol_for(dt, x, &w), what);
    vkt_tensor_free(t);
}

/* A scatter on random data; `ties` draws x from three values so most windows
 * hold several equal extrema and the first must win. */
static void check_scatter(int op, vkt_dtype xdt, vkt_dtype sdt, vkt_dtype idt, const h_shape *x,
                          const wcase *w0, bool ties, uint64_t seed)
{
    wcase w = *w0;
    w.op = op;
    h_shape s = win_shape(x, &w);
    vkt_tensor *in[3];
    in[0] = ties ? h_rand(xdt, x, 0, 2, seed) : h_rand(xdt, x, xdt == VKT_U8 ? 0 : -100, 100, seed);
    if (ties && (xdt == VKT_F32 || xdt == VKT_F64)) {
        /* Integers as floats: three values, exactly equal within a window. */
        static const double v[] = {0, 1, 2, 1, 2, 2, 0, 2, 1};
        vkt_tensor_free(in[0]);
        in[0] = h_from(xdt, x, v, 9);
    }
    in[1] = h_rand(sdt, &s, sdt == VKT_U8 ? 0 : -1, sdt == VKT_U8 ? 9 : 1, seed + 1);
    in[2] = h_scalar(idt, 0.25);
    char what[256];
    snprintf(what, sizeof what, "%s x %s%s src %s init %s%s seed %llu", op_names[op],
             vkt_dtype_name(xdt), h_shape_str(x), vkt_dtype_name(sdt), vkt_dtype_name(idt),
             ties ? " ties" : "", (unsigned long long)seed);
    vkt_dtype odt = sdt == VKT_F64 || idt == VKT_F64   ? VKT_F64
                    : sdt == VKT_F32 || idt == VKT_F32 ? VKT_F32
                    : sdt == VKT_S32 || idt == VKT_S32 ? VKT_S32
                                                       : VKT_U8;
    check_in(in, 3, &w, tol_for(odt, x, &w), what);
    for (int i = 0; i < 3; i++)
        vkt_tensor_free(in[i]);
}

/* ---- option sets -------------------------------------------------------------- */

typedef struct geo {
    int rank;
    int64_t x[VKT_MAX_RANK], win[VKT_MAX_RANK], str[VKT_MAX_RANK], lo[VKT_MAX_RANK],
        hi[VKT_MAX_RANK], dil[VKT_MAX_RANK];
} geo;

static const geo geos[] = {
    {0, {0}, {0}, {0}, {0}, {0}, {0}}, /* scalar: one window of one */
    {1, {0}, {1}, {1}, {0}, {0}, {1}}, /* empty */
    {1, {1}, {1}, {1}, {0}, {0}, {1}},
    {1, {7}, {3}, {1}, {0}, {0}, {1}},
    {1, {7}, {3}, {2}, {1}, {2}, {1}},    /* padding both sides */
    {1, {9}, {3}, {1}, {0}, {0}, {3}},    /* dilation */
    {1, {4}, {6}, {1}, {0}, {0}, {1}},    /* window past the input: no windows */
    {1, {10}, {2}, {3}, {-2}, {-1}, {1}}, /* negative padding trims */
    {1, {300}, {5}, {1}, {2}, {2}, {1}},  /* more than one workgroup */
    {2, {5, 7}, {2, 3}, {2, 1}, {1, 0}, {0, 2}, {1, 2}},
    {2, {6, 6}, {6, 6}, {1, 1}, {0, 0}, {0, 0}, {1, 1}},   /* global window */
    {2, {33, 17}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}}, /* overlapping, same padding */
    {3, {3, 9, 8}, {1, 2, 3}, {1, 2, 2}, {0, 1, 0}, {0, 0, 2}, {1, 1, 1}},
    {4, {4, 3, 28, 28}, {1, 1, 2, 2}, {1, 1, 2, 2}, {0}, {0}, {1, 1, 1, 1}}, /* LeNet pool */
    {4, {2, 3, 13, 11}, {1, 1, 3, 3}, {1, 1, 1, 1}, {0, 0, 1, 1}, {0, 0, 1, 1}, {1, 1, 1, 1}},
    {4, {2, 3, 12, 12}, {1, 2, 3, 2}, {1, 1, 3, 2}, {0, 1, 0, 1}, {0, 0, 2, 0}, {1, 1, 1, 2}},
    {6,
     {2, 1, 3, 2, 4, 3},
     {1, 1, 2, 2, 2, 3},
     {1, 1, 1, 2, 1, 1},
     {0, 0, 1, 0, 0, 1},
     {0},
     {1, 1, 1, 1, 2, 1}},
};
#define NGEOS (sizeof geos / sizeof geos[0])

static void geo_case(const geo *g, bool scatter, h_shape *x, wcase *w)
{
    memset(w, 0, sizeof *w);
    *x = shp(g->rank, g->x);
    for (int d = 0; d < g->rank; d++) {
        w->window[d] = g->win[d];
        w->o.strides[d] = g->str[d];
        w->o.padding_lo[d] = g->lo[d];
        w->o.padding_hi[d] = g->hi[d];
        w->o.window_dilations[d] = scatter ? 1 : g->dil[d];
    }
}

static const vkt_dtype all_dt[] = {VKT_F32, VKT_F64, VKT_S32, VKT_U8};

Test(window, reductions_every_dtype_and_geometry)
{
    uint64_t seed = 100;
    for (size_t i = 0; i < NGEOS; i++) {
        h_shape x;
        wcase w;
        geo_case(&geos[i], false, &x, &w);
        for (int op = OP_SUM; op <= OP_MIN; op++)
            for (size_t k = 0; k < 4; k++)
                check_reduce(op, all_dt[k], &x, &w, seed++);
    }
}

Test(window, scatters_every_geometry_with_and_without_ties)
{
    uint64_t seed = 500;
    for (size_t i = 0; i < NGEOS; i++) {
        h_shape x;
        wcase w;
        geo_case(&geos[i], true, &x, &w);
        for (int op = OP_SMAX; op <= OP_SMIN; op++)
            for (int ties = 0; ties < 2; ties++)
                check_scatter(op, VKT_F32, VKT_F32, VKT_F32, &x, &w, ties, seed++);
    }
}

Test(window, scatter_dtype_combinations)
{
    static const int64_t xs[] = {3, 10, 9};
    h_shape x = shp(3, xs);
    wcase w = {.window = {1, 3, 3},
               .o = {.strides = {1, 2, 1}, .padding_lo = {0, 1, 1}, .padding_hi = {0, 1, 0}}};
    uint64_t seed = 900;
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 4; b++)
            for (int ties = 0; ties < 2; ties++) {
                check_scatter(OP_SMAX, all_dt[a], all_dt[b], all_dt[b], &x, &w, ties, seed++);
                check_scatter(OP_SMIN, all_dt[a], all_dt[b], all_dt[(b + 1) % 4], &x, &w, ties,
                              seed++);
            }
}

/* Hand-computed: the first maximum (minimum) in row-major window order wins,
 * overlapping windows accumulate, padding is never selected. */
Test(window, scatter_first_extremum_wins)
{
    static const double xv[] = {1, 3, 3, 2, 2, 0};
    static const double sv[] = {10, 20, 30, 40, 50};
    h_shape xs = {1, {6}}, ss = {1, {5}};
    vkt_tensor *x = h_from(VKT_F32, &xs, xv, 6), *s = h_from(VKT_F32, &ss, sv, 5),
               *init = h_scalar(VKT_F32, 0.5);
    wcase w = {.window = {2}};
    vkt_tensor *y;
    H_NATIVE(vkt_window_scatter_max(x, s, init, w.window, &w.o, &y));
    float *r = h_read(y);
    /* windows [1 3] [3 3] [3 2] [2 2] [2 0] select 1 1 2 3 4 */
    static const float want_max[] = {0.5f, 30.5f, 30.5f, 40.5f, 50.5f, 0.5f};
    for (int i = 0; i < 6; i++)
        cr_expect_eq(r[i], want_max[i], "scatter_max[%d] = %g, want %g", i, r[i], want_max[i]);
    free(r);
    vkt_tensor_free(y);
    H_NATIVE(vkt_window_scatter_min(x, s, init, w.window, &w.o, &y));
    r = h_read(y);
    /* minima select 0 1 3 3 5 */
    static const float want_min[] = {10.5f, 20.5f, 0.5f, 70.5f, 0.5f, 50.5f};
    for (int i = 0; i < 6; i++)
        cr_expect_eq(r[i], want_min[i], "scatter_min[%d] = %g, want %g", i, r[i], want_min[i]);
    free(r);
    vkt_tensor_free(y);
    /* Padding of 2 on each side with window 3, stride 3: windows [p p 1] [3 3 2]
     * [2 0 p]: the padded ends never win even against negative values. */
    static const double xn[] = {-5, -1, -1, -2, -2, -7};
    vkt_tensor *xneg = h_from(VKT_F32, &xs, xn, 6), *s3;
    h_shape s3s = {1, {3}};
    s3 = h_from(VKT_F32, &s3s, sv, 3);
    wcase wp = {.window = {3}, .o = {.strides = {3}, .padding_lo = {2}, .padding_hi = {2}}};
    H_NATIVE(vkt_window_scatter_max(xneg, s3, init, wp.window, &wp.o, &y));
    r = h_read(y);
    static const float want_pad[] = {10.5f, 20.5f, 0.5f, 0.5f, 30.5f, 0.5f};
    for (int i = 0; i < 6; i++)
        cr_expect_eq(r[i], want_pad[i], "padded scatter_max[%d] = %g, want %g", i, r[i],
                     want_pad[i]);
    free(r);
    vkt_tensor_free(y);
    vkt_tensor_free(xneg);
    vkt_tensor_free(s3);
    vkt_tensor_free(x);
    vkt_tensor_free(s);
    vkt_tensor_free(init);
}

/* Nx's rule: a window that holds a NaN sends its source to the window's first
 * NaN, the element window_max and window_min give there, on both scatters,
 * natively and in the reference. */
Test(window, scatter_nan_goes_to_the_first_nan)
{
    static const double xv[] = {1, NAN, 5, 2, NAN, NAN, -1, 4, 0};
    static const double sv[] = {10, 20, 30};
    h_shape xs = {1, {9}}, ss = {1, {3}};
    vkt_tensor *x = h_from(VKT_F32, &xs, xv, 9), *s = h_from(VKT_F32, &ss, sv, 3),
               *init = h_scalar(VKT_F32, 0);
    wcase w = {.window = {3}, .o = {.strides = {3}}};
    /* windows [1 NaN 5] [2 NaN NaN] [-1 4 0]: NaN at 1, first NaN at 4; then 7 (max) or 6 (min) */
    static const float want_max[] = {0, 10, 0, 0, 20, 0, 0, 30, 0},
                       want_min[] = {0, 10, 0, 0, 20, 0, 30, 0, 0};
    for (int op = 0; op < 2; op++) {
        vkt_tensor *y, *m;
        if (op == 0) {
            H_NATIVE(vkt_window_scatter_max(x, s, init, w.window, &w.o, &y));
            H_NATIVE(vkt_window_max(x, w.window, &w.o, &m));
        } else {
            H_NATIVE(vkt_window_scatter_min(x, s, init, w.window, &w.o, &y));
            H_NATIVE(vkt_window_min(x, w.window, &w.o, &m));
        }
        float *r = h_read(y), *mv = h_read(m);
        const float *want = op == 0 ? want_max : want_min;
        for (int i = 0; i < 9; i++)
            cr_expect_eq(r[i], want[i], "scatter_%s[%d] = %g, want %g", op ? "min" : "max", i, r[i],
                         want[i]);
        cr_expect(isnan(mv[0]) && isnan(mv[1]), "window_%s of a window with NaN is NaN",
                  op ? "min" : "max");
        free(r);
        free(mv);
        vkt_tensor_free(y);
        vkt_tensor_free(m);
        wcase c = {.op = op == 0 ? OP_SMAX : OP_SMIN, .window = {3}, .o = {.strides = {3}}};
        vkt_tensor *in[3] = {x, s, init};
        check_in(in, 3, &c, H_EXACT, op ? "scatter_min with NaN" : "scatter_max with NaN");
    }
    vkt_tensor_free(x);
    vkt_tensor_free(s);
    vkt_tensor_free(init);
}

/* ---- pooling: windows that tile the last two axes -------------------------------- */

/* Empties the profile, saying whether a dispatch of `kernel` was in it. */
static bool profile_had(const char *kernel)
{
    vkt_profile_entry e[64];
    size_t n = vkt_profile_read(h_ctx, e, 64);
    bool seen = false;
    for (size_t i = 0; i < n && i < 64; i++)
        seen |= strcmp(e[i].kernel, kernel) == 0;
    return seen;
}

static const geo pools[] = {
    {4, {4, 3, 28, 28}, {1, 1, 2, 2}, {1, 1, 2, 2}, {0}, {0}, {1, 1, 1, 1}}, /* LeNet's */
    {4,
     {2, 5, 13, 11},
     {1, 1, 3, 3},
     {1, 1, 3, 3},
     {0},
     {0},
     {1, 1, 1, 1}},                                            /* remainders left out */
    {3, {3, 9, 8}, {1, 1, 2}, {1, 1, 2}, {0}, {0}, {1, 1, 1}}, /* windows of one row */
    {2, {7, 10}, {3, 1}, {3, 1}, {0}, {0}, {1, 1}},            /* of one column */
    {2, {6, 6}, {6, 6}, {6, 6}, {0}, {0}, {1, 1}},             /* one window */
    {5, {2, 2, 3, 8, 6}, {1, 1, 1, 2, 3}, {1, 1, 1, 2, 3}, {0}, {0}, {1, 1, 1, 1, 1}},
    {2, {300, 301}, {2, 2}, {2, 2}, {0}, {0}, {1, 1}}, /* many workgroups */
};

/* Each pooling geometry, every reduction and both scatters (with and without
 * ties) against the reference, failing unless pool.comp ran. */
Test(window, pooling_runs_the_pool_kernel)
{
    vkt_tensor *one = h_scalar(VKT_F32, 1.0), *neg;
    H_OK(vkt_negate(one, &neg));
    H_OK(vkt_sync(h_ctx));
    vkt_tensor_free(one);
    vkt_tensor_free(neg);
    if (vkt_ctx_last_gpu_ns(h_ctx) < 0)
        cr_skip_test("the queue of %s has no timestamps to profile", vkt_ctx_device_name(h_ctx));
    H_OK(vkt_ctx_set_profiling(h_ctx, true));
    uint64_t seed = 1300;
    for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++) {
        h_shape x;
        wcase w;
        geo_case(&pools[i], false, &x, &w);
        for (int op = OP_SUM; op <= OP_MIN; op++) {
            profile_had("");
            check_reduce(op, VKT_F32, &x, &w, seed++);
            cr_expect(profile_had("window_pool_f32"), "%s%s: window_pool_f32 did not run",
                      op_names[op], h_shape_str(&x));
        }
        for (int op = OP_SMAX; op <= OP_SMIN; op++)
            for (int ties = 0; ties < 2; ties++) {
                profile_had("");
                check_scatter(op, VKT_F32, VKT_F32, VKT_F32, &x, &w, ties, seed++);
                cr_expect(profile_had("window_pool_scatter_f32"),
                          "%s%s: window_pool_scatter_f32 did not "
                          "run",
                          op_names[op], h_shape_str(&x));
            }
    }
    /* NaN: a window that holds one gives NaN, and its scatter goes to the
     * first NaN; -0 and +0 order as the reference orders them. */
    static const double xv[] = {1,    NAN, 5,    2, NAN, NAN, -1,  4, 0,
                                -0.0, 0.0, -0.0, 3, 3,   3,   NAN, 1, 2};
    h_shape xs = {2, {2, 9}};
    vkt_tensor *xn = h_from(VKT_F32, &xs, xv, 18);
    wcase c = {.window = {1, 3}, .o = {.strides = {1, 3}}};
    for (int op = OP_SUM; op <= OP_SMIN; op++) {
        c.op = op;
        h_shape ss = win_shape(&xs, &c);
        vkt_tensor *src = h_rand(VKT_F32, &ss, -1, 1, seed++), *init = h_scalar(VKT_F32, 0.5);
        vkt_tensor *in[3] = {xn, src, init};
        profile_had("");
        check_in(in, op >= OP_SMAX ? 3 : 1, &c, H_EXACT, op_names[op]);
        cr_expect(profile_had(op >= OP_SMAX ? "window_pool_scatter_f32" : "window_pool_f32"),
                  "%s with NaN: not "
                  "pooled",
                  op_names[op]);
        vkt_tensor_free(src);
        vkt_tensor_free(init);
    }
    vkt_tensor_free(xn);
    H_OK(vkt_ctx_set_profiling(h_ctx, false));
}

/* Max/min propagate NaN and order -0 below +0; infinities pass through. */
Test(window, special_values)
{
    static const double v[] = {NAN, 1, -0.0, 0.0, INFINITY, -INFINITY, 2, -0.0, 0.0, 3, 5, -1};
    h_shape xs = {2, {6, 12}};
    vkt_tensor *x = h_from(VKT_F32, &xs, v, 12);
    for (int op = OP_SUM; op <= OP_MIN; op++) {
        wcase w = {.op = op, .window = {2, 2}, .o = {.strides = {1, 1}, .padding_lo = {0, 1}}};
        check_in(&x, 1, &w, (h_tol){1e-6, 1e-6, 0}, op_names[op]);
    }
    vkt_tensor_free(x);
}

/* Windows longer than one dispatch's loop budget run as several slices. */
Test(window, long_windows_are_sliced)
{
    h_shape xs = {1, {70001}};
    wcase w = {.window = {70000}};
    check_reduce(OP_SUM, VKT_F32, &xs, &w, 31);
    check_reduce(OP_MAX, VKT_F32, &xs, &w, 32);
    check_reduce(OP_MIN, VKT_S32, &xs, &w, 33);
    check_scatter(OP_SMAX, VKT_F32, VKT_F32, VKT_F32, &xs, &w, true, 34);
    check_scatter(OP_SMIN, VKT_F32, VKT_F32, VKT_F32, &xs, &w, false, 35);
    h_shape x2 = {2, {300, 302}};
    wcase w2 = {.window = {300, 300}, .o = {.strides = {1, 2}}};
    check_reduce(OP_SUM, VKT_S32, &x2, &w2, 36);
    check_scatter(OP_SMAX, VKT_F32, VKT_F32, VKT_F32, &x2, &w2, true, 37);
}

/* Past 65,535 workgroups of 256 along one axis. */
Test(window, huge_tensor, .timeout = 240)
{
    h_shape x = h_huge_shape();
    wcase w = {.window = {3}, .o = {.strides = {1}, .padding_lo = {1}, .padding_hi = {1}}};
    check_reduce(OP_MAX, VKT_F32, &x, &w, 41);
    check_scatter(OP_SMAX, VKT_F32, VKT_F32, VKT_F32, &x, &w, true, 42);
}

/* ---- gradients -------------------------------------------------------------------- */

/* sum(f(x) * g) in double, f run natively (f64, so differences are exact
 * enough for a 1e-4 step). */
static double loss(int op, vkt_tensor *x, const vkt_tensor *g, const wcase *w)
{
    vkt_tensor *y;
    vkt_tensor *in[1] = {x};
    wcase c = *w;
    c.op = op;
    H_OK(call_window(in, &c, &y));
    double *yv = h_read(y), *gv = h_read(g), s = 0;
    for (size_t i = 0; i < vkt_tensor_numel(y); i++)
        s += yv[i] * gv[i];
    free(yv);
    free(gv);
    vkt_tensor_free(y);
    return s;
}

/* Central differences of the loss in every element of x (a host copy xv). */
static double *finite_diff(int op, const h_shape *xs, double *xv, const vkt_tensor *g,
                           const wcase *w)
{
    size_t n = h_numel(xs);
    double *d = malloc(n * sizeof *d), h = 1e-4;
    for (size_t i = 0; i < n; i++) {
        double keep = xv[i];
        xv[i] = keep + h;
        vkt_tensor *xp = h_from(VKT_F64, xs, xv, n);
        xv[i] = keep - h;
        vkt_tensor *xm = h_from(VKT_F64, xs, xv, n);
        xv[i] = keep;
        d[i] = (loss(op, xp, g, w) - loss(op, xm, g, w)) / (2 * h);
        vkt_tensor_free(xp);
        vkt_tensor_free(xm);
    }
    return d;
}

static void expect_grad(const double *fd, const vkt_tensor *grad, size_t n, const char *what)
{
    cr_assert_eq(vkt_tensor_numel(grad), n, "%s: gradient has %zu elements, want %zu", what,
                 vkt_tensor_numel(grad), n);
    double *gv = h_read(grad);
    for (size_t i = 0; i < n; i++)
        cr_expect(fabs(gv[i] - fd[i]) <= 1e-7 * (1 + fabs(fd[i])),
                  "%s: d/dx[%zu] = %.12g, finite difference %.12g", what, i, gv[i], fd[i]);
    free(gv);
}

static const geo grad_geos[] = {
    {2, {7, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
    {2, {8, 7}, {2, 2}, {2, 2}, {0, 0}, {0, 1}, {1, 1}},
    {3, {2, 6, 5}, {1, 3, 2}, {1, 2, 1}, {0, 2, 0}, {0, 1, 1}, {1, 1, 1}},
    {1, {11}, {4}, {3}, {3}, {2}, {1}},
};

/* d/dx sum(window_sum(x) * g): g dilated by the strides, padded by
 * window - 1 - lo before, and window-summed with stride 1 (what an autodiff
 * emits), against finite differences. */
Test(window, window_sum_gradient)
{
    for (size_t c = 0; c < sizeof grad_geos / sizeof grad_geos[0]; c++) {
        h_shape xs;
        wcase w;
        geo_case(&grad_geos[c], true, &xs, &w);
        w.op = OP_SUM;
        h_shape gs = win_shape(&xs, &w);
        vkt_tensor *x = h_rand(VKT_F64, &xs, -1, 1, 60 + c),
                   *g = h_rand(VKT_F64, &gs, -1, 1, 70 + c);
        int64_t lo[VKT_MAX_RANK], hi[VKT_MAX_RANK], interior[VKT_MAX_RANK];
        wcase ws = {.op = OP_SUM};
        for (int d = 0; d < xs.rank; d++) {
            int64_t s = w.o.strides[d];
            lo[d] = w.window[d] - 1 - w.o.padding_lo[d];
            hi[d] = xs.d[d] + w.o.padding_lo[d] - (gs.d[d] - 1) * s - 1;
            interior[d] = s - 1;
            ws.window[d] = w.window[d];
        }
        vkt_tensor *zero = h_scalar(VKT_F64, 0), *gp, *grad;
        H_NATIVE(vkt_pad(g, zero, lo, hi, interior, &gp));
        H_NATIVE(vkt_window_sum(gp, ws.window, &ws.o, &grad));
        double *xv = h_read(x);
        double *fd = finite_diff(OP_SUM, &xs, xv, g, &w);
        expect_grad(fd, grad, h_numel(&xs), "window_sum gradient");
        free(fd);
        free(xv);
        vkt_tensor_free(zero);
        vkt_tensor_free(gp);
        vkt_tensor_free(grad);
        vkt_tensor_free(x);
        vkt_tensor_free(g);
    }
}

/* d/dx sum(window_max(x) * g) = window_scatter_max(x, g, 0), and likewise for
 * min; x is a permutation of well-separated values so no window ties and the
 * finite difference never crosses an ordering. */
Test(window, window_max_min_gradient_is_the_scatter)
{
    for (size_t c = 0; c < sizeof grad_geos / sizeof grad_geos[0]; c++) {
        h_shape xs;
        wcase w;
        geo_case(&grad_geos[c], true, &xs, &w);
        size_t n = h_numel(&xs);
        double *xv = malloc(n * sizeof *xv);
        for (size_t i = 0; i < n; i++)
            xv[i] = (double)((i * 37 + c * 11) % n) * 0.01 - 0.2;
        w.op = OP_MAX;
        h_shape gs = win_shape(&xs, &w);
        vkt_tensor *x = h_from(VKT_F64, &xs, xv, n), *g = h_rand(VKT_F64, &gs, -1, 1, 80 + c);
        vkt_tensor *zero = h_scalar(VKT_F64, 0), *grad;
        for (int op = OP_MAX; op <= OP_MIN; op++) {
            if (op == OP_MAX)
                H_NATIVE(vkt_window_scatter_max(x, g, zero, w.window, &w.o, &grad));
            else
                H_NATIVE(vkt_window_scatter_min(x, g, zero, w.window, &w.o, &grad));
            double *fd = finite_diff(op, &xs, xv, g, &w);
            expect_grad(fd, grad, n, op == OP_MAX ? "window_max gradient" : "window_min gradient");
            free(fd);
            vkt_tensor_free(grad);
        }
        free(xv);
        vkt_tensor_free(zero);
        vkt_tensor_free(x);
        vkt_tensor_free(g);
    }
}

/* ---- golden data -------------------------------------------------------------------- */

/* PyTorch's max_pool2d forward and its autograd backward, avg_pool2d (times
 * the window size) as window_sum: computed independently of libvkt. */
Test(window, torch_golden)
{
    for (size_t c = 0; c < sizeof window_goldens / sizeof window_goldens[0]; c++) {
        const window_golden *g = &window_goldens[c];
        h_shape xs = shp(4, g->xshape), ys = shp(4, g->yshape);
        size_t nx = h_numel(&xs), ny = h_numel(&ys);
        double *xv = malloc(nx * sizeof *xv), *gv = malloc(ny * sizeof *gv);
        for (size_t i = 0; i < nx; i++)
            xv[i] = g->x[i];
        for (size_t i = 0; i < ny; i++)
            gv[i] = g->g[i];
        vkt_tensor *x = h_from(VKT_F32, &xs, xv, nx), *gy = h_from(VKT_F32, &ys, gv, ny),
                   *zero = h_scalar(VKT_F32, 0);
        vkt_window_opts o = {0};
        int64_t win[4] = {1, 1, g->window[0], g->window[1]};
        for (int d = 0; d < 2; d++) {
            o.strides[2 + d] = g->strides[d];
            o.padding_lo[2 + d] = o.padding_hi[2 + d] = g->padding[d];
            o.window_dilations[2 + d] = g->dilation[d];
        }
        vkt_tensor *mx, *sm, *dx = NULL;
        H_NATIVE(vkt_window_max(x, win, &o, &mx));
        H_NATIVE(vkt_window_sum(x, win, &o, &sm));
        if (g->dilation[0] == 1 && g->dilation[1] == 1)
            H_NATIVE(vkt_window_scatter_max(x, gy, zero, win, &o, &dx));
        cr_assert_eq(vkt_tensor_numel(mx), ny, "%s: window_max has %zu elements, torch %zu",
                     g->name, vkt_tensor_numel(mx), ny);
        float *m = h_read(mx), *s = h_read(sm), *d = dx ? h_read(dx) : NULL;
        for (size_t i = 0; i < ny; i++) {
            cr_expect_eq(m[i], g->max[i], "%s: window_max[%zu] = %.9g, torch %.9g", g->name, i,
                         m[i], g->max[i]);
            cr_expect(fabsf(s[i] - g->sum[i]) <= 1e-5f * (1 + fabsf(g->sum[i])),
                      "%s: window_sum[%zu] = %.9g, torch %.9g", g->name, i, s[i], g->sum[i]);
        }
        for (size_t i = 0; d && i < nx; i++)
            cr_expect(fabsf(d[i] - g->dx[i]) <= 1e-5f * (1 + fabsf(g->dx[i])),
                      "%s: max-pool gradient[%zu] = %.9g, torch %.9g", g->name, i, d[i], g->dx[i]);
        free(m);
        free(s);
        free(d);
        free(xv);
        free(gv);
        vkt_tensor_free(mx);
        vkt_tensor_free(sm);
        vkt_tensor_free(dx);
        vkt_tensor_free(x);
        vkt_tensor_free(gy);
        vkt_tensor_free(zero);
    }
}

/* ---- errors --------------------------------------------------------------------------- */

static void expect_error(int status, int want, vkt_tensor *const *out, const char *what)
{
    cr_expect_eq(status, want, "%s: got %s (%s), want %s", what, vkt_status_name(status),
                 vkt_last_error(), vkt_status_name(want));
    cr_expect_null(*out, "%s: *out must be NULL on error", what);
    cr_expect(strlen(vkt_last_error()) > 0 && strchr(vkt_last_error(), '\n') == NULL,
              "%s: one-line message expected, got \"%s\"", what, vkt_last_error());
}

/* The call runs first, so *out is read after the op had its chance to set it. */
#define EXPECT_ERROR(call, want, what)                                                             \
    do {                                                                                           \
        y = (vkt_tensor *)1;                                                                       \
        int st_ = (call);                                                                          \
        expect_error(st_, want, &y, what);                                                         \
    } while (0)

Test(window, error_contract)
{
    h_shape xs = {2, {4, 5}}, good = {2, {3, 4}}, bad = {2, {3, 3}};
    vkt_tensor *x = h_rand(VKT_F32, &xs, -1, 1, 1), *s = h_rand(VKT_F32, &good, -1, 1, 2);
    vkt_tensor *sb = h_rand(VKT_F32, &bad, -1, 1, 3), *init = h_scalar(VKT_F32, 0),
               *vec = h_rand(VKT_F32, &good, 0, 1, 4);
    int64_t w[2] = {2, 2}, w0[2] = {0, 2};
    vkt_tensor *y;
    EXPECT_ERROR(vkt_window_sum(x, w0, NULL, &y), VKT_ESHAPE, "window of 0");
    EXPECT_ERROR(vkt_window_max(NULL, w, NULL, &y), VKT_EINVAL, "NULL x");
    EXPECT_ERROR(vkt_window_min(x, NULL, NULL, &y), VKT_EINVAL, "NULL window");
    cr_expect_eq(vkt_window_sum(x, w, NULL, NULL), VKT_EINVAL, "NULL out");
    vkt_window_opts o = {.strides = {-1, 1}};
    EXPECT_ERROR(vkt_window_product(x, w, &o, &y), VKT_EINVAL, "negative stride");
    vkt_window_opts trim = {.padding_lo = {-3, 0}, .padding_hi = {-2, 0}};
    EXPECT_ERROR(vkt_window_sum(x, w, &trim, &y), VKT_ESHAPE, "padding trims past the input");
    EXPECT_ERROR(vkt_window_scatter_max(x, sb, init, w, NULL, &y), VKT_ESHAPE, "source shape");
    EXPECT_ERROR(vkt_window_scatter_min(x, s, vec, w, NULL, &y), VKT_ESHAPE, "init not a scalar");
    vkt_window_opts dil = {.window_dilations = {1, 2}};
    EXPECT_ERROR(vkt_window_scatter_max(x, s, init, w, &dil, &y), VKT_EINVAL,
                 "scatter with dilation");
    vkt_tensor_free(x);
    vkt_tensor_free(s);
    vkt_tensor_free(sb);
    vkt_tensor_free(init);
    vkt_tensor_free(vec);
}

/* Host-resident inputs run on the host and are counted there, with the same values. */
Test(window, host_resident_inputs)
{
    h_shape xs = {2, {6, 6}};
    vkt_tensor *x = h_rand(VKT_F32, &xs, -1, 1, 5), *yd, *yh;
    int64_t w[2] = {2, 2};
    vkt_window_opts o = {.strides = {2, 2}};
    H_NATIVE(vkt_window_max(x, w, &o, &yd));
    H_OK(vkt_tensor_move(x, VKT_HOST));
    vkt_stats_reset();
    H_OK(vkt_window_max(x, w, &o, &yh));
    cr_expect_eq(op_stats("window_max").host, 1u, "host-resident input must run on the host");
    cr_expect_eq(vkt_tensor_residency(yh), VKT_HOST,
                 "result of a host-resident op stays on the host");
    h_compare(yd, yh, H_EXACT, "window_max host-resident");
    vkt_tensor_free(x);
    vkt_tensor_free(yd);
    vkt_tensor_free(yh);
}

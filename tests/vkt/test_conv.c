/* test_conv.c — vkt_conv against PyTorch golden data, against the host
 * reference over many options and every kind of layout, gradients against
 * finite differences, and its error contract. Every native run must stay
 * native: a conv that fell back would pass on values alone.
 *
 * Tolerances. The shaders accumulate in the compute dtype, the reference in
 * double; with inputs of magnitude ~1 and R products per output, f32 results
 * differ by about R * eps * sum|x k| at worst. Native f32: |got - want| <=
 * 1e-4 * (1 + |want|) against golden data (R <= 400 there) and
 * 2e-6 * R + 1e-5 |want| against the reference; the reference against golden
 * data: 1e-6 * (1 + |want|) (both are double sums rounded once to f32). f64:
 * 1e-12 * R. Finite differences run in f64 with step 1e-3 on a loss that is
 * linear in each operand, so they are exact up to rounding: 1e-7. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../golden/conv/conv_golden.h"
#include "harness.h"

TestSuite(conv, .init = h_setup, .fini = h_teardown);

static int call_conv(vkt_tensor *const *in, const void *arg, vkt_tensor **out)
{
    return vkt_conv(in[0], in[1], arg, out);
}

static h_shape shp(int rank, const int64_t *d)
{
    h_shape s = {.rank = rank};
    memcpy(s.d, d, sizeof(int64_t) * (size_t)rank);
    return s;
}

/* Reduction length of one output: kernel elements per output feature. */
static int64_t reduction(const vkt_tensor *k)
{
    return (int64_t)vkt_tensor_numel(k) / (vkt_tensor_numel(k) ? vkt_tensor_shape(k)[0] : 1);
}

/* Native against the reference on one call; asserts the native run did not
 * fall back (the oracle accounts for the one fallback). */
static void check(vkt_tensor *x, vkt_tensor *k, const vkt_conv_opts *o, const char *what)
{
    vkt_tensor *in[2] = {x, k};
    double r = (double)reduction(k) + 1;
    vkt_dtype dt =
        vkt_tensor_dtype(x) == VKT_F64 || vkt_tensor_dtype(k) == VKT_F64 ? VKT_F64 : VKT_F32;
    h_tol tol = dt == VKT_F64 ? (h_tol){1e-12 * r, 0, 0} : (h_tol){2e-6 * r, 1e-5, 0};
    h_check(call_conv, in, 2, o, tol, what);
}

static void random_check(vkt_dtype dt, int rank, const int64_t *xs, const int64_t *ks,
                         const vkt_conv_opts *o, uint64_t seed, const char *what)
{
    h_shape sx = shp(rank, xs), sk = shp(rank, ks);
    vkt_tensor *x = h_rand(dt, &sx, -1, 1, seed), *k = h_rand(dt, &sk, -1, 1, seed + 1);
    check(x, k, o, what);
    vkt_tensor_free(x);
    vkt_tensor_free(k);
}

static void set_perm(int *dst, const int *src, int rank)
{
    memcpy(dst, src, sizeof(int) * (size_t)rank);
}

/* ---- golden data (PyTorch) ------------------------------------------------------ */

/* A kernel gradient's layout: batch and feature axes of input, kernel and output
 * swapped, as an autodiff emits it. */
static void swap_batch_and_features(vkt_conv_opts *o)
{
    const int swap[4] = {1, 0, 2, 3};
    o->has_input_permutation = o->has_kernel_permutation = o->has_output_permutation = true;
    set_perm(o->input_permutation, swap, 4);
    set_perm(o->kernel_permutation, swap, 4);
    set_perm(o->output_permutation, swap, 4);
}

static vkt_conv_opts golden_opts(const conv_golden *g)
{
    vkt_conv_opts o;
    memset(&o, 0, sizeof o);
    for (int d = 0; d < g->rank - 2; d++) {
        o.strides[d] = g->strides[d];
        o.padding_lo[d] = g->padding_lo[d];
        o.padding_hi[d] = g->padding_hi[d];
        o.input_dilation[d] = g->input_dilation[d];
        o.kernel_dilation[d] = g->kernel_dilation[d];
    }
    o.feature_group_size = g->feature_group_size;
    o.batch_group_size = g->batch_group_size;
    o.has_input_permutation = g->has_perm[0];
    o.has_kernel_permutation = g->has_perm[1];
    o.has_output_permutation = g->has_perm[2];
    set_perm(o.input_permutation, g->perm[0], g->rank);
    set_perm(o.kernel_permutation, g->perm[1], g->rank);
    set_perm(o.output_permutation, g->perm[2], g->rank);
    return o;
}

static void golden_run(const conv_golden *g, bool native, double tol)
{
    vkt_ctx *ctx = h_ctx;
    vkt_tensor *x, *k, *y = NULL;
    H_OK(vkt_tensor_from_host(ctx, VKT_F32, g->xshape, g->rank, g->x, &x));
    H_OK(vkt_tensor_from_host(ctx, VKT_F32, g->kshape, g->rank, g->k, &k));
    vkt_conv_opts o = golden_opts(g);
    size_t n = 1;
    for (int i = 0; i < g->rank; i++)
        n *= (size_t)g->yshape[i];
    if (native) {
        h_poison(ctx, n * 4);
        H_NATIVE(vkt_conv(x, k, &o, &y));
    } else {
        vkt_tensor *in[2] = {x, k};
        H_OK(h_oracle(call_conv, in, &o, &y));
    }
    for (int i = 0; i < g->rank; i++)
        cr_assert_eq(vkt_tensor_shape(y)[i], g->yshape[i], "%s: result axis %d is %lld, want %lld",
                     g->name, i, (long long)vkt_tensor_shape(y)[i], (long long)g->yshape[i]);
    float *got = h_read(y);
    for (size_t i = 0; i < n; i++) {
        double want = g->y[i];
        cr_assert(fabs(got[i] - want) <= tol * (1 + fabs(want)),
                  "%s (%s): element %zu is %.9g, want %.9g", g->name,
                  native ? "native" : "reference", i, (double)got[i], want);
    }
    free(got);
    vkt_tensor_free(x);
    vkt_tensor_free(k);
    vkt_tensor_free(y);
}

Test(conv, golden_native)
{
    for (size_t i = 0; i < sizeof conv_goldens / sizeof conv_goldens[0]; i++)
        golden_run(&conv_goldens[i], true, 1e-4);
}

Test(conv, golden_reference)
{
    for (size_t i = 0; i < sizeof conv_goldens / sizeof conv_goldens[0]; i++)
        golden_run(&conv_goldens[i], false, 1e-6);
}

/* ---- gradients by finite differences --------------------------------------------- */

static double *read_f64(const vkt_tensor *t)
{
    return h_read(t);
}

/* sum(conv(x, k) * g) with x, k from host arrays. */
static double loss(const int64_t *xs, const double *x, const int64_t *ks, const double *k,
                   const double *g, const vkt_conv_opts *o)
{
    vkt_tensor *tx, *tk, *ty;
    H_OK(vkt_tensor_from_host(h_ctx, VKT_F64, xs, 4, x, &tx));
    H_OK(vkt_tensor_from_host(h_ctx, VKT_F64, ks, 4, k, &tk));
    H_NATIVE(vkt_conv(tx, tk, o, &ty));
    double *y = read_f64(ty), s = 0;
    for (size_t i = 0; i < vkt_tensor_numel(ty); i++)
        s += y[i] * g[i];
    free(y);
    vkt_tensor_free(tx);
    vkt_tensor_free(tk);
    vkt_tensor_free(ty);
    return s;
}

Test(conv, gradients_match_finite_differences)
{
    /* Forward: stride (2, 1), padding lo (1, 0) hi (0, 1), kernel dilation
     * (1, 2), two feature groups. */
    enum { N = 2, C = 4, O = 6, G = 2, H = 6, W = 5, KH = 3, KW = 2 };
    const int64_t xs[4] = {N, C, H, W}, ks[4] = {O, C / G, KH, KW};
    const int64_t stride[2] = {2, 1}, lo[2] = {1, 0}, hi[2] = {0, 1}, kdil[2] = {1, 2};
    vkt_conv_opts f;
    memset(&f, 0, sizeof f);
    for (int d = 0; d < 2; d++) {
        f.strides[d] = stride[d];
        f.padding_lo[d] = lo[d];
        f.padding_hi[d] = hi[d];
        f.kernel_dilation[d] = kdil[d];
    }
    f.feature_group_size = G;
    double x[N * C * H * W], k[O * (C / G) * KH * KW];
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        x[i] = sin(0.7 * (double)i + 0.3);
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        k[i] = cos(1.3 * (double)i);
    vkt_tensor *tx, *tk, *ty;
    H_OK(vkt_tensor_from_host(h_ctx, VKT_F64, xs, 4, x, &tx));
    H_OK(vkt_tensor_from_host(h_ctx, VKT_F64, ks, 4, k, &tk));
    H_NATIVE(vkt_conv(tx, tk, &f, &ty));
    const int64_t *ys = vkt_tensor_shape(ty);
    int64_t ysh[4] = {ys[0], ys[1], ys[2], ys[3]};
    size_t ny = vkt_tensor_numel(ty);
    double *g = malloc(ny * sizeof *g);
    for (size_t i = 0; i < ny; i++)
        g[i] = cos(0.37 * (double)i - 1.0);
    vkt_tensor *tg;
    H_OK(vkt_tensor_from_host(h_ctx, VKT_F64, ysh, 4, g, &tg));

    const int64_t ksz[2] = {KH, KW}, isz[2] = {H, W};
    const int swap[4] = {1, 0, 2, 3};
    /* d kernel: x and g with batch and features swapped, batch groups G. */
    vkt_conv_opts dk;
    memset(&dk, 0, sizeof dk);
    swap_batch_and_features(&dk);
    dk.batch_group_size = G;
    for (int d = 0; d < 2; d++) {
        dk.strides[d] = kdil[d];
        dk.kernel_dilation[d] = stride[d];
        dk.padding_lo[d] = lo[d];
        dk.padding_hi[d] =
            (ysh[2 + d] - 1) * stride[d] + 1 - isz[d] + (ksz[d] - 1) * kdil[d] + 1 - lo[d] - 1;
    }
    vkt_tensor *tdk;
    H_NATIVE(vkt_conv(tx, tg, &dk, &tdk));
    /* d input: g against the reversed kernel, features swapped within groups. */
    double kr[sizeof k / sizeof k[0]];
    enum { OG = O / G, CG = C / G };
    for (int gi = 0; gi < G; gi++)
        for (int o = 0; o < OG; o++)
            for (int c = 0; c < CG; c++)
                for (int a = 0; a < KH; a++)
                    for (int b = 0; b < KW; b++)
                        kr[(((o * C) + gi * CG + c) * KH + a) * KW + b] =
                            k[((((gi * OG + o) * CG) + c) * KH + (KH - 1 - a)) * KW + (KW - 1 - b)];
    const int64_t krs[4] = {OG, C, KH, KW};
    vkt_tensor *tkr, *tdx;
    H_OK(vkt_tensor_from_host(h_ctx, VKT_F64, krs, 4, kr, &tkr));
    vkt_conv_opts dx;
    memset(&dx, 0, sizeof dx);
    dx.has_kernel_permutation = true;
    set_perm(dx.kernel_permutation, swap, 4);
    dx.feature_group_size = G;
    for (int d = 0; d < 2; d++) {
        int64_t dkz = (ksz[d] - 1) * kdil[d] + 1;
        dx.input_dilation[d] = stride[d];
        dx.kernel_dilation[d] = kdil[d];
        dx.padding_lo[d] = dkz - lo[d] - 1;
        dx.padding_hi[d] = isz[d] + dkz - 1 - ((ysh[2 + d] - 1) * stride[d] + 1) - dx.padding_lo[d];
    }
    H_NATIVE(vkt_conv(tg, tkr, &dx, &tdx));
    cr_assert_eq(vkt_tensor_numel(tdk), sizeof k / sizeof k[0]);
    cr_assert_eq(vkt_tensor_numel(tdx), sizeof x / sizeof x[0]);
    double *gk = read_f64(tdk), *gx = read_f64(tdx);

    const double h = 1e-3;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        double keep = k[i];
        k[i] = keep + h;
        double up = loss(xs, x, ks, k, g, &f);
        k[i] = keep - h;
        double down = loss(xs, x, ks, k, g, &f);
        k[i] = keep;
        double fd = (up - down) / (2 * h);
        cr_expect(fabs(fd - gk[i]) <= 1e-7 * (1 + fabs(fd)),
                  "d kernel %zu: conv %.12g, finite difference %.12g", i, gk[i], fd);
    }
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
        double keep = x[i];
        x[i] = keep + h;
        double up = loss(xs, x, ks, k, g, &f);
        x[i] = keep - h;
        double down = loss(xs, x, ks, k, g, &f);
        x[i] = keep;
        double fd = (up - down) / (2 * h);
        cr_expect(fabs(fd - gx[i]) <= 1e-7 * (1 + fabs(fd)),
                  "d input %zu: conv %.12g, finite difference %.12g", i, gx[i], fd);
    }
    free(gk);
    free(gx);
    free(g);
    vkt_tensor *ts[] = {tx, tk, ty, tg, tdk, tkr, tdx};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        vkt_tensor_free(ts[i]);
}

/* ---- native against the reference ---------------------------------------------- */

static uint64_t rng_state = 88172645463325252ull;
static int64_t rnd(int64_t lo, int64_t hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (int64_t)(rng_state % (uint64_t)(hi - lo + 1));
}

static void random_perm(int *p, int rank)
{
    for (int i = 0; i < rank; i++)
        p[i] = i;
    for (int i = rank - 1; i > 0; i--) {
        int j = (int)rnd(0, i), t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

Test(conv, random_options)
{
    for (int it = 0; it < 60; it++) {
        int rank = (int)rnd(3, 5), nsp = rank - 2;
        int64_t G = rnd(0, 3) == 0 ? rnd(2, 3) : 1, B = G == 1 && rnd(0, 3) == 0 ? rnd(2, 3) : 1;
        int64_t cg = rnd(1, 3), C = cg * G, O = G * B * rnd(1, 3), N = B * rnd(1, 3);
        int64_t xc[VKT_MAX_RANK] = {N, C}, kc[VKT_MAX_RANK] = {O, cg};
        vkt_conv_opts o;
        memset(&o, 0, sizeof o);
        o.feature_group_size = G;
        o.batch_group_size = B;
        for (int d = 0; d < nsp; d++) {
            xc[2 + d] = rnd(1, nsp == 3 ? 5 : 9);
            kc[2 + d] = rnd(1, 3);
            o.strides[d] = rnd(1, 3);
            o.input_dilation[d] = rnd(0, 2) == 0 ? 2 : 1;
            o.kernel_dilation[d] = rnd(0, 2) == 0 ? 2 : 1;
            o.padding_lo[d] = rnd(-1, 2);
            o.padding_hi[d] = rnd(-1, 2);
        }
        int ip[VKT_MAX_RANK], kp[VKT_MAX_RANK], op[VKT_MAX_RANK];
        random_perm(ip, rank);
        random_perm(kp, rank);
        random_perm(op, rank);
        o.has_input_permutation = rnd(0, 1);
        o.has_kernel_permutation = rnd(0, 1);
        o.has_output_permutation = rnd(0, 1);
        set_perm(o.input_permutation, ip, rank);
        set_perm(o.kernel_permutation, kp, rank);
        set_perm(o.output_permutation, op, rank);
        /* Tensor axis perm[i] holds canonical axis i. */
        int64_t xs[VKT_MAX_RANK], ks[VKT_MAX_RANK];
        for (int i = 0; i < rank; i++) {
            xs[o.has_input_permutation ? ip[i] : i] = xc[i];
            ks[o.has_kernel_permutation ? kp[i] : i] = kc[i];
        }
        char what[160];
        snprintf(what, sizeof what, "random case %d: rank %d G %lld B %lld", it, rank, (long long)G,
                 (long long)B);
        random_check(VKT_F32, rank, xs, ks, &o, 1000 + (uint64_t)it, what);
    }
}

Test(conv, every_rank4_permutation)
{
    int perms[24][4], n = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 4; c++)
                for (int d = 0; d < 4; d++)
                    if (a != b && a != c && a != d && b != c && b != d && c != d) {
                        int p[4] = {a, b, c, d};
                        memcpy(perms[n++], p, sizeof p);
                    }
    const int64_t xc[4] = {3, 4, 7, 6}, kc[4] = {5, 2, 3, 2};
    for (int i = 0; i < 24; i++) {
        /* Each permutation appears once on each operand, in three pairings. */
        const int *ip = perms[i], *kp = perms[(i * 7 + 3) % 24], *op = perms[(i * 11 + 5) % 24];
        vkt_conv_opts o;
        memset(&o, 0, sizeof o);
        o.has_input_permutation = o.has_kernel_permutation = o.has_output_permutation = true;
        set_perm(o.input_permutation, ip, 4);
        set_perm(o.kernel_permutation, kp, 4);
        set_perm(o.output_permutation, op, 4);
        o.feature_group_size = 2;
        o.strides[0] = 2;
        o.padding_lo[1] = 1;
        int64_t xs[4], ks[4];
        for (int a = 0; a < 4; a++) {
            xs[ip[a]] = xc[a];
            ks[kp[a]] = kc[a];
        }
        char what[128];
        snprintf(what, sizeof what, "perms in %d%d%d%d kernel %d%d%d%d out %d%d%d%d", ip[0], ip[1],
                 ip[2], ip[3], kp[0], kp[1], kp[2], kp[3], op[0], op[1], op[2], op[3]);
        vkt_conv_opts o2 = o;
        o2.feature_group_size = 1;
        o2.batch_group_size = 3;
        o2.has_output_permutation = false;
        random_check(VKT_F32, 4, xs, ks, &o, 2000 + (uint64_t)i, what);
        /* Batch groups too: kc[0] = 5 is not divisible by 3, so change shapes. */
        int64_t xb[4], kb[4];
        const int64_t xcb[4] = {6, 2, 5, 4}, kcb[4] = {3, 2, 2, 3};
        for (int a = 0; a < 4; a++) {
            xb[ip[a]] = xcb[a];
            kb[kp[a]] = kcb[a];
        }
        random_check(VKT_F32, 4, xb, kb, &o2, 3000 + (uint64_t)i, what);
    }
}

/* The LeNet step's convs, forward and both gradients: the split kernel (few
 * outputs, long reductions) and the direct one, all native. */
Test(conv, lenet_gradient_forms)
{
    const int swap[4] = {1, 0, 2, 3};
    const int64_t B = 16;
    const int64_t x1[4] = {B, 1, 28, 28}, k1[4] = {6, 1, 5, 5}, g1[4] = {B, 6, 24, 24};
    const int64_t x2[4] = {B, 6, 12, 12}, k2[4] = {16, 6, 5, 5}, g2[4] = {B, 16, 8, 8};
    const int64_t *xs[2] = {x1, x2}, *ks[2] = {k1, k2}, *gs[2] = {g1, g2};
    for (int l = 0; l < 2; l++) {
        vkt_conv_opts f;
        memset(&f, 0, sizeof f);
        random_check(VKT_F32, 4, xs[l], ks[l], &f, 40 + (uint64_t)l, "lenet forward");
        vkt_conv_opts dk = f;
        swap_batch_and_features(&dk);
        random_check(VKT_F32, 4, xs[l], gs[l], &dk, 50 + (uint64_t)l, "lenet d kernel");
        vkt_conv_opts dx = f;
        dx.has_kernel_permutation = true;
        set_perm(dx.kernel_permutation, swap, 4);
        dx.padding_lo[0] = dx.padding_lo[1] = dx.padding_hi[0] = dx.padding_hi[1] = 4;
        random_check(VKT_F32, 4, gs[l], ks[l], &dx, 60 + (uint64_t)l, "lenet d input");
    }
    /* 54 outputs, each a 2048-long sum: the split kernel on every device. */
    vkt_conv_opts dk;
    memset(&dk, 0, sizeof dk);
    swap_batch_and_features(&dk);
    dk.padding_lo[0] = dk.padding_hi[1] = 1;
    random_check(VKT_F32, 4, (int64_t[]){8, 3, 16, 16}, (int64_t[]){8, 2, 16, 16}, &dk, 70,
                 "small d kernel");
}

/* 2-d f32 convs without groups or dilations take conv2d.comp: random kernel
 * sizes (unrolled up to 7 x 7, looped past), output-feature counts (blocks of
 * up to 16 per invocation, the last one partial), strides, padding (negative
 * too), permutations, and reductions split into parts. */
Test(conv, conv2d_shapes)
{
    for (int it = 0; it < 48; it++) {
        int64_t N = rnd(1, 4), C = rnd(1, 5), O = it % 6 == 0 ? rnd(17, 40) : rnd(1, 9);
        int64_t xc[4] = {N, C, rnd(1, 12), rnd(1, 12)},
                kc[4] = {O, C, rnd(1, it % 4 == 0 ? 9 : 5), rnd(1, 5)};
        vkt_conv_opts o;
        memset(&o, 0, sizeof o);
        for (int d = 0; d < 2; d++) {
            o.strides[d] = rnd(1, 3);
            o.padding_lo[d] = rnd(-1, 3);
            o.padding_hi[d] = rnd(-1, 3);
        }
        int ip[4], kp[4], op[4];
        random_perm(ip, 4);
        random_perm(kp, 4);
        random_perm(op, 4);
        o.has_input_permutation = it % 3 == 1;
        o.has_kernel_permutation = it % 5 == 2;
        o.has_output_permutation = it % 2 == 1;
        set_perm(o.input_permutation, ip, 4);
        set_perm(o.kernel_permutation, kp, 4);
        set_perm(o.output_permutation, op, 4);
        int64_t xs[4], ks[4];
        for (int i = 0; i < 4; i++) {
            xs[o.has_input_permutation ? ip[i] : i] = xc[i];
            ks[o.has_kernel_permutation ? kp[i] : i] = kc[i];
        }
        char what[160];
        snprintf(what, sizeof what, "conv2d case %d: x %lldx%lldx%lldx%lld k %lldx%lldx%lldx%lld",
                 it, (long long)xc[0], (long long)xc[1], (long long)xc[2], (long long)xc[3],
                 (long long)kc[0], (long long)kc[1], (long long)kc[2], (long long)kc[3]);
        random_check(VKT_F32, 4, xs, ks, &o, 4000 + (uint64_t)it, what);
    }
    /* a long reduction over few outputs: split into parts, summed in order */
    vkt_conv_opts dk;
    memset(&dk, 0, sizeof dk);
    swap_batch_and_features(&dk);
    dk.padding_lo[0] = dk.padding_hi[0] = dk.padding_lo[1] = dk.padding_hi[1] = 2;
    random_check(VKT_F32, 4, (int64_t[]){40, 1, 28, 28}, (int64_t[]){40, 6, 28, 28}, &dk, 4100,
                 "kernel gradient of a padded first layer");
    random_check(VKT_F32, 4, (int64_t[]){3, 50, 9, 9}, (int64_t[]){2, 50, 3, 3}, NULL, 4101,
                 "50 input features");
}

Test(conv, sizes_zero_and_one)
{
    vkt_conv_opts o;
    memset(&o, 0, sizeof o);
    struct {
        int64_t x[4], k[4];
        const char *what;
    } cases[] = {
        {{0, 2, 5, 5}, {3, 2, 3, 3}, "batch 0"},
        {{2, 0, 5, 5}, {3, 0, 3, 3}, "features 0: sums of nothing"},
        {{2, 2, 5, 5}, {0, 2, 3, 3}, "output features 0"},
        {{2, 2, 0, 5}, {3, 2, 1, 3}, "input spatial 0"},
        {{2, 2, 2, 5}, {3, 2, 3, 3}, "kernel larger than input: output spatial 0"},
        {{2, 2, 4, 5}, {3, 2, 0, 3}, "kernel spatial 0"},
        {{1, 1, 1, 1}, {1, 1, 1, 1}, "all ones"},
        {{1, 3, 1, 7}, {2, 3, 1, 1}, "ones and odd"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        random_check(VKT_F32, 4, cases[i].x, cases[i].k, &o, 70 + i, cases[i].what);
    o.padding_lo[0] = -2;
    o.padding_hi[0] = -3;
    random_check(VKT_F32, 4, (int64_t[]){1, 1, 5, 3}, (int64_t[]){1, 1, 1, 1}, &o, 80,
                 "trimmed to nothing");
}

Test(conv, dtypes)
{
    vkt_conv_opts o;
    memset(&o, 0, sizeof o);
    o.strides[0] = 2;
    o.padding_lo[1] = 1;
    h_shape sx = shp(4, (int64_t[]){2, 3, 7, 6}), sk = shp(4, (int64_t[]){4, 3, 3, 2});
    const vkt_dtype dts[][2] = {{VKT_F64, VKT_F64}, {VKT_F32, VKT_F64}, {VKT_S32, VKT_S32},
                                {VKT_U8, VKT_U8},   {VKT_U8, VKT_F32},  {VKT_S32, VKT_F64}};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        double lo = dts[i][0] == VKT_U8 ? 0 : -9, hi = dts[i][0] == VKT_U8 ? 20 : 9;
        vkt_tensor *x = h_rand(dts[i][0], &sx, lo, hi, 90 + i),
                   *k = h_rand(dts[i][1], &sk, -3, 3, 95 + i);
        char what[64];
        snprintf(what, sizeof what, "dtypes %s x %s", vkt_dtype_name(dts[i][0]),
                 vkt_dtype_name(dts[i][1]));
        vkt_tensor *y;
        H_NATIVE(vkt_conv(x, k, &o, &y));
        vkt_dtype want = dts[i][0] == VKT_F64 || dts[i][1] == VKT_F64 ? VKT_F64 : VKT_F32;
        cr_expect_eq(vkt_tensor_dtype(y), want, "%s: result %s", what,
                     vkt_dtype_name(vkt_tensor_dtype(y)));
        vkt_tensor_free(y);
        check(x, k, &o, what);
        vkt_tensor_free(x);
        vkt_tensor_free(k);
    }
}

/* Past 65,535 workgroups of 256 outputs: the grid-stride loop covers the rest. */
Test(conv, past_the_grid_limit)
{
    vkt_conv_opts o;
    memset(&o, 0, sizeof o);
    o.padding_lo[1] = 1;
    o.padding_hi[1] = -1;
    random_check(VKT_F32, 4, (int64_t[]){1, 1, 4097, 4096}, (int64_t[]){1, 1, 1, 1}, &o, 99,
                 "16.8M outputs");
}

/* Reductions longer than 65,535 terms: lavapipe ends an invocation's loops
 * after that many iterations, so a kernel that ran one output's whole sum in
 * one invocation came back silently truncated (LeNet's first kernel gradient
 * at batch 83 and up). 290 x 290 = 84,100 terms per output, 726 outputs. */
Test(conv, reductions_past_the_loop_limit)
{
    random_check(VKT_F32, 4, (int64_t[]){1, 1, 300, 300}, (int64_t[]){6, 1, 290, 290}, NULL, 101,
                 "84,100-term sums");
    vkt_conv_opts dk;
    memset(&dk, 0, sizeof dk);
    swap_batch_and_features(&dk);
    random_check(VKT_F32, 4, (int64_t[]){128, 1, 28, 28}, (int64_t[]){128, 6, 24, 24}, &dk, 102,
                 "LeNet kernel gradient, batch 128");
}

/* ---- kernels by name: VKT_CONV_KERNEL and conv2d_kgrad ----------------------------- */

/* A new context for the test, with VKT_CONV_KERNEL set to name (unset: NULL):
 * the context reads the variable when it is created. */
static void use_kernel(const char *name)
{
    h_teardown();
    if (name)
        cr_assert_eq(setenv("VKT_CONV_KERNEL", name, 1), 0);
    else
        cr_assert_eq(unsetenv("VKT_CONV_KERNEL"), 0);
    h_setup();
}

/* Empties the profile, saying whether kernels a and b (either may be NULL)
 * had a dispatch in it. */
static void profile_seen(const char *a, bool *seen_a, const char *b, bool *seen_b)
{
    size_t n = vkt_profile_read(h_ctx, NULL, 0);
    vkt_profile_entry *e = malloc((n ? n : 1) * sizeof *e);
    cr_assert_not_null(e);
    n = vkt_profile_read(h_ctx, e, n);
    *seen_a = *seen_b = false;
    for (size_t i = 0; i < n; i++) {
        *seen_a = *seen_a || (a && strcmp(e[i].kernel, a) == 0);
        *seen_b = *seen_b || (b && strcmp(e[i].kernel, b) == 0);
    }
    free(e);
}

/* check() with every dispatch timed, asserting that kernel `ran` ran and
 * kernel `absent` did not (either may be NULL): values alone cannot tell the
 * kernels apart. A device without timestamps shows no dispatches, so there
 * only the values are checked. */
static void check_path(vkt_tensor *x, vkt_tensor *k, const vkt_conv_opts *o, const char *ran,
                       const char *absent, const char *what)
{
    bool seen_ran, seen_not;
    H_OK(vkt_ctx_set_profiling(h_ctx, true));
    profile_seen(NULL, &seen_ran, NULL, &seen_not);
    check(x, k, o, what);
    profile_seen(ran, &seen_ran, absent, &seen_not);
    H_OK(vkt_ctx_set_profiling(h_ctx, false));
    if (vkt_ctx_last_gpu_ns(h_ctx) < 0)
        return;
    if (ran)
        cr_assert(seen_ran, "%s: %s did not run", what, ran);
    if (absent)
        cr_assert(!seen_not, "%s: %s ran", what, absent);
}

static void random_path(const int64_t *xs, const int64_t *ks, const vkt_conv_opts *o, uint64_t seed,
                        const char *ran, const char *absent, const char *what)
{
    h_shape sx = shp(4, xs), sk = shp(4, ks);
    vkt_tensor *x = h_rand(VKT_F32, &sx, -1, 1, seed), *k = h_rand(VKT_F32, &sk, -1, 1, seed + 1);
    check_path(x, k, o, ran, absent, what);
    vkt_tensor_free(x);
    vkt_tensor_free(k);
}

/* The kernel gradient of a stride-1 conv of an n x c x h x w input with an
 * o x c x kh x kw kernel and the given padding, as an autodiff emits it:
 * input x, "kernel" the output's gradient (n x o x ho x wo), both with batch
 * and feature axes swapped. */
static void kgrad_path(const int64_t *xs, int64_t o, int64_t kh, int64_t kw, const int64_t *lo,
                       const int64_t *hi, uint64_t seed, const char *ran, const char *absent,
                       const char *what)
{
    vkt_conv_opts dk;
    memset(&dk, 0, sizeof dk);
    swap_batch_and_features(&dk);
    for (int d = 0; d < 2; d++) {
        dk.padding_lo[d] = lo[d];
        dk.padding_hi[d] = hi[d];
    }
    int64_t g[4] = {xs[0], o, xs[2] + lo[0] + hi[0] - kh + 1, xs[3] + lo[1] + hi[1] - kw + 1};
    char msg[224];
    snprintf(msg, sizeof msg,
             "%s: x %lldx%lldx%lldx%lld, kernel %lldx%lldx%lldx%lld, padding %lld/%lld %lld/%lld",
             what, (long long)xs[0], (long long)xs[1], (long long)xs[2], (long long)xs[3],
             (long long)o, (long long)xs[1], (long long)kh, (long long)kw, (long long)lo[0],
             (long long)hi[0], (long long)lo[1], (long long)hi[1]);
    random_path(xs, g, &dk, seed, ran, absent, msg);
}

/* conv2d_kgrad, forced (a CPU device never chooses it): kernel gradients of
 * many shapes, against the reference. Its chunks of the reduction: one (no
 * sums to add), whole images one or several per unit, bands of kernel rows
 * (for few images, or images past shared memory) with a ragged last band,
 * several units per chunk with a ragged last chunk; its register tiles:
 * several input and output features, a ragged last block of features and of
 * columns, one lane or dozens; padding on either side, negative too. */
Test(conv, kgrad_kernel, .timeout = 240)
{
    use_kernel("kgrad");
    const char *kg = "conv2d_kgrad_f32", *sum = "conv2d_kgrad_sum_f32";
    const int64_t z[2] = {0, 0}, p2[2] = {2, 2};
    /* LeNet's, at batch 32 (bands of 3 rows of 24) and 301 (two images per
     * chunk, the last chunk one) */
    kgrad_path((int64_t[]){32, 1, 28, 28}, 6, 5, 5, z, z, 200, kg, NULL, "LeNet conv1");
    kgrad_path((int64_t[]){32, 6, 12, 12}, 16, 5, 5, z, z, 201, kg, NULL, "LeNet conv2");
    kgrad_path((int64_t[]){301, 6, 12, 12}, 16, 5, 5, z, z, 202, kg, NULL,
               "LeNet conv2, ragged last chunk");
    kgrad_path((int64_t[]){40, 1, 28, 28}, 6, 5, 5, p2, p2, 203, kg, NULL, "LeNet conv1 padded");
    /* 601 small images: two per unit, the last unit one, two units per chunk */
    kgrad_path((int64_t[]){601, 2, 6, 6}, 3, 3, 3, z, z, 204, kg, NULL, "two images per unit");
    /* 46 x 48 gradient rows of 8 features: bands of 12 rows (the last 10),
     * halved to fit shared memory */
    kgrad_path((int64_t[]){128, 1, 50, 52}, 8, 5, 5, z, z, 205, kg, NULL,
               "bands past shared memory");
    /* one input feature, one kernel row: one chunk, the result written directly */
    kgrad_path((int64_t[]){1, 1, 5, 9}, 3, 5, 1, z, z, 206, kg, sum, "one chunk");
    /* columns in two blocks (11 = 6 + 5), features in blocks with a ragged last */
    kgrad_path((int64_t[]){9, 2, 16, 17}, 4, 3, 11, z, (int64_t[]){1, 0}, 207, kg, NULL,
               "11 columns");
    kgrad_path((int64_t[]){7, 3, 10, 10}, 13, 4, 4, (int64_t[]){-1, 1}, (int64_t[]){2, -1}, 208, kg,
               NULL, "13 features, negative padding");
    /* 8 x 9 rows of two column blocks: 144 tiles, one lane */
    kgrad_path((int64_t[]){20, 8, 14, 15}, 5, 9, 10, z, z, 209, kg, NULL, "one lane");
    for (int it = 0; it < 24; it++) {
        bool wide = it % 5 == 4;
        int64_t kh = rnd(1, 5), kw = wide ? rnd(9, 11) : rnd(1, 5);
        int64_t c = rnd(1, wide ? 2 : 4), o = rnd(1, wide ? 4 : 12), n = rnd(1, 40);
        int64_t lo[2] = {rnd(-1, 2), rnd(-1, 2)}, hi[2] = {rnd(-1, 2), rnd(-1, 2)};
        int64_t xs[4] = {n, c, kh + 2 + rnd(0, 9), kw + 2 + rnd(0, 9)};
        kgrad_path(xs, o, kh, kw, lo, hi, 300 + 2 * (uint64_t)it, kg, NULL,
                   "random kernel gradient");
    }
    /* Any 2-d f32 conv with strides 1 fits it (slowly, where the outputs are
     * many): forward convs with their operands in any layout. */
    for (int it = 0; it < 12; it++) {
        int64_t xc[4] = {rnd(1, 2), rnd(1, 5), rnd(1, 8), rnd(1, 8)},
                kc[4] = {rnd(1, 9), xc[1], rnd(1, 5), rnd(1, 5)};
        vkt_conv_opts o;
        memset(&o, 0, sizeof o);
        for (int d = 0; d < 2; d++) {
            o.padding_lo[d] = rnd(-1, 2);
            o.padding_hi[d] = rnd(-1, 2);
            /* at least one output position */
            while (xc[2 + d] + o.padding_lo[d] + o.padding_hi[d] < kc[2 + d])
                o.padding_hi[d]++;
        }
        int ip[4], kp[4], op[4];
        random_perm(ip, 4);
        random_perm(kp, 4);
        random_perm(op, 4);
        o.has_input_permutation = o.has_kernel_permutation = o.has_output_permutation = true;
        set_perm(o.input_permutation, ip, 4);
        set_perm(o.kernel_permutation, kp, 4);
        set_perm(o.output_permutation, op, 4);
        int64_t xs[4], ks[4];
        for (int i = 0; i < 4; i++) {
            xs[ip[i]] = xc[i];
            ks[kp[i]] = kc[i];
        }
        char what[160];
        snprintf(what, sizeof what, "forward conv %d: x %lldx%lldx%lldx%lld k %lldx%lldx%lldx%lld",
                 it, (long long)xc[0], (long long)xc[1], (long long)xc[2], (long long)xc[3],
                 (long long)kc[0], (long long)kc[1], (long long)kc[2], (long long)kc[3]);
        random_path(xs, ks, &o, 400 + 2 * (uint64_t)it, kg, NULL, what);
    }
    /* Strides other than 1 it leaves to the other kernels, forced or not:
     * a conv of stride 2 and the kernel gradient of one (kernel dilation 2). */
    vkt_conv_opts s2;
    memset(&s2, 0, sizeof s2);
    s2.strides[0] = s2.strides[1] = 2;
    random_path((int64_t[]){4, 3, 11, 11}, (int64_t[]){5, 3, 3, 3}, &s2, 450, "conv2d_tile_f32", kg,
                "stride 2");
    vkt_conv_opts dk;
    memset(&dk, 0, sizeof dk);
    swap_batch_and_features(&dk);
    dk.kernel_dilation[0] = dk.kernel_dilation[1] = 2;
    random_path((int64_t[]){16, 3, 11, 11}, (int64_t[]){16, 5, 4, 4}, &dk, 452, NULL, kg,
                "kernel gradient of a stride-2 conv");
    /* f64 has no 2-d kernels */
    vkt_conv_opts dk64;
    memset(&dk64, 0, sizeof dk64);
    swap_batch_and_features(&dk64);
    h_shape sx = shp(4, (int64_t[]){8, 2, 9, 9}), sk = shp(4, (int64_t[]){8, 3, 5, 5});
    vkt_tensor *x = h_rand(VKT_F64, &sx, -1, 1, 454), *k = h_rand(VKT_F64, &sk, -1, 1, 455);
    check_path(x, k, &dk64, NULL, kg, "f64 kernel gradient");
    vkt_tensor_free(x);
    vkt_tensor_free(k);
    use_kernel(NULL);
}

/* Each kernel VKT_CONV_KERNEL names runs where it applies, on LeNet's kernel
 * gradients at batch 16 (where all of them do); a name that is none is
 * reported and the choice goes back to the automatic one. */
Test(conv, kernel_override, .timeout = 240)
{
    static const char *const names[][2] = {
        {"tile", "conv2d_tile_f32"},
        {"kgrad", "conv2d_kgrad_f32"},
        {"direct", "conv_direct_f32"},
        {"split", "conv_split_f32"},
        {"auto", NULL},
        {"no-such-kernel", NULL},
    };
    const int64_t z[2] = {0, 0};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        use_kernel(names[i][0]);
        char what[64];
        snprintf(what, sizeof what, "VKT_CONV_KERNEL=%s", names[i][0]);
        kgrad_path((int64_t[]){16, 1, 28, 28}, 6, 5, 5, z, z, 500 + 4 * i, names[i][1], NULL, what);
        kgrad_path((int64_t[]){16, 6, 12, 12}, 16, 5, 5, z, z, 502 + 4 * i, names[i][1], NULL,
                   what);
    }
    use_kernel(NULL);
}

/* ---- the error contract ------------------------------------------------------------ */

static void expect_error(const vkt_tensor *x, const vkt_tensor *k, const vkt_conv_opts *o,
                         int status, const char *needle, const char *what)
{
    vkt_tensor *y = (vkt_tensor *)&y;
    int s = vkt_conv(x, k, o, &y);
    cr_expect_eq(s, status, "%s: got %s (%s), want %s", what, vkt_status_name(s), vkt_last_error(),
                 vkt_status_name(status));
    cr_expect_null(y, "%s: *out not NULL after an error", what);
    const char *m = vkt_last_error();
    cr_expect(strncmp(m, "vkt_conv: ", 10) == 0 && strstr(m, needle), "%s: message '%s' lacks '%s'",
              what, m, needle);
}

Test(conv, errors)
{
    h_shape sx = shp(4, (int64_t[]){4, 6, 5, 5}), sk = shp(4, (int64_t[]){6, 3, 3, 3});
    vkt_tensor *x = h_rand(VKT_F32, &sx, -1, 1, 1), *k = h_rand(VKT_F32, &sk, -1, 1, 2);
    h_shape s3 = shp(3, (int64_t[]){4, 6, 5}), s2 = shp(2, (int64_t[]){4, 6});
    vkt_tensor *k3 = h_rand(VKT_F32, &s3, -1, 1, 3), *x2 = h_rand(VKT_F32, &s2, -1, 1, 4);
    vkt_conv_opts o;
    memset(&o, 0, sizeof o);
    expect_error(x, k, &o, VKT_ESHAPE, "expected 6", "mismatched features");
    o.feature_group_size = 4;
    expect_error(x, k, &o, VKT_ESHAPE, "not divisible by feature_group_size", "feature groups");
    o.feature_group_size = 2;
    o.batch_group_size = 2;
    expect_error(x, k, &o, VKT_EINVAL, "cannot both exceed 1", "both groups");
    o.feature_group_size = 2;
    o.batch_group_size = 0;
    h_shape sk5 = shp(4, (int64_t[]){5, 3, 3, 3});
    vkt_tensor *k5 = h_rand(VKT_F32, &sk5, -1, 1, 5);
    expect_error(x, k5, &o, VKT_ESHAPE, "output features are not divisible",
                 "output features by groups");
    memset(&o, 0, sizeof o);
    o.batch_group_size = 3;
    h_shape sk3 = shp(4, (int64_t[]){6, 6, 3, 3});
    vkt_tensor *k6 = h_rand(VKT_F32, &sk3, -1, 1, 6);
    expect_error(x, k6, &o, VKT_ESHAPE, "batch 4 is not divisible", "batch groups");
    memset(&o, 0, sizeof o);
    o.has_input_permutation = true;
    set_perm(o.input_permutation, (int[]){0, 1, 1, 3}, 4);
    expect_error(x, k6, &o, VKT_EAXIS, "repeats axis 1", "repeated permutation axis");
    set_perm(o.input_permutation, (int[]){0, 1, 2, 4}, 4);
    expect_error(x, k6, &o, VKT_EAXIS, "out of range", "permutation axis out of range");
    memset(&o, 0, sizeof o);
    o.has_output_permutation = true;
    set_perm(o.output_permutation, (int[]){-1, 1, 2, 3}, 4);
    expect_error(x, k6, &o, VKT_EAXIS, "output_permutation[0]", "bad output permutation");
    memset(&o, 0, sizeof o);
    o.strides[1] = -1;
    expect_error(x, k6, &o, VKT_EINVAL, "strides[1] = -1", "negative stride");
    memset(&o, 0, sizeof o);
    o.kernel_dilation[0] = -2;
    expect_error(x, k6, &o, VKT_EINVAL, "kernel_dilation[0]", "negative dilation");
    memset(&o, 0, sizeof o);
    o.padding_lo[0] = -4;
    o.padding_hi[0] = -2;
    expect_error(x, k6, &o, VKT_ESHAPE, "trims more than", "padding trims past the input");
    memset(&o, 0, sizeof o);
    expect_error(x, k3, &o, VKT_ESHAPE, "kernel rank 3", "rank mismatch");
    expect_error(x2, x2, &o, VKT_ESHAPE, "rank 2", "rank too small");
    expect_error(NULL, k6, &o, VKT_EINVAL, "input is NULL", "NULL input");
    cr_expect_eq(vkt_conv(x, k6, &o, NULL), VKT_EINVAL);
    vkt_tensor *ts[] = {x, k, k3, x2, k5, k6};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        vkt_tensor_free(ts[i]);
}

Test(conv, support_matrix)
{
    size_t n = vkt_op_count(), found = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(vkt_op_name(i), "conv") != 0)
            continue;
        found++;
        for (int dt = 0; dt < VKT_NUM_DTYPES; dt++)
            cr_expect_eq(vkt_op_support(i, (vkt_dtype)dt, NULL), VKT_NATIVE,
                         "conv %s is not native", vkt_dtype_name((vkt_dtype)dt));
    }
    cr_expect_eq(found, 1, "conv appears %zu times in the support matrix", found);
}

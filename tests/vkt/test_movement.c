/* test_movement.c — the movement family against the host reference.
 *
 * Every case runs twice on the same device inputs: once with every op forced
 * down the fallback (the host reference) and once natively. The native run must
 * run natively (libfbcount's census of it holds no fallback and vkt_stats counts
 * it native) and give the same bytes (movement copies bits,
 * so the tolerance is zero, NaN payloads included: stricter than h_check, which
 * compares values). Before each native run h_poison fills the range the result
 * will get, so an element a kernel forgets to write shows up. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t rnd_in(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

TestSuite(movement, .init = h_setup, .fini = h_teardown);

static const vkt_dtype all_dtypes[] = {VKT_F32, VKT_F64, VKT_S32, VKT_U8};

/* A DEVICE tensor of random bits (any bit pattern: movement must not care). */
static vkt_tensor *rand_tensor(vkt_dtype dt, const int64_t *shape, int rank)
{
    size_t n = vkt_dtype_size(dt);
    for (int i = 0; i < rank; i++)
        n *= (size_t)shape[i];
    unsigned char *buf = malloc(n + 1);
    cr_assert_not_null(buf);
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)rnd();
    vkt_tensor *t = NULL;
    cr_assert_eq(vkt_tensor_from_host(h_ctx, dt, shape, rank, buf, &t), VKT_OK, "%s",
                 vkt_last_error());
    free(buf);
    return t;
}

static vkt_tensor *s32_tensor(const int32_t *data, const int64_t *shape, int rank)
{
    vkt_tensor *t = NULL;
    cr_assert_eq(vkt_tensor_from_host(h_ctx, VKT_S32, shape, rank, data, &t), VKT_OK, "%s",
                 vkt_last_error());
    return t;
}

static uint64_t counter(const char *op, int which)
{
    vkt_stats_entry e[256];
    size_t n = vkt_stats(e, 256);
    for (size_t i = 0; i < n && i < 256; i++)
        if (!strcmp(e[i].op, op))
            return which == 0 ? e[i].native : which == 1 ? e[i].fallback : e[i].host;
    return 0;
}

typedef int (*op_call)(const void *args, vkt_tensor **out);

/* Runs fn through the reference and natively; both must agree bit for bit. */
static void check(const char *op, op_call fn, const void *args, const char *what)
{
    vkt_tensor *ref = NULL, *got = NULL;
    cr_assert_eq(vkt_ctx_set_native_disable(h_ctx, "all"), VKT_OK);
    int s = fn(args, &ref);
    h_native_disable_env();
    cr_assert_eq(s, VKT_OK, "%s: %s (reference): %s", op, what, vkt_last_error());
    size_t nb = vkt_tensor_nbytes(ref);
    unsigned char *want = malloc(nb + 1), *have = malloc(nb + 1);
    cr_assert(want && have);
    cr_assert_eq(vkt_tensor_read(ref, want, nb), VKT_OK, "%s", vkt_last_error());
    h_poison(h_ctx, nb);
    char name[256];
    snprintf(name, sizeof name, "%s: %s", op, what);
    h_mark m = h_mark_now();
    FBCOUNT_ASSERT_NONE(s = fn(args, &got));
    cr_assert_eq(s, VKT_OK, "%s (native): %s", name, vkt_last_error());
    h_expect_native(&m, name);
    cr_assert_eq(vkt_tensor_dtype(got), vkt_tensor_dtype(ref), "%s: %s dtype", op, what);
    cr_assert_eq(vkt_tensor_rank(got), vkt_tensor_rank(ref), "%s: %s rank", op, what);
    for (int d = 0; d < vkt_tensor_rank(ref); d++)
        cr_assert_eq(vkt_tensor_shape(got)[d], vkt_tensor_shape(ref)[d], "%s: %s dim %d", op, what,
                     d);
    cr_assert_eq(vkt_tensor_read(got, have, nb), VKT_OK, "%s", vkt_last_error());
    size_t es = vkt_dtype_size(vkt_tensor_dtype(ref));
    for (size_t i = 0; i < nb; i++)
        if (want[i] != have[i]) {
            cr_expect_fail("%s: %s (%s): element %zu differs (byte %zu: want 0x%02x got 0x%02x)",
                           op, what, vkt_dtype_name(vkt_tensor_dtype(ref)), i / es, i, want[i],
                           have[i]);
            break;
        }
    free(want);
    free(have);
    vkt_tensor_free(ref);
    vkt_tensor_free(got);
}

static const char *shape_str(const int64_t *shape, int rank, char *buf, size_t cap)
{
    int k = snprintf(buf, cap, "[");
    for (int i = 0; i < rank && k > 0 && (size_t)k < cap; i++)
        k += snprintf(buf + k, cap - (size_t)k, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (k > 0 && (size_t)k < cap)
        snprintf(buf + k, cap - (size_t)k, "]");
    return buf;
}

/* ---- transpose ------------------------------------------------------------ */

typedef struct {
    const vkt_tensor *x;
    const int *perm;
} transpose_args;
static int call_transpose(const void *a, vkt_tensor **out)
{
    const transpose_args *t = a;
    return vkt_transpose(t->x, t->perm, out);
}

static void check_transpose(vkt_dtype dt, const int64_t *shape, int rank, const int *perm)
{
    vkt_tensor *x = rand_tensor(dt, shape, rank);
    transpose_args a = {x, perm};
    char what[160], sb[64];
    int k = snprintf(what, sizeof what, "%s perm", shape_str(shape, rank, sb, sizeof sb));
    for (int i = 0; i < rank && perm; i++)
        k += snprintf(what + k, sizeof what - (size_t)k, " %d", perm[i]);
    check("transpose", call_transpose, &a, what);
    vkt_tensor_free(x);
}

Test(movement, transpose_rank3_every_permutation, .timeout = 120)
{
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                    {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    static const int64_t shapes[][3] = {{2, 3, 4}, {1, 5, 1},   {0, 3, 2},
                                        {7, 1, 9}, {33, 17, 5}, {3, 45, 70}};
    for (size_t d = 0; d < 4; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int p = 0; p < 6; p++)
                check_transpose(all_dtypes[d], shapes[s], 3, perms[p]);
}

Test(movement, transpose_random_rank4_to_6, .timeout = 120)
{
    for (int iter = 0; iter < 36; iter++) {
        int rank = 4 + iter % 3;
        int64_t shape[6];
        int perm[6];
        for (int i = 0; i < rank; i++) {
            shape[i] = rnd_in(1, 5);
            perm[i] = i;
        }
        if (iter % 9 == 4)
            shape[rnd() % (unsigned)rank] = 0;
        for (int i = rank - 1; i > 0; i--) {
            int j = (int)(rnd() % (unsigned)(i + 1)), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        check_transpose(all_dtypes[iter % 4], shape, rank, perm);
    }
}

Test(movement, transpose_small_ranks_null_and_negative_perm, .timeout = 60)
{
    static const int64_t s2[2] = {37, 70}, s1[1] = {9}, s4[4] = {1, 33, 1, 65};
    static const int neg[2] = {-1, -2}, p10[2] = {1, 0}, p0[1] = {0}, p4[4] = {3, 2, 1, 0},
                     p4b[4] = {0, 3, 2, 1};
    for (size_t d = 0; d < 4; d++) {
        check_transpose(all_dtypes[d], NULL, 0, NULL);
        check_transpose(all_dtypes[d], s1, 1, p0);
        check_transpose(all_dtypes[d], s2, 2, NULL);
        check_transpose(all_dtypes[d], s2, 2, neg);
        check_transpose(all_dtypes[d], s2, 2, p10);
        check_transpose(all_dtypes[d], s4, 4, p4);
        check_transpose(all_dtypes[d], s4, 4, p4b);
        check_transpose(all_dtypes[d], s4, 4, NULL);
    }
}

/* Past 65,535 workgroups of 256 elements: the tiled swap and the general kernel. */
Test(movement, transpose_large, .timeout = 300)
{
    static const int64_t s2[2] = {4096, 4200}, s3[3] = {64, 4200, 64};
    static const int p2[2] = {1, 0}, p3[3] = {2, 0, 1};
    check_transpose(VKT_F32, s2, 2, p2);
    check_transpose(VKT_F32, s3, 3, p3);
}

/* ---- broadcast ------------------------------------------------------------- */

typedef struct {
    const vkt_tensor *x;
    const int64_t *shape;
    int rank;
    const int *axes;
} broadcast_args;
static int call_broadcast(const void *a, vkt_tensor **out)
{
    const broadcast_args *b = a;
    return vkt_broadcast(b->x, b->shape, b->rank, b->axes, out);
}

Test(movement, broadcast_shapes_and_axes, .timeout = 120)
{
    static const struct {
        int xr;
        int64_t xs[4];
        int r;
        int64_t s[6];
        int axes[4];
        bool has_axes;
    } cases[] = {
        {1, {3}, 2, {4, 3}, {0}, false},
        {1, {1}, 2, {5, 7}, {0}, false},
        {3, {2, 1, 3}, 3, {2, 4, 3}, {0}, false},
        {1, {3}, 2, {3, 4}, {0}, true},
        {2, {2, 3}, 3, {3, 5, 2}, {2, 0}, true},
        {0, {0}, 2, {4, 5}, {0}, false},
        {1, {3}, 2, {0, 3}, {0}, false},
        {2, {1, 1}, 5, {3, 1, 2, 5, 7}, {1, 3}, true},
        {3, {1, 17, 1}, 6, {2, 3, 2, 17, 1, 33}, {1, 3, 4}, true},
        {2, {3, 1}, 2, {3, 1}, {0}, false},
        {4, {2, 1, 4, 1}, 4, {2, 3, 4, 5}, {0}, false},
    };
    for (size_t d = 0; d < 4; d++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            vkt_tensor *x = rand_tensor(all_dtypes[d], cases[i].xs, cases[i].xr);
            broadcast_args a = {x, cases[i].s, cases[i].r,
                                cases[i].has_axes ? cases[i].axes : NULL};
            char what[32];
            snprintf(what, sizeof what, "case %zu", i);
            check("broadcast", call_broadcast, &a, what);
            vkt_tensor_free(x);
        }
}

/* ---- slice ------------------------------------------------------------------ */

typedef struct {
    const vkt_tensor *x;
    const int64_t *start, *len, *strides;
} slice_args;
static int call_slice(const void *a, vkt_tensor **out)
{
    const slice_args *s = a;
    return vkt_slice(s->x, s->start, s->len, s->strides, out);
}

Test(movement, slice_random_windows_with_clamping, .timeout = 120)
{
    for (int iter = 0; iter < 48; iter++) {
        int rank = 1 + iter % 4;
        int64_t shape[4], start[4], len[4], strides[4];
        for (int i = 0; i < rank; i++) {
            shape[i] = rnd_in(iter % 11 == 3 ? 0 : 1, 9);
            len[i] = rnd_in(0, shape[i]);
            if (iter % 3 == 0 && shape[i] > 0)
                len[i] = shape[i] - rnd_in(0, 1); /* mostly full: merges dims */
            start[i] = rnd_in(-3, shape[i] + 3);  /* out of range: clamped */
            strides[i] = rnd_in(1, 4);
        }
        vkt_tensor *x = rand_tensor(all_dtypes[iter % 4], shape, rank);
        slice_args a = {x, start, len, iter % 5 == 0 ? NULL : strides};
        char what[64], sb[48];
        snprintf(what, sizeof what, "iter %d x %s", iter, shape_str(shape, rank, sb, sizeof sb));
        check("slice", call_slice, &a, what);
        vkt_tensor_free(x);
    }
    /* rank 0 and a stride far past the window */
    int64_t s1[1] = {10}, st[1] = {2}, ln[1] = {7}, big[1] = {1000000000000ll};
    vkt_tensor *x0 = rand_tensor(VKT_F64, NULL, 0), *x1 = rand_tensor(VKT_S32, s1, 1);
    slice_args a0 = {x0, NULL, NULL, NULL}, a1 = {x1, st, ln, big};
    check("slice", call_slice, &a0, "rank 0");
    check("slice", call_slice, &a1, "huge stride");
    vkt_tensor_free(x0);
    vkt_tensor_free(x1);
}

/* ---- pad --------------------------------------------------------------------- */

typedef struct {
    const vkt_tensor *x, *v;
    const int64_t *lo, *hi, *in;
} pad_args;
static int call_pad(const void *a, vkt_tensor **out)
{
    const pad_args *p = a;
    return vkt_pad(p->x, p->v, p->lo, p->hi, p->in, out);
}

Test(movement, pad_negative_and_interior, .timeout = 120)
{
    static const struct {
        int r;
        int64_t s[3], lo[3], hi[3], in[3];
    } cases[] = {
        {1, {5}, {2}, {3}, {0}},
        {1, {5}, {-2}, {-1}, {0}},
        {1, {5}, {1}, {1}, {2}},
        {1, {5}, {-3}, {-4}, {2}},
        {2, {3, 4}, {1, -1}, {0, 2}, {1, 0}},
        {2, {3, 4}, {-1, 2}, {-2, -3}, {3, 1}},
        {3, {2, 3, 4}, {0, 1, 0}, {1, 0, 0}, {0, 0, 1}},
        {3, {2, 0, 4}, {1, 2, 0}, {0, 1, 1}, {1, 1, 1}},
        {2, {1, 7}, {0, -7}, {2, 1}, {5, 0}},
        {3, {3, 33, 1}, {-1, 5, 2}, {2, -6, 0}, {0, 2, 4}},
        {1, {1}, {0}, {0}, {1000}},
        {0, {0}, {0}, {0}, {0}},
    };
    for (size_t d = 0; d < 4; d++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            vkt_tensor *x = rand_tensor(all_dtypes[d], cases[i].s, cases[i].r);
            vkt_tensor *v = rand_tensor(all_dtypes[d], NULL, 0);
            pad_args a = {x, v, cases[i].lo, cases[i].hi, cases[i].in};
            char what[32];
            snprintf(what, sizeof what, "case %zu", i);
            check("pad", call_pad, &a, what);
            vkt_tensor_free(x);
            vkt_tensor_free(v);
        }
}

/* ---- reverse ----------------------------------------------------------------- */

typedef struct {
    const vkt_tensor *x;
    const int *axes;
    int n;
} reverse_args;
static int call_reverse(const void *a, vkt_tensor **out)
{
    const reverse_args *r = a;
    return vkt_reverse(r->x, r->axes, r->n, out);
}

Test(movement, reverse_every_axis_subset, .timeout = 120)
{
    static const int64_t shapes[][3] = {{3, 4, 5}, {1, 9, 2}, {2, 0, 3}, {17, 1, 31}};
    for (size_t d = 0; d < 4; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (unsigned m = 0; m < 8; m++) {
                int axes[3], n = 0;
                for (int i = 0; i < 3; i++)
                    if (m & (1u << i))
                        axes[n++] = (m == 5 && i == 2) ? -1 : i;
                vkt_tensor *x = rand_tensor(all_dtypes[d], shapes[s], 3);
                reverse_args a = {x, axes, n};
                char what[32];
                snprintf(what, sizeof what, "shape %zu mask %u", s, m);
                check("reverse", call_reverse, &a, what);
                vkt_tensor_free(x);
            }
    int64_t s1[1] = {1000};
    vkt_tensor *x0 = rand_tensor(VKT_U8, NULL, 0), *x1 = rand_tensor(VKT_F64, s1, 1);
    reverse_args a0 = {x0, NULL, 0}, a1 = {x1, NULL, 0};
    check("reverse", call_reverse, &a0, "rank 0");
    check("reverse", call_reverse, &a1, "NULL axes: all");
    vkt_tensor_free(x0);
    vkt_tensor_free(x1);
}

/* ---- concatenate ------------------------------------------------------------- */

typedef struct {
    const vkt_tensor *const *xs;
    int n, axis;
} concat_args;
static int call_concat(const void *a, vkt_tensor **out)
{
    const concat_args *c = a;
    return vkt_concatenate(c->xs, c->n, c->axis, out);
}

Test(movement, concatenate_axes_sizes_and_promotion, .timeout = 120)
{
    for (int iter = 0; iter < 40; iter++) {
        int rank = 1 + iter % 4, n = 1 + (int)(rnd() % 4);
        int axis = (int)(rnd() % (unsigned)rank);
        int64_t base[4];
        for (int i = 0; i < rank; i++)
            base[i] = rnd_in(1, 6);
        vkt_tensor *xs[4];
        for (int j = 0; j < n; j++) {
            int64_t s[4];
            memcpy(s, base, sizeof s);
            s[axis] = rnd_in(iter % 7 == 2 ? 0 : 1, 7);
            /* every fourth case mixes dtypes, so inputs are converted first */
            vkt_dtype dt = iter % 4 == 3 ? all_dtypes[rnd() % 4] : all_dtypes[iter % 4];
            xs[j] = rand_tensor(dt, s, rank);
        }
        concat_args a = {(const vkt_tensor *const *)xs, n, iter % 6 == 5 ? axis - rank : axis};
        char what[48];
        snprintf(what, sizeof what, "iter %d n %d axis %d", iter, n, axis);
        check("concatenate", call_concat, &a, what);
        for (int j = 0; j < n; j++)
            vkt_tensor_free(xs[j]);
    }
}

/* More inputs than one exec_call holds, some of them host-resident. */
Test(movement, concatenate_many_inputs, .timeout = 120)
{
    vkt_tensor *xs[11];
    for (int j = 0; j < 11; j++) {
        int64_t s[2] = {3, 1 + j % 3};
        xs[j] = rand_tensor(j == 9 ? VKT_F64 : VKT_F32, s, 2);
    }
    concat_args a = {(const vkt_tensor *const *)xs, 11, 1};
    check("concatenate", call_concat, &a, "11 inputs");
    cr_assert_eq(vkt_tensor_move(xs[10], VKT_HOST), VKT_OK);
    check("concatenate", call_concat, &a, "11 inputs, the last host-resident");
    for (int j = 0; j < 11; j++)
        vkt_tensor_free(xs[j]);
}

/* Input counts around the exec_call's inline limit (8) and far past it, each
 * one native call: mixed dtypes (so some inputs are converted first), empty
 * slabs, every axis, and a few inputs left on the host (pulled up, still one
 * native call). */
static void check_concat_count(int n, int seed)
{
    vkt_tensor **xs = calloc((size_t)n, sizeof *xs);
    cr_assert_not_null(xs);
    int rank = 1 + seed % 3, axis = seed % rank;
    int64_t base[3] = {rnd_in(1, 4), rnd_in(1, 5), rnd_in(1, 3)};
    for (int j = 0; j < n; j++) {
        int64_t s[3];
        memcpy(s, base, sizeof s);
        s[axis] = rnd_in(j % 5 == 4 ? 0 : 1, 4);
        vkt_dtype dt = seed % 2 ? all_dtypes[rnd() % 4] : all_dtypes[seed % 4];
        xs[j] = rand_tensor(dt, s, rank);
        if (j % 7 == 3)
            cr_assert_eq(vkt_tensor_move(xs[j], VKT_HOST), VKT_OK);
    }
    concat_args a = {(const vkt_tensor *const *)xs, n, axis};
    char what[64];
    snprintf(what, sizeof what, "%d inputs, rank %d, axis %d, seed %d", n, rank, axis, seed);
    check("concatenate", call_concat, &a, what);
    for (int j = 0; j < n; j++)
        vkt_tensor_free(xs[j]);
    free(xs);
}

Test(movement, concatenate_1_8_9_40_inputs, .timeout = 120)
{
    static const int counts[] = {1, 8, 9, 40};
    for (int seed = 0; seed < 6; seed++)
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
            check_concat_count(counts[k], seed);
}

/* Nine u8 inputs, the first alone past 65,535 workgroups of 256: its slab
 * copy must loop with the grid stride, and the eight after it land behind. */
Test(movement, concatenate_9_inputs_past_the_grid_limit, .timeout = 200)
{
    vkt_tensor *xs[9];
    for (int j = 0; j < 9; j++) {
        int64_t s[2] = {257, j == 0 ? 65300 : 1 + j};
        xs[j] = rand_tensor(VKT_U8, s, 2);
    }
    cr_assert_gt(vkt_tensor_numel(xs[0]), (size_t)65535 * 256);
    concat_args a = {(const vkt_tensor *const *)xs, 9, 1};
    check("concatenate", call_concat, &a, "9 inputs, 2^24+ u8 elements along axis 1");
    for (int j = 0; j < 9; j++)
        vkt_tensor_free(xs[j]);
}

/* ---- gather ------------------------------------------------------------------ */

typedef struct {
    const vkt_tensor *x, *idx;
    const int *axes;
} gather_args;
static int call_gather(const void *a, vkt_tensor **out)
{
    const gather_args *g = a;
    return vkt_gather(g->x, g->idx, g->axes, out);
}

Test(movement, gather_clamps_and_axes, .timeout = 120)
{
    static const int64_t xs[3] = {4, 5, 3};
    static const int ax01[2] = {0, 1}, ax20[2] = {2, 0}, ax1[1] = {1}, axm1[1] = {-1},
                     ax210[3] = {2, 1, 0};
    struct {
        int ir;
        int64_t is[3];
        const int *axes;
    } cases[] = {
        {2, {6, 2}, ax01},   {2, {6, 2}, NULL}, {2, {7, 2}, ax20},
        {3, {2, 3, 1}, ax1}, {2, {5, 1}, axm1}, {1, {3}, ax210},
        {2, {3, 0}, NULL},   {2, {0, 1}, NULL}, {3, {2, 2, 1}, NULL},
    };
    for (size_t d = 0; d < 4; d++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            vkt_tensor *x = rand_tensor(all_dtypes[d], xs, 3);
            size_t n = 1;
            for (int j = 0; j < cases[i].ir; j++)
                n *= (size_t)cases[i].is[j];
            int32_t iv[64];
            for (size_t j = 0; j < n; j++)
                iv[j] = (int32_t)rnd_in(-3, 8); /* some out of range: clamped */
            vkt_tensor *idx = s32_tensor(iv, cases[i].is, cases[i].ir);
            gather_args a = {x, idx, cases[i].axes};
            char what[32];
            snprintf(what, sizeof what, "case %zu", i);
            check("gather", call_gather, &a, what);
            vkt_tensor_free(x);
            vkt_tensor_free(idx);
        }
    /* an indexed axis of size 0: nothing to gather from, the result is zeros */
    int64_t es[2] = {0, 3}, is[2] = {2, 1};
    int32_t iv[2] = {0, 5};
    vkt_tensor *x = rand_tensor(VKT_F32, es, 2), *idx = s32_tensor(iv, is, 2);
    gather_args a = {x, idx, NULL};
    check("gather", call_gather, &a, "empty indexed axis");
    vkt_tensor_free(x);
    vkt_tensor_free(idx);
}

/* Lavapipe ends an invocation's loops after 65,535 iterations in all. Gather
 * has no loop over the index list (each output element reads its tuple's k
 * indices, unrolled), so its only input-dependent loop is the grid stride:
 * 7 passes here, a u8 result of 3,500,001 x 32 = 112M elements gathered by a
 * long index list (the largest result maxStorageBufferRange admits is 128M
 * u8 elements: 8 passes); and 2 passes for a two-axis f32 gather of 10M. */
Test(movement, gather_long_index_lists, .timeout = 200)
{
    int64_t xs[2] = {4096, 32}, is[2] = {3500001, 1};
    size_t n = (size_t)is[0];
    int32_t *iv = malloc(10000002 * sizeof *iv); /* both index lists */
    cr_assert_not_null(iv);
    for (size_t j = 0; j < n; j++)
        iv[j] = (int32_t)rnd_in(-2, 4100);
    vkt_tensor *x = rand_tensor(VKT_U8, xs, 2), *idx = s32_tensor(iv, is, 2);
    gather_args a = {x, idx, NULL};
    check("gather", call_gather, &a, "u8 [4096,32] by 3,500,001 indices");
    vkt_tensor_free(x);
    vkt_tensor_free(idx);
    int64_t ys[3] = {256, 3, 300}, js[2] = {5000001, 2};
    static const int ax20[2] = {2, 0};
    for (size_t j = 0; j < 2 * (size_t)js[0]; j++)
        iv[j] = (int32_t)rnd_in(0, 299);
    vkt_tensor *y = rand_tensor(VKT_F32, ys, 3), *jdx = s32_tensor(iv, js, 2);
    gather_args b = {y, jdx, ax20};
    check("gather", call_gather, &b, "f32 [256,3,300] by 5,000,001 index pairs");
    vkt_tensor_free(y);
    vkt_tensor_free(jdx);
    free(iv);
}

/* ---- reshape and residency --------------------------------------------------- */

Test(movement, reshape_is_a_native_view, .timeout = 60)
{
    int64_t s[3] = {2, 3, 4}, s2[2] = {4, 6};
    float data[24], back[24];
    for (int i = 0; i < 24; i++)
        data[i] = (float)i * 1.5f - 3.0f;
    vkt_tensor *x = NULL, *r = NULL;
    cr_assert_eq(vkt_tensor_from_host(h_ctx, VKT_F32, s, 3, data, &x), VKT_OK);
    uint64_t n0 = counter("reshape", 0);
    cr_assert_eq(vkt_reshape(x, s2, 2, &r), VKT_OK, "%s", vkt_last_error());
    cr_expect_eq(counter("reshape", 0), n0 + 1);
    cr_expect_eq(vkt_tensor_rank(r), 2);
    cr_expect_eq(vkt_tensor_shape(r)[1], 6);
    cr_expect_eq(vkt_tensor_residency(r), VKT_DEVICE);
    vkt_tensor_free(x); /* the view keeps the storage alive */
    cr_assert_eq(vkt_tensor_read(r, back, sizeof back), VKT_OK);
    cr_expect_eq(memcmp(back, data, sizeof data), 0);
    /* a view feeds other ops like any tensor */
    vkt_tensor *t = NULL;
    cr_assert_eq(vkt_transpose(r, NULL, &t), VKT_OK, "%s", vkt_last_error());
    cr_assert_eq(vkt_tensor_read(t, back, sizeof back), VKT_OK);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++)
            cr_expect_eq(back[j * 4 + i], data[i * 6 + j]);
    vkt_tensor_free(t);
    vkt_tensor_free(r);
}

Test(movement, reshape_chain_of_host_resident_inputs, .timeout = 60)
{
    int64_t s[3] = {2, 3, 4}, s1[1] = {24}, s2[2] = {6, 4}, s3[4] = {2, 1, 12, 1};
    int32_t data[24], back[24];
    for (int i = 0; i < 24; i++)
        data[i] = i * 7 - 40;
    vkt_tensor *x = s32_tensor(data, s, 3), *r1 = NULL, *r2 = NULL, *r3 = NULL;
    cr_assert_eq(vkt_tensor_move(x, VKT_HOST), VKT_OK);
    uint64_t h0 = counter("reshape", 2), f0 = counter("reshape", 1), n0 = counter("reshape", 0);
    cr_assert_eq(vkt_reshape(x, s1, 1, &r1), VKT_OK, "%s", vkt_last_error());
    cr_assert_eq(vkt_reshape(r1, s2, 2, &r2), VKT_OK, "%s", vkt_last_error());
    cr_assert_eq(vkt_reshape(r2, s3, 4, &r3), VKT_OK, "%s", vkt_last_error());
    cr_expect_eq(counter("reshape", 2), h0 + 3,
                 "each reshape of a host tensor is a host-resident op");
    cr_expect_eq(counter("reshape", 1), f0);
    cr_expect_eq(counter("reshape", 0), n0);
    cr_expect_eq(vkt_tensor_residency(r3), VKT_HOST);
    cr_assert_eq(vkt_tensor_read(r3, back, sizeof back), VKT_OK);
    cr_expect_eq(memcmp(back, data, sizeof data), 0);
    /* downstream movement of a host tensor stays on the host and says so */
    uint64_t th = counter("transpose", 2);
    vkt_tensor *t = NULL;
    cr_assert_eq(vkt_transpose(r2, NULL, &t), VKT_OK);
    cr_expect_eq(counter("transpose", 2), th + 1);
    vkt_tensor_free(t);
    vkt_tensor_free(x);
    vkt_tensor_free(r1);
    vkt_tensor_free(r2);
    vkt_tensor_free(r3);
}

Test(movement, support_matrix_is_native_for_every_dtype, .timeout = 30)
{
    static const char *const ops[] = {"reshape", "transpose", "broadcast",   "slice",
                                      "pad",     "reverse",   "concatenate", "gather"};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        size_t i = 0;
        while (i < vkt_op_count() && strcmp(vkt_op_name(i), ops[o]))
            i++;
        cr_assert_lt(i, vkt_op_count(), "%s is missing from the support matrix", ops[o]);
        for (size_t d = 0; d < 4; d++)
            cr_expect_eq(vkt_op_support(i, all_dtypes[d], NULL), VKT_NATIVE, "%s %s", ops[o],
                         vkt_dtype_name(all_dtypes[d]));
    }
}

/* ---- bad calls ----------------------------------------------------------------- */

/* `call` writes its result through &o; the error must leave o NULL and a message. */
#define EXPECT_ERR(code, call)                                                                     \
    do {                                                                                           \
        vkt_tensor *o = (vkt_tensor *)&o;                                                          \
        int s_ = (call);                                                                           \
        cr_expect_eq(s_, (code), "%s: want %s got %s (%s)", #call, vkt_status_name(code),          \
                     vkt_status_name(s_), vkt_last_error());                                       \
        if (s_ == VKT_OK)                                                                          \
            vkt_tensor_free(o);                                                                    \
        else                                                                                       \
            cr_expect_null(o, "%s: *out not reset", #call);                                        \
        cr_expect(s_ == VKT_OK || vkt_last_error()[0] != '\0', "%s: no message", #call);           \
    } while (0)

Test(movement, bad_calls, .timeout = 60)
{
    int64_t s3[3] = {2, 3, 4}, s1[1] = {3};
    vkt_tensor *x = rand_tensor(VKT_F32, s3, 3), *v = rand_tensor(VKT_F32, NULL, 0);
    vkt_tensor *v1 = rand_tensor(VKT_F32, s1, 1), *vs = rand_tensor(VKT_S32, NULL, 0);
    vkt_tensor *y = rand_tensor(VKT_F32, s1, 1);
    int32_t iv[2] = {0, 1};
    int64_t is2[2] = {1, 2}, is4[2] = {1, 4};
    vkt_tensor *idx = s32_tensor(iv, is2, 2), *idx0 = s32_tensor(iv, NULL, 0);
    vkt_tensor *idxf = rand_tensor(VKT_F32, is2, 2);
    int32_t iv4[4] = {0};
    vkt_tensor *idx4 = s32_tensor(iv4, is4, 2);

    /* reshape */
    int64_t r24[2] = {4, 6}, r25[2] = {5, 5}, rneg[2] = {-4, -6}, r7[7] = {1, 1, 1, 24, 1, 1, 1};
    EXPECT_ERR(VKT_EINVAL, vkt_reshape(NULL, r24, 2, &o));
    EXPECT_ERR(VKT_ESHAPE, vkt_reshape(x, r25, 2, &o));
    EXPECT_ERR(VKT_ESHAPE, vkt_reshape(x, rneg, 2, &o));
    EXPECT_ERR(VKT_ESHAPE, vkt_reshape(x, r7, 7, &o));
    EXPECT_ERR(VKT_EINVAL, vkt_reshape(x, NULL, 2, &o));
    cr_expect_eq(vkt_reshape(x, r24, 2, NULL), VKT_EINVAL);

    /* transpose */
    int prep[3] = {0, 0, 1}, prange[3] = {0, 1, 3}, pneg[3] = {-4, 0, 1};
    EXPECT_ERR(VKT_EINVAL, vkt_transpose(NULL, NULL, &o));
    EXPECT_ERR(VKT_EAXIS, vkt_transpose(x, prep, &o));
    EXPECT_ERR(VKT_EAXIS, vkt_transpose(x, prange, &o));
    EXPECT_ERR(VKT_EAXIS, vkt_transpose(x, pneg, &o));
    cr_expect_eq(vkt_transpose(x, NULL, NULL), VKT_EINVAL);

    /* broadcast */
    int64_t b42[2] = {4, 2}, b34[2] = {3, 4}, b5[1] = {5};
    int arep[3] = {0, 0, 1}, aout[1] = {2}, a0[1] = {0};
    EXPECT_ERR(VKT_ESHAPE, vkt_broadcast(y, b42, 2, NULL, &o));
    EXPECT_ERR(VKT_ESHAPE, vkt_broadcast(x, b5, 1, NULL, &o));
    EXPECT_ERR(VKT_EAXIS, vkt_broadcast(x, s3, 3, arep, &o));
    EXPECT_ERR(VKT_EAXIS, vkt_broadcast(y, b34, 2, aout, &o));
    EXPECT_ERR(VKT_ESHAPE, vkt_broadcast(y, b42, 2, a0, &o));
    EXPECT_ERR(VKT_EINVAL, vkt_broadcast(y, NULL, 2, NULL, &o));

    /* slice */
    int64_t st0[3] = {0, 0, 0}, lbig[3] = {2, 4, 1}, lneg[3] = {2, -1, 1}, lok[3] = {1, 2, 3};
    int64_t szero[3] = {1, 0, 1}, sneg[3] = {1, 1, -2};
    EXPECT_ERR(VKT_ESHAPE, vkt_slice(x, st0, lbig, NULL, &o));
    EXPECT_ERR(VKT_ESHAPE, vkt_slice(x, st0, lneg, NULL, &o));
    EXPECT_ERR(VKT_EINVAL, vkt_slice(x, st0, lok, szero, &o));
    EXPECT_ERR(VKT_EINVAL, vkt_slice(x, st0, lok, sneg, &o));
    EXPECT_ERR(VKT_EINVAL, vkt_slice(x, NULL, lok, NULL, &o));
    EXPECT_ERR(VKT_EINVAL, vkt_slice(x, st0, NULL, NULL, &o));

    /* pad */
    int64_t z3[3] = {0, 0, 0}, ineg[3] = {0, -1, 0}, trim[3] = {0, -2, 0}, trim2[3] = {0, -2, 0};
    EXPECT_ERR(VKT_EINVAL, vkt_pad(x, v, z3, z3, ineg, &o));
    EXPECT_ERR(VKT_ESHAPE, vkt_pad(x, v1, z3, z3, z3, &o));
    EXPECT_ERR(VKT_EDTYPE, vkt_pad(x, vs, z3, z3, z3, &o));
    EXPECT_ERR(VKT_ESHAPE, vkt_pad(x, v, trim, trim2, z3, &o));
    EXPECT_ERR(VKT_EINVAL, vkt_pad(x, v, NULL, z3, z3, &o));
    EXPECT_ERR(VKT_EINVAL, vkt_pad(x, NULL, z3, z3, z3, &o));

    /* reverse */
    int rv3[1] = {3}, rvrep[2] = {1, -2};
    EXPECT_ERR(VKT_EAXIS, vkt_reverse(x, rv3, 1, &o));
    EXPECT_ERR(VKT_EAXIS, vkt_reverse(x, rvrep, 2, &o));
    EXPECT_ERR(VKT_EAXIS, vkt_reverse(x, rv3, 4, &o));

    /* concatenate */
    const vkt_tensor *xy[2] = {x, y}, *xv[2] = {x, v}, *xn[2] = {x, NULL}, *xx[2] = {x, x};
    EXPECT_ERR(VKT_ESHAPE, vkt_concatenate(xy, 2, 0, &o));
    EXPECT_ERR(VKT_ESHAPE, vkt_concatenate(xv, 2, 0, &o));
    EXPECT_ERR(VKT_EAXIS, vkt_concatenate(xx, 2, 3, &o));
    EXPECT_ERR(VKT_EAXIS, vkt_concatenate(xx, 2, -4, &o));
    EXPECT_ERR(VKT_EINVAL, vkt_concatenate(xx, 0, 0, &o));
    EXPECT_ERR(VKT_EINVAL, vkt_concatenate(NULL, 2, 0, &o));
    EXPECT_ERR(VKT_EINVAL, vkt_concatenate(xn, 2, 0, &o));
    {
        const vkt_tensor *vv[2] = {v, v};
        EXPECT_ERR(VKT_EAXIS, vkt_concatenate(vv, 2, 0, &o));
    }

    /* gather */
    int grep[2] = {1, 1}, gout[2] = {0, 3};
    EXPECT_ERR(VKT_EDTYPE, vkt_gather(x, idxf, NULL, &o));
    EXPECT_ERR(VKT_ESHAPE, vkt_gather(x, idx4, NULL, &o));
    EXPECT_ERR(VKT_ESHAPE, vkt_gather(x, idx0, NULL, &o));
    EXPECT_ERR(VKT_EAXIS, vkt_gather(x, idx, grep, &o));
    EXPECT_ERR(VKT_EAXIS, vkt_gather(x, idx, gout, &o));
    EXPECT_ERR(VKT_EINVAL, vkt_gather(x, NULL, NULL, &o));

    /* the valid neighbours of the calls above succeed */
    EXPECT_ERR(VKT_OK, vkt_reshape(x, r24, 2, &o));
    EXPECT_ERR(VKT_OK, vkt_concatenate(xx, 2, -3, &o));
    EXPECT_ERR(VKT_OK, vkt_gather(x, idx, NULL, &o));

    vkt_tensor *all[] = {x, v, v1, vs, y, idx, idx0, idxf, idx4};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkt_tensor_free(all[i]);
}

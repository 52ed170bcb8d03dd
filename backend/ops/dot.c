/* dot.c — the dot family: vkt_dot, Nx.dot/6 over any axes.
 *
 * Parts: shaders/dot/ (gemm.comp, the tiled kernel; direct.comp for thin
 * products; pack.comp for operands that need a copy first); host reference
 * backend/ref/dot.c; tests tests/vkt/test_dot.c and tests/ref/test_dot.c.
 *
 * Every contraction is a batched GEMM C[q][m][n] = sum_k A[q][m][k] B[q][k][n]:
 * q flattens the batch axes (in the order given), m a's free axes, n b's free
 * axes (ascending, as the result lists them), k the contracting axes (in the
 * order given). The GEMM kernel reads each operand through one stride per
 * index, so an operand whose axis groups each collapse to one stride (the
 * usual row- or column-major matrix, batch axes anywhere that keep their
 * groups contiguous) is read in place; any other is first packed by a strided
 * copy into (batch, contracting, free) order. Both paths are native for every
 * combination of axes. */
#include <stdlib.h>
#include <string.h>

#include "../kernels.h"
#include "opsupport.h"
#include "spirv_table.h"

typedef struct dot_params {
    int ca[VKT_MAX_RANK], ba[VKT_MAX_RANK], cb[VKT_MAX_RANK], bb[VKT_MAX_RANK];
    int nc, nb;
    vkt_dtype compute;
} dot_params;

typedef struct dot_push {
    DOT_PUSH_FIELDS
} dot_push;

typedef struct dot_pack_push {
    DOT_PACK_PUSH_FIELDS
} dot_pack_push;

/* One operand seen as [q][f][k]: its axes by group and one stride per group. */
typedef struct dot_operand {
    int axes[VKT_MAX_RANK]; /* batch, then contracting, then free axes */
    int nb, nc, nf;
    uint64_t Q, F, K;
    uint32_t sq, sf, sk;
} dot_operand;

/* dot's kernels: direct.comp (one thread per output) and the tile shapes of
 * gemm.comp, by kernels.h's names; -1 where a kernel has no variant for a
 * dtype. VKT_DOT_KERNEL names one to use wherever it has a variant (for
 * measuring the others); the context checked the name. */
typedef struct dot_kernel {
    int shader[VKT_NUM_DTYPES];
    int epi;         /* the f32 variant with a fused epilogue (epilogue.glsl), or -1 */
    uint32_t bm, bn; /* output tile; 0 for direct */
    bool vec;        /* reads 4-vectors where the host says they are aligned */
} dot_kernel;

static const dot_kernel dot_kernels[DK__COUNT] = {
    [DK_auto] = {{-1, -1, -1, -1}, -1, 0, 0, false},
    [DK_direct] = {{SPV_gemm_direct_f32, SPV_gemm_direct_f64, SPV_gemm_direct_s32,
                    SPV_gemm_direct_u8},
                   SPV_gemm_direct_f32_epi,
                   0,
                   0,
                   false},
    [DK_tiny] = {{SPV_gemm_tiny_f32, -1, -1, -1}, SPV_gemm_tiny_f32_epi, 16, 16, false},
    [DK_small] = {{SPV_gemm_small_f32, SPV_gemm_small_f64, SPV_gemm_small_s32, SPV_gemm_small_u8},
                  SPV_gemm_small_f32_epi,
                  64,
                  64,
                  false},
    [DK_big] = {{SPV_gemm_big_f32, -1, -1, -1}, SPV_gemm_big_f32_epi, 128, 128, false},
    [DK_big_vec] = {{SPV_gemm_big_vec_f32, -1, -1, -1}, SPV_gemm_big_vec_f32_epi, 128, 128, true},
    [DK_tall_vec] =
        {{SPV_gemm_tall_vec_f32, -1, -1, -1}, SPV_gemm_tall_vec_f32_epi, 256, 128, true},
};

/* ---- planning -------------------------------------------------------------- */

/* The one stride that walks the flattened group, or false when the group's
 * axes are not laid out as one run; size-1 axes never matter. */
static bool dot_collapse(const vkt_tensor *t, const int64_t *st, const int *axes, int n,
                         uint32_t *stride)
{
    int64_t want = -1;
    *stride = 0;
    for (int i = n - 1; i >= 0; i--) {
        int64_t sz = t->shape[axes[i]];
        if (sz == 1)
            continue;
        if (want < 0)
            *stride = (uint32_t)st[axes[i]];
        else if (st[axes[i]] != want)
            return false;
        want = st[axes[i]] * sz;
    }
    return true;
}

static void dot_plan(const vkt_tensor *t, const int *bat, int nb, const int *con, int nc,
                     dot_operand *op)
{
    memset(op, 0, sizeof *op);
    bool used[VKT_MAX_RANK] = {0};
    op->Q = op->F = op->K = 1;
    for (int i = 0; i < nb; i++) {
        op->axes[i] = bat[i];
        used[bat[i]] = true;
        op->Q *= (uint64_t)t->shape[bat[i]];
    }
    for (int i = 0; i < nc; i++) {
        op->axes[nb + i] = con[i];
        used[con[i]] = true;
        op->K *= (uint64_t)t->shape[con[i]];
    }
    op->nb = nb;
    op->nc = nc;
    for (int d = 0; d < t->rank; d++)
        if (!used[d]) {
            op->axes[nb + nc + op->nf++] = d;
            op->F *= (uint64_t)t->shape[d];
        }
}

/* Strides for the GEMM: in place when every group collapses, else after a
 * native strided copy into (batch, contracting, free) order (*packed owns it). */
static int dot_layout(const vkt_tensor *t, dot_operand *op, const vkt_tensor **src,
                      vkt_tensor **packed)
{
    int64_t st[VKT_MAX_RANK];
    int64_t s = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= t->shape[d];
    }
    *src = t;
    *packed = NULL;
    if (dot_collapse(t, st, op->axes, op->nb, &op->sq) &&
        dot_collapse(t, st, op->axes + op->nb, op->nc, &op->sk) &&
        dot_collapse(t, st, op->axes + op->nb + op->nc, op->nf, &op->sf))
        return VKT_OK;

    dot_pack_push pc = {.n = (uint32_t)t->numel, .rank = (uint32_t)t->rank};
    int64_t shape[VKT_MAX_RANK];
    for (int i = 0; i < t->rank; i++) {
        shape[i] = t->shape[op->axes[i]];
        pc.shape[i] = (uint32_t)shape[i];
        pc.stride[i] = (uint32_t)st[op->axes[i]];
    }
    vkt_tensor *p;
    TRY(tn_new(t->ctx, t->dtype, shape, t->rank, &p));
    int s2 = tn_alloc_device(p);
    if (s2 == VKT_OK) {
        size_t es = vkt_dtype_size(t->dtype);
        int shader = es == 1 ? SPV_dot_pack_1 : es == 4 ? SPV_dot_pack_4 : SPV_dot_pack_8;
        tn_storage *bufs[2] = {t->st, p->st};
        s2 = op_dispatch(t->ctx, shader, 0, &pc, sizeof pc, bufs, 2, t->numel);
    }
    if (s2 != VKT_OK) {
        vkt_tensor_free(p);
        return s2;
    }
    op->sq = (uint32_t)(op->K * op->F);
    op->sk = (uint32_t)op->F;
    op->sf = 1;
    *src = p;
    *packed = p;
    return VKT_OK;
}

/* ---- native and host computations ------------------------------------------ */

/* Products of at most this many outputs take the 16 x 16 tile on a GPU: the
 * 64 x 64 tile leaves most of the device idle there (LeNet's dense layers:
 * two to twenty workgroups), and one thread per output (direct) waits on
 * every load of its K loop (an H200 took 13 us for 256 x 84 x 10 that way,
 * against 6 to 8 us for LeNet's other small products with the 16 x 16 tile). */
#define DOT_TINY_OUTPUTS 131072

/* The 256 x 128 tile with 4-vector loads pays off once there are enough of its
 * tiles to fill the GPU (H200, each kernel forced, 2026-12-01: 2048^3 ran at 40.0
 * TFLOP/s with the 128 x 256 tile then used, 38.9 big_vec, 33.8 big; 4096^3 at
 * 42.7, 40.9 and 35.5, against torch.mm's 49.7; 2026-12-02: 256 x 128 at 40.5 and
 * 43.2, 1-1.3% above 128 x 256 at every size), and below that the 64 x 64 tile
 * wins (1024^3: 20.7 small, 16.7 big_vec, 10.1 for the 128 x 256 tile); lavapipe
 * (a CPU) gains nothing from big tiles.
 * Thin products would idle most of a tile: one thread per output there, but
 * on a GPU small ones take the 16 x 16 tile (DOT_TINY_OUTPUTS). */
static int dot_auto(const vkt_ctx *ctx, vkt_dtype dt, uint64_t Q, uint64_t M, uint64_t N)
{
    bool gpu = ctx->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (dt == VKT_F32 && gpu && Q * M * N <= DOT_TINY_OUTPUTS)
        return DK_tiny;
    if (M < 16 || N < 16)
        return DK_direct;
    if (dt == VKT_F32 && gpu && Q * ((M + 255) / 256) * ((N + 127) / 128) >= 128)
        return DK_tall_vec;
    return DK_small;
}

/* The kernel for this product: VKT_DOT_KERNEL's where it has a variant for
 * the dtype, else the automatic choice. */
static int dot_choose(const vkt_ctx *ctx, vkt_dtype dt, uint64_t Q, uint64_t M, uint64_t N)
{
    int k = ctx->dot_kernel;
    return k != DK_auto && dot_kernels[k].shader[dt] >= 0 ? k : dot_auto(ctx, dt, Q, M, N);
}

/* Whether an operand can be read as aligned 4-vectors along its contiguous
 * index: that index has stride 1 and a multiple of 4 elements, and every other
 * stride (so every slice's start too) is a multiple of 4. */
static bool dot_vec_ok(const dot_operand *op)
{
    if (op->sf == 1)
        return op->F % 4 == 0 && op->sk % 4 == 0 && op->sq % 4 == 0;
    return op->sk == 1 && op->K % 4 == 0 && op->sf % 4 == 0 && op->sq % 4 == 0;
}

static uint32_t dot_ceil(uint64_t a, uint64_t b)
{
    return (uint32_t)((a + b - 1) / b);
}

/* Lavapipe ends a shader invocation's loops after 65,535 iterations in all
 * (one counter for the outermost loop and everything nested in it), which a
 * long K would exceed silently; so K is cut into slices that each stay well
 * within that, one dispatch per slice adding onto the previous ones. Other
 * devices take the same path: slices are long enough (at least ~60,000
 * steps of K per output tile) that ordinary products run in one dispatch. */
static uint64_t dot_k_slice(uint64_t passes, uint64_t k_per_step)
{
    uint64_t budget = 60000 / (passes ? passes : 1);
    return (budget > 8 ? budget - 4 : 4) * k_per_step;
}

static int dot_gemm(exec_call *c, const vkt_tensor *a, const vkt_tensor *b, dot_operand *oa,
                    dot_operand *ob)
{
    vkt_ctx *ctx = c->out->ctx;
    const vkt_tensor *sa, *sb;
    vkt_tensor *pa = NULL, *pb = NULL;
    int s = dot_layout(a, oa, &sa, &pa);
    if (s == VKT_OK)
        s = dot_layout(b, ob, &sb, &pb);
    if (s == VKT_OK) {
        const dot_kernel *kn = &dot_kernels[dot_choose(ctx, c->out->dtype, oa->Q, oa->F, ob->F)];
        bool direct = kn->bm == 0;
        dot_push pc = {
            .M = (uint32_t)oa->F,
            .N = (uint32_t)ob->F,
            .K = (uint32_t)oa->K,
            .Q = (uint32_t)oa->Q,
            .a_sq = oa->sq,
            .a_sm = oa->sf,
            .a_sk = oa->sk,
            .b_sq = ob->sq,
            .b_sk = ob->sk,
            .b_sn = ob->sf,
            .a_mfast = oa->sf == 1,
            .b_nfast = ob->sf == 1,
            .a_vec = kn->vec && dot_vec_ok(oa),
            .b_vec = kn->vec && dot_vec_ok(ob),
        };
        pc.tiles_m = direct ? 1 : dot_ceil(pc.M, kn->bm);
        pc.tiles_n = direct ? 1 : dot_ceil(pc.N, kn->bn);
        pl_dispatch d = {.shader = kn->shader[c->out->dtype],
                         .nbufs = 3,
                         .bufs = {sa->st, sb->st, c->out->st},
                         .writes = {false, false, true},
                         .push = &pc,
                         .push_size = sizeof pc,
                         .groups = {pc.tiles_n > 65535 ? 65535 : pc.tiles_n,
                                    pc.tiles_m > 65535 ? 65535 : pc.tiles_m,
                                    pc.Q > 65535 ? 65535 : pc.Q}};
        uint64_t passes, slice;
        if (direct) {
            pl_grid(oa->Q * oa->F * ob->F, 256, d.groups);
            passes = dot_ceil(oa->Q * oa->F * ob->F, (uint64_t)d.groups[0] * 256);
            slice = dot_k_slice(passes, 1);
        } else {
            passes = (uint64_t)dot_ceil(pc.tiles_n, d.groups[0]) *
                     dot_ceil(pc.tiles_m, d.groups[1]) * dot_ceil(pc.Q, d.groups[2]);
            /* tiny's k loop steps 32 and runs that many steps within (they
             * unroll, but the budget does not count on it) */
            slice = kn->bm == 16 ? dot_k_slice(passes * 34, 32) : dot_k_slice(passes, 8);
        }
        uint64_t K = oa->K;
        /* A product in one dispatch stores each output once: a graph may fuse
         * an elementwise program into that store. */
        rt_epi epi = {kn->epi, 2, (uint32_t)c->out->numel};
        rt_form form = {RT_FORM_GEMM, kn->bm, kn->bn, -1};
        if (c->out->dtype == VKT_F32 && kn->epi >= 0 && K <= slice)
            d.epi = &epi;
        d.form = &form;
        for (uint64_t k0 = 0; s == VKT_OK && (k0 < K || k0 == 0); k0 += slice) {
            pc.K = (uint32_t)(K - k0 < slice ? K - k0 : slice);
            pc.a_off = (uint32_t)(k0 * oa->sk);
            pc.b_off = (uint32_t)(k0 * ob->sk);
            pc.accumulate = k0 > 0;
            s = pl_run(ctx, &d);
        }
    }
    vkt_tensor_free(pa);
    vkt_tensor_free(pb);
    return s;
}

static int dot_native(exec_call *c)
{
    const dot_params *p = c->params;
    if (c->out->numel == 0)
        return VKT_OK;
    const vkt_tensor *a = c->in[0], *b = c->in[1];
    vkt_tensor *ta = NULL, *tb = NULL;
    int s = op_device_convert(a, p->compute, &a, &ta);
    if (s == VKT_OK)
        s = op_device_convert(b, p->compute, &b, &tb);
    if (s == VKT_OK) {
        dot_operand oa, ob;
        dot_plan(a, p->ba, p->nb, p->ca, p->nc, &oa);
        dot_plan(b, p->bb, p->nb, p->cb, p->nc, &ob);
        s = dot_gemm(c, a, b, &oa, &ob);
    }
    vkt_tensor_free(ta);
    vkt_tensor_free(tb);
    return s;
}

static int dot_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const dot_params *p = c->params;
    ref_view v[2];
    void *owned[2];
    int s = op_host_convert_n(in, 2, p->compute, v, owned);
    if (s == VKT_OK)
        s = ref_dot(&v[0], p->ca, p->ba, &v[1], p->cb, p->bb, p->nc, p->nb, out);
    free(owned[0]);
    free(owned[1]);
    return s;
}

/* ---- validation and the public function ------------------------------------ */

/* Normalizes n axes of operand `which` into dst, rejecting repeats across all
 * of that operand's axis lists (seen accumulates them). */
static int dot_axes(const char *which, const char *list, const int *axes, int n, int rank,
                    unsigned *seen, int *dst)
{
    if (n > 0 && !axes)
        return err_set(VKT_EINVAL, "vkt_dot: %s is NULL but %d axes were announced", list, n);
    for (int i = 0; i < n; i++) {
        int ax = 0;
        if (axes[i] < -rank || axes[i] >= rank)
            return err_set(VKT_EAXIS, "vkt_dot: %s[%d] = %d is out of range for %s of rank %d",
                           list, i, axes[i], which, rank);
        ax = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (*seen & (1u << ax))
            return err_set(VKT_EAXIS,
                           "vkt_dot: axis %d of %s is repeated in its contracting/batch axes", ax,
                           which);
        *seen |= 1u << ax;
        dst[i] = ax;
    }
    return VKT_OK;
}

static int dot_pairs(const char *kind, const vkt_tensor *a, const int *xa, const vkt_tensor *b,
                     const int *xb, int n)
{
    for (int i = 0; i < n; i++)
        if (a->shape[xa[i]] != b->shape[xb[i]])
            return err_set(
                VKT_ESHAPE,
                "vkt_dot: %s axis pair %d has sizes %lld (a axis %d) and %lld (b axis %d)", kind, i,
                (long long)a->shape[xa[i]], xa[i], (long long)b->shape[xb[i]], xb[i]);
    return VKT_OK;
}

static const op_info dot_ops[] = {OP_ENTRY(dot, NULL, 0)};
const op_table op_table_dot = {dot_ops, sizeof dot_ops / sizeof dot_ops[0]};

VKT_API int vkt_dot(const vkt_tensor *a, const int *ca, const int *ba, const vkt_tensor *b,
                    const int *cb, const int *bb, int nc, int nb, vkt_tensor **out)
{
    const op_info *info = &dot_ops[0];
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_dot: out is NULL");
    *out = NULL;
    TRY(tn_check_tensor(a, info->name, "a"));
    TRY(tn_check_tensor(b, info->name, "b"));
    if (nc < 0 || nb < 0)
        return err_set(VKT_EINVAL, "vkt_dot: negative axis count (nc = %d, nb = %d)", nc, nb);
    if (nc + nb > a->rank || nc + nb > b->rank)
        return err_set(VKT_EAXIS,
                       "vkt_dot: %d contracting + %d batch axes exceed rank %d of a or %d of b", nc,
                       nb, a->rank, b->rank);
    dot_params p = {.nc = nc, .nb = nb, .compute = op_promote(a->dtype, b->dtype)};
    unsigned seen_a = 0, seen_b = 0;
    TRY(dot_axes("a", "ca", ca, nc, a->rank, &seen_a, p.ca));
    TRY(dot_axes("a", "ba", ba, nb, a->rank, &seen_a, p.ba));
    TRY(dot_axes("b", "cb", cb, nc, b->rank, &seen_b, p.cb));
    TRY(dot_axes("b", "bb", bb, nb, b->rank, &seen_b, p.bb));
    TRY(dot_pairs("contracting", a, p.ca, b, p.cb, nc));
    TRY(dot_pairs("batch", a, p.ba, b, p.bb, nb));

    int64_t shape[2 * VKT_MAX_RANK];
    int rank = 0;
    for (int i = 0; i < nb; i++)
        shape[rank++] = a->shape[p.ba[i]];
    for (int d = 0; d < a->rank; d++)
        if (!(seen_a & (1u << d)))
            shape[rank++] = a->shape[d];
    for (int d = 0; d < b->rank; d++)
        if (!(seen_b & (1u << d)))
            shape[rank++] = b->shape[d];
    if (rank > VKT_MAX_RANK)
        return err_set(VKT_ESHAPE, "vkt_dot: the result would have rank %d (at most %d)", rank,
                       VKT_MAX_RANK);
    exec_call c = {
        .info = info, .in = {a, b}, .nin = 2, .native = dot_native, .host = dot_host, .params = &p};
    TRY(tn_new(a->ctx, p.compute, shape, rank, &c.out));
    return exec_run(&c, out);
}

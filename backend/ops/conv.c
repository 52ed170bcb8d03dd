/* conv.c — the conv family: vkt_conv (Nx.conv, XLA ConvGeneralDilated).
 *
 * Parts: shaders/conv/ (conv2d_tile.comp, conv2d_sum.comp, conv2d_kgrad.comp,
 * conv2d_kgrad_sum.comp, direct.comp, split.comp; conv.glsl); host reference
 * backend/ref/conv.c; tests tests/vkt/test_conv.c with the PyTorch golden
 * data of tests/golden/conv/. Its one gate is conv_gate (32-bit geometry).
 *
 * Every layout runs natively: the shaders index input, kernel and output
 * through per-axis strides, so permuted operands — the gradient convs arrive
 * with batch and feature axes swapped — cost no copy and meet no gate. Integer
 * operands are converted to f32 on the device, as Nx computes conv in floating
 * point. A 2-d f32 conv without groups or dilations (a CNN's layers and both
 * their gradients) runs through shared memory (conv2d_tile), its reduction in
 * parts that conv2d_sum adds up when the outputs are few; any other takes one
 * of two general kernels: one invocation per output element, or one workgroup
 * per output element for few outputs with long reductions.
 *
 * On a GPU, a 2-d f32 conv of strides 1 with few outputs (at most 8,192) and a
 * long reduction (at least KG_MIN_R products each) — a kernel gradient, whose
 * reduction runs over the batch and the output's positions — takes
 * conv2d_kgrad instead: an implicit GEMM over that reduction, whose
 * workgroups each stage a chunk of it (images by kernel rows) once and
 * accumulate every output from it, then conv2d_kgrad_sum adds the chunks'
 * partial sums. A CPU device keeps its other kernels there: the chunking is
 * sized for a GPU's multiprocessors, and lavapipe's runs stay as they were.
 *
 * VKT_CONV_KERNEL=auto|tile|kgrad|direct|split (ctx->conv_kernel) forces a
 * kernel wherever it applies, for measuring them against each other: tile
 * and kgrad as above (kgrad on a CPU device too), direct except for the
 * reductions a CPU device's loop limit would cut short, split always;
 * elsewhere, and for auto, the choice is the automatic one. The context
 * checks the name when it is made (kernels.h). */
#include <stdlib.h>
#include <string.h>

#include "../kernels.h"
#include "opsupport.h"
#include "spirv_table.h"

#define CV_MAXSP VKT_MAX_SPATIAL
/* The parameter block's offsets (CV_*) come from layouts.h. */

/* The split kernel pays for a workgroup reduction per output; it wins when the
 * outputs alone cannot fill the device and each one sums many products. A CPU
 * device (lavapipe) runs a workgroup per thread and pays dearly for barriers,
 * so there it only takes outputs too few to fill one workgroup of the direct
 * kernel, which would otherwise run on one core. */
#define CV_SPLIT_MAX_OUT 32768
#define CV_SPLIT_MAX_OUT_CPU 64
#define CV_SPLIT_MIN_R 1024
/* Lavapipe ends an invocation's loops after 65,535 iterations in all (see
 * dot.c) and the direct kernel runs a whole reduction in one invocation, so on
 * a CPU device a longer reduction takes the split kernel, whose threads each
 * run 1/256 of it: a kernel gradient at batch 83 and up (28x28 maps) would
 * otherwise come back silently truncated. */
#define CV_CPU_LOOP_R 32768

/* Everything the recorder and the host computation need, checked once. */
typedef struct cv_plan {
    vkt_conv_opts opts; /* defaults filled in (strides, dilations, groups >= 1) */
    vkt_dtype dtype;    /* result and compute dtype */
    int nsp;
    int perm[3][VKT_MAX_RANK];    /* input, kernel, output: canonical axis -> tensor axis */
    int64_t csz[3][VKT_MAX_RANK]; /* canonical sizes */
} cv_plan;

typedef struct c2t_push {
    C2T_PUSH_FIELDS
} c2t_push;

typedef struct c2s_push {
    C2S_PUSH_FIELDS
} c2s_push;

static const int direct_shaders[2] = {SPV_conv_direct_f32, SPV_conv_direct_f64};
static const int split_shaders[2] = {SPV_conv_split_f32, SPV_conv_split_f64};

/* ---- validation ------------------------------------------------------------ */

static int check_perm(const char *what, bool has, const int *perm, int rank, int *outp)
{
    unsigned seen = 0;
    for (int i = 0; i < rank; i++) {
        int a = has ? perm[i] : i;
        if (a < 0 || a >= rank)
            return err_set(VKT_EAXIS, "vkt_conv: %s[%d] = %d is out of range for rank %d", what, i,
                           a, rank);
        if (seen & (1u << a))
            return err_set(VKT_EAXIS, "vkt_conv: %s repeats axis %d", what, a);
        seen |= 1u << a;
        outp[i] = a;
    }
    return VKT_OK;
}

static int positive(const char *what, int d, int64_t *v)
{
    if (*v < 0)
        return err_set(VKT_EINVAL, "vkt_conv: %s[%d] = %lld must be positive", what, d,
                       (long long)*v);
    if (*v == 0)
        *v = 1;
    return VKT_OK;
}

static int64_t dilated(int64_t size, int64_t dil)
{
    return size == 0 ? 0 : (size - 1) * dil + 1;
}

/* The features and batch of the canonical input and kernel against the group sizes. */
static int check_groups(const cv_plan *pl)
{
    int64_t G = pl->opts.feature_group_size, B = pl->opts.batch_group_size;
    int64_t N = pl->csz[0][0], C = pl->csz[0][1], O = pl->csz[1][0], Cg = pl->csz[1][1];
    if (C % G != 0)
        return err_set(VKT_ESHAPE,
                       "vkt_conv: %lld input features are not divisible by feature_group_size %lld",
                       (long long)C, (long long)G);
    if (Cg * G != C)
        return err_set(
            VKT_ESHAPE,
            "vkt_conv: kernel has %lld input features, expected %lld (input features %lld / "
            "feature_group_size %lld)",
            (long long)Cg, (long long)(C / G), (long long)C, (long long)G);
    if (O % G != 0)
        return err_set(
            VKT_ESHAPE,
            "vkt_conv: %lld output features are not divisible by feature_group_size %lld",
            (long long)O, (long long)G);
    if (N % B != 0)
        return err_set(VKT_ESHAPE, "vkt_conv: batch %lld is not divisible by batch_group_size %lld",
                       (long long)N, (long long)B);
    if (O % B != 0)
        return err_set(VKT_ESHAPE,
                       "vkt_conv: %lld output features are not divisible by batch_group_size %lld",
                       (long long)O, (long long)B);
    return VKT_OK;
}

static int make_plan(const vkt_tensor *input, const vkt_tensor *kernel, const vkt_conv_opts *opts,
                     cv_plan *pl, int64_t *shape)
{
    int rank = input->rank;
    if (rank < 3)
        return err_set(VKT_ESHAPE,
                       "vkt_conv: input has rank %d, needs 3 to %d (batch, features, spatial...)",
                       rank, VKT_MAX_RANK);
    if (kernel->rank != rank)
        return err_set(VKT_ESHAPE, "vkt_conv: kernel rank %d differs from input rank %d",
                       kernel->rank, rank);
    memset(pl, 0, sizeof *pl);
    if (opts)
        pl->opts = *opts;
    vkt_conv_opts *o = &pl->opts;
    pl->nsp = rank - 2;
    TRY(check_perm("input_permutation", o->has_input_permutation, o->input_permutation, rank,
                   pl->perm[0]));
    TRY(check_perm("kernel_permutation", o->has_kernel_permutation, o->kernel_permutation, rank,
                   pl->perm[1]));
    TRY(check_perm("output_permutation", o->has_output_permutation, o->output_permutation, rank,
                   pl->perm[2]));
    for (int d = 0; d < pl->nsp; d++) {
        TRY(positive("strides", d, &o->strides[d]));
        TRY(positive("input_dilation", d, &o->input_dilation[d]));
        TRY(positive("kernel_dilation", d, &o->kernel_dilation[d]));
    }
    TRY(positive("feature_group_size", 0, &o->feature_group_size));
    TRY(positive("batch_group_size", 0, &o->batch_group_size));
    int64_t G = o->feature_group_size, B = o->batch_group_size;
    if (G > 1 && B > 1)
        return err_set(
            VKT_EINVAL,
            "vkt_conv: feature_group_size %lld and batch_group_size %lld cannot both exceed 1",
            (long long)G, (long long)B);
    for (int i = 0; i < rank; i++) {
        pl->csz[0][i] = input->shape[pl->perm[0][i]];
        pl->csz[1][i] = kernel->shape[pl->perm[1][i]];
    }
    TRY(check_groups(pl));
    int64_t N = pl->csz[0][0], O = pl->csz[1][0];
    int64_t canon_out[VKT_MAX_RANK] = {N / B, O};
    for (int d = 0; d < pl->nsp; d++) {
        int64_t in =
            dilated(pl->csz[0][2 + d], o->input_dilation[d]) + o->padding_lo[d] + o->padding_hi[d];
        if (in < 0)
            return err_set(
                VKT_ESHAPE,
                "vkt_conv: spatial dim %d: padding %lld/%lld trims more than the %lld-element "
                "(dilated) input",
                d, (long long)o->padding_lo[d], (long long)o->padding_hi[d],
                (long long)dilated(pl->csz[0][2 + d], o->input_dilation[d]));
        int64_t k = dilated(pl->csz[1][2 + d], o->kernel_dilation[d]);
        canon_out[2 + d] = in < k ? 0 : (in - k) / o->strides[d] + 1;
    }
    /* Canonical axis i of the output is the result's axis perm[i] (Nx, XLA). */
    for (int i = 0; i < rank; i++) {
        pl->csz[2][i] = canon_out[i];
        shape[pl->perm[2][i]] = canon_out[i];
    }
    pl->dtype = op_promote(input->dtype, kernel->dtype);
    if (!op_is_float(pl->dtype))
        pl->dtype = VKT_F32;
    return VKT_OK;
}

/* ---- native ------------------------------------------------------------------ */

/* Element strides of a row-major tensor, listed in canonical axis order. */
static void canon_strides(const vkt_tensor *t, const int *perm, int64_t *out)
{
    int64_t st[VKT_MAX_RANK];
    int64_t s = 1;
    for (int a = t->rank - 1; a >= 0; a--) {
        st[a] = s;
        s *= t->shape[a];
    }
    for (int i = 0; i < t->rank; i++)
        out[i] = st[perm[i]];
}

static int64_t gcd(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void fill_params(const cv_plan *pl, const vkt_tensor *x, const vkt_tensor *k,
                        const vkt_tensor *y, int32_t *p)
{
    const vkt_conv_opts *o = &pl->opts;
    int64_t xs[VKT_MAX_RANK], ks[VKT_MAX_RANK], ys[VKT_MAX_RANK];
    canon_strides(x, pl->perm[0], xs);
    canon_strides(k, pl->perm[1], ks);
    canon_strides(y, pl->perm[2], ys);
    int64_t O = pl->csz[2][1], ksp = 1;
    memset(p, 0, sizeof(int32_t) * CV_NPARAM);
    p[CV_N] = (int32_t)y->numel;
    p[CV_O] = (int32_t)O;
    p[CV_CG] = (int32_t)pl->csz[1][1];
    p[CV_PER_FG] = (int32_t)(O / o->feature_group_size);
    p[CV_PER_BG] = (int32_t)(O / o->batch_group_size);
    p[CV_BATCH_BG] = (int32_t)pl->csz[2][0];
    p[CV_XS_N] = (int32_t)xs[0];
    p[CV_XS_C] = (int32_t)xs[1];
    p[CV_KS_O] = (int32_t)ks[0];
    p[CV_KS_I] = (int32_t)ks[1];
    p[CV_YS_N] = (int32_t)ys[0];
    p[CV_YS_C] = (int32_t)ys[1];
    /* Real spatial dims go last, so unused leading ones decode as size 1. */
    for (int slot = 0; slot < 4; slot++) {
        int32_t *q = p + CV_SP + slot * CV_SPW;
        int d = slot - (4 - pl->nsp);
        if (d < 0) {
            q[CV_OSZ] = q[CV_ISZ] = q[CV_KSZ] = q[CV_STR] = q[CV_LD] = q[CV_RD] = q[CV_KSTEP] = 1;
            continue;
        }
        q[CV_OSZ] = (int32_t)pl->csz[2][2 + d];
        q[CV_ISZ] = (int32_t)pl->csz[0][2 + d];
        q[CV_KSZ] = (int32_t)pl->csz[1][2 + d];
        q[CV_STR] = (int32_t)o->strides[d];
        q[CV_LO] = (int32_t)o->padding_lo[d];
        q[CV_LD] = (int32_t)o->input_dilation[d];
        q[CV_RD] = (int32_t)o->kernel_dilation[d];
        q[CV_XST] = (int32_t)xs[2 + d];
        q[CV_KST] = (int32_t)ks[2 + d];
        q[CV_YST] = (int32_t)ys[2 + d];
        q[CV_KSTEP] =
            (int32_t)(o->input_dilation[d] / gcd(o->kernel_dilation[d], o->input_dilation[d]));
        ksp *= pl->csz[1][2 + d];
    }
    p[CV_KSP] = (int32_t)ksp;
    p[CV_R] = (int32_t)(ksp * pl->csz[1][1]);
}

/* Products each output sums: kernel elements per output feature. */
static int64_t cv_reduction(const cv_plan *pl)
{
    int64_t r = pl->csz[1][1];
    for (int d = 0; d < pl->nsp; d++)
        r *= pl->csz[1][2 + d];
    return r;
}

/* Geometry past 32-bit shader arithmetic; shapes this large are refused by the
 * storage-range gate first on every device we know, but the gate stays honest. */
static const char *conv_gate(const cv_plan *pl)
{
    const vkt_conv_opts *o = &pl->opts;
    for (int d = 0; d < pl->nsp; d++) {
        int64_t reach = (pl->csz[2][2 + d] + 1) * o->strides[d] + llabs(o->padding_lo[d]) +
                        pl->csz[1][2 + d] * o->kernel_dilation[d] + o->input_dilation[d];
        if (reach > INT32_MAX / 2 || llabs(o->padding_hi[d]) > INT32_MAX / 2)
            return "conv geometry (padding, strides, dilations) exceeds 32-bit shader indexing";
    }
    if (cv_reduction(pl) > INT32_MAX)
        return "conv reduction length exceeds 32-bit shader indexing";
    return NULL;
}

/* ---- the 2-d kernel ------------------------------------------------------------ */

/* Workgroups conv2d_tile aims for: a few per multiprocessor of a large GPU;
 * a CPU device runs a few long ones. */
#define C2T_TARGET 256
#define C2T_TARGET_CPU 8
/* Output features one invocation computes at most (registers). */
#define C2T_MAX_OB 16
/* Kernels up to this many taps unroll (specialization constants). */
#define C2T_UNROLL_TAPS 49
/* Loop iterations one invocation may run, grid-stride passes included, well
 * inside lavapipe's 65,535; and the most parts conv2d_sum adds per output. */
#define C2T_LOOP_BUDGET 30000
#define C2T_MAX_PARTS 4096

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* Whether conv2d_tile may compute this conv: 2-d, f32, no groups or
 * dilations, non-empty input, kernel and features, geometry well inside 32
 * bits; c2t_plan decides whether it fits. */
static bool c2_fits(const cv_plan *pl)
{
    const vkt_conv_opts *o = &pl->opts;
    if (pl->nsp != 2 || pl->dtype != VKT_F32 || o->feature_group_size != 1 ||
        o->batch_group_size != 1 || pl->csz[1][1] <= 0)
        return false;
    for (int d = 0; d < 2; d++)
        if (o->input_dilation[d] != 1 || o->kernel_dilation[d] != 1 || pl->csz[0][2 + d] <= 0 ||
            pl->csz[1][2 + d] <= 0 || pl->csz[1][2 + d] > 4096)
            return false;
    uint64_t cnt = 1;
    for (int i = 0; i < 4; i++)
        cnt *= (uint64_t)pl->csz[2][i];
    return cnt < INT32_MAX / 2;
}

/* The canonical geometry: batch, features, sizes, strides, padding, and each
 * operand's element strides in canonical axis order. */
static void c2_geometry(const cv_plan *pl, const vkt_tensor *x, const vkt_tensor *k,
                        const vkt_tensor *y, c2t_push *t)
{
    int64_t xs[VKT_MAX_RANK], ks[VKT_MAX_RANK], ys[VKT_MAX_RANK];
    canon_strides(x, pl->perm[0], xs);
    canon_strides(k, pl->perm[1], ks);
    canon_strides(y, pl->perm[2], ys);
    memset(t, 0, sizeof *t);
    *t = (c2t_push){.n = (uint32_t)pl->csz[2][0],
                    .o = (uint32_t)pl->csz[2][1],
                    .c = (uint32_t)pl->csz[1][1],
                    .oh = (uint32_t)pl->csz[2][2],
                    .ow = (uint32_t)pl->csz[2][3],
                    .ih = (uint32_t)pl->csz[0][2],
                    .iw = (uint32_t)pl->csz[0][3],
                    .kh = (uint32_t)pl->csz[1][2],
                    .kw = (uint32_t)pl->csz[1][3],
                    .sh = (int32_t)pl->opts.strides[0],
                    .sw = (int32_t)pl->opts.strides[1],
                    .ph = (int32_t)pl->opts.padding_lo[0],
                    .pw = (int32_t)pl->opts.padding_lo[1]};
    for (int i = 0; i < 4; i++) {
        t->xs[i] = (int32_t)xs[i];
        t->ks[i] = (int32_t)ks[i];
        t->ys[i] = (int32_t)ys[i];
    }
}

/* How conv2d_tile splits the work, or false when it should not take it (one
 * input feature's tile or kernel slice past its shared memory, or a loop past
 * the budget): the output tile, features per invocation (*ob) and per
 * workgroup, parts of the reduction, features staged per round. */
static bool c2t_plan(const vkt_ctx *ctx, c2t_push *t, uint32_t *ob_out, uint32_t *pt_out,
                     uint64_t *wgs_out)
{
    bool cpu = ctx->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    uint64_t target = cpu ? C2T_TARGET_CPU : C2T_TARGET;
    uint64_t N = t->n, O = t->o, C = t->c, KH = t->kh, KW = t->kw, OH = t->oh, OW = t->ow;
    /* Tiles of at most 256 positions, as even as the output allows. */
    uint64_t tw = OW <= 32 ? OW : ceil_div(OW, ceil_div(OW, 32));
    uint64_t thmax = 256 / tw, th = OH <= thmax ? OH : ceil_div(OH, ceil_div(OH, thmax));
    /* Columns per invocation where the taps unroll and the columns are
     * contiguous in the input. */
    uint64_t pt = 1;
    if (KH * KW <= C2T_UNROLL_TAPS && t->sw == 1)
        pt = tw % 4 == 0 ? 4 : tw % 2 == 0 ? 2 : 1;
    uint64_t tiles = ceil_div(OH, th) * ceil_div(OW, tw), gmax = 256 / (th * tw / pt);
    uint64_t ob = ceil_div(O, gmax);
    ob = ob > C2T_MAX_OB ? C2T_MAX_OB : ob;
    uint64_t g = ceil_div(O, ob);
    g = g > gmax ? gmax : g;
    /* Fewer features per invocation for more workgroups, then parts. */
    while (ob > 1 && N * tiles * ceil_div(O, g * ob) < target)
        ob = ceil_div(ob, 2);
    uint64_t feats = g * ob, wgs = N * tiles * ceil_div(O, feats), cper = C, uper = KH;
    if (wgs < target && C * KH * KW * ob >= 256) {
        uint64_t pc = ceil_div(target, wgs);
        cper = ceil_div(C, pc < C ? pc : C);
        uint64_t w2 = wgs * ceil_div(C, cper);
        if (w2 < target && KH > 1) {
            uint64_t pu = ceil_div(target, w2);
            uper = ceil_div(KH, pu < KH ? pu : KH);
        }
    }
    uint64_t tih, tiw;
    for (;;) {
        tih = (th - 1) * (uint64_t)t->sh + uper;
        tiw = (tw - 1) * (uint64_t)t->sw + KW;
        if (tih * tiw <= C2T_XS && feats * uper * KW <= C2T_KS)
            break;
        if (uper == 1)
            return false;
        uper = ceil_div(uper, 2);
    }
    uint64_t cb = C2T_XS / (tih * tiw), cbk = C2T_KS / (feats * uper * KW);
    cb = cb < cbk ? cb : cbk;
    cb = cb < cper ? cb : cper;
    uint64_t rounds = ceil_div(cper, cb);
    cb = ceil_div(cper, rounds);
    uint64_t parts = ceil_div(C, cper) * ceil_div(KH, uper), cnt = N * O * OH * OW;
    wgs = N * tiles * ceil_div(O, feats) * parts;
    /* lavapipe's loop budget: grid-stride passes, staging rounds, and each
     * round's staging and taps */
    uint64_t passes = ceil_div(wgs, 65535);
    uint64_t iters = passes * rounds *
                     (ceil_div(cb * tih * tiw, 256) + ceil_div(feats * cb * uper * KW, 256) +
                      cb * uper * (KW + pt) * ob * pt + 2);
    if (iters > C2T_LOOP_BUDGET || parts > C2T_MAX_PARTS || cnt * parts >= INT32_MAX ||
        wgs >= INT32_MAX)
        return false;
    t->th = (uint32_t)th;
    t->tw = (uint32_t)tw;
    t->g = (uint32_t)g;
    t->cb = (uint32_t)cb;
    t->cper = (uint32_t)cper;
    t->uper = (uint32_t)uper;
    t->parts_u = (uint32_t)ceil_div(KH, uper);
    *ob_out = (uint32_t)ob;
    *pt_out = (uint32_t)pt;
    *wgs_out = wgs;
    return true;
}

/* The device buffer for `parts` partial sums of cnt outputs each, which a sum
 * kernel then adds into the output; none (*part NULL) for one part, which the
 * kernel writes into the output itself. The caller frees *part, also on error. */
static int c2_part_buffer(vkt_ctx *ctx, uint64_t cnt, uint32_t parts, vkt_tensor **part)
{
    *part = NULL;
    if (parts <= 1)
        return VKT_OK;
    int s = tn_new(ctx, VKT_F32, (const int64_t[]){(int64_t)(cnt * parts)}, 1, part);
    return s == VKT_OK ? tn_alloc_device(*part) : s;
}

/* conv2d_tile as planned, then conv2d_sum when the reduction came in parts. */
static int c2_run(vkt_ctx *ctx, const c2t_push *t, uint32_t ob, uint32_t pt, uint64_t wgs,
                  const vkt_tensor *x, const vkt_tensor *k, vkt_tensor *y)
{
    uint32_t parts = (uint32_t)(ceil_div(t->c, t->cper) * t->parts_u);
    uint64_t cnt = (uint64_t)t->n * t->o * t->oh * t->ow;
    bool unroll = t->kh * t->kw <= C2T_UNROLL_TAPS;
    vkt_tensor *part = NULL;
    int s = c2_part_buffer(ctx, cnt, parts, &part);
    /* the dispatch that writes y stores each element once: a graph may fuse
     * an elementwise program into that store */
    rt_epi tile_epi = {SPV_conv2d_tile_f32_epi, 2, (uint32_t)cnt},
           sum_epi = {SPV_conv2d_sum_f32_epi, 1, (uint32_t)cnt};
    if (s == VKT_OK) {
        pl_dispatch d = {
            .shader = SPV_conv2d_tile_f32,
            .spec = {ob, unroll && t->parts_u == 1 ? t->kh : 0, unroll ? t->kw : 0, pt},
            .nspec = 4,
            .nbufs = 3,
            .bufs = {x->st, k->st, part ? part->st : y->st},
            .writes = {false, false, true},
            .push = t,
            .push_size = sizeof *t,
            .groups = {(uint32_t)(wgs > 65535 ? 65535 : wgs), 1, 1},
            .epi = part ? NULL : &tile_epi};
        s = pl_run(ctx, &d);
    }
    if (s == VKT_OK && part) {
        c2s_push sp = {.cnt = (uint32_t)cnt, .parts = parts, .o = t->o, .oh = t->oh, .ow = t->ow};
        memcpy(sp.ys, t->ys, sizeof sp.ys);
        pl_dispatch d = {.shader = SPV_conv2d_sum_f32,
                         .nbufs = 2,
                         .bufs = {part->st, y->st},
                         .writes = {false, true},
                         .push = &sp,
                         .push_size = sizeof sp,
                         .epi = &sum_epi};
        pl_grid(cnt, 256, d.groups);
        s = pl_run(ctx, &d);
    }
    vkt_tensor_free(part);
    return s;
}

/* ---- the kernel-gradient kernel ------------------------------------------------ */

/* Workgroups (chunks of the reduction) conv2d_kgrad aims for: about two per
 * multiprocessor of a large GPU (an H200 has 132), which at LeNet's kernel
 * gradients at batch 256 is one image per chunk. Every device plans alike: a
 * CPU device runs conv2d_kgrad only when VKT_CONV_KERNEL asks for it, and
 * then checks the chunking a GPU gets. */
#define KG_TARGET 256
/* The automatic choice takes conv2d_kgrad on a GPU wherever it fits (at most
 * LOCAL x KG_MAX_ACC = 8,192 outputs) and each output sums at least this many
 * products: at KG_TARGET chunks each partial sum still stands for several. */
#define KG_MIN_R 1024

_Static_assert(KG_SM >= 256 * KG_MAX_ACC, "conv2d_kgrad's lanes' sums must fit its shared array");

typedef struct kg_push {
    KG_PUSH_FIELDS
} kg_push;

/* conv2d_kgrad's dispatch: its push block, register tile (features by
 * columns: specialization constants) and chunks. */
typedef struct kg_launch {
    kg_push push;
    uint32_t ob, qb, parts;
} kg_launch;

/* Shared-memory floats of one unit of cb input features by rb kernel rows. */
static uint64_t kg_unit(const c2t_push *t, uint64_t xw, uint64_t cb, uint64_t rb)
{
    return cb * (t->n * (rb + t->oh - 1) * xw + t->o * ((rb * t->kw) | 1));
}

/* The length of a kernel row's segments: the fewest steps for the busiest of `lanes` lanes over
 * `rows` rows of kw, each segment's window start counted as qb - 1 steps. */
static uint64_t kg_segment(uint64_t rows, uint64_t kw, uint64_t lanes, uint64_t qb)
{
    uint64_t js = kw, best = UINT64_MAX;
    for (uint64_t s = 1; s <= kw; s++) {
        uint64_t w = ceil_div(kw, s), cost = ceil_div(rows * ceil_div(kw, w), lanes) * (w + qb - 1);
        if (cost < best) {
            best = cost;
            js = w;
        }
    }
    return js;
}

/* conv2d_kgrad's push constants: the conv's, and the split that kg_plan chose. */
static void kg_fill_push(const c2t_push *t, uint64_t cb, uint64_t rb, uint64_t upc, uint64_t js,
                         uint64_t lanes, kg_push *p)
{
    *p = (kg_push){.n = t->n,
                   .o = t->o,
                   .c = t->c,
                   .oh = t->oh,
                   .ow = t->ow,
                   .ih = t->ih,
                   .iw = t->iw,
                   .kh = t->kh,
                   .kw = t->kw,
                   .ph = t->ph,
                   .pw = t->pw,
                   .cb = (uint32_t)cb,
                   .rb = (uint32_t)rb,
                   .upc = (uint32_t)upc,
                   .js = (uint32_t)js,
                   .lanes = (uint32_t)lanes};
    memcpy(p->xs, t->xs, sizeof t->xs);
    memcpy(p->ks, t->ks, sizeof t->ks);
    memcpy(p->ys, t->ys, sizeof t->ys);
}

/* How conv2d_kgrad splits the work, or false when it cannot take it: strides
 * other than 1, outputs past one workgroup's register tiles, a unit of one
 * kernel row past shared memory, or a loop past the budget. */
static bool kg_plan(const c2t_push *t, kg_launch *l)
{
    if (t->sh != 1 || t->sw != 1)
        return false;
    uint64_t N = t->n, O = t->o, C = t->c, OH = t->oh, OW = t->ow, KH = t->kh, KW = t->kw;
    /* Columns per invocation: the output row in as few even blocks as the
     * window's registers allow. */
    uint64_t nqb = ceil_div(OW, KG_MAX_QB), qb = ceil_div(OW, nqb);
    /* Features per invocation: the most invocations busy (tiles times whole
     * lanes), and of those the largest tile (the most products per load). */
    uint64_t ob = 0, busy = 0;
    for (uint64_t f = 1; f <= O && f * qb <= KG_MAX_ACC; f++) {
        uint64_t nob = ceil_div(O, f), tiles = N * OH * nob * nqb;
        if (tiles <= 256 && tiles * (256 / tiles) >= busy) {
            busy = tiles * (256 / tiles);
            ob = ceil_div(O, nob);
        }
    }
    if (ob == 0)
        return false;
    uint64_t tiles = N * OH * ceil_div(O, ob) * nqb, lanes = 256 / tiles, xw = KW + nqb * qb - 1;
    /* Whole kernel rows per unit, unless there are too few input features for
     * KG_TARGET units or one feature's bands overflow shared memory. */
    uint64_t nb = C >= KG_TARGET ? 1 : ceil_div(KG_TARGET, C);
    uint64_t rb = ceil_div(KH, nb < KH ? nb : KH);
    while (kg_unit(t, xw, 1, rb) > KG_SM) {
        if (rb == 1)
            return false;
        rb = ceil_div(rb, 2);
    }
    nb = ceil_div(KH, rb);
    rb = ceil_div(KH, nb);
    /* Several features per unit where whole ones fit and there are more than
     * KG_TARGET of them: fewer barriers per product. */
    uint64_t cb = 1;
    if (nb == 1 && C > KG_TARGET) {
        uint64_t fit = KG_SM / kg_unit(t, xw, 1, rb);
        cb = fit < C / KG_TARGET ? fit : C / KG_TARGET;
    }
    uint64_t units = ceil_div(C, cb) * nb, upc = ceil_div(units, KG_TARGET);
    /* Segments of a kernel row: the fewest steps for the busiest lane, each
     * segment's window start counted as QB - 1 steps. */
    uint64_t rows = cb * rb, js = kg_segment(rows, KW, lanes, qb);
    /* lavapipe's loop budget: per unit the staging and the lane's segments,
     * then the lanes' sums; more chunks while a chunk's units overrun it */
    uint64_t cnt = N * O * OH * OW;
    uint64_t per_unit = ceil_div(cb * N * (rb + OH - 1) * xw, 256 * KG_STAGE) +
                        ceil_div(cb * O * rb * KW, 256 * KG_STAGE) +
                        ceil_div(rows * ceil_div(KW, js), lanes) * (js + 1) + 1;
    uint64_t tail = ceil_div(cnt, 256) * (lanes + 1) + 1;
    while (upc > 1 && upc * per_unit + tail > C2T_LOOP_BUDGET)
        upc = ceil_div(upc, 2);
    uint64_t parts = ceil_div(units, upc);
    if (upc * per_unit + tail > C2T_LOOP_BUDGET || parts > C2T_MAX_PARTS ||
        cnt * parts >= INT32_MAX)
        return false;
    kg_fill_push(t, cb, rb, upc, js, lanes, &l->push);
    l->ob = (uint32_t)ob;
    l->qb = (uint32_t)qb;
    l->parts = (uint32_t)parts;
    return true;
}

/* conv2d_kgrad as planned, then conv2d_kgrad_sum when there are several chunks. */
static int kg_run(vkt_ctx *ctx, const kg_launch *l, const vkt_tensor *x, const vkt_tensor *k,
                  vkt_tensor *y)
{
    const kg_push *t = &l->push;
    uint64_t cnt = (uint64_t)t->n * t->o * t->oh * t->ow;
    vkt_tensor *part = NULL;
    int s = c2_part_buffer(ctx, cnt, l->parts, &part);
    rt_epi kg_epi = {SPV_conv2d_kgrad_f32_epi, 2, (uint32_t)cnt},
           sum_epi = {SPV_conv2d_kgrad_sum_f32_epi, 1, (uint32_t)cnt};
    if (s == VKT_OK) {
        pl_dispatch d = {.shader = SPV_conv2d_kgrad_f32,
                         .spec = {l->ob, l->qb},
                         .nspec = 2,
                         .nbufs = 3,
                         .bufs = {x->st, k->st, part ? part->st : y->st},
                         .writes = {false, false, true},
                         .push = t,
                         .push_size = sizeof *t,
                         .groups = {l->parts, 1, 1},
                         .epi = part ? NULL : &kg_epi};
        s = pl_run(ctx, &d);
    }
    if (s == VKT_OK && part) {
        c2s_push sp = {
            .cnt = (uint32_t)cnt, .parts = l->parts, .o = t->o, .oh = t->oh, .ow = t->ow};
        memcpy(sp.ys, t->ys, sizeof sp.ys);
        uint64_t groups = ceil_div(cnt, KG_SUM_W);
        pl_dispatch d = {.shader = SPV_conv2d_kgrad_sum_f32,
                         .nbufs = 2,
                         .bufs = {part->st, y->st},
                         .writes = {false, true},
                         .push = &sp,
                         .push_size = sizeof sp,
                         .groups = {(uint32_t)(groups > 65535 ? 65535 : groups), 1, 1},
                         .epi = &sum_epi};
        s = pl_run(ctx, &d);
    }
    vkt_tensor_free(part);
    return s;
}

/* ---- choosing a kernel ------------------------------------------------------------ */

/* conv's kernels by kernels.h's names (VKT_CONV_KERNEL, checked by the
 * context): auto (the choice below), tile (conv2d_tile), kgrad (conv2d_kgrad),
 * direct, split. */

/* The general kernels: one invocation per output (direct) or one workgroup
 * per output (split), any dtype, layout, groups and dilations. */
static int cv_general(vkt_ctx *ctx, const cv_plan *pl, bool split, const vkt_tensor *x,
                      const vkt_tensor *k, vkt_tensor *y)
{
    int32_t params[CV_NPARAM];
    fill_params(pl, x, k, y, params);
    vkt_tensor *pt = NULL;
    int s = tn_new(ctx, VKT_S32, (const int64_t[]){CV_NPARAM}, 1, &pt);
    if (s == VKT_OK)
        s = tn_alloc_device(pt);
    if (s == VKT_OK)
        s = tn_upload(pt, params, sizeof params);
    if (s == VKT_OK) {
        int fdt = pl->dtype == VKT_F64;
        pl_dispatch d = {.shader = split ? split_shaders[fdt] : direct_shaders[fdt],
                         .nbufs = 4,
                         .bufs = {x->st, k->st, pt->st, y->st},
                         .writes = {false, false, false, true}};
        pl_grid(split ? (uint64_t)y->numel * 256 : y->numel, 256, d.groups);
        s = pl_run(ctx, &d);
    }
    vkt_tensor_free(pt);
    return s;
}

/* The kernel is VKT_CONV_KERNEL's where that one applies, else chosen here:
 * conv2d_kgrad on a GPU for few outputs over a long reduction, else
 * conv2d_tile where it fits, else split for few outputs with long reductions
 * (and on a CPU device for any reduction the direct kernel's one invocation
 * could not finish), else direct. */
static int conv_native(exec_call *c)
{
    const cv_plan *pl = c->params;
    vkt_tensor *y = c->out;
    if (y->numel == 0)
        return VKT_OK;
    vkt_ctx *ctx = y->ctx;
    const vkt_tensor *x = c->in[0], *k = c->in[1];
    vkt_tensor *owned[2] = {0};
    int s = op_device_convert(x, pl->dtype, &x, &owned[0]);
    if (s == VKT_OK)
        s = op_device_convert(k, pl->dtype, &k, &owned[1]);
    if (s == VKT_OK) {
        bool cpu = ctx->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
        int64_t r = cv_reduction(pl);
        c2t_push tp = {0};
        kg_launch kl = {0};
        uint32_t ob = 0, pt = 0;
        uint64_t wgs = 0;
        bool fits = c2_fits(pl);
        if (fits)
            c2_geometry(pl, x, k, y, &tp);
        bool kgrad = fits && kg_plan(&tp, &kl), tile = fits && c2t_plan(ctx, &tp, &ob, &pt, &wgs);
        bool direct = !cpu || r < CV_CPU_LOOP_R;
        int kn = ctx->conv_kernel;
        if ((kn == CK_kgrad && !kgrad) || (kn == CK_tile && !tile) || (kn == CK_direct && !direct))
            kn = CK_auto;
        if (kn == CK_auto) {
            bool split = (y->numel <= (cpu ? CV_SPLIT_MAX_OUT_CPU : CV_SPLIT_MAX_OUT) &&
                          r >= CV_SPLIT_MIN_R) ||
                         !direct;
            kn = kgrad && !cpu && r >= KG_MIN_R ? CK_kgrad
                 : tile                         ? CK_tile
                 : split                        ? CK_split
                                                : CK_direct;
        }
        if (kn == CK_kgrad)
            s = kg_run(ctx, &kl, x, k, y);
        else if (kn == CK_tile)
            s = c2_run(ctx, &tp, ob, pt, wgs, x, k, y);
        else
            s = cv_general(ctx, pl, kn == CK_split, x, k, y);
    }
    for (int i = 0; i < 2; i++)
        vkt_tensor_free(owned[i]);
    return s;
}

/* ---- host -------------------------------------------------------------------- */

static int conv_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const cv_plan *pl = c->params;
    ref_view v[2];
    void *owned[2];
    int s = op_host_convert_n(in, 2, pl->dtype, v, owned);
    if (s == VKT_OK)
        s = ref_conv(&v[0], &v[1], &pl->opts, out);
    free(owned[0]);
    free(owned[1]);
    return s;
}

static const op_info conv_ops[] = {OP_ENTRY(conv, NULL, 0)};

int vkt_conv(const vkt_tensor *input, const vkt_tensor *kernel, const vkt_conv_opts *opts,
             vkt_tensor **out)
{
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_conv: out is NULL");
    *out = NULL;
    TRY(tn_check_tensor(input, "conv", "input"));
    TRY(tn_check_tensor(kernel, "conv", "kernel"));
    if (input->ctx != kernel->ctx)
        return err_set(VKT_ECTX, "vkt_conv: input and kernel belong to different contexts");
    cv_plan pl;
    int64_t shape[VKT_MAX_RANK];
    TRY(make_plan(input, kernel, opts, &pl, shape));
    /* The reference reads opts with the permutation flags as given; the plan
     * filled identity permutations, which mean the same. */
    exec_call c = {.info = &conv_ops[0],
                   .in = {input, kernel},
                   .nin = 2,
                   .native = conv_native,
                   .host = conv_host,
                   .params = &pl};
    c.gate = conv_gate(&pl);
    TRY(tn_new(input->ctx, pl.dtype, shape, input->rank, &c.out));
    return exec_run(&c, out);
}

const op_table op_table_conv = {conv_ops, sizeof conv_ops / sizeof conv_ops[0]};

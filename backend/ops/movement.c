/* movement.c — the movement family: reshape, transpose, broadcast, slice, pad,
 * reverse, concatenate, gather, and assign (a copy into an existing tensor).
 *
 * Parts: shaders/movement/ (move.comp for every strided copy,
 * transpose_tiled.comp, pad.comp, gather.comp; divide.glsl); host reference
 * backend/ref/movement.c; tests tests/vkt/test_movement.c and
 * tests/ref/test_movement.c.
 *
 * Movement never looks at values, so every op is native for every dtype: the
 * kernels copy elements of 1, 4 or 8 bytes. Transpose, broadcast, slice,
 * reverse and each slab of concatenate are one strided copy (mv_copy): an
 * iteration shape with signed source and destination strides. pad and gather
 * have their own index maps; reshape is a view of its input's storage. f64
 * elements move as 64-bit words, so no op here needs shaderFloat64 unless
 * concatenate converts a narrower input to f64. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spirv_table.h"
#include "opsupport.h"

enum {
    MV_RESHAPE,
    MV_TRANSPOSE,
    MV_BROADCAST,
    MV_SLICE,
    MV_PAD,
    MV_REVERSE,
    MV_CONCATENATE,
    MV_GATHER,
    MV_ASSIGN,
    MV__COUNT
};

/* Every dtype is native: the kernels move bytes and never interpret them. */
static const op_info mv_ops[MV__COUNT] = {
    [MV_RESHAPE] = OP_ENTRY(reshape, NULL, MV_RESHAPE),
    [MV_TRANSPOSE] = OP_ENTRY(transpose, NULL, MV_TRANSPOSE),
    [MV_BROADCAST] = OP_ENTRY(broadcast, NULL, MV_BROADCAST),
    [MV_SLICE] = OP_ENTRY(slice, NULL, MV_SLICE),
    [MV_PAD] = OP_ENTRY(pad, NULL, MV_PAD),
    [MV_REVERSE] = OP_ENTRY(reverse, NULL, MV_REVERSE),
    [MV_CONCATENATE] = OP_ENTRY(concatenate, NULL, MV_CONCATENATE),
    [MV_GATHER] = OP_ENTRY(gather, NULL, MV_GATHER),
    [MV_ASSIGN] = OP_ENTRY(assign, NULL, MV_ASSIGN),
};
const op_table op_table_movement = {mv_ops, MV__COUNT};

/* Shader variant for dtype's element size; order of the arrays: 1, 4, 8 bytes. */
static int mv_shader(vkt_dtype dt, const int by_size[3])
{
    size_t es = vkt_dtype_size(dt);
    return by_size[es == 1 ? 0 : es == 4 ? 1 : 2];
}

static const int move_shaders[3] = {SPV_move_1, SPV_move_4, SPV_move_8};
static const int tiled_shaders[3] = {SPV_transpose_tiled_1, SPV_transpose_tiled_4,
                                     SPV_transpose_tiled_8};
static const int pad_shaders[3] = {SPV_pad_1, SPV_pad_4, SPV_pad_8};
static const int pad_interior_shaders[3] = {SPV_pad_interior_1, SPV_pad_interior_4,
                                            SPV_pad_interior_8};
static const int gather_shaders[3] = {SPV_gather_1, SPV_gather_4, SPV_gather_8};

/* (magic, shift) with n / d == (umulhi(n, magic) + n) >> shift for n < 2^31
 * (round-up reciprocal, as libdivide and PyTorch's IntDivider do); see
 * shaders/movement/divide.glsl for why the kernels avoid integer division. */
static void mv_divider(uint32_t d, uint32_t *magic, uint32_t *shift)
{
    uint32_t s = 0;
    while (s < 31 && ((uint64_t)1 << s) < d)
        s++;
    *magic = (uint32_t)(((((uint64_t)1 << 32) * (((uint64_t)1 << s) - d)) / d) + 1);
    *shift = s;
}

/* Fills magic[] and the packed shifts for the divisors dims[0..n). */
static uint32_t mv_dividers(const uint32_t *dims, int n, uint32_t *magic)
{
    uint32_t packed = 0;
    for (int d = 0; d < n; d++) {
        uint32_t sh;
        mv_divider(dims[d] ? dims[d] : 1, &magic[d], &sh);
        packed |= sh << (5 * d);
    }
    return packed;
}

static void contig_strides(const int64_t *shape, int rank, int64_t *st)
{
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= shape[d];
    }
}

static int mv_begin(const op_info *info, vkt_tensor **out)
{
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_%s: out is NULL", info->name);
    *out = NULL;
    return VKT_OK;
}

/* ---- the strided copy ------------------------------------------------------ */

/* dst[obase + sum c*ost] = src[ibase + sum c*ist] for every coordinate c of shape. */
typedef struct mv_plan {
    int rank;
    int64_t shape[VKT_MAX_RANK];
    int64_t ist[VKT_MAX_RANK];
    int64_t ost[VKT_MAX_RANK];
    int64_t ibase, obase;
} mv_plan;

typedef struct mv_push {
    MV_PUSH_FIELDS
} mv_push;

typedef struct tiled_push {
    TILED_PUSH_FIELDS
} tiled_push;
_Static_assert(sizeof(mv_push) <= PL_PUSH_SIZE, "mv_push exceeds the push-constant budget");

/* Drops size-1 dims and merges neighbours that are contiguous on both sides,
 * so the kernel divides once per remaining dim (a plain copy becomes rank 1). */
static void plan_collapse(mv_plan *p)
{
    mv_plan q = *p;
    int r = 0;
    for (int d = 0; d < p->rank; d++) {
        if (p->shape[d] == 1)
            continue;
        if (r > 0 && q.ist[r - 1] == p->ist[d] * p->shape[d] &&
            q.ost[r - 1] == p->ost[d] * p->shape[d]) {
            q.shape[r - 1] *= p->shape[d];
            q.ist[r - 1] = p->ist[d];
            q.ost[r - 1] = p->ost[d];
            continue;
        }
        q.shape[r] = p->shape[d];
        q.ist[r] = p->ist[d];
        q.ost[r] = p->ost[d];
        r++;
    }
    q.rank = r;
    *p = q;
}

/* A collapsed plan that swaps the last two axes of [b, rows, cols] into a
 * contiguous [b, cols, rows]: the case the shared-memory tile serves. */
static bool plan_is_swap(const mv_plan *p, uint32_t *b, uint32_t *rows, uint32_t *cols)
{
    int r = p->rank;
    if ((r != 2 && r != 3) || p->ibase || p->obase)
        return false;
    int64_t c = p->shape[r - 2], rw = p->shape[r - 1];
    if (p->ost[r - 1] != 1 || p->ost[r - 2] != rw || p->ist[r - 2] != 1 || p->ist[r - 1] != c)
        return false;
    if (r == 3 && (p->ist[0] != rw * c || p->ost[0] != rw * c))
        return false;
    *b = r == 3 ? (uint32_t)p->shape[0] : 1;
    *rows = (uint32_t)rw;
    *cols = (uint32_t)c;
    return true;
}

/* ew: what a graph may fuse about this copy (assign's), or NULL. */
static int mv_copy(vkt_ctx *ctx, vkt_dtype dt, tn_storage *src, tn_storage *dst, mv_plan p,
                   const rt_ew *ew)
{
    uint64_t n = 1;
    for (int d = 0; d < p.rank; d++)
        n *= (uint64_t)p.shape[d];
    if (n == 0)
        return VKT_OK;
    plan_collapse(&p);
    uint32_t b, rows, cols;
    if (plan_is_swap(&p, &b, &rows, &cols)) {
        tiled_push tp = {b, rows, cols, (rows + 31) / 32, (cols + 31) / 32};
        uint64_t tiles = (uint64_t)b * tp.tiles_r * tp.tiles_c;
        rt_form form = {RT_FORM_SWAP, 0, 0, -1}; /* a graph may fold it into the product it reads */
        pl_dispatch d = {.shader = mv_shader(dt, tiled_shaders),
                         .nbufs = 2,
                         .push = &tp,
                         .push_size = sizeof tp,
                         .form = &form};
        d.bufs[0] = src;
        d.bufs[1] = dst;
        d.writes[1] = true;
        d.groups[0] = (uint32_t)(tiles > 65535 ? 65535 : tiles);
        d.groups[1] = d.groups[2] = 1;
        return pl_run(ctx, &d);
    }
    mv_push pc;
    memset(&pc, 0, sizeof pc);
    pc.n = (uint32_t)n;
    pc.rank = (uint32_t)p.rank;
    pc.ibase = (int32_t)p.ibase;
    pc.obase = (int32_t)p.obase;
    for (int d = 0; d < p.rank; d++) {
        pc.shape[d] = (uint32_t)p.shape[d];
        pc.ist[d] = (int32_t)p.ist[d];
        pc.ost[d] = (int32_t)p.ost[d];
    }
    pc.shifts = mv_dividers(pc.shape, p.rank, pc.magic);
    tn_storage *bufs[2] = {src, dst};
    return op_dispatch_ew(ctx, mv_shader(dt, move_shaders), 0, &pc, sizeof pc, bufs, 2, n, ew);
}

/* A plan writing every element of out contiguously. */
static mv_plan plan_for_out(const vkt_tensor *out)
{
    mv_plan p;
    memset(&p, 0, sizeof p);
    p.rank = out->rank;
    memcpy(p.shape, out->shape, sizeof(int64_t) * (size_t)out->rank);
    contig_strides(out->shape, out->rank, p.ost);
    return p;
}

/* ---- reshape ---------------------------------------------------------------- */

VKT_API int vkt_reshape(const vkt_tensor *x, const int64_t *shape, int rank, vkt_tensor **out)
{
    const op_info *info = &mv_ops[MV_RESHAPE];
    TRY(mv_begin(info, out));
    TRY(tn_check_tensor(x, info->name, "x"));
    TRY(tn_check_shape(shape, rank, "vkt_reshape"));
    uint64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= (uint64_t)shape[d];
    if (n != x->numel)
        return err_set(VKT_ESHAPE, "vkt_reshape: the new shape has %llu elements, x has %zu",
                       (unsigned long long)n, x->numel);
    /* A view: exec shares x's storage, so no allocation, no gate, no fallback. */
    exec_call c = {.info = info, .in = {x}, .nin = 1, .view = true};
    TRY(tn_new(x->ctx, x->dtype, shape, rank, &c.out));
    return exec_run(&c, out);
}

/* ---- transpose -------------------------------------------------------------- */

typedef struct perm_params {
    int perm[VKT_MAX_RANK];
} perm_params;

static int transpose_native(exec_call *c)
{
    const perm_params *p = c->params;
    const vkt_tensor *x = c->in[0];
    int64_t xs[VKT_MAX_RANK];
    contig_strides(x->shape, x->rank, xs);
    mv_plan plan = plan_for_out(c->out);
    for (int i = 0; i < x->rank; i++)
        plan.ist[i] = xs[p->perm[i]];
    return mv_copy(x->ctx, x->dtype, x->st, c->out->st, plan, NULL);
}

static int transpose_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const perm_params *p = c->params;
    return ref_transpose(&in[0], p->perm, out);
}

VKT_API int vkt_transpose(const vkt_tensor *x, const int *perm, vkt_tensor **out)
{
    const op_info *info = &mv_ops[MV_TRANSPOSE];
    TRY(mv_begin(info, out));
    TRY(tn_check_tensor(x, info->name, "x"));
    perm_params p;
    unsigned seen = 0;
    int64_t shape[VKT_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        int a = x->rank - 1 - i;
        if (perm) {
            if (perm[i] < -x->rank || perm[i] >= x->rank)
                return err_set(VKT_EAXIS,
                               "vkt_transpose: perm[%d] = %d is out of range for rank %d", i,
                               perm[i], x->rank);
            a = perm[i] < 0 ? perm[i] + x->rank : perm[i];
            if (seen & (1u << a))
                return err_set(VKT_EAXIS, "vkt_transpose: perm[%d] repeats axis %d", i, a);
            seen |= 1u << a;
        }
        p.perm[i] = a;
        shape[i] = x->shape[a];
    }
    exec_call c = {.info = info,
                   .in = {x},
                   .nin = 1,
                   .native = transpose_native,
                   .host = transpose_host,
                   .f64_as_bits = true,
                   .params = &p};
    TRY(tn_new(x->ctx, x->dtype, shape, x->rank, &c.out));
    return exec_run(&c, out);
}

/* ---- broadcast -------------------------------------------------------------- */

typedef struct axes_params {
    int axes[VKT_MAX_RANK];
} axes_params;

static int broadcast_native(exec_call *c)
{
    const axes_params *p = c->params;
    const vkt_tensor *x = c->in[0];
    int64_t xs[VKT_MAX_RANK];
    contig_strides(x->shape, x->rank, xs);
    mv_plan plan = plan_for_out(c->out);
    for (int i = 0; i < x->rank; i++)
        plan.ist[p->axes[i]] = x->shape[i] == 1 ? 0 : xs[i];
    return mv_copy(x->ctx, x->dtype, x->st, c->out->st, plan, NULL);
}

static int broadcast_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const axes_params *p = c->params;
    return ref_broadcast(&in[0], p->axes, out);
}

VKT_API int vkt_broadcast(const vkt_tensor *x, const int64_t *shape, int rank, const int *axes,
                          vkt_tensor **out)
{
    const op_info *info = &mv_ops[MV_BROADCAST];
    TRY(mv_begin(info, out));
    TRY(tn_check_tensor(x, info->name, "x"));
    TRY(tn_check_shape(shape, rank, "vkt_broadcast"));
    if (x->rank > rank)
        return err_set(VKT_ESHAPE, "vkt_broadcast: x has rank %d, more than the target's %d",
                       x->rank, rank);
    axes_params p;
    unsigned seen = 0;
    for (int i = 0; i < x->rank; i++) {
        int a = rank - x->rank + i;
        if (axes) {
            if (axes[i] < -rank || axes[i] >= rank)
                return err_set(VKT_EAXIS,
                               "vkt_broadcast: axes[%d] = %d is out of range for rank %d", i,
                               axes[i], rank);
            a = axes[i] < 0 ? axes[i] + rank : axes[i];
            if (seen & (1u << a))
                return err_set(VKT_EAXIS, "vkt_broadcast: axes[%d] repeats axis %d", i, a);
            seen |= 1u << a;
        }
        if (x->shape[i] != 1 && x->shape[i] != shape[a])
            return err_set(
                VKT_ESHAPE,
                "vkt_broadcast: x's axis %d has size %lld, which does not broadcast to %lld", i,
                (long long)x->shape[i], (long long)shape[a]);
        p.axes[i] = a;
    }
    exec_call c = {.info = info,
                   .in = {x},
                   .nin = 1,
                   .native = broadcast_native,
                   .host = broadcast_host,
                   .f64_as_bits = true,
                   .params = &p};
    TRY(tn_new(x->ctx, x->dtype, shape, rank, &c.out));
    return exec_run(&c, out);
}

/* ---- slice ------------------------------------------------------------------- */

typedef struct slice_params {
    int64_t start[VKT_MAX_RANK];
    int64_t strides[VKT_MAX_RANK];
} slice_params;

static int slice_native(exec_call *c)
{
    const slice_params *p = c->params;
    const vkt_tensor *x = c->in[0];
    int64_t xs[VKT_MAX_RANK];
    contig_strides(x->shape, x->rank, xs);
    mv_plan plan = plan_for_out(c->out);
    for (int i = 0; i < x->rank; i++) {
        plan.ist[i] = p->strides[i] * xs[i];
        plan.ibase += p->start[i] * xs[i];
    }
    return mv_copy(x->ctx, x->dtype, x->st, c->out->st, plan, NULL);
}

static int slice_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const slice_params *p = c->params;
    return ref_slice(&in[0], p->start, p->strides, out);
}

VKT_API int vkt_slice(const vkt_tensor *x, const int64_t *start, const int64_t *lengths,
                      const int64_t *strides, vkt_tensor **out)
{
    const op_info *info = &mv_ops[MV_SLICE];
    TRY(mv_begin(info, out));
    TRY(tn_check_tensor(x, info->name, "x"));
    if (x->rank > 0 && (!start || !lengths))
        return err_set(VKT_EINVAL, "vkt_slice: start or lengths is NULL for rank %d", x->rank);
    slice_params p;
    int64_t shape[VKT_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        int64_t dim = x->shape[i], len = lengths[i], st = strides ? strides[i] : 1;
        if (len < 0 || len > dim)
            return err_set(VKT_ESHAPE, "vkt_slice: lengths[%d] = %lld is outside 0..%lld", i,
                           (long long)len, (long long)dim);
        if (st <= 0)
            return err_set(VKT_EINVAL, "vkt_slice: strides[%d] = %lld is not positive", i,
                           (long long)st);
        /* Nx clamps the start so the window fits. */
        int64_t s = start[i] < 0 ? 0 : start[i];
        p.start[i] = s > dim - len ? dim - len : s;
        shape[i] = (len + st - 1) / st;
        /* A stride past the window picks one element; capping it keeps the
         * stride times the axis' extent within the tensor's size. */
        p.strides[i] = st > len ? (len > 0 ? len : 1) : st;
    }
    exec_call c = {.info = info,
                   .in = {x},
                   .nin = 1,
                   .native = slice_native,
                   .host = slice_host,
                   .f64_as_bits = true,
                   .params = &p};
    TRY(tn_new(x->ctx, x->dtype, shape, x->rank, &c.out));
    return exec_run(&c, out);
}

/* ---- pad -------------------------------------------------------------------- */

typedef struct pad_params {
    int64_t lo[VKT_MAX_RANK], hi[VKT_MAX_RANK], interior[VKT_MAX_RANK];
} pad_params;

typedef struct pad_push {
    PAD_PUSH_FIELDS
} pad_push;
_Static_assert(sizeof(pad_push) <= PL_PUSH_SIZE, "pad_push exceeds the push-constant budget");

/* The kernel works in 32-bit signed positions (out index - lo). */
#define PAD_LIMIT ((int64_t)1 << 30)

static int pad_native(exec_call *c)
{
    const pad_params *p = c->params;
    const vkt_tensor *x = c->in[0];
    pad_push pc;
    memset(&pc, 0, sizeof pc);
    pc.n = (uint32_t)c->out->numel;
    pc.rank = (uint32_t)x->rank;
    bool interior = false;
    for (int d = 0; d < x->rank; d++) {
        pc.shape[d] = (uint32_t)c->out->shape[d];
        pc.lo[d] = (int32_t)p->lo[d];
        pc.xdim[d] = (uint32_t)x->shape[d];
        pc.step_or_magic[d] = x->shape[d] > 1 ? (uint32_t)(p->interior[d] + 1) : 1;
        interior |= pc.step_or_magic[d] != 1;
    }
    if (!interior)
        pc.shifts = mv_dividers(pc.shape, x->rank, pc.step_or_magic);
    tn_storage *bufs[3] = {x->st, c->in[1]->st, c->out->st};
    return op_dispatch(x->ctx, mv_shader(x->dtype, interior ? pad_interior_shaders : pad_shaders),
                       0, &pc, sizeof pc, bufs, 3, c->out->numel);
}

static int pad_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const pad_params *p = c->params;
    return ref_pad(&in[0], in[1].data, p->lo, p->hi, p->interior, out);
}

VKT_API int vkt_pad(const vkt_tensor *x, const vkt_tensor *value, const int64_t *lo,
                    const int64_t *hi, const int64_t *interior, vkt_tensor **out)
{
    const op_info *info = &mv_ops[MV_PAD];
    TRY(mv_begin(info, out));
    TRY(tn_check_tensor(x, info->name, "x"));
    TRY(tn_check_tensor(value, info->name, "value"));
    if (value->rank != 0)
        return err_set(VKT_ESHAPE, "vkt_pad: value has rank %d; it must be a rank-0 tensor",
                       value->rank);
    if (value->dtype != x->dtype)
        return err_set(VKT_EDTYPE, "vkt_pad: value is %s but x is %s", vkt_dtype_name(value->dtype),
                       vkt_dtype_name(x->dtype));
    if (x->rank > 0 && (!lo || !hi || !interior))
        return err_set(VKT_EINVAL, "vkt_pad: lo, hi or interior is NULL for rank %d", x->rank);
    pad_params p;
    memset(&p, 0, sizeof p);
    int64_t shape[VKT_MAX_RANK];
    const char *gate = NULL;
    for (int i = 0; i < x->rank; i++) {
        if (interior[i] < 0)
            return err_set(VKT_EINVAL, "vkt_pad: interior[%d] = %lld is negative", i,
                           (long long)interior[i]);
        int64_t dim = x->shape[i];
        /* Bounded so the sum below cannot overflow; tn_new rejects huge results. */
        if (lo[i] < -((int64_t)1 << 50) || lo[i] > ((int64_t)1 << 50) ||
            hi[i] < -((int64_t)1 << 50) || hi[i] > ((int64_t)1 << 50) ||
            interior[i] > ((int64_t)1 << 50))
            return err_set(VKT_ESHAPE, "vkt_pad: padding of axis %d is beyond 2^50", i);
        int64_t n = lo[i] + hi[i] + dim + (dim > 0 ? (dim - 1) * interior[i] : 0);
        if (n < 0)
            return err_set(VKT_ESHAPE,
                           "vkt_pad: axis %d would have size %lld (lo %lld, hi %lld trim too much)",
                           i, (long long)n, (long long)lo[i], (long long)hi[i]);
        shape[i] = n;
        p.lo[i] = lo[i];
        p.hi[i] = hi[i];
        p.interior[i] = interior[i];
        if (lo[i] <= -PAD_LIMIT || lo[i] >= PAD_LIMIT || (dim > 1 && interior[i] >= PAD_LIMIT))
            gate = "padding beyond 2^30 exceeds the pad kernel's 32-bit positions";
    }
    exec_call c = {.info = info,
                   .in = {x, value},
                   .nin = 2,
                   .native = pad_native,
                   .host = pad_host,
                   .f64_as_bits = true,
                   .params = &p,
                   .gate = gate};
    TRY(tn_new(x->ctx, x->dtype, shape, x->rank, &c.out));
    return exec_run(&c, out);
}

/* ---- reverse ---------------------------------------------------------------- */

typedef struct reverse_params {
    unsigned mask;
} reverse_params;

static int reverse_native(exec_call *c)
{
    const reverse_params *p = c->params;
    const vkt_tensor *x = c->in[0];
    int64_t xs[VKT_MAX_RANK];
    contig_strides(x->shape, x->rank, xs);
    mv_plan plan = plan_for_out(c->out);
    for (int i = 0; i < x->rank; i++) {
        bool rev = (p->mask >> i) & 1u;
        plan.ist[i] = rev ? -xs[i] : xs[i];
        if (rev && x->shape[i] > 0)
            plan.ibase += (x->shape[i] - 1) * xs[i];
    }
    return mv_copy(x->ctx, x->dtype, x->st, c->out->st, plan, NULL);
}

static int reverse_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const reverse_params *p = c->params;
    return ref_reverse(&in[0], p->mask, out);
}

VKT_API int vkt_reverse(const vkt_tensor *x, const int *axes, int naxes, vkt_tensor **out)
{
    const op_info *info = &mv_ops[MV_REVERSE];
    TRY(mv_begin(info, out));
    TRY(tn_check_tensor(x, info->name, "x"));
    /* axes == NULL reverses every axis, as NULL axes reduce over all of them. */
    reverse_params p = {0};
    TRY(op_axes_mask(info->name, axes, naxes, x->rank, &p.mask));
    exec_call c = {.info = info,
                   .in = {x},
                   .nin = 1,
                   .native = reverse_native,
                   .host = reverse_host,
                   .f64_as_bits = true,
                   .params = &p};
    TRY(tn_new(x->ctx, x->dtype, x->shape, x->rank, &c.out));
    return exec_run(&c, out);
}

/* ---- concatenate ------------------------------------------------------------ */

typedef struct concat_params {
    int axis;
} concat_params;

/* One strided copy per input into its slab of out: a launch per input costs
 * less than staging inputs through a bounded multi-input kernel would. */
static int concat_native(exec_call *c)
{
    const concat_params *p = c->params;
    vkt_tensor *out = c->out;
    int64_t outer = 1, inner = 1, total = out->shape[p->axis], at = 0;
    for (int d = 0; d < p->axis; d++)
        outer *= out->shape[d];
    for (int d = p->axis + 1; d < out->rank; d++)
        inner *= out->shape[d];
    for (int j = 0; j < c->nin; j++) {
        const vkt_tensor *x = exec_in(c, j);
        int64_t len = x->shape[p->axis], run = len * inner;
        const vkt_tensor *src = NULL;
        vkt_tensor *tmp = NULL;
        TRY(op_device_convert(x, out->dtype, &src, &tmp));
        mv_plan plan = {.rank = 2,
                        .shape = {outer, run},
                        .ist = {run, 1},
                        .ost = {total * inner, 1},
                        .obase = at * inner};
        int s = mv_copy(out->ctx, out->dtype, src->st, out->st, plan, NULL);
        vkt_tensor_free(tmp);
        TRY(s);
        at += len;
    }
    return VKT_OK;
}

static int concat_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const concat_params *p = c->params;
    ref_view *views = calloc((size_t)c->nin, sizeof *views);
    const ref_view **ptrs = calloc((size_t)c->nin, sizeof *ptrs);
    void **owned = calloc((size_t)c->nin, sizeof *owned);
    int s = views && ptrs && owned ? VKT_OK
                                   : err_set(VKT_ENOMEM, "vkt_concatenate: out of host memory");
    for (int j = 0; j < c->nin && s == VKT_OK; j++) {
        s = op_host_convert(&in[j], out->dtype, &views[j], &owned[j]);
        ptrs[j] = &views[j];
    }
    if (s == VKT_OK)
        s = ref_concatenate(ptrs, c->nin, p->axis, out);
    for (int j = 0; owned && j < c->nin; j++)
        free(owned[j]);
    free(owned);
    free(ptrs);
    free(views);
    return s;
}

VKT_API int vkt_concatenate(const vkt_tensor *const *xs, int n, int axis, vkt_tensor **out)
{
    const op_info *info = &mv_ops[MV_CONCATENATE];
    TRY(mv_begin(info, out));
    if (!xs)
        return err_set(VKT_EINVAL, "vkt_concatenate: xs is NULL");
    if (n < 1)
        return err_set(VKT_EINVAL, "vkt_concatenate: n = %d; at least one tensor is needed", n);
    char arg[32];
    for (int j = 0; j < n; j++) {
        snprintf(arg, sizeof arg, "xs[%d]", j);
        TRY(tn_check_tensor(xs[j], info->name, arg));
    }
    const vkt_tensor *x0 = xs[0];
    concat_params p = {0};
    TRY(op_axis(info->name, axis, x0->rank, &p.axis));
    int64_t shape[VKT_MAX_RANK];
    memcpy(shape, x0->shape, sizeof shape);
    vkt_dtype dt = x0->dtype;
    for (int j = 1; j < n; j++) {
        const vkt_tensor *x = xs[j];
        if (x->ctx != x0->ctx)
            return err_set(VKT_ECTX, "vkt_concatenate: xs[%d] belongs to another context", j);
        if (x->rank != x0->rank)
            return err_set(VKT_ESHAPE, "vkt_concatenate: xs[%d] has rank %d, xs[0] has %d", j,
                           x->rank, x0->rank);
        for (int d = 0; d < x0->rank; d++)
            if (d != p.axis && x->shape[d] != x0->shape[d])
                return err_set(VKT_ESHAPE,
                               "vkt_concatenate: xs[%d]'s axis %d has size %lld, xs[0]'s has %lld",
                               j, d, (long long)x->shape[d], (long long)x0->shape[d]);
        shape[p.axis] += x->shape[p.axis];
        dt = op_promote(dt, x->dtype);
    }
    /* f64 only needs shaderFloat64 when a narrower input is converted to it. */
    bool converts = false;
    for (int j = 0; j < n; j++)
        converts |= xs[j]->dtype != dt;
    exec_call c = {.info = info,
                   .in_list = xs,
                   .nin = n,
                   .native = concat_native,
                   .host = concat_host,
                   .params = &p,
                   .f64_as_bits = !converts};
    TRY(tn_new(x0->ctx, dt, shape, x0->rank, &c.out));
    return exec_run(&c, out);
}

/* ---- gather ----------------------------------------------------------------- */

typedef struct gather_params {
    int axes[VKT_MAX_RANK];
    int k;
} gather_params;

typedef struct gather_push {
    GATHER_PUSH_FIELDS
} gather_push;
_Static_assert(sizeof(gather_push) <= PL_PUSH_SIZE, "gather_push exceeds the push-constant budget");

static int gather_native(exec_call *c)
{
    const gather_params *p = c->params;
    const vkt_tensor *x = c->in[0];
    int64_t xs[VKT_MAX_RANK];
    contig_strides(x->shape, x->rank, xs);
    gather_push pc;
    memset(&pc, 0, sizeof pc);
    pc.n = (uint32_t)c->out->numel;
    pc.k = (uint32_t)p->k;
    unsigned indexed = 0;
    for (int j = 0; j < p->k; j++) {
        pc.dims[j] = (uint32_t)x->shape[p->axes[j]];
        pc.strides[j] = (uint32_t)xs[p->axes[j]];
        pc.empty |= pc.dims[j] == 0;
        indexed |= 1u << p->axes[j];
    }
    uint64_t slab = 1;
    for (int d = 0; d < x->rank; d++) {
        if (indexed & (1u << d))
            continue;
        pc.dims[pc.k + pc.nf] = (uint32_t)x->shape[d];
        pc.strides[pc.k + pc.nf++] = (uint32_t)xs[d];
        slab *= (uint64_t)x->shape[d];
    }
    pc.slab = slab ? (uint32_t)slab : 1;
    mv_divider(pc.slab, &pc.slab_magic, &pc.slab_shift);
    pc.shifts = mv_dividers(pc.dims + pc.k, (int)pc.nf, pc.magic);
    tn_storage *bufs[3] = {x->st, c->in[1]->st, c->out->st};
    return op_dispatch(x->ctx, mv_shader(x->dtype, gather_shaders), 0, &pc, sizeof pc, bufs, 3,
                       c->out->numel);
}

static int gather_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const gather_params *p = c->params;
    return ref_gather(&in[0], &in[1], p->axes, p->k, out);
}

VKT_API int vkt_gather(const vkt_tensor *x, const vkt_tensor *indices, const int *axes,
                       vkt_tensor **out)
{
    const op_info *info = &mv_ops[MV_GATHER];
    TRY(mv_begin(info, out));
    TRY(tn_check_tensor(x, info->name, "x"));
    TRY(tn_check_tensor(indices, info->name, "indices"));
    if (indices->dtype != VKT_S32)
        return err_set(VKT_EDTYPE, "vkt_gather: indices are %s; they must be s32",
                       vkt_dtype_name(indices->dtype));
    if (indices->rank < 1)
        return err_set(
            VKT_ESHAPE,
            "vkt_gather: indices must have rank >= 1 (the last axis holds the index tuple)");
    int64_t k = indices->shape[indices->rank - 1];
    if (k > x->rank)
        return err_set(VKT_ESHAPE, "vkt_gather: index tuples have %lld entries but x has rank %d",
                       (long long)k, x->rank);
    gather_params p = {.k = (int)k};
    unsigned seen = 0;
    for (int j = 0; j < p.k; j++) {
        int a = j;
        if (axes) {
            TRY(op_axis(info->name, axes[j], x->rank, &a));
            if (seen & (1u << a))
                return err_set(VKT_EAXIS, "vkt_gather: axes[%d] repeats axis %d", j, a);
        }
        seen |= 1u << a;
        p.axes[j] = a;
    }
    int rank = indices->rank - 1 + x->rank - p.k;
    if (rank > VKT_MAX_RANK)
        return err_set(VKT_ESHAPE, "vkt_gather: the result would have rank %d, more than %d", rank,
                       VKT_MAX_RANK);
    int64_t shape[VKT_MAX_RANK];
    int r = 0;
    for (int d = 0; d < indices->rank - 1; d++)
        shape[r++] = indices->shape[d];
    for (int d = 0; d < x->rank; d++)
        if (!(seen & (1u << d)))
            shape[r++] = x->shape[d];
    exec_call c = {.info = info,
                   .in = {x, indices},
                   .nin = 2,
                   .native = gather_native,
                   .host = gather_host,
                   .f64_as_bits = true,
                   .params = &p};
    TRY(tn_new(x->ctx, x->dtype, shape, rank, &c.out));
    return exec_run(&c, out);
}

/* ---- assign ------------------------------------------------------------------- */

/* exec_run gave out dst's storage (c->into): one contiguous copy into it. */
static int assign_native(exec_call *c)
{
    const vkt_tensor *src = c->in[0];
    if (src->st == c->out->st)
        return VKT_OK;
    mv_plan plan = plan_for_out(c->out);
    memcpy(plan.ist, plan.ost, sizeof plan.ist);
    /* An f32 copy is an elementwise step a graph can fuse into the op that
     * computed src (an SGD update computed straight into the weights). */
    rt_ew ew = {.kind = FU_COPY,
                .nin = 1,
                .n = (uint32_t)src->numel,
                .div = {1},
                .mod = {(uint32_t)src->numel}};
    return mv_copy(src->ctx, src->dtype, src->st, c->out->st, plan,
                   src->dtype == VKT_F32 ? &ew : NULL);
}

static int assign_host(exec_call *c, const ref_view *in, ref_view *out)
{
    (void)c;
    memcpy(out->data, in[0].data, ref_numel(&in[0]) * vkt_dtype_size(in[0].dtype));
    return VKT_OK;
}

VKT_API int vkt_assign(vkt_tensor *dst, const vkt_tensor *src)
{
    const op_info *info = &mv_ops[MV_ASSIGN];
    err_clear();
    TRY(tn_check_tensor(dst, info->name, "dst"));
    TRY(tn_check_tensor(src, info->name, "src"));
    if (dst->dtype != src->dtype)
        return err_set(VKT_EDTYPE, "vkt_assign: src is %s, dst is %s", vkt_dtype_name(src->dtype),
                       vkt_dtype_name(dst->dtype));
    bool same = dst->rank == src->rank;
    for (int d = 0; same && d < dst->rank; d++)
        same = dst->shape[d] == src->shape[d];
    if (!same)
        return err_set(VKT_ESHAPE, "vkt_assign: src and dst differ in shape (ranks %d and %d)",
                       src->rank, dst->rank);
    /* dst is the last input: where it lives decides with src's residency. */
    exec_call c = {.info = info,
                   .in = {src, dst},
                   .nin = 2,
                   .native = assign_native,
                   .host = assign_host,
                   .f64_as_bits = true,
                   .into = dst};
    TRY(tn_new(dst->ctx, dst->dtype, dst->shape, dst->rank, &c.out));
    vkt_tensor *result;
    TRY(exec_run(&c, &result));
    vkt_tensor_free(result);
    return VKT_OK;
}

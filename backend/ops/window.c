/* window.c — the window family: window_sum, window_product, window_max,
 * window_min (Nx, XLA ReduceWindow) and window_scatter_max/min (Nx, XLA
 * SelectAndScatter with >= / <=: the first extremum in row-major window order
 * wins; padding is never selected).
 *
 * Results keep x's dtype for the reductions, as Nx does; the scatters return
 * the merged dtype of source and init_value. Output dim d of a reduction is
 * floor((x_d + lo_d + hi_d - ((w_d - 1) * dil_d + 1)) / stride_d) + 1, or 0
 * when the dilated window does not fit the padded input (XLA's bound).
 *
 * Parts: shaders/window/ (reduce.comp for the reductions, argsel.comp and
 * scatter.comp for the scatters, pool.comp for windows that tile the last
 * two axes, a CNN's pooling; window.glsl, window_ops.glsl); host reference
 * backend/ref/window.c; tests tests/vkt/test_window.c with the PyTorch golden
 * data of tests/golden/window/. */
#include <stdlib.h>
#include <string.h>

#include "spirv_table.h"
#include "opsupport.h"

enum { WN_SUM, WN_PRODUCT, WN_MAX, WN_MIN, WN_SCATTER_MAX, WN_SCATTER_MIN, WN__COUNT };

typedef struct wn_params {
    int code;             /* WN_* */
    vkt_window_opts opts; /* defaults filled in: strides and dilations >= 1 */
    int64_t window[VKT_MAX_RANK];
    vkt_dtype dtype; /* result dtype */
} wn_params;

/* ---- validation ------------------------------------------------------------ */

static int64_t wn_dilated(int64_t w, int64_t dil)
{
    return (w - 1) * dil + 1;
}

/* Checks window and opts against x, fills defaults into p and the result shape
 * of the reduction (the source shape of a scatter). */
static int wn_plan(const char *op, const vkt_tensor *x, const int64_t *window,
                   const vkt_window_opts *opts, wn_params *p, int64_t *shape)
{
    if (x->rank > 0 && !window)
        return err_set(VKT_EINVAL, "vkt_%s: window is NULL", op);
    memset(&p->opts, 0, sizeof p->opts);
    if (opts)
        p->opts = *opts;
    vkt_window_opts *o = &p->opts;
    for (int d = 0; d < x->rank; d++) {
        if (window[d] < 1)
            return err_set(VKT_ESHAPE, "vkt_%s: window[%d] = %lld must be at least 1", op, d,
                           (long long)window[d]);
        if (o->strides[d] < 0)
            return err_set(VKT_EINVAL, "vkt_%s: strides[%d] = %lld must be positive", op, d,
                           (long long)o->strides[d]);
        if (o->window_dilations[d] < 0)
            return err_set(VKT_EINVAL, "vkt_%s: window_dilations[%d] = %lld must be positive", op,
                           d, (long long)o->window_dilations[d]);
        if (o->strides[d] == 0)
            o->strides[d] = 1;
        if (o->window_dilations[d] == 0)
            o->window_dilations[d] = 1;
        /* Bounds keep every later product and sum well inside int64. */
        if (window[d] > INT32_MAX || o->strides[d] > INT32_MAX ||
            o->window_dilations[d] > INT32_MAX || llabs(o->padding_lo[d]) > INT32_MAX ||
            llabs(o->padding_hi[d]) > INT32_MAX)
            return err_set(VKT_EINVAL, "vkt_%s: window geometry of axis %d exceeds 2^31", op, d);
        int64_t padded = x->shape[d] + o->padding_lo[d] + o->padding_hi[d];
        if (padded < 0)
            return err_set(VKT_ESHAPE,
                           "vkt_%s: axis %d: padding %lld/%lld trims more than its %lld elements",
                           op, d, (long long)o->padding_lo[d], (long long)o->padding_hi[d],
                           (long long)x->shape[d]);
        int64_t w = wn_dilated(window[d], o->window_dilations[d]);
        shape[d] = padded < w ? 0 : (padded - w) / o->strides[d] + 1;
        p->window[d] = window[d];
    }
    return VKT_OK;
}

/* ---- host -------------------------------------------------------------------- */

static int wn_host_reduce(exec_call *c, const ref_view *in, ref_view *out)
{
    const wn_params *p = c->params;
    static const enum ref_redop red[4] = {RED_SUM, RED_PRODUCT, RED_MAX, RED_MIN};
    int s = ref_window_reduce(red[p->code], &in[0], p->window, &p->opts, out);
    if (s == VKT_ENOMEM)
        return err_set(s, "vkt_%s: out of host memory", c->info->name);
    return s;
}

static int wn_host_scatter(exec_call *c, const ref_view *in, ref_view *out)
{
    const wn_params *p = c->params;
    ref_view src, init;
    void *os = NULL, *oi = NULL;
    int s = op_host_convert(&in[1], p->dtype, &src, &os);
    if (s == VKT_OK)
        s = op_host_convert(&in[2], p->dtype, &init, &oi);
    if (s == VKT_OK)
        s = ref_window_scatter(p->code == WN_SCATTER_MAX, &in[0], &src, init.data, p->window,
                               &p->opts, out);
    free(os);
    free(oi);
    if (s == VKT_ENOMEM)
        return err_set(s, "vkt_%s: out of host memory", c->info->name);
    return s;
}

/* ---- native ------------------------------------------------------------------ */

/* The parameter block's offsets (W_*, WP) come from layouts.h. */
#define WN_AXES VKT_MAX_RANK

static const int reduce_shaders[VKT_NUM_DTYPES] = {SPV_window_reduce_f32, SPV_window_reduce_f64,
                                                   SPV_window_reduce_s32, SPV_window_reduce_u8};
static const int argsel_shaders[VKT_NUM_DTYPES] = {SPV_window_argsel_f32, SPV_window_argsel_f64,
                                                   SPV_window_argsel_s32, SPV_window_argsel_u8};
static const int scatter_shaders[VKT_NUM_DTYPES] = {SPV_window_scatter_f32, SPV_window_scatter_f64,
                                                    SPV_window_scatter_s32, SPV_window_scatter_u8};

typedef struct wn_push {
    WN_PUSH_FIELDS
} wn_push;

typedef struct pool_push {
    POOL_PUSH_FIELDS
} pool_push;

/* Pooling: f32 windows that tile the last two axes (strides equal to the
 * window there, window and stride 1 elsewhere, no padding or dilation) run
 * pool.comp, its geometry in push constants: x as [planes, h, w]. */
static bool wn_pooled(const vkt_tensor *x, const wn_params *p, const int64_t *wshape, pool_push *pp)
{
    const vkt_window_opts *o = &p->opts;
    int r = x->rank;
    if (r < 2 || x->dtype != VKT_F32)
        return false;
    for (int d = 0; d < r; d++) {
        bool last2 = d >= r - 2;
        if (o->padding_lo[d] || o->padding_hi[d] || o->window_dilations[d] != 1 ||
            o->strides[d] != (last2 ? p->window[d] : 1) || (!last2 && p->window[d] != 1))
            return false;
    }
    *pp = (pool_push){.h = (uint32_t)x->shape[r - 2],
                      .w = (uint32_t)x->shape[r - 1],
                      .kh = (uint32_t)p->window[r - 2],
                      .kw = (uint32_t)p->window[r - 1],
                      .oh = (uint32_t)wshape[r - 2],
                      .ow = (uint32_t)wshape[r - 1]};
    return true;
}

/* Positions o*stride - lo + k*dilation and element offsets must stay inside
 * the shaders' 32-bit ints; larger geometry is a real limit of the kernels. */
static const char *wn_int32_gate(const vkt_tensor *x, const wn_params *p, const int64_t *wshape)
{
    const vkt_window_opts *o = &p->opts;
    int64_t vol = 1;
    for (int d = 0; d < x->rank; d++) {
        int64_t reach = (wshape[d] + 1) * o->strides[d] + llabs(o->padding_lo[d]) +
                        (p->window[d] + 1) * o->window_dilations[d] + x->shape[d];
        if (reach > INT32_MAX / 2)
            return "window geometry (padding, strides, dilations) exceeds 32-bit shader indexing";
        vol *= p->window[d];
        if (vol > INT32_MAX)
            return "window volume exceeds 32-bit shader indexing";
    }
    return NULL;
}

/* The parameter block. Neighbouring pass-through axes (window 1, stride 1, no
 * padding: the batch and feature axes of a pool) merge into one, since the
 * shaders pay a division per axis per element; the axes left are padded to
 * six at the front as size-1 windows and *nr counts them. */
static int wn_params_buffer(const vkt_tensor *x, const wn_params *p, const int64_t *wshape,
                            vkt_tensor **out, uint32_t *nr)
{
    const vkt_window_opts *o = &p->opts;
    int64_t in[WN_AXES], ws[WN_AXES], win[WN_AXES], str[WN_AXES], lo[WN_AXES], dil[WN_AXES];
    int r = 0;
    bool prev_pass = false;
    for (int d = 0; d < x->rank; d++) {
        bool pass = p->window[d] == 1 && o->strides[d] == 1 && o->padding_lo[d] == 0 &&
                    o->padding_hi[d] == 0;
        if (pass && prev_pass) {
            in[r - 1] *= x->shape[d];
            ws[r - 1] *= wshape[d];
            continue;
        }
        in[r] = x->shape[d];
        ws[r] = wshape[d];
        win[r] = p->window[d];
        str[r] = o->strides[d];
        lo[r] = o->padding_lo[d];
        dil[r] = o->window_dilations[d];
        r++;
        prev_pass = pass;
    }
    int32_t prm[WN_AXES * WP];
    for (int d = 0; d < WN_AXES; d++) {
        int32_t *q = prm + d * WP;
        memset(q, 0, WP * sizeof *q);
        q[W_IN] = q[W_OUT] = q[W_WIN] = q[W_STR] = q[W_DIL] = q[W_NB] = 1;
    }
    int shift = WN_AXES - r;
    int64_t ist = 1, sst = 1;
    for (int d = r - 1; d >= 0; d--) {
        int32_t *q = prm + (d + shift) * WP;
        q[W_IN] = (int32_t)in[d];
        q[W_OUT] = (int32_t)ws[d];
        q[W_WIN] = (int32_t)win[d];
        q[W_STR] = (int32_t)str[d];
        q[W_LO] = (int32_t)lo[d];
        q[W_DIL] = (int32_t)dil[d];
        q[W_IST] = (int32_t)ist;
        q[W_SST] = (int32_t)sst;
        int64_t nb = (win[d] - 1) / str[d] + 1;
        q[W_NB] = (int32_t)(nb < ws[d] ? nb : ws[d] > 0 ? ws[d] : 1);
        ist *= in[d];
        sst *= ws[d];
    }
    *nr = r > 0 ? (uint32_t)r : 1;
    TRY(tn_new(x->ctx, VKT_S32, (const int64_t[]){WN_AXES * WP}, 1, out));
    int s = tn_alloc_device(*out);
    if (s == VKT_OK)
        s = tn_upload(*out, prm, sizeof prm);
    if (s != VKT_OK) {
        vkt_tensor_free(*out);
        *out = NULL;
    }
    return s;
}

/* Positions one dispatch may walk per work item: lavapipe ends an invocation's
 * loops after 65,535 iterations in all, grid-stride passes included. */
static uint64_t wn_slice(uint64_t n)
{
    uint64_t passes = (n + 65535ull * 256 - 1) / (65535ull * 256);
    uint64_t budget = 60000 / (passes ? passes : 1);
    return budget > 8 ? budget - 4 : 4;
}

/* Runs `total` positions per work item as slices, one dispatch each. */
static int wn_sliced(vkt_ctx *ctx, pl_dispatch *d, uint64_t n, uint64_t total)
{
    uint64_t step = wn_slice(n);
    pl_grid(n, 256, d->groups);
    uint64_t k0 = 0;
    do {
        uint64_t k1 = total - k0 < step ? total : k0 + step;
        wn_push pc = {(uint32_t)n, (uint32_t)k0, (uint32_t)k1, k0 == 0};
        d->push = &pc;
        d->push_size = sizeof pc;
        TRY(pl_run(ctx, d));
        k0 = k1;
    } while (k0 < total);
    return VKT_OK;
}

static int wn_native_reduce(exec_call *c)
{
    const wn_params *p = c->params;
    const vkt_tensor *x = c->in[0];
    vkt_tensor *y = c->out, *prm = NULL;
    if (y->numel == 0)
        return VKT_OK;
    pool_push pp;
    if (wn_pooled(x, p, y->shape, &pp)) {
        pp.n = (uint32_t)y->numel;
        pl_dispatch d = {.shader = SPV_window_pool_f32,
                         .nspec = 1,
                         .spec = {(uint32_t)p->code},
                         .nbufs = 2,
                         .bufs = {x->st, y->st},
                         .writes = {false, true},
                         .push = &pp,
                         .push_size = sizeof pp};
        pl_grid(y->numel, 256, d.groups);
        return pl_run(y->ctx, &d);
    }
    uint32_t nr;
    TRY(wn_params_buffer(x, p, y->shape, &prm, &nr));
    uint64_t vol = 1;
    for (int d = 0; d < x->rank; d++)
        vol *= (uint64_t)p->window[d];
    pl_dispatch d = {.shader = reduce_shaders[x->dtype],
                     .nspec = 2,
                     .spec = {(uint32_t)p->code, nr},
                     .nbufs = 3,
                     .bufs = {x->st, prm->st, y->st},
                     .writes = {false, false, true}};
    int s = wn_sliced(y->ctx, &d, y->numel, vol);
    vkt_tensor_free(prm);
    return s;
}

static int wn_temp(vkt_ctx *ctx, vkt_dtype dt, const vkt_tensor *like, vkt_tensor **out)
{
    TRY(tn_new(ctx, dt, like->shape, like->rank, out));
    int s = tn_alloc_device(*out);
    if (s != VKT_OK) {
        vkt_tensor_free(*out);
        *out = NULL;
    }
    return s;
}

/* Loop iterations the one-pass scatter may run per element (windows that
 * cover it, times each one's scan), well inside lavapipe's 65,535. */
#define WN_FUSED_BUDGET 4096

/* The one-pass scatter of a pooling window (each element in one window at most), in pp. */
static int wn_pool_scatter(const wn_params *p, const vkt_tensor *x, const vkt_tensor *src,
                           const vkt_tensor *init, vkt_tensor *y, pool_push *pp)
{
    pp->n = (uint32_t)y->numel;
    rt_epi epi = {SPV_window_pool_scatter_f32_epi, 3, pp->n};
    pl_dispatch d = {.shader = SPV_window_pool_scatter_f32,
                     .nspec = 1,
                     .spec = {p->code == WN_SCATTER_MAX ? 0u : 1u},
                     .nbufs = 4,
                     .bufs = {x->st, src->st, init->st, y->st},
                     .writes = {false, false, false, true},
                     .push = pp,
                     .push_size = sizeof *pp,
                     .epi = &epi};
    pl_grid(y->numel, 256, d.groups);
    return pl_run(y->ctx, &d);
}

/* The one-pass scatter of small f32 windows: each element finds the selection of every window
 * that covers it (box of them), with the parameters in params (nr of them). */
static int wn_fused_scatter(const wn_params *p, const vkt_tensor *x, const vkt_tensor *src,
                            const vkt_tensor *init, const vkt_tensor *params, vkt_tensor *y,
                            uint64_t box, uint32_t nr)
{
    wn_push pc = {(uint32_t)y->numel, 0, (uint32_t)box, 1};
    pl_dispatch d = {.shader = SPV_window_scatter_fused_f32,
                     .nspec = 2,
                     .spec = {p->code == WN_SCATTER_MAX ? 0u : 1u, nr},
                     .nbufs = 5,
                     .bufs = {x->st, src->st, init->st, params->st, y->st},
                     .writes = {false, false, false, false, true},
                     .push = &pc,
                     .push_size = sizeof pc};
    pl_grid(y->numel, 256, d.groups);
    return pl_run(y->ctx, &d);
}

/* Two passes: each window's selected element (argsel), then a gather per
 * element over the windows that can cover it (scatter); small f32 windows in
 * one. */
static int wn_native_scatter(exec_call *c)
{
    const wn_params *p = c->params;
    const vkt_tensor *x = c->in[0], *src = c->in[1], *init = c->in[2];
    vkt_tensor *y = c->out, *owned[5] = {0};
    vkt_ctx *ctx = y->ctx;
    uint32_t nr = 1;
    if (y->numel == 0)
        return VKT_OK;
    int s = op_device_convert(src, p->dtype, &src, &owned[0]);
    if (s == VKT_OK)
        s = op_device_convert(init, p->dtype, &init, &owned[1]);
    pool_push pp;
    if (s == VKT_OK && p->dtype == VKT_F32 && src->numel > 0 && wn_pooled(x, p, src->shape, &pp)) {
        /* each element in one window at most: its result is init, or init
         * plus that window's source value; a graph may fuse an elementwise
         * program into the store */
        s = wn_pool_scatter(p, x, src, init, y, &pp);
        vkt_tensor_free(owned[0]);
        vkt_tensor_free(owned[1]);
        return s;
    }
    if (s == VKT_OK)
        s = wn_params_buffer(x, p, src->shape, &owned[2], &nr);
    uint64_t vol = 1, box = 1;
    for (int d = 0; d < x->rank; d++) {
        vol *= (uint64_t)p->window[d];
        uint64_t nb = (uint64_t)((p->window[d] - 1) / p->opts.strides[d] + 1);
        box *= nb < (uint64_t)src->shape[d] ? nb : src->shape[d] > 0 ? (uint64_t)src->shape[d] : 1;
    }
    /* Small f32 windows (a pooling layer's gradient): one pass that finds
     * each covering window's selection itself, within one dispatch's loop
     * budget. */
    uint64_t passes = (y->numel + 65535ull * 256 - 1) / (65535ull * 256);
    if (s == VKT_OK && src->numel > 0 && x->dtype == VKT_F32 && p->dtype == VKT_F32 &&
        passes * box * (vol + 2) <= WN_FUSED_BUDGET) {
        s = wn_fused_scatter(p, x, src, init, owned[2], y, box, nr);
        for (int i = 0; i < 5; i++)
            vkt_tensor_free(owned[i]);
        return s;
    }
    tn_storage *sel_st = NULL;
    if (s == VKT_OK && src->numel > 0) {
        s = wn_temp(ctx, VKT_S32, src, &owned[3]);
        if (s == VKT_OK)
            s = wn_temp(ctx, x->dtype, src, &owned[4]);
        if (s == VKT_OK) {
            pl_dispatch d = {.shader = argsel_shaders[x->dtype],
                             .nspec = 2,
                             .spec = {p->code == WN_SCATTER_MAX ? 0u : 1u, nr},
                             .nbufs = 4,
                             .bufs = {x->st, owned[2]->st, owned[3]->st, owned[4]->st},
                             .writes = {false, false, true, true}};
            s = wn_sliced(ctx, &d, src->numel, vol);
        }
        if (s == VKT_OK)
            sel_st = owned[3]->st;
    }
    if (s == VKT_OK) {
        /* No windows: every element is init; the gather finds none to walk. */
        if (!sel_st)
            box = 1;
        tn_storage *sst = sel_st ? sel_st : owned[2]->st, *srcst = sel_st ? src->st : init->st;
        pl_dispatch d = {.shader = scatter_shaders[p->dtype],
                         .nspec = 2,
                         .spec = {0, nr},
                         .nbufs = 5,
                         .bufs = {sst, srcst, init->st, owned[2]->st, y->st},
                         .writes = {false, false, false, false, true}};
        s = wn_sliced(ctx, &d, y->numel, box);
    }
    for (int i = 0; i < 5; i++)
        vkt_tensor_free(owned[i]);
    return s;
}

/* ---- public functions ------------------------------------------------------- */

static const op_info wn_ops[WN__COUNT] = {
    [WN_SUM] = OP_ENTRY(window_sum, NULL, WN_SUM),
    [WN_PRODUCT] = OP_ENTRY(window_product, NULL, WN_PRODUCT),
    [WN_MAX] = OP_ENTRY(window_max, NULL, WN_MAX),
    [WN_MIN] = OP_ENTRY(window_min, NULL, WN_MIN),
    [WN_SCATTER_MAX] = OP_ENTRY(window_scatter_max, NULL, WN_SCATTER_MAX),
    [WN_SCATTER_MIN] = OP_ENTRY(window_scatter_min, NULL, WN_SCATTER_MIN),
};
const op_table op_table_window = {wn_ops, WN__COUNT};

static int wn_reduce(const op_info *info, const vkt_tensor *x, const int64_t *window,
                     const vkt_window_opts *opts, vkt_tensor **out)
{
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_%s: out is NULL", info->name);
    *out = NULL;
    TRY(tn_check_tensor(x, info->name, "x"));
    wn_params p = {.code = info->code, .dtype = x->dtype};
    int64_t shape[VKT_MAX_RANK];
    TRY(wn_plan(info->name, x, window, opts, &p, shape));
    exec_call c = {.info = info,
                   .in = {x},
                   .nin = 1,
                   .native = wn_native_reduce,
                   .host = wn_host_reduce,
                   .params = &p};
    c.gate = wn_int32_gate(x, &p, shape);
    TRY(tn_new(x->ctx, p.dtype, shape, x->rank, &c.out));
    return exec_run(&c, out);
}

static int wn_scatter(const op_info *info, const vkt_tensor *x, const vkt_tensor *source,
                      const vkt_tensor *init, const int64_t *window, const vkt_window_opts *opts,
                      vkt_tensor **out)
{
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_%s: out is NULL", info->name);
    *out = NULL;
    TRY(tn_check_tensor(x, info->name, "x"));
    TRY(tn_check_tensor(source, info->name, "source"));
    TRY(tn_check_tensor(init, info->name, "init_value"));
    if (x->ctx != source->ctx || x->ctx != init->ctx)
        return err_set(VKT_ECTX, "vkt_%s: inputs belong to different contexts", info->name);
    if (init->rank != 0)
        return err_set(VKT_ESHAPE, "vkt_%s: init_value has rank %d, must be a scalar (rank 0)",
                       info->name, init->rank);
    wn_params p = {.code = info->code, .dtype = op_promote(source->dtype, init->dtype)};
    int64_t shape[VKT_MAX_RANK];
    TRY(wn_plan(info->name, x, window, opts, &p, shape));
    for (int d = 0; d < x->rank; d++)
        if (p.opts.window_dilations[d] != 1)
            return err_set(VKT_EINVAL, "vkt_%s: window_dilations[%d] = %lld, must be 1", info->name,
                           d, (long long)p.opts.window_dilations[d]);
    if (source->rank != x->rank)
        return err_set(VKT_ESHAPE, "vkt_%s: source has rank %d, x has rank %d", info->name,
                       source->rank, x->rank);
    for (int d = 0; d < x->rank; d++)
        if (source->shape[d] != shape[d])
            return err_set(VKT_ESHAPE, "vkt_%s: source dim %d is %lld, the windows of x give %lld",
                           info->name, d, (long long)source->shape[d], (long long)shape[d]);
    exec_call c = {.info = info,
                   .in = {x, source, init},
                   .nin = 3,
                   .native = wn_native_scatter,
                   .host = wn_host_scatter,
                   .params = &p};
    c.gate = wn_int32_gate(x, &p, shape);
    TRY(tn_new(x->ctx, p.dtype, x->shape, x->rank, &c.out));
    return exec_run(&c, out);
}

VKT_API int vkt_window_sum(const vkt_tensor *x, const int64_t *window, const vkt_window_opts *opts,
                           vkt_tensor **out)
{
    return wn_reduce(&wn_ops[WN_SUM], x, window, opts, out);
}

VKT_API int vkt_window_product(const vkt_tensor *x, const int64_t *window,
                               const vkt_window_opts *opts, vkt_tensor **out)
{
    return wn_reduce(&wn_ops[WN_PRODUCT], x, window, opts, out);
}

VKT_API int vkt_window_max(const vkt_tensor *x, const int64_t *window, const vkt_window_opts *opts,
                           vkt_tensor **out)
{
    return wn_reduce(&wn_ops[WN_MAX], x, window, opts, out);
}

VKT_API int vkt_window_min(const vkt_tensor *x, const int64_t *window, const vkt_window_opts *opts,
                           vkt_tensor **out)
{
    return wn_reduce(&wn_ops[WN_MIN], x, window, opts, out);
}

VKT_API int vkt_window_scatter_max(const vkt_tensor *x, const vkt_tensor *source,
                                   const vkt_tensor *init_value, const int64_t *window,
                                   const vkt_window_opts *opts, vkt_tensor **out)
{
    return wn_scatter(&wn_ops[WN_SCATTER_MAX], x, source, init_value, window, opts, out);
}

VKT_API int vkt_window_scatter_min(const vkt_tensor *x, const vkt_tensor *source,
                                   const vkt_tensor *init_value, const int64_t *window,
                                   const vkt_window_opts *opts, vkt_tensor **out)
{
    return wn_scatter(&wn_ops[WN_SCATTER_MIN], x, source, init_value, window, opts, out);
}

/* window.c — the window op family: window_sum, window_product, window_max,
 * window_min (Nx, XLA ReduceWindow) and window_scatter_max/min (Nx, XLA
 * SelectAndScatter with >= / <=: the first extremum in row-major window order
 * wins; padding is never selected).
 *
 * Results keep x's dtype for the reductions, as Nx does; the scatters return
 * the merged dtype of source and init_value. Output dim d of a reduction is
 * floor((x_d + lo_d + hi_d - ((w_d - 1) * dil_d + 1)) / stride_d) + 1, or 0
 * when the dilated window does not fit the padded input (XLA's bound). */
#include <stdlib.h>
#include <string.h>

#include "spirv_table.h"
#include "opsupport.h"

enum { WN_SUM, WN_PRODUCT, WN_MAX, WN_MIN, WN_SCATTER_MAX, WN_SCATTER_MIN, WN__COUNT };

typedef struct wn_params {
    int code;              /* WN_* */
    vkt_window_opts opts;  /* defaults filled in: strides and dilations >= 1 */
    int64_t window[VKT_MAX_RANK];
    vkt_dtype dtype;       /* result dtype */
} wn_params;

static vkt_support wn_support(const op_info *info, vkt_dtype dt, const char **reason)
{
    (void)info;
    (void)dt;
    *reason = "native window kernels are not built yet";
    return VKT_FALLBACK;
}

/* ---- validation ------------------------------------------------------------ */

static int64_t wn_dilated(int64_t w, int64_t dil)
{
    return (w - 1) * dil + 1;
}

/* Checks window and opts against x, fills defaults into p and the result shape
 * of the reduction (the source shape of a scatter). */
static int wn_plan(const char *op, const vkt_tensor *x, const int64_t *window, const vkt_window_opts *opts,
                   wn_params *p, int64_t *shape)
{
    if (x->rank > 0 && !window)
        return err_set(VKT_EINVAL, "vkt_%s: window is NULL", op);
    memset(&p->opts, 0, sizeof p->opts);
    if (opts)
        p->opts = *opts;
    vkt_window_opts *o = &p->opts;
    for (int d = 0; d < x->rank; d++) {
        if (window[d] < 1)
            return err_set(VKT_ESHAPE, "vkt_%s: window[%d] = %lld must be at least 1", op, d, (long long)window[d]);
        if (o->strides[d] < 0)
            return err_set(VKT_EINVAL, "vkt_%s: strides[%d] = %lld must be positive", op, d,
                           (long long)o->strides[d]);
        if (o->window_dilations[d] < 0)
            return err_set(VKT_EINVAL, "vkt_%s: window_dilations[%d] = %lld must be positive", op, d,
                           (long long)o->window_dilations[d]);
        if (o->strides[d] == 0)
            o->strides[d] = 1;
        if (o->window_dilations[d] == 0)
            o->window_dilations[d] = 1;
        /* Bounds keep every later product and sum well inside int64. */
        if (window[d] > INT32_MAX || o->strides[d] > INT32_MAX || o->window_dilations[d] > INT32_MAX ||
            llabs(o->padding_lo[d]) > INT32_MAX || llabs(o->padding_hi[d]) > INT32_MAX)
            return err_set(VKT_EINVAL, "vkt_%s: window geometry of axis %d exceeds 2^31", op, d);
        int64_t padded = x->shape[d] + o->padding_lo[d] + o->padding_hi[d];
        if (padded < 0)
            return err_set(VKT_ESHAPE, "vkt_%s: axis %d: padding %lld/%lld trims more than its %lld elements", op,
                           d, (long long)o->padding_lo[d], (long long)o->padding_hi[d], (long long)x->shape[d]);
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
        s = ref_window_scatter(p->code == WN_SCATTER_MAX, &in[0], &src, init.data, p->window, &p->opts, out);
    free(os);
    free(oi);
    if (s == VKT_ENOMEM)
        return err_set(s, "vkt_%s: out of host memory", c->info->name);
    return s;
}

/* ---- native ------------------------------------------------------------------ */

static int wn_native_reduce(exec_call *c)
{
    return err_set(VKT_EDEVICE, "vkt_%s: no native kernel", c->info->name);
}

static int wn_native_scatter(exec_call *c)
{
    return err_set(VKT_EDEVICE, "vkt_%s: no native kernel", c->info->name);
}

/* ---- public functions ------------------------------------------------------- */

static const op_info wn_ops[WN__COUNT] = {
    [WN_SUM] = OP_ENTRY(window_sum, wn_support, WN_SUM),
    [WN_PRODUCT] = OP_ENTRY(window_product, wn_support, WN_PRODUCT),
    [WN_MAX] = OP_ENTRY(window_max, wn_support, WN_MAX),
    [WN_MIN] = OP_ENTRY(window_min, wn_support, WN_MIN),
    [WN_SCATTER_MAX] = OP_ENTRY(window_scatter_max, wn_support, WN_SCATTER_MAX),
    [WN_SCATTER_MIN] = OP_ENTRY(window_scatter_min, wn_support, WN_SCATTER_MIN),
};
const op_table op_table_window = {wn_ops, WN__COUNT};

static int wn_reduce(const op_info *info, const vkt_tensor *x, const int64_t *window, const vkt_window_opts *opts,
                     vkt_tensor **out)
{
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_%s: out is NULL", info->name);
    *out = NULL;
    TRY(tn_check_tensor(x, info->name, "x"));
    wn_params p = {.code = info->code, .dtype = x->dtype};
    int64_t shape[VKT_MAX_RANK];
    TRY(wn_plan(info->name, x, window, opts, &p, shape));
    const char *reason = NULL;
    exec_call c = {.info = info, .in = {x}, .nin = 1, .native = wn_native_reduce, .host = wn_host_reduce,
                   .params = &p};
    if (wn_support(info, x->dtype, &reason) != VKT_NATIVE)
        c.gate = reason;
    TRY(tn_new(x->ctx, p.dtype, shape, x->rank, &c.out));
    return exec_run(&c, out);
}

static int wn_scatter(const op_info *info, const vkt_tensor *x, const vkt_tensor *source, const vkt_tensor *init,
                      const int64_t *window, const vkt_window_opts *opts, vkt_tensor **out)
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
        return err_set(VKT_ESHAPE, "vkt_%s: init_value has rank %d, must be a scalar (rank 0)", info->name,
                       init->rank);
    wn_params p = {.code = info->code, .dtype = op_promote(source->dtype, init->dtype)};
    int64_t shape[VKT_MAX_RANK];
    TRY(wn_plan(info->name, x, window, opts, &p, shape));
    for (int d = 0; d < x->rank; d++)
        if (p.opts.window_dilations[d] != 1)
            return err_set(VKT_EINVAL, "vkt_%s: window_dilations[%d] = %lld, must be 1", info->name, d,
                           (long long)p.opts.window_dilations[d]);
    if (source->rank != x->rank)
        return err_set(VKT_ESHAPE, "vkt_%s: source has rank %d, x has rank %d", info->name, source->rank, x->rank);
    for (int d = 0; d < x->rank; d++)
        if (source->shape[d] != shape[d])
            return err_set(VKT_ESHAPE, "vkt_%s: source dim %d is %lld, the windows of x give %lld", info->name, d,
                           (long long)source->shape[d], (long long)shape[d]);
    const char *reason = NULL;
    exec_call c = {.info = info, .in = {x, source, init}, .nin = 3, .native = wn_native_scatter,
                   .host = wn_host_scatter, .params = &p};
    if (wn_support(info, x->dtype, &reason) != VKT_NATIVE)
        c.gate = reason;
    TRY(tn_new(x->ctx, p.dtype, x->shape, x->rank, &c.out));
    return exec_run(&c, out);
}

VKT_API int vkt_window_sum(const vkt_tensor *x, const int64_t *window, const vkt_window_opts *opts,
                           vkt_tensor **out)
{
    return wn_reduce(&wn_ops[WN_SUM], x, window, opts, out);
}

VKT_API int vkt_window_product(const vkt_tensor *x, const int64_t *window, const vkt_window_opts *opts,
                               vkt_tensor **out)
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

VKT_API int vkt_window_scatter_max(const vkt_tensor *x, const vkt_tensor *source, const vkt_tensor *init_value,
                                   const int64_t *window, const vkt_window_opts *opts, vkt_tensor **out)
{
    return wn_scatter(&wn_ops[WN_SCATTER_MAX], x, source, init_value, window, opts, out);
}

VKT_API int vkt_window_scatter_min(const vkt_tensor *x, const vkt_tensor *source, const vkt_tensor *init_value,
                                   const int64_t *window, const vkt_window_opts *opts, vkt_tensor **out)
{
    return wn_scatter(&wn_ops[WN_SCATTER_MIN], x, source, init_value, window, opts, out);
}

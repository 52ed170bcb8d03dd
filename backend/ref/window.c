/* window.c — Nx window reductions and window_scatter_max/min (XLA ReduceWindow
 * and SelectAndScatter) on the host: the oracle the window shaders are checked
 * against, so every window is walked with plain loops in row-major order.
 *
 * Window w of output index o covers input positions o*stride - lo + k*dilation
 * for k in [0, window); positions outside the input are padding. Reductions
 * treat padding as the identity. The scatters never select padding: as in
 * XLA's select-and-scatter with `>=` (`<=`), the first valid position is kept
 * until a later one fails the comparison against it, so the first extremum in
 * row-major window order wins. A window made only of padding scatters nothing.
 */
#include <stdlib.h>

#include "common.h"

typedef struct win_geom {
    int rank;
    int64_t in[VKT_MAX_RANK], out[VKT_MAX_RANK], win[VKT_MAX_RANK];
    int64_t str[VKT_MAX_RANK], lo[VKT_MAX_RANK], dil[VKT_MAX_RANK];
    int64_t ist[VKT_MAX_RANK]; /* contiguous element strides of the input */
    int64_t nwin;              /* elements per window */
} win_geom;

static int64_t or_one(int64_t v)
{
    return v > 0 ? v : 1;
}

static void geom(const ref_view *x, const int64_t *out_shape, const int64_t *window,
                 const vkt_window_opts *opts, win_geom *g)
{
    g->rank = x->rank;
    g->nwin = 1;
    for (int d = 0; d < x->rank; d++) {
        g->in[d] = x->shape[d];
        g->out[d] = out_shape[d];
        g->win[d] = window[d];
        g->str[d] = opts ? or_one(opts->strides[d]) : 1;
        g->lo[d] = opts ? opts->padding_lo[d] : 0;
        g->dil[d] = opts ? or_one(opts->window_dilations[d]) : 1;
        g->nwin *= window[d];
    }
    ref_contig_strides(x->rank, x->shape, g->ist);
}

/* Input element of window position k (row-major over the window) for the
 * window whose first corner is base[], or -1 when it falls on padding. */
static int64_t win_pos(const win_geom *g, const int64_t *base, int64_t k)
{
    int64_t off = 0;
    for (int d = g->rank - 1; d >= 0; d--) {
        int64_t kd = k % g->win[d];
        k /= g->win[d];
        int64_t p = base[d] + kd * g->dil[d];
        if (p < 0 || p >= g->in[d])
            return -1;
        off += p * g->ist[d];
    }
    return off;
}

/* Advances a row-major output index; base[] follows as o*stride - lo. */
static void next_out(const win_geom *g, int64_t *idx, int64_t *base)
{
    for (int d = g->rank - 1; d >= 0; d--) {
        base[d] += g->str[d];
        if (++idx[d] < g->out[d])
            return;
        idx[d] = 0;
        base[d] = -g->lo[d];
    }
}

static int64_t count(int rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= shape[d];
    return n;
}

int ref_window_reduce(enum ref_redop op, const ref_view *x, const int64_t *window,
                      const vkt_window_opts *opts, ref_view *out)
{
    if (op != RED_SUM && op != RED_PRODUCT && op != RED_MAX && op != RED_MIN)
        return VKT_EINVAL;
    win_geom g;
    geom(x, out->shape, window, opts, &g);
    int64_t nout = count(out->rank, out->shape);
    int64_t idx[VKT_MAX_RANK] = {0}, base[VKT_MAX_RANK];
    for (int d = 0; d < g.rank; d++)
        base[d] = -g.lo[d];
    bool fl = ref_is_float(x->dtype), s32 = x->dtype == VKT_S32;
    for (int64_t o = 0; o < nout; o++, next_out(&g, idx, base)) {
        if (fl) {
            /* Sums and products in double, rounded once, as ref_reduce does. */
            double a = op == RED_SUM       ? 0.0
                       : op == RED_PRODUCT ? 1.0
                       : op == RED_MAX     ? -INFINITY
                                           : INFINITY;
            for (int64_t k = 0; k < g.nwin; k++) {
                int64_t p = win_pos(&g, base, k);
                if (p < 0)
                    continue;
                double v = ref_load(x->dtype, x->data, p);
                a = op == RED_SUM       ? a + v
                    : op == RED_PRODUCT ? a * v
                    : op == RED_MAX     ? ref_fmax_nan(a, v)
                                        : ref_fmin_nan(a, v);
            }
            ref_store_double(out->dtype, out->data, o, a);
            continue;
        }
        /* Integers wrap in the output width: accumulate mod 2^64, truncate. */
        int64_t a = op == RED_SUM       ? 0
                    : op == RED_PRODUCT ? 1
                    : op == RED_MAX     ? (s32 ? INT32_MIN : 0)
                                        : (s32 ? INT32_MAX : 255);
        for (int64_t k = 0; k < g.nwin; k++) {
            int64_t p = win_pos(&g, base, k);
            if (p < 0)
                continue;
            int64_t v = (int64_t)ref_load(x->dtype, x->data, p);
            if (op == RED_SUM)
                a = (int64_t)((uint64_t)a + (uint64_t)v);
            else if (op == RED_PRODUCT)
                a = (int64_t)((uint64_t)a * (uint64_t)v);
            else if (op == RED_MAX ? v > a : v < a)
                a = v;
        }
        if (s32)
            ((int32_t *)out->data)[o] = (int32_t)(uint32_t)(uint64_t)a;
        else
            ((uint8_t *)out->data)[o] = (uint8_t)(uint64_t)a;
    }
    return VKT_OK;
}

int ref_window_scatter(bool is_max, const ref_view *x, const ref_view *source, const void *init,
                       const int64_t *window, const vkt_window_opts *opts, ref_view *out)
{
    win_geom g;
    geom(x, source->shape, window, opts, &g);
    int64_t n = count(out->rank, out->shape), nsrc = count(source->rank, source->shape);
    double init_v = ref_load(out->dtype, init, 0);
    bool fl = ref_is_float(out->dtype);
    /* Floats sum in double and round once; integers wrap in the output width. */
    double *accf = NULL;
    uint64_t *acci = NULL;
    if (fl)
        accf = malloc((size_t)(n ? n : 1) * sizeof *accf);
    else
        acci = malloc((size_t)(n ? n : 1) * sizeof *acci);
    if (!accf && !acci)
        return VKT_ENOMEM;
    for (int64_t i = 0; i < n; i++) {
        if (fl)
            accf[i] = init_v;
        else
            acci[i] = (uint64_t)(int64_t)init_v;
    }
    int64_t idx[VKT_MAX_RANK] = {0}, base[VKT_MAX_RANK];
    for (int d = 0; d < g.rank; d++)
        base[d] = -g.lo[d];
    for (int64_t w = 0; w < nsrc; w++, next_out(&g, idx, base)) {
        int64_t sel = -1;
        double best = 0.0;
        for (int64_t k = 0; k < g.nwin; k++) {
            int64_t p = win_pos(&g, base, k);
            if (p < 0)
                continue;
            double v = ref_load(x->dtype, x->data, p);
            /* The first NaN of a window wins (it is what window_max gives
             * there); otherwise the first extremum in row-major order. */
            if (sel < 0 || (!isnan(best) && (isnan(v) || (is_max ? v > best : v < best)))) {
                sel = p;
                best = v;
            }
        }
        if (sel < 0)
            continue;
        double s = ref_load(source->dtype, source->data, w);
        if (fl)
            accf[sel] += s;
        else
            acci[sel] += (uint64_t)(int64_t)s;
    }
    for (int64_t i = 0; i < n; i++) {
        if (fl)
            ref_store_double(out->dtype, out->data, i, accf[i]);
        else if (out->dtype == VKT_S32)
            ((int32_t *)out->data)[i] = (int32_t)(uint32_t)acci[i];
        else
            ((uint8_t *)out->data)[i] = (uint8_t)acci[i];
    }
    free(accf);
    free(acci);
    return VKT_OK;
}

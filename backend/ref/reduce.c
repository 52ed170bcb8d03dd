/* reduce.c — reductions over an axis set, and argmax/argmin. Float sums and
 * products accumulate in double and round once, so the oracle is at least as
 * exact as any GPU tree; max/min propagate NaN; empty reductions give the
 * identity. Integer sums and products wrap in the output width. */
#include <stdlib.h>

#include "common.h"

typedef struct red_ctx {
    enum ref_redop op;
    vkt_dtype dt;
    const void *x;
    void *acc; /* double[] for floats, uint64_t[] for integers, uint8_t[] for all/any */
} red_ctx;

typedef void (*red_row_fn)(const red_ctx *c, int64_t xo, int64_t oo, int64_t os, int64_t n);

/* Walks x in row-major order; out element = x index with reduced axes dropped,
 * reached through ost (0 on reduced axes). */
static void walk(const ref_view *x, const int64_t *ost, red_row_fn row, const red_ctx *c)
{
    int r = x->rank > 0 ? x->rank : 1;
    int64_t shape[VKT_MAX_RANK], st[VKT_MAX_RANK];
    for (int i = 0; i < r; i++) {
        shape[i] = x->rank > 0 ? x->shape[i] : 1;
        st[i] = x->rank > 0 ? ost[i] : 0;
        if (shape[i] == 0)
            return;
    }
    int64_t idx[VKT_MAX_RANK] = {0}, xo = 0, oo = 0, inner = shape[r - 1];
    for (;;) {
        row(c, xo, oo, st[r - 1], inner);
        xo += inner;
        int ax = r - 2;
        while (ax >= 0) {
            oo += st[ax];
            if (++idx[ax] < shape[ax])
                break;
            oo -= st[ax] * shape[ax];
            idx[ax] = 0;
            ax--;
        }
        if (ax < 0)
            return;
    }
}

static void row_bool(const red_ctx *c, int64_t xo, int64_t oo, int64_t os, int64_t n)
{
    uint8_t *acc = c->acc;
    for (int64_t i = 0; i < n; i++) {
        int t = ref_truthy(c->dt, c->x, xo + i);
        uint8_t *a = &acc[oo + i * os];
        *a = c->op == RED_ALL ? (*a && t) : (*a || t);
    }
}

static void row_float(const red_ctx *c, int64_t xo, int64_t oo, int64_t os, int64_t n)
{
    double *acc = (double *)c->acc + oo;
    for (int64_t i = 0; i < n; i++) {
        double v = ref_load(c->dt, c->x, xo + i), *a = &acc[i * os];
        switch (c->op) {
        case RED_SUM: *a += v; break;
        case RED_PRODUCT: *a *= v; break;
        case RED_MAX: *a = ref_fmax_nan(*a, v); break;
        default: *a = ref_fmin_nan(*a, v); break;
        }
    }
}

static void row_int(const red_ctx *c, int64_t xo, int64_t oo, int64_t os, int64_t n)
{
    uint64_t *acc = (uint64_t *)c->acc + oo;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = (int64_t)ref_load(c->dt, c->x, xo + i);
        uint64_t *a = &acc[i * os];
        switch (c->op) {
        case RED_SUM: *a += (uint64_t)v; break; /* mod 2^64 truncates to the wrapped result */
        case RED_PRODUCT: *a *= (uint64_t)v; break;
        case RED_MAX:
            if (v > (int64_t)*a)
                *a = (uint64_t)v;
            break;
        default:
            if (v < (int64_t)*a)
                *a = (uint64_t)v;
            break;
        }
    }
}

int ref_reduce(enum ref_redop op, const ref_view *x, unsigned axis_mask, ref_view *out)
{
    size_t nout = ref_numel(out);
    if ((int)op < 0 || op >= RED__COUNT)
        return VKT_EINVAL;
    if (nout == 0)
        return VKT_OK;
    int64_t ost[VKT_MAX_RANK];
    int64_t s = 1;
    for (int i = x->rank - 1; i >= 0; i--) {
        ost[i] = (axis_mask >> i) & 1u ? 0 : s;
        if (!((axis_mask >> i) & 1u))
            s *= x->shape[i];
    }
    red_ctx c = {op, x->dtype, x->data, NULL};
    if (op == RED_ALL || op == RED_ANY) {
        memset(out->data, op == RED_ALL, nout);
        c.acc = out->data;
        walk(x, ost, row_bool, &c);
        return VKT_OK;
    }
    if (ref_is_float(x->dtype)) {
        double *acc = malloc(nout * sizeof *acc);
        if (!acc)
            return VKT_ENOMEM;
        double id = op == RED_SUM       ? 0.0
                    : op == RED_PRODUCT ? 1.0
                    : op == RED_MAX     ? -INFINITY
                                        : INFINITY;
        for (size_t i = 0; i < nout; i++)
            acc[i] = id;
        c.acc = acc;
        walk(x, ost, row_float, &c);
        for (size_t i = 0; i < nout; i++)
            ref_store_double(out->dtype, out->data, (int64_t)i, acc[i]);
        free(acc);
        return VKT_OK;
    }
    uint64_t *acc = malloc(nout * sizeof *acc);
    if (!acc)
        return VKT_ENOMEM;
    int s32 = x->dtype == VKT_S32;
    int64_t id = op == RED_SUM       ? 0
                 : op == RED_PRODUCT ? 1
                 : op == RED_MAX     ? (s32 ? INT32_MIN : 0)
                                     : (s32 ? INT32_MAX : 255);
    for (size_t i = 0; i < nout; i++)
        acc[i] = (uint64_t)id;
    c.acc = acc;
    walk(x, ost, row_int, &c);
    for (size_t i = 0; i < nout; i++) {
        if (out->dtype == VKT_S32)
            ((int32_t *)out->data)[i] = (int32_t)(uint32_t)acc[i];
        else
            ((uint8_t *)out->data)[i] = (uint8_t)acc[i];
    }
    free(acc);
    return VKT_OK;
}

/* Nx's rule (and torch's): a slice that holds a NaN gives the index of its
 * first NaN, for argmax and argmin alike. Strict comparisons keep the first
 * index of tied extrema. */
static int better(bool is_max, double v, double best)
{
    if (isnan(best))
        return 0;
    if (isnan(v))
        return 1;
    return is_max ? v > best : v < best;
}

int ref_argreduce(bool is_max, const ref_view *x, int axis, ref_view *out)
{
    int64_t outer = 1, dim = 1, inner = 1;
    if (axis == VKT_ALL_AXES || x->rank == 0) {
        dim = (int64_t)ref_numel(x);
    } else {
        for (int i = 0; i < axis; i++)
            outer *= x->shape[i];
        dim = x->shape[axis];
        for (int i = axis + 1; i < x->rank; i++)
            inner *= x->shape[i];
    }
    int32_t *y = out->data;
    if (outer * inner == 0)
        return VKT_OK;
    if (dim == 0) {
        memset(y, 0, (size_t)(outer * inner) * sizeof *y);
        return VKT_OK;
    }
    /* Rows of `inner` bests advance together so every read is contiguous. */
    double *best = malloc((size_t)inner * sizeof *best);
    if (!best)
        return VKT_ENOMEM;
    for (int64_t o = 0; o < outer; o++) {
        int64_t base = o * dim * inner;
        int32_t *yo = y + o * inner;
        for (int64_t i = 0; i < inner; i++) {
            best[i] = ref_load(x->dtype, x->data, base + i);
            yo[i] = 0;
        }
        for (int64_t k = 1; k < dim; k++) {
            for (int64_t i = 0; i < inner; i++) {
                double v = ref_load(x->dtype, x->data, base + k * inner + i);
                if (better(is_max, v, best[i])) {
                    best[i] = v;
                    yo[i] = (int32_t)k;
                }
            }
        }
    }
    free(best);
    return VKT_OK;
}

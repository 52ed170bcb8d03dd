/* opsupport.c — helpers shared by the op families. */
#include <stdlib.h>
#include <string.h>

#include "spirv_table.h"
#include "opsupport.h"

vkt_dtype op_promote(vkt_dtype a, vkt_dtype b)
{
    static const int order[VKT_NUM_DTYPES] = {
        [VKT_U8] = 0, [VKT_S32] = 1, [VKT_F32] = 2, [VKT_F64] = 3};
    return order[a] >= order[b] ? a : b;
}

bool op_is_float(vkt_dtype dt)
{
    return dt == VKT_F32 || dt == VKT_F64;
}

int op_broadcast_shape(const char *op, const vkt_tensor *const *ts, int n, int64_t *shape,
                       int *rank)
{
    int r = 0;
    for (int i = 0; i < n; i++)
        if (ts[i]->rank > r)
            r = ts[i]->rank;
    for (int d = 0; d < r; d++)
        shape[d] = 1;
    for (int i = 0; i < n; i++) {
        const vkt_tensor *t = ts[i];
        for (int d = 0; d < t->rank; d++) {
            int od = r - t->rank + d;
            int64_t have = shape[od], want = t->shape[d];
            if (want == have || want == 1)
                continue;
            if (have != 1)
                return err_set(VKT_ESHAPE,
                               "vkt_%s: operand %d's axis %d has size %lld, which does not "
                               "broadcast against %lld",
                               op, i, d, (long long)want, (long long)have);
            shape[od] = want;
        }
    }
    *rank = r;
    return VKT_OK;
}

void op_bcast_strides(const vkt_tensor *t, const int64_t *shape, int rank, uint32_t *strides)
{
    uint64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        int td = d - (rank - t->rank);
        if (td < 0 || t->shape[td] == 1 || shape[d] == 1) {
            strides[d] = 0;
        } else {
            strides[d] = (uint32_t)s;
        }
        if (td >= 0)
            s *= (uint64_t)t->shape[td];
    }
}

int op_axis(const char *op, int axis, int rank, int *out)
{
    int a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
        return err_set(VKT_EAXIS, "vkt_%s: axis %d is out of range for rank %d", op, axis, rank);
    *out = a;
    return VKT_OK;
}

int op_axes_mask(const char *op, const int *axes, int naxes, int rank, unsigned *mask)
{
    if (!axes) {
        *mask = rank ? (1u << rank) - 1 : 0;
        return VKT_OK;
    }
    if (naxes < 0 || naxes > rank)
        return err_set(VKT_EAXIS, "vkt_%s: %d axes given for rank %d", op, naxes, rank);
    unsigned m = 0;
    for (int i = 0; i < naxes; i++) {
        int a = 0;
        TRY(op_axis(op, axes[i], rank, &a));
        if (m & (1u << a))
            return err_set(VKT_EAXIS, "vkt_%s: axis %d is repeated", op, axes[i]);
        m |= 1u << a;
    }
    *mask = m;
    return VKT_OK;
}

static const int convert_shaders[VKT_NUM_DTYPES][VKT_NUM_DTYPES] = {
    [VKT_F32] = {SPV_convert_f32_f32, SPV_convert_f32_f64, SPV_convert_f32_s32, SPV_convert_f32_u8},
    [VKT_F64] = {SPV_convert_f64_f32, SPV_convert_f64_f64, SPV_convert_f64_s32, SPV_convert_f64_u8},
    [VKT_S32] = {SPV_convert_s32_f32, SPV_convert_s32_f64, SPV_convert_s32_s32, SPV_convert_s32_u8},
    [VKT_U8] = {SPV_convert_u8_f32, SPV_convert_u8_f64, SPV_convert_u8_s32, SPV_convert_u8_u8},
};

int op_convert_shader(vkt_dtype from, vkt_dtype to)
{
    return convert_shaders[from][to];
}

int op_dispatch(vkt_ctx *ctx, int shader, uint32_t op, const void *push, uint32_t push_size,
                tn_storage *const *bufs, int nbufs, uint64_t n)
{
    return op_dispatch_ew(ctx, shader, op, push, push_size, bufs, nbufs, n, NULL);
}

bool op_ew_pattern(const int64_t *shape, int rank, const uint32_t *strides, uint32_t *div,
                   uint32_t *mod)
{
    /* The run of axes that move the input, skipping size-1 axes: each stride
     * must be the next one's times that axis's size, the last one 1. */
    int lo = -1, hi = -1;
    for (int d = 0; d < rank; d++)
        if (shape[d] > 1 && strides[d] != 0) {
            if (lo < 0)
                lo = d;
            hi = d;
        }
    uint64_t inner = 1, run = 1;
    for (int d = rank - 1; d > hi; d--)
        inner *= (uint64_t)shape[d];
    for (int d = hi; d >= lo && lo >= 0; d--) {
        if (shape[d] == 1)
            continue;
        if (strides[d] != run)
            return false;
        run *= (uint64_t)shape[d];
    }
    if (lo < 0)
        inner = 1; /* a scalar: index 0 everywhere */
    if (inner > UINT32_MAX || run > UINT32_MAX)
        return false;
    *div = (uint32_t)inner;
    *mod = (uint32_t)run;
    return true;
}

int op_dispatch_ew(vkt_ctx *ctx, int shader, uint32_t op, const void *push, uint32_t push_size,
                   tn_storage *const *bufs, int nbufs, uint64_t n, const rt_ew *ew)
{
    pl_dispatch d = {.shader = shader,
                     .nspec = 1,
                     .nbufs = nbufs,
                     .push = push,
                     .push_size = push_size,
                     .ew = ew};
    d.spec[0] = op;
    for (int i = 0; i < nbufs; i++) {
        d.bufs[i] = bufs[i];
        d.writes[i] = i == nbufs - 1;
    }
    pl_grid(n, 256, d.groups);
    return pl_run(ctx, &d);
}

int op_device_convert(const vkt_tensor *x, vkt_dtype to, const vkt_tensor **out, vkt_tensor **owned)
{
    *owned = NULL;
    *out = x;
    if (x->dtype == to)
        return VKT_OK;
    vkt_tensor *t;
    TRY(tn_new(x->ctx, to, x->shape, x->rank, &t));
    int s = tn_alloc_device(t);
    if (s == VKT_OK) {
        ew_push pc = {.n = (uint32_t)x->numel, .contig = 1};
        tn_storage *bufs[2] = {x->st, t->st};
        s = op_dispatch(x->ctx, convert_shaders[x->dtype][to], 0, &pc, sizeof pc, bufs, 2,
                        x->numel);
    }
    if (s != VKT_OK) {
        vkt_tensor_free(t);
        return s;
    }
    *owned = t;
    *out = t;
    return VKT_OK;
}

int op_host_convert(const ref_view *x, vkt_dtype to, ref_view *out, void **owned)
{
    *owned = NULL;
    *out = *x;
    if (x->dtype == to)
        return VKT_OK;
    size_t n = ref_numel(x);
    void *buf = malloc(n ? n * vkt_dtype_size(to) : 1);
    if (!buf)
        return err_set(VKT_ENOMEM, "out of host memory");
    out->dtype = to;
    out->data = buf;
    int s = ref_convert(x, out);
    if (s != VKT_OK) {
        free(buf);
        return s;
    }
    *owned = buf;
    return VKT_OK;
}

int op_host_convert_n(const ref_view *in, int n, vkt_dtype to, ref_view *out, void **owned)
{
    for (int i = 0; i < n; i++)
        owned[i] = NULL;
    for (int i = 0; i < n; i++)
        TRY(op_host_convert(&in[i], to, &out[i], &owned[i]));
    return VKT_OK;
}

/* create.c — zeros, full and iota. Contents are made by the host reference and
 * uploaded: creation is data entry, not an op, so it counts in no statistics
 * and never reaches the fallback exit. */
#include <stdio.h>
#include <stdlib.h>

#include "core.h"

static int create(vkt_ctx *ctx, vkt_dtype dtype, const int64_t *shape, int rank, double value,
                  int iota_axis, bool iota, const char *what, vkt_tensor **out)
{
    err_clear();
    if (!ctx || !out)
        return err_set(VKT_EINVAL, "vkt_%s: ctx or out is NULL", what);
    *out = NULL;
    char name[32];
    snprintf(name, sizeof name, "vkt_%s", what);
    TRY(tn_check_args(dtype, shape, rank, name));
    vkt_tensor *t;
    TRY(tn_new(ctx, dtype, shape, rank, &t));
    if (iota && iota_axis != VKT_ALL_AXES && (iota_axis < -rank || iota_axis >= rank)) {
        vkt_tensor_free(t);
        return err_set(VKT_EAXIS, "vkt_iota: axis %d is out of range for rank %d", iota_axis, rank);
    }
    void *data = calloc(1, t->nbytes ? t->nbytes : 1);
    int s = data ? VKT_OK : err_set(VKT_ENOMEM, "vkt_%s: out of host memory", what);
    if (s == VKT_OK) {
        ref_view v = tn_view(t, data);
        if (iota)
            s = ref_iota(&v, iota_axis == VKT_ALL_AXES || iota_axis >= 0 ? iota_axis
                                                                         : iota_axis + rank);
        else if (value != 0.0)
            s = ref_fill(&v, value);
    }
    if (s == VKT_OK)
        s = tn_alloc_device(t);
    if (s == VKT_OK)
        s = tn_upload(t, data, t->nbytes);
    free(data);
    if (s != VKT_OK) {
        vkt_tensor_free(t);
        return s;
    }
    *out = t;
    return VKT_OK;
}

VKT_API int vkt_zeros(vkt_ctx *ctx, vkt_dtype dtype, const int64_t *shape, int rank,
                      vkt_tensor **out)
{
    return create(ctx, dtype, shape, rank, 0.0, 0, false, "zeros", out);
}

VKT_API int vkt_full(vkt_ctx *ctx, vkt_dtype dtype, const int64_t *shape, int rank, double value,
                     vkt_tensor **out)
{
    return create(ctx, dtype, shape, rank, value, 0, false, "full", out);
}

VKT_API int vkt_iota(vkt_ctx *ctx, vkt_dtype dtype, const int64_t *shape, int rank, int axis,
                     vkt_tensor **out)
{
    return create(ctx, dtype, shape, rank, 0.0, axis, true, "iota", out);
}

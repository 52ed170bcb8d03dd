/* tensor.c — tensors, their shared storage, residency moves and transfers. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

static const size_t dtype_sizes[VKT_NUM_DTYPES] = {4, 8, 4, 1};
static const char *const dtype_names[VKT_NUM_DTYPES] = {"f32", "f64", "s32", "u8"};

VKT_API size_t vkt_dtype_size(vkt_dtype dtype)
{
    return (unsigned)dtype < VKT_NUM_DTYPES ? dtype_sizes[dtype] : 0;
}

VKT_API const char *vkt_dtype_name(vkt_dtype dtype)
{
    return (unsigned)dtype < VKT_NUM_DTYPES ? dtype_names[dtype] : NULL;
}

int tn_check_shape(const int64_t *shape, int rank, const char *what)
{
    if (rank < 0 || rank > VKT_MAX_RANK)
        return err_set(VKT_ESHAPE, "%s: rank %d is outside 0..%d", what, rank, VKT_MAX_RANK);
    if (rank > 0 && !shape)
        return err_set(VKT_EINVAL, "%s: shape is NULL for rank %d", what, rank);
    unsigned __int128 n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0)
            return err_set(VKT_ESHAPE, "%s: dimension %d is negative (%lld)", what, i,
                           (long long)shape[i]);
        n *= (uint64_t)shape[i];
        if (n > ((unsigned __int128)1 << 40))
            return err_set(VKT_ESHAPE, "%s: %d-d shape has too many elements", what, rank);
    }
    return VKT_OK;
}

/* The creation functions check their arguments under their own name, so the
 * message says which call was wrong; tn_new repeats the check for ops. */
int tn_check_args(vkt_dtype dtype, const int64_t *shape, int rank, const char *what)
{
    if ((unsigned)dtype >= VKT_NUM_DTYPES)
        return err_set(VKT_EDTYPE, "%s: invalid dtype %d", what, (int)dtype);
    return tn_check_shape(shape, rank, what);
}

int tn_check_tensor(const vkt_tensor *t, const char *op, const char *arg)
{
    if (!t)
        return err_set(VKT_EINVAL, "vkt_%s: %s is NULL", op, arg);
    if (!t->st)
        return err_set(VKT_EINVAL, "vkt_%s: %s has no contents (a failed op's result?)", op, arg);
    return VKT_OK;
}

int tn_new(vkt_ctx *ctx, vkt_dtype dtype, const int64_t *shape, int rank, vkt_tensor **out)
{
    if ((unsigned)dtype >= VKT_NUM_DTYPES)
        return err_set(VKT_EDTYPE, "invalid dtype %d", (int)dtype);
    TRY(tn_check_shape(shape, rank, "tensor"));
    vkt_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return err_set(VKT_ENOMEM, "out of host memory");
    t->ctx = ctx;
    t->dtype = dtype;
    t->rank = rank;
    t->numel = 1;
    for (int i = 0; i < rank; i++) {
        t->shape[i] = shape[i];
        t->numel *= (size_t)shape[i];
    }
    t->nbytes = t->numel * dtype_sizes[dtype];
    *out = t;
    return VKT_OK;
}

static tn_storage *storage_new(size_t nbytes)
{
    tn_storage *st = calloc(1, sizeof *st);
    if (st) {
        st->refs = 1;
        st->nbytes = nbytes;
    }
    return st;
}

static void storage_destroy(vkt_ctx *ctx, tn_storage *st)
{
    if (st->where == VKT_DEVICE)
        mem_free(ctx, &st->dev);
    free(st->host);
    free(st);
}

static void storage_release(vkt_ctx *ctx, tn_storage *st)
{
    if (!st || --st->refs > 0)
        return;
    if (st->holds > 0) {
        st->orphan = true; /* a graph still uses the memory */
        return;
    }
    storage_destroy(ctx, st);
}

void tn_unhold(vkt_ctx *ctx, tn_storage *st)
{
    if (--st->holds == 0 && st->orphan)
        storage_destroy(ctx, st);
}

int tn_alloc_device(vkt_tensor *t)
{
    tn_storage *st = storage_new(t->nbytes);
    if (!st)
        return err_set(VKT_ENOMEM, "out of host memory");
    int s = rt_alloc(t->ctx, t->nbytes, MEM_DEVICE, &st->dev);
    if (s != VKT_OK) {
        free(st);
        return s;
    }
    st->where = VKT_DEVICE;
    t->st = st;
    return VKT_OK;
}

void tn_adopt_host(vkt_tensor *t, void *data)
{
    tn_storage *st = storage_new(t->nbytes);
    if (!st) {
        free(data);
        return;
    }
    st->where = VKT_HOST;
    st->host = data;
    t->st = st;
}

/* Host bytes into t's device storage. Fresh storage needs no ordering; else
 * mapped memory waits for recorded work that uses it, and a staged copy goes
 * behind a barrier when recorded work read or wrote it. */
static int write_device(vkt_tensor *t, const void *data, bool fresh)
{
    vkt_ctx *ctx = t->ctx;
    tn_storage *st = t->st;
    if (t->nbytes == 0)
        return VKT_OK;
    if (st->dev.mapped) {
        if (!fresh && ctx->recording &&
            (st->write_seq > ctx->submit_seq || st->read_seq > ctx->submit_seq))
            TRY(rt_flush(ctx));
        memcpy(st->dev.mapped, data, t->nbytes);
        return VKT_OK;
    }
    mem_range staging;
    TRY(rt_alloc(ctx, t->nbytes, MEM_UPLOAD, &staging));
    memcpy(staging.mapped, data, t->nbytes);
    int s = fresh ? rt_upload_const(ctx, staging.buffer, staging.offset, st, t->nbytes)
                  : rt_copy(ctx, staging.buffer, staging.offset, NULL, st->dev.buffer,
                            st->dev.offset, st, t->nbytes);
    mem_free(ctx, &staging);
    return s;
}

int tn_upload(vkt_tensor *t, const void *data, size_t nbytes)
{
    (void)nbytes; /* always t->nbytes: the callers fill whole tensors */
    return write_device(t, data, true);
}

int tn_write(vkt_tensor *t, const void *src)
{
    TRY(rt_not_recording(t->ctx, "vkt_tensor_write"));
    if (t->st->where == VKT_HOST) {
        if (t->nbytes)
            memcpy(t->st->host, src, t->nbytes);
        return VKT_OK;
    }
    return write_device(t, src, false);
}

int tn_copy(vkt_tensor *dst, const vkt_tensor *src)
{
    vkt_ctx *ctx = dst->ctx;
    if (dst->nbytes == 0 || dst->st == src->st)
        return VKT_OK;
    if (src->st->where == VKT_HOST)
        return tn_write(dst, src->st->host);
    if (dst->st->where == VKT_HOST)
        return tn_download(src, dst->st->host);
    return rt_copy(ctx, src->st->dev.buffer, src->st->dev.offset, src->st, dst->st->dev.buffer,
                   dst->st->dev.offset, dst->st, dst->nbytes);
}

int tn_download(const vkt_tensor *t, void *dst)
{
    vkt_ctx *ctx = t->ctx;
    tn_storage *st = t->st;
    if (t->nbytes == 0)
        return VKT_OK;
    if (st->where == VKT_HOST) {
        memcpy(dst, st->host, t->nbytes);
        return VKT_OK;
    }
    TRY(rt_not_recording(ctx, "reading a tensor to the host"));
    if (st->dev.mapped) {
        if (st->write_seq > 0 && ctx->recording)
            TRY(rt_flush(ctx));
        memcpy(dst, st->dev.mapped, t->nbytes);
        return VKT_OK;
    }
    mem_range staging;
    TRY(rt_alloc(ctx, t->nbytes, MEM_STAGING, &staging));
    int s = rt_copy(ctx, st->dev.buffer, st->dev.offset, st, staging.buffer, staging.offset, NULL,
                    t->nbytes);
    if (s == VKT_OK)
        s = rt_flush(ctx);
    if (s == VKT_OK)
        memcpy(dst, staging.mapped, t->nbytes);
    mem_free(ctx, &staging);
    return s;
}

int tn_move(vkt_tensor *t, vkt_residency where)
{
    tn_storage *st = t->st;
    if (st->where == where)
        return VKT_OK;
    TRY(rt_not_recording(t->ctx, "moving a tensor between host and device"));
    if (st->holds > 0)
        return err_set(VKT_EGRAPH,
                       "vkt_tensor_move: a graph binds this tensor's storage (it or a view of "
                       "it); its launches would use the device memory the move frees. Free the "
                       "graph first");
    if (where == VKT_HOST) {
        void *h = malloc(st->nbytes ? st->nbytes : 1);
        if (!h)
            return err_set(VKT_ENOMEM, "out of host memory");
        /* Views share storage, so the whole storage moves, not t's slice of it. */
        vkt_tensor whole = *t;
        whole.nbytes = st->nbytes;
        int s = tn_download(&whole, h);
        if (s != VKT_OK) {
            free(h);
            return s;
        }
        mem_free(t->ctx, &st->dev);
        st->host = h;
        st->where = VKT_HOST;
        return VKT_OK;
    }
    mem_range r;
    TRY(rt_alloc(t->ctx, st->nbytes, MEM_DEVICE, &r));
    st->dev = r;
    st->where = VKT_DEVICE;
    st->write_seq = st->read_seq = 0;
    vkt_tensor whole = *t;
    whole.nbytes = st->nbytes;
    int s = tn_upload(&whole, st->host, st->nbytes);
    if (s != VKT_OK)
        return s;
    free(st->host);
    st->host = NULL;
    return VKT_OK;
}

ref_view tn_view(const vkt_tensor *t, void *data)
{
    ref_view v;
    memset(&v, 0, sizeof v);
    v.dtype = t->dtype;
    v.rank = t->rank;
    memcpy(v.shape, t->shape, sizeof(int64_t) * (size_t)t->rank);
    v.data = data;
    return v;
}

VKT_API int vkt_tensor_from_host(vkt_ctx *ctx, vkt_dtype dtype, const int64_t *shape, int rank,
                                 const void *data, vkt_tensor **out)
{
    err_clear();
    if (!ctx || !out)
        return err_set(VKT_EINVAL, "vkt_tensor_from_host: ctx or out is NULL");
    *out = NULL;
    TRY(tn_check_args(dtype, shape, rank, "vkt_tensor_from_host"));
    vkt_tensor *t;
    TRY(tn_new(ctx, dtype, shape, rank, &t));
    if (!data && t->numel) {
        size_t n = t->numel;
        free(t);
        return err_set(VKT_EINVAL, "vkt_tensor_from_host: data is NULL for %zu elements", n);
    }
    int s = tn_alloc_device(t);
    if (s == VKT_OK)
        s = tn_upload(t, data, t->nbytes);
    if (s != VKT_OK) {
        vkt_tensor_free(t);
        return s;
    }
    *out = t;
    return VKT_OK;
}

VKT_API int vkt_tensor_read(const vkt_tensor *t, void *dst, size_t nbytes)
{
    err_clear();
    TRY(tn_check_tensor(t, "tensor_read", "t"));
    if (nbytes != t->nbytes)
        return err_set(VKT_EINVAL, "vkt_tensor_read: buffer holds %zu bytes, tensor has %zu",
                       nbytes, t->nbytes);
    if (!dst && nbytes)
        return err_set(VKT_EINVAL, "vkt_tensor_read: dst is NULL");
    return tn_download(t, dst);
}

VKT_API int vkt_tensor_write(vkt_tensor *t, const void *src, size_t nbytes)
{
    err_clear();
    TRY(tn_check_tensor(t, "tensor_write", "t"));
    if (nbytes != t->nbytes)
        return err_set(VKT_EINVAL, "vkt_tensor_write: %zu bytes for a tensor of %zu", nbytes,
                       t->nbytes);
    if (!src && nbytes)
        return err_set(VKT_EINVAL, "vkt_tensor_write: src is NULL");
    return tn_write(t, src);
}

VKT_API int vkt_tensor_move(vkt_tensor *t, vkt_residency where)
{
    err_clear();
    TRY(tn_check_tensor(t, "tensor_move", "t"));
    if (where != VKT_DEVICE && where != VKT_HOST)
        return err_set(VKT_EINVAL, "vkt_tensor_move: residency %d is not VKT_DEVICE or VKT_HOST",
                       (int)where);
    return tn_move(t, where);
}

VKT_API void vkt_tensor_free(vkt_tensor *t)
{
    if (!t)
        return;
    storage_release(t->ctx, t->st);
    free(t);
}

VKT_API vkt_dtype vkt_tensor_dtype(const vkt_tensor *t)
{
    return t ? t->dtype : VKT_F32;
}

VKT_API int vkt_tensor_rank(const vkt_tensor *t)
{
    return t ? t->rank : 0;
}

VKT_API const int64_t *vkt_tensor_shape(const vkt_tensor *t)
{
    return t ? t->shape : NULL;
}

VKT_API size_t vkt_tensor_numel(const vkt_tensor *t)
{
    return t ? t->numel : 0;
}

VKT_API size_t vkt_tensor_nbytes(const vkt_tensor *t)
{
    return t ? t->nbytes : 0;
}

VKT_API vkt_residency vkt_tensor_residency(const vkt_tensor *t)
{
    return t && t->st ? t->st->where : VKT_DEVICE;
}

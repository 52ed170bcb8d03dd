/* vkt.c - libvkt's exits: host_result(out, data, nbytes), a fallback's result, and
 * host_resident_op(out, nbytes), host work on host-resident input. The result tensor's shape
 * and dtype come from the backend's own accessors; a fallback's time from its own clock
 * (it starts when libvkt decides to fall back, before the download and the host reference),
 * else from the entry to the exit. A refused fallback returns the row's refusal status
 * (VKT_EREFUSED), which fails the op with a message naming it. */
#include <stdio.h>

#include "readers.h"

static void vkt_bind(fbc_bmod *bm)
{
    bm->sizes = true;
}

static bool vkt_before(fbc_call *c)
{
    fbc_event *ev = c->ev;
    fbc_reader_kind(c);
    const void *out = (const void *)c->arg[0];
    ev->nbytes = ev->kind == FBC_HOST ? (size_t)c->arg[1] : (size_t)c->arg[2];
    int rank, dtype;
    const int64_t *dims;
    if (fbc_bmod_shape(c->bm, out, &rank, &dims, &dtype) && rank >= 0 && rank <= FBC_MAX_RANK &&
        (rank == 0 || dims)) {
        ev->has_shape = true;
        ev->shape.rank = rank;
        ev->shape.dtype = dtype;
        ev->shape.count = 0;
        for (int i = 0; i < rank; i++)
            ev->shape.dims[i] = dims[i];
    }
    fbc_reader_start(c);
    return true;
}

static void vkt_after(fbc_call *c, uint64_t ns)
{
    (void)c, (void)ns;
}

static bool vkt_refuse(fbc_call *c, const char *why)
{
    (void)why; /* libvkt words its own error, naming the op */
    const fbr_backend *row = c->bm->row;
    if (!row->has_refuse || row->refuse_throw || c->ev->kind != FBC_FALLBACK)
        return false;
    c->ret = (uintptr_t)(intptr_t)row->refuse;
    return true;
}

const fbc_reader_ops FBC_READER_OPS(VKT) = {vkt_bind, vkt_before, vkt_after, vkt_refuse, NULL};

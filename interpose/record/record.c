/* record.c - one event: capture the stack, read the result's shape, count it in the process
 * census and in every in-process census open on this thread or the process. Raw addresses
 * only; nothing here names a frame or decides a policy (hooks/ does, with what this returns). */
#include <string.h>

#include "record.h"

static bool shape_of(const void *out, fbc_shape *s)
{
    const fbc_backend *b = fbc_backend_get();
    if (!out || !b->rank || !b->shape || !b->dtype)
        return false;
    int rank = b->rank(out);
    const int64_t *dims = b->shape(out);
    if (rank < 0 || rank > FBC_MAX_RANK || (rank > 0 && !dims))
        return false;
    s->rank = rank;
    s->dtype = b->dtype(out);
    for (int i = 0; i < rank; i++)
        s->dims[i] = dims[i];
    s->count = 0;
    return true;
}

fbc_recorded fbc_record(fbc_kind kind, const void *out, size_t nbytes, uintptr_t fn, uint64_t ns)
{
    fbc_recorded r = {NULL, false};
    fbc_event ev; /* not zeroed: a memset of 3 KiB per event is measurable */
    ev.kind = kind;
    ev.pad_ = 0;
    ev.npy = 0;
    ev.frames[0] = fn; /* the backend's own entry, as if called without the shim */
    ev.nframes = 1 + (uint32_t)fbc_capture(ev.frames + 1, fbc_cfg.depth - 1);
    ev.nbytes = nbytes;
    ev.ns = ns;
    ev.has_shape = shape_of(out, &ev.shape);
    if (__atomic_load_n(&fbc_process_on, __ATOMIC_RELAXED)) {
        fbc_shard *s = fbc_t.shard ? fbc_t.shard : fbc_shard_claim();
        if (s) {
            pthread_mutex_lock(&s->lock);
            r.entry = fbc_table_add(&s->table, &ev, &r.fresh);
            pthread_mutex_unlock(&s->lock);
        }
        if (r.fresh) {
            pthread_mutex_lock(&fbc_global_lock);
            fbc_modmap_refresh(); /* a crash dump must be able to place every frame */
            pthread_mutex_unlock(&fbc_global_lock);
        }
    }
    fbc_scope_add(&ev);
    return r;
}

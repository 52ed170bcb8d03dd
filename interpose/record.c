/* record.c - one event: capture the stack, read the result's shape, count it in the process
 * census and in every in-process census open on this thread. Raw addresses only. */
#include <string.h>

#include "shim.h"

__thread fbc_thread fbc_t __attribute__((tls_model("initial-exec")));
bool fbc_process_on;

void fbc_thread_decide(void)
{
    fbc_init();
    fbc_t.state = (__atomic_load_n(&fbc_process_on, __ATOMIC_ACQUIRE) || fbc_t.scope) ? FBC_T_ON
                                                                                        : FBC_T_OFF;
}

static bool shape_of(const void *out, fbc_shape *s)
{
    const fbc_backend *b = fbc_vkt_get();
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

void fbc_record(fbc_kind kind, const void *out, size_t nbytes, uintptr_t fn)
{
    fbc_event ev; /* not zeroed: a memset of 2 KiB per event is measurable */
    ev.kind = kind;
    ev.frames[0] = fn; /* the backend's own entry, as if called without the shim */
    ev.nframes = 1 + (uint32_t)fbc_capture(ev.frames + 1, fbc_cfg.depth - 1);
    ev.nbytes = nbytes;
    ev.has_shape = shape_of(out, &ev.shape);
    if (__atomic_load_n(&fbc_process_on, __ATOMIC_RELAXED)) {
        bool fresh = false;
        fbc_shard *s = fbc_t.shard ? fbc_t.shard : fbc_shard_claim();
        fbc_entry *e = NULL;
        if (s) {
            pthread_mutex_lock(&s->lock);
            e = fbc_table_add(&s->table, &ev, &fresh);
            pthread_mutex_unlock(&s->lock);
        }
        if (fresh) {
            pthread_mutex_lock(&fbc_global_lock);
            fbc_modmap_refresh(); /* a crash dump must be able to place every frame */
            pthread_mutex_unlock(&fbc_global_lock);
        }
        if (fresh && e && kind == FBC_FALLBACK && fbc_cfg.mode != FBC_MODE_COUNT)
            fbc_mode_check(e);
    }
    if (fbc_t.scope)
        fbc_census_add(fbc_t.scope, &ev); /* and to every enclosing scope */
}

/* record.c - one event: capture the stack, read the result's shape, count it in the process
 * census and in every in-process census open on this thread or the process. Raw addresses
 * only; nothing here names a frame or decides a policy (hooks/ does, with what this returns). */
#include <stdlib.h>
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

/* Each thread's event, 3 KiB, on the heap rather than on a stack that may be 16 KiB. */
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static __thread fbc_event *mine __attribute__((tls_model("initial-exec")));

static void release(void *p)
{
    if (mine == p)
        mine = NULL;
    free(p);
}

static void make_key(void)
{
    if (pthread_key_create(&key, release) != 0)
        key = (pthread_key_t)-1;
}

static fbc_event *event(void)
{
    if (__builtin_expect(mine != NULL, 1))
        return mine;
    pthread_once(&key_once, make_key);
    mine = malloc(sizeof *mine);
    if (mine && key != (pthread_key_t)-1)
        pthread_setspecific(key, mine);
    return mine;
}

fbc_recorded fbc_record(fbc_kind kind, const void *out, size_t nbytes, uintptr_t fn, uint64_t ns)
{
    fbc_recorded r = {NULL, false};
    fbc_event *ev = event(); /* not zeroed: a memset of 3 KiB per event is measurable */
    if (!ev)
        return r;
    ev->kind = kind;
    ev->pad_ = 0;
    ev->frames[0] = fn; /* the backend's own entry, as if called without the shim */
    ev->nframes = 1 + (uint32_t)fbc_capture(ev->frames + 1, fbc_cfg.depth - 1);
    ev->npy = (uint32_t)fbc_py_capture(ev->frames + ev->nframes, FBC_MAX_PY);
    ev->nbytes = nbytes;
    ev->ns = ns;
    ev->has_shape = shape_of(out, &ev->shape);
    if (__atomic_load_n(&fbc_process_on, __ATOMIC_RELAXED)) {
        fbc_shard *s = fbc_t.shard ? fbc_t.shard : fbc_shard_claim();
        if (s) {
            pthread_mutex_lock(&s->lock);
            r.entry = fbc_table_add(&s->table, ev, &r.fresh);
            pthread_mutex_unlock(&s->lock);
        }
        if (r.fresh) {
            __atomic_add_fetch(&fbc_stacks_made, 1, __ATOMIC_RELAXED);
            pthread_mutex_lock(&fbc_global_lock);
            fbc_modmap_refresh(); /* a crash dump must be able to place every frame */
            pthread_mutex_unlock(&fbc_global_lock);
        }
    }
    fbc_scope_add(ev);
    return r;
}

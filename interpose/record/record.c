/* record.c - one event: capture the stack, count it in the process census and in every
 * in-process census open on this thread or the process, and add its time once its call is
 * over. Raw addresses only; nothing here names a frame or decides a policy (hooks/ and the
 * readers do, with what this returns). */
#include <stdlib.h>
#include <string.h>

#include "record.h"

/* Each thread's events, one per exit call in progress, 3 KiB each, on the heap rather than on
 * a stack that may be 16 KiB; with the frames of the calls that own them. */
typedef struct {
    fbc_event *ev[FBC_MAX_NEST];
    uintptr_t frame[FBC_MAX_NEST];
    int depth;
} nest;

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static __thread nest *mine __attribute__((tls_model("initial-exec")));

static void release(void *p)
{
    nest *n = p;
    if (mine == n)
        mine = NULL;
    for (int i = 0; i < FBC_MAX_NEST; i++)
        free(n->ev[i]);
    free(n);
}

static void make_key(void)
{
    if (pthread_key_create(&key, release) != 0)
        key = (pthread_key_t)-1;
}

static nest *thread_nest(void)
{
    if (__builtin_expect(mine != NULL, 1))
        return mine;
    pthread_once(&key_once, make_key);
    mine = calloc(1, sizeof *mine);
    if (mine && key != (pthread_key_t)-1)
        pthread_setspecific(key, mine);
    return mine;
}

fbc_event *fbc_record_enter(uintptr_t frame)
{
    nest *n = thread_nest();
    if (!n)
        return NULL;
    /* The stack grows down: a call still in progress lies above this frame. */
    while (n->depth > 0 && n->frame[n->depth - 1] <= frame)
        n->depth--;
    if (n->depth == FBC_MAX_NEST)
        return NULL;
    int d = n->depth;
    if (!n->ev[d] && !(n->ev[d] = malloc(sizeof *n->ev[d]))) /* not zeroed: 3 KiB a call */
        return NULL;
    n->frame[d] = frame;
    n->depth = d + 1;
    return n->ev[d];
}

void fbc_record_leave(void)
{
    if (mine && mine->depth > 0)
        mine->depth--;
}

void fbc_record_capture(fbc_event *ev, uintptr_t fn)
{
    ev->kind = FBC_FALLBACK;
    ev->backend = 0;
    ev->op = 0;
    ev->origin = fbc_origin_now();
    ev->frames[0] = fn; /* the backend's own entry, as if called without the shim */
    ev->nframes = 1 + (uint32_t)fbc_capture(ev->frames + 1, fbc_cfg.depth - 1);
    ev->npy = (uint32_t)fbc_py_capture(ev->frames + ev->nframes, FBC_MAX_PY);
    ev->nbytes = 0;
    ev->largest = 0;
    ev->ns = 0;
    ev->has_shape = false;
}

void fbc_record_within(fbc_event *ev, uintptr_t fn, const fbc_event *outer)
{
    uint32_t room = (uint32_t)fbc_cfg.depth - 1, n = outer->nframes < room ? outer->nframes : room;
    ev->kind = FBC_FALLBACK;
    ev->backend = 0;
    ev->op = 0;
    ev->origin = outer->origin;
    ev->frames[0] = fn;
    memcpy(ev->frames + 1, outer->frames, n * sizeof *ev->frames);
    memcpy(ev->frames + 1 + n, outer->frames + outer->nframes, outer->npy * sizeof *ev->frames);
    ev->nframes = 1 + n;
    ev->npy = outer->npy;
    ev->nbytes = 0;
    ev->largest = 0;
    ev->ns = 0;
    ev->has_shape = false;
}

fbc_recorded fbc_record_count(const fbc_event *ev)
{
    fbc_recorded r = {NULL, false, __atomic_load_n(&fbc_shards_epoch, __ATOMIC_RELAXED)};
    if (__atomic_load_n(&fbc_proc.on, __ATOMIC_RELAXED)) {
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

void fbc_record_time(const fbc_event *ev, fbc_recorded r, uint64_t ns)
{
    fbc_shard *s = fbc_t.shard;
    /* The entry lives in this thread's shard, unless a fork since emptied it. */
    if (r.entry && s && r.epoch == __atomic_load_n(&fbc_shards_epoch, __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&s->lock);
        fbc_entry_time(r.entry, ns);
        pthread_mutex_unlock(&s->lock);
    }
    fbc_scope_time(ev, ns);
}

/* ---- op names the readers find ------------------------------------------------------ */

typedef struct {
    UT_hash_handle hh;
    char s[];
} op_name;

static op_name *ops;
static pthread_mutex_t ops_lock = PTHREAD_MUTEX_INITIALIZER;

const char *fbc_record_op(const char *name)
{
    if (!name)
        return NULL;
    size_t len = strlen(name);
    pthread_mutex_lock(&ops_lock);
    op_name *o;
    HASH_FIND(hh, ops, name, len, o);
    if (!o && (o = malloc(sizeof *o + len + 1))) {
        memcpy(o->s, name, len + 1);
        HASH_ADD_KEYPTR(hh, ops, o->s, len, o);
    }
    pthread_mutex_unlock(&ops_lock);
    return o ? o->s : NULL;
}

void fbc_record_fork(int phase)
{
    fbc_mutex_fork(&ops_lock, phase);
    fbc_origin_fork(phase);
}

/* origin.c - where a thread's work came from (record.h). PyTorch runs a device's backward on
 * autograd's own thread, whose stack holds nothing of the user's; the line that started it is
 * the caller of Engine::execute on the thread that waits for it. Other threads have the line
 * that started them. Both are taken where they happen (one stack walk per backward call or
 * thread start, raw frames only) and named only if a fallback ever carries them. A backward's
 * origin is refined by the node autograd runs when the fallback happens (its name, and the
 * forward op's stack where anomaly mode kept one; readers/torch.c). */
#include <stdlib.h>
#include <string.h>

#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = fbc_hash_words((keyptr), (keylen)))

#include "record.h"

#define MAX_ACTIVE 16 /* backwards in progress at once in the process that are tracked */

static fbc_origin *origins; /* interned, never freed: events keep pointers to them */
static pthread_mutex_t origin_lock = PTHREAD_MUTEX_INITIALIZER;

/* The backwards in progress, oldest first; current: the newest, read by every event. */
static const fbc_origin *active[MAX_ACTIVE];
static unsigned nactive;
static const fbc_origin *current;

static __thread unsigned in_backward __attribute__((tls_model("initial-exec")));
static __thread const fbc_origin *started_by __attribute__((tls_model("initial-exec")));
static __thread void *running_node __attribute__((tls_model("initial-exec")));

/* Refined origins, by what refines them (the key: three pointers, interned all). */
typedef struct {
    UT_hash_handle hh;
    struct {
        const fbc_origin *base, *forward;
        const char *node;
    } key;
    fbc_origin *o;
} refined;
static refined *refinements;

const char *fbc_origin_name(uint32_t kind)
{
    return kind == FBC_ORIGIN_BACKWARD ? "backward" : kind == FBC_ORIGIN_THREAD ? "thread" : NULL;
}

const fbc_origin *fbc_origin_take(fbc_origin_kind kind)
{
    uintptr_t words[4 + FBC_MAX_DEPTH + FBC_MAX_PY];
    uint32_t *head = (uint32_t *)words;
    uintptr_t *frames = words + 2;
    int depth = fbc_cfg.depth > 0 && fbc_cfg.depth <= FBC_MAX_DEPTH ? fbc_cfg.depth : 64;
    int n = fbc_capture(frames, depth);
    if (n < 0)
        n = 0;
    int npy = fbc_py_capture(frames + n, FBC_MAX_PY);
    if (n + npy == 0)
        return NULL;
    head[0] = kind;
    head[1] = (uint32_t)n;
    head[2] = (uint32_t)npy;
    head[3] = 0;
    size_t klen = 4 * sizeof(uint32_t) + (size_t)(n + npy) * sizeof(uintptr_t);
    fbc_origin *o;
    pthread_mutex_lock(&origin_lock);
    HASH_FIND(hh, origins, words, klen, o);
    if (!o && (o = malloc(sizeof *o + (size_t)(n + npy) * sizeof(uintptr_t)))) {
        memcpy(&o->kind, words, klen);
        o->node = NULL;
        o->forward = NULL;
        HASH_ADD(hh, origins, kind, klen, o);
    }
    pthread_mutex_unlock(&origin_lock);
    return o;
}

void fbc_origin_begin(const fbc_origin *o)
{
    in_backward++;
    pthread_mutex_lock(&origin_lock);
    if (nactive < MAX_ACTIVE)
        active[nactive++] = o;
    __atomic_store_n(&current, o, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&origin_lock);
}

void fbc_origin_end(const fbc_origin *o)
{
    if (in_backward)
        in_backward--;
    pthread_mutex_lock(&origin_lock);
    for (unsigned i = nactive; i-- > 0;)
        if (active[i] == o) {
            memmove(active + i, active + i + 1, (nactive - i - 1) * sizeof *active);
            nactive--;
            break;
        }
    __atomic_store_n(&current, nactive ? active[nactive - 1] : NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&origin_lock);
}

void fbc_origin_thread(const fbc_origin *o)
{
    started_by = o;
}

uintptr_t fbc_origin_now(void)
{
    /* A thread inside a backward of its own runs its CPU part on its own stack, which has
     * the user's frames: only the others work for it. */
    const fbc_origin *o = in_backward ? NULL : __atomic_load_n(&current, __ATOMIC_ACQUIRE);
    return (uintptr_t)(o ? o : started_by);
}

void fbc_origin_fork(int phase)
{
    fbc_mutex_fork(&origin_lock, phase);
}

void *fbc_origin_node_enter(void *node)
{
    void *previous = running_node;
    running_node = node;
    return previous;
}

void fbc_origin_node_leave(void *previous)
{
    running_node = previous;
}

void *fbc_origin_node(void)
{
    return running_node;
}

const fbc_origin *fbc_origin_refine(const fbc_origin *o, const char *node,
                                    const fbc_origin *forward)
{
    if (!o || (!node && !forward))
        return o;
    refined k, *r;
    memset(&k, 0, sizeof k);
    k.key.base = o;
    k.key.forward = forward;
    k.key.node = node;
    size_t n = o->nframes + o->npy;
    pthread_mutex_lock(&origin_lock);
    HASH_FIND(hh, refinements, &k.key, sizeof k.key, r);
    if (!r && (r = malloc(sizeof *r)) && (r->o = malloc(sizeof *r->o + n * sizeof(uintptr_t)))) {
        r->key = k.key;
        memcpy(r->o, o, sizeof *o + n * sizeof(uintptr_t));
        r->o->node = node;
        r->o->forward = forward;
        HASH_ADD(hh, refinements, key, sizeof r->key, r);
    } else if (r && !r->o) {
        free(r);
        r = NULL;
    }
    pthread_mutex_unlock(&origin_lock);
    return r ? r->o : o;
}

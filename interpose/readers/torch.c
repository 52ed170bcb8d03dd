/* torch.c - PyTorch's boxed CPU fallback, at::native::cpu_fallback(const OperatorHandle &op,
 * Stack *stack, ...): the operator and the call's arguments on the boxed stack. Their layout is
 * the running libtorch's C++, so they are read by the torch adapter compiled against exactly
 * that libtorch (adapters/torch.cc), found beside the shim as
 * fbcount/torch-<build id of libtorch_cpu>.so or named by FBCOUNT_TORCH_ADAPTER. Without one
 * the call is still counted: the op is then named from the stack (at::_ops::<op>) and its
 * bytes are unknown. A refused fallback throws c10::Error through the adapter: PyTorch's own
 * error path, a RuntimeError in Python. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"
#include "torch_api.h" /* adapters/: the adapter's C interface */

typedef struct {
    int (*read)(const void *op, const void *stack, fbcount_torch_call *out);
    void (*refuse)(const char *message);
    int (*node)(const void *node, fbcount_torch_node_info *out);
} adapter;

#define GET(h, name, dst)                                                                          \
    do {                                                                                           \
        void *p_ = dlsym(h, name);                                                                 \
        memcpy(&(dst), &p_, sizeof p_);                                                            \
    } while (0)

static const char *build_id_of(uintptr_t base)
{
    for (size_t i = fbc_modmap_count(); i-- > 0;)
        if (fbc_modmap_at(i)->base == base)
            return fbc_modmap_at(i)->build_id;
    return "";
}

/* The adapter's file: FBCOUNT_TORCH_ADAPTER, else torch-<id>.so in fbcount/ beside the shim
 * (installed) or in adapters/ (the build tree), whichever exists. */
static bool adapter_path(const char *id, char *out, size_t cap)
{
    if (fbc_cfg.torch_adapter[0])
        return snprintf(out, cap, "%s", fbc_cfg.torch_adapter) < (int)cap;
    Dl_info me;
    if (!dladdr((void *)adapter_path, &me) || !me.dli_fname)
        return false;
    const char *slash = strrchr(me.dli_fname, '/');
    int dir = slash ? (int)(slash - me.dli_fname) : 1;
    static const char *const places[] = {"fbcount", "adapters"};
    for (size_t i = 0; i < sizeof places / sizeof *places; i++) {
        int n = snprintf(out, cap, "%.*s/%s/torch-%s.so", dir, slash ? me.dli_fname : ".",
                         places[i], id);
        if (n > 0 && (size_t)n < cap && access(out, R_OK) == 0)
            return true;
    }
    return false;
}

static void torch_bind(fbc_bmod *bm)
{
    fbc_modmap_refresh();
    const char *id = build_id_of(bm->base);
    char path[1200];
    bm->sizes = false;
    snprintf(bm->note, sizeof bm->note,
             "no adapter for this libtorch (libtorch_cpu build id %s): "
             "ops named from the stack, bytes unknown",
             id[0] ? id : "unknown");
    if (!id[0] || !adapter_path(id, path, sizeof path))
        return;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return; /* none built for this libtorch: the usual case for another install */
    int (*abi)(void);
    const char *(*built)(void);
    const char *(*dtype_name)(int);
    GET(h, "fbcount_torch_abi", abi);
    GET(h, "fbcount_torch_build_id", built);
    GET(h, "fbcount_torch_dtype_name", dtype_name);
    adapter *a = calloc(1, sizeof *a);
    if (a) {
        GET(h, "fbcount_torch_read", a->read);
        GET(h, "fbcount_torch_refuse", a->refuse);
        GET(h, "fbcount_torch_node", a->node);
    }
    /* Only the libtorch it was compiled against: another's IValue layout would be misread. */
    if (!a || !abi || abi() != FBCOUNT_TORCH_ABI || !built || strcmp(built(), id) || !a->read ||
        !a->refuse || !a->node || !dtype_name) {
        if (a && built && strcmp(built(), id))
            fbc_warn("FBCOUNT_TORCH_ADAPTER: %.600s was built for libtorch_cpu %.40s, not %.40s; "
                     "not used",
                     path, built(), id);
        free(a);
        dlclose(h);
        return;
    }
    bm->reader = a;
    bm->dtype_name = dtype_name;
    bm->sizes = true;
    snprintf(bm->note, sizeof bm->note, "adapter %.300s", path);
}

/* Anomaly mode's nodes by address, each with the sequence number it took when made: a node
 * made later at a freed node's address takes its place (made in anomaly mode) or differs in
 * its number (made outside it), so a node's forward is never another's. Direct-mapped: a node
 * whose place a later one took has no forward line. */
#define FORWARD_SLOTS 65536u
typedef struct {
    const void *node;
    uint64_t seq, thread; /* numbers are per thread: the pair names the node */
    const fbc_origin *forward;
} forward_slot;
static forward_slot *forwards;
static pthread_mutex_t forward_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t (*sequence_peek)(void);     /* at::sequence_number::peek() */
static uint64_t (*forward_thread_id)(void); /* at::RecordFunction::currentThreadId() */
static void *numbering_from;                /* the first assign_parent's address */

static forward_slot *forward_slot_of(const void *node)
{
    uintptr_t k = (uintptr_t)node;
    return &forwards[fbc_hash_words(&k, sizeof k) & (FORWARD_SLOTS - 1)];
}

/* Once, outside any lock of the shim's (the loader takes its own). */
static void find_numbering(void)
{
    Dl_info di;
    void *h = dladdr(__atomic_load_n(&numbering_from, __ATOMIC_RELAXED), &di) && di.dli_fname
                  ? dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD)
                  : NULL;
    if (!h)
        return; /* kept open: libtorch_cpu stays */
    GET(h, "_ZN2at15sequence_number4peekEv", sequence_peek);
    GET(h, "_ZN2at14RecordFunction15currentThreadIdEv", forward_thread_id);
    if (sequence_peek && forward_thread_id)
        forwards = calloc(FORWARD_SLOTS, sizeof *forwards);
    if (forwards) /* held by no thread of a fork's child */
        fbc_mutex_fork_register(&forward_lock);
}

void fbc_torch_node_made(void *node, void *fn)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (!__atomic_load_n(&numbering_from, __ATOMIC_RELAXED))
        __atomic_store_n(&numbering_from, fn, __ATOMIC_RELAXED);
    pthread_once(&once, find_numbering);
    if (!forwards)
        return;
    /* The node took its number (the thread's last) just before its constructor got here, and
     * its thread id is the one the constructor stores next; a node given another's number
     * (AccumulateGrad's) then fails the check at its fallbacks. */
    uint64_t seq = sequence_peek(), thread = forward_thread_id();
    const fbc_origin *o = seq ? fbc_origin_take(FBC_ORIGIN_FORWARD) : NULL;
    if (!o)
        return;
    pthread_mutex_lock(&forward_lock);
    *forward_slot_of(node) = (forward_slot){node, seq - 1, thread, o};
    pthread_mutex_unlock(&forward_lock);
}

static const fbc_origin *forward_of(const void *node, uint64_t seq, uint64_t thread)
{
    const fbc_origin *o = NULL;
    pthread_mutex_lock(&forward_lock);
    if (forwards) {
        const forward_slot *f = forward_slot_of(node);
        if (f->node == node && f->seq == seq && f->thread == thread)
            o = f->forward;
    }
    pthread_mutex_unlock(&forward_lock);
    return o;
}

/* A fallback in a backward, on a thread that works for the caller of backward(): its origin
 * names the node autograd was running, and the forward that made it where that is known. */
static void refine_origin(fbc_event *ev, const adapter *a)
{
    const fbc_origin *o = (const fbc_origin *)ev->origin;
    void *node = fbc_origin_node();
    fbcount_torch_node_info n;
    if (!o || o->kind != FBC_ORIGIN_BACKWARD || !node || a->node(node, &n) != 0)
        return;
    ev->origin = (uintptr_t)fbc_origin_refine(o, n.name[0] ? fbc_record_op(n.name) : NULL,
                                              forward_of(node, n.seq, n.thread));
}

static bool torch_before(fbc_call *c)
{
    fbc_event *ev = c->ev;
    fbc_reader_kind(c);
    const adapter *a = c->bm->reader;
    fbcount_torch_call t;
    if (a)
        refine_origin(ev, a);
    if (a && a->read((const void *)c->arg[0], (const void *)c->arg[1], &t) == 0) {
        ev->op = (uintptr_t)fbc_record_op(t.op);
        ev->nbytes = t.bytes;
        ev->largest = t.largest;
        if (t.has_shape && t.rank <= FBC_MAX_RANK) {
            ev->has_shape = true;
            ev->shape.rank = t.rank;
            ev->shape.dtype = t.dtype;
            ev->shape.count = 0;
            memcpy(ev->shape.dims, t.dims, (size_t)t.rank * sizeof *t.dims);
        }
    }
    fbc_reader_start(c);
    return true;
}

static void torch_after(fbc_call *c, uint64_t ns)
{
    (void)c, (void)ns;
}

static bool torch_refuse(fbc_call *c, const char *why)
{
    const adapter *a = c->bm->reader;
    if (!a)
        return false;
    a->refuse(why); /* throws */
    return true;
}

const fbc_reader_ops FBC_READER_OPS(TORCH) = {torch_bind, torch_before, torch_after, torch_refuse,
                                              NULL};

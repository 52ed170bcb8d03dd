/* ggml_copy.c - the copies ggml's scheduler makes of a split's inputs, whichever way each
 * takes:
 *   ggml_backend_tensor_copy(src, dst): a synchronous copy (the program's own inputs, and any
 *     copy the destination cannot make asynchronously: a weight op offload uploads from
 *     memory that is not pinned);
 *   the destination backend's cpy_tensor_async(backend_src, backend_dst, src, dst), which the
 *     scheduler calls through the backend's interface, where no symbol can be interposed: the
 *     reader points that entry at its own function, which calls the backend's and counts the
 *     copy when the backend made it (returned true). The Vulkan backend copies from pinned
 *     host memory there (the CPU splits' results);
 *   ggml_backend_tensor_set_async(backend, tensor, data, offset, size): the experts of a
 *     mixture-of-experts weight, uploaded piece by piece.
 * ggml_backend_tensor_copy_async is the public way to cpy_tensor_async, falling back to
 * ggml_backend_tensor_copy: its own call is no copy (the one it makes is counted), but it
 * wraps its destination backend.
 * A copy is a transfer named by its places and, in the scheduler's compute, the split it
 * feeds: "host -> Vulkan0 (split 1)", the bytes of the tensor. There every copy counts, as
 * the scheduler's own account (GGML_SCHED_DEBUG) lists them; outside it a copy between two
 * host buffers crosses nothing and set_async is not the scheduler's (llama.cpp's inputs). An
 * asynchronous copy's time is the time to queue it. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "ggml.h"

/* ---- counting ---------------------------------------------------------------------------- */

/* The interned name of a copy from place from to place to (split: the split it feeds, -1
 * outside a scheduler's compute): the thread's kept one, or formed and kept. */
static const char *copy_name(ggml_thread *th, const char *from, const char *to, int split)
{
    for (unsigned i = 0; th && i < GGML_COPY_NAMES; i++) {
        const ggml_copy_name *n = &th->names[i];
        if (n->op && n->split == split && !strcmp(n->from, from) && !strcmp(n->to, to))
            return n->op;
    }
    char op[160];
    if (split >= 0)
        snprintf(op, sizeof op, "%.60s -> %.60s (split %d)", from, to, split);
    else
        snprintf(op, sizeof op, "%.70s -> %.70s", from, to);
    const char *interned = fbc_record_op(op);
    /* Places named longer than a slot holds are formed each time. */
    if (th && interned && strlen(from) < sizeof th->names[0].from &&
        strlen(to) < sizeof th->names[0].to) {
        ggml_copy_name *n = &th->names[th->names_next++ % GGML_COPY_NAMES];
        strcpy(n->from, from);
        strcpy(n->to, to);
        n->split = split;
        n->op = interned;
    }
    return interned;
}

static void count_copy(fbc_call *c, const char *from, const char *to, size_t bytes)
{
    ggml_thread *th = ggml_thread_state();
    bool sched = th && th->sched;
    if (!sched && !strcmp(from, "host") && !strcmp(to, "host"))
        return;
    c->ev->kind = FBC_TRANSFER;
    c->ev->op = (uintptr_t)copy_name(th, from, to, sched ? ggml_split_copy(th) : -1);
    c->ev->nbytes = bytes;
    fbc_reader_count(c);
}

/* A copy of src into dst, once made: its places from the tensors' buffers. */
static void count_tensors(fbc_call *c, const void *src, const void *dst, uint64_t ns)
{
    const ggml_api *a = c->bm->reader;
    if (!ggml_ready(a) || !src || !dst || !ggml_tensor_layout(a, src))
        return;
    void *from = ggml_t_buffer(src), *to = ggml_t_buffer(dst);
    if (!from || !to)
        return;
    c->ev->ns = ns;
    count_copy(c, ggml_place(a, from), ggml_place(a, to), a->nbytes(src));
}

static bool timed(fbc_call *c)
{
    c->t0 = fbc_clock_start();
    return false;
}

/* ---- ggml_backend_tensor_copy(src, dst) -------------------------------------------------- */

static void copy_after(fbc_call *c, uint64_t ns)
{
    count_tensors(c, (const void *)c->arg[0], (const void *)c->arg[1], ns);
}

const fbc_reader_ops FBC_READER_OPS(GGML_COPY) = {ggml_bind, timed, copy_after,
                                                  fbc_reader_no_refuse, ggml_stack};

/* ---- ggml_backend_tensor_set_async(backend, tensor, data, offset, size) ------------------ */

static void set_after(fbc_call *c, uint64_t ns)
{
    const ggml_api *a = c->bm->reader;
    ggml_thread *th = ggml_thread_state();
    const void *t = (const void *)c->arg[1];
    if (!th || !th->sched || !ggml_ready(a) || !t || !ggml_tensor_layout(a, t) || !ggml_t_buffer(t))
        return;
    c->ev->ns = ns;
    count_copy(c, "host", ggml_place(a, ggml_t_buffer(t)), (size_t)c->arg[4]);
}

const fbc_reader_ops FBC_READER_OPS(GGML_SET_ASYNC) = {ggml_bind, timed, set_after,
                                                       fbc_reader_no_refuse, ggml_stack};

/* ---- a backend's cpy_tensor_async -------------------------------------------------------- */

typedef bool (*cpy_fn)(void *, void *, const void *, void *);

/* Offsets in the pinned build's struct ggml_backend: ggml_guid_t guid; struct ggml_backend_i
 * iface (16 function pointers, cpy_tensor_async the 7th); ggml_backend_dev_t device. */
enum { B_GUID = 0, B_IFACE = 8, IFACE_SLOTS = 16, CPY_SLOT = 6, B_DEVICE = B_IFACE + 8 * 16 };

#define SLOT(b, i) ((void **)((char *)(b) + B_IFACE + 8 * (i)))

static bool backend_layout(const ggml_api *a, void *b)
{
    static int state; /* 0 unknown, 1 the pinned layout, -1 another */
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s)
        return s > 0;
    Dl_info di;
    bool ok = *(void **)((char *)b + B_GUID) == a->guid(b) &&
              *(void **)((char *)b + B_DEVICE) == a->get_device(b);
    for (int i = 0; ok && i < IFACE_SLOTS; i++)
        ok = !*SLOT(b, i) || dladdr(*SLOT(b, i), &di); /* each entry NULL or code */
    if (!ok)
        fbc_warn("ggml's backends are not laid out as the pinned build's: the copies the "
                 "scheduler makes through a backend's cpy_tensor_async are not counted");
    __atomic_store_n(&state, ok ? 1 : -1, __ATOMIC_RELEASE);
    return ok;
}

#define WRAPPED_MAX 64

/* Each backend wrapped, with the entry it had: published by backend (release) after orig. */
static struct {
    void *backend;
    cpy_fn orig;
    fbc_bmod *bm;
    unsigned exit;
} wrapped[WRAPPED_MAX];
static unsigned nwrapped;
static pthread_mutex_t wrap_lock = PTHREAD_MUTEX_INITIALIZER;

static int wrapped_at(const void *backend)
{
    unsigned n = __atomic_load_n(&nwrapped, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++)
        if (__atomic_load_n(&wrapped[i].backend, __ATOMIC_ACQUIRE) == backend)
            return (int)i;
    return -1;
}

static void call_cpy(fbc_call *c)
{
    c->ret = ((cpy_fn)c->fn)((void *)c->arg[0], (void *)c->arg[1], (const void *)c->arg[2],
                             (void *)c->arg[3]);
}

static void cpy_after(fbc_call *c, uint64_t ns)
{
    if (c->ret)
        count_tensors(c, (const void *)c->arg[2], (const void *)c->arg[3], ns);
}

static const fbc_reader_ops cpy_ops = {ggml_bind, timed, cpy_after, fbc_reader_no_refuse,
                                       ggml_stack};

/* What the wrapped backends' cpy_tensor_async entry leads to: the backend's own, made as the
 * scheduler made it, recorded as an exit's call is. */
static bool cpy_wrapper(void *backend_src, void *backend_dst, const void *src, void *dst)
{
    int i = wrapped_at(backend_dst);
    if (i < 0)
        return false; /* never: only a backend with an entry points here */
    fbc_call c = {
        .bm = wrapped[i].bm,
        .exit = wrapped[i].exit,
        .fn = (void *)wrapped[i].orig,
        .arg = {(uintptr_t)backend_src, (uintptr_t)backend_dst, (uintptr_t)src, (uintptr_t)dst}};
    if (fbc_reader_intercept)
        fbc_reader_intercept(&c, &cpy_ops, call_cpy);
    else
        call_cpy(&c);
    return c.ret != 0;
}

void ggml_wrap_backend(const ggml_api *a, void *backend, fbc_bmod *bm, unsigned exit)
{
    void *cur = __atomic_load_n(SLOT(backend, CPY_SLOT), __ATOMIC_RELAXED);
    if (!cur || cur == (void *)cpy_wrapper || !backend_layout(a, backend))
        return;
    pthread_mutex_lock(&wrap_lock);
    int i = wrapped_at(backend);
    if (i < 0 && nwrapped < WRAPPED_MAX)
        i = (int)nwrapped;
    if (i >= 0 && __atomic_load_n(SLOT(backend, CPY_SLOT), __ATOMIC_RELAXED) == cur) {
        __atomic_store_n(&wrapped[i].backend, NULL, __ATOMIC_RELEASE);
        wrapped[i].orig = (cpy_fn)cur;
        wrapped[i].bm = bm;
        wrapped[i].exit = exit;
        __atomic_store_n(&wrapped[i].backend, backend, __ATOMIC_RELEASE);
        if ((unsigned)i == nwrapped)
            __atomic_store_n(&nwrapped, nwrapped + 1, __ATOMIC_RELEASE);
        __atomic_store_n(SLOT(backend, CPY_SLOT), (void *)cpy_wrapper, __ATOMIC_RELEASE);
    } else if (i < 0) {
        static int warned;
        if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
            fbc_warn("more than %d ggml backends: the copies of the later ones' "
                     "cpy_tensor_async are not counted",
                     WRAPPED_MAX);
    }
    pthread_mutex_unlock(&wrap_lock);
}

/* ---- ggml_backend_tensor_copy_async(backend_src, backend_dst, src, dst) ------------------- */

static bool copy_async_before(fbc_call *c)
{
    const ggml_api *a = c->bm->reader;
    if (ggml_ready(a) && c->arg[1])
        ggml_wrap_backend(a, (void *)c->arg[1], c->bm, c->exit);
    return false;
}

static void copy_async_after(fbc_call *c, uint64_t ns)
{
    (void)c, (void)ns;
}

const fbc_reader_ops FBC_READER_OPS(GGML_COPY_ASYNC) = {
    ggml_bind, copy_async_before, copy_async_after, fbc_reader_no_refuse, ggml_stack};

/* exits.c - the backends' exits the shim defines (LD_PRELOAD): one typed definition per symbol
 * the built-in rows name (rules/backends/), each forwarding the call to the definition the
 * calling module would have reached without the shim and returning its result unchanged.
 * When the calling thread records, the exit's reader (readers/) turns the call into events.
 *
 * Fast path (recording off): one thread-local read, one relaxed load of the cached definition
 * and a range check of the return address against the first module that called the exit; the
 * slow path is noinline. Definitions are looked up at the first call from each module, not at
 * load time, so a backend dlopen-ed later (even RTLD_LOCAL, which dlsym(RTLD_NEXT) cannot
 * see) is found, and two RTLD_LOCAL backends that both define an exit each get their own
 * calls back. Each backend found is pinned (an RTLD_NOLOAD handle kept), so a cached pointer
 * never dangles.
 *
 * An event is counted before the call runs and its time added after: a call that ends by an
 * exception (a PyTorch kernel that throws) or a longjmp keeps its count and passes through
 * unchanged, and record/ forgets such a call when the next one begins at or above its frame. */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "entries.h"
#include "hooks.h"
#include "readers.h"
#include "redirect.h"
#include "typed.h"

#define MAX_CALLERS 32

/* A module that calls an exit, and where its calls go. */
typedef struct {
    uintptr_t lo, hi;
    void *fn;     /* the definition */
    fbc_bmod *bm; /* the backend that defines it; NULL when no row has the exit */
    unsigned exit;
} caller_mod;

typedef struct {
    caller_mod callers[MAX_CALLERS];
    unsigned ncallers; /* published with release; entries below it never change */
    /* Where calls go from a module past the table, or from code in no module (generated at
     * run time): the definition the first such caller reaches (published with release). */
    caller_mod other;
    bool other_ready;
    /* The first caller's, for the fast path: its range, then its definition, published last.
     * A reader that sees a definition with a range not yet written (span 0) takes the slow
     * path. */
    uintptr_t fast_lo, fast_span;
    void *fast_fn;
} exit_state;

enum {
#define X_ENUM(id, fn, sym, role) X_##id,
    FBR_TYPED(X_ENUM)
#undef X_ENUM
        NEXITS
};

/* Nothing of the exits is written before a backend is used, and their names are arrays of
 * characters (no relocation): the loader writes no page of them into every process the shim
 * is loaded into. The state is zero until then. */
union longest_symbol {
#define X_LEN(id, fn, sym, role) char id[sizeof sym];
    FBR_TYPED(X_LEN)
#undef X_LEN
};
static const char symbols[NEXITS][sizeof(union longest_symbol)] = {
#define X_NAME(id, fn, sym, role) [X_##id] = sym,
    FBR_TYPED(X_NAME)
#undef X_NAME
};
static exit_state exits[NEXITS];
/* The shim's own definitions (at the end of the file, with the definitions). */
static const void *const selfs[NEXITS];

#define SYMBOL(x) symbols[(x)-exits]
#define SELF_OF(x) selfs[(x)-exits]

static pthread_mutex_t resolve_lock = PTHREAD_MUTEX_INITIALIZER;
static bool forced_slow;

typedef struct {
    const char *symbol;
    const void *self;
    void *found;
} any_def;

static int own_definition(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    any_def *d = data;
    void *h = info->dlpi_name && info->dlpi_name[0]
                  ? dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD)
                  : NULL;
    void *f = h ? dlsym(h, d->symbol) : NULL;
    Dl_info di;
    if (f && f != d->self && dladdr(f, &di) && (uintptr_t)di.dli_fbase == info->dlpi_addr)
        d->found = f; /* the handle stays open: the backend must not go away */
    else if (h)
        dlclose(h);
    return d->found != NULL;
}

/* The definition of x's symbol that a call from the module at caller_path (loaded at
 * caller_base) reaches without the shim: the one in that module's own lookup scope; else
 * where its entry pointed before the shim redirected it; else the next one after the shim;
 * else the first module that defines it (a shim loaded after the backend, whose libraries
 * the lookups above do not reach). */
static void *find(const exit_state *x, const char *caller_path, uintptr_t lo, uintptr_t hi,
                  uintptr_t caller_base)
{
    void *f = NULL;
    const char *symbol = SYMBOL(x);
    const void *self = SELF_OF(x);
    void *h = caller_path ? dlopen(caller_path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    if (h)
        f = dlsym(h, symbol); /* the handle stays open: the backend must not go away */
    if (!f || f == self) {
        /* An entry bound before the redirection; a lazy one still points into its own PLT. */
        void *o = fbc_redirect_original(caller_base, symbol);
        f = o && ((uintptr_t)o < lo || (uintptr_t)o >= hi) ? o : NULL;
    }
    if (!f || f == self)
        f = dlsym(RTLD_NEXT, symbol);
    if (!f || f == self) {
        any_def d = {symbol, self, NULL};
        dl_iterate_phdr(own_definition, &d);
        f = d.found;
    }
    return f == self ? NULL : f;
}

static const caller_mod *lookup(const exit_state *x, uintptr_t ra)
{
    unsigned n = __atomic_load_n(&x->ncallers, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++)
        if (ra >= x->callers[i].lo && ra < x->callers[i].hi)
            return &x->callers[i];
    return NULL;
}

static void intercepted(fbc_call *c, const fbc_reader_ops *rd, void (*thunk)(fbc_call *));

/* The backend behind definition fn: the row that has x's symbol as an exit (preferring one
 * whose library is fn's module), bound to that module, its reader told once. */
static fbc_bmod *backend_of(const exit_state *x, void *fn, unsigned *exit)
{
    fbc_reader_intercept = intercepted;
    Dl_info di;
    const char *path = fn && dladdr(fn, &di) ? di.dli_fname : NULL;
    fbc_bmod *bm = fn ? fbc_bmod_bind(fbc_row_for(SYMBOL(x), path, exit), fn) : NULL;
    if (bm && !bm->bound) {
        fbc_reader(bm->row->exit[*exit].reader)->bind(bm);
        bm->bound = true;
    }
    return bm;
}

static void publish_fast(exit_state *x, const caller_mod *e)
{
    __atomic_store_n(&x->fast_lo, e->lo, __ATOMIC_RELAXED);
    __atomic_store_n(&x->fast_span, e->hi - e->lo, __ATOMIC_RELAXED);
    if (!__atomic_load_n(&forced_slow, __ATOMIC_RELAXED))
        __atomic_store_n(&x->fast_fn, e->fn, __ATOMIC_RELEASE);
}

/* A caller the table has no room or no module for: its calls still reach a definition (the
 * one its own module's lookup gives, for the first such caller) and are counted. Called
 * under resolve_lock. */
static const caller_mod *other_caller(exit_state *x, const char *path, long mi)
{
    if (!__atomic_load_n(&x->other_ready, __ATOMIC_ACQUIRE)) {
        caller_mod *e = &x->other;
        e->fn = find(x, path, 0, 0, 0);
        e->bm = backend_of(x, e->fn, &e->exit);
        __atomic_store_n(&x->other_ready, true, __ATOMIC_RELEASE);
        if (mi >= 0)
            fbc_warn("more than %d modules call %.200s: calls from the others (%.300s first) "
                     "reach the definition that one reaches",
                     MAX_CALLERS, SYMBOL(x), path ? path : "?");
        else
            fbc_warn("%.200s called from code in no loaded module (generated at run time): "
                     "such calls reach the definition after the shim's",
                     SYMBOL(x));
    }
    return &x->other;
}

static const caller_mod *resolve(exit_state *x, uintptr_t ra)
{
    const caller_mod *c = lookup(x, ra);
    if (c)
        return c;
    if (__atomic_load_n(&x->other_ready, __ATOMIC_ACQUIRE) &&
        (__atomic_load_n(&x->ncallers, __ATOMIC_ACQUIRE) == MAX_CALLERS || fbc_modmap_find(ra) < 0))
        return &x->other; /* no room, or no module, for it in the table */
    fbc_init();
    pthread_mutex_lock(&resolve_lock);
    c = lookup(x, ra);
    if (!c) {
        long mi = fbc_modmap_find(ra);
        if (mi < 0) {
            fbc_modmap_refresh();
            mi = fbc_modmap_find(ra);
        }
        Dl_info di;
        const char *path = dladdr((void *)ra, &di) && di.dli_fname ? di.dli_fname : NULL;
        unsigned n = x->ncallers;
        if (mi >= 0 && n < MAX_CALLERS) {
            const fbc_module *m = fbc_modmap_at((size_t)mi);
            caller_mod *e = &x->callers[n];
            e->lo = m->start;
            e->hi = m->end;
            e->fn = find(x, path, m->start, m->end, m->base);
            e->bm = backend_of(x, e->fn, &e->exit);
            __atomic_store_n(&x->ncallers, n + 1, __ATOMIC_RELEASE);
            c = e;
            if (n == 0)
                publish_fast(x, e);
        } else {
            c = other_caller(x, path, mi);
        }
    }
    pthread_mutex_unlock(&resolve_lock);
    if (!c || !c->fn) {
        static int warned;
        if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
            fbc_warn("no definition of %.200s after libfbcount; the call does nothing", SYMBOL(x));
    }
    return c;
}

void fbc_wrap_slow(bool all)
{
    pthread_mutex_lock(&resolve_lock);
    __atomic_store_n(&forced_slow, all, __ATOMIC_RELAXED);
    for (int i = 0; i < NEXITS; i++)
        __atomic_store_n(&exits[i].fast_fn,
                         !all && exits[i].ncallers ? exits[i].callers[0].fn : NULL,
                         __ATOMIC_RELEASE);
    if (fbc_entries_present()) /* declared exits' entries */
        __atomic_store_n(&fbc_decl_forced, all, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&resolve_lock);
}

/* The definition to call at once, or NULL for the slow path. */
static inline void *fast(exit_state *x, uintptr_t ra)
{
    void *fn = __atomic_load_n(&x->fast_fn, __ATOMIC_RELAXED);
    if (__builtin_expect(fbc_t.state == FBC_T_OFF && fn != NULL &&
                             ra - __atomic_load_n(&x->fast_lo, __ATOMIC_RELAXED) <
                                 __atomic_load_n(&x->fast_span, __ATOMIC_RELAXED),
                         1))
        return fn;
    return NULL;
}

/* Whether this call records: the thread records, and the shim's own code is not what called
 * the exit. */
static bool should_record(void)
{
    if (fbc_t.state == FBC_T_UNSET)
        fbc_thread_decide();
    return (fbc_t.state == FBC_T_ON || fbc_scope_any_all()) && !fbc_t.busy;
}

static void counted(fbc_call *c, fbc_recorded r)
{
    if (!r.entry || r.entry->kind != FBC_FALLBACK || fbc_cfg.mode == FBC_MODE_COUNT)
        return;
    fbc_stamp s = fbc_clock_start();
    if (fbc_mode_check(r.entry, r.fresh))
        c->refused = true;
    c->held_ns += fbc_clock_since(s); /* the verdict's wait is the shim's, not the call's */
}

/* The start of a call that records (c: bm, exit and fn set; ev entered for it): its stack,
 * what its reader reads before it, its count where the reader counts then (*now). False
 * when FBCOUNT_MODE=error refuses it: the call is not to be made, its failure is (the
 * reader's, which may throw: the count stays). */
static bool call_begin(fbc_call *c, fbc_event *ev, const fbc_reader_ops *rd, bool *now)
{
    fbc_arm();
    fbc_t.busy = 1;
    c->counted = counted;
    c->ev = ev;
    if (!rd->stack || !rd->stack(c))
        fbc_record_capture(ev, (uintptr_t)c->fn);
    ev->backend = FBC_BACKEND_ID(c->bm->index, c->exit);
    *now = rd->before(c);
    if (*now)
        c->rec = fbc_reader_count(c);
    if (c->refused) {
        fbc_bmod_unrun(c->bm); /* the backend never runs it */
        char why[1200];
        fbc_mode_refusal(c->rec.entry, why, sizeof why);
        fbc_t.busy = 0;
        fbc_record_leave();
        if (!rd->refuse(c, why))
            fbc_mode_abort(c->rec.entry);
        return false;
    }
    fbc_t.busy = 0;
    return true;
}

/* The end of a call call_begin started, once it returned: its time (from c->t0) added, what
 * the reader reads after it. */
static void call_end(fbc_call *c, const fbc_reader_ops *rd, bool now)
{
    uint64_t ns = fbc_clock_since(c->t0);
    ns = ns > c->held_ns ? ns - c->held_ns : 0;
    fbc_t.busy = 1;
    if (now)
        fbc_record_time(c->ev, c->rec, ns);
    rd->after(c, ns);
    fbc_t.busy = 0;
    fbc_record_leave();
}

/* A call that records: capture, read, count, run (unless refused), time. The shim's own work
 * runs under fbc_t.busy, the backend's call outside it: an exit the backend calls inside
 * (a fallback's copy back to the device) is an event of its own. */
__attribute__((noinline)) static void slow(exit_state *x, fbc_call *c, uintptr_t ra,
                                           void (*thunk)(fbc_call *))
{
    const caller_mod *m = resolve(x, ra);
    if (!m || !m->fn)
        return;
    c->fn = m->fn;
    fbc_event *ev =
        m->bm && should_record() ? fbc_record_enter((uintptr_t)__builtin_frame_address(0)) : NULL;
    if (!ev) {
        thunk(c);
        return;
    }
    c->bm = m->bm;
    c->exit = m->exit;
    const fbc_reader_ops *rd = fbc_reader(m->bm->row->exit[m->exit].reader);
    bool now;
    if (!call_begin(c, ev, rd, &now))
        return;
    thunk(c);
    call_end(c, rd, now);
}

/* A call a reader intercepts itself, through a function pointer of the backend's that it
 * pointed at its own code (ggml's cpy_tensor_async): recorded as an exit's call is. */
static void intercepted(fbc_call *c, const fbc_reader_ops *rd, void (*thunk)(fbc_call *))
{
    fbc_event *ev =
        should_record() ? fbc_record_enter((uintptr_t)__builtin_frame_address(0)) : NULL;
    bool now;
    if (!ev) {
        thunk(c);
        return;
    }
    if (!call_begin(c, ev, rd, &now))
        return;
    thunk(c);
    call_end(c, rd, now);
}

bool fbc_exit_begin(fbc_call *c, bool timed)
{
    /* The frame: the entry's own, below its copy of the caller's stack arguments. */
    fbc_event *ev = should_record() ? fbc_record_enter((uintptr_t)c) : NULL;
    bool now;
    if (!ev || !call_begin(c, ev, fbc_reader(FBR_READ_NONE), &now))
        return false;
    if (!timed || !now) {
        fbc_record_leave();
        return false;
    }
    return true; /* c->t0: the reader's */
}

void fbc_exit_end(fbc_call *c)
{
    call_end(c, fbc_reader(FBR_READ_NONE), true);
}

/* ---- the definitions ------------------------------------------------------------------ */

#define RA ((uintptr_t)__builtin_return_address(0))
#define CALL(type, c) ((type)(c)->fn)

FBC_EXPORT int host_result(void *out, const void *data, size_t nbytes);
FBC_EXPORT void host_resident_op(const void *out, size_t nbytes);

typedef int (*result_fn)(void *, const void *, size_t);

static void call_host_result(fbc_call *c)
{
    c->ret = (uintptr_t)(intptr_t)CALL(result_fn, c)((void *)c->arg[0], (const void *)c->arg[1],
                                                     (size_t)c->arg[2]);
}

FBC_EXPORT int host_result(void *out, const void *data, size_t nbytes)
{
    result_fn fn = (result_fn)fast(&exits[X_HOST_RESULT], RA);
    if (fn)
        return fn(out, data, nbytes);
    fbc_call c = {.arg = {(uintptr_t)out, (uintptr_t)data, nbytes}, .ret = (uintptr_t)-1};
    slow(&exits[X_HOST_RESULT], &c, RA, call_host_result);
    return (int)(intptr_t)c.ret;
}

typedef void (*resident_fn)(const void *, size_t);

static void call_host_resident(fbc_call *c)
{
    CALL(resident_fn, c)((const void *)c->arg[0], (size_t)c->arg[1]);
}

FBC_EXPORT void host_resident_op(const void *out, size_t nbytes)
{
    resident_fn fn = (resident_fn)fast(&exits[X_HOST_RESIDENT], RA);
    if (fn) {
        fn(out, nbytes);
        return;
    }
    fbc_call c = {.arg = {(uintptr_t)out, nbytes}};
    slow(&exits[X_HOST_RESIDENT], &c, RA, call_host_resident);
}

/* at::native::cpu_fallback(const c10::OperatorHandle&, torch::jit::Stack*[, bool error_on_views
 * [, c10::DispatchKey]]): references pass as pointers, bool and the uint16_t enum as ints. */
typedef void (*torch1_fn)(const void *, void *);
typedef void (*torch2_fn)(const void *, void *, bool);
typedef void (*torch3_fn)(const void *, void *, bool, uint16_t);

FBC_EXPORT void torch_fallback_1(const void *op, void *stack) __asm__(FBR_TORCH_FALLBACK);
FBC_EXPORT void torch_fallback_2(const void *op, void *stack,
                                 bool views) __asm__(FBR_TORCH_FALLBACK "b");
FBC_EXPORT void torch_fallback_3(const void *op, void *stack, bool views,
                                 uint16_t key) __asm__(FBR_TORCH_FALLBACK "bNS1_11DispatchKeyE");

static void call_torch_1(fbc_call *c)
{
    CALL(torch1_fn, c)((const void *)c->arg[0], (void *)c->arg[1]);
}

static void call_torch_2(fbc_call *c)
{
    CALL(torch2_fn, c)((const void *)c->arg[0], (void *)c->arg[1], (bool)c->arg[2]);
}

static void call_torch_3(fbc_call *c)
{
    CALL(torch3_fn, c)
    ((const void *)c->arg[0], (void *)c->arg[1], (bool)c->arg[2], (uint16_t)c->arg[3]);
}

FBC_EXPORT void torch_fallback_1(const void *op, void *stack)
{
    torch1_fn fn = (torch1_fn)fast(&exits[X_TORCH_FALLBACK_1], RA);
    if (fn) {
        fn(op, stack);
        return;
    }
    fbc_call c = {.arg = {(uintptr_t)op, (uintptr_t)stack}};
    slow(&exits[X_TORCH_FALLBACK_1], &c, RA, call_torch_1);
}

FBC_EXPORT void torch_fallback_2(const void *op, void *stack, bool views)
{
    torch2_fn fn = (torch2_fn)fast(&exits[X_TORCH_FALLBACK_2], RA);
    if (fn) {
        fn(op, stack, views);
        return;
    }
    fbc_call c = {.arg = {(uintptr_t)op, (uintptr_t)stack, views}};
    slow(&exits[X_TORCH_FALLBACK_2], &c, RA, call_torch_2);
}

FBC_EXPORT void torch_fallback_3(const void *op, void *stack, bool views, uint16_t key)
{
    torch3_fn fn = (torch3_fn)fast(&exits[X_TORCH_FALLBACK_3], RA);
    if (fn) {
        fn(op, stack, views, key);
        return;
    }
    fbc_call c = {.arg = {(uintptr_t)op, (uintptr_t)stack, views, key}};
    slow(&exits[X_TORCH_FALLBACK_3], &c, RA, call_torch_3);
}

/* enum ggml_status ggml_backend_sched_graph_compute_async(ggml_backend_sched_t, cgraph *);
 * enum ggml_status ggml_backend_graph_compute_async(ggml_backend_t, struct ggml_cgraph *);
 * void ggml_backend_tensor_set_async(ggml_backend_t, tensor *, const void *, size_t, size_t);
 * void ggml_backend_tensor_copy(struct ggml_tensor *src, struct ggml_tensor *dst);
 * void ggml_backend_tensor_copy_async(ggml_backend_t, ggml_backend_t, src, dst). */
typedef int (*compute_fn)(void *, void *);
typedef void (*copy_fn)(void *, void *);
typedef void (*copy_async_fn)(void *, void *, void *, void *);
typedef void (*set_async_fn)(void *, void *, const void *, size_t, size_t);

FBC_EXPORT int ggml_backend_sched_graph_compute_async(void *sched, void *graph);
FBC_EXPORT int ggml_backend_graph_compute_async(void *backend, void *graph);
FBC_EXPORT void ggml_backend_tensor_set_async(void *backend, void *tensor, const void *data,
                                              size_t offset, size_t size);
FBC_EXPORT void ggml_backend_tensor_copy(void *src, void *dst);
FBC_EXPORT void ggml_backend_tensor_copy_async(void *bsrc, void *bdst, void *src, void *dst);

static void call_compute(fbc_call *c)
{
    c->ret = (uintptr_t)(intptr_t)CALL(compute_fn, c)((void *)c->arg[0], (void *)c->arg[1]);
}

static void call_set_async(fbc_call *c)
{
    CALL(set_async_fn, c)
    ((void *)c->arg[0], (void *)c->arg[1], (const void *)c->arg[2], (size_t)c->arg[3],
     (size_t)c->arg[4]);
}

static void call_copy(fbc_call *c)
{
    CALL(copy_fn, c)((void *)c->arg[0], (void *)c->arg[1]);
}

static void call_copy_async(fbc_call *c)
{
    CALL(copy_async_fn, c)
    ((void *)c->arg[0], (void *)c->arg[1], (void *)c->arg[2], (void *)c->arg[3]);
}

/* GGML_STATUS_FAILED when no definition is found, as ggml would say. */
#define GGML_FAILED (-1)

FBC_EXPORT int ggml_backend_sched_graph_compute_async(void *sched, void *graph)
{
    compute_fn fn = (compute_fn)fast(&exits[X_GGML_SCHED], RA);
    if (fn)
        return fn(sched, graph);
    fbc_call c = {.arg = {(uintptr_t)sched, (uintptr_t)graph}, .ret = (uintptr_t)GGML_FAILED};
    slow(&exits[X_GGML_SCHED], &c, RA, call_compute);
    return (int)(intptr_t)c.ret;
}

FBC_EXPORT void ggml_backend_tensor_set_async(void *backend, void *tensor, const void *data,
                                              size_t offset, size_t size)
{
    set_async_fn fn = (set_async_fn)fast(&exits[X_GGML_SET_ASYNC], RA);
    if (fn) {
        fn(backend, tensor, data, offset, size);
        return;
    }
    fbc_call c = {.arg = {(uintptr_t)backend, (uintptr_t)tensor, (uintptr_t)data, offset, size}};
    slow(&exits[X_GGML_SET_ASYNC], &c, RA, call_set_async);
}

FBC_EXPORT int ggml_backend_graph_compute_async(void *backend, void *graph)
{
    compute_fn fn = (compute_fn)fast(&exits[X_GGML_COMPUTE], RA);
    if (fn)
        return fn(backend, graph);
    fbc_call c = {.arg = {(uintptr_t)backend, (uintptr_t)graph}, .ret = (uintptr_t)GGML_FAILED};
    slow(&exits[X_GGML_COMPUTE], &c, RA, call_compute);
    return (int)(intptr_t)c.ret;
}

FBC_EXPORT void ggml_backend_tensor_copy(void *src, void *dst)
{
    copy_fn fn = (copy_fn)fast(&exits[X_GGML_COPY], RA);
    if (fn) {
        fn(src, dst);
        return;
    }
    fbc_call c = {.arg = {(uintptr_t)src, (uintptr_t)dst}};
    slow(&exits[X_GGML_COPY], &c, RA, call_copy);
}

FBC_EXPORT void ggml_backend_tensor_copy_async(void *bsrc, void *bdst, void *src, void *dst)
{
    copy_async_fn fn = (copy_async_fn)fast(&exits[X_GGML_COPY_ASYNC], RA);
    if (fn) {
        fn(bsrc, bdst, src, dst);
        return;
    }
    fbc_call c = {.arg = {(uintptr_t)bsrc, (uintptr_t)bdst, (uintptr_t)src, (uintptr_t)dst}};
    slow(&exits[X_GGML_COPY_ASYNC], &c, RA, call_copy_async);
}

/* Engine::execute returns a std::vector through a hidden pointer, passed first (before
 * this), and returns that pointer; its last two arguments are on the stack. */
typedef void *(*engine_fn)(void *, void *, const void *, const void *, bool, bool, bool,
                           const void *);

FBC_EXPORT void *torch_engine_execute(void *ret, void *self, const void *roots, const void *inputs,
                                      bool keep, bool create, bool accumulate,
                                      const void *outputs) __asm__(FBR_TORCH_ENGINE_EXECUTE);

/* The backward's end, however it ends: autograd rethrows a device thread's error (a refused
 * fallback's RuntimeError) on the caller's thread, through this frame. */
static void backward_over(const fbc_origin **o)
{
    if (*o != (const fbc_origin *)1)
        fbc_origin_end(*o);
}

FBC_EXPORT void *torch_engine_execute(void *ret, void *self, const void *roots, const void *inputs,
                                      bool keep, bool create, bool accumulate, const void *outputs)
{
    const caller_mod *m = resolve(&exits[X_TORCH_ENGINE], RA);
    if (!m || !m->fn)
        abort(); /* no autograd to run it: there is no value to return */
    __attribute__((cleanup(backward_over))) const fbc_origin *o = (const fbc_origin *)1;
    if (should_record()) {
        fbc_t.busy = 1;
        o = fbc_origin_take(FBC_ORIGIN_BACKWARD);
        fbc_t.busy = 0;
        fbc_origin_begin(o);
    }
    return ((engine_fn)m->fn)(ret, self, roots, inputs, keep, create, accumulate, outputs);
}

/* Engine::evaluate_function(graph_task, node, inputs, ready_queue), a member: this first. */
typedef void (*evaluate_fn)(void *, void *, void *, void *, const void *);

FBC_EXPORT void torch_evaluate_function(void *self, void *task, void *node, void *inputs,
                                        const void *queue) __asm__(FBR_TORCH_EVALUATE);

static void node_over(void **previous)
{
    fbc_origin_node_leave(*previous);
}

/* The node a backward runs, for the fallbacks made under it (readers/torch.c): kept however
 * the node ends, an exception included. */
FBC_EXPORT void torch_evaluate_function(void *self, void *task, void *node, void *inputs,
                                        const void *queue)
{
    const caller_mod *m = resolve(&exits[X_TORCH_EVALUATE], RA);
    if (!m || !m->fn)
        abort(); /* no autograd to run it */
    __attribute__((cleanup(node_over))) void *previous = fbc_origin_node_enter(node);
    ((evaluate_fn)m->fn)(self, task, node, inputs, queue);
}

typedef void (*assign_parent_fn)(void *);

FBC_EXPORT void torch_assign_parent(void *node) __asm__(FBR_TORCH_ASSIGN_PARENT);

/* Anomaly mode keeps the forward's traceback for each node made; the shim keeps its own stack
 * of the same moment, raw, for the node's fallbacks in a backward. */
FBC_EXPORT void torch_assign_parent(void *node)
{
    const caller_mod *m = resolve(&exits[X_TORCH_ASSIGN_PARENT], RA);
    if (!m || !m->fn)
        abort(); /* no node to assign a parent to */
    ((assign_parent_fn)m->fn)(node);
    if (should_record()) {
        fbc_t.busy = 1;
        fbc_torch_node_made(node, m->fn);
        fbc_t.busy = 0;
    }
}

/* Each definition's address as this library has it: a hidden alias is bound at link time,
 * where the plain name goes through the loader and, in a shim loaded after a backend that sits
 * in the program's global scope, comes back as the backend's. */
#define X_SELF(id, fn, sym, role)                                                                  \
    extern __typeof__(fn) self_##fn __attribute__((alias(sym), visibility("hidden")));
FBR_TYPED(X_SELF)
#undef X_SELF

static const void *const selfs[NEXITS] = {
#define X_SELF(id, fn, sym, role) [X_##id] = (const void *)self_##fn,
    FBR_TYPED(X_SELF)
#undef X_SELF
};

/* Where a redirection points each exit's calls. A shim linked into a program or imported by a
 * package points them where the program's own lookup of the name leads (the first definition
 * in its global scope: the shim's own, or an interposer's ahead of it, which keeps its calls);
 * an attached shim points them at its own definitions: the backend had bound them already.
 * Both tables are the loader's relocations, in pages it writes anyway (RELRO). */
static const void *const bound[NEXITS] = {
#define X_BOUND(id, fn, sym, role) [X_##id] = (const void *)fn,
    FBR_TYPED(X_BOUND)
#undef X_BOUND
};

/* Whether fn, a definition of exit i, is the backend's own: it lies in a module a row
 * names as the library of that exit (a program linked -lvkt -lfbcount finds libvkt's
 * host_result first in its global scope, and that is no interposer to leave in front). */
static bool backend_definition(int i, const void *fn)
{
    Dl_info di;
    unsigned exit;
    if (fn == selfs[i] || !dladdr(fn, &di) || !di.dli_fname)
        return false;
    long row = fbc_row_for(symbols[i], di.dli_fname, &exit);
    return row >= 0 && fbr_backend_library(fbc_row_at((size_t)row), di.dli_fname);
}

size_t fbc_exits_builtin(fbc_redirection *r)
{
    _Static_assert(NEXITS <= FBC_BUILTIN_MAX, "hooks.h's bound on the exits defined");
    if (fbc_proc.preloaded)
        return 0;
    for (int i = 0; i < NEXITS; i++) {
        const void *to = fbc_attached || backend_definition(i, bound[i]) ? selfs[i] : bound[i];
        r[i] = (fbc_redirection){symbols[i], (void *)to, NULL, NULL};
    }
    return NEXITS;
}

bool fbc_exit_defined(const char *symbol)
{
    for (int i = 0; i < NEXITS; i++)
        if (!strcmp(symbols[i], symbol))
            return true;
    return false;
}

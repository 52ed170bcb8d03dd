/* wrap.c - host_result and host_resident_op: forward each call to the definition in the
 * caller's own module and return its result unchanged; when the calling thread records,
 * time the call and count the event after it.
 *
 * Fast path (recording off): one thread-local read, one relaxed load of the cached
 * definition and a range check of the return address against the module it belongs to; the
 * slow path is noinline. Definitions are looked up at the first call from each module, not at
 * load time, so a backend dlopen-ed later (even RTLD_LOCAL, which dlsym(RTLD_NEXT) cannot
 * see) is found, and two RTLD_LOCAL backends that both define host_result each get their own
 * calls back: a result written into another backend's tensor would change the program. Each
 * backend found is pinned (an RTLD_NOLOAD handle kept), so a cached pointer never dangles. */
#include <dlfcn.h>
#include <string.h>

#include "hooks.h"

typedef int (*result_fn)(void *out, const void *data, size_t nbytes);
typedef void (*resident_fn)(const void *out, size_t nbytes);

FBC_EXPORT int host_result(void *out, const void *data, size_t nbytes);
FBC_EXPORT void host_resident_op(const void *out, size_t nbytes);

#define MAX_CALLERS 32

/* A module that calls the exits, and the definitions its calls go to. */
typedef struct {
    uintptr_t lo, hi;
    void *result, *resident;
} caller_mod;

static caller_mod callers[MAX_CALLERS];
static unsigned ncallers; /* published with release; entries below it never change */
static pthread_mutex_t resolve_lock = PTHREAD_MUTEX_INITIALIZER;

/* The first module's, for the fast path: its range, then its definitions, published last. A
 * reader that sees a definition with a range not yet written (span 0) takes the slow path. */
static uintptr_t fast_lo, fast_span;
static result_fn fast_result;
static resident_fn fast_resident;
static bool forced_slow;

/* name in the caller's module (or what its own lookup scope gives), else the next one after
 * the shim. */
static void *find(const char *name, const void *self, const char *caller_path)
{
    void *f = NULL;
    void *h = caller_path ? dlopen(caller_path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    if (h)
        f = dlsym(h, name); /* the handle stays open: the backend must not go away */
    if (!f || f == self)
        f = dlsym(RTLD_NEXT, name);
    return f == self ? NULL : f;
}

static const caller_mod *lookup(uintptr_t ra)
{
    unsigned n = __atomic_load_n(&ncallers, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++)
        if (ra >= callers[i].lo && ra < callers[i].hi)
            return &callers[i];
    return NULL;
}

static const caller_mod *resolve(uintptr_t ra)
{
    const caller_mod *c = lookup(ra);
    if (c)
        return c;
    fbc_init();
    pthread_mutex_lock(&resolve_lock);
    c = lookup(ra);
    if (!c) {
        long mi = fbc_modmap_find(ra);
        if (mi < 0) {
            fbc_modmap_refresh();
            mi = fbc_modmap_find(ra);
        }
        Dl_info di;
        const char *path = dladdr((void *)ra, &di) && di.dli_fname ? di.dli_fname : NULL;
        unsigned n = ncallers;
        if (mi >= 0 && n < MAX_CALLERS) {
            const fbc_module *m = fbc_modmap_at((size_t)mi);
            caller_mod *e = &callers[n];
            e->lo = m->start;
            e->hi = m->end;
            e->result = find("host_result", (const void *)host_result, path);
            e->resident = find("host_resident_op", (const void *)host_resident_op, path);
            __atomic_store_n(&ncallers, n + 1, __ATOMIC_RELEASE);
            c = e;
            if (n == 0) {
                __atomic_store_n(&fast_lo, e->lo, __ATOMIC_RELAXED);
                __atomic_store_n(&fast_span, e->hi - e->lo, __ATOMIC_RELAXED);
                result_fn r;
                resident_fn h;
                memcpy(&r, &e->result, sizeof r);
                memcpy(&h, &e->resident, sizeof h);
                if (!__atomic_load_n(&forced_slow, __ATOMIC_RELAXED)) {
                    __atomic_store_n(&fast_result, r, __ATOMIC_RELEASE);
                    __atomic_store_n(&fast_resident, h, __ATOMIC_RELEASE);
                }
            }
            if (e->result || e->resident)
                fbc_backend_find(e->result ? e->result : e->resident);
        }
    }
    pthread_mutex_unlock(&resolve_lock);
    if (!c || (!c->result && !c->resident)) {
        static int warned;
        if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
            fbc_warn("no definition of host_result after libfbcount; returning an error");
    }
    return c;
}

void fbc_wrap_slow(bool all)
{
    pthread_mutex_lock(&resolve_lock);
    __atomic_store_n(&forced_slow, all, __ATOMIC_RELAXED);
    result_fn r = NULL;
    resident_fn h = NULL;
    if (!all && ncallers) {
        memcpy(&r, &callers[0].result, sizeof r);
        memcpy(&h, &callers[0].resident, sizeof h);
    }
    __atomic_store_n(&fast_result, r, __ATOMIC_RELEASE);
    __atomic_store_n(&fast_resident, h, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&resolve_lock);
}

static inline bool in_fast(uintptr_t ra)
{
    return ra - __atomic_load_n(&fast_lo, __ATOMIC_RELAXED) <
           __atomic_load_n(&fast_span, __ATOMIC_RELAXED);
}

static bool should_record(void)
{
    if (fbc_t.state == FBC_T_UNSET)
        fbc_thread_decide();
    return (fbc_t.state == FBC_T_ON || fbc_scope_any_all()) && !fbc_t.busy;
}

/* When this call's work began: libvkt's own clock of the fallback (downloads, host
 * reference, upload), else the entry to host_result. With libvkt's, the shim reads the
 * clock once an event (at its end), not twice; without it, the CPU's counter (clock.c). */
static fbc_stamp started(void)
{
    const fbc_backend *b = fbc_backend_get();
    uint64_t s = b->started_ns ? b->started_ns() : 0;
    return s ? (fbc_stamp){s, 0} : fbc_clock_start();
}

static void after(fbc_kind kind, const void *out, size_t nbytes, void *fn, fbc_stamp t0)
{
    uint64_t ns = fbc_clock_since(t0);
    fbc_recorded r = fbc_record(kind, out, nbytes, (uintptr_t)fn, ns);
    if (r.fresh && kind == FBC_FALLBACK && fbc_cfg.mode != FBC_MODE_COUNT)
        fbc_mode_check(r.entry);
}

__attribute__((noinline)) static int result_slow(void *out, const void *data, size_t nbytes,
                                                 uintptr_t ra)
{
    const caller_mod *c = resolve(ra);
    result_fn fn;
    void *p = c ? c->result : NULL;
    memcpy(&fn, &p, sizeof fn);
    if (!fn)
        return -1;
    if (!should_record())
        return fn(out, data, nbytes);
    fbc_arm();
    fbc_t.busy = 1;
    fbc_stamp t0 = started();
    int rc = fn(out, data, nbytes);
    after(FBC_FALLBACK, out, nbytes, p, t0);
    fbc_t.busy = 0;
    return rc;
}

FBC_EXPORT int host_result(void *out, const void *data, size_t nbytes)
{
    result_fn fn = __atomic_load_n(&fast_result, __ATOMIC_RELAXED);
    uintptr_t ra = (uintptr_t)__builtin_return_address(0);
    if (__builtin_expect(fbc_t.state == FBC_T_OFF && fn != NULL && in_fast(ra), 1))
        return fn(out, data, nbytes);
    return result_slow(out, data, nbytes, ra);
}

__attribute__((noinline)) static void resident_slow(const void *out, size_t nbytes, uintptr_t ra)
{
    const caller_mod *c = resolve(ra);
    resident_fn fn;
    void *p = c ? c->resident : NULL;
    memcpy(&fn, &p, sizeof fn);
    if (!fn)
        return;
    if (!should_record()) {
        fn(out, nbytes);
        return;
    }
    fbc_arm();
    fbc_t.busy = 1;
    fbc_stamp t0 = started();
    fn(out, nbytes);
    after(FBC_HOST, out, nbytes, p, t0);
    fbc_t.busy = 0;
}

FBC_EXPORT void host_resident_op(const void *out, size_t nbytes)
{
    resident_fn fn = __atomic_load_n(&fast_resident, __ATOMIC_RELAXED);
    uintptr_t ra = (uintptr_t)__builtin_return_address(0);
    if (__builtin_expect(fbc_t.state == FBC_T_OFF && fn != NULL && in_fast(ra), 1)) {
        fn(out, nbytes);
        return;
    }
    resident_slow(out, nbytes, ra);
}

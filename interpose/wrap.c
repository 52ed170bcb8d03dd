/* wrap.c - host_result and host_resident_op: forward to the next definition and return its
 * result unchanged; when the calling thread records, count the event first.
 *
 * The next definition is looked up at the first call, not at load time, so a backend that
 * is dlopen-ed later (even RTLD_LOCAL, which dlsym(RTLD_NEXT) cannot see) is found through
 * the module of the caller. The backend is then pinned (RTLD_NOLOAD handle kept) so the
 * cached pointer can never dangle. */
#include <dlfcn.h>
#include <string.h>

#include "shim.h"

typedef int (*result_fn)(void *out, const void *data, size_t nbytes);
typedef void (*resident_fn)(const void *out, size_t nbytes);

static fbc_backend vkt_found, vkt_none;
static fbc_backend *vkt_published;
static result_fn next_result;
static resident_fn next_resident;
static pthread_mutex_t resolve_lock = PTHREAD_MUTEX_INITIALIZER;
static int accessors_done;

FBC_EXPORT int host_result(void *out, const void *data, size_t nbytes);
FBC_EXPORT void host_resident_op(const void *out, size_t nbytes);

/* Finds name in the first module after this one, else in the caller's module. */
static void *find_next(const char *name, const void *self, const void *caller)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (f && f != self)
        return f;
    Dl_info di;
    if (!caller || !dladdr(caller, &di) || !di.dli_fname)
        return NULL;
    void *h = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    f = h ? dlsym(h, name) : NULL;
    return f == self ? NULL : f; /* the handle stays open: the backend must not go away */
}

static void find_accessors(const void *fn)
{
    void *h = NULL;
    Dl_info di;
    if (dladdr(fn, &di) && di.dli_fname)
        h = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
#define LOOK(field, sym)                                                                        \
    do {                                                                                        \
        void *p = h ? dlsym(h, sym) : NULL;                                                     \
        if (!p)                                                                                 \
            p = dlsym(RTLD_DEFAULT, sym);                                                       \
        memcpy(&vkt_found.field, &p, sizeof p);                                                   \
    } while (0)
    LOOK(rank, "vkt_tensor_rank");
    LOOK(shape, "vkt_tensor_shape");
    LOOK(dtype, "vkt_tensor_dtype");
    LOOK(dtype_name, "vkt_dtype_name");
    LOOK(stats, "vkt_stats");
#undef LOOK
    __atomic_store_n(&vkt_published, &vkt_found, __ATOMIC_RELEASE);
}

const fbc_backend *fbc_vkt_get(void)
{
    fbc_backend *b = __atomic_load_n(&vkt_published, __ATOMIC_ACQUIRE);
    return b ? b : &vkt_none;
}

static void *resolve(void **slot, const char *name, const void *self, const void *caller)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (f)
        return f;
    pthread_mutex_lock(&resolve_lock);
    f = *slot;
    if (!f) {
        f = find_next(name, self, caller);
        if (f && !accessors_done) {
            find_accessors(f);
            accessors_done = 1;
        }
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&resolve_lock);
    if (!f) {
        static int warned;
        if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
            fbc_warn("no definition of %s after libfbcount; returning an error", name);
    }
    return f;
}

static bool should_record(void)
{
    if (fbc_t.state == FBC_T_UNSET)
        fbc_thread_decide();
    return fbc_t.state == FBC_T_ON && !fbc_t.busy;
}

__attribute__((noinline)) static int result_slow(void *out, const void *data, size_t nbytes,
                                                 const void *caller)
{
    result_fn fn;
    void *p = resolve((void **)&next_result, "host_result", (const void *)host_result, caller);
    memcpy(&fn, &p, sizeof fn);
    if (!fn)
        return -1;
    if (should_record()) {
        fbc_t.busy = 1;
        fbc_record(FBC_FALLBACK, out, nbytes, (uintptr_t)p);
        fbc_t.busy = 0;
    }
    return fn(out, data, nbytes);
}

FBC_EXPORT int host_result(void *out, const void *data, size_t nbytes)
{
    result_fn fn = __atomic_load_n(&next_result, __ATOMIC_RELAXED);
    if (__builtin_expect(fbc_t.state == FBC_T_OFF && fn != NULL, 1))
        return fn(out, data, nbytes);
    return result_slow(out, data, nbytes, __builtin_return_address(0));
}

__attribute__((noinline)) static void resident_slow(const void *out, size_t nbytes,
                                                    const void *caller)
{
    resident_fn fn;
    void *p = resolve((void **)&next_resident, "host_resident_op", (const void *)host_resident_op,
                      caller);
    memcpy(&fn, &p, sizeof fn);
    if (!fn)
        return;
    if (should_record()) {
        fbc_t.busy = 1;
        fbc_record(FBC_HOST, out, nbytes, (uintptr_t)p);
        fbc_t.busy = 0;
    }
    fn(out, nbytes);
}

FBC_EXPORT void host_resident_op(const void *out, size_t nbytes)
{
    resident_fn fn = __atomic_load_n(&next_resident, __ATOMIC_RELAXED);
    if (__builtin_expect(fbc_t.state == FBC_T_OFF && fn != NULL, 1)) {
        fn(out, nbytes);
        return;
    }
    resident_slow(out, nbytes, __builtin_return_address(0));
}

/* backend.c - the backend's optional accessors: a result tensor's rank, shape and dtype, the
 * per-op counters, and when the current fallback began. Looked up by name next to the
 * host_result definition calls go to (libvkt's names), else anywhere in the process; any of
 * them may be missing, and a census is written without what they would add. */
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "base.h"

static fbc_backend found, none;
static fbc_backend *published;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void fbc_backend_find(const void *fn)
{
    pthread_mutex_lock(&lock);
    if (published) {
        pthread_mutex_unlock(&lock);
        return;
    }
    void *h = NULL;
    Dl_info di;
    if (dladdr(fn, &di) && di.dli_fname)
        h = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD); /* kept: the backend stays mapped */
#define LOOK(field, sym)                                                                        \
    do {                                                                                        \
        void *p = h ? dlsym(h, sym) : NULL;                                                     \
        if (!p)                                                                                 \
            p = dlsym(RTLD_DEFAULT, sym);                                                       \
        memcpy(&found.field, &p, sizeof p);                                                     \
    } while (0)
    LOOK(rank, "vkt_tensor_rank");
    LOOK(shape, "vkt_tensor_shape");
    LOOK(dtype, "vkt_tensor_dtype");
    LOOK(dtype_name, "vkt_dtype_name");
    LOOK(stats, "vkt_stats");
    LOOK(started_ns, "vkt_fallback_started_ns");
#undef LOOK
    __atomic_store_n(&published, &found, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
}

const fbc_backend *fbc_backend_get(void)
{
    fbc_backend *b = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
    return b ? b : &none;
}

bool fbc_backend_seen(void)
{
    return __atomic_load_n(&published, __ATOMIC_ACQUIRE) != NULL;
}

typedef struct {
    uintptr_t self; /* the shim's own load base: its host_result is no backend */
    void *found;
} scan;

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    scan *sc = data;
    if (!info->dlpi_name || !info->dlpi_name[0] || info->dlpi_addr == sc->self)
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    void *f = dlsym(h, "host_result");
    Dl_info di;
    /* dlsym searches the module's dependencies too: only its own definition counts. */
    if (f && dladdr(f, &di) && (uintptr_t)di.dli_fbase == info->dlpi_addr)
        sc->found = f;
    dlclose(h);
    return sc->found != NULL;
}

bool fbc_backend_scan(void)
{
    if (fbc_backend_seen())
        return true;
    Dl_info me;
    if (!dladdr((void *)fbc_backend_scan, &me))
        return false;
    scan sc = {(uintptr_t)me.dli_fbase, NULL};
    dl_iterate_phdr(visit, &sc);
    if (sc.found)
        fbc_backend_find(sc.found);
    return sc.found != NULL;
}

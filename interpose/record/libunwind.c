/* libunwind.c - libunwind, loaded at the first capture rather than with the shim. Linked in,
 * libunwind and liblzma were mapped and relocated in every process the shim is preloaded
 * into (about 90,000 instructions of the dynamic loader's per exec, measured with callgrind
 * on /bin/true: more than the shim's own start-up and exit together), while most of them
 * never capture a stack. The functions capture.c calls (FBC_UNW_ENTRIES in record.h, one row
 * each) are found by the names the header gives them (unw_step is _ULx86_64_step). */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <string.h>

#include "record.h"

#define LIBUNWIND_SONAME "libunwind.so.8"
#define NAME(fn) NAME_(fn)
#define NAME_(fn) #fn

static fbc_unw unw;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static uintptr_t base; /* libunwind's load base, for fbc_unwind_owns */

static void load(void)
{
    void *h = dlopen(LIBUNWIND_SONAME, RTLD_LAZY | RTLD_LOCAL);
#ifdef FBC_LIBUNWIND_DIR
    if (!h)
        h = dlopen(FBC_LIBUNWIND_DIR "/" LIBUNWIND_SONAME, RTLD_LAZY | RTLD_LOCAL);
#endif
    const char *missing = h ? NULL : LIBUNWIND_SONAME;
    void *p;
#define RESOLVE(field, fn)                                                                         \
    if (!missing) {                                                                                \
        if ((p = dlsym(h, NAME(fn))))                                                              \
            memcpy(&unw.field, &p, sizeof p);                                                      \
        else                                                                                       \
            missing = NAME(fn);                                                                    \
    }
    FBC_UNW_ENTRIES(RESOLVE)
#undef RESOLVE
    if (missing) {
        fbc_warn("cannot load %s (%s missing): stacks are walked by frame pointers alone",
                 LIBUNWIND_SONAME, missing);
        return;
    }
    Dl_info di;
    memcpy(&p, &unw.backtrace, sizeof p);
    if (dladdr(p, &di))
        __atomic_store_n(&base, (uintptr_t)di.dli_fbase, __ATOMIC_RELEASE);
    __atomic_store_n(&loaded, true, __ATOMIC_RELEASE);
}

const fbc_unw *fbc_unwind(void)
{
    pthread_once(&once, load);
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE) ? &unw : NULL;
}

bool fbc_unwind_owns(const void *addr)
{
    uintptr_t b = __atomic_load_n(&base, __ATOMIC_ACQUIRE);
    Dl_info di;
    return b && dladdr(addr, &di) && (uintptr_t)di.dli_fbase == b;
}

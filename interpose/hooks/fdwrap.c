/* fdwrap.c - pipe2, interposed for libunwind's calls only (the memory-validation pipe, see
 * record/unwpipe.c); every other caller gets glibc's pipe2 unchanged. */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <errno.h>
#include <libunwind.h>
#include <string.h>
#include <unistd.h>

#include "hooks.h"

typedef int (*pipe2_fn)(int[2], int);

static bool from_libunwind(const void *ra)
{
    static uintptr_t base;
    Dl_info a, b;
    if (!base && dladdr((void *)unw_backtrace, &a))
        __atomic_store_n(&base, (uintptr_t)a.dli_fbase, __ATOMIC_RELAXED);
    return base && dladdr(ra, &b) && (uintptr_t)b.dli_fbase == base;
}

FBC_EXPORT int pipe2(int fds[2], int flags)
{
    pipe2_fn real;
    void *p = dlsym(RTLD_NEXT, "pipe2");
    memcpy(&real, &p, sizeof real);
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int rc = real(fds, flags);
    if (rc == 0 && from_libunwind(__builtin_return_address(0)))
        fbc_unwpipe_adopt(fds);
    return rc;
}

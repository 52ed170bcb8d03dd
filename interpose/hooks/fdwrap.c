/* fdwrap.c - pipe2, interposed for libunwind's calls only (the memory-validation pipe, see
 * record/unwpipe.c); every other caller gets glibc's pipe2 unchanged. */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "hooks.h"

typedef int (*pipe2_fn)(int[2], int);

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
    if (rc == 0 && fbc_unwind_owns(__builtin_return_address(0)))
        fbc_unwpipe_adopt(fds);
    return rc;
}

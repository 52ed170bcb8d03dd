/* fail-call: preloaded into fbcount by run_test.py, makes one system call fail as a machine
 * out of processes or descriptors would, so that run's failure paths are exercised:
 * FAIL_CALL=fork (EAGAIN), signalfd (EMFILE) or pipe2 (EMFILE). Other calls go to libc. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

static int failing(const char *name)
{
    const char *v = getenv("FAIL_CALL");
    return v && !strcmp(v, name);
}

pid_t fork(void)
{
    if (failing("fork")) {
        errno = EAGAIN;
        return -1;
    }
    pid_t (*real)(void) = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
    return real();
}

int signalfd(int fd, const sigset_t *mask, int flags)
{
    if (failing("signalfd")) {
        errno = EMFILE;
        return -1;
    }
    int (*real)(int, const sigset_t *, int) =
        (int (*)(int, const sigset_t *, int))dlsym(RTLD_NEXT, "signalfd");
    return real(fd, mask, flags);
}

int pipe2(int fds[2], int flags)
{
    if (failing("pipe2")) {
        errno = EMFILE;
        return -1;
    }
    int (*real)(int[2], int) = (int (*)(int[2], int))dlsym(RTLD_NEXT, "pipe2");
    return real(fds, flags);
}

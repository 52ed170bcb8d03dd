/* fd.c - the shim's descriptors live far above the application's. A daemon that closes every
 * descriptor from 3 up at start and then opens its own files would otherwise get ours
 * reused: a write meant for the census pipe would land in its file. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h"

int fbc_fd_lift(int fd)
{
    if (fd < 0 || fd >= FBC_FD_FLOOR)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, FBC_FD_FLOOR);
    if (high < 0)
        return fd; /* a low RLIMIT_NOFILE: keep the low one rather than none */
    close(fd);
    return high;
}

int fbc_pipe2(int fds[2], int flags)
{
    return (int)syscall(SYS_pipe2, fds, flags);
}

/* fd.c - the shim's descriptors live far above the application's. A daemon that closes every
 * descriptor from 3 up at start and then opens its own files would otherwise get ours
 * reused: a write meant for the census pipe would land in its file. */
#include <fcntl.h>
#include <sys/stat.h>
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

int fbc_fd_pipe(int fds[2])
{
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    fds[0] = fbc_fd_lift(fds[0]);
    fds[1] = fbc_fd_lift(fds[1]);
    int fl = fcntl(fds[1], F_GETFL);
    fcntl(fds[1], F_SETFL, fl | O_NONBLOCK); /* a signal handler writes it: never block */
    return 0;
}

bool fbc_fd_same(int fd, unsigned long long dev, unsigned long long ino)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && (unsigned long long)st.st_dev == dev &&
           (unsigned long long)st.st_ino == ino;
}

/* readfile.c - see readfile.h. */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* From this size on, 2 MiB transparent huge pages (Debian's THP mode is "madvise"): a dump of
 * a million stacks is hundreds of MiB touched once, and on a VM every 4 KiB page fault is a
 * hypervisor exit. Freed with free(), as the caller of fbr_read_file does. */
#define LARGE_FROM ((size_t)4 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

static void *alloc_large(size_t size)
{
    if (size < LARGE_FROM)
        return malloc(size);
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, size) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, size & ~(HUGE_PAGE - 1), MADV_HUGEPAGE); /* advice: failing changes nothing */
#endif
    return p;
}

char *fbr_read_file(const char *path, size_t max, size_t *len)
{
    /* O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    if ((unsigned long long)st.st_size > max) {
        close(fd);
        errno = EFBIG;
        return NULL;
    }
    /* The size may change while it is read (a log being appended to): read at most max + 1
     * bytes whatever fstat said, and refuse a file that turned out larger. */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = alloc_large(cap + 1);
    while (buf) {
        if (n == cap) {
            if (cap > max) {
                free(buf);
                close(fd);
                errno = EFBIG;
                return NULL;
            }
            size_t grown = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *g = realloc(buf, grown + 1);
            if (!g)
                break;
            buf = g;
            cap = grown;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (!buf) {
        errno = ENOMEM;
        return NULL;
    }
    if (n > max) {
        free(buf);
        errno = EFBIG;
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

const char *fbr_read_error(int err, size_t max, char *buf, size_t cap)
{
    if (err == EINVAL)
        snprintf(buf, cap, "not a regular file");
    else if (err == EFBIG && max >= (1u << 20) && max % (1u << 20) == 0)
        snprintf(buf, cap, "larger than %zu MiB (the most read)", max >> 20);
    else if (err == EFBIG)
        snprintf(buf, cap, "larger than %zu bytes (the most read)", max);
    else
        snprintf(buf, cap, "%s", strerror(err));
    return buf;
}

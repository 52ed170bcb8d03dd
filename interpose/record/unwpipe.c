/* unwpipe.c - libunwind's memory-validation pipe, kept out of the program's way. libunwind
 * (1.6) reads and writes a pipe of its own to test whether an address is readable, and
 * when a read fails it closes both of its descriptor numbers and makes a new pipe: in a
 * daemon that closed every descriptor and opened its own files since, those numbers are the
 * daemon's files. libunwind's pipe2 call is interposed (hooks/fdwrap.c) and its ends are
 * moved up to the shim's own range; before libunwind runs, the ends are checked: re-made at
 * the same numbers when the program closed them, and libunwind left out of that capture when
 * the program has reused a number for a file of its own. */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record.h"

static int ends[2] = {-1, -1};
static unsigned long long dev[2], ino[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool last_ok = true; /* the last check's verdict */
#define CHECK_NS (20 * 1000 * 1000)

static void remember(int i)
{
    struct stat st;
    if (fstat(ends[i], &st) == 0) {
        dev[i] = (unsigned long long)st.st_dev;
        ino[i] = (unsigned long long)st.st_ino;
    }
}

void fbc_unwpipe_adopt(int fds[2])
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < 2; i++) {
        int fl = fcntl(fds[i], F_GETFL);
        fds[i] = fbc_fd_lift(fds[i]);
        if (fl >= 0)
            fcntl(fds[i], F_SETFL, fl); /* a duplicate shares the flags; kept explicit */
        ends[i] = fds[i];
        remember(i);
    }
    pthread_mutex_unlock(&lock);
}

/* Puts a fresh pipe end at exactly number want, which is free. */
static bool remake(void)
{
    int p[2];
    if (fbc_pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
        return false;
    bool ok = true;
    for (int i = 0; i < 2; i++) {
        if (p[i] != ends[i] &&
            (fcntl(ends[i], F_GETFD) != -1 || dup3(p[i], ends[i], O_CLOEXEC) < 0))
            ok = false;
        if (p[i] != ends[i])
            close(p[i]);
    }
    if (ok) {
        fcntl(ends[0], F_SETFL, O_NONBLOCK);
        fcntl(ends[1], F_SETFL, O_NONBLOCK);
        remember(0);
        remember(1);
    }
    return ok;
}

static uint64_t coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool fbc_unwpipe_ready(void)
{
    if (__atomic_load_n(&ends[0], __ATOMIC_RELAXED) < 0)
        return true; /* libunwind has not made it through us: nothing to watch */
    /* Two fstat calls cost more than the capture itself: they are made at most every
     * CHECK_NS. In between, a pipe the program closed is re-made by libunwind itself (its
     * pipe2 comes back through the shim, up here again); only a program that has put a file
     * of its own at one of these numbers within that time could meet libunwind. */
    static uint64_t checked;
    uint64_t now = coarse_ns();
    if (now - __atomic_load_n(&checked, __ATOMIC_RELAXED) < CHECK_NS)
        return __atomic_load_n(&last_ok, __ATOMIC_RELAXED);
    __atomic_store_n(&checked, now, __ATOMIC_RELAXED);
    pthread_mutex_lock(&lock);
    bool ok = true, closed = false;
    for (int i = 0; i < 2; i++) {
        struct stat st;
        if (fstat(ends[i], &st) != 0)
            closed = true;
        else if ((unsigned long long)st.st_dev != dev[i] || (unsigned long long)st.st_ino != ino[i])
            ok = false; /* the program's file now: libunwind must not read or close it */
    }
    if (ok && closed)
        ok = remake();
    __atomic_store_n(&last_ok, ok, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
    return ok;
}

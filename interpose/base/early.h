/* early.h - what every process the shim is loaded into runs, at load and at exit.
 *
 * A process that never uses a backend pays for this at every exec, and what it pays is page
 * faults, not instructions: the first touch of a page of code or data costs microseconds (a
 * read fault maps the neighbouring cached pages of a file with it, a write fault copies one
 * page; tools/bench/overhead/RESULTS.md has the figures), the whole path a few thousand
 * instructions. So the path that runs at load and at exit
 * - is placed in one part of the text (FBC_EARLY; the linker groups .text.startup.*),
 *   its constants among the relocated ones (FBC_EARLY_CONST),
 * - writes only the first page of fbc_proc (base.h),
 * - calls no function of the C library or the loader that the program itself may never call:
 *   its few system calls are made here, its loops are its own,
 * - reads no clock (the vDSO's data pages): the start is a counter reading, turned into
 *   CLOCK_MONOTONIC when a census needs it (fbc_clock_ns_at).
 * tests/shim/test_bare.c checks, by the loader's own trace, which functions of the C library
 * such a process has the shim call. */
#ifndef FBC_EARLY_H
#define FBC_EARLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#else
#include <errno.h>
#include <unistd.h>
#endif

#define FBC_EARLY __attribute__((section(".text.startup.fbc")))
/* A constant the load path reads (a name it looks for): among the relocated constants,
 * whose page the loader writes anyway, not on a page of .rodata of its own. */
#define FBC_EARLY_CONST __attribute__((section(".data.rel.ro.fbc")))

/* A system call of up to four arguments, -errno on failure; errno is left alone. */
static inline long fbc_sys4(long nr, long a, long b, long c, long d)
{
#if defined(__x86_64__)
    long r;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return r;
#else
    int saved = errno;
    long r = syscall(nr, a, b, c, d);
    if (r < 0)
        r = -errno;
    errno = saved;
    return r;
#endif
}

static inline long fbc_sys3(long nr, long a, long b, long c)
{
    return fbc_sys4(nr, a, b, c, 0);
}

static inline int fbc_sys_getpid(void)
{
    return (int)fbc_sys3(SYS_getpid, 0, 0, 0);
}

/* The time-stamp counter, or 0 where there is none (the start is then read from the clock). */
static inline uint64_t fbc_early_ticks(void)
{
#if defined(__x86_64__)
    return __rdtsc();
#else
    return 0;
#endif
}

/* The C library's string functions are ifunc-selected variants on pages of their own. The
 * empty asm keeps the compiler from seeing strlen in the loop and calling it after all. */
static inline size_t fbc_early_strlen(const char *s)
{
    size_t n = 0;
    while (s[n]) {
        __asm__("" : "+r"(n));
        n++;
    }
    return n;
}

static inline bool fbc_early_prefix(const char *s, const char *prefix)
{
    while (*prefix)
        if (*s++ != *prefix++)
            return false;
    return true;
}

/* Whether a equals b, letters of either case alike when fold (ASCII). */
static inline bool fbc_early_same(const char *a, const char *b, bool fold)
{
    for (;; a++, b++) {
        char x = *a, y = *b;
        if (fold) {
            x = x >= 'A' && x <= 'Z' ? (char)(x - 'A' + 'a') : x;
            y = y >= 'A' && y <= 'Z' ? (char)(y - 'A' + 'a') : y;
        }
        if (x != y)
            return false;
        if (!x)
            return true;
    }
}

/* A variable of the environment, as getenv (which is on a page of its own). */
static inline const char *fbc_early_getenv(const char *name)
{
    extern char **environ;
    size_t n = fbc_early_strlen(name);
    for (char **e = environ; e && *e; e++)
        if (fbc_early_prefix(*e, name) && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/* Runs fn once: 0 not run, 1 running, 2 done. pthread_once ends every first run with a
 * futex wake, a system call, whether or not a thread waits; a thread that finds it running
 * (never the one running it: fn must not come back here) yields until it is done. */
static inline void fbc_early_once(int *state, void (*fn)(void))
{
    if (__atomic_load_n(state, __ATOMIC_ACQUIRE) == 2)
        return;
    int expect = 0;
    if (__atomic_compare_exchange_n(state, &expect, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        fn();
        __atomic_store_n(state, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(state, __ATOMIC_ACQUIRE) != 2)
        fbc_sys3(SYS_sched_yield, 0, 0, 0);
}

#endif

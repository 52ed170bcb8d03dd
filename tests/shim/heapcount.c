/* heapcount.c - preloaded ahead of the shim by test_bare.c: counts the heap blocks allocated
 * and not yet freed, so a program can ask at the start of main whether anything loaded before
 * it (the shim's constructor) kept one. glibc routes its own allocations through these
 * (malloc is replaceable), dlerror's and strdup's included; the real work is glibc's
 * __libc_ functions, which never call back here. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);

#define SLOTS 8192 /* live blocks tracked; more are counted as untracked */
static void *live[SLOTS];
static size_t nlive, untracked;
static int lock_;

static void lock(void)
{
    while (__atomic_exchange_n(&lock_, 1, __ATOMIC_ACQUIRE))
        ;
}

static void unlock(void)
{
    __atomic_store_n(&lock_, 0, __ATOMIC_RELEASE);
}

static size_t slot(void *p)
{
    return (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull >> 51) & (SLOTS - 1);
}

static void *track(void *p)
{
    if (!p)
        return p;
    lock();
    size_t i = slot(p), k = 0;
    while (live[i] && k++ < SLOTS)
        i = (i + 1) & (SLOTS - 1);
    if (!live[i]) {
        live[i] = p;
        nlive++;
    } else {
        untracked++;
    }
    unlock();
    return p;
}

/* Linear probing with deletion: the run after the hole is re-inserted. */
static void untrack(void *p)
{
    if (!p)
        return;
    lock();
    size_t i = slot(p), k = 0;
    while (live[i] != p && live[i] && k++ < SLOTS)
        i = (i + 1) & (SLOTS - 1);
    if (live[i] == p) {
        live[i] = NULL;
        nlive--;
        for (size_t j = (i + 1) & (SLOTS - 1); live[j]; j = (j + 1) & (SLOTS - 1)) {
            void *q = live[j];
            live[j] = NULL;
            size_t h = slot(q);
            while (live[h])
                h = (h + 1) & (SLOTS - 1);
            live[h] = q;
        }
    }
    unlock();
}

__attribute__((visibility("default"))) size_t heapcount_live(void)
{
    return __atomic_load_n(&nlive, __ATOMIC_RELAXED) +
           __atomic_load_n(&untracked, __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
    return track(__libc_malloc(n));
}

void *calloc(size_t n, size_t size)
{
    return track(__libc_calloc(n, size));
}

void *realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    untrack(p);
    void *q = __libc_realloc(p, n);
    if (!q && n)
        return track(p); /* the old block lives on */
    return track(q);
}

void free(void *p)
{
    untrack(p);
    __libc_free(p);
}

void *memalign(size_t align, size_t n)
{
    return track(__libc_memalign(align, n));
}

void *aligned_alloc(size_t align, size_t n)
{
    return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align % sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = memalign(align, n);
    if (!p && n)
        return ENOMEM;
    *out = p;
    return 0;
}

/* test_redirect.c - redirect/got.c on its own (built into this program, which it therefore
 * passes by as it passes the shim by): libcallernow.so, loaded with the program, is linked
 * with full RELRO and -z now against liboddlib.so; libcaller.so (lazily bound) is dlopen-ed
 * RTLD_LOCAL later.
 * Entries are written and restored while 8 threads call through them, with exact counts;
 * an entry bound to another definition is left alone; a module unloaded and loaded again is
 * scanned anew and its entries restored without touching the memory it had.
 *   test-redirect LIBCALLER */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odd.h"
#include "redirect.h"

fbc_process fbc_proc; /* got.c names the program by it; its base name is enough here */
const char *fbc_process_exe(void)
{
    return fbc_proc.exe;
}

/* got.c's warning when a cap is reached: this program stays far below them. */
void fbc_warn(const char *fmt, ...)
{
    fprintf(stderr, "test-redirect: unexpected warning: %s\n", fmt);
    exit(1);
}

/* got.c's lock around fork: this program does not fork. */
void fbc_mutex_fork(pthread_mutex_t *m, int phase)
{
    (void)m, (void)phase;
}

static long replaced;
static long (*real_ints)(long);

static long replacement(long x)
{
    __atomic_add_fetch(&replaced, 1, __ATOMIC_RELAXED);
    return real_ints(x);
}

static int failed;
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL: " __VA_ARGS__);                                                 \
            fputc('\n', stderr);                                                                   \
            failed = 1;                                                                            \
        }                                                                                          \
    } while (0)

#define CALLS 200000L
static long wrong;

long caller_run_now(long n);

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < CALLS / 100; i++)
        if (caller_run_now(100) != 100 * 100)
            __atomic_add_fetch(&wrong, 1, __ATOMIC_RELAXED);
    return NULL;
}

typedef long (*run_fn)(long);

int main(int argc, char **argv)
{
    if (argc != 2)
        return fprintf(stderr, "usage: test-redirect LIBCALLER\n"), 2;
    real_ints = (long (*)(long))dlsym(RTLD_DEFAULT, "odd_ints");
    fbc_redirection r = {"odd_ints", (void *)replacement, NULL, (void *)real_ints};

    /* Bound to another definition: left alone. */
    fbc_redirection other = {"odd_ints", (void *)replacement, NULL, (void *)worker};
    EXPECT(fbc_redirect_scan(&other, 1) == 0, "an entry bound elsewhere was redirected");
    fbc_redirect_undo();

    /* A module loaded before (full RELRO, bound at start). */
    EXPECT(fbc_redirect_scan(&r, 1) >= 1, "no entry of libcallernow redirected");
    EXPECT(caller_run_now(20) == 400 && replaced == 20, "libcallernow's calls: replaced %ld",
           replaced);
    EXPECT(!fbc_redirect_stale(), "stale right after a scan");
    EXPECT(fbc_redirect_scan(&r, 1) == 0, "a scanned module scanned again");

    /* One dlopen-ed later, RTLD_LOCAL, lazily bound. */
    void *h = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    EXPECT(h != NULL, "dlopen %s: %s", argv[1], dlerror());
    if (!h)
        return 1;
    run_fn run = (run_fn)dlsym(h, "caller_run");
    EXPECT(fbc_redirect_stale(), "a module loaded but not stale");
    EXPECT(fbc_redirect_scan(&r, 1) >= 1, "no entry of libcaller redirected");
    replaced = 0;
    EXPECT(run(10) == 100 && replaced == 10, "libcaller's calls: replaced %ld", replaced);

    /* Written and restored while 8 threads call. */
    fbc_redirect_undo();
    long before = odd_calls();
    replaced = 0;
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    int rounds = 0;
    for (; rounds < 2000; rounds++) {
        fbc_redirect_scan(&r, 1);
        fbc_redirect_undo();
    }
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    EXPECT(wrong == 0, "%ld calls returned a wrong result", wrong);
    EXPECT(odd_calls() - before == 8 * CALLS, "calls reaching odd_ints: %ld, not %ld",
           odd_calls() - before, 8 * CALLS);
    EXPECT(replaced <= 8 * CALLS, "replaced %ld", replaced);
    EXPECT(fbc_redirect_count() == 0, "entries left after undo: %zu", fbc_redirect_count());
    long kept = replaced;
    EXPECT(caller_run_now(3) == 9 && run(5) == 25 && replaced == kept,
           "restored calls still replaced");

    /* A module unloaded, then loaded again: scanned anew; undo passes the gone one by. */
    EXPECT(fbc_redirect_scan(&r, 1) >= 2, "libcallernow and libcaller again");
    dlclose(h);
    fbc_redirect_undo();
    h = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    run = h ? (run_fn)dlsym(h, "caller_run") : NULL;
    EXPECT(run && fbc_redirect_scan(&r, 1) >= 2, "libcaller reloaded: not redirected");
    replaced = 0;
    EXPECT(run && run(4) == 16 && replaced == 4, "libcaller reloaded: replaced %ld", replaced);
    dlclose(h);
    EXPECT(fbc_redirect_scan(&r, 1) == 0, "after dlclose");
    fbc_redirect_undo();
    replaced = 0;
    EXPECT(caller_run_now(2) == 4 && replaced == 0, "libcallernow's entry not restored");
    if (!failed)
        printf("redirect: ok (%d rounds of write and restore under 8 threads, %ld of %ld calls "
               "redirected)\n",
               rounds, kept, 8 * CALLS);
    return failed;
}

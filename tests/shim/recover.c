/* recover.c - a library that, like a JIT or a garbage collector, handles SIGSEGV itself: its
 * constructor (run before the shim's) installs a handler that recovers from a fault with
 * siglongjmp and records the faulting address (when RECOVER_SEGV is set); and a destructor that
 * falls back when asked (RECOVER_DTOR_FALLBACKS=N), after every atexit handler has run. */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "fakevkt.h"

#define API __attribute__((visibility("default")))

static sigjmp_buf where;
static void *volatile last_addr;
static volatile sig_atomic_t armed;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    last_addr = si->si_addr;
    if (armed)
        siglongjmp(where, 1);
    abort();
}

__attribute__((constructor)) static void install(void)
{
    if (!getenv("RECOVER_SEGV"))
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
}

/* Reads *p; returns 1 when it faulted (and was recovered), and the address the kernel gave. */
API int recover_probe(volatile int *p, void **addr)
{
    armed = 1;
    if (sigsetjmp(where, 1)) {
        armed = 0;
        *addr = last_addr;
        return 1;
    }
    int v = *p;
    (void)v;
    armed = 0;
    return 0;
}

__attribute__((destructor)) static void late(void)
{
    const char *n = getenv("RECOVER_DTOR_FALLBACKS");
    fake_tensor t = {0, 1, {4}};
    for (int i = 0; n && i < atoi(n); i++)
        vkt_dot(&t, 16);
}

/* sigwrap.c - sigaction(), signal() and siginterrupt(), interposed so a program sees and keeps
 * its own view of the signals the shim handles (triggers/chain.c), and gets glibc's answers:
 * EINVAL for a signal number out of range or glibc's own, SIG_ERR refused as a handler, and
 * signal() installing without SA_RESTART what siginterrupt(sig, 1) asked to interrupt.
 * glibc's signal(), bsd_signal() and siginterrupt() call its sigaction internally, past any
 * wrapper, so each is defined here over the wrapper instead. ThreadSanitizer calls sigaction
 * before its runtime is up, and an instrumented wrapper would crash it: TSan builds keep the
 * program's handlers only as they were when the shim armed. */
#include <errno.h>
#include <string.h>

#include "hooks.h"

#ifndef FBC_NO_SIGACTION_WRAPPER
/* glibc's _sigintr: the signals siginterrupt(sig, 1) was asked for, bit sig - 1. */
static uint64_t interrupting;

FBC_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int rc = fbc_sig_app_action(sig, act, old);
    if (rc == 0) {
        errno = ENOSYS; /* no sigaction after the shim: nothing can be installed */
        return -1;
    }
    return rc == 1 ? 0 : -1;
}

FBC_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
    if (handler == SIG_ERR || sig < 1 || sig >= NSIG) {
        errno = EINVAL;
        return SIG_ERR;
    }
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    /* glibc's signal() has BSD semantics: restarting, unless siginterrupt said otherwise. */
    bool intr = __atomic_load_n(&interrupting, __ATOMIC_RELAXED) >> (sig - 1) & 1;
    sa.sa_flags = intr ? 0 : SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

FBC_EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t handler)
{
    return signal(sig, handler);
}

FBC_EXPORT int siginterrupt(int sig, int interrupt)
{
    struct sigaction action;
    if (sigaction(sig, NULL, &action) < 0)
        return -1;
    uint64_t bit = (uint64_t)1 << (sig - 1);
    if (interrupt) {
        __atomic_or_fetch(&interrupting, bit, __ATOMIC_RELAXED);
        action.sa_flags &= ~SA_RESTART;
    } else {
        __atomic_and_fetch(&interrupting, ~bit, __ATOMIC_RELAXED);
        action.sa_flags |= SA_RESTART;
    }
    return sigaction(sig, &action, NULL) < 0 ? -1 : 0;
}
#endif

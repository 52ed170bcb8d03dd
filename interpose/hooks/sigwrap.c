/* sigwrap.c - sigaction() and signal(), interposed so a program sees and keeps its own view
 * of the signals the shim handles (triggers/chain.c). ThreadSanitizer calls sigaction before
 * its runtime is up, and an instrumented wrapper would crash it: TSan builds keep the
 * program's handlers only as they were when the shim armed. */
#include <errno.h>
#include <string.h>

#include "hooks.h"

#ifndef FBC_NO_SIGACTION_WRAPPER
FBC_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int rc = fbc_sig_app_action(sig, act, old);
    if (rc == 0) {
        errno = ENOSYS;
        return -1;
    }
    return rc == 1 ? 0 : -1;
}

FBC_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART; /* glibc's signal() has BSD semantics */
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}
#endif

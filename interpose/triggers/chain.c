/* chain.c - the signals the shim handles, and the application's view of them. The program
 * must behave as without the shim: sigaction() reports back what the program set, and the
 * program's own handlers run as before.
 *
 * - The census signal (FBCOUNT_SIGNAL) is always the shim's: the program's handler for it is
 *   recorded and called from the shim's handler after the snapshot is requested. The shim's
 *   handler is installed with the program's SA_RESTART, SA_NODEFER and mask, so a system
 *   call the signal interrupts fails or restarts as the program asked (siginterrupt).
 * - A termination signal is the shim's only while the program leaves it at the default: a
 *   handler or SIG_IGN the program installs is installed for real (the shim steps aside, and
 *   the program's own exit path writes the census); setting the default again gives it back.
 *
 * The views are double-buffered so a handler reads one without a lock. */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "triggers.h"

#define NSIG_ 65

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

typedef struct {
    struct sigaction app[2]; /* the program's view; app[cur] is current */
    int cur;
    void (*mine)(int, siginfo_t *, void *);
    bool census;
    int taken; /* the shim's handler is installed (atomic) */
} slot;

static sigaction_fn real;
static slot slots[NSIG_];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

bool fbc_sig_ready(void)
{
    if (!__atomic_load_n(&real, __ATOMIC_ACQUIRE)) {
#ifdef FBC_NO_SIGACTION_WRAPPER
        /* A ThreadSanitizer build defines no sigaction of its own: the plain symbol is TSan's,
         * which delivers a handler only where the thread is set up to run it. */
        sigaction_fn f = sigaction;
#else
        void *p = dlsym(RTLD_NEXT, "sigaction");
        sigaction_fn f;
        memcpy(&f, &p, sizeof f);
#endif
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    return real != NULL;
}

static bool is_default(const struct sigaction *a)
{
    return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL;
}

static bool has_handler(const struct sigaction *a)
{
    return (a->sa_flags & SA_SIGINFO) || (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN);
}

/* app: the program's action the shim's handler stands in for. The census signal takes its
 * restart and masking behaviour from the program's handler, when it has one, and restarts
 * otherwise (a snapshot must not make a program's read fail). */
static int install_mine(int sig, const struct sigaction *app)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = slots[sig].mine;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (slots[sig].census && has_handler(app)) {
        sa.sa_flags |= app->sa_flags & (SA_RESTART | SA_NODEFER);
        sa.sa_mask = app->sa_mask;
    } else if (slots[sig].census) {
        sa.sa_flags |= SA_RESTART;
    }
    return real(sig, &sa, NULL);
}

/* Takes sig when the application's action allows it: the default, or (census) anything, or
 * (chained) anything but SIG_IGN. */
static int take(int sig, void (*handler)(int, siginfo_t *, void *), bool census, bool chained)
{
    if (sig <= 0 || sig >= NSIG_ || !fbc_sig_ready())
        return -1;
    pthread_mutex_lock(&lock);
    slot *s = &slots[sig];
    struct sigaction old;
    int rc = -1;
    if (real(sig, NULL, &old) == 0) {
        /* The view is kept even where the program has its own action: when it sets the
         * default again, the shim's handler takes its place. */
        s->app[0] = old;
        s->cur = 0;
        s->census = census;
        __atomic_store_n(&s->mine, handler, __ATOMIC_RELEASE);
        if ((census || is_default(&old) || (chained && has_handler(&old))) &&
            install_mine(sig, &old) == 0) {
            __atomic_store_n(&s->taken, 1, __ATOMIC_RELEASE);
            rc = 0;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int fbc_sig_take(int sig, void (*handler)(int, siginfo_t *, void *), bool census)
{
    return take(sig, handler, census, false);
}

int fbc_sig_take_chained(int sig, void (*handler)(int, siginfo_t *, void *))
{
    return take(sig, handler, false, true);
}

bool fbc_sig_app_handles(int sig)
{
    if (sig <= 0 || sig >= NSIG_)
        return false;
    const slot *s = &slots[sig];
    return has_handler(&s->app[__atomic_load_n(&s->cur, __ATOMIC_ACQUIRE)]);
}

void fbc_sig_release_all(void)
{
    if (!fbc_sig_ready())
        return;
    pthread_mutex_lock(&lock);
    for (int sig = 1; sig < NSIG_; sig++) {
        slot *s = &slots[sig];
        if (!s->mine)
            continue;
        struct sigaction now;
        /* A program that installed its own action since keeps it. */
        if (__atomic_load_n(&s->taken, __ATOMIC_ACQUIRE) && real(sig, NULL, &now) == 0 &&
            (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == s->mine)
            real(sig, &s->app[s->cur], NULL);
        __atomic_store_n(&s->taken, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&s->mine, NULL, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
}

int fbc_sig_app_action(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!fbc_sig_ready())
        return 0;
    if (sig <= 0 || sig >= NSIG_) /* glibc's own answer: EINVAL */
        return real(sig, act, old) == 0 ? 1 : -1;
    /* Every call goes through the lock, so a program's action cannot slip in between the
     * shim's look at a signal and its taking it. */
    pthread_mutex_lock(&lock);
    slot *s = &slots[sig];
    if (!s->mine) {
        int r = real(sig, act, old);
        pthread_mutex_unlock(&lock);
        return r == 0 ? 1 : -1;
    }
    struct sigaction prev = s->app[s->cur];
    int rc = 1;
    if (act && !s->census) {
        /* A termination signal: the program's action is the real one unless it is the
         * default, which the shim's handler stands in for. */
        if (is_default(act)) {
            if (real(sig, act, NULL) != 0 || install_mine(sig, act) != 0)
                rc = -1;
            __atomic_store_n(&s->taken, rc == 1, __ATOMIC_RELEASE);
        } else {
            if (real(sig, act, NULL) != 0)
                rc = -1;
            else
                __atomic_store_n(&s->taken, 0, __ATOMIC_RELEASE);
        }
    } else if (act && s->census && install_mine(sig, act) != 0) {
        rc = -1; /* refused as the kernel would refuse the program's own (a bad mask) */
    }
    if (act && rc == 1) {
        s->app[!s->cur] = *act;
        __atomic_store_n(&s->cur, !s->cur, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    if (rc == 1 && old)
        *old = prev;
    return rc;
}

void fbc_sig_call_app(int sig, siginfo_t *si, void *uc)
{
    if (sig <= 0 || sig >= NSIG_)
        return;
    const slot *s = &slots[sig];
    const struct sigaction *a = &s->app[__atomic_load_n(&s->cur, __ATOMIC_ACQUIRE)];
    if (a->sa_flags & SA_SIGINFO) {
        if (a->sa_sigaction)
            a->sa_sigaction(sig, si, uc);
    } else if (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN && a->sa_handler) {
        a->sa_handler(sig);
    }
}

void fbc_sig_die(int sig)
{
    fbc_output_abandon();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    if (real)
        real(sig, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    /* Raised while blocked (we are in its handler), delivered when unblocked: the default
     * action, exit status and core dump exactly as without the shim. */
    raise(sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
}

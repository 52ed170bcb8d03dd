/* snapshot.c - the census signal (FBCOUNT_SIGNAL, default SIGUSR1): the handler only writes
 * a byte to a pipe; a dumper thread with every signal blocked writes the snapshot.
 *
 * The application keeps its own use of the signal: a handler it had before the shim, or
 * installs later through sigaction() or signal() (both interposed here for that one signal),
 * is recorded and called after the byte is written; sigaction() reports it back as the
 * current action. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

int (*fbc_real_sigaction)(int, const struct sigaction *, struct sigaction *);
static int census_sig;           /* 0 until installed */
static int pipefd[2] = {-1, -1};
static struct sigaction app[2];  /* the application's view; app[app_cur] is current */
static int app_cur;
static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;

int fbc_sigaction_resolve(void)
{
    if (!fbc_real_sigaction) {
        void *p = dlsym(RTLD_NEXT, "sigaction");
        memcpy(&fbc_real_sigaction, &p, sizeof p);
    }
    return fbc_real_sigaction ? 0 : -1;
}

/* Snapshots asked for by the signal, and taken on (by the dumper or the exit path): a
 * signal just before exit must still give its snapshot, ahead of the exit dump. */
static unsigned requested, claimed, inflight;

/* Takes on every pending request at once (signals that arrive together make one snapshot). */
static bool claim(void)
{
    unsigned c = __atomic_load_n(&claimed, __ATOMIC_ACQUIRE);
    for (;;) {
        unsigned r = __atomic_load_n(&requested, __ATOMIC_ACQUIRE);
        if (c == r)
            return false;
        __atomic_add_fetch(&inflight, 1, __ATOMIC_ACQ_REL);
        if (__atomic_compare_exchange_n(&claimed, &c, r, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return true;
        __atomic_sub_fetch(&inflight, 1, __ATOMIC_ACQ_REL);
    }
}

static void serve(void)
{
    while (claim()) {
        fbc_dump_process("snapshot", NULL, NULL);
        __atomic_sub_fetch(&inflight, 1, __ATOMIC_ACQ_REL);
    }
}

void fbc_snapshot_drain(void)
{
    if (!__atomic_load_n(&census_sig, __ATOMIC_ACQUIRE))
        return;
    serve();
    /* A snapshot the dumper has taken on is waited for, a bounded while (2 s). */
    for (int i = 0; i < 2000 && __atomic_load_n(&inflight, __ATOMIC_ACQUIRE); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

static void on_census(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    char b = 1;
    __atomic_add_fetch(&requested, 1, __ATOMIC_ACQ_REL);
    (void)!write(pipefd[1], &b, 1); /* full pipe: a snapshot is already pending */
    const struct sigaction *a = &app[__atomic_load_n(&app_cur, __ATOMIC_ACQUIRE)];
    if (a->sa_flags & SA_SIGINFO) {
        if (a->sa_sigaction)
            a->sa_sigaction(sig, si, uc);
    } else if (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN && a->sa_handler) {
        a->sa_handler(sig);
    }
    errno = saved;
}

static void *dumper(void *arg)
{
    (void)arg;
    for (;;) {
        char b[64];
        ssize_t n = read(pipefd[0], b, sizeof b);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return NULL;
        serve();
    }
}

static void start_dumper(void)
{
    if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) != 0) {
        fbc_warn("FBCOUNT_SIGNAL: no pipe for snapshots (%s); snapshots disabled", strerror(errno));
        return;
    }
    int fl = fcntl(pipefd[0], F_GETFL);
    fcntl(pipefd[0], F_SETFL, fl & ~O_NONBLOCK); /* the reader blocks, the handler never does */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &at, dumper, NULL);
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        fbc_warn("FBCOUNT_SIGNAL: no dumper thread (%s); snapshots disabled", strerror(rc));
}

void fbc_snapshot_install(void)
{
    if (fbc_sigaction_resolve() != 0 || !fbc_cfg.signal)
        return;
    start_dumper();
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_census;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (fbc_real_sigaction(fbc_cfg.signal, &sa, &old) != 0) {
        fbc_warn("FBCOUNT_SIGNAL: cannot handle signal %d (%s); snapshots disabled", fbc_cfg.signal,
                 strerror(errno));
        return;
    }
    app[0] = old;
    __atomic_store_n(&census_sig, fbc_cfg.signal, __ATOMIC_RELEASE);
}

void fbc_snapshot_after_fork(void)
{
    /* The pipe is shared with the parent: a signal to the child must not wake its dumper. */
    if (pipefd[0] >= 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        pipefd[0] = pipefd[1] = -1;
        start_dumper();
    }
    pthread_mutex_init(&app_lock, NULL);
    /* The parent's pending snapshots are the parent's. */
    __atomic_store_n(&claimed, __atomic_load_n(&requested, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    __atomic_store_n(&inflight, 0, __ATOMIC_RELEASE);
}

/* ThreadSanitizer calls sigaction before its runtime is up, and an instrumented wrapper would
 * crash it: TSan builds keep the application's handlers by chaining at start-up only. */
#ifndef FBC_NO_SIGACTION_WRAPPER
FBC_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (fbc_sigaction_resolve() != 0) {
        errno = ENOSYS;
        return -1;
    }
    if (sig == 0 || sig != __atomic_load_n(&census_sig, __ATOMIC_ACQUIRE))
        return fbc_real_sigaction(sig, act, old);
    pthread_mutex_lock(&app_lock);
    int cur = app_cur;
    struct sigaction prev = app[cur];
    if (act) {
        app[!cur] = *act;
        __atomic_store_n(&app_cur, !cur, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&app_lock);
    if (old)
        *old = prev;
    return 0;
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

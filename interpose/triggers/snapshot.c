/* snapshot.c - the census signal (FBCOUNT_SIGNAL, default SIGUSR1): the handler only counts
 * the request and wakes the dumper, which writes the snapshot; then the program's own
 * handler for the signal, if it has one, runs as it would without the shim (chain.c). */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "triggers.h"

/* Snapshots asked for by the signal, and taken on (by the dumper or the exit path): a signal
 * just before exit must still give its snapshot, ahead of the exit dump. */
static unsigned claimed, inflight;
static unsigned served; /* requests answered by a written snapshot (the last claimed) */
static int installed;

/* Takes on every pending request at once (signals that arrive together make one snapshot). */
static bool claim(void)
{
    unsigned c = __atomic_load_n(&claimed, __ATOMIC_ACQUIRE);
    for (;;) {
        unsigned r = __atomic_load_n(&fbc_req_snapshot, __ATOMIC_ACQUIRE);
        if (c == r)
            return false;
        __atomic_add_fetch(&inflight, 1, __ATOMIC_ACQ_REL);
        if (__atomic_compare_exchange_n(&claimed, &c, r, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return true;
        __atomic_sub_fetch(&inflight, 1, __ATOMIC_ACQ_REL);
    }
}

void fbc_snapshot_serve(void)
{
    while (claim()) {
        fbc_dump_req req = {.reason = "snapshot", .patient = true};
        fbc_dump_write(&req, NULL, NULL, 0);
        __atomic_store_n(&served, __atomic_load_n(&claimed, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
        __atomic_sub_fetch(&inflight, 1, __ATOMIC_ACQ_REL);
    }
}

void fbc_snapshot_drain(void)
{
    if (!__atomic_load_n(&installed, __ATOMIC_ACQUIRE))
        return;
    fbc_snapshot_serve();
    /* A snapshot the dumper has taken on is waited for, a bounded while (2 s). */
    for (int i = 0; i < 2000 && __atomic_load_n(&inflight, __ATOMIC_ACQUIRE); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

static void on_census(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    __atomic_add_fetch(&fbc_req_snapshot, 1, __ATOMIC_ACQ_REL);
    fbc_dumper_wake();
    fbc_sig_call_app(sig, si, uc);
    errno = saved;
}

void fbc_snapshot_await(int ms)
{
    unsigned want = __atomic_add_fetch(&fbc_req_snapshot, 1, __ATOMIC_ACQ_REL);
    fbc_dumper_wake();
    /* Wrapping counters: served has reached want when it is no more than 2^31 behind. */
    for (int i = 0; i < ms && (int)(__atomic_load_n(&served, __ATOMIC_ACQUIRE) - want) < 0; i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

void fbc_snapshot_install(void)
{
    if (!fbc_cfg.signal || __atomic_load_n(&installed, __ATOMIC_ACQUIRE))
        return;
    if (fbc_sig_take(fbc_cfg.signal, on_census, true) != 0) {
        fbc_warn("FBCOUNT_SIGNAL: cannot handle signal %d (%s); snapshots disabled", fbc_cfg.signal,
                 strerror(errno));
        return;
    }
    __atomic_store_n(&installed, 1, __ATOMIC_RELEASE);
}

void fbc_snapshot_release(void)
{
    __atomic_store_n(&installed, 0, __ATOMIC_RELEASE);
}

void fbc_snapshot_after_fork(void)
{
    /* The parent's pending snapshots are the parent's. */
    __atomic_store_n(&claimed, __atomic_load_n(&fbc_req_snapshot, __ATOMIC_ACQUIRE),
                     __ATOMIC_RELEASE);
    __atomic_store_n(&inflight, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&served, __atomic_load_n(&claimed, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

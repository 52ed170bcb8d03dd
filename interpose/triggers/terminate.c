/* terminate.c - a termination signal whose action is the default (Ctrl-C, `kill`, `timeout`,
 * a CPU or file-size limit, a closed pipe): the census is written, then the process dies by
 * the same signal, exactly as it would have (status 128+N in a shell, a core where the default
 * makes one). The handler only asks the dumper and waits for it, a bounded while
 * (FBCOUNT_SIGNAL_WAIT, default 2 s), so a wedged process still dies; the same or another
 * termination signal arriving during the dump ends the process at once. In an attached
 * process, a termination signal the program handles itself is taken too (its sigaction was
 * never the shim's to watch): the census is written as a snapshot, then the program's handler
 * runs and the program goes on as it would have. */
#include <errno.h>
#include <time.h>

#include "triggers.h"

static int terminating;

/* SIGUSR2 too, unless it is the census signal; SIGPIPE only where the program left it at the
 * default (most servers ignore it, and then it is not the shim's). */
static const int signals[] = {SIGINT,  SIGTERM,   SIGHUP,  SIGQUIT, SIGXCPU, SIGXFSZ,
                              SIGALRM, SIGVTALRM, SIGPROF, SIGUSR2, SIGPIPE};

static void on_terminate(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    if (fbc_sig_app_handles(sig)) {
        /* An attached shim in front of the program's own handler: the census as it stands,
         * then the program decides (its exit path writes the final census). */
        if (fbc_dumper_running())
            fbc_snapshot_await(fbc_cfg.signal_wait_ms);
        fbc_sig_call_app(sig, si, uc);
        errno = saved;
        return;
    }
    /* The exit's own census being written: the process dies as soon as its raw form is on
     * disk (an MPI launcher ends every rank while they write it). */
    if (fbc_final_terminate(sig)) {
        errno = saved;
        return;
    }
    if (__atomic_exchange_n(&terminating, 1, __ATOMIC_ACQ_REL) || !fbc_dumper_running()) {
        fbc_sig_die(sig);
        errno = saved;
        return;
    }
    __atomic_store_n(&fbc_req_terminate, sig, __ATOMIC_RELEASE);
    fbc_dumper_wake();
    for (int waited = 0;
         waited < fbc_cfg.signal_wait_ms && !__atomic_load_n(&fbc_terminate_done, __ATOMIC_ACQUIRE);
         waited++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    fbc_sig_die(sig);
    errno = saved;
}

void fbc_terminate_serve(int sig)
{
    if (!fbc_final_done()) {
        fbc_report *r = NULL;
        char path[2200];
        fbc_dump_req req = {.reason = "signal", .signal = sig, .patient = false, .raw_first = true};
        fbc_snapshot_serve();
        if (fbc_dump_write(&req, &r, path, sizeof path) == 0)
            fbc_dump_drop_checkpoint();
        fbc_final_mark();
        if (r && !fbc_cfg.quiet)
            fbc_dump_summary(r, path, sig);
        fbc_report_free(r);
    }
    __atomic_store_n(&fbc_terminate_done, 1, __ATOMIC_RELEASE);
}

void fbc_terminate_install(void)
{
    for (size_t i = 0; i < sizeof signals / sizeof *signals; i++)
        if (signals[i] != fbc_cfg.signal)
            fbc_sig_take(signals[i], on_terminate, false);
}

void fbc_terminate_install_chained(void)
{
    for (size_t i = 0; i < sizeof signals / sizeof *signals; i++)
        if (signals[i] == SIGPIPE) /* a handler of SIGPIPE is no request to end */
            fbc_sig_take(signals[i], on_terminate, false);
        else if (signals[i] != fbc_cfg.signal)
            fbc_sig_take_chained(signals[i], on_terminate);
}

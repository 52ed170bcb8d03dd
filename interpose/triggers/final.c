/* final.c - the census's last state: written once when the process exits (from the atexit
 * handler the hooks register at the first event, while the backend is still whole) or just
 * before it execs. A fallback made later still (an atexit handler registered earlier, a
 * library destructor) is not lost: the shim's destructor writes the final dump again, over
 * the first, when the census grew since. */
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fields.h"
#include "triggers.h"

static int done;
/* A final dump being written: 0 none, 1 its raw census not yet on disk, 2 on disk. The thread
 * writing it, and a termination signal it got meanwhile (atomics). */
static int writing, writer, pending;
static uint64_t events_at_final;
static char final_path[2200];

static int tid(void)
{
    return (int)syscall(SYS_gettid);
}

/* The raw census is on disk (or none was to be written): a termination signal the writing
 * thread got before ends the process now, as it would have ended it without the shim. */
static void raw_landed(void)
{
    __atomic_store_n(&writing, 2, __ATOMIC_RELEASE);
    int sig = __atomic_exchange_n(&pending, 0, __ATOMIC_ACQ_REL);
    if (sig)
        fbc_sig_die(sig);
}

bool fbc_final_writing_now(void)
{
    return __atomic_load_n(&writing, __ATOMIC_ACQUIRE) != 0;
}

bool fbc_final_terminate(int sig)
{
    int w = __atomic_load_n(&writing, __ATOMIC_ACQUIRE);
    if (!w)
        return false;
    if (w == 1 && __atomic_load_n(&writer, __ATOMIC_ACQUIRE) == tid()) {
        __atomic_store_n(&pending, sig, __ATOMIC_RELEASE);
        if (__atomic_load_n(&writing, __ATOMIC_ACQUIRE) == 1)
            return true; /* raw_landed ends the process */
        __atomic_store_n(&pending, 0, __ATOMIC_RELEASE);
    }
    /* Another thread writes it: waited for a bounded while. */
    for (int i = 0; i < fbc_cfg.signal_wait_ms && __atomic_load_n(&writing, __ATOMIC_ACQUIRE) == 1;
         i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    fbc_sig_die(sig);
    return true;
}

bool fbc_final_done(void)
{
    return __atomic_load_n(&done, __ATOMIC_ACQUIRE) != 0;
}

void fbc_final_mark(void)
{
    events_at_final = fbc_shards_events();
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

/* The backends' own op counters summed at the last fork (in the parent, whose child keeps
 * the value): a child whose counters moved since used its backend. */
static uint64_t work_at_fork;

void fbc_final_before_fork(void)
{
    work_at_fork = fbc_backends_work();
}

/* A fork child's census is its own: it has one when it used the backend after the fork (an
 * event counted, or with counters checked too, its backend's counters moved). */
static bool used_since_fork(bool counters)
{
    return !fbc_proc.forked || fbc_shards_events() > 0 ||
           (counters && fbc_backends_work() != work_at_fork);
}

static void final(const char *reason, const char *extra)
{
    uint64_t t0 = fbc_now_ns();
    if (!__atomic_load_n(&fbc_proc.on, __ATOMIC_ACQUIRE))
        return;
    if (__atomic_load_n(&fbc_req_terminate, __ATOMIC_ACQUIRE))
        return;          /* a termination signal's dump is the final one */
    fbc_dumper_finish(); /* warn mode's messages, formed off the threads that fell back */
    /* A process that loaded a backend that never fell back still gets its census (0
     * fallbacks is the answer a CI gate wants), one that never loaded one gets none. */
    if (!fbc_cfg.all_processes && (!fbc_backend_loaded() || !used_since_fork(true)))
        return;
    if (!fbc_output_read()) { /* FBCOUNT_OUTPUT=none, quiet, no metrics: nothing to name */
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
        return;
    }
    uint64_t n = fbc_shards_events();
    bool again = fbc_final_done();
    if (again && n == events_at_final)
        return;
    if (!again)
        fbc_snapshot_drain();
    __atomic_store_n(&writer, tid(), __ATOMIC_RELEASE);
    __atomic_store_n(&writing, 1, __ATOMIC_RELEASE);
    fbc_report *r = NULL;
    char path[2200];
    fbc_dump_req req = {.reason = reason,
                        .extra_json = extra,
                        .patient = true,
                        .raw_first = true,
                        .after_raw = raw_landed,
                        .started_ns = t0,
                        .path = again && final_path[0] ? final_path : NULL};
    if (fbc_dump_write(&req, &r, path, sizeof path) == 0) {
        fbc_dump_drop_checkpoint();
        if (path[0])
            memcpy(final_path, path, sizeof final_path);
    }
    events_at_final = n;
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&writing, 0, __ATOMIC_RELEASE);
    if (r && !again && !fbc_cfg.quiet)
        fbc_dump_summary(r, path, 0);
    fbc_report_free(r);
}

void fbc_final_raw(void)
{
    if (!__atomic_load_n(&fbc_proc.on, __ATOMIC_ACQUIRE) || !fbc_backend_seen() ||
        fbc_final_done() || fbc_final_writing_now() || !used_since_fork(false) ||
        __atomic_load_n(&fbc_req_terminate, __ATOMIC_ACQUIRE))
        return;
    fbc_dump_raw_file(FBR_REASON_EXIT, 0);
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

void fbc_final_dump(const char *extra)
{
    final(FBR_REASON_EXIT, extra);
}

const char *fbc_final_detach(void)
{
    final(FBR_REASON_DETACH, NULL);
    return final_path;
}

void fbc_final_after_fork(void)
{
    __atomic_store_n(&writing, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&pending, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&done, 0, __ATOMIC_RELEASE);
    events_at_final = 0;
    final_path[0] = '\0';
}

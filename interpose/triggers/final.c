/* final.c - the census's last state: written once when the process exits (from the atexit
 * handler the hooks register at the first event, while the backend is still whole) or just
 * before it execs. A fallback made later still (an atexit handler registered earlier, a
 * library destructor) is not lost: the shim's destructor writes the final dump again, over
 * the first, when the census grew since. */
#include <string.h>

#include "fields.h"
#include "triggers.h"

static int done;
static uint64_t events_at_final;
static char final_path[2200];

bool fbc_final_done(void)
{
    return __atomic_load_n(&done, __ATOMIC_ACQUIRE) != 0;
}

void fbc_final_mark(void)
{
    events_at_final = fbc_shards_events();
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

static void final(const char *reason, const char *extra)
{
    if (!__atomic_load_n(&fbc_proc.on, __ATOMIC_ACQUIRE))
        return;
    if (__atomic_load_n(&fbc_req_terminate, __ATOMIC_ACQUIRE))
        return; /* a termination signal's dump is the final one */
    /* A process that loaded a backend that never fell back still gets its census (0
     * fallbacks is the answer a CI gate wants), one that never loaded one gets none. */
    if (!fbc_cfg.all_processes && !fbc_backend_loaded())
        return;
    uint64_t n = fbc_shards_events();
    bool again = fbc_final_done();
    if (again && n == events_at_final)
        return;
    if (!again)
        fbc_snapshot_drain();
    fbc_report *r = NULL;
    char path[2200];
    fbc_dump_req req = {.reason = reason, .extra_json = extra, .patient = true,
                        .path = again && final_path[0] ? final_path : NULL};
    if (fbc_dump_write(&req, &r, path, sizeof path) == 0) {
        fbc_dump_drop_checkpoint();
        if (path[0])
            memcpy(final_path, path, sizeof final_path);
    }
    events_at_final = n;
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    if (r && !again && !fbc_cfg.quiet)
        fbc_dump_summary(r, path, 0);
    fbc_report_free(r);
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
    __atomic_store_n(&done, 0, __ATOMIC_RELEASE);
    events_at_final = 0;
    final_path[0] = '\0';
}

/* capture.c - return addresses of the current stack, outermost frames of this library
 * skipped. libunwind's unw_backtrace with its per-thread cache is the fast path; where it
 * gives up (no frames past the shim) the full unw_step walk takes over. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "shim.h"

void fbc_capture_init(void)
{
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

static int slow_walk(uintptr_t *frames, int max, uintptr_t lo, uintptr_t hi)
{
    unw_context_t ctx;
    unw_cursor_t cur;
    if (unw_getcontext(&ctx) < 0 || unw_init_local(&cur, &ctx) < 0)
        return 0;
    int n = 0;
    bool inside = true;
    do {
        unw_word_t ip;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
            break;
        if (inside && ip >= lo && ip < hi)
            continue;
        inside = false;
        frames[n++] = (uintptr_t)ip;
    } while (n < max && unw_step(&cur) > 0);
    return n;
}

int fbc_capture(uintptr_t *frames, int max)
{
    void *buf[FBC_MAX_DEPTH + 16];
    uintptr_t lo, hi;
    fbc_modmap_self(&lo, &hi);
    /* Four frames of this library sit above the caller (capture, record, the slow path, the
     * wrapper); every frame walked costs, so ask for no more than that. */
    int n = unw_backtrace(buf, max + 4);
    int skip = 0;
    while (skip < n && (uintptr_t)buf[skip] >= lo && (uintptr_t)buf[skip] < hi)
        skip++;
    if (n - skip < 1)
        return slow_walk(frames, max, lo, hi);
    int m = n - skip < max ? n - skip : max;
    for (int i = 0; i < m; i++)
        frames[i] = (uintptr_t)buf[skip + i];
    return m;
}

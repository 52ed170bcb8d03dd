/* interposer.c — a minimal stand-in for libfbcount: it interposes libvkt's
 * fallback exits, counts them per thread and forwards, or refuses a fallback
 * as libfbcount's FBCOUNT_MODE=error does (ip_refuse). If libvkt ever called
 * host_result directly (hidden visibility, -Bsymbolic, LTO), these counters
 * would stay at zero and test_fallback.c would fail. */
#include "interposer.h"

#include <dlfcn.h>
#include <stdio.h>

static _Thread_local ip_counts counts;
static _Thread_local bool refusing;

typedef int (*host_result_fn)(vkt_tensor *, const void *, size_t);
typedef void (*host_resident_fn)(const vkt_tensor *, size_t);

int host_result(vkt_tensor *out, const void *data, size_t nbytes)
{
    static host_result_fn next;
    if (!next)
        next = (host_result_fn)dlsym(RTLD_NEXT, "host_result");
    counts.host_result++;
    counts.last_nbytes = nbytes;
    counts.last_out = out;
    if (refusing)
        return VKT_EREFUSED; /* as libfbcount's FBCOUNT_MODE=error: libvkt's own is never called */
    if (!next) {
        fprintf(stderr, "interposer: no host_result after this library\n");
        return VKT_EINVAL;
    }
    return next(out, data, nbytes);
}

void host_resident_op(const vkt_tensor *out, size_t nbytes)
{
    static host_resident_fn next;
    if (!next)
        next = (host_resident_fn)dlsym(RTLD_NEXT, "host_resident_op");
    counts.host_resident_op++;
    counts.last_nbytes = nbytes;
    counts.last_out = out;
    if (next)
        next(out, nbytes);
}

ip_counts ip_get(void)
{
    return counts;
}

void ip_reset(void)
{
    counts = (ip_counts){0, 0, 0, NULL};
}

void ip_refuse(bool on)
{
    refusing = on;
}

void *ip_host_result_addr(void)
{
    return (void *)host_result;
}

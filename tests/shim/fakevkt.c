/* fakevkt.c - the test backend (see fakevkt.h). Built with -fno-optimize-sibling-calls, like
 * libvkt, so every vkt_ frame stays on the stack at -O2. */
#include "fakevkt.h"

#include <time.h>

#define API __attribute__((visibility("default")))
#define HELPER __attribute__((noinline))

typedef struct {
    const char *op;
    uint64_t native, fallback, host;
} vkt_stats_entry;

static int rc;
static unsigned delay_us;
static uint64_t calls, host_calls, natives, fallbacks;
static char scratch[1 << 16];

API int host_result(void *out, const void *data, size_t nbytes)
{
    (void)out;
    (void)data;
    (void)nbytes;
    __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    unsigned us = __atomic_load_n(&delay_us, __ATOMIC_RELAXED);
    if (us) {
        struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    return __atomic_load_n(&rc, __ATOMIC_RELAXED);
}

API void host_resident_op(const void *out, size_t nbytes)
{
    (void)out;
    (void)nbytes;
    __atomic_add_fetch(&host_calls, 1, __ATOMIC_RELAXED);
}

/* The internal path every fallback takes: compute on the host, hand the result over. */
HELPER static int finish(fake_tensor *out, size_t nbytes)
{
    int r = host_result(out, scratch, nbytes);
    if (r != -10) /* as libvkt counts: a fallback the exit refused (VKT_EREFUSED) never ran */
        __atomic_add_fetch(&fallbacks, 1, __ATOMIC_RELAXED);
    return r;
}

HELPER static int run_fallback(fake_tensor *out, size_t nbytes)
{
    int r = finish(out, nbytes);
    return r;
}

API int vkt_dot(fake_tensor *out, size_t nbytes)
{
    int r = run_fallback(out, nbytes);
    return r;
}

API int vkt_add(fake_tensor *out, size_t nbytes)
{
    int r = run_fallback(out, nbytes);
    return r;
}

API int vkt_matmul(fake_tensor *out, size_t nbytes)
{
    int r = vkt_dot(out, nbytes);
    return r;
}

API int vkt_native(void)
{
    __atomic_add_fetch(&natives, 1, __ATOMIC_RELAXED);
    return 0;
}

HELPER static void run_host(fake_tensor *out, size_t nbytes)
{
    host_resident_op(out, nbytes);
}

API void vkt_transpose(fake_tensor *out, size_t nbytes)
{
    run_host(out, nbytes);
}

API int fake_raw(size_t nbytes)
{
    int r = host_result(NULL, scratch, nbytes);
    return r;
}

/* Two call sites per level: the bits of pattern pick which, so each pattern is its own stack. */
HELPER static int rec_a(unsigned pattern, int depth);
HELPER static int rec_b(unsigned pattern, int depth);

static int rec_step(unsigned pattern, int depth)
{
    if (depth == 0) {
        int r = vkt_dot(NULL, 64);
        return r;
    }
    int r = (pattern & 1) ? rec_a(pattern >> 1, depth - 1) : rec_b(pattern >> 1, depth - 1);
    return r;
}

HELPER static int rec_a(unsigned pattern, int depth)
{
    int r = rec_step(pattern, depth);
    return r + 0;
}

HELPER static int rec_b(unsigned pattern, int depth)
{
    int r = rec_step(pattern, depth);
    return r + 0;
}

API int fake_recurse(unsigned pattern, int depth)
{
    int r = rec_step(pattern, depth);
    return r;
}

API void fake_set_delay(unsigned us)
{
    __atomic_store_n(&delay_us, us, __ATOMIC_RELAXED);
}

API void fake_set_rc(int v)
{
    __atomic_store_n(&rc, v, __ATOMIC_RELAXED);
}

API uint64_t fake_calls(void)
{
    return __atomic_load_n(&calls, __ATOMIC_RELAXED);
}

API uint64_t fake_host_calls(void)
{
    return __atomic_load_n(&host_calls, __ATOMIC_RELAXED);
}

/* libvkt's optional accessors. Built with FAKE_OTHER_LAYOUT, a second backend reads the same
 * bytes otherwise (ten times each size, its own dtype names): a census that read one module's
 * tensors with another module's accessors would show it. */
#ifdef FAKE_OTHER_LAYOUT
#define SIZE_FACTOR 10
#define DTYPE_NAMES "b32", "bi32"
#else
#define SIZE_FACTOR 1
#define DTYPE_NAMES "f32", "i32"
#endif

API int vkt_tensor_rank(const void *t)
{
    return t ? ((const fake_tensor *)t)->rank : -1;
}

API const int64_t *vkt_tensor_shape(const void *t)
{
    static __thread int64_t scaled[4];
    if (!t)
        return NULL;
    for (int i = 0; i < 4; i++)
        scaled[i] = ((const fake_tensor *)t)->shape[i] * SIZE_FACTOR;
    return scaled;
}

API int vkt_tensor_dtype(const void *t)
{
    return t ? ((const fake_tensor *)t)->dtype : -1;
}

API const char *vkt_dtype_name(int dtype)
{
    static const char *const names[] = {DTYPE_NAMES};
    return dtype == 0 || dtype == 1 ? names[dtype] : "unknown";
}

API size_t vkt_stats(vkt_stats_entry *e, size_t cap)
{
    if (cap >= 1)
        e[0] = (vkt_stats_entry){"dot", __atomic_load_n(&natives, __ATOMIC_RELAXED),
                                 __atomic_load_n(&fallbacks, __ATOMIC_RELAXED),
                                 __atomic_load_n(&host_calls, __ATOMIC_RELAXED)};
    return 1;
}

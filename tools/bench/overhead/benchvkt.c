/* benchvkt.c - the backend the overhead benchmark falls back through: a vkt_ op reaching
 * host_result through a helper and the PLT, as libvkt does, at a chosen stack depth. */
#include <stddef.h>

#define API __attribute__((visibility("default")))

static char scratch[64];

API int host_result(void *out, const void *data, size_t nbytes)
{
    (void)out;
    (void)data;
    return (int)(nbytes & 1);
}

__attribute__((noinline)) static int finish(size_t nbytes)
{
    int r = host_result(NULL, scratch, nbytes);
    return r;
}

API int vkt_bench(size_t nbytes)
{
    int r = finish(nbytes);
    return r;
}

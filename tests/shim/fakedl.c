/* fakedl.c - a second backend that the test program loads with dlopen(RTLD_LOCAL) after
 * start-up: the shim must find its host_result lazily, through the caller's module. */
#include <stddef.h>

#define API __attribute__((visibility("default")))

static char scratch[256];
static int calls;

API int host_result(void *out, const void *data, size_t nbytes)
{
    (void)out;
    (void)data;
    calls++;
    return (int)(nbytes % 7) + 100; /* a result the shim must pass through unchanged */
}

__attribute__((noinline)) static int helper(size_t nbytes)
{
    int r = host_result(NULL, scratch, nbytes);
    return r;
}

API int vkt_dlop(size_t nbytes)
{
    int r = helper(nbytes);
    return r;
}

API int fakedl_calls(void)
{
    return calls;
}

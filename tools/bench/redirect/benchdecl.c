/* benchdecl.c - the exit the redirect benchmark declares (FBCOUNT_EXIT), reached as the
 * overhead benchmark's backend reaches host_result (benchvkt.c): an exported op, a helper,
 * then the PLT. The shim has no definition of decl_exit: its calls are redirected. */
#include <stddef.h>

#define API __attribute__((visibility("default")))

API int decl_exit(void *out, const void *data, size_t nbytes);

static char buffer[64];

API int decl_exit(void *out, const void *data, size_t nbytes)
{
    (void)out, (void)data;
    return (int)(nbytes & 1);
}

__attribute__((noinline)) static int decl_helper(size_t nbytes)
{
    int r = decl_exit(NULL, buffer, nbytes);
    return r;
}

API int vkt_bench_decl(size_t nbytes)
{
    int r = decl_helper(nbytes);
    return r;
}

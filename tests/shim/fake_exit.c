/* fake_exit.c - a backend of one exit and one op, the stand-in the tests and benchmarks load:
 * the op, exported, reaches the exit through a helper and the PLT, as libvkt's ops reach
 * host_result, so the shim finds the op frame on the stack. Built once per use, the names
 * given by its meson.build:
 *   FAKE_EXIT    the exit's symbol (host_result, the shim's own; or one it declares)
 *   FAKE_OP      the op's symbol
 *   FAKE_RESULT  what the exit returns for nbytes: a result the shim must pass on unchanged
 * fake_exit_calls() says how many calls reached the exit. */
#include <stddef.h>

#if !defined(FAKE_EXIT) || !defined(FAKE_OP) || !defined(FAKE_RESULT)
#error "fake_exit.c is built with -DFAKE_EXIT=... -DFAKE_OP=... -DFAKE_RESULT(n)=..."
#endif

#define API __attribute__((visibility("default")))

API int FAKE_EXIT(void *out, const void *data, size_t nbytes);

static char scratch[256];
static int calls;

API int FAKE_EXIT(void *out, const void *data, size_t nbytes)
{
    (void)out;
    (void)data;
    calls++;
    return FAKE_RESULT(nbytes);
}

__attribute__((noinline)) static int helper(size_t nbytes)
{
    int r = FAKE_EXIT(NULL, scratch, nbytes);
    return r;
}

API int FAKE_OP(size_t nbytes)
{
    int r = helper(nbytes);
    return r;
}

API int fake_exit_calls(void)
{
    return calls;
}

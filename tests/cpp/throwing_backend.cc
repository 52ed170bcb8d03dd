// throwing_backend.cc - the backend of throwing.cc: its fallback exit throws on every third
// call. A library, as backends are: a program's own calls to its own functions bind inside
// it, where no preloaded definition can come first.
#include <cstddef>
#include <stdexcept>

#define API extern "C" __attribute__((visibility("default")))

int received; /* read by the program */

API int host_result(void *out, const void *data, size_t nbytes)
{
    (void)out, (void)data, (void)nbytes;
    if (++received % 3 == 0)
        throw std::runtime_error("host reference failed");
    return 0;
}

// The backend's public op, reached through the PLT like libvkt's.
API __attribute__((noinline)) int vkt_gather(size_t nbytes)
{
    static char result[64];
    int r = host_result(result, result, nbytes);
    return r;
}

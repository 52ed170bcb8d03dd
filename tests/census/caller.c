/* caller.c - a module that calls the backend's exit itself: the test loads 40 copies of it
 * (each a module of its own), more than the shim keeps a table for. */
#include <stddef.h>

int host_result(void *out, const void *data, size_t nbytes);

__attribute__((visibility("default"))) int vkt_callme(size_t nbytes)
{
    int r = host_result(NULL, NULL, nbytes);
    return r;
}

/* fallback.c — the two exported exits (vkt(3), RESIDENCY AND FALLBACKS) that the shim
 * interposes. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

VKT_API int host_result(vkt_tensor *out, const void *data, size_t nbytes)
{
    if (!out || (!data && nbytes))
        return err_set(VKT_EINVAL, "host_result: NULL argument");
    if (out->st)
        return err_set(VKT_EINVAL, "host_result: the result tensor already has contents");
    if (nbytes != out->nbytes)
        return err_set(VKT_EINVAL, "host_result: %zu bytes for a %zu-byte result", nbytes,
                       out->nbytes);
    if (out->ctx->fallback_result == VKT_HOST) {
        void *copy = malloc(nbytes ? nbytes : 1);
        if (!copy)
            return err_set(VKT_ENOMEM, "host_result: out of host memory");
        if (nbytes)
            memcpy(copy, data, nbytes);
        tn_adopt_host(out, copy);
        return out->st ? VKT_OK : err_set(VKT_ENOMEM, "host_result: out of host memory");
    }
    TRY(tn_alloc_device(out));
    return tn_upload(out, data, nbytes);
}

VKT_API void host_resident_op(const vkt_tensor *out, size_t nbytes)
{
    /* Nothing to do in libvkt itself: this exit exists so an interposer can see
     * the host-resident work that a count of fallbacks alone would miss. The
     * empty asm keeps the call from being optimised away at the call sites. */
    (void)out;
    (void)nbytes;
    __asm__ volatile("" ::: "memory");
}

/* timing.c - fallbacks of libvkt of very different cost, for the field suite's test of the
 * time each one is charged: n forced convolutions of a 32 x 32 image by a 5 x 5 kernel, and n
 * forced transposes of a 4 x 4 matrix (VKT_NATIVE_DISABLE=conv,transpose). The shim times a
 * fallback from libvkt's own start of it (vkt_fallback_started_ns), downloads included. */
#include <stdio.h>
#include <stdlib.h>

#include "vkt.h"

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    vkt_ctx *ctx;
    if (vkt_ctx_create(NULL, &ctx) != 0) {
        fprintf(stderr, "timing: %s\n", vkt_last_error());
        return 2;
    }
    int64_t img[4] = {1, 1, 32, 32}, ker[4] = {8, 1, 5, 5}, sq[2] = {4, 4};
    vkt_tensor *x, *k, *m;
    if (vkt_iota(ctx, VKT_F32, img, 4, 3, &x) || vkt_full(ctx, VKT_F32, ker, 4, 0.5, &k) ||
        vkt_iota(ctx, VKT_F32, sq, 2, 1, &m)) {
        fprintf(stderr, "timing: %s\n", vkt_last_error());
        return 2;
    }
    int perm[2] = {1, 0};
    for (int i = 0; i < n; i++) {
        vkt_tensor *c, *t;
        if (vkt_conv(x, k, NULL, &c) || vkt_transpose(m, perm, &t)) {
            fprintf(stderr, "timing: %s\n", vkt_last_error());
            return 2;
        }
        vkt_tensor_free(c);
        vkt_tensor_free(t);
    }
    vkt_tensor_free(x);
    vkt_tensor_free(k);
    vkt_tensor_free(m);
    vkt_ctx_destroy(ctx);
    printf("timing %d\n", n);
    return 0;
}

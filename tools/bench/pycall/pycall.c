/* pycall.c - vkt-bench-pycall: the C side of the Python call benchmark (bench_pycall.py).
 *
 * Times what one small op costs from C: vkt_add on two tensors of 16 floats on the device, the
 * native path, and the result freed, as Python frees it when the object goes. No sync is
 * timed: the calls run in batches of BATCH, each timed alone and followed by an untimed sync,
 * below libvkt's own submission threshold (512 dispatches), so that a figure is the cost of
 * recording a call and not of running earlier ones (lavapipe runs them on the same CPUs).
 * Prints one JSON line, {"device": ..., "calls": N, "ns_per_call": x}: the best of --repeat
 * rounds of N calls.
 *
 * usage: vkt-bench-pycall [--calls N] [--repeat N] [--device SEL]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vkt.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The calls between two syncs (bench_pycall.py's Python side uses the same). */
#define BATCH 256

/* calls of vkt_add + vkt_tensor_free in batches; the ns per call, or -1 on a failed call. */
static double round_ns(vkt_ctx *ctx, const vkt_tensor *a, const vkt_tensor *b, long calls)
{
    double spent = 0;
    long done = 0;
    while (done < calls) {
        long n = calls - done < BATCH ? calls - done : BATCH;
        double t0 = now_ns();
        for (long i = 0; i < n; i++) {
            vkt_tensor *out = NULL;
            if (vkt_add(a, b, &out) != VKT_OK)
                return -1;
            vkt_tensor_free(out);
        }
        spent += now_ns() - t0;
        done += n;
        if (vkt_sync(ctx) != VKT_OK)
            return -1;
    }
    return spent / (double)calls;
}

static int usage(void)
{
    fprintf(stderr, "usage: vkt-bench-pycall [--calls N] [--repeat N] [--device SEL]\n");
    return 2;
}

int main(int argc, char **argv)
{
    long calls = 200000, repeat = 5;
    const char *device = NULL;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (i + 1 >= argc)
            return usage();
        if (!strcmp(argv[i], "--calls"))
            calls = strtol(argv[++i], &end, 10);
        else if (!strcmp(argv[i], "--repeat"))
            repeat = strtol(argv[++i], &end, 10);
        else if (!strcmp(argv[i], "--device"))
            device = argv[++i];
        else
            return usage();
        if (end && (*end || calls < 1 || repeat < 1))
            return usage();
    }
    vkt_ctx *ctx = NULL;
    if (vkt_ctx_create(device, &ctx) != VKT_OK) {
        fprintf(stderr, "vkt-bench-pycall: no context: %s\n", vkt_last_error());
        return 1;
    }
    float data[16];
    for (int i = 0; i < 16; i++)
        data[i] = (float)i;
    const int64_t shape[1] = {16};
    vkt_tensor *a = NULL, *b = NULL;
    if (vkt_tensor_from_host(ctx, VKT_F32, shape, 1, data, &a) != VKT_OK ||
        vkt_tensor_from_host(ctx, VKT_F32, shape, 1, data, &b) != VKT_OK) {
        fprintf(stderr, "vkt-bench-pycall: %s\n", vkt_last_error());
        return 1;
    }
    double best = -1;
    /* the first round warms pipelines and memory up, and counts too only if it is the best */
    for (long r = 0; r <= repeat; r++) {
        double ns = round_ns(ctx, a, b, calls);
        if (ns < 0) {
            fprintf(stderr, "vkt-bench-pycall: %s\n", vkt_last_error());
            return 1;
        }
        if (r > 0 && (best < 0 || ns < best))
            best = ns;
    }
    /* every call ran natively: the figure is of the native path */
    vkt_stats_entry e[64];
    size_t n = vkt_stats(e, 64);
    for (size_t i = 0; i < n && i < 64; i++) {
        if (e[i].fallback || e[i].host) {
            fprintf(
                stderr,
                "vkt-bench-pycall: %s left the native path (%llu fallbacks, %llu on the host)\n",
                e[i].op, (unsigned long long)e[i].fallback, (unsigned long long)e[i].host);
            return 1;
        }
    }
    printf("{\"device\": \"%s\", \"calls\": %ld, \"ns_per_call\": %.1f}\n",
           vkt_ctx_device_name(ctx), calls, best);
    vkt_tensor_free(a);
    vkt_tensor_free(b);
    vkt_ctx_destroy(ctx);
    return 0;
}

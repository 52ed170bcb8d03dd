/* metrics-sample: the formatter's text for a census with every kind of row and label value
 * that needs care (quotes, backslashes, newlines, bytes that are not UTF-8, no rank, no
 * host, two backends, a transfer, sizes a backend cannot read), for `promtool check
 * metrics` to judge. */
#include <stdio.h>

#include "metrics.h"

static int to_stdout(void *ctx, const char *buf, size_t len)
{
    (void)ctx;
    return fwrite(buf, 1, len, stdout) == len ? 0 : 1;
}

int main(void)
{
    static const fbr_metrics_counters counters[] = {{"vkt", 1380, 280, 3}, {"torch", 40, 3, 0}};
    const fbr_metrics_proc procs[] = {
        {.pid = 4242,
         .rank = 0,
         .host = "box",
         .exe = "/opt/bin/vkt-lenet",
         .has_time = true,
         .has_backend = true,
         .native = 1380,
         .fallback = 280,
         .host_ops = 3,
         .backends = counters,
         .nbackends = 2},
        {.pid = 4243,
         .rank = 1,
         .host = "box",
         .exe = "vkt-lenet",
         .has_time = false,
         .has_backend = true},
        {.pid = 77, .rank = -1, .host = NULL, .exe = "we\"ird\\name\n"},
    };
    const fbr_metrics_row rows[] = {
        {0, FBR_METRICS_FALLBACK, "vkt_dot", "train_step", "lenet.c", 230, 180, 5767168, 412000000},
        {0, FBR_METRICS_FALLBACK, "vkt_conv", "train_step", "lenet.c", 187, 100, 9751756,
         1234567890},
        {0, FBR_METRICS_HOST, "vkt_transpose", "train_step", NULL, 0, 3, 96, 1500},
        {1, FBR_METRICS_FALLBACK, "vkt_dot", "train_step", "lenet.c", 230, 7, 512, 0},
        {2, FBR_METRICS_FALLBACK, "vkt_pow", "a \"quoted\" \\ site\nwith a newline", "bad\xFF.py",
         14, 1, 8, 0},
        {2, FBR_METRICS_FALLBACK, NULL, NULL, NULL, 0, 2, 16, 0},
        {0, FBR_METRICS_FALLBACK, "aten::gelu.out", "forward", "model.py", 7, 3, 0, 0},
        {0, FBR_METRICS_TRANSFER, "host -> Vulkan0", "llama_decode", NULL, 0, 12, 49152, 800},
    };
    const fbr_metrics_origin from[] = {
        {NULL, false, false}, {NULL, false, false}, {NULL, false, false},   {NULL, false, false},
        {NULL, false, false}, {NULL, false, false}, {"torch", true, false}, {"ggml", false, false}};
    int rc =
        fbr_metrics_format_from(procs, 3, rows, from, sizeof rows / sizeof *rows, to_stdout, NULL);
    return rc || fflush(stdout) ? 1 : 0;
}

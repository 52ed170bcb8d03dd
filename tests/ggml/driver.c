/* driver.c - a C program on ggml's Vulkan backend, as llama.cpp uses it: the scheduler splits
 * a graph between the GPU and the CPU. The graph adds a weight tensor held in a Vulkan buffer,
 * then applies WIN_PART, an op ggml's Vulkan backend lacks (it runs on the CPU: a fallback),
 * then SCALE, which Vulkan has but which the scheduler keeps on the CPU after it
 * (host-resident work), and the tensors cross between the devices. After WIN_PART, on the
 * CPU too: SET_ROWS writes its rows into a cache four times their size (as llama.cpp writes a
 * token's keys into its KV cache), and CPY copies them into every other row of a buffer (a
 * strided view); the graph also holds a SCALE it does not compute (no
 * GGML_TENSOR_FLAG_COMPUTE: the CPU backend skips it). The census must name the ops, count
 * each per compute, count the bytes each writes, and the bytes that crossed.
 *   usage: ggml-driver BINS_DIR [computes]   exit 77 when no Vulkan device is found */
#include <stdio.h>
#include <stdlib.h>

#include "ggml_api.h"

#define SIDE 16
#define ROW 16 /* elements of a row SET_ROWS and CPY write */

static int compute(ggml_backend_sched_t sched, struct ggml_cgraph *g)
{
    return ggml_backend_sched_graph_compute(sched, g); /* DRIVER-COMPUTE */
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return fprintf(stderr, "usage: ggml-driver BINS_DIR [computes]\n"), 2;
    int computes = argc > 2 ? atoi(argv[2]) : 5;
    if (ggml_api_load(argv[1]) != 0)
        return 1;
    ggml_backend_load_all_from_path(argv[1]);
    ggml_backend_t gpu = ggml_backend_init_by_type(GGML_DEV_GPU, NULL);
    ggml_backend_t cpu = ggml_backend_init_by_type(GGML_DEV_CPU, NULL);
    if (!gpu || !cpu) {
        printf("ggml-driver: no %s backend (is a Vulkan driver installed?)\n", gpu ? "CPU" : "Vulkan");
        return 77;
    }
    /* The weights live in a Vulkan buffer, as a model's layers offloaded to the GPU do. */
    struct ggml_context *wctx = ggml_init((struct ggml_init_params){1 << 16, NULL, true});
    struct ggml_tensor *w = ggml_new_tensor_3d(wctx, GGML_TYPE_F32, SIDE, SIDE, SIDE);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors(wctx, gpu);
    ggml_backend_buffer_set_usage(wbuf, GGML_USAGE_WEIGHTS);
    static float wv[SIDE * SIDE * SIDE], xv[SIDE * SIDE * SIDE];
    for (int i = 0; i < SIDE * SIDE * SIDE; i++) {
        wv[i] = (float)(i % 7) * 0.5f;
        xv[i] = (float)(i % 5);
    }
    ggml_backend_tensor_set(w, wv, 0, sizeof wv);

    struct ggml_context *ctx = ggml_init((struct ggml_init_params){1 << 20, NULL, true});
    struct ggml_tensor *x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, SIDE, SIDE, SIDE);
    ggml_set_input(x);
    struct ggml_tensor *a = ggml_add(ctx, x, w);
    struct ggml_tensor *b = ggml_win_part(ctx, a, 4);
    struct ggml_tensor *c = ggml_scale(ctx, b, 2.0f);
    ggml_set_output(c);
    int64_t rows = ggml_nelements(b) / ROW;
    struct ggml_tensor *crows = ggml_reshape_2d(ctx, b, ROW, rows);
    /* The cache and the buffer live in a CPU buffer, as llama.cpp's KV cache of a layer kept
     * on the host does. */
    struct ggml_context *hctx = ggml_init((struct ggml_init_params){1 << 16, NULL, true});
    struct ggml_tensor *cache = ggml_new_tensor_2d(hctx, GGML_TYPE_F16, ROW, 4 * rows);
    struct ggml_tensor *spread = ggml_new_tensor_2d(hctx, GGML_TYPE_F32, ROW, 2 * rows);
    ggml_backend_buffer_t hbuf = ggml_backend_alloc_ctx_tensors(hctx, cpu);
    struct ggml_tensor *idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, rows);
    ggml_set_input(idx);
    struct ggml_tensor *d = ggml_set_rows(ctx, cache, crows, idx);
    struct ggml_tensor *every2 = ggml_view_2d(ctx, spread, ROW, rows, 2 * ROW * sizeof(float), 0);
    struct ggml_tensor *e = ggml_cpy(ctx, crows, every2);
    ggml_set_output(d);
    ggml_set_output(e);
    struct ggml_tensor *idle = ggml_scale(ctx, b, 3.0f);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, c);
    ggml_build_forward_expand(g, d);
    ggml_build_forward_expand(g, e);
    ggml_build_forward_order(g, idle);

    ggml_backend_t backends[2] = {gpu, cpu};
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 2048, false, true);
    if (!ggml_backend_sched_alloc_graph(sched, g))
        return fprintf(stderr, "ggml-driver: cannot allocate the graph\n"), 1;
    ggml_backend_tensor_set(x, xv, 0, sizeof xv);
    static int32_t iv[SIDE * SIDE * SIDE];
    for (int64_t i = 0; i < rows; i++)
        iv[i] = (int32_t)(i * 4);
    ggml_backend_tensor_set(idx, iv, 0, (size_t)rows * sizeof *iv);
    for (int i = 0; i < computes; i++)
        if (compute(sched, g) != 0)
            return fprintf(stderr, "ggml-driver: compute %d failed\n", i), 1;
    static float out[SIDE * SIDE * SIDE * 4];
    size_t n = ggml_nbytes(c) < sizeof out ? ggml_nbytes(c) : sizeof out;
    ggml_backend_tensor_get(c, out, 0, n);
    double sum = 0;
    for (size_t i = 0; i < n / sizeof *out; i++)
        sum += out[i];
    printf("splits %d copies %d; %s on %s, %s on %s, %s on %s, %s on %s, %s on %s; sum %.1f; "
           "bytes %zu %zu %zu\n",
           ggml_backend_sched_get_n_splits(sched), ggml_backend_sched_get_n_copies(sched),
           ggml_op_desc(a), ggml_backend_name(ggml_backend_sched_get_tensor_backend(sched, a)),
           ggml_op_desc(b), ggml_backend_name(ggml_backend_sched_get_tensor_backend(sched, b)),
           ggml_op_desc(c), ggml_backend_name(ggml_backend_sched_get_tensor_backend(sched, c)),
           ggml_op_desc(d), ggml_backend_name(ggml_backend_sched_get_tensor_backend(sched, d)),
           ggml_op_desc(e), ggml_backend_name(ggml_backend_sched_get_tensor_backend(sched, e)), sum,
           ggml_nbytes(a), ggml_nbytes(b), ggml_nbytes(c));
    /* What SET_ROWS and CPY write (rows of f16; the view's elements of f32), and the sizes of
     * the tensors their results are views of, which they do not write whole. */
    printf("written %zu %zu; views %zu %zu\n", (size_t)rows * ROW * 2,
           (size_t)rows * ROW * sizeof(float), ggml_nbytes(d), ggml_nbytes(e));
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
    ggml_backend_buffer_free(wbuf);
    ggml_backend_buffer_free(hbuf);
    ggml_free(hctx);
    ggml_free(wctx);
    ggml_backend_free(cpu);
    ggml_backend_free(gpu);
    return 0;
}

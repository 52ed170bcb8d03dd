/* driver.c - a C program on ggml's Vulkan backend, as llama.cpp uses it: the scheduler splits
 * a graph between the GPU and the CPU. The graph adds a weight tensor held in a Vulkan buffer,
 * then applies WIN_PART, an op ggml's Vulkan backend lacks (it runs on the CPU: a fallback),
 * and the tensors cross between the devices. After WIN_PART, on the CPU too: SET_ROWS writes
 * its rows into a cache four times their size (as llama.cpp writes a token's keys into its KV
 * cache), and CPY copies them into every other row of a buffer (a strided view); the graph
 * also holds a SCALE it does not compute (no GGML_TENSOR_FLAG_COMPUTE: the CPU backend skips
 * it). The census must name the ops, count each per compute, count the bytes each writes,
 * and the bytes that crossed.
 * With --experts, a mixture of experts instead: MUL_MAT_ID over 32 tokens whose experts
 * are weights in host memory, which the scheduler offloads to the GPU (op offload) and for
 * which it uploads only the experts the tokens use, piece by piece
 * (ggml_backend_tensor_set_async).
 *   usage: ggml-driver BINS_DIR [computes] [--experts]   exit 77 when no Vulkan device */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml_api.h"

#define SIDE 16
#define ROW 16 /* elements of a row SET_ROWS and CPY write */
/* The experts: K inputs, N outputs, E experts of which each of T tokens uses USED. */
enum { K = 32, N = 32, E = 8, USED = 2, T = 32 };

static int compute(ggml_backend_sched_t sched, struct ggml_cgraph *g)
{
    return ggml_backend_sched_graph_compute(sched, g); /* DRIVER-COMPUTE */
}

/* A context of tensors whose data is allocated at once. */
static struct ggml_context *no_alloc(size_t size)
{
    return ggml_init((struct ggml_init_params){size, NULL, true});
}

/* A weight: a 3-D f32 tensor of its own context, in a buffer of backend on marked as weights
 * (as llama.cpp marks a model's), filled with v. */
static struct ggml_tensor *weight(ggml_backend_t on, int64_t ne0, int64_t ne1, int64_t ne2,
                                  const float *v, struct ggml_context **ctx,
                                  ggml_backend_buffer_t *buf)
{
    *ctx = no_alloc(1 << 16);
    struct ggml_tensor *w = ggml_new_tensor_3d(*ctx, GGML_TYPE_F32, ne0, ne1, ne2);
    *buf = ggml_backend_alloc_ctx_tensors(*ctx, on);
    ggml_backend_buffer_set_usage(*buf, GGML_USAGE_WEIGHTS);
    ggml_backend_tensor_set(w, v, 0, (size_t)(ne0 * ne1 * ne2) * sizeof *v);
    return w;
}

/* A scheduler over the GPU and the CPU (op offload on) with g allocated; NULL, said, when
 * g cannot be. */
static ggml_backend_sched_t scheduler(ggml_backend_t gpu, ggml_backend_t cpu, struct ggml_cgraph *g)
{
    ggml_backend_t backends[2] = {gpu, cpu};
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 2048, false, true);
    if (ggml_backend_sched_alloc_graph(sched, g))
        return sched;
    fprintf(stderr, "ggml-driver: cannot allocate the graph\n");
    ggml_backend_sched_free(sched);
    return NULL;
}

static int run(ggml_backend_sched_t sched, struct ggml_cgraph *g, int computes)
{
    for (int i = 0; i < computes; i++)
        if (compute(sched, g) != 0)
            return fprintf(stderr, "ggml-driver: compute %d failed\n", i), 1;
    return 0;
}

/* The split graph (see the top of the file); 0, or 1 when it cannot be computed. */
static int splits(ggml_backend_t gpu, ggml_backend_t cpu, int computes)
{
    static float wv[SIDE * SIDE * SIDE], xv[SIDE * SIDE * SIDE];
    for (int i = 0; i < SIDE * SIDE * SIDE; i++) {
        wv[i] = (float)(i % 7) * 0.5f;
        xv[i] = (float)(i % 5);
    }
    /* The weights live in a Vulkan buffer, as a model's layers offloaded to the GPU do. */
    struct ggml_context *wctx;
    ggml_backend_buffer_t wbuf;
    struct ggml_tensor *w = weight(gpu, SIDE, SIDE, SIDE, wv, &wctx, &wbuf);

    struct ggml_context *ctx = no_alloc(1 << 20);
    struct ggml_tensor *x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, SIDE, SIDE, SIDE);
    ggml_set_input(x);
    struct ggml_tensor *a = ggml_add(ctx, x, w);
    struct ggml_tensor *b = ggml_win_part(ctx, a, 4);
    struct ggml_tensor *c = ggml_scale(ctx, b, 2.0f);
    ggml_set_output(c);
    int64_t rows = ggml_nelements(b) / ROW;
    struct ggml_tensor *brows = ggml_reshape_2d(ctx, b, ROW, rows);
    /* The cache and the buffer live in a CPU buffer, as llama.cpp's KV cache of a layer kept
     * on the host does. */
    struct ggml_context *hctx = no_alloc(1 << 16);
    struct ggml_tensor *cache = ggml_new_tensor_2d(hctx, GGML_TYPE_F16, ROW, 4 * rows);
    struct ggml_tensor *spread = ggml_new_tensor_2d(hctx, GGML_TYPE_F32, ROW, 2 * rows);
    ggml_backend_buffer_t hbuf = ggml_backend_alloc_ctx_tensors(hctx, cpu);
    struct ggml_tensor *idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, rows);
    ggml_set_input(idx);
    struct ggml_tensor *d = ggml_set_rows(ctx, cache, brows, idx);
    struct ggml_tensor *every2 = ggml_view_2d(ctx, spread, ROW, rows, 2 * ROW * sizeof(float), 0);
    struct ggml_tensor *e = ggml_cpy(ctx, brows, every2);
    ggml_set_output(d);
    ggml_set_output(e);
    struct ggml_tensor *idle = ggml_scale(ctx, b, 3.0f);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, c);
    ggml_build_forward_expand(g, d);
    ggml_build_forward_expand(g, e);
    ggml_build_forward_order(g, idle);

    ggml_backend_sched_t sched = scheduler(gpu, cpu, g);
    if (!sched)
        return 1;
    ggml_backend_tensor_set(x, xv, 0, sizeof xv);
    static int32_t iv[SIDE * SIDE * SIDE];
    for (int64_t i = 0; i < rows; i++)
        iv[i] = (int32_t)(i * 4);
    ggml_backend_tensor_set(idx, iv, 0, (size_t)rows * sizeof *iv);
    if (run(sched, g, computes) != 0)
        return 1;
    static float out[SIDE * SIDE * SIDE * 4];
    size_t n = ggml_nbytes(c) < sizeof out ? ggml_nbytes(c) : sizeof out;
    ggml_backend_tensor_get(c, out, 0, n);
    double sum = 0;
    for (size_t i = 0; i < n / sizeof *out; i++)
        sum += out[i];
    struct ggml_tensor *shown[] = {a, b, c, d, e};
    printf("splits %d copies %d;", ggml_backend_sched_get_n_splits(sched),
           ggml_backend_sched_get_n_copies(sched));
    for (int i = 0; i < 5; i++)
        printf("%s %s on %s", i ? "," : "", ggml_op_desc(shown[i]),
               ggml_backend_name(ggml_backend_sched_get_tensor_backend(sched, shown[i])));
    printf("; sum %.1f; bytes %zu %zu %zu\n", sum, ggml_nbytes(a), ggml_nbytes(b), ggml_nbytes(c));
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
    return 0;
}

/* The experts graph (see the top of the file): the tokens use experts 0 and 1 only. */
static int experts(ggml_backend_t gpu, ggml_backend_t cpu, int computes)
{
    static float av[K * N * E], bv[K * USED * T];
    static int32_t ids_v[USED * T];
    for (int i = 0; i < K * N * E; i++)
        av[i] = (float)(i % 11) * 0.25f;
    for (int i = 0; i < K * USED * T; i++)
        bv[i] = (float)(i % 3);
    for (int i = 0; i < USED * T; i++)
        ids_v[i] = i % USED;
    struct ggml_context *wctx;
    ggml_backend_buffer_t wbuf;
    struct ggml_tensor *as = weight(cpu, K, N, E, av, &wctx, &wbuf);
    struct ggml_context *ctx = no_alloc(1 << 20);
    struct ggml_tensor *b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, K, USED, T);
    struct ggml_tensor *ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, USED, T);
    ggml_set_input(b);
    ggml_set_input(ids);
    struct ggml_tensor *y = ggml_mul_mat_id(ctx, as, b, ids);
    ggml_set_output(y);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    ggml_backend_sched_t sched = scheduler(gpu, cpu, g);
    if (!sched)
        return 1;
    ggml_backend_tensor_set(b, bv, 0, sizeof bv);
    ggml_backend_tensor_set(ids, ids_v, 0, sizeof ids_v);
    if (run(sched, g, computes) != 0)
        return 1;
    /* Experts 0 and 1 go up in one piece, with the scheduler's padding of up to 512 bytes
     * after the last expert used when it is not the last of all. */
    size_t expert = (size_t)K * N * sizeof(float);
    printf("%s on %s; experts uploaded %zu of %zu; inputs %zu %zu\n", ggml_op_desc(y),
           ggml_backend_name(ggml_backend_sched_get_tensor_backend(sched, y)),
           USED * expert + (expert < 512 ? expert : 512), ggml_nbytes(as), ggml_nbytes(b),
           ggml_nbytes(ids));
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(wctx);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return fprintf(stderr, "usage: ggml-driver BINS_DIR [computes] [--experts]\n"), 2;
    int computes = argc > 2 ? atoi(argv[2]) : 5;
    bool moe = argc > 3 && !strcmp(argv[3], "--experts");
    if (ggml_api_load(argv[1]) != 0)
        return 1;
    ggml_backend_load_all_from_path(argv[1]);
    ggml_backend_t gpu = ggml_backend_init_by_type(GGML_DEV_GPU, NULL);
    ggml_backend_t cpu = ggml_backend_init_by_type(GGML_DEV_CPU, NULL);
    if (!gpu || !cpu) {
        printf("ggml-driver: no %s backend (is a Vulkan driver installed?)\n",
               gpu ? "CPU" : "Vulkan");
        return 77;
    }
    int rc = moe ? experts(gpu, cpu, computes) : splits(gpu, cpu, computes);
    ggml_backend_free(cpu);
    ggml_backend_free(gpu);
    return rc;
}

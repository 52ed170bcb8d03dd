/* vkt-mlp — a real libvkt workload: trains a two-layer perceptron on a
 * deterministic synthetic data set, forward and backward pass written as the
 * ops an autodiff would emit (dot with contracting batch axes, reductions with
 * keep-axes, broadcasting), then an SGD update. It prints the loss, which must
 * fall, and the step time. Run it under `fbcount run` to see which ops leave
 * the GPU; VKT_NATIVE_DISABLE=dot VKT_FALLBACK_RESULT=host shows how one
 * fallback drags the downstream gradient work onto the host. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "demo.h"
#include "vkt.h"

#define IN 64
#define HID 128
#define CLASSES 10

typedef struct mlp {
    vkt_ctx *ctx;
    vkt_tensor *w1, *b1, *w2, *b2;
} mlp;

/* Every libvkt call in this file goes through CHECK: an error is reported
 * with the op's message and the step is abandoned, never a crash. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        if ((call) != VKT_OK) {                                                                    \
            fprintf(stderr, "vkt-mlp: %s: %s\n", #call, vkt_last_error());                         \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)
#define FREE(...)                                                                                  \
    do {                                                                                           \
        vkt_tensor *fr_[] = {__VA_ARGS__};                                                         \
        for (size_t i_ = 0; i_ < sizeof fr_ / sizeof fr_[0]; i_++)                                 \
            vkt_tensor_free(fr_[i_]);                                                              \
    } while (0)

static uint64_t rng_state;
static double urand(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}
static double nrand(void)
{
    double u = urand() + 1e-12, v = urand();
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* Ten class prototypes in 64-d; each sample is a prototype plus noise, so the
 * task is learnable but not trivial. */
static void make_batch(int batch, float *x, float *onehot, const float *protos)
{
    for (int i = 0; i < batch; i++) {
        int c = (int)(urand() * CLASSES) % CLASSES;
        for (int j = 0; j < IN; j++)
            x[i * IN + j] = protos[c * IN + j] + (float)(0.8 * nrand());
        for (int k = 0; k < CLASSES; k++)
            onehot[i * CLASSES + k] = k == c ? 1.0f : 0.0f;
    }
}

static int param(vkt_ctx *ctx, const int64_t *shape, int rank, double scale, vkt_tensor **out)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)shape[i];
    float *v = malloc(n * sizeof *v);
    if (!v)
        return VKT_ENOMEM;
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(scale * nrand());
    int s = vkt_tensor_from_host(ctx, VKT_F32, shape, rank, v, out);
    free(v);
    return s;
}

/* w -= lr * g, replacing *w. */
static int sgd(vkt_tensor **w, const vkt_tensor *g, const vkt_tensor *lr)
{
    vkt_tensor *step = NULL, *nw = NULL;
    int s = vkt_multiply(g, lr, &step);
    if (s == VKT_OK)
        s = vkt_subtract(*w, step, &nw);
    vkt_tensor_free(step);
    if (s == VKT_OK) {
        vkt_tensor_free(*w);
        *w = nw;
    }
    return s;
}

/* One training step; returns the loss, or NAN after an error. */
__attribute__((noinline)) static double train_step(mlp *m, const float *xb, const float *yb,
                                                   int batch, const vkt_tensor *lr)
{
    vkt_ctx *ctx = m->ctx;
    int64_t xs[2] = {batch, IN}, ys[2] = {batch, CLASSES}, scalar[1] = {1};
    vkt_tensor *x = NULL, *y = NULL, *pre1 = NULL, *a1 = NULL, *h = NULL, *pre2 = NULL,
               *logits = NULL, *mx = NULL, *z = NULL, *ez = NULL, *se = NULL, *lse = NULL,
               *logp = NULL, *p = NULL, *diff = NULL, *invb = NULL, *dlog = NULL, *dw2 = NULL,
               *db2 = NULL, *dh = NULL, *hh = NULL, *one = NULL, *dtanh = NULL, *dpre = NULL,
               *dw1 = NULL, *db1 = NULL, *yl = NULL, *tot = NULL, *dw2t = NULL, *dw1t = NULL;
    double loss = NAN;
    int c0[1] = {0}, c1[1] = {1}, ax1[1] = {1};
    float inv = 1.0f / (float)batch, onef = 1.0f, lsum;

    CHECK(vkt_tensor_from_host(ctx, VKT_F32, xs, 2, xb, &x));
    CHECK(vkt_tensor_from_host(ctx, VKT_F32, ys, 2, yb, &y));
    /* forward */
    CHECK(vkt_dot(x, c1, NULL, m->w1, c0, NULL, 1, 0, &pre1));
    CHECK(vkt_add(pre1, m->b1, &a1));
    CHECK(vkt_tanh(a1, &h));
    CHECK(vkt_dot(h, c1, NULL, m->w2, c0, NULL, 1, 0, &pre2));
    CHECK(vkt_add(pre2, m->b2, &logits));
    CHECK(vkt_reduce_max(logits, ax1, 1, true, &mx));
    CHECK(vkt_subtract(logits, mx, &z));
    CHECK(vkt_exp(z, &ez));
    CHECK(vkt_sum(ez, ax1, 1, true, &se));
    CHECK(vkt_log(se, &lse));
    CHECK(vkt_subtract(z, lse, &logp));
    CHECK(vkt_multiply(y, logp, &yl));
    CHECK(vkt_sum(yl, NULL, 0, false, &tot));
    /* backward: d loss / d logits = (softmax - onehot) / batch */
    CHECK(vkt_exp(logp, &p));
    CHECK(vkt_subtract(p, y, &diff));
    CHECK(vkt_tensor_from_host(ctx, VKT_F32, scalar, 1, &inv, &invb));
    CHECK(vkt_multiply(diff, invb, &dlog));
    /* A weight gradient as Nx's grad of dot emits it: the contraction over
     * the batch axis with the operands swapped, then a transpose back to the
     * weight's layout. */
    CHECK(vkt_dot(dlog, c0, NULL, h, c0, NULL, 1, 0, &dw2t));
    CHECK(vkt_transpose(dw2t, NULL, &dw2));
    CHECK(vkt_sum(dlog, c0, 1, false, &db2));
    CHECK(vkt_dot(dlog, c1, NULL, m->w2, c1, NULL, 1, 0, &dh));
    CHECK(vkt_multiply(h, h, &hh));
    CHECK(vkt_tensor_from_host(ctx, VKT_F32, scalar, 1, &onef, &one));
    CHECK(vkt_subtract(one, hh, &dtanh));
    CHECK(vkt_multiply(dh, dtanh, &dpre));
    CHECK(vkt_dot(dpre, c0, NULL, x, c0, NULL, 1, 0, &dw1t));
    CHECK(vkt_transpose(dw1t, NULL, &dw1));
    CHECK(vkt_sum(dpre, c0, 1, false, &db1));
    /* update */
    CHECK(sgd(&m->w1, dw1, lr));
    CHECK(sgd(&m->b1, db1, lr));
    CHECK(sgd(&m->w2, dw2, lr));
    CHECK(sgd(&m->b2, db2, lr));
    CHECK(vkt_tensor_read(tot, &lsum, sizeof lsum));
    loss = -lsum / batch;
fail:
    FREE(x, y, pre1, a1, h, pre2, logits, mx, z, ez, se, lse, logp, p, diff, invb, dlog, dw2, db2,
         dh, hh, one, dtanh, dpre, dw1, db1, yl, tot, dw2t, dw1t);
    return loss;
}

#define PROG "vkt-mlp"

static void usage(FILE *f)
{
    fprintf(
        f, "usage: vkt-mlp [--batch N] [--steps N] [--seed N] [--lr X] [--device SEL] [--every N]\n"
           "Trains a 64-128-10 perceptron with libvkt on synthetic data and prints the loss.\n"
           "  --batch N     samples per step (default 256)\n"
           "  --steps N     training steps (default 200)\n"
           "  --seed N      data and initialisation seed (default 1)\n"
           "  --lr X        learning rate (default 0.5)\n"
           "  --device SEL  Vulkan device index or name substring (as VKT_DEVICE)\n"
           "  --every N     print the loss every N steps (default 20)\n"
           "Exit status: 0 when the loss fell, 1 when it did not, 2 on errors.\n");
}

/* The weights, biases and the learning rate as tensors of m's context; nonzero on failure. */
static int create_params(mlp *m, double lr_v, vkt_tensor **lr)
{
    int64_t s_w1[2] = {IN, HID}, s_b1[1] = {HID}, s_w2[2] = {HID, CLASSES}, s_b2[1] = {CLASSES},
            s1[1] = {1};
    float lrf = (float)lr_v;
    return param(m->ctx, s_w1, 2, 1.0 / sqrt(IN), &m->w1) || param(m->ctx, s_b1, 1, 0.0, &m->b1) ||
           param(m->ctx, s_w2, 2, 1.0 / sqrt(HID), &m->w2) || param(m->ctx, s_b2, 1, 0.0, &m->b2) ||
           vkt_tensor_from_host(m->ctx, VKT_F32, s1, 1, &lrf, lr);
}

/* The training steps, printing the loss every `every`: 0 when it fell, 1 when not, 2 on errors. */
static int train(mlp *m, long batch, long steps, long every, const float *protos, float *xb,
                 float *yb, vkt_tensor *lr)
{
    double first = NAN, last = NAN, total_ms = 0;
    for (long step = 0; step < steps; step++) {
        make_batch((int)batch, xb, yb, protos);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        double loss = train_step(m, xb, yb, (int)batch, lr);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        if (isnan(loss))
            return 2;
        total_ms += ms;
        if (step == 0)
            first = loss;
        last = loss;
        if (step % every == 0 || step == steps - 1)
            printf("step %5ld  loss %.4f  %.2f ms/step\n", step, loss, ms);
    }
    if (steps > 0)
        printf("loss %.4f -> %.4f over %ld steps, mean %.2f ms/step\n", first, last, steps,
               total_ms / (double)steps);
    return steps == 0 || last < first ? 0 : 1;
}

int main(int argc, char **argv)
{
    long batch = 256, steps = 200, seed = 1, every = 20;
    double lr_v = 0.5;
    const char *device = NULL;
    static const struct option opts[] = {
        {"batch", required_argument, 0, 'b'},  {"steps", required_argument, 0, 's'},
        {"seed", required_argument, 0, 'r'},   {"lr", required_argument, 0, 'l'},
        {"device", required_argument, 0, 'd'}, {"every", required_argument, 0, 'e'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (o) {
        case 'b': bad = demo_long(PROG, "--batch", optarg, 1, 1 << 20, &batch); break;
        case 's': bad = demo_long(PROG, "--steps", optarg, 0, 1 << 30, &steps); break;
        case 'r': bad = demo_long(PROG, "--seed", optarg, 0, 1L << 40, &seed); break;
        case 'e': bad = demo_long(PROG, "--every", optarg, 1, 1 << 30, &every); break;
        case 'l':
            bad = demo_number(PROG, "--lr", optarg, 0, 100, "a number in (0, 100)", &lr_v);
            break;
        case 'd': device = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (bad)
            return 2;
    }
    if (optind < argc) {
        fprintf(stderr, "vkt-mlp: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    rng_state = (uint64_t)seed * 2654435761u + 1;
    mlp m = {0};
    if (!(m.ctx = demo_ctx(PROG, device)))
        return 2;
    printf("device: %s, batch %ld, %ld steps\n", vkt_ctx_device_name(m.ctx), batch, steps);
    float *protos = malloc(sizeof(float) * CLASSES * IN);
    float *xb = malloc(sizeof(float) * (size_t)batch * IN),
          *yb = malloc(sizeof(float) * (size_t)batch * CLASSES);
    vkt_tensor *lr = NULL;
    int status = 2;
    if (!protos || !xb || !yb)
        goto done;
    for (int i = 0; i < CLASSES * IN; i++)
        protos[i] = (float)nrand();
    if (create_params(&m, lr_v, &lr) != 0) {
        fprintf(stderr, "vkt-mlp: cannot create parameters: %s\n", vkt_last_error());
        goto done;
    }
    status = train(&m, batch, steps, every, protos, xb, yb, lr);
done:
    free(protos);
    free(xb);
    free(yb);
    FREE(lr, m.w1, m.b1, m.w2, m.b2);
    vkt_ctx_destroy(m.ctx);
    return status;
}

/* lenet.c — the LeNet-5 model and its training step on libvkt (see lenet.h).
 *
 * The step is written the way an autodiff system emits it, because that is
 * what the fallback census is about: weight gradients of convs are convs with
 * the batch and feature axes of input, kernel and output swapped (through
 * vkt_conv's permutations, never a copy), input gradients are convs with a
 * reversed kernel, its in/out axes swapped and full padding, pooling gradients
 * are window_scatter_max, dense gradients are dots contracting the batch axis
 * followed by a transpose, bias gradients are sums (reshaped back for the conv
 * biases). Nothing is read back until the loss, and only when asked.
 *
 * lenet_step_graph records the same ops once into a vkt_graph on bound input
 * tensors, with the SGD update in place (vkt_assign), and then replays it:
 * a step is two input writes and one launch. */
#include "lenet.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "digits.h"
#include "rng.h"

enum { P_K1, P_B1, P_K2, P_B2, P_W3, P_B3, P_W4, P_B4, P_W5, P_B5, P_COUNT };
_Static_assert(P_COUNT == LENET_PARAMS, "lenet.h counts the parameters");

static const int64_t param_shapes[P_COUNT][4] = {{6, 1, 5, 5}, {6, 1, 1}, {16, 6, 5, 5}, {16, 1, 1},
                                                 {400, 120},   {120},     {120, 84},     {84},
                                                 {84, 10},     {10}};
static const int param_ranks[P_COUNT] = {4, 3, 4, 3, 2, 1, 2, 1, 2, 1};

struct lenet {
    vkt_ctx *ctx;
    lenet_act act;
    vkt_tensor *p[P_COUNT];
    vkt_tensor *lr, *zero, *one; /* rank-0 scalars, made once */
    /* the recorded step (lenet_step_graph): its bound inputs and loss sum */
    vkt_graph *graph;
    int graph_batch;
    vkt_tensor *gx, *gy, *gtot;
};

static _Thread_local char last_error[512];

const char *lenet_error(void)
{
    return last_error;
}

static void note(const char *call, int status)
{
    snprintf(last_error, sizeof last_error, "%s: %s: %s", call, vkt_status_name(status),
             vkt_last_error());
}

/* Every libvkt call goes through CHECK: the first failure is noted with the
 * call's text and libvkt's message, and the step is abandoned cleanly. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        int s_ = (call);                                                                           \
        if (s_ != VKT_OK) {                                                                        \
            note(#call, s_);                                                                       \
            status = s_;                                                                           \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

#define TRY_STEP(call)                                                                             \
    do {                                                                                           \
        int try_step_s_ = (call);                                                                  \
        if (try_step_s_ != VKT_OK)                                                                 \
            return try_step_s_;                                                                    \
    } while (0)

/* ---- building blocks -------------------------------------------------------- */

static const int64_t pool_window[4] = {1, 1, 2, 2};
static const vkt_window_opts pool_opts = {.strides = {1, 1, 2, 2}};
static const int swap01[4] = {1, 0, 2, 3};

static vkt_conv_opts conv_padding(int64_t pad)
{
    vkt_conv_opts o = {0};
    for (int i = 0; i < 2; i++)
        o.padding_lo[i] = o.padding_hi[i] = pad;
    return o;
}

/* dK[o,i,u,v] = sum over n,y,x of in[n,i,y+u,x+v] * dout[n,o,y,x]: a conv of
 * the input seen as [i, n, ...] with dout seen as the kernel [o, n, ...], whose
 * canonical output [i, o, ...] is swapped back to the kernel's [o, i, ...]. */
static vkt_conv_opts kernel_grad_opts(int64_t pad)
{
    vkt_conv_opts o = conv_padding(pad);
    o.has_input_permutation = o.has_kernel_permutation = o.has_output_permutation = true;
    for (int i = 0; i < 4; i++)
        o.input_permutation[i] = o.kernel_permutation[i] = o.output_permutation[i] = swap01[i];
    return o;
}

/* dIn = dout convolved with the spatially reversed kernel read as [i, o, ...],
 * padded by (kernel - 1 - forward padding) on each side. */
static vkt_conv_opts input_grad_opts(int64_t ksize, int64_t pad)
{
    vkt_conv_opts o = conv_padding(ksize - 1 - pad);
    o.has_kernel_permutation = true;
    for (int i = 0; i < 4; i++)
        o.kernel_permutation[i] = swap01[i];
    return o;
}

static int activate(const lenet *m, const vkt_tensor *z, vkt_tensor **a)
{
    return m->act == LENET_TANH ? vkt_tanh(z, a) : vkt_max(z, m->zero, a);
}

/* The gradient through the activation: g * (1 - a^2) for tanh, g where z > 0
 * for relu. */
static int activate_grad(const lenet *m, const vkt_tensor *g, const vkt_tensor *z,
                         const vkt_tensor *a, vkt_tensor **out)
{
    vkt_tensor *t1 = NULL, *t2 = NULL;
    int s;
    if (m->act == LENET_TANH) {
        s = vkt_multiply(a, a, &t1);
        if (s == VKT_OK)
            s = vkt_subtract(m->one, t1, &t2);
        if (s == VKT_OK)
            s = vkt_multiply(g, t2, out);
    } else {
        s = vkt_greater(z, m->zero, &t1);
        if (s == VKT_OK)
            s = vkt_select(t1, g, m->zero, out);
    }
    vkt_tensor_free(t1);
    vkt_tensor_free(t2);
    return s;
}

/* w -= lr * g: replacing *w, or in place (vkt_assign), as a recorded step
 * must, since each launch reads the same bound tensors. */
static int sgd(const lenet *m, vkt_tensor **w, const vkt_tensor *g, bool in_place)
{
    vkt_tensor *step = NULL, *nw = NULL;
    int s = vkt_multiply(g, m->lr, &step);
    if (s == VKT_OK)
        s = vkt_subtract(*w, step, &nw);
    vkt_tensor_free(step);
    if (s == VKT_OK && in_place) {
        s = vkt_assign(*w, nw);
        vkt_tensor_free(nw);
    } else if (s == VKT_OK) {
        vkt_tensor_free(*w);
        *w = nw;
    }
    return s;
}

/* ---- the step --------------------------------------------------------------- */

/* The tensors of one step, by name (the forward pass, the loss, the gradients). */
enum {
    T_C1,
    T_Z1,
    T_A1,
    T_P1,
    T_C2,
    T_Z2,
    T_A2,
    T_P2,
    T_F,
    T_D3,
    T_Z3,
    T_A3,
    T_D4,
    T_Z4,
    T_A4,
    T_D5,
    T_LOGITS,
    T_MX,
    T_ZC,
    T_EZ,
    T_SE,
    T_LSE,
    T_LOGP,
    T_YL,
    T_TOT,
    T_INVB,
    T_PROB,
    T_DIFF,
    T_G5,
    T_DW5T,
    T_DW5,
    T_DB5,
    T_DA4,
    T_G4,
    T_DW4T,
    T_DW4,
    T_DB4,
    T_DA3,
    T_G3,
    T_DW3T,
    T_DW3,
    T_DB3,
    T_DF,
    T_DP2,
    T_DA2,
    T_G2,
    T_DB2S,
    T_DB2,
    T_DK2,
    T_K2R,
    T_DP1,
    T_DA1,
    T_G1,
    T_DB1S,
    T_DB1,
    T_DK1,
    T_COUNT
};

/* The step's fixed shapes and axes. */
static const int64_t b1s[3] = {6, 1, 1}, b2s[3] = {16, 1, 1};
static const int ax0[1] = {0}, ax1[1] = {1}, bias_axes[3] = {0, 2, 3}, spatial[2] = {2, 3},
                 t10[2] = {1, 0};

#define K(name) (v[name] = NULL, &v[name])

/* The step's ops on images x and one-hot labels y, from the forward pass to
 * the SGD update; *tot receives the summed log-likelihood (the caller frees
 * it). Its own frame, so fbcount names it as the site of the ops it calls. */
__attribute__((noinline)) static int train_step(lenet *m, const vkt_tensor *x, const vkt_tensor *y,
                                                int batch, bool in_place, vkt_tensor **tot_out)
{
    vkt_tensor **p = m->p, *v[T_COUNT] = {0};
    int status = VKT_OK;
    const int64_t flat[2] = {batch, 400}, unflat[4] = {batch, 16, 5, 5};
    vkt_conv_opts pad2 = conv_padding(2), kg1 = kernel_grad_opts(2), kg2 = kernel_grad_opts(0),
                  ig2 = input_grad_opts(5, 0);
    CHECK(vkt_full(m->ctx, VKT_F32, NULL, 0, 1.0 / batch, K(T_INVB)));
    /* forward */
    CHECK(vkt_conv(x, p[P_K1], &pad2, K(T_C1)));
    CHECK(vkt_add(v[T_C1], p[P_B1], K(T_Z1)));
    CHECK(activate(m, v[T_Z1], K(T_A1)));
    CHECK(vkt_window_max(v[T_A1], pool_window, &pool_opts, K(T_P1)));
    CHECK(vkt_conv(v[T_P1], p[P_K2], NULL, K(T_C2)));
    CHECK(vkt_add(v[T_C2], p[P_B2], K(T_Z2)));
    CHECK(activate(m, v[T_Z2], K(T_A2)));
    CHECK(vkt_window_max(v[T_A2], pool_window, &pool_opts, K(T_P2)));
    CHECK(vkt_reshape(v[T_P2], flat, 2, K(T_F)));
    CHECK(vkt_dot(v[T_F], ax1, NULL, p[P_W3], ax0, NULL, 1, 0, K(T_D3)));
    CHECK(vkt_add(v[T_D3], p[P_B3], K(T_Z3)));
    CHECK(activate(m, v[T_Z3], K(T_A3)));
    CHECK(vkt_dot(v[T_A3], ax1, NULL, p[P_W4], ax0, NULL, 1, 0, K(T_D4)));
    CHECK(vkt_add(v[T_D4], p[P_B4], K(T_Z4)));
    CHECK(activate(m, v[T_Z4], K(T_A4)));
    CHECK(vkt_dot(v[T_A4], ax1, NULL, p[P_W5], ax0, NULL, 1, 0, K(T_D5)));
    CHECK(vkt_add(v[T_D5], p[P_B5], K(T_LOGITS)));
    /* log-softmax, shifted by the row maximum, and the summed cross-entropy */
    CHECK(vkt_reduce_max(v[T_LOGITS], ax1, 1, true, K(T_MX)));
    CHECK(vkt_subtract(v[T_LOGITS], v[T_MX], K(T_ZC)));
    CHECK(vkt_exp(v[T_ZC], K(T_EZ)));
    CHECK(vkt_sum(v[T_EZ], ax1, 1, true, K(T_SE)));
    CHECK(vkt_log(v[T_SE], K(T_LSE)));
    CHECK(vkt_subtract(v[T_ZC], v[T_LSE], K(T_LOGP)));
    CHECK(vkt_multiply(y, v[T_LOGP], K(T_YL)));
    CHECK(vkt_sum(v[T_YL], NULL, 0, false, K(T_TOT)));
    /* backward: d loss / d logits = (softmax - onehot) / batch */
    CHECK(vkt_exp(v[T_LOGP], K(T_PROB)));
    CHECK(vkt_subtract(v[T_PROB], y, K(T_DIFF)));
    CHECK(vkt_multiply(v[T_DIFF], v[T_INVB], K(T_G5)));
    /* dense layers: the weight gradient contracts the batch axis and comes out
     * [out, in], so a transpose follows, as Nx's grad of dot emits it */
    CHECK(vkt_dot(v[T_G5], ax0, NULL, v[T_A4], ax0, NULL, 1, 0, K(T_DW5T)));
    CHECK(vkt_transpose(v[T_DW5T], t10, K(T_DW5)));
    CHECK(vkt_sum(v[T_G5], ax0, 1, false, K(T_DB5)));
    CHECK(vkt_dot(v[T_G5], ax1, NULL, p[P_W5], ax1, NULL, 1, 0, K(T_DA4)));
    CHECK(activate_grad(m, v[T_DA4], v[T_Z4], v[T_A4], K(T_G4)));
    CHECK(vkt_dot(v[T_G4], ax0, NULL, v[T_A3], ax0, NULL, 1, 0, K(T_DW4T)));
    CHECK(vkt_transpose(v[T_DW4T], t10, K(T_DW4)));
    CHECK(vkt_sum(v[T_G4], ax0, 1, false, K(T_DB4)));
    CHECK(vkt_dot(v[T_G4], ax1, NULL, p[P_W4], ax1, NULL, 1, 0, K(T_DA3)));
    CHECK(activate_grad(m, v[T_DA3], v[T_Z3], v[T_A3], K(T_G3)));
    CHECK(vkt_dot(v[T_G3], ax0, NULL, v[T_F], ax0, NULL, 1, 0, K(T_DW3T)));
    CHECK(vkt_transpose(v[T_DW3T], t10, K(T_DW3)));
    CHECK(vkt_sum(v[T_G3], ax0, 1, false, K(T_DB3)));
    CHECK(vkt_dot(v[T_G3], ax1, NULL, p[P_W3], ax1, NULL, 1, 0, K(T_DF)));
    /* second conv block */
    CHECK(vkt_reshape(v[T_DF], unflat, 4, K(T_DP2)));
    CHECK(vkt_window_scatter_max(v[T_A2], v[T_DP2], m->zero, pool_window, &pool_opts, K(T_DA2)));
    CHECK(activate_grad(m, v[T_DA2], v[T_Z2], v[T_A2], K(T_G2)));
    CHECK(vkt_sum(v[T_G2], bias_axes, 3, false, K(T_DB2S)));
    CHECK(vkt_reshape(v[T_DB2S], b2s, 3, K(T_DB2)));
    CHECK(vkt_conv(v[T_P1], v[T_G2], &kg2, K(T_DK2)));
    CHECK(vkt_reverse(p[P_K2], spatial, 2, K(T_K2R)));
    CHECK(vkt_conv(v[T_G2], v[T_K2R], &ig2, K(T_DP1)));
    /* first conv block: no input gradient, x is data */
    CHECK(vkt_window_scatter_max(v[T_A1], v[T_DP1], m->zero, pool_window, &pool_opts, K(T_DA1)));
    CHECK(activate_grad(m, v[T_DA1], v[T_Z1], v[T_A1], K(T_G1)));
    CHECK(vkt_sum(v[T_G1], bias_axes, 3, false, K(T_DB1S)));
    CHECK(vkt_reshape(v[T_DB1S], b1s, 3, K(T_DB1)));
    CHECK(vkt_conv(x, v[T_G1], &kg1, K(T_DK1)));
    const vkt_tensor *grads[P_COUNT] = {v[T_DK1], v[T_DB1], v[T_DK2], v[T_DB2], v[T_DW3],
                                        v[T_DB3], v[T_DW4], v[T_DB4], v[T_DW5], v[T_DB5]};
    for (int i = 0; i < P_COUNT; i++)
        CHECK(sgd(m, &p[i], grads[i], in_place));
    *tot_out = v[T_TOT];
    v[T_TOT] = NULL; /* handed out: not freed below */
done:
    for (int i = 0; i < T_COUNT; i++)
        vkt_tensor_free(v[i]);
    return status;
}
#undef K

static int check_step(const lenet *m, const float *images, const float *onehot, int batch,
                      const char *fn)
{
    if (!m || !images || !onehot || batch < 1) {
        snprintf(last_error, sizeof last_error, "%s: %s", fn,
                 batch < 1 ? "batch must be >= 1" : "NULL argument");
        return VKT_EINVAL;
    }
    last_error[0] = '\0';
    return VKT_OK;
}

/* The loss from the summed log-likelihood (a sync point), or just a sync. */
static int finish(lenet *m, const vkt_tensor *tot, int batch, float *loss)
{
    int status = VKT_OK;
    if (loss) {
        float sum;
        CHECK(vkt_tensor_read(tot, &sum, sizeof sum));
        *loss = -sum / (float)batch;
    } else {
        CHECK(vkt_sync(m->ctx));
    }
done:
    return status;
}

static void drop_graph(lenet *m)
{
    vkt_graph_free(m->graph);
    vkt_tensor_free(m->gx);
    vkt_tensor_free(m->gy);
    vkt_tensor_free(m->gtot);
    m->graph = NULL;
    m->gx = m->gy = m->gtot = NULL;
    m->graph_batch = 0;
}

int lenet_step(lenet *m, const float *images, const float *onehot, int batch, float *loss)
{
    TRY_STEP(check_step(m, images, onehot, batch, "lenet_step"));
    drop_graph(m); /* the eager update replaces the tensors a recorded step is bound to */
    const int64_t xs[4] = {batch, 1, DIGITS_SIDE, DIGITS_SIDE}, ys[2] = {batch, DIGITS_CLASSES};
    vkt_tensor *x = NULL, *y = NULL, *tot = NULL;
    int status = VKT_OK;
    CHECK(vkt_tensor_from_host(m->ctx, VKT_F32, xs, 4, images, &x));
    CHECK(vkt_tensor_from_host(m->ctx, VKT_F32, ys, 2, onehot, &y));
    status = train_step(m, x, y, batch, false, &tot);
    if (status == VKT_OK)
        status = finish(m, tot, batch, loss);
done:
    vkt_tensor_free(x);
    vkt_tensor_free(y);
    vkt_tensor_free(tot);
    return status;
}

void lenet_graph_size(const lenet *m, size_t *dispatches, size_t *levels)
{
    *dispatches = m ? vkt_graph_dispatches(m->graph) : 0;
    *levels = m ? vkt_graph_levels(m->graph) : 0;
}

void lenet_forget_graph(lenet *m)
{
    if (m)
        drop_graph(m);
}

/* Records the step for `batch` on bound inputs gx, gy, updating the
 * parameters in place. */
static int record(lenet *m, int batch)
{
    const int64_t xs[4] = {batch, 1, DIGITS_SIDE, DIGITS_SIDE}, ys[2] = {batch, DIGITS_CLASSES};
    int status = VKT_OK;
    drop_graph(m);
    CHECK(vkt_zeros(m->ctx, VKT_F32, xs, 4, &m->gx));
    CHECK(vkt_zeros(m->ctx, VKT_F32, ys, 2, &m->gy));
    CHECK(vkt_graph_begin(m->ctx));
    status = train_step(m, m->gx, m->gy, batch, true, &m->gtot);
    vkt_graph *g = NULL;
    int end = vkt_graph_end(m->ctx, &g);
    if (status == VKT_OK && end != VKT_OK) {
        note("vkt_graph_end", end);
        status = end;
    }
    m->graph = g;
    m->graph_batch = batch;
done:
    if (status != VKT_OK)
        drop_graph(m);
    return status;
}

int lenet_step_graph(lenet *m, const float *images, const float *onehot, int batch, float *loss)
{
    TRY_STEP(check_step(m, images, onehot, batch, "lenet_step_graph"));
    int status = VKT_OK;
    if (!m->graph || m->graph_batch != batch)
        TRY_STEP(record(m, batch));
    CHECK(vkt_tensor_write(m->gx, images, vkt_tensor_nbytes(m->gx)));
    CHECK(vkt_tensor_write(m->gy, onehot, vkt_tensor_nbytes(m->gy)));
    return lenet_step_graph_again(m, loss);
done:
    return status;
}

int lenet_step_graph_again(lenet *m, float *loss)
{
    int status = VKT_OK;
    if (!m || !m->graph) {
        snprintf(last_error, sizeof last_error, "lenet_step_graph_again: %s",
                 m ? "no step recorded" : "NULL model");
        return m ? VKT_EGRAPH : VKT_EINVAL;
    }
    CHECK(vkt_graph_launch(m->graph));
    if (loss) {
        float sum;
        CHECK(vkt_tensor_read(m->gtot, &sum, sizeof sum));
        *loss = -sum / (float)m->graph_batch;
    }
done:
    return status;
}

/* ---- parameters --------------------------------------------------------------- */

static int param(vkt_ctx *ctx, uint64_t *rng, const int64_t *shape, int rank, double scale,
                 vkt_tensor **out)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)shape[i];
    float *v = malloc(n * sizeof *v);
    if (!v) {
        *out = NULL;
        return VKT_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(scale * rng_normal(rng));
    int s = vkt_tensor_from_host(ctx, VKT_F32, shape, rank, v, out);
    free(v);
    return s;
}

int lenet_create(vkt_ctx *ctx, lenet_act act, uint64_t seed, double lr, lenet **out)
{
    /* fan-in of each weight: the scale keeps activations near unit variance */
    static const double fan_in[P_COUNT] = {25, 0, 150, 0, 400, 0, 120, 0, 84, 0};
    int status = VKT_OK;
    if (!out)
        return VKT_EINVAL;
    *out = NULL;
    if (!ctx || (act != LENET_TANH && act != LENET_RELU) || !(lr > 0)) {
        snprintf(last_error, sizeof last_error,
                 "lenet_create: bad argument (ctx, activation or learning rate)");
        return VKT_EINVAL;
    }
    lenet *m = calloc(1, sizeof *m);
    if (!m)
        return VKT_ENOMEM;
    m->ctx = ctx;
    m->act = act;
    uint64_t rng = rng_seed(seed ^ 0x5eedu);
    for (int i = 0; i < P_COUNT; i++)
        CHECK(param(ctx, &rng, param_shapes[i], param_ranks[i],
                    fan_in[i] > 0 ? 1.0 / sqrt(fan_in[i]) : 0.0, &m->p[i]));
    CHECK(vkt_full(ctx, VKT_F32, NULL, 0, lr, &m->lr));
    CHECK(vkt_full(ctx, VKT_F32, NULL, 0, 0.0, &m->zero));
    CHECK(vkt_full(ctx, VKT_F32, NULL, 0, 1.0, &m->one));
    *out = m;
    return VKT_OK;
done:
    lenet_free(m);
    return status;
}

void lenet_free(lenet *m)
{
    if (!m)
        return;
    drop_graph(m);
    for (int i = 0; i < P_COUNT; i++)
        vkt_tensor_free(m->p[i]);
    vkt_tensor_free(m->lr);
    vkt_tensor_free(m->zero);
    vkt_tensor_free(m->one);
    free(m);
}

size_t lenet_param_numel(int i)
{
    if (i < 0 || i >= P_COUNT)
        return 0;
    size_t n = 1;
    for (int d = 0; d < param_ranks[i]; d++)
        n *= (size_t)param_shapes[i][d];
    return n;
}

static int param_check(const lenet *m, int i, const void *buf, size_t n, const char *fn)
{
    if (!m || !buf || i < 0 || i >= P_COUNT || n != lenet_param_numel(i)) {
        snprintf(last_error, sizeof last_error, "%s: bad model, buffer, index %d or size %zu", fn,
                 i, n);
        return VKT_EINVAL;
    }
    return VKT_OK;
}

int lenet_param_read(const lenet *m, int i, float *dst, size_t n)
{
    int status = param_check(m, i, dst, n, "lenet_param_read");
    if (status == VKT_OK)
        CHECK(vkt_tensor_read(m->p[i], dst, n * sizeof *dst));
done:
    return status;
}

/* In place, so a recorded step keeps reading the same tensor. */
int lenet_param_write(lenet *m, int i, const float *src, size_t n)
{
    int status = param_check(m, i, src, n, "lenet_param_write");
    if (status != VKT_OK)
        return status;
    CHECK(vkt_tensor_write(m->p[i], src, n * sizeof *src));
done:
    return status;
}

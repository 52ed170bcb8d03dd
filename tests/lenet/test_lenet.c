/* test_lenet.c — the LeNet-5 step of vkt-lenet, seen through fbcount.
 *
 * A native step must leave nothing on the host; each forced fallback must
 * show exactly the ops it forces (and, with results left on the host, exactly
 * the downstream host-resident ops), attributed to the step; and training must
 * make the loss fall. The counts are per step and follow from the model:
 * 2 forward + 3 gradient convs, 3 forward + 6 gradient dots, 2 pools forward
 * and 2 pooling gradients. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "digits.h"
#include "fbcount.h"
#include "lenet.h"
#include "rng.h"

#define BATCH 4

typedef struct fixture {
    vkt_ctx *ctx;
    lenet *m;
    int batch;
    float images[128 * DIGITS_SIDE * DIGITS_SIDE];
    float onehot[128 * DIGITS_CLASSES];
    int status;
} fixture;

static fixture fx;

static void setup(void)
{
    /* The suite decides what runs natively, not the caller's environment. */
    unsetenv("VKT_NATIVE_DISABLE");
    unsetenv("VKT_FALLBACK_RESULT");
    cr_assert_eq(vkt_ctx_create(NULL, &fx.ctx), VKT_OK, "no Vulkan device: %s", vkt_last_error());
    cr_assert_eq(lenet_create(fx.ctx, LENET_TANH, 7, 0.05, &fx.m), VKT_OK, "%s", lenet_error());
    uint64_t rng = rng_seed(7);
    fx.batch = BATCH;
    digits_batch(&rng, fx.batch, fx.images, fx.onehot, NULL);
}

static void teardown(void)
{
    lenet_free(fx.m);
    vkt_ctx_destroy(fx.ctx);
}

static void one_step(void *arg)
{
    fixture *f = arg;
    f->status = lenet_step(f->m, f->images, f->onehot, f->batch, NULL);
}

typedef struct expect {
    const char *op;
    uint64_t count;
} expect;

/* Runs one step with `disable` forced down the fallback path and checks the
 * census holds exactly `fb` fallbacks and `host` host-resident ops, every one
 * attributed to the step's code. */
static void check_step(const char *disable, vkt_residency where, const expect *fb, int nfb,
                       const expect *host, int nhost)
{
    cr_assert_eq(vkt_ctx_set_native_disable(fx.ctx, disable), VKT_OK);
    cr_assert_eq(vkt_ctx_set_fallback_result(fx.ctx, where), VKT_OK);
    fbcount_census *c = fbcount_count(one_step, &fx);
    cr_assert_not_null(c, "fbcount_count returned NULL");
    cr_assert_eq(fx.status, VKT_OK, "step failed: %s", lenet_error());
    char text[8192] = "";
    fbcount_census_format_buf(c, text, sizeof text);
    uint64_t want = 0, want_host = 0;
    for (int i = 0; i < nfb; i++) {
        want += fb[i].count;
        cr_expect_eq(fbcount_census_op_count(c, fb[i].op), fb[i].count,
                     "%s: %s fell back %llu times, want %llu\n%s", disable, fb[i].op,
                     (unsigned long long)fbcount_census_op_count(c, fb[i].op),
                     (unsigned long long)fb[i].count, text);
    }
    for (int i = 0; i < nhost; i++) {
        want_host += host[i].count;
        cr_expect_eq(fbcount_census_host_op_count(c, host[i].op), host[i].count,
                     "%s: %s ran on the host %llu times, want %llu\n%s", disable, host[i].op,
                     (unsigned long long)fbcount_census_host_op_count(c, host[i].op),
                     (unsigned long long)host[i].count, text);
    }
    cr_expect_eq(fbcount_census_total(c), want, "%s: %llu fallbacks, want exactly %llu\n%s",
                 disable, (unsigned long long)fbcount_census_total(c), (unsigned long long)want,
                 text);
    cr_expect_eq(fbcount_census_host_total(c), want_host,
                 "%s: %llu host-resident ops, want exactly %llu\n%s", disable,
                 (unsigned long long)fbcount_census_host_total(c), (unsigned long long)want_host,
                 text);
    if (want + want_host > 0)
        cr_expect(strstr(text, "train_step") != NULL,
                  "%s: the census does not name train_step as a site\n%s", disable, text);
    fbcount_census_free(c);
}

TestSuite(lenet, .init = setup, .fini = teardown, .timeout = 120);

Test(lenet, native_step_never_falls_back)
{
    check_step("", VKT_DEVICE, NULL, 0, NULL, 0);
}

Test(lenet, conv_disabled_shows_every_conv)
{
    const expect fb[] = {{"vkt_conv", 5}};
    check_step("conv", VKT_DEVICE, fb, 1, NULL, 0);
}

Test(lenet, dot_disabled_shows_every_dot)
{
    const expect fb[] = {{"vkt_dot", 9}};
    check_step("dot", VKT_DEVICE, fb, 1, NULL, 0);
}

Test(lenet, window_ops_disabled_show_pools_and_their_gradients)
{
    const expect fb[] = {{"vkt_window_max", 2}, {"vkt_window_scatter_max", 2}};
    check_step("window_max,window_scatter_max", VKT_DEVICE, fb, 2, NULL, 0);
}

/* The dot story: results left on the host drag the single-input work after
 * them along — the three weight-gradient transposes and the reshape of the
 * flattened input gradient back into the pooled layout. Every other consumer
 * of a dot result also reads a device tensor, so it pulls the result back up. */
Test(lenet, dot_results_on_host_show_the_downstream_host_work)
{
    const expect fb[] = {{"vkt_dot", 9}};
    const expect host[] = {{"vkt_transpose", 3}, {"vkt_reshape", 1}};
    check_step("dot", VKT_HOST, fb, 1, host, 2);
}

/* The step's numbers do not depend on where it ran: one native step and one
 * all-fallback step from the same weights give the same loss and the same
 * updated parameters to float rounding. Batch 96 makes the first conv's kernel
 * gradient reduce over 96 x 28 x 28 = 75,264 terms per output, past the
 * 65,535 loop iterations lavapipe allows one invocation. */
Test(lenet, native_step_matches_the_reference_step)
{
    enum { B = 96 };
    lenet *twin = NULL;
    float native = NAN, host = NAN, *a = malloc(400 * 120 * sizeof *a),
          *b = malloc(400 * 120 * sizeof *b);
    cr_assert(a && b);
    uint64_t rng = rng_seed(11);
    digits_batch(&rng, B, fx.images, fx.onehot, NULL);
    cr_assert_eq(lenet_create(fx.ctx, LENET_TANH, 7, 0.05, &twin), VKT_OK, "%s", lenet_error());
    cr_assert_eq(lenet_step(fx.m, fx.images, fx.onehot, B, &native), VKT_OK, "%s", lenet_error());
    cr_assert_eq(vkt_ctx_set_native_disable(fx.ctx, "all"), VKT_OK);
    cr_assert_eq(lenet_step(twin, fx.images, fx.onehot, B, &host), VKT_OK, "%s", lenet_error());
    cr_expect(isfinite(native) && fabsf(native - host) <= 1e-4f * fabsf(host),
              "native loss %.7f, host loss %.7f", native, host);
    for (int i = 0; i < LENET_PARAMS; i++) {
        size_t n = lenet_param_numel(i), worst = 0;
        cr_assert_eq(lenet_param_read(fx.m, i, a, n), VKT_OK, "%s", lenet_error());
        cr_assert_eq(lenet_param_read(twin, i, b, n), VKT_OK, "%s", lenet_error());
        for (size_t k = 1; k < n; k++)
            if (fabsf(a[k] - b[k]) > fabsf(a[worst] - b[worst]))
                worst = k;
        cr_expect(fabsf(a[worst] - b[worst]) <= 1e-4f + 1e-3f * fabsf(b[worst]),
                  "parameter %d element %zu after one step: native %.7f, reference %.7f", i, worst,
                  a[worst], b[worst]);
    }
    lenet_free(twin);
    free(a);
    free(b);
}

static void restore(float *const *p0, int changed, size_t j, float delta)
{
    for (int i = 0; i < LENET_PARAMS; i++) {
        float *v = p0[i];
        if (i == changed)
            v[j] += delta;
        cr_assert_eq(lenet_param_write(fx.m, i, v, lenet_param_numel(i)), VKT_OK, "%s",
                     lenet_error());
        if (i == changed)
            v[j] -= delta;
    }
}

/* The whole backward pass, end to end: one step's SGD update is lr * dL/dw,
 * and the loss a step reports is taken before its update, so a central
 * difference of reported losses must match the update, here for the
 * largest-gradient element of every parameter (a wrong permutation, a
 * missing kernel flip or a pooling gradient sent to the wrong place breaks
 * it). eps and the tolerance allow for float32 losses and max-pool kinks. */
Test(lenet, step_gradients_match_finite_differences)
{
    const double lr = 0.05, eps = 5e-3;
    float *p0[LENET_PARAMS] = {0}, *p1 = malloc(400 * 120 * sizeof *p1), l0, lp, lm;
    cr_assert_not_null(p1);
    for (int i = 0; i < LENET_PARAMS; i++) {
        size_t n = lenet_param_numel(i);
        p0[i] = malloc(n * sizeof *p0[i]);
        cr_assert_not_null(p0[i]);
        cr_assert_eq(lenet_param_read(fx.m, i, p0[i], n), VKT_OK, "%s", lenet_error());
    }
    cr_assert_eq(lenet_step(fx.m, fx.images, fx.onehot, fx.batch, &l0), VKT_OK, "%s",
                 lenet_error());
    for (int i = 0; i < LENET_PARAMS; i++) {
        size_t n = lenet_param_numel(i), j = 0;
        cr_assert_eq(lenet_param_read(fx.m, i, p1, n), VKT_OK, "%s", lenet_error());
        for (size_t k = 1; k < n; k++)
            if (fabsf(p0[i][k] - p1[k]) > fabsf(p0[i][j] - p1[j]))
                j = k;
        double grad = (p0[i][j] - p1[j]) / lr;
        restore(p0, i, j, (float)eps);
        cr_assert_eq(lenet_step(fx.m, fx.images, fx.onehot, fx.batch, &lp), VKT_OK, "%s",
                     lenet_error());
        restore(p0, i, j, (float)-eps);
        cr_assert_eq(lenet_step(fx.m, fx.images, fx.onehot, fx.batch, &lm), VKT_OK, "%s",
                     lenet_error());
        double fd = (lp - lm) / (2 * eps);
        cr_expect(grad != 0 && fabs(fd - grad) <= 0.05 * fabs(grad) + 1e-3,
                  "parameter %d element %zu: step gradient %.6f, finite difference %.6f", i, j,
                  grad, fd);
    }
    for (int i = 0; i < LENET_PARAMS; i++)
        free(p0[i]);
    free(p1);
}

Test(lenet, bad_batch_is_an_error_not_a_crash)
{
    cr_assert_eq(lenet_step(fx.m, fx.images, fx.onehot, 0, NULL), VKT_EINVAL);
    cr_assert(strstr(lenet_error(), "batch") != NULL, "message: %s", lenet_error());
}

/* 200 steps at batch 8 on lavapipe take 15-30 s on two cores. The loss is read
 * every step (it costs no extra submission: the step ends in one anyway) and
 * the mean of the last 20 must be under half the mean of the first 10. */
Test(lenet, loss_falls_over_200_steps, .timeout = 240)
{
    enum { STEPS = 200, B = 8 };
    uint64_t rng = rng_seed(3);
    float loss[STEPS];
    for (int i = 0; i < STEPS; i++) {
        digits_batch(&rng, B, fx.images, fx.onehot, NULL);
        cr_assert_eq(lenet_step(fx.m, fx.images, fx.onehot, B, &loss[i]), VKT_OK, "step %d: %s", i,
                     lenet_error());
        cr_assert(isfinite(loss[i]), "step %d: loss %f", i, loss[i]);
    }
    double head = 0, tail = 0;
    for (int i = 0; i < 10; i++)
        head += loss[i] / 10.0;
    for (int i = STEPS - 20; i < STEPS; i++)
        tail += loss[i] / 20.0;
    cr_assert(tail < 0.5 * head, "loss did not fall: first 10 steps %.4f, last 20 steps %.4f", head,
              tail);
}

static void graph_steps(void *arg)
{
    fixture *f = arg;
    for (int k = 0; k < 3 && f->status == VKT_OK; k++)
        f->status = lenet_step_graph(f->m, f->images, f->onehot, f->batch, NULL);
}

/* The recorded step (--graph) replays the eager step exactly: the same
 * arithmetic (its elementwise chains fused, each step rounding as its op's own
 * kernel does), parameters updated in place; nothing leaves the GPU, and every
 * op of the step counts once per launch. */
Test(lenet, graph_step_replays_the_eager_step)
{
    lenet *twin = NULL;
    cr_assert_eq(lenet_create(fx.ctx, LENET_TANH, 7, 0.05, &twin), VKT_OK, "%s", lenet_error());
    for (int k = 0; k < 3; k++)
        cr_assert_eq(lenet_step(twin, fx.images, fx.onehot, fx.batch, NULL), VKT_OK, "%s",
                     lenet_error());
    vkt_stats_reset();
    fbcount_census *c = fbcount_count(graph_steps, &fx);
    cr_assert_eq(fx.status, VKT_OK, "graph step: %s", lenet_error());
    cr_expect_eq(fbcount_census_total(c) + fbcount_census_host_total(c), 0,
                 "a recorded step left the GPU");
    fbcount_census_free(c);
    vkt_stats_entry e[128];
    size_t n = vkt_stats(e, 128);
    for (size_t i = 0; i < n && i < 128; i++) {
        if (strcmp(e[i].op, "conv") == 0)
            cr_expect_eq(e[i].native, 3 * 5, "conv: %llu native calls in 3 launches, want 15",
                         (unsigned long long)e[i].native);
        cr_expect_eq(e[i].fallback + e[i].host, 0, "%s did not run natively", e[i].op);
    }
    float *a = malloc(400 * 120 * sizeof *a), *b = malloc(400 * 120 * sizeof *b);
    cr_assert(a && b);
    for (int i = 0; i < LENET_PARAMS; i++) {
        size_t np = lenet_param_numel(i);
        cr_assert_eq(lenet_param_read(fx.m, i, a, np), VKT_OK, "%s", lenet_error());
        cr_assert_eq(lenet_param_read(twin, i, b, np), VKT_OK, "%s", lenet_error());
        cr_expect(memcmp(a, b, np * sizeof *a) == 0,
                  "parameter %d differs after 3 recorded and 3 eager steps", i);
    }
    free(a);
    free(b);
    lenet_free(twin);
}

/* A graph records native work only: with conv forced down the fallback path
 * the recording is refused, naming the op, instead of replaying host work
 * that no census would see. */
Test(lenet, graph_step_refuses_a_fallback)
{
    cr_assert_eq(vkt_ctx_set_native_disable(fx.ctx, "conv"), VKT_OK);
    fbcount_census *c = fbcount_count(graph_steps, &fx);
    cr_assert_eq(fx.status, VKT_EGRAPH, "status %s", vkt_status_name(fx.status));
    cr_expect(strstr(lenet_error(), "vkt_conv") != NULL, "message: %s", lenet_error());
    cr_expect_eq(fbcount_census_total(c), 0, "a refused recording fell back");
    fbcount_census_free(c);
    cr_assert_eq(vkt_ctx_set_native_disable(fx.ctx, ""), VKT_OK);
    fx.status = VKT_OK;
    graph_steps(&fx);
    cr_expect_eq(fx.status, VKT_OK, "recording again with conv native: %s", lenet_error());
}

/* Launching the recorded step again trains on the batch it holds: the same as
 * writing that batch again; with nothing recorded it is an error. */
Test(lenet, graph_step_again_replays_the_held_batch)
{
    lenet *twin = NULL;
    cr_assert_eq(lenet_create(fx.ctx, LENET_TANH, 7, 0.05, &twin), VKT_OK, "%s", lenet_error());
    cr_expect_eq(lenet_step_graph_again(twin, NULL), VKT_EGRAPH, "nothing recorded yet");
    float l1, l2;
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(lenet_step_graph(fx.m, fx.images, fx.onehot, fx.batch, NULL), VKT_OK, "%s",
                     lenet_error());
        cr_assert_eq(k == 0 ? lenet_step_graph(twin, fx.images, fx.onehot, fx.batch, NULL)
                            : lenet_step_graph_again(twin, NULL),
                     VKT_OK, "%s", lenet_error());
    }
    cr_assert_eq(lenet_step_graph(fx.m, fx.images, fx.onehot, fx.batch, &l1), VKT_OK, "%s",
                 lenet_error());
    cr_assert_eq(lenet_step_graph_again(twin, &l2), VKT_OK, "%s", lenet_error());
    cr_expect_eq(l1, l2, "loss %g after writing the batch again, %g after replaying it", l1, l2);
    lenet_free(twin);
}

/* test_graph.c — recorded steps (vkt_graph_*), vkt_tensor_write, vkt_assign and
 * the per-dispatch profile.
 *
 * A graph must replay exactly what the same ops compute eagerly, on new inputs
 * written into its bound tensors, with state updated in place; count its ops
 * at every launch; refuse anything it could not replay honestly (a fallback, a
 * host-resident op, a read, a write or a sync while recording), naming the op;
 * and refuse a launch after a bound tensor was freed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

TestSuite(graph, .init = h_setup, .fini = h_teardown, .timeout = 120);

static vkt_stats_entry stats_of(const char *op)
{
    vkt_stats_entry e[H_MAX_OPS];
    size_t n = vkt_stats(e, H_MAX_OPS);
    for (size_t i = 0; i < n && i < H_MAX_OPS; i++)
        if (strcmp(e[i].op, op) == 0)
            return e[i];
    return (vkt_stats_entry){op, 0, 0, 0};
}

static uint64_t native_of(const char *op)
{
    return stats_of(op).native;
}

/* y = sum(tanh(x * w + b), axis 1) and z = dot(x, w^T-ish): a few families. */
static void step(vkt_tensor *x, vkt_tensor *w, vkt_tensor *b, vkt_tensor **y, vkt_tensor **z)
{
    static const int ax1[1] = {1}, c1[1] = {1};
    vkt_tensor *t1, *t2, *t3;
    H_OK(vkt_multiply(x, w, &t1));
    H_OK(vkt_add(t1, b, &t2));
    H_OK(vkt_tanh(t2, &t3));
    H_OK(vkt_sum(t3, ax1, 1, false, y));
    H_OK(vkt_dot(x, c1, NULL, w, c1, NULL, 1, 0, z));
    vkt_tensor_free(t1);
    vkt_tensor_free(t2);
    vkt_tensor_free(t3);
}

Test(graph, replays_new_inputs_like_eager_runs)
{
    h_shape sx = {2, {37, 300}}, sb = {1, {300}};
    vkt_tensor *x = h_rand(VKT_F32, &sx, -1, 1, 1), *w = h_rand(VKT_F32, &sx, -1, 1, 2),
               *b = h_rand(VKT_F32, &sb, -1, 1, 3), *y, *z;
    H_OK(vkt_graph_begin(h_ctx));
    step(x, w, b, &y, &z);
    vkt_graph *g = NULL;
    H_OK(vkt_graph_end(h_ctx, &g));
    cr_assert_not_null(g);
    /* multiply, add and tanh fuse into one program, which the sum computes as
     * it reads its input; the dot stays */
    cr_assert_eq(vkt_graph_dispatches(g), 2, "%zu dispatches recorded", vkt_graph_dispatches(g));
    size_t nx = h_numel(&sx);
    float *host = malloc(nx * sizeof *host);
    cr_assert_not_null(host);
    for (int launch = 0; launch < 3; launch++) {
        vkt_tensor *fresh = h_rand(VKT_F32, &sx, -2, 2, 10 + (uint64_t)launch), *ey, *ez;
        H_OK(vkt_tensor_read(fresh, host, nx * sizeof *host));
        H_OK(vkt_tensor_write(x, host, nx * sizeof *host));
        uint64_t dots = native_of("dot"), tanhs = native_of("tanh");
        FBCOUNT_ASSERT_NONE(H_OK(vkt_graph_launch(g)));
        cr_expect_eq(native_of("dot"), dots + 1, "a launch counts its recorded dot once");
        cr_expect_eq(native_of("tanh"), tanhs + 1);
        step(fresh, w, b, &ey, &ez);
        char what[64];
        snprintf(what, sizeof what, "launch %d: sum", launch);
        h_compare(y, ey, H_EXACT, what);
        snprintf(what, sizeof what, "launch %d: dot", launch);
        h_compare(z, ez, H_EXACT, what);
        vkt_tensor_free(fresh);
        vkt_tensor_free(ey);
        vkt_tensor_free(ez);
    }
    free(host);
    vkt_graph_free(g);
    vkt_tensor_free(x);
    vkt_tensor_free(w);
    vkt_tensor_free(b);
    vkt_tensor_free(y);
    vkt_tensor_free(z);
}

/* w -= lr * g, in place: each launch starts from the last one's w. */
Test(graph, assign_updates_state_in_place)
{
    h_shape s = {1, {1000}};
    vkt_tensor *w = h_rand(VKT_F32, &s, -1, 1, 4), *g = h_rand(VKT_F32, &s, -1, 1, 5),
               *lr = h_scalar(VKT_F32, 0.25);
    float *w0 = h_read(w), *gv = h_read(g);
    H_OK(vkt_graph_begin(h_ctx));
    vkt_tensor *step_, *nw;
    H_OK(vkt_multiply(g, lr, &step_));
    H_OK(vkt_subtract(w, step_, &nw));
    H_OK(vkt_assign(w, nw));
    vkt_tensor_free(step_);
    vkt_tensor_free(nw);
    vkt_graph *gr;
    H_OK(vkt_graph_end(h_ctx, &gr));
    for (int k = 0; k < 3; k++)
        H_OK(vkt_graph_launch(gr));
    float *w3 = h_read(w);
    for (int i = 0; i < 1000; i++) {
        float want = w0[i];
        for (int k = 0; k < 3; k++)
            want = want - gv[i] * 0.25f;
        cr_assert_eq(w3[i], want, "w[%d] after 3 launches: %g, want %g", i, w3[i], want);
    }
    free(w0);
    free(gv);
    free(w3);
    vkt_graph_free(gr);
    vkt_tensor_free(w);
    vkt_tensor_free(g);
    vkt_tensor_free(lr);
}

/* The census stays complete: an op that would fall back is refused, naming
 * it, and nothing leaves the GPU; the recording then fails at its end. */
Test(graph, refuses_a_fallback_and_names_the_op)
{
    h_shape s = {1, {64}};
    vkt_tensor *x = h_rand(VKT_F32, &s, -1, 1, 6), *y = (vkt_tensor *)1, *a, *b;
    H_OK(vkt_ctx_set_native_disable(h_ctx, "exp"));
    H_OK(vkt_graph_begin(h_ctx));
    H_OK(vkt_negate(x, &a));
    int st;
    FBCOUNT_ASSERT_NONE(st = vkt_exp(a, &y));
    cr_assert_eq(st, VKT_EGRAPH, "exp in a recording: %s", vkt_status_name(st));
    cr_assert_null(y);
    cr_assert(strstr(vkt_last_error(), "vkt_exp") && strstr(vkt_last_error(), "VKT_NATIVE_DISABLE"),
              "message: %s", vkt_last_error());
    H_OK(vkt_abs(a, &b));
    vkt_graph *g = (vkt_graph *)1;
    cr_assert_eq(vkt_graph_end(h_ctx, &g), VKT_EGRAPH, "%s", vkt_last_error());
    cr_assert_null(g);
    h_native_disable_env();
    /* The context records eagerly again. */
    vkt_tensor *c;
    H_NATIVE(vkt_exp(x, &c));
    vkt_tensor_free(a);
    vkt_tensor_free(b);
    vkt_tensor_free(c);
    vkt_tensor_free(x);
}

Test(graph, misuse_is_an_error_with_a_message)
{
    h_shape s = {1, {16}};
    vkt_tensor *x = h_rand(VKT_F32, &s, -1, 1, 7), *h = h_rand(VKT_F32, &s, -1, 1, 8), *y = NULL,
               *t;
    float buf[16] = {0};
    vkt_graph *g = NULL;
    cr_assert_eq(vkt_graph_end(h_ctx, &g), VKT_EGRAPH, "end without begin");
    H_OK(vkt_tensor_move(h, VKT_HOST));
    H_OK(vkt_graph_begin(h_ctx));
    cr_assert_eq(vkt_graph_begin(h_ctx), VKT_EGRAPH, "a second begin");
    H_OK(vkt_negate(x, &y));
    cr_assert_eq(vkt_tensor_read(y, buf, sizeof buf), VKT_EGRAPH, "a read while recording");
    cr_assert(strstr(vkt_last_error(), "recording"), "%s", vkt_last_error());
    cr_assert_eq(vkt_tensor_write(x, buf, sizeof buf), VKT_EGRAPH, "a write while recording");
    cr_assert_eq(vkt_sync(h_ctx), VKT_EGRAPH, "a sync while recording");
    cr_assert_eq(vkt_abs(h, &t), VKT_EGRAPH, "a host-resident op while recording");
    cr_assert(strstr(vkt_last_error(), "vkt_abs"), "%s", vkt_last_error());
    cr_assert_eq(vkt_graph_end(h_ctx, &g), VKT_EGRAPH, "the refused op makes the recording fail");
    /* A good recording, then a bound tensor freed: the launch refuses. */
    vkt_tensor *z;
    H_OK(vkt_graph_begin(h_ctx));
    H_OK(vkt_negate(x, &z));
    H_OK(vkt_graph_end(h_ctx, &g));
    H_OK(vkt_graph_begin(h_ctx));
    cr_assert_eq(vkt_graph_launch(g), VKT_EGRAPH, "a launch while another graph records");
    vkt_graph *g2;
    H_OK(vkt_graph_end(h_ctx, &g2));
    vkt_graph_free(g2);
    H_OK(vkt_graph_launch(g));
    vkt_tensor_free(x);
    cr_assert_eq(vkt_graph_launch(g), VKT_EGRAPH, "a launch after a bound tensor was freed");
    cr_assert(strstr(vkt_last_error(), "freed"), "%s", vkt_last_error());
    cr_assert_eq(vkt_graph_launch(NULL), VKT_EINVAL);
    vkt_graph_free(g);
    vkt_graph_free(NULL);
    vkt_tensor_free(y);
    vkt_tensor_free(z);
    vkt_tensor_free(h);
}

/* Each host-side call refused inside a recording, alone, fails the recording:
 * the graph would otherwise lack what the caller asked for. */
Test(graph, each_refusal_fails_the_recording)
{
    h_shape s = {1, {16}};
    vkt_tensor *x = h_rand(VKT_F32, &s, -1, 1, 9);
    float buf[16] = {0};
    static const char *what[] = {"read", "write", "sync", "move"};
    for (int k = 0; k < 4; k++) {
        vkt_tensor *y = NULL;
        vkt_graph *g = NULL;
        H_OK(vkt_graph_begin(h_ctx));
        H_OK(vkt_negate(x, &y));
        int st = k == 0   ? vkt_tensor_read(y, buf, sizeof buf)
                 : k == 1 ? vkt_tensor_write(x, buf, sizeof buf)
                 : k == 2 ? vkt_sync(h_ctx)
                          : vkt_tensor_move(x, VKT_HOST);
        cr_assert_eq(st, VKT_EGRAPH, "a %s while recording: %s", what[k], vkt_status_name(st));
        cr_assert_eq(vkt_graph_end(h_ctx, &g), VKT_EGRAPH, "the refused %s fails the recording",
                     what[k]);
        cr_assert_null(g);
        cr_assert(strstr(vkt_last_error(), "recording"), "%s", vkt_last_error());
        vkt_tensor_free(y);
    }
    vkt_tensor_free(x);
}

/* A storage a live graph uses stays on the device: moving it (or a view of it)
 * to the host would free the memory the graph's launches use. */
Test(graph, a_bound_storage_does_not_move)
{
    h_shape s = {1, {16}}, s2 = {2, {4, 4}};
    vkt_tensor *x = h_rand(VKT_F32, &s, -1, 1, 10), *y = NULL, *v = NULL;
    vkt_graph *g = NULL;
    H_OK(vkt_reshape(x, s2.d, s2.rank, &v));
    H_OK(vkt_graph_begin(h_ctx));
    H_OK(vkt_negate(x, &y));
    H_OK(vkt_graph_end(h_ctx, &g));
    cr_assert_eq(vkt_tensor_move(x, VKT_HOST), VKT_EGRAPH, "the bound tensor moved");
    cr_assert(strstr(vkt_last_error(), "graph"), "%s", vkt_last_error());
    cr_assert_eq(vkt_tensor_move(v, VKT_HOST), VKT_EGRAPH, "a view of the bound tensor moved");
    cr_assert_eq(vkt_tensor_move(y, VKT_HOST), VKT_EGRAPH, "the graph's output moved");
    H_OK(vkt_graph_launch(g));
    float got[16], in[16];
    H_OK(vkt_tensor_read(y, got, sizeof got));
    H_OK(vkt_tensor_read(x, in, sizeof in));
    for (int i = 0; i < 16; i++)
        cr_assert_eq(got[i], -in[i], "element %d after the refused moves", i);
    vkt_graph_free(g);
    H_OK(vkt_tensor_move(v, VKT_HOST)); /* the graph is gone: the storage is free to move */
    cr_assert_eq(vkt_tensor_residency(x), VKT_HOST);
    vkt_tensor_free(v);
    vkt_tensor_free(y);
    vkt_tensor_free(x);
}

/* Constants made during the recording, and intermediates freed during it,
 * keep their contents for every launch. */
Test(graph, constants_and_intermediates_survive)
{
    h_shape s = {1, {4096}};
    vkt_tensor *x = h_rand(VKT_F32, &s, -1, 1, 9), *y;
    H_OK(vkt_graph_begin(h_ctx));
    vkt_tensor *k, *t;
    H_OK(vkt_full(h_ctx, VKT_F32, NULL, 0, 3.0, &k));
    H_OK(vkt_multiply(x, k, &t));
    vkt_tensor_free(k);
    H_OK(vkt_negate(t, &y));
    vkt_tensor_free(t);
    vkt_graph *g;
    H_OK(vkt_graph_end(h_ctx, &g));
    /* Allocations after the recording must not land on the graph's memory. */
    vkt_tensor *other = h_rand(VKT_F32, &s, 5, 6, 10);
    for (int k2 = 0; k2 < 2; k2++) {
        H_OK(vkt_graph_launch(g));
        float *xv = h_read(x), *yv = h_read(y);
        for (int i = 0; i < 4096; i++)
            cr_assert_eq(yv[i], -(xv[i] * 3.0f), "launch %d: y[%d] = %g", k2, i, yv[i]);
        free(xv);
        free(yv);
    }
    vkt_graph_free(g);
    vkt_tensor_free(other);
    vkt_tensor_free(x);
    vkt_tensor_free(y);
}

/* A launch runs its commands in dependency levels: independent ops share one,
 * and an in-place write waits for the ops that read the old contents (write
 * after read) as a read waits for its writer. (The intermediates live until
 * the recording has ended, so that nothing fuses.) */
Test(graph, levels_run_independent_work_together_in_order)
{
    h_shape s = {1, {3000}};
    vkt_tensor *x = h_rand(VKT_F32, &s, -1, 1, 21), *w = h_rand(VKT_F32, &s, -1, 1, 22);
    float *xv = h_read(x), *wv = h_read(w);
    vkt_tensor *a, *b, *c, *d, *e, *f;
    H_OK(vkt_graph_begin(h_ctx));
    H_OK(vkt_add(x, w, &a));      /* level 0 */
    H_OK(vkt_multiply(x, w, &b)); /* level 0 */
    H_OK(vkt_subtract(x, w, &c)); /* level 0 */
    H_OK(vkt_negate(w, &f));      /* level 0: reads w before the assign writes it */
    H_OK(vkt_add(a, b, &d));      /* level 1 */
    H_OK(vkt_assign(w, x));       /* level 1: after every read of the old w */
    H_OK(vkt_multiply(d, c, &e)); /* level 2 */
    vkt_graph *g;
    H_OK(vkt_graph_end(h_ctx, &g));
    cr_expect_eq(vkt_graph_dispatches(g), 7);
    cr_expect_eq(vkt_graph_levels(g), 3, "%zu levels", vkt_graph_levels(g));
    H_OK(vkt_graph_launch(g));
    float *ev = h_read(e), *fv = h_read(f), *wn = h_read(w);
    for (int i = 0; i < 3000; i++) {
        float want = ((xv[i] + wv[i]) + xv[i] * wv[i]) * (xv[i] - wv[i]);
        cr_assert_eq(ev[i], want, "e[%d] = %g, want %g", i, ev[i], want);
        cr_assert_eq(fv[i], -wv[i], "f[%d] read w after the assign", i);
        cr_assert_eq(wn[i], xv[i], "w[%d] not assigned", i);
    }
    free(ev);
    free(fv);
    free(wn);
    vkt_graph_free(g);
    vkt_tensor_free(a);
    vkt_tensor_free(b);
    vkt_tensor_free(c);
    vkt_tensor_free(d);
    /* a chain: every op needs the one before */
    vkt_tensor *t, *chain[4];
    H_OK(vkt_graph_begin(h_ctx));
    H_OK(vkt_negate(x, &t));
    for (int k = 0; k < 4; k++) {
        chain[k] = t;
        H_OK(vkt_add(t, x, &t));
    }
    H_OK(vkt_graph_end(h_ctx, &g));
    cr_expect_eq(vkt_graph_levels(g), 5, "%zu levels", vkt_graph_levels(g));
    cr_expect_eq(vkt_graph_levels(NULL), 0);
    H_OK(vkt_graph_launch(g));
    float *tv = h_read(t);
    for (int i = 0; i < 3000; i++) {
        float want = -xv[i];
        for (int k = 0; k < 4; k++)
            want = want + xv[i];
        cr_assert_eq(tv[i], want, "chain[%d]", i);
    }
    free(tv);
    vkt_graph_free(g);
    for (int k = 0; k < 4; k++)
        vkt_tensor_free(chain[k]);
    free(xv);
    free(wv);
    vkt_tensor_free(t);
    vkt_tensor_free(e);
    vkt_tensor_free(f);
    vkt_tensor_free(x);
    vkt_tensor_free(w);
}

/* The LeNet step's chains, as eager ops: a bias (broadcast over the other
 * axes) then tanh; tanh's gradient g * (1 - a * a); an SGD update w -= lr * g
 * written back in place. */
static void chains(vkt_tensor *x, vkt_tensor *bias, vkt_tensor *g, vkt_tensor *one, vkt_tensor *lr,
                   vkt_tensor *w, vkt_tensor **act, vkt_tensor **grad)
{
    vkt_tensor *z, *t1, *t2, *step_, *nw;
    H_OK(vkt_add(x, bias, &z));
    H_OK(vkt_tanh(z, act));
    H_OK(vkt_multiply(*act, *act, &t1));
    H_OK(vkt_subtract(one, t1, &t2));
    H_OK(vkt_multiply(g, t2, grad));
    H_OK(vkt_multiply(g, lr, &step_));
    H_OK(vkt_subtract(w, step_, &nw));
    H_OK(vkt_assign(w, nw));
    vkt_tensor_free(z);
    vkt_tensor_free(t1);
    vkt_tensor_free(t2);
    vkt_tensor_free(step_);
    vkt_tensor_free(nw);
}

/* Ten chained ops (longer than the fused kernel's seven steps), exp of a log
 * of an abs, and a kept intermediate with tanh of it. */
static void long_chains(vkt_tensor *x, vkt_tensor *one, vkt_tensor *g, vkt_tensor *lr,
                        vkt_tensor *r[4])
{
    vkt_tensor *t, *k1, *l;
    H_OK(vkt_add(x, one, &t));
    for (int i = 0; i < 9; i++) {
        vkt_tensor *v;
        H_OK(i % 2 ? vkt_multiply(t, lr, &v) : vkt_add(t, g, &v));
        vkt_tensor_free(t);
        t = v;
    }
    r[0] = t;
    H_OK(vkt_abs(x, &k1));
    H_OK(vkt_log(k1, &l));
    H_OK(vkt_exp(l, &r[1]));
    H_OK(vkt_add(x, g, &r[2]));
    H_OK(vkt_tanh(r[2], &r[3]));
    vkt_tensor_free(k1);
    vkt_tensor_free(l);
}

/* A graph fuses f32 elementwise chains whose intermediates it alone sees into
 * one dispatch each, computing exactly what the ops compute one by one. */
Test(graph, fuses_elementwise_chains_exactly)
{
    h_shape sx = {4, {5, 6, 7, 9}}, sb = {3, {6, 1, 1}};
    vkt_tensor *x = h_rand(VKT_F32, &sx, -3, 3, 31), *bias = h_rand(VKT_F32, &sb, -1, 1, 32),
               *g = h_rand(VKT_F32, &sx, -1, 1, 33), *w = h_rand(VKT_F32, &sx, -1, 1, 34),
               *one = h_scalar(VKT_F32, 1.0), *lr = h_scalar(VKT_F32, 0.05), *act, *grad;
    vkt_tensor *w_eager = NULL, *act_e, *grad_e;
    H_OK(vkt_negate(w, &w_eager));
    H_OK(vkt_negate(w_eager, &w_eager)); /* a copy of w for the eager run */
    H_OK(vkt_graph_begin(h_ctx));
    chains(x, bias, g, one, lr, w, &act, &grad);
    vkt_graph *gr;
    H_OK(vkt_graph_end(h_ctx, &gr));
    /* 8 ops: bias + tanh, the gradient's three, the update's three */
    cr_expect_eq(vkt_graph_dispatches(gr), 3, "%zu dispatches", vkt_graph_dispatches(gr));
    for (int launch = 0; launch < 2; launch++) {
        FBCOUNT_ASSERT_NONE(H_OK(vkt_graph_launch(gr)));
        chains(x, bias, g, one, lr, w_eager, &act_e, &grad_e);
        h_compare(act, act_e, H_EXACT, "bias + tanh");
        h_compare(grad, grad_e, H_EXACT, "tanh's gradient");
        h_compare(w, w_eager, H_EXACT, "the update, in place");
        vkt_tensor_free(act_e);
        vkt_tensor_free(grad_e);
    }
    vkt_graph_free(gr);
    vkt_tensor_free(act);
    vkt_tensor_free(grad);
    vkt_tensor_free(w_eager);

    /* Longer than the kernel's seven steps: two dispatches. exp of a log of
     * an abs: functions of functions stay apart. A kept intermediate is not
     * fused away. */
    vkt_tensor *r[4], *re[4];
    H_OK(vkt_graph_begin(h_ctx));
    long_chains(x, one, g, lr, r);
    H_OK(vkt_graph_end(h_ctx, &gr));
    cr_expect_eq(vkt_graph_dispatches(gr), 2 + 3 + 2, "%zu dispatches", vkt_graph_dispatches(gr));
    H_OK(vkt_graph_launch(gr));
    long_chains(x, one, g, lr, re);
    static const char *const what[4] = {"ten chained ops", "exp of a log", "a kept intermediate",
                                        "tanh of a kept intermediate"};
    for (int i = 0; i < 4; i++) {
        h_compare(r[i], re[i], H_EXACT, what[i]);
        vkt_tensor_free(r[i]);
        vkt_tensor_free(re[i]);
    }
    vkt_graph_free(gr);
    vkt_tensor *t, *u;

    /* A producer read broadcast joins its consumer when its own inputs are
     * whole or scalars (z - log(s), s a row's sum), else stays apart. */
    h_shape sz = {3, {5, 3, 4}}, ss = {3, {5, 3, 1}}, sr = {2, {3, 1}};
    vkt_tensor *z = h_rand(VKT_F32, &sz, -1, 1, 36), *sv = h_rand(VKT_F32, &ss, 0.5, 2, 37),
               *rv = h_rand(VKT_F32, &sr, -1, 1, 38), *o1, *o2, *e1, *e2;
    for (int run = 0; run < 2; run++) {
        if (run == 0)
            H_OK(vkt_graph_begin(h_ctx));
        vkt_tensor *l, *q;
        H_OK(vkt_log(sv, &l));
        H_OK(vkt_subtract(z, l, run ? &e1 : &o1));
        H_OK(vkt_add(sv, rv, &q));
        H_OK(vkt_multiply(z, q, run ? &e2 : &o2));
        vkt_tensor_free(l);
        vkt_tensor_free(q);
        if (run == 0) {
            H_OK(vkt_graph_end(h_ctx, &gr));
            cr_expect_eq(vkt_graph_dispatches(gr), 1 + 2, "%zu dispatches",
                         vkt_graph_dispatches(gr));
            H_OK(vkt_graph_launch(gr));
        }
    }
    h_compare(o1, e1, H_EXACT, "z - log(s), fused");
    h_compare(o2, e2, H_EXACT, "z * (s + r), apart");
    vkt_tensor *bc[] = {z, sv, rv, o1, o2, e1, e2};
    for (size_t i = 0; i < sizeof bc / sizeof bc[0]; i++)
        vkt_tensor_free(bc[i]);
    vkt_graph_free(gr);

    /* A producer whose input is overwritten before its consumer runs stays
     * apart: u = (x * lr) + one reads x before the assign. */
    vkt_tensor *x2 = h_rand(VKT_F32, &sx, -1, 1, 35);
    float *xv = h_read(x2);
    H_OK(vkt_graph_begin(h_ctx));
    H_OK(vkt_multiply(x2, lr, &t));
    H_OK(vkt_assign(x2, g));
    H_OK(vkt_add(t, one, &u));
    vkt_tensor_free(t);
    H_OK(vkt_graph_end(h_ctx, &gr));
    cr_expect_eq(vkt_graph_dispatches(gr), 3, "%zu dispatches", vkt_graph_dispatches(gr));
    H_OK(vkt_graph_launch(gr));
    float *uv = h_read(u);
    for (size_t i = 0; i < h_numel(&sx); i++)
        cr_assert_eq(uv[i], xv[i] * 0.05f + 1.0f, "u[%zu] read x after it was overwritten", i);
    free(uv);
    free(xv);
    vkt_graph_free(gr);
    vkt_tensor_free(u);
    vkt_tensor_free(x2);
    vkt_tensor *rest[] = {x, bias, g, w, one, lr};
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
        vkt_tensor_free(rest[i]);
}

/* ---- epilogues: an elementwise program in the store of the kernel it reads ---- */

/* A graph's body: reads in[], writes out[] (new tensors) and updates st in
 * place (may be NULL). */
typedef void (*body_fn)(vkt_tensor *const *in, vkt_tensor *st, vkt_tensor **out);

static vkt_tensor *copy_of(const vkt_tensor *t)
{
    vkt_tensor *n, *c;
    H_OK(vkt_negate(t, &n));
    H_OK(vkt_negate(n, &c));
    vkt_tensor_free(n);
    return c;
}

/* Records body into a graph, launches it twice (profiled the second time) and
 * runs it eagerly on a copy of st: every result and st must be the same bits,
 * the graph `dispatches` long (0: not checked), and one dispatch of it a
 * kernel whose name starts with `kernel` and ends in _epi or _pro (a variant
 * with fused programs), tagged with the consumer's op. */
static void fused_check(const char *what, body_fn body, vkt_tensor *const *in, vkt_tensor *st,
                        int nout, size_t dispatches, const char *kernel, const char *op)
{
    vkt_tensor *out[4] = {0}, *eout[4] = {0}, *est = NULL, *st0 = NULL;
    if (st) {
        st0 = copy_of(st);
        est = copy_of(st);
    }
    H_OK(vkt_ctx_set_profiling(h_ctx, true));
    H_OK(vkt_graph_begin(h_ctx));
    body(in, st, out);
    vkt_graph *g;
    H_OK(vkt_graph_end(h_ctx, &g));
    if (dispatches)
        cr_expect_eq(vkt_graph_dispatches(g), dispatches, "%s: %zu dispatches, want %zu", what,
                     vkt_graph_dispatches(g), dispatches);
    for (int launch = 0; launch < 2; launch++) {
        if (st)
            H_OK(vkt_assign(st, st0));                   /* each launch from the same state */
        size_t stale = vkt_profile_read(h_ctx, NULL, 0); /* only the last launch's entries stay */
        vkt_profile_entry *skip = calloc(stale + 1, sizeof *skip);
        vkt_profile_read(h_ctx, skip, stale);
        free(skip);
        FBCOUNT_ASSERT_NONE(H_OK(vkt_graph_launch(g)));
    }
    vkt_profile_entry e[64];
    size_t n = vkt_profile_read(h_ctx, e, 64);
    bool seen = false;
    for (size_t i = 0; i < n && i < 64; i++) {
        size_t kl = strlen(e[i].kernel);
        seen |= strncmp(e[i].kernel, kernel, strlen(kernel)) == 0 && kl > 4 &&
                (strcmp(e[i].kernel + kl - 4, "_epi") == 0 ||
                 strcmp(e[i].kernel + kl - 4, "_pro") == 0) &&
                strcmp(e[i].op, op) == 0;
    }
    if (vkt_ctx_last_gpu_ns(h_ctx) >= 0 && !seen) {
        cr_expect(seen, "%s: no %s*_epi or _pro dispatch of %s in the profile (%zu entries)", what,
                  kernel, op, n);
        for (size_t i = 0; i < n && i < 64; i++)
            cr_log_info("  %s %s", e[i].op, e[i].kernel);
    }
    H_OK(vkt_ctx_set_profiling(h_ctx, false));
    vkt_graph_free(g);
    body(in, est, eout);
    for (int i = 0; i < nout; i++) {
        h_compare(out[i], eout[i], H_EXACT, what);
        vkt_tensor_free(out[i]);
        vkt_tensor_free(eout[i]);
    }
    if (st) {
        h_compare(st, est, H_EXACT, what);
        H_OK(vkt_assign(st, st0));
    }
    vkt_tensor_free(st0);
    vkt_tensor_free(est);
}

/* tanh(dot(x, w) + b): a dense layer. */
static void dense(vkt_tensor *const *in, vkt_tensor *st, vkt_tensor **out)
{
    static const int c1[1] = {1}, c0[1] = {0};
    vkt_tensor *d, *z;
    (void)st;
    H_OK(vkt_dot(in[0], c1, NULL, in[1], c0, NULL, 1, 0, &d));
    H_OK(vkt_add(d, in[2], &z));
    H_OK(vkt_tanh(z, &out[0]));
    vkt_tensor_free(d);
    vkt_tensor_free(z);
}

/* The gradient through it: dot(g, w contracting w's columns) * (1 - a * a). */
static void dense_grad(vkt_tensor *const *in, vkt_tensor *st, vkt_tensor **out)
{
    static const int c1[1] = {1};
    vkt_tensor *d, *t1, *t2;
    (void)st;
    H_OK(vkt_dot(in[0], c1, NULL, in[1], c1, NULL, 1, 0, &d));
    H_OK(vkt_multiply(in[2], in[2], &t1));
    H_OK(vkt_subtract(in[3], t1, &t2));
    H_OK(vkt_multiply(d, t2, &out[0]));
    vkt_tensor_free(d);
    vkt_tensor_free(t1);
    vkt_tensor_free(t2);
}

/* st -= lr * g, written back in place (an SGD update), g from `make`. */
static void sgd_of(vkt_tensor *st, const vkt_tensor *g, const vkt_tensor *lr)
{
    vkt_tensor *step_, *nw;
    H_OK(vkt_multiply(g, lr, &step_));
    H_OK(vkt_subtract(st, step_, &nw));
    H_OK(vkt_assign(st, nw));
    vkt_tensor_free(step_);
    vkt_tensor_free(nw);
}

/* A conv's kernel gradient (as the LeNet step writes it, of a conv padded
 * by pad) and the update of the kernel st with it. */
static void kgrad_sgd(vkt_tensor *const *in, vkt_tensor *st, int64_t pad)
{
    vkt_conv_opts o = {.has_input_permutation = true,
                       .has_kernel_permutation = true,
                       .has_output_permutation = true,
                       .padding_lo = {pad, pad},
                       .padding_hi = {pad, pad}};
    static const int swap01[4] = {1, 0, 2, 3};
    memcpy(o.input_permutation, swap01, sizeof swap01);
    memcpy(o.kernel_permutation, swap01, sizeof swap01);
    memcpy(o.output_permutation, swap01, sizeof swap01);
    vkt_tensor *dk;
    H_OK(vkt_conv(in[0], in[1], &o, &dk));
    sgd_of(st, dk, in[2]);
    vkt_tensor_free(dk);
}

/* LeNet's two kernel gradients: padded by 2, and not. */
static void kgrad1_sgd(vkt_tensor *const *in, vkt_tensor *st, vkt_tensor **out)
{
    (void)out;
    kgrad_sgd(in, st, 2);
}

static void kgrad2_sgd(vkt_tensor *const *in, vkt_tensor *st, vkt_tensor **out)
{
    (void)out;
    kgrad_sgd(in, st, 0);
}

/* tanh(conv(x, k) + b[features]): a conv layer. */
static void conv_layer(vkt_tensor *const *in, vkt_tensor *st, vkt_tensor **out)
{
    vkt_conv_opts o = {.padding_lo = {2, 2}, .padding_hi = {2, 2}};
    vkt_tensor *c, *z;
    (void)st;
    H_OK(vkt_conv(in[0], in[1], &o, &c));
    H_OK(vkt_add(c, in[2], &z));
    H_OK(vkt_tanh(z, &out[0]));
    vkt_tensor_free(c);
    vkt_tensor_free(z);
}

/* A bias gradient (a sum over all axes but the features, reshaped) and the
 * bias's update. */
static void bias_sgd(vkt_tensor *const *in, vkt_tensor *st, vkt_tensor **out)
{
    static const int axes[3] = {0, 2, 3};
    const int64_t shape[3] = {vkt_tensor_shape(st)[0], 1, 1};
    vkt_tensor *s, *r;
    (void)out;
    H_OK(vkt_sum(in[0], axes, 3, false, &s));
    H_OK(vkt_reshape(s, shape, 3, &r));
    sgd_of(st, r, in[1]);
    vkt_tensor_free(s);
    vkt_tensor_free(r);
}

/* Not fused: st -= lr * dot(x, st), the product reading what the update
 * writes; and a product whose result a second op reads. */
static void unfusable(vkt_tensor *const *in, vkt_tensor *st, vkt_tensor **out)
{
    static const int c1[1] = {1}, c0[1] = {0};
    vkt_tensor *d, *d2;
    H_OK(vkt_dot(in[0], c1, NULL, st, c0, NULL, 1, 0, &d));
    sgd_of(st, d, in[1]);
    H_OK(vkt_dot(in[0], c1, NULL, in[2], c0, NULL, 1, 0, &d2));
    H_OK(vkt_tanh(d2, &out[0]));
    H_OK(vkt_exp(d2, &out[1]));
    vkt_tensor_free(d);
    vkt_tensor_free(d2);
}

/* New context with a kernel forced (NULL: unset). */
static void use_kernel(const char *var, const char *name)
{
    h_teardown();
    if (name)
        cr_assert_eq(setenv(var, name, 1), 0);
    else
        cr_assert_eq(unsetenv(var), 0);
    h_setup();
}

/* Every dot kernel with an epilogue, on shapes that fill no tile, one tile
 * and several: a dense layer in one dispatch, its gradient in one. The large
 * tiles take one shape of several tiles each way (a CPU device compiles them
 * slowly). */
Test(graph, fuses_programs_into_every_dot_kernel, .timeout = 300)
{
    static const char *const kernels[] = {"direct", "tiny", "small", "big", "big_vec", "tall_vec"};
    static const int64_t mkn[][3] = {
        {260, 40, 132}, {7, 5, 3}, {8, 400, 120}, {33, 37, 29}, {130, 36, 260}};
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        use_kernel("VKT_DOT_KERNEL", kernels[k]);
        char prefix[32];
        snprintf(prefix, sizeof prefix, "gemm_%s", kernels[k]);
        size_t nshapes = k < 3 ? sizeof mkn / sizeof mkn[0] : 1;
        for (size_t i = 0; i < nshapes; i++) {
            h_shape sx = {2, {mkn[i][0], mkn[i][1]}}, sw = {2, {mkn[i][1], mkn[i][2]}},
                    sb = {1, {mkn[i][2]}}, sg = {2, {mkn[i][0], mkn[i][2]}},
                    sa = {2, {mkn[i][0], mkn[i][1]}};
            uint64_t seed = 700 + 10 * k + i;
            vkt_tensor *x = h_rand(VKT_F32, &sx, -1, 1, seed),
                       *w = h_rand(VKT_F32, &sw, -1, 1, seed + 1),
                       *b = h_rand(VKT_F32, &sb, -1, 1, seed + 2),
                       *g = h_rand(VKT_F32, &sg, -1, 1, seed + 3),
                       *a = h_rand(VKT_F32, &sa, -1, 1, seed + 4), *one = h_scalar(VKT_F32, 1.0);
            char what[96];
            snprintf(what, sizeof what, "%s: tanh(dot + bias), %lld x %lld x %lld", kernels[k],
                     (long long)mkn[i][0], (long long)mkn[i][1], (long long)mkn[i][2]);
            fused_check(what, dense, (vkt_tensor *const[]){x, w, b}, NULL, 1, 1, prefix, "tanh");
            snprintf(what, sizeof what, "%s: tanh's gradient through dot, %lld x %lld x %lld",
                     kernels[k], (long long)mkn[i][0], (long long)mkn[i][2], (long long)mkn[i][1]);
            fused_check(what, dense_grad, (vkt_tensor *const[]){g, w, a, one}, NULL, 1, 1, prefix,
                        "multiply");
            vkt_tensor *all[] = {x, w, b, g, a, one};
            for (size_t j = 0; j < sizeof all / sizeof all[0]; j++)
                vkt_tensor_free(all[j]);
        }
    }
    use_kernel("VKT_DOT_KERNEL", NULL);
}

/* conv2d_tile (one part, and parts added by conv2d_sum) and conv2d_kgrad
 * (one chunk, and chunks added by conv2d_kgrad_sum) with a bias and tanh or
 * an SGD update in their store; a reduction's last pass with the bias's. */
Test(graph, fuses_programs_into_conv_and_reduce_kernels, .timeout = 300)
{
    static const char *const kernels[] = {NULL, "tile", "kgrad"};
    static const int64_t batches[] = {1, 5, 16};
    for (size_t j = 0; j < sizeof kernels / sizeof kernels[0]; j++) {
        use_kernel("VKT_CONV_KERNEL", kernels[j]);
        const char *kn = kernels[j] ? kernels[j] : "auto";
        vkt_tensor *lr = h_scalar(VKT_F32, 0.05);
        for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
            int64_t nb = batches[i];
            h_shape sx = {4, {nb, 1, 28, 28}}, sk = {4, {6, 1, 5, 5}}, sb = {3, {6, 1, 1}},
                    sg = {4, {nb, 6, 28, 28}}, sx2 = {4, {nb, 6, 14, 14}},
                    sg2 = {4, {nb, 16, 10, 10}}, sk2 = {4, {16, 6, 5, 5}};
            uint64_t seed = 800 + 30 * j + 10 * i;
            vkt_tensor *x = h_rand(VKT_F32, &sx, -1, 1, seed),
                       *k = h_rand(VKT_F32, &sk, -1, 1, seed + 1),
                       *b = h_rand(VKT_F32, &sb, -1, 1, seed + 2),
                       *g = h_rand(VKT_F32, &sg, -1, 1, seed + 3),
                       *x2 = h_rand(VKT_F32, &sx2, -1, 1, seed + 4),
                       *g2 = h_rand(VKT_F32, &sg2, -1, 1, seed + 5),
                       *k2 = h_rand(VKT_F32, &sk2, -1, 1, seed + 6);
            char what[96];
            snprintf(what, sizeof what, "SGD on a kernel gradient (%s), batch %lld", kn,
                     (long long)nb);
            fused_check(what, kgrad1_sgd, (vkt_tensor *const[]){x, g, lr}, k, 0, 0, "conv2d_",
                        "assign");
            snprintf(what, sizeof what, "SGD on conv 2's kernel gradient (%s), batch %lld", kn,
                     (long long)nb);
            fused_check(what, kgrad2_sgd, (vkt_tensor *const[]){x2, g2, lr}, k2, 0, 0, "conv2d_",
                        "assign");
            if (!kernels[j]) {
                snprintf(what, sizeof what, "tanh(conv + bias), batch %lld", (long long)nb);
                fused_check(what, conv_layer, (vkt_tensor *const[]){x, k, b}, NULL, 1, 1, "conv2d_",
                            "tanh");
                snprintf(what, sizeof what, "SGD on a bias gradient, batch %lld", (long long)nb);
                fused_check(what, bias_sgd, (vkt_tensor *const[]){g, lr}, b, 0, 0, "reduce_f32",
                            "assign");
            }
            vkt_tensor *all[] = {x, k, b, g, x2, g2, k2};
            for (size_t q = 0; q < sizeof all / sizeof all[0]; q++)
                vkt_tensor_free(all[q]);
        }
        vkt_tensor_free(lr);
    }
    use_kernel("VKT_CONV_KERNEL", NULL);
}

/* A dense layer's weight gradient as the step writes it, contracting the
 * batch and transposed: the transpose becomes the product itself, with its
 * operands swapped, and the update runs in its store. */
static void wgrad_sgd(vkt_tensor *const *in, vkt_tensor *st, vkt_tensor **out)
{
    static const int c0[1] = {0}, t10[2] = {1, 0};
    vkt_tensor *dt, *d;
    (void)out;
    H_OK(vkt_dot(in[0], c0, NULL, in[1], c0, NULL, 1, 0, &dt));
    H_OK(vkt_transpose(dt, t10, &d));
    sgd_of(st, d, in[2]);
    vkt_tensor_free(dt);
    vkt_tensor_free(d);
}

/* A batched product transposed in its last two axes, kept. */
static void batched_t(vkt_tensor *const *in, vkt_tensor *st, vkt_tensor **out)
{
    static const int ca[1] = {2}, ba[1] = {0}, cb[1] = {1}, bb[1] = {0}, t021[3] = {0, 2, 1};
    vkt_tensor *d;
    (void)st;
    H_OK(vkt_dot(in[0], ca, ba, in[1], cb, bb, 1, 1, &d));
    H_OK(vkt_transpose(d, t021, &out[0]));
    vkt_tensor_free(d);
}

Test(graph, fuses_a_products_transpose_into_it, .timeout = 200)
{
    static const int64_t bn[][3] = {{8, 10, 84}, {64, 84, 120}, {33, 120, 400}, {5, 3, 7}};
    vkt_tensor *lr = h_scalar(VKT_F32, 0.05);
    for (size_t i = 0; i < sizeof bn / sizeof bn[0]; i++) {
        h_shape sg = {2, {bn[i][0], bn[i][1]}}, sa = {2, {bn[i][0], bn[i][2]}},
                sw = {2, {bn[i][2], bn[i][1]}};
        vkt_tensor *g = h_rand(VKT_F32, &sg, -1, 1, 950 + i),
                   *a = h_rand(VKT_F32, &sa, -1, 1, 960 + i),
                   *w = h_rand(VKT_F32, &sw, -1, 1, 970 + i);
        char what[96];
        snprintf(what, sizeof what, "SGD on a transposed weight gradient, %lld x %lld x %lld",
                 (long long)bn[i][0], (long long)bn[i][1], (long long)bn[i][2]);
        fused_check(what, wgrad_sgd, (vkt_tensor *const[]){g, a, lr}, w, 0, 1, "gemm_", "assign");
        vkt_tensor_free(g);
        vkt_tensor_free(a);
        vkt_tensor_free(w);
    }
    h_shape sx = {3, {3, 40, 24}}, sy = {3, {3, 24, 44}};
    vkt_tensor *x = h_rand(VKT_F32, &sx, -1, 1, 980), *y = h_rand(VKT_F32, &sy, -1, 1, 981);
    vkt_tensor *out[1] = {0}, *eout[1] = {0};
    H_OK(vkt_graph_begin(h_ctx));
    batched_t((vkt_tensor *const[]){x, y}, NULL, out);
    vkt_graph *gr;
    H_OK(vkt_graph_end(h_ctx, &gr));
    cr_expect_eq(vkt_graph_dispatches(gr), 1, "a batched product and its transpose: %zu dispatches",
                 vkt_graph_dispatches(gr));
    H_OK(vkt_graph_launch(gr));
    batched_t((vkt_tensor *const[]){x, y}, NULL, eout);
    h_compare(out[0], eout[0], H_EXACT, "a batched product, transposed");
    vkt_graph_free(gr);
    vkt_tensor *all[] = {lr, x, y, out[0], eout[0]};
    for (size_t j = 0; j < sizeof all / sizeof all[0]; j++)
        vkt_tensor_free(all[j]);
}

/* The loss of the LeNet step: a log-softmax over rows and the summed
 * log-likelihood, and the gradient it starts. */
static void log_softmax(vkt_tensor *const *in, vkt_tensor *st, vkt_tensor **out)
{
    static const int ax1[1] = {1};
    vkt_tensor *mx, *zc, *ez, *se, *lse, *yl, *prob, *diff;
    (void)st;
    H_OK(vkt_reduce_max(in[0], ax1, 1, true, &mx));
    H_OK(vkt_subtract(in[0], mx, &zc));
    H_OK(vkt_exp(zc, &ez));
    H_OK(vkt_sum(ez, ax1, 1, true, &se));
    H_OK(vkt_log(se, &lse));
    H_OK(vkt_subtract(zc, lse, &out[0]));
    H_OK(vkt_multiply(in[1], out[0], &yl));
    H_OK(vkt_sum(yl, NULL, 0, false, &out[1]));
    H_OK(vkt_exp(out[0], &prob));
    H_OK(vkt_subtract(prob, in[1], &diff));
    H_OK(vkt_multiply(diff, in[2], &out[2]));
    vkt_tensor *t[] = {mx, zc, ez, se, lse, yl, prob, diff};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        vkt_tensor_free(t[i]);
}

/* Reductions take the elementwise ops around them: the row maximum with the
 * subtraction that reads it broadcast over its rows, the row sum of exp with
 * the subtraction of its log, the total of a product; rows of one element,
 * of LeNet's ten, and longer; the same bits as the ops one by one. */
Test(graph, fuses_reductions_with_the_ops_around_them, .timeout = 200)
{
    static const int64_t shapes[][2] = {{64, 10}, {256, 10}, {5, 1}, {3, 37}, {1, 300}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        h_shape sx = {2, {shapes[i][0], shapes[i][1]}};
        vkt_tensor *x = h_rand(VKT_F32, &sx, -4, 4, 990 + i),
                   *y = h_rand(VKT_F32, &sx, 0, 1, 995 + i),
                   *inv = h_scalar(VKT_F32, 1.0 / (double)shapes[i][0]);
        char what[96];
        snprintf(what, sizeof what, "log-softmax and its gradient, %lld x %lld",
                 (long long)shapes[i][0], (long long)shapes[i][1]);
        /* the maximum and the shift, the sum of exp and the log-softmax, the
         * total with its product, the gradient: four */
        fused_check(what, log_softmax, (vkt_tensor *const[]){x, y, inv}, NULL, 3, 4, "reduce_f32",
                    "subtract");
        fused_check(what, log_softmax, (vkt_tensor *const[]){x, y, inv}, NULL, 3, 4, "reduce_f32",
                    "sum");
        vkt_tensor_free(x);
        vkt_tensor_free(y);
        vkt_tensor_free(inv);
    }
}

/* What must stay apart does, and still computes what the ops compute. */
Test(graph, keeps_apart_what_an_epilogue_cannot_take)
{
    h_shape sx = {2, {12, 12}}, sw = {2, {12, 12}};
    vkt_tensor *x = h_rand(VKT_F32, &sx, -1, 1, 901), *w = h_rand(VKT_F32, &sw, -1, 1, 902),
               *w2 = h_rand(VKT_F32, &sw, -1, 1, 903), *lr = h_scalar(VKT_F32, 0.05);
    vkt_tensor *out[2] = {0}, *eout[2] = {0}, *we = copy_of(w);
    H_OK(vkt_graph_begin(h_ctx));
    unfusable((vkt_tensor *const[]){x, lr, w2}, w, out);
    vkt_graph *g;
    H_OK(vkt_graph_end(h_ctx, &g));
    /* dot, the update's chain; dot, tanh, exp */
    cr_expect_eq(vkt_graph_dispatches(g), 5, "%zu dispatches", vkt_graph_dispatches(g));
    H_OK(vkt_graph_launch(g));
    unfusable((vkt_tensor *const[]){x, lr, w2}, we, eout);
    h_compare(w, we, H_EXACT, "an update of a product's own operand");
    h_compare(out[0], eout[0], H_EXACT, "tanh of a product read twice");
    h_compare(out[1], eout[1], H_EXACT, "exp of a product read twice");
    vkt_graph_free(g);
    vkt_tensor *all[] = {x, w, w2, lr, out[0], out[1], eout[0], eout[1], we};
    for (size_t j = 0; j < sizeof all / sizeof all[0]; j++)
        vkt_tensor_free(all[j]);
}

Test(graph, tensor_write_and_assign_anywhere)
{
    h_shape s = {2, {3, 5}};
    vkt_tensor *a = h_rand(VKT_S32, &s, -9, 9, 11), *b = h_rand(VKT_S32, &s, -9, 9, 12);
    int32_t v[15];
    for (int i = 0; i < 15; i++)
        v[i] = i * 7 - 3;
    H_OK(vkt_tensor_write(a, v, sizeof v));
    int32_t *r = h_read(a);
    cr_assert(memcmp(r, v, sizeof v) == 0, "write then read");
    free(r);
    cr_assert_eq(vkt_tensor_write(a, v, sizeof v - 4), VKT_EINVAL);
    H_NATIVE(vkt_assign(b, a));
    h_compare(b, a, H_EXACT, "assign on the device");
    /* both on the host: a host-resident op, reported as such */
    H_OK(vkt_tensor_move(a, VKT_HOST));
    H_OK(vkt_tensor_move(b, VKT_HOST));
    H_OK(vkt_tensor_write(a, v, sizeof v));
    uint64_t host = stats_of("assign").host;
    H_OK(vkt_assign(b, a));
    cr_assert_eq(stats_of("assign").host, host + 1, "assign of host tensors runs on the host");
    cr_assert_eq(vkt_tensor_residency(b), VKT_HOST);
    h_compare(b, a, H_EXACT, "assign on the host");
    h_shape s2 = {1, {15}};
    vkt_tensor *f = h_rand(VKT_F32, &s, -1, 1, 13), *l = h_rand(VKT_S32, &s2, 0, 1, 14);
    cr_assert_eq(vkt_assign(b, f), VKT_EDTYPE, "dtypes differ");
    cr_assert_eq(vkt_assign(b, l), VKT_ESHAPE, "shapes differ");
    cr_assert(strstr(vkt_last_error(), "vkt_assign"), "%s", vkt_last_error());
    vkt_tensor_free(a);
    vkt_tensor_free(b);
    vkt_tensor_free(f);
    vkt_tensor_free(l);
}

Test(graph, profile_names_ops_and_kernels)
{
    h_shape s = {1, {5000}};
    vkt_tensor *x = h_rand(VKT_F32, &s, -1, 1, 15), *y, *z;
    H_OK(vkt_negate(x, &z));
    H_OK(vkt_sync(h_ctx));
    vkt_tensor_free(z);
    if (vkt_ctx_last_gpu_ns(h_ctx) < 0)
        cr_skip_test("the queue of %s has no timestamps", vkt_ctx_device_name(h_ctx));
    H_OK(vkt_ctx_set_profiling(h_ctx, true));
    cr_assert_eq(vkt_profile_read(h_ctx, NULL, 0), 0, "nothing timed yet");
    H_OK(vkt_exp(x, &y));
    H_OK(vkt_sync(h_ctx));
    vkt_profile_entry e[8];
    size_t n = vkt_profile_read(h_ctx, e, 8);
    cr_assert_eq(n, 1, "one dispatch, %zu entries", n);
    cr_assert_str_eq(e[0].op, "exp");
    cr_assert(strncmp(e[0].kernel, "unary", 5) == 0, "kernel %s", e[0].kernel);
    cr_assert(e[0].gpu_ns >= 0);
    H_OK(vkt_graph_begin(h_ctx));
    H_OK(vkt_sqrt(y, &z));
    vkt_graph *g;
    H_OK(vkt_graph_end(h_ctx, &g));
    H_OK(vkt_graph_launch(g));
    H_OK(vkt_graph_launch(g));
    n = vkt_profile_read(h_ctx, e, 1);
    cr_assert_eq(n, 2, "two launches of one dispatch, %zu entries", n);
    cr_assert_str_eq(e[0].op, "sqrt");
    cr_assert_eq(vkt_profile_read(h_ctx, e, 8), 1, "the second launch's entry is left");
    cr_assert_eq(vkt_profile_read(h_ctx, NULL, 0), 0);
    H_OK(vkt_ctx_set_profiling(h_ctx, false));
    vkt_graph_free(g);
    vkt_tensor_free(x);
    vkt_tensor_free(y);
    vkt_tensor_free(z);
}

/* vkt-lenet — trains LeNet-5 with libvkt on a synthetic digit set and prints
 * the loss and the step time. Run it under `fbcount run` to see which ops
 * leave the GPU: VKT_NATIVE_DISABLE=conv reproduces the slow backward pass of
 * the original story, VKT_NATIVE_DISABLE=dot VKT_FALLBACK_RESULT=host the dot
 * fallbacks that drag the gradient work after them onto the host. --graph
 * replays a recorded step instead of recording each one; --profile times
 * every dispatch of a few more steps and prints them by kernel. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "demo.h"
#include "digits.h"
#include "lenet.h"
#include "rng.h"

#define PROG "vkt-lenet"

static void usage(FILE *f)
{
    fprintf(f, "usage: vkt-lenet [--batch N] [--steps N] [--seed N] [--lr X] [--act tanh|relu]\n"
               "                 [--device SEL] [--print-every N] [--warmup N] [--warm-ms MS]\n"
               "                 [--stats] [--graph] [--fixed-batch] [--profile N]\n"
               "Trains LeNet-5 with libvkt on synthetic 28x28 digits and prints the loss.\n"
               "  --batch N        images per step (default 32)\n"
               "  --steps N        training steps (default 200)\n"
               "  --seed N         data and initialisation seed (default 1)\n"
               "  --lr X           SGD learning rate (default 0.05)\n"
               "  --act NAME       activation: tanh (default) or relu\n"
               "  --device SEL     Vulkan device index or name substring (as VKT_DEVICE)\n"
               "  --print-every N  read back and print the loss every N steps (default 20)\n"
               "  --warmup N       first steps left out of the mean step time (default 1; at\n"
               "                   most N-1 of --steps N, so that one is timed)\n"
               "  --warm-ms MS     before step 0, train untimed for MS milliseconds on the first\n"
               "                   batch, after a first step that builds the pipelines: an idle\n"
               "                   GPU runs at low clocks until it has had about a second of\n"
               "                   load (default 0; these steps are not in --steps)\n"
               "  --stats          print how each op ran (native, fallback, host) at the end\n"
               "  --graph          record the step once (vkt_graph) and replay it every step\n"
               "  --fixed-batch    with --graph: write the first batch once and replay on it\n"
               "                   every step, as a CUDA graph on static inputs (torch_lenet.py)\n"
               "  --profile N      after the timed steps, run N more with every dispatch timed\n"
               "                   (Vulkan timestamps, each dispatch alone) and print the GPU\n"
               "                   time per step by op and kernel, largest first\n"
               "Environment: VKT_NATIVE_DISABLE, VKT_FALLBACK_RESULT (see libvkt).\n"
               "Exit status: 0 when the loss fell (a single step: when its loss is a number),\n"
               "1 when it did not, 2 on errors.\n");
}

/* libvkt's own counters: what ran natively, through the fallback exit, or on
 * the host because its inputs were already there. */
static void print_stats(void)
{
    vkt_stats_entry e[128];
    size_t n = vkt_stats(e, 128);
    printf("%-22s %10s %10s %10s\n", "op", "native", "fallback", "host");
    for (size_t i = 0; i < n && i < 128; i++)
        printf("%-22s %10llu %10llu %10llu\n", e[i].op, (unsigned long long)e[i].native,
               (unsigned long long)e[i].fallback, (unsigned long long)e[i].host);
}

typedef struct prof_row {
    const char *op, *kernel;
    long calls;
    double ns;
} prof_row;

static int by_time(const void *a, const void *b)
{
    double x = ((const prof_row *)a)->ns, y = ((const prof_row *)b)->ns;
    return (x < y) - (x > y);
}

/* The dispatches of `steps` profiled steps, summed by (op, kernel). */
static void print_profile(vkt_ctx *ctx, long steps)
{
    size_t n = vkt_profile_read(ctx, NULL, 0);
    vkt_profile_entry *e = malloc((n ? n : 1) * sizeof *e);
    prof_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!e || !rows) {
        fprintf(stderr, "vkt-lenet: out of memory for the profile\n");
        free(e);
        free(rows);
        return;
    }
    n = vkt_profile_read(ctx, e, n);
    size_t nrows = 0;
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        const char *op = e[i].op ? e[i].op : "(libvkt)";
        size_t r = 0;
        while (r < nrows &&
               !(strcmp(rows[r].op, op) == 0 && strcmp(rows[r].kernel, e[i].kernel) == 0))
            r++;
        if (r == nrows)
            rows[nrows++] = (prof_row){op, e[i].kernel, 0, 0};
        rows[r].calls++;
        rows[r].ns += e[i].gpu_ns;
        total += e[i].gpu_ns;
    }
    qsort(rows, nrows, sizeof *rows, by_time);
    printf("profile: %ld steps, %zu dispatches, GPU time per step by op and kernel (each dispatch "
           "alone)\n",
           steps, n);
    printf("%-20s %-22s %9s %11s %10s %7s\n", "op", "kernel", "calls", "us/step", "us/call",
           "share");
    for (size_t r = 0; r < nrows; r++)
        printf("%-20s %-22s %9.1f %11.2f %10.2f %6.1f%%\n", rows[r].op, rows[r].kernel,
               (double)rows[r].calls / (double)steps, rows[r].ns / 1e3 / (double)steps,
               rows[r].ns / 1e3 / (double)rows[r].calls,
               total > 0 ? 100.0 * rows[r].ns / total : 0.0);
    printf("%-20s %-22s %9.1f %11.2f\n", "total", "", (double)n / (double)steps,
           total / 1e3 / (double)steps);
    free(e);
    free(rows);
}

/* With fixed (--fixed-batch), a recorded step after the first replays on the
 * batch it holds. */
static int run_step(lenet *m, bool graph, bool fixed, const float *images, const float *onehot,
                    int batch, float *loss)
{
    if (graph && fixed) {
        size_t nd, nl;
        lenet_graph_size(m, &nd, &nl);
        if (nd > 0)
            return lenet_step_graph_again(m, loss);
    }
    return graph ? lenet_step_graph(m, images, onehot, batch, loss)
                 : lenet_step(m, images, onehot, batch, loss);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct options {
    long batch, steps, seed, every, warmup, warm_ms, profile;
    double lr;
    lenet_act act;
    const char *device;
    bool stats, graph, fixed;
} options;

/* The options into *o: -1 to go on, else the exit status (--help, or a bad argument). */
static int parse_options(int argc, char **argv, options *o)
{
    static const struct option opts[] = {{"batch", required_argument, 0, 'b'},
                                         {"steps", required_argument, 0, 's'},
                                         {"seed", required_argument, 0, 'r'},
                                         {"lr", required_argument, 0, 'l'},
                                         {"act", required_argument, 0, 'a'},
                                         {"device", required_argument, 0, 'd'},
                                         {"print-every", required_argument, 0, 'e'},
                                         {"warmup", required_argument, 0, 'w'},
                                         {"warm-ms", required_argument, 0, 'W'},
                                         {"stats", no_argument, 0, 'S'},
                                         {"graph", no_argument, 0, 'G'},
                                         {"profile", required_argument, 0, 'P'},
                                         {"fixed-batch", no_argument, 0, 'F'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int c;
    opterr = 0; /* getopt's own messages lack the program's prefix */
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'b': bad = demo_long(PROG, "--batch", optarg, 1, 1 << 16, &o->batch); break;
        case 's': bad = demo_long(PROG, "--steps", optarg, 0, 1 << 30, &o->steps); break;
        case 'r': bad = demo_long(PROG, "--seed", optarg, 0, 1L << 40, &o->seed); break;
        case 'e': bad = demo_long(PROG, "--print-every", optarg, 1, 1 << 30, &o->every); break;
        case 'w': bad = demo_long(PROG, "--warmup", optarg, 0, 1 << 30, &o->warmup); break;
        case 'W': bad = demo_long(PROG, "--warm-ms", optarg, 0, 600000, &o->warm_ms); break;
        case 'l':
            bad = demo_number(PROG, "--lr", optarg, 0, 100, "a number in (0, 100)", &o->lr);
            break;
        case 'a':
            if (strcmp(optarg, "tanh") == 0)
                o->act = LENET_TANH;
            else if (strcmp(optarg, "relu") == 0)
                o->act = LENET_RELU;
            else {
                fprintf(stderr, "vkt-lenet: --act expects tanh or relu, got '%s'\n", optarg);
                bad = 1;
            }
            break;
        case 'd': o->device = optarg; break;
        case 'S': o->stats = true; break;
        case 'G': o->graph = true; break;
        case 'F': o->fixed = true; break;
        case 'P': bad = demo_long(PROG, "--profile", optarg, 1, 1 << 20, &o->profile); break;
        case 'h': usage(stdout); return 0;
        case ':':
            fprintf(stderr, "vkt-lenet: %s needs a value (see --help)\n", argv[optind - 1]);
            return 2;
        default:
            if (strncmp(argv[optind - 1], "--", 2) == 0 || !optopt)
                fprintf(stderr, "vkt-lenet: unknown or malformed option '%s' (see --help)\n",
                        argv[optind - 1]);
            else
                fprintf(stderr, "vkt-lenet: unknown option '-%c' (see --help)\n", optopt);
            return 2;
        }
        if (bad)
            return 2;
    }
    if (optind < argc) {
        fprintf(stderr, "vkt-lenet: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    return -1;
}

/* One batch and the model that trains on it. */
typedef struct run {
    const options *o;
    vkt_ctx *ctx;
    lenet *m;
    float *images, *onehot;
} run;

static int step(run *r, float *loss)
{
    return run_step(r->m, r->o->graph, r->o->fixed, r->images, r->onehot, (int)r->o->batch, loss);
}

/* Untimed steps on the first batch for --warm-ms; rng is left as it was. */
static int warm_up(run *r, uint64_t rng)
{
    digits_batch(&rng, (int)r->o->batch, r->images, r->onehot, NULL);
    long n = 0;
    double t0 = now_ms(), start = t0;
    /* The clock starts after the first step, which builds the pipelines
     * (and records the graph): seconds in which the GPU idles. */
    while (n == 0 || now_ms() - t0 < (double)r->o->warm_ms) {
        if (step(r, NULL) != VKT_OK) {
            fprintf(stderr, "vkt-lenet: warm-up step %ld: %s\n", n, lenet_error());
            return -1;
        }
        if (n++ == 0)
            t0 = now_ms();
    }
    printf("warm-up: %ld untimed steps in %.0f ms\n", n, now_ms() - start);
    return 0;
}

/* The timed steps, printing the loss every --print-every; its first and last printed value. */
static int train(run *r, uint64_t *rng, double *first, double *last)
{
    const options *o = r->o;
    /* At least one step is timed: a run of one step is a valid run. */
    long warmup = o->warmup >= o->steps ? (o->steps > 0 ? o->steps - 1 : 0) : o->warmup;
    double timed_ms = 0, gpu_ms = 0;
    long timed = 0;
    for (long s = 0; s < o->steps; s++) {
        if (!o->fixed || s == 0)
            digits_batch(rng, (int)o->batch, r->images, r->onehot, NULL);
        /* The loss is read back only when printed: a read is a sync point. */
        bool show = s % o->every == 0 || s == o->steps - 1;
        float loss = NAN;
        double t0 = now_ms();
        if (step(r, show ? &loss : NULL) != VKT_OK) {
            fprintf(stderr, "vkt-lenet: step %ld: %s\n", s, lenet_error());
            return -1;
        }
        double ms = now_ms() - t0;
        if (s >= warmup) {
            timed_ms += ms;
            /* A step is one submission (eager) or one launch: its GPU time. */
            gpu_ms += vkt_ctx_last_gpu_ns(r->ctx) / 1e6;
            timed++;
        }
        if (show) {
            if (isnan(*first))
                *first = loss;
            *last = loss;
            printf("step %5ld  loss %.4f  %.2f ms/step\n", s, loss, ms);
            fflush(stdout);
        }
    }
    if (timed > 0) {
        printf("loss %.4f -> %.4f over %ld steps; mean %.3f ms/step over %ld steps after %ld "
               "warm-up\n",
               *first, *last, o->steps, timed_ms / (double)timed, timed, warmup);
        /* What the step costs besides the GPU's work: recording and submitting
         * it (eager), or writing the inputs and launching (--graph). */
        if (gpu_ms > 0)
            printf("GPU %.3f ms/step, the rest (host) %.3f ms/step\n", gpu_ms / (double)timed,
                   (timed_ms - gpu_ms) / (double)timed);
    }
    return 0;
}

/* --profile: the steps again with every dispatch timed, printed by kernel. */
static int profile_steps(run *r)
{
    /* A recorded step times its dispatches only if recorded so. */
    if (vkt_ctx_set_profiling(r->ctx, true) != VKT_OK) {
        fprintf(stderr, "vkt-lenet: %s\n", vkt_last_error());
        return -1;
    }
    lenet_forget_graph(r->m);
    if (step(r, NULL) != VKT_OK) {
        fprintf(stderr, "vkt-lenet: profiled step: %s\n", lenet_error());
        return -1;
    }
    /* The first profiled step records pipelines and the graph: its entries are dropped. */
    size_t stale = vkt_profile_read(r->ctx, NULL, 0);
    vkt_profile_entry *skip = malloc((stale ? stale : 1) * sizeof *skip);
    if (skip)
        vkt_profile_read(r->ctx, skip, stale);
    free(skip);
    for (long k = 0; k < r->o->profile; k++)
        if (step(r, NULL) != VKT_OK) {
            fprintf(stderr, "vkt-lenet: profiled step %ld: %s\n", k, lenet_error());
            return -1;
        }
    print_profile(r->ctx, r->o->profile);
    return 0;
}

/* Everything after the options: 0 when the loss fell, 1 when not, 2 on errors. */
static int train_and_report(run *r)
{
    const options *o = r->o;
    if (!(r->ctx = demo_ctx(PROG, o->device)))
        return 2;
    if (lenet_create(r->ctx, o->act, (uint64_t)o->seed, o->lr, &r->m) != VKT_OK) {
        fprintf(stderr, "vkt-lenet: %s\n", lenet_error());
        return 2;
    }
    printf("device: %s, batch %ld, %ld steps, %s, lr %g%s\n", vkt_ctx_device_name(r->ctx), o->batch,
           o->steps, o->act == LENET_TANH ? "tanh" : "relu", o->lr,
           o->graph ? ", recorded step (--graph)" : "");
    uint64_t rng = rng_seed((uint64_t)o->seed);
    /* The training batches that follow the warm-up stay the same. */
    if (o->warm_ms > 0 && warm_up(r, rng) != 0)
        return 2;
    double first = NAN, last = NAN;
    if (train(r, &rng, &first, &last) != 0)
        return 2;
    if (o->graph) {
        size_t nd, nl;
        lenet_graph_size(r->m, &nd, &nl);
        printf("recorded step: %zu dispatches in %zu dependency levels\n", nd, nl);
    }
    if (o->profile > 0 && profile_steps(r) != 0)
        return 2;
    if (o->stats)
        print_stats();
    /* One step has one loss: it passes when the loss is a number. */
    return o->steps == 0 || last < first || (o->steps == 1 && isfinite(last)) ? 0 : 1;
}

int main(int argc, char **argv)
{
    options o = {.batch = 32,
                 .steps = 200,
                 .seed = 1,
                 .every = 20,
                 .warmup = 1,
                 .lr = 0.05,
                 .act = LENET_TANH};
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    run r = {.o = &o};
    size_t npix = (size_t)o.batch * DIGITS_SIDE * DIGITS_SIDE;
    r.images = malloc(npix * sizeof *r.images);
    r.onehot = malloc((size_t)o.batch * DIGITS_CLASSES * sizeof *r.onehot);
    if (!r.images || !r.onehot) {
        fprintf(stderr, "vkt-lenet: out of memory for a batch of %ld\n", o.batch);
        status = 2;
    } else
        status = train_and_report(&r);
    lenet_free(r.m);
    vkt_ctx_destroy(r.ctx);
    free(r.images);
    free(r.onehot);
    return status;
}

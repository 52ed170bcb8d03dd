/* vkt-lenet-mpi - LeNet-5 trained data-parallel over MPI ranks with libvkt, the workload of
 * fbcount's MPI walk-through: `fbcount run -- mpirun -np 3 vkt-lenet-mpi` collects one
 * census per rank, and the ranks differ where their work differs.
 *
 * Each epoch deals the data set's batches to the ranks in turn; every round, each rank takes
 * one SGD step on its batch and the ranks average their parameters with one MPI_Allreduce,
 * weighted by batch size. All ranks start from the same parameters, so for plain SGD this is
 * the step on the averaged gradient: mean_r(p - lr g_r) = p - lr mean_r(g_r).
 *
 * The data set need not divide into batches: the last batch is short, and its rank takes
 * another path with it. A short batch's gradient is noisier, so its update is clipped to a
 * norm (--clip) computed on the GPU, sqrt(sum(pow(update, 2))): the pow exists on that rank
 * only, so a backend without a native pow (VKT_NATIVE_DISABLE=pow) falls back there and
 * nowhere else.
 */
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"
#include "digits.h"
#include "lenet.h"
#include "rng.h"

#define PROG "vkt-lenet-mpi"

static void usage(FILE *f)
{
    fprintf(f, "usage: vkt-lenet-mpi [--batch N] [--samples N] [--epochs N] [--seed N] [--lr X]\n"
               "                     [--clip X]\n"
               "Trains LeNet-5 data-parallel over the MPI ranks (run it under mpirun).\n"
               "  --batch N     images per batch (default 16)\n"
               "  --samples N   images per epoch, dealt to the ranks in batches (default 183:\n"
               "                with 3 ranks, 11 full batches and one of 7, on rank 2)\n"
               "  --epochs N    passes over the data set (default 1)\n"
               "  --seed N      data and initialisation seed (default 1)\n"
               "  --lr X        SGD learning rate (default 0.05)\n"
               "  --clip X      largest update norm of a short batch (default 0.5)\n"
               "Exit status: 0, 2 on errors.\n");
}

/* All parameters in one host buffer, in lenet's order. */
static size_t total_numel(void)
{
    size_t n = 0;
    for (int i = 0; i < LENET_PARAMS; i++)
        n += lenet_param_numel(i);
    return n;
}

static int read_params(lenet *m, float *buf)
{
    for (int i = 0; i < LENET_PARAMS; i++) {
        if (lenet_param_read(m, i, buf, lenet_param_numel(i)) != VKT_OK)
            return -1;
        buf += lenet_param_numel(i);
    }
    return 0;
}

static int write_params(lenet *m, const float *buf)
{
    for (int i = 0; i < LENET_PARAMS; i++) {
        if (lenet_param_write(m, i, buf, lenet_param_numel(i)) != VKT_OK)
            return -1;
        buf += lenet_param_numel(i);
    }
    return 0;
}

/* A site keeps its name in the census: no inlining, and no specialised clone of gcc's
 * (clip_update.constprop.0). */
#if defined(__GNUC__) && !defined(__clang__)
#define SITE __attribute__((noinline, noclone))
#else
#define SITE __attribute__((noinline))
#endif

/* The short batch's path: the update's L2 norm on the GPU, as a framework computes it
 * (update.pow(2).sum().sqrt()), and the update scaled down to clip when longer. */
SITE static int clip_update(vkt_ctx *ctx, const float *before, float *after, size_t n, double clip,
                            double *norm)
{
    float *delta = malloc(n * sizeof *delta);
    vkt_tensor *d = NULL, *two = NULL, *sq = NULL, *sum = NULL;
    int rc = -1;
    if (!delta)
        return -1;
    for (size_t i = 0; i < n; i++)
        delta[i] = after[i] - before[i];
    int64_t shape[1] = {(int64_t)n};
    float total = 0;
    if (vkt_tensor_from_host(ctx, VKT_F32, shape, 1, delta, &d) == VKT_OK &&
        vkt_full(ctx, VKT_F32, NULL, 0, 2.0, &two) == VKT_OK && vkt_pow(d, two, &sq) == VKT_OK &&
        vkt_sum(sq, NULL, 0, false, &sum) == VKT_OK &&
        vkt_tensor_read(sum, &total, sizeof total) == VKT_OK) {
        *norm = sqrt((double)total);
        if (*norm > clip)
            for (size_t i = 0; i < n; i++)
                after[i] = before[i] + (float)(delta[i] * (clip / *norm));
        rc = 0;
    }
    vkt_tensor_free(d);
    vkt_tensor_free(two);
    vkt_tensor_free(sq);
    vkt_tensor_free(sum);
    free(delta);
    return rc;
}

typedef struct options {
    long batch, samples, epochs, seed;
    double lr, clip;
} options;

/* The options into *o: -1 to go on, else the exit status (--help, or a bad argument). */
static int parse_options(int argc, char **argv, options *o)
{
    static const struct option opts[] = {
        {"batch", required_argument, 0, 'b'},  {"samples", required_argument, 0, 'n'},
        {"epochs", required_argument, 0, 'e'}, {"seed", required_argument, 0, 's'},
        {"lr", required_argument, 0, 'l'},     {"clip", required_argument, 0, 'c'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'b': bad = demo_long(PROG, "--batch", optarg, 1, 4096, &o->batch); break;
        case 'n': bad = demo_long(PROG, "--samples", optarg, 1, 1 << 24, &o->samples); break;
        case 'e': bad = demo_long(PROG, "--epochs", optarg, 1, 1 << 20, &o->epochs); break;
        case 's': bad = demo_long(PROG, "--seed", optarg, 0, 1L << 40, &o->seed); break;
        case 'l':
            bad = demo_number(PROG, "--lr", optarg, 0, 1e6, "a positive number", &o->lr);
            break;
        case 'c':
            bad = demo_number(PROG, "--clip", optarg, 0, 1e6, "a positive number", &o->clip);
            break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "vkt-lenet-mpi: unknown or incomplete option '%s' (see --help)\n",
                    argv[optind - 1]);
            return 2;
        }
        if (bad)
            return 2;
    }
    return -1;
}

/* One rank's model, its batch and the parameters before and after a step, and the average. */
typedef struct rank_run {
    const options *o;
    int rank, size;
    vkt_ctx *ctx;
    lenet *m;
    size_t np;
    float *images, *onehot, *before, *after, *sum;
    uint64_t rng;
    long steps, last_n, clipped;
} rank_run;

/* This rank's step on n images (none when n is 0): its parameters after it in r->after, and
 * the loss in *loss. */
static int local_step(rank_run *r, long n, float *loss)
{
    if (n == 0)
        return read_params(r->m, r->after);
    digits_batch(&r->rng, (int)n, r->images, r->onehot, NULL);
    if (read_params(r->m, r->before) != 0 ||
        lenet_step(r->m, r->images, r->onehot, (int)n, loss) != VKT_OK ||
        read_params(r->m, r->after) != 0) {
        fprintf(stderr, "vkt-lenet-mpi: rank %d: %s\n", r->rank, lenet_error());
        return -1;
    }
    if (n != r->o->batch) {
        double norm = 0;
        if (clip_update(r->ctx, r->before, r->after, r->np, r->o->clip, &norm) != 0) {
            fprintf(stderr, "vkt-lenet-mpi: rank %d: %s\n", r->rank, vkt_last_error());
            return -1;
        }
        r->clipped += norm > r->o->clip;
    }
    r->steps++;
    r->last_n = n;
    return 0;
}

/* The ranks' parameters averaged, weighted by their batches' sizes, into every rank's model. */
static int average(rank_run *r, long e, long round, long n, float loss)
{
    for (size_t i = 0; i < r->np; i++)
        r->after[i] *= (float)n;
    long total_n = 0;
    float loss_sum = n > 0 ? loss * (float)n : 0, global_loss = 0;
    MPI_Allreduce(r->after, r->sum, (int)r->np, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&n, &total_n, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&loss_sum, &global_loss, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < r->np; i++)
        r->sum[i] /= (float)total_n;
    if (write_params(r->m, r->sum) != 0)
        return -1;
    if (r->rank == 0)
        printf("epoch %ld round %ld: %ld images, loss %.4f\n", e, round, total_n,
               global_loss / (float)total_n);
    return 0;
}

/* The epochs: in each round every rank takes the next batch, if any is left, then all average. */
static int train(rank_run *r)
{
    const options *o = r->o;
    long full = o->samples / o->batch, rest = o->samples % o->batch;
    long nbatches = full + (rest > 0), rounds = (nbatches + r->size - 1) / r->size;
    for (long e = 0; e < o->epochs; e++)
        for (long round = 0; round < rounds; round++) {
            long b = round * r->size + r->rank; /* this rank's batch of the round, if any */
            long n = b < full ? o->batch : b == full && rest ? rest : 0;
            float loss = NAN;
            if (local_step(r, n, &loss) != 0 || average(r, e, round, n, loss) != 0)
                return -1;
        }
    return 0;
}

/* The model on every rank from rank 0's parameters, then the training and each rank's line. */
static int run(rank_run *r)
{
    const options *o = r->o;
    if (vkt_ctx_create(NULL, &r->ctx) != VKT_OK ||
        lenet_create(r->ctx, LENET_TANH, (uint64_t)o->seed, o->lr, &r->m) != VKT_OK) {
        fprintf(stderr, "vkt-lenet-mpi: rank %d: %s\n", r->rank,
                r->ctx ? lenet_error() : vkt_last_error());
        return 2;
    }
    /* One starting point for every rank: rank 0's parameters. */
    if (read_params(r->m, r->before) != 0)
        return 2;
    MPI_Bcast(r->before, (int)r->np, MPI_FLOAT, 0, MPI_COMM_WORLD);
    if (write_params(r->m, r->before) != 0)
        return 2;
    if (r->rank == 0)
        printf("device: %s, %d ranks, batch %ld, %ld samples an epoch, %ld epoch%s\n",
               vkt_ctx_device_name(r->ctx), r->size, o->batch, o->samples, o->epochs,
               o->epochs == 1 ? "" : "s");
    r->rng = rng_seed((uint64_t)o->seed * 1000003u + (uint64_t)r->rank);
    if (train(r) != 0)
        return 2;
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    const char *how = "";
    if (r->last_n && r->last_n != o->batch)
        how = r->clipped ? " (short: its update's norm taken on the GPU, and clipped)"
                         : " (short: its update's norm taken on the GPU, under the clip)";
    printf("rank %d: %ld steps, last batch %ld images%s\n", r->rank, r->steps, r->last_n, how);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    options o = {.batch = 16, .samples = 183, .epochs = 1, .seed = 1, .lr = 0.05, .clip = 0.5};
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "vkt-lenet-mpi: MPI_Init failed\n");
        return 2;
    }
    rank_run r = {.o = &o, .np = total_numel()};
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.size);
    r.images = malloc((size_t)o.batch * DIGITS_SIDE * DIGITS_SIDE * sizeof *r.images);
    r.onehot = malloc((size_t)o.batch * DIGITS_CLASSES * sizeof *r.onehot);
    r.before = malloc(r.np * sizeof *r.before);
    r.after = malloc(r.np * sizeof *r.after);
    r.sum = malloc(r.np * sizeof *r.sum);
    if (!r.images || !r.onehot || !r.before || !r.after || !r.sum) {
        fprintf(stderr, "vkt-lenet-mpi: rank %d: out of memory\n", r.rank);
        status = 2;
    } else
        status = run(&r);
    lenet_free(r.m);
    vkt_ctx_destroy(r.ctx);
    free(r.images);
    free(r.onehot);
    free(r.before);
    free(r.after);
    free(r.sum);
    if (status != 0)
        MPI_Abort(MPI_COMM_WORLD, status);
    MPI_Finalize();
    return status;
}

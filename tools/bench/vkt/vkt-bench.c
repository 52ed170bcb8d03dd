/* vkt-bench — throughput of libvkt's ops on the selected device: GB/s for
 * streaming ops, GFLOP/s for matmul, each the median over --reps runs of the
 * GPU time of one op's submission (Vulkan timestamps, vkt_ctx_last_gpu_ns),
 * after warm-up, on random data. Public API only, so it measures what an
 * application gets.
 *
 * A row is only called native when libvkt's own counters (vkt_stats) say the
 * op ran natively: a size past the device's limits goes through the fallback,
 * and timing that as if it were GPU work would flatter the library. Such rows
 * are marked, not measured; one row forces the fallback on purpose and times
 * it in wall-clock, to show the cliff. Ops that fail are reported in their
 * row. Every measured result is spot-checked against the host. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vkt.h"

typedef enum bench_kind {
    K_ADD,
    K_EXP,
    K_SUM,
    K_SUM_LAST,
    K_TRANSPOSE,
    K_DOT,
    K_ADD_FALLBACK
} bench_kind;

/* One row of the sweep. n is the element count, or the matrix side for the
 * 2-d cases; target is the spec's floor for the H200 (0: none). */
typedef struct bench_case {
    const char *op;
    const char *stat; /* op name in vkt_stats */
    const char *size;
    bench_kind kind;
    int64_t n;
    double target;
    bool quick; /* part of --quick */
    bool full;  /* part of the default sweep */
} bench_case;

#define M (1LL << 20)
static const bench_case cases[] = {
    {"add", "add", "1M", K_ADD, M, 0, true, true},
    {"add", "add", "16M", K_ADD, 16 * M, 0, false, true},
    {"add", "add", "256M", K_ADD, 256 * M, 3900, false, true},
    {"exp", "exp", "1M", K_EXP, M, 0, true, true},
    {"exp", "exp", "16M", K_EXP, 16 * M, 0, false, true},
    {"exp", "exp", "256M", K_EXP, 256 * M, 0, false, true},
    {"sum", "sum", "1M", K_SUM, M, 0, true, false},
    {"sum", "sum", "16M", K_SUM, 16 * M, 0, false, true},
    {"sum", "sum", "256M", K_SUM, 256 * M, 3500, false, true},
    {"sum_last_axis", "sum", "1024x1024", K_SUM_LAST, 1024, 0, true, false},
    {"sum_last_axis", "sum", "4096x4096", K_SUM_LAST, 4096, 0, false, true},
    {"transpose", "transpose", "1024x1024", K_TRANSPOSE, 1024, 0, true, false},
    {"transpose", "transpose", "4096x4096", K_TRANSPOSE, 4096, 0, false, true},
    {"dot", "dot", "256^3", K_DOT, 256, 0, true, false},
    {"dot", "dot", "512^3", K_DOT, 512, 0, false, true},
    {"dot", "dot", "1024^3", K_DOT, 1024, 0, false, true},
    {"dot", "dot", "2048^3", K_DOT, 2048, 0, false, true},
    {"dot", "dot", "4096^3", K_DOT, 4096, 25000, false, true},
    {"add (fallback)", "add", "1M", K_ADD_FALLBACK, M, 0, true, false},
    {"add (fallback)", "add", "16M", K_ADD_FALLBACK, 16 * M, 0, false, true},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* The smallest maxStorageBufferRange among the devices we run on (lavapipe);
 * only used to word the reason of a gate the bench cannot read directly. */
#define SMALL_RANGE (128.0 * 1024 * 1024)

typedef struct row {
    const bench_case *bc;
    char path[64];   /* native, fallback, host, or what kept it from running */
    char error[512]; /* empty when the row measured cleanly */
    double time_ns;  /* median; GPU time for native rows, wall-clock otherwise */
    double wall_ns;  /* median wall-clock of call + sync */
    double figure;   /* GB/s or GFLOP/s; NAN when not measured */
    bool timed_gpu;
    bool failed; /* counts toward the exit status */
    int reps;
} row;

static struct {
    vkt_ctx *ctx;
    const char *device_name;
    int reps, warmup;
    double warm_ns; /* warm-up lasts at least this long on GPU-timed rows */
    float *rnd;     /* random inputs, shared by every case: a = rnd, b = rnd + 1 */
    size_t rnd_n;
} B;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* splitmix64: fast, and the same data on every machine for a given size. */
static int fill_random(size_t n)
{
    if (n <= B.rnd_n)
        return 0;
    float *p = realloc(B.rnd, n * sizeof *p);
    if (!p)
        return -1;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        p[i] = (float)((double)(z >> 40) / (double)(1 << 24) * 2.0 - 1.0);
    }
    B.rnd = p;
    B.rnd_n = n;
    return 0;
}

static int64_t numel_in(const bench_case *bc)
{
    bool square = bc->kind == K_SUM_LAST || bc->kind == K_TRANSPOSE || bc->kind == K_DOT;
    return square ? bc->n * bc->n : bc->n;
}

/* Bytes moved (streams × 4 bytes × n) or flops, the numerator of the figure. */
static double work(const bench_case *bc)
{
    double n = (double)numel_in(bc);
    switch (bc->kind) {
    case K_ADD:
    case K_ADD_FALLBACK: return 3 * 4 * n;
    case K_EXP: return 2 * 4 * n;
    case K_SUM: return 4 * n;
    case K_SUM_LAST: return 4 * n + 4.0 * (double)bc->n;
    case K_TRANSPOSE: return 2 * 4 * n;
    case K_DOT: return 2 * n * (double)bc->n;
    }
    return 0;
}

static const char *unit(const bench_case *bc)
{
    return bc->kind == K_DOT ? "GFLOP/s" : "GB/s";
}

static int run_op(const bench_case *bc, const vkt_tensor *a, const vkt_tensor *b, vkt_tensor **out)
{
    static const int last[1] = {1}, perm[2] = {1, 0}, ca[1] = {1}, cb[1] = {0};
    switch (bc->kind) {
    case K_ADD:
    case K_ADD_FALLBACK: return vkt_add(a, b, out);
    case K_EXP: return vkt_exp(a, out);
    case K_SUM: return vkt_sum(a, NULL, 0, false, out);
    case K_SUM_LAST: return vkt_sum(a, last, 1, false, out);
    case K_TRANSPOSE: return vkt_transpose(a, perm, out);
    case K_DOT: return vkt_dot(a, ca, NULL, b, cb, NULL, 1, 0, out);
    }
    return VKT_EINVAL;
}

static void counters(const char *op, uint64_t c[3])
{
    vkt_stats_entry e[256];
    size_t n = vkt_stats(e, 256);
    c[0] = c[1] = c[2] = 0;
    for (size_t i = 0; i < n && i < 256; i++)
        if (strcmp(e[i].op, op) == 0) {
            c[0] = e[i].native;
            c[1] = e[i].fallback;
            c[2] = e[i].host;
        }
}

static bool close_to(double got, double want, double tol)
{
    return fabs(got - want) <= tol; /* false for NaN */
}

/* Spot-checks a result against double-precision host sums: a benchmark of a
 * wrong kernel is worse than none. Tolerances are loose (f32 accumulation
 * order differs); this is a sanity check, the test suites check precisely. */
static int check(const bench_case *bc, const float *o, char *msg, size_t cap)
{
    const float *a = B.rnd, *b = B.rnd + 1;
    int64_t n = bc->n;
    uint64_t s = 12345;
#define PICK(mod)                                                                                  \
    ((s = s * 6364136223846793005ull + 1442695040888963407ull),                                    \
     (int64_t)((s >> 33) % (uint64_t)(mod)))
    switch (bc->kind) {
    case K_ADD:
    case K_ADD_FALLBACK:
    case K_EXP:
        for (int t = 0; t < 4096; t++) {
            int64_t i = PICK(n);
            double want = bc->kind == K_EXP ? exp((double)a[i]) : (double)a[i] + (double)b[i];
            if (!close_to(o[i], want, 1e-5 * fabs(want) + 1e-6)) {
                snprintf(msg, cap, "wrong result at [%lld]: %.9g, expected %.9g", (long long)i,
                         o[i], want);
                return -1;
            }
        }
        return 0;
    case K_SUM: {
        double want = 0, mag = 0;
        for (int64_t i = 0; i < n; i++) {
            want += a[i];
            mag += fabs(a[i]);
        }
        if (!close_to(o[0], want, 1e-5 * mag + 1e-3)) {
            snprintf(msg, cap, "wrong sum: %.9g, expected %.9g", o[0], want);
            return -1;
        }
        return 0;
    }
    case K_SUM_LAST:
        for (int t = 0; t < 16; t++) {
            int64_t r = PICK(n);
            double want = 0, mag = 0;
            for (int64_t j = 0; j < n; j++) {
                want += a[r * n + j];
                mag += fabs(a[r * n + j]);
            }
            if (!close_to(o[r], want, 1e-5 * mag + 1e-4)) {
                snprintf(msg, cap, "wrong row sum [%lld]: %.9g, expected %.9g", (long long)r, o[r],
                         want);
                return -1;
            }
        }
        return 0;
    case K_TRANSPOSE:
        for (int t = 0; t < 4096; t++) {
            int64_t i = PICK(n), j = PICK(n);
            if (o[j * n + i] != a[i * n + j]) {
                snprintf(msg, cap, "wrong element [%lld,%lld]", (long long)j, (long long)i);
                return -1;
            }
        }
        return 0;
    case K_DOT:
        for (int t = 0; t < 32; t++) {
            int64_t i = PICK(n), j = PICK(n);
            double want = 0, mag = 0;
            for (int64_t k = 0; k < n; k++) {
                double p = (double)a[i * n + k] * (double)b[k * n + j];
                want += p;
                mag += fabs(p);
            }
            if (!close_to(o[i * n + j], want, 1e-5 * mag + 1e-5)) {
                snprintf(msg, cap, "wrong element [%lld,%lld]: %.9g, expected %.9g", (long long)i,
                         (long long)j, o[i * n + j], want);
                return -1;
            }
        }
        return 0;
    }
#undef PICK
    return 0;
}

static void fail_row(row *r, const char *path, const char *what)
{
    snprintf(r->path, sizeof r->path, "%s", path);
    snprintf(r->error, sizeof r->error, "%s", what);
    r->failed = true;
}

static void vkt_fail(row *r, const char *what)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s: %s", what, vkt_last_error());
    fail_row(r, "error", buf);
}

/* The first call, checked against the host: which path the op took (r->path, *native,
 * *fallback); -1 with the row failed when the call or its result is wrong. */
static int first_call(const bench_case *bc, row *r, const vkt_tensor *a, const vkt_tensor *b,
                      bool *native, bool *fallback)
{
    vkt_tensor *out = NULL;
    float *host = NULL;
    int rc = -1;
    uint64_t c0[3], c1[3];
    counters(bc->stat, c0);
    if (run_op(bc, a, b, &out) != VKT_OK || vkt_sync(B.ctx) != VKT_OK) {
        vkt_fail(r, bc->op);
        goto done;
    }
    counters(bc->stat, c1);
    *native = c1[0] > c0[0], *fallback = c1[1] > c0[1];
    snprintf(r->path, sizeof r->path, "%s",
             *native         ? "native"
             : *fallback     ? "fallback"
             : c1[2] > c0[2] ? "host"
                             : "?");

    size_t onb = vkt_tensor_nbytes(out);
    host = malloc(onb ? onb : 1);
    if (!host || vkt_tensor_read(out, host, onb) != VKT_OK) {
        if (!host)
            fail_row(r, "error", "out of host memory for the result");
        else
            vkt_fail(r, "reading the result");
        goto done;
    }
    char msg[256];
    if (check(bc, host, msg, sizeof msg) != 0) {
        char path[sizeof r->path];
        memcpy(path, r->path, sizeof path);
        fail_row(r, path, msg);
        goto done;
    }
    rc = 0;
done:
    free(host);
    vkt_tensor_free(out);
    return rc;
}

/* The warm-up, then the timed repetitions: their medians and the figure into r. */
static void timed_runs(const bench_case *bc, row *r, const vkt_tensor *a, const vkt_tensor *b)
{
    vkt_tensor *out = NULL;
    double *times = malloc((size_t)B.reps * sizeof *times);
    double *walls = malloc((size_t)B.reps * sizeof *walls);
    if (!times || !walls) {
        fail_row(r, "error", "out of host memory");
        goto done;
    }
    bool gpu = bc->kind != K_ADD_FALLBACK;
    /* A GPU left idle (while the host made and checked this row's data) drops its clocks
     * within a fraction of a second and needs about a second of load to raise them again:
     * measured on an H200, 345 MHz idle against 1980 MHz under load, and an unwarmed row
     * read at half speed or less. So the warm-up runs for a time, not only a count. */
    double warm_until = now_ns() + (gpu ? B.warm_ns : 0);
    int warm = B.warmup;
    while (warm < 1 << 20 && now_ns() < warm_until) {
        if (run_op(bc, a, b, &out) != VKT_OK || vkt_sync(B.ctx) != VKT_OK) {
            vkt_fail(r, bc->op);
            goto done;
        }
        vkt_tensor_free(out);
        out = NULL;
        warm++;
    }
    for (int i = 0; i < B.warmup + B.reps; i++) {
        double t0 = now_ns();
        if (run_op(bc, a, b, &out) != VKT_OK || vkt_sync(B.ctx) != VKT_OK) {
            vkt_fail(r, bc->op);
            goto done;
        }
        double wall = now_ns() - t0, g = vkt_ctx_last_gpu_ns(B.ctx);
        vkt_tensor_free(out);
        out = NULL;
        if (i < B.warmup)
            continue;
        /* GPU time longer than the wall-clock means this call submitted
         * nothing and the timestamps are an earlier submission's. */
        if (gpu && (g < 0 || g > wall * 1.05))
            gpu = false;
        times[i - B.warmup] = g;
        walls[i - B.warmup] = wall;
    }
    r->reps = B.reps;
    r->wall_ns = median(walls, B.reps);
    r->timed_gpu = gpu;
    r->time_ns = gpu ? median(times, B.reps) : r->wall_ns;
    /* bytes/ns = GB/s, flops/ns = GFLOP/s */
    r->figure = r->time_ns > 0 ? work(bc) / r->time_ns : NAN;
    if (bc->kind == K_ADD_FALLBACK)
        snprintf(r->path, sizeof r->path, "fallback (forced, wall-clock)");
    else if (!gpu)
        snprintf(r->path, sizeof r->path, "native (wall-clock: no GPU timestamps)");
done:
    free(times);
    free(walls);
    vkt_tensor_free(out);
}

/* Runs one case: inputs, one checked warm-up call that also tells which path
 * the op takes, more warm-up, then the timed repetitions. */
static void bench(const bench_case *bc, row *r)
{
    memset(r, 0, sizeof *r);
    r->bc = bc;
    r->figure = r->time_ns = r->wall_ns = NAN;
    int64_t elems = numel_in(bc);
    if (fill_random((size_t)elems + 1) != 0) {
        fail_row(r, "error", "out of host memory for the random inputs");
        return;
    }
    bool square = bc->kind == K_SUM_LAST || bc->kind == K_TRANSPOSE || bc->kind == K_DOT;
    int64_t shape[2] = {square ? bc->n : elems, bc->n};
    int rank = square ? 2 : 1;
    bool two = bc->kind == K_ADD || bc->kind == K_ADD_FALLBACK || bc->kind == K_DOT;
    const char *env = getenv("VKT_NATIVE_DISABLE");
    vkt_tensor *a = NULL, *b = NULL;
    bool native = false, fallback = false;
    if (vkt_tensor_from_host(B.ctx, VKT_F32, shape, rank, B.rnd, &a) != VKT_OK ||
        (two && vkt_tensor_from_host(B.ctx, VKT_F32, shape, rank, B.rnd + 1, &b) != VKT_OK) ||
        vkt_sync(B.ctx) != VKT_OK) {
        vkt_fail(r, "creating the inputs");
        goto done;
    }
    if (bc->kind == K_ADD_FALLBACK && vkt_ctx_set_native_disable(B.ctx, "add") != VKT_OK) {
        vkt_fail(r, "vkt_ctx_set_native_disable");
        goto done;
    }
    if (first_call(bc, r, a, b, &native, &fallback) != 0)
        goto done;
    if (bc->kind != K_ADD_FALLBACK && !native) {
        /* Timing this would pass a host computation off as GPU throughput. */
        double big = (double)elems * 4;
        snprintf(r->path, sizeof r->path, "%s",
                 big > SMALL_RANGE ? "fallback (past maxStorageBufferRange)"
                 : fallback        ? "fallback (gate)"
                                   : "host");
        goto done;
    }
    timed_runs(bc, r, a, b);
done:
    if (bc->kind == K_ADD_FALLBACK)
        vkt_ctx_set_native_disable(B.ctx, env ? env : "");
    vkt_tensor_free(a);
    vkt_tensor_free(b);
    vkt_sync(B.ctx);
}

static void fmt_time(double ns, char *buf, size_t cap)
{
    if (isnan(ns))
        snprintf(buf, cap, "-");
    else if (ns < 1e6)
        snprintf(buf, cap, "%.1f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, cap, "%.3f ms", ns / 1e6);
    else
        snprintf(buf, cap, "%.3f s", ns / 1e9);
}

static void print_table(const row *rows, int n)
{
    printf("| op | size | device | path | time | figure | target | ratio-to-target |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        const bench_case *bc = r->bc;
        char t[32], fig[600], tgt[32], ratio[32];
        fmt_time(r->time_ns, t, sizeof t);
        if (r->error[0])
            snprintf(fig, sizeof fig, "%s", r->error);
        else if (isnan(r->figure))
            snprintf(fig, sizeof fig, "-");
        else
            snprintf(fig, sizeof fig, "%.1f %s", r->figure, unit(bc));
        if (bc->target > 0)
            snprintf(tgt, sizeof tgt, ">= %.0f %s", bc->target, unit(bc));
        else
            snprintf(tgt, sizeof tgt, "-");
        if (bc->target > 0 && !isnan(r->figure) && !r->error[0])
            snprintf(ratio, sizeof ratio, "%.2f", r->figure / bc->target);
        else
            snprintf(ratio, sizeof ratio, "-");
        printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", bc->op, bc->size, B.device_name,
               r->path, t, fig, tgt, ratio);
    }
}

static json_t *num_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

static int write_json(const char *path, const row *rows, int n, int argc, char **argv)
{
    json_t *root = json_object(), *arr = json_array(), *av = json_array();
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    for (int i = 0; i < argc; i++)
        json_array_append_new(av, json_string(argv[i]));
    json_object_set_new(root, "schema", json_string("vkt-bench/1"));
    json_object_set_new(root, "source", json_string("vkt"));
    json_object_set_new(root, "device", json_string(B.device_name));
    json_object_set_new(root, "date", json_string(date));
    json_object_set_new(root, "argv", av);
    json_object_set_new(root, "reps", json_integer(B.reps));
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        const bench_case *bc = r->bc;
        json_t *o = json_object();
        json_object_set_new(o, "op", json_string(bc->op));
        json_object_set_new(o, "size", json_string(bc->size));
        json_object_set_new(o, "path", json_string(r->path));
        json_object_set_new(o, "timing", json_string(r->timed_gpu ? "gpu" : "wall"));
        json_object_set_new(o, "time_ns", num_or_null(r->time_ns));
        json_object_set_new(o, "wall_ns", num_or_null(r->wall_ns));
        json_object_set_new(o, "unit", json_string(unit(bc)));
        json_object_set_new(o, "figure", num_or_null(r->error[0] ? NAN : r->figure));
        json_object_set_new(o, "target", bc->target > 0 ? json_real(bc->target) : json_null());
        json_object_set_new(o, "error", r->error[0] ? json_string(r->error) : json_null());
        json_array_append_new(arr, o);
    }
    json_object_set_new(root, "rows", arr);
    int s = json_dump_file(root, path, JSON_INDENT(2));
    json_decref(root);
    if (s != 0)
        fprintf(stderr, "vkt-bench: cannot write %s\n", path);
    return s;
}

static bool selected(const char *list, const char *op)
{
    if (!list)
        return true;
    size_t n = strlen(op);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, op, n) == 0)
            return true;
        p += len + (e != NULL);
    }
    return false;
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: vkt-bench [--device SEL] [--reps N] [--warmup N] [--warm-ms MS] [--quick] [--ops "
        "LIST] [--json FILE]\n"
        "  --device SEL  device index or name substring (as VKT_DEVICE)\n"
        "  --reps N      timed runs per row, the median is reported (default 20)\n"
        "  --warmup N    untimed runs before them (default 3)\n"
        "  --warm-ms MS  and untimed runs for at least MS milliseconds before a GPU-timed\n"
        "                row, so an idle GPU's clocks are back up (default 1500)\n"
        "  --quick       small sizes only (lavapipe, CI smoke test)\n"
        "  --ops LIST    only these rows: add,exp,sum,sum_last_axis,transpose,dot,fallback\n"
        "  --json FILE   also write every row as JSON\n"
        "exit status: 0 all rows ran or were marked, 1 a row failed or computed a wrong result,\n"
        "2 bad usage or no device\n");
}

static long parse_count(const char *s, const char *opt, long lo)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > 100000) {
        fprintf(stderr, "vkt-bench: %s wants an integer in %ld..100000, got '%s'\n", opt, lo, s);
        return -1;
    }
    return v;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"device", required_argument, NULL, 'd'},
        {"reps", required_argument, NULL, 'r'},
        {"warmup", required_argument, NULL, 'w'},
        {"quick", no_argument, NULL, 'q'},
        {"ops", required_argument, NULL, 'o'},
        {"json", required_argument, NULL, 'j'},
        {"warm-ms", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *device = NULL, *json_path = NULL, *only = NULL;
    bool quick = false;
    long reps = 20, warmup = 3, warm_ms = 1500;
    int o;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case 'd': device = optarg; break;
        case 'r':
            reps = parse_count(optarg, "--reps", 1);
            if (reps < 0)
                return 2;
            break;
        case 'w':
            warmup = parse_count(optarg, "--warmup", 0);
            if (warmup < 0)
                return 2;
            break;
        case 'm':
            warm_ms = parse_count(optarg, "--warm-ms", 0);
            if (warm_ms < 0)
                return 2;
            break;
        case 'q': quick = true; break;
        case 'o': only = optarg; break;
        case 'j': json_path = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "vkt-bench: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    B.reps = (int)reps;
    B.warmup = (int)warmup;
    B.warm_ns = (double)warm_ms * 1e6;

    if (vkt_ctx_create(device, &B.ctx) != VKT_OK) {
        fprintf(stderr, "vkt-bench: %s: %s\n", vkt_status_name(VKT_ENODEV), vkt_last_error());
        return 2;
    }
    /* The table's device column: the name up to its parenthesised details. */
    static char name[128];
    snprintf(name, sizeof name, "%s", vkt_ctx_device_name(B.ctx));
    name[strcspn(name, "(")] = '\0';
    for (size_t l = strlen(name); l > 0 && name[l - 1] == ' '; l--)
        name[l - 1] = '\0';
    B.device_name = name;

    row rows[NCASES];
    int n = 0, failed = 0;
    for (size_t i = 0; i < NCASES; i++) {
        const bench_case *bc = &cases[i];
        const char *key = bc->kind == K_ADD_FALLBACK ? "fallback" : bc->op;
        if (!(quick ? bc->quick : bc->full) || !selected(only, key))
            continue;
        fprintf(stderr, "vkt-bench: %s %s ...\n", bc->op, bc->size);
        bench(bc, &rows[n]);
        failed += rows[n].failed;
        n++;
    }
    print_table(rows, n);
    int s = json_path ? write_json(json_path, rows, n, argc, argv) : 0;
    free(B.rnd);
    vkt_ctx_destroy(B.ctx);
    return failed ? 1 : s ? 2 : 0;
}

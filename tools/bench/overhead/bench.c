/* bench.c - fbcount-bench-overhead: nanoseconds per host_result call (a) without the shim,
 * (b) with it preloaded and recording off, (c) recording at stack depth 8, 32, 64, and the
 * same with a checkpoint timer armed; 1 and 4 threads. The program re-executes itself under
 * each environment, several times interleaved, and reports medians as ratios to (a) measured
 * in the same run. Then the time of a snapshot of 10,000 distinct stacks and the memory each
 * distinct stack takes, the time from SIGTERM to death of a process holding 10,000 stacks
 * (its census written on the way), and what the time of each event costs to measure.
 *
 * usage: fbcount-bench-overhead [--quick] [--shim PATH] [--json FILE]
 */
#include <dlfcn.h>
#include <malloc.h>
#include <signal.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

int vkt_bench(size_t nbytes);

#define CALL_DEPTH 72 /* frames between main and the loop, so depth 64 captures 64 */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct {
    long calls;
    int runs;
    double *ns;
} loop_arg;

__attribute__((noinline)) static void *loop(void *p)
{
    loop_arg *a = p;
    for (int r = 0; r < a->runs; r++) {
        double t0 = now_ns();
        for (long i = 0; i < a->calls; i++)
            vkt_bench(8);
        a->ns[r] = (now_ns() - t0) / (double)a->calls;
    }
    return NULL;
}

/* Recurse to CALL_DEPTH frames, then run the loop (in threads, each with its own depth). */
__attribute__((noinline)) static void *deep(void *p)
{
    loop_arg *a = p;
    static __thread int level;
    if (++level < CALL_DEPTH) {
        void *r = deep(p);
        level--;
        return r;
    }
    level = 0;
    return loop(a);
}

static double child_loop(int threads, long calls, int runs)
{
    loop_arg a[8];
    pthread_t th[8];
    double all[8 * 64];
    int n = 0;
    deep(&(loop_arg){calls / 10, 1, all}); /* warm up: first stacks, lazy binding */
    for (int i = 0; i < threads; i++) {
        a[i] = (loop_arg){calls, runs, all + i * runs};
        pthread_create(&th[i], NULL, deep, &a[i]);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    n = threads * runs;
    return median(all, n);
}

/* Distinct stacks: each pattern's bits choose between two call sites per level. */
__attribute__((noinline)) static int rec_a(unsigned pattern, int depth);
__attribute__((noinline)) static int rec_b(unsigned pattern, int depth);
static int rec_step(unsigned pattern, int depth)
{
    if (depth == 0)
        return vkt_bench(16);
    int r = (pattern & 1) ? rec_a(pattern >> 1, depth - 1) : rec_b(pattern >> 1, depth - 1);
    return r;
}
__attribute__((noinline)) static int rec_a(unsigned pattern, int depth)
{
    int r = rec_step(pattern, depth);
    return r + 1;
}
__attribute__((noinline)) static int rec_b(unsigned pattern, int depth)
{
    int r = rec_step(pattern, depth);
    return r + 2;
}

/* settle_ms > 0: the program runs that long before the first snapshot, as a job does before
 * it is sent SIGUSR1; the dumper names its stacks meanwhile. 0: the snapshot follows at once,
 * paying for loading the symbol tables and debug info (inflating libc's when it is installed). */
static int child_snapshot(int stacks, int settle_ms)
{
    int (*dump)(const char *);
    void *p = dlsym(RTLD_DEFAULT, "fbcount_dump");
    memcpy(&dump, &p, sizeof dump);
    if (!dump) {
        fprintf(stderr, "fbcount-bench-overhead: the shim is not loaded\n");
        return 1;
    }
    vkt_bench(1); /* first event: the shim resolves the backend */
    struct mallinfo2 m0 = mallinfo2();
    for (int i = 0; i < stacks; i++)
        rec_step((unsigned)i, 14);
    struct mallinfo2 m1 = mallinfo2();
    char path[] = "/tmp/fbcount-bench-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    if (settle_ms > 0)
        nanosleep(&(struct timespec){settle_ms / 1000, (settle_ms % 1000) * 1000000L}, NULL);
    double t0 = now_ns();
    int rc = dump(path);
    double t1 = now_ns();
    rc |= dump(path);
    double t2 = now_ns();
    unlink(path);
    printf("%.3f %.3f %.1f\n", (t1 - t0) / 1e6, (t2 - t1) / 1e6,
           (double)(m1.uordblks - m0.uordblks) / stacks);
    return rc;
}

/* A process holding stacks distinct stacks, waiting to be ended: says "ready" first. */
__attribute__((noreturn)) static void child_term(int stacks)
{
    vkt_bench(1);
    for (int i = 0; i < stacks; i++)
        rec_step((unsigned)i, 14);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}

/* Milliseconds from SIGTERM to the death of a child holding stacks, its census written;
 * -1 when it did not die by SIGTERM or left no dump. */
static double time_to_death(const char *self, const char *pre, int stacks)
{
    char dir[] = "/tmp/fbcount-bench-term-XXXXXX";
    if (!mkdtemp(dir))
        return -1;
    char out[300], n[16];
    snprintf(out, sizeof out, "FBCOUNT_OUTPUT=%s/d.json", dir);
    snprintf(n, sizeof n, "%d", stacks);
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        putenv((char *)pre);
        putenv(out);
        putenv("FBCOUNT_QUIET=1");
        execl(self, self, "--child-term", n, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char line[16] = "";
    ssize_t got = read(p[0], line, sizeof line - 1);
    close(p[0]);
    /* A run that is ended has run a while: its stacks were named in the background. */
    nanosleep(&(struct timespec){1, 0}, NULL);
    double t0 = now_ns();
    kill(pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);
    double ms = (now_ns() - t0) / 1e6;
    char dump[320];
    snprintf(dump, sizeof dump, "%s/d.json", dir);
    bool ok = got > 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM && access(dump, F_OK) == 0;
    unlink(dump);
    rmdir(dir);
    return ok ? ms : -1;
}

/* What the time of one event costs to measure, run through the shim's own clock (clock.c,
 * built into this program): libvkt's events read CLOCK_MONOTONIC once, at their end; other
 * backends' read the event clock twice, start and end, with the conversion to ns. */
static double monotonic_read_ns(void)
{
    const int n = 1000000;
    double t0 = now_ns();
    volatile uint64_t sink = 0;
    for (int i = 0; i < n; i++)
        sink += fbc_now_ns();
    (void)sink;
    return (now_ns() - t0) / n;
}

static double event_clock_ns(bool monotonic_only, const char **name)
{
    fbc_clock_init(monotonic_only);
    struct timespec nap = {0, 2000000};
    nanosleep(&nap, NULL);
    (void)fbc_clock_start(); /* the first event 1 ms on measures the counter's rate */
    *name = fbc_clock_name();
    const int n = 1000000;
    double t0 = now_ns();
    volatile uint64_t sink = 0;
    for (int i = 0; i < n; i++)
        sink += fbc_clock_since(fbc_clock_start());
    (void)sink;
    return (now_ns() - t0) / n;
}

/* The rows, also as data (tools/bench/results): bench, case, threads, value, unit, target. */
static FILE *rows;
static int nrows;

static void row(const char *what, int threads, double value, const char *unit, double target,
                const char *verdict)
{
    if (!rows)
        return;
    fprintf(rows,
            "%s    {\"bench\": \"overhead\", \"case\": \"%s\", \"threads\": %d, "
            "\"value\": %.3f, \"unit\": \"%s\"",
            nrows++ ? ",\n" : "", what, threads, value, unit);
    if (target > 0)
        fprintf(rows, ", \"target\": %.3f, \"verdict\": \"%s\"", target, verdict);
    fprintf(rows, "}");
}

/* Runs this program as a child under env; returns what it printed (first line). */
static int spawn(const char *self, char *const env[], char *const argv[], char *out, size_t cap)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        for (int i = 0; env[i]; i++)
            putenv(env[i]);
        execv(self, argv);
        _exit(127);
    }
    close(p[1]);
    ssize_t n = read(p[0], out, cap - 1);
    out[n > 0 ? n : 0] = '\0';
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 && n > 0 ? 0 : -1;
}

typedef struct {
    const char *name;
    const char *env[7];
    double target_ns; /* target over (a) in ns, 0 for none */
} variant;

/* The per-call rows: every variant, one and four threads; the count of missed targets, or -1
 * when a child failed. */
static int call_rows(const char *self, const char *pre, bool quick, const char *host, long ncpu)
{
    const int repeats = quick ? 3 : 7;
    /* Recording costs microseconds a call: fewer calls there keep each child under a second. */
    const char *calls_off = quick ? "200000" : "1000000", *calls_on = quick ? "5000" : "20000";
    const char *runs = quick ? "5" : "9";

    variant vs[] = {
        {"(a) no shim", {"FBCOUNT_UNUSED=1", NULL}, 0},
        {"(b) preloaded, recording off", {pre, "FBCOUNT=0", NULL}, 2},
        {"(c) recording, depth 8",
         {pre, "FBCOUNT_DEPTH=8", "FBCOUNT_OUTPUT=none", "FBCOUNT_QUIET=1", NULL},
         0},
        {"(c) recording, depth 32",
         {pre, "FBCOUNT_DEPTH=32", "FBCOUNT_OUTPUT=none", "FBCOUNT_QUIET=1", NULL},
         500},
        {"(c) recording, depth 64",
         {pre, "FBCOUNT_DEPTH=64", "FBCOUNT_OUTPUT=none", "FBCOUNT_QUIET=1", NULL},
         0},
        /* A checkpoint timer lives on the dumper thread: the calls must not see it. */
        {"(b) off, checkpoints every 0.1 s", {pre, "FBCOUNT=0", "FBCOUNT_INTERVAL=0.1", NULL}, 2},
        {"(c) depth 32, checkpoints every 0.1 s",
         {pre, "FBCOUNT_DEPTH=32", "FBCOUNT_OUTPUT=none", "FBCOUNT_QUIET=1",
          "FBCOUNT_INTERVAL=0.1"},
         500},
    };
    const int nv = sizeof vs / sizeof *vs;
    printf("fbcount-bench-overhead: %s, %ld cpus; medians of %d children x %s runs of %s calls "
           "(%s recording)\n",
           host, ncpu, repeats, runs, calls_off, calls_on);
    printf("%-42s %-8s %12s %12s %9s %s\n", "what", "threads", "ns/call", "target", "ratio(a)",
           "verdict");
    int fails = 0;
    for (int threads = 1; threads <= 4; threads += 3) {
        double res[8][16];
        char tbuf[8];
        snprintf(tbuf, sizeof tbuf, "%d", threads);
        for (int r = 0; r < repeats; r++)
            for (int v = 0; v < nv; v++) {
                char out[256];
                const char *calls = v >= 2 && v != 5 ? calls_on : calls_off;
                char *cargv[] = {(char *)self,  "--child-loop", tbuf,
                                 (char *)calls, (char *)runs,   NULL};
                if (spawn(self, (char *const *)vs[v].env, cargv, out, sizeof out) != 0) {
                    fprintf(stderr, "fbcount-bench-overhead: %s failed\n", vs[v].name);
                    return -1;
                }
                res[v][r] = atof(out);
            }
        double base = median(res[0], repeats);
        for (int v = 0; v < nv; v++) {
            double m = median(res[v], repeats);
            char target[32] = "-";
            const char *verdict = "";
            if (vs[v].target_ns > 0) {
                snprintf(target, sizeof target, "(a)+%.0f", vs[v].target_ns);
                bool ok = m - base <= vs[v].target_ns;
                verdict = ok ? "ok" : "MISSED";
                fails += !ok && threads == 1;
            }
            printf("%-42s %-8d %12.2f %12s %9.2f %s\n", vs[v].name, threads, m, target, m / base,
                   verdict);
            row(vs[v].name, threads, m, "ns/call", vs[v].target_ns ? base + vs[v].target_ns : 0,
                verdict);
        }
    }
    return fails;
}

/* Snapshots of 10,000 stacks, cold, again and after settling; the count of failures. */
static int snapshot_rows(const char *self, const char *pre)
{
    const char *senv[] = {pre, "FBCOUNT_OUTPUT=none", "FBCOUNT_QUIET=1", NULL};
    static const struct {
        const char *settle, *first, *again;
    } snaps[] = {
        {"0", "snapshot, 10000 stacks (first, cold)", "snapshot, 10000 stacks (again)"},
        {"1500", "snapshot, 10000 stacks (first, 1.5 s in)", NULL},
    };
    int fails = 0;
    for (size_t k = 0; k < sizeof snaps / sizeof snaps[0]; k++) {
        char out[256];
        char *sargv[] = {(char *)self, "--child-snapshot", "10000", (char *)snaps[k].settle, NULL};
        double first, again, mem;
        if (spawn(self, (char *const *)senv, sargv, out, sizeof out) != 0 ||
            sscanf(out, "%lf %lf %lf", &first, &again, &mem) != 3) {
            fprintf(stderr, "fbcount-bench-overhead: snapshot run failed\n");
            fails++;
            continue;
        }
        printf("%-42s %-8s %10.1f ms %12s %9s %s\n", snaps[k].first, "1", first, "50 ms", "-",
               first <= 50 ? "ok" : "MISSED");
        row(snaps[k].first, 1, first, "ms", 50, first <= 50 ? "ok" : "MISSED");
        if (!snaps[k].again)
            continue;
        printf("%-42s %-8s %10.1f ms %12s %9s %s\n", snaps[k].again, "1", again, "50 ms", "-",
               again <= 50 ? "ok" : "MISSED");
        printf("%-42s %-8s %10.0f B  %12s %9s\n", "memory per distinct stack (depth 64)", "1", mem,
               "-", "-");
        row(snaps[k].again, 1, again, "ms", 50, again <= 50 ? "ok" : "MISSED");
        row("memory per distinct stack", 1, mem, "B", 0, "");
    }
    return fails;
}

/* From SIGTERM to the process's death with 10,000 stacks to write; 1 when the run failed. */
static int death_row(const char *self, const char *pre)
{
    double death = time_to_death(self, pre, 10000);
    if (death < 0) {
        fprintf(stderr, "fbcount-bench-overhead: the SIGTERM run did not end as it should\n");
        return 1;
    }
    printf("%-42s %-8s %10.1f ms %12s %9s %s\n", "SIGTERM to death, 10000 stacks", "1", death,
           "100 ms", "-", death <= 100 ? "ok" : "MISSED");
    row("SIGTERM to death, 10000 stacks", 1, death, "ms", 100, death <= 100 ? "ok" : "MISSED");
    return 0;
}

/* What timing one event costs, with each clock. */
static void clock_rows(void)
{
    double one = monotonic_read_ns();
    const char *clk, *mono;
    double pair = event_clock_ns(false, &clk), mpair = event_clock_ns(true, &mono);
    char what[3][64];
    snprintf(what[0], sizeof what[0], "timing an event, libvkt (1 monotonic read)");
    snprintf(what[1], sizeof what[1], "timing an event, others (2 %s reads)", clk);
    snprintf(what[2], sizeof what[2], "  the same, FBCOUNT_CLOCK=%s", mono);
    double v[3] = {one, pair, mpair};
    for (int i = 0; i < 3; i++) {
        printf("%-42s %-8s %12.2f %12s %9s %s\n", what[i], "1", v[i], "40", "-",
               v[i] <= 40 ? "ok" : "MISSED");
        row(what[i], 1, v[i], "ns", 40, v[i] <= 40 ? "ok" : "MISSED");
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--child-loop"))
        return printf("%.3f\n", child_loop(atoi(argv[2]), atol(argv[3]), atoi(argv[4]))) < 0;
    if (argc > 1 && !strcmp(argv[1], "--child-snapshot"))
        return child_snapshot(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 0);
    if (argc > 1 && !strcmp(argv[1], "--child-term"))
        child_term(atoi(argv[2]));
    bool quick = false;
    const char *shim = getenv("FBCOUNT_SHIM"), *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--shim") && i + 1 < argc)
            shim = argv[++i];
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else {
            fprintf(stderr,
                    "usage: fbcount-bench-overhead [--quick] [--shim PATH] [--json FILE]\n");
            return 2;
        }
    }
    if (json && !(rows = fopen(json, "w"))) {
        fprintf(stderr, "fbcount-bench-overhead: %s: cannot write\n", json);
        return 2;
    }
    if (!shim) {
        fprintf(stderr, "fbcount-bench-overhead: give the shim with --shim or FBCOUNT_SHIM\n");
        return 2;
    }
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        return 1;
    self[sl] = '\0';
    static char pre[4200];
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", shim);
    char host[128] = "?";
    gethostname(host, sizeof host);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (rows) {
        char date[32];
        time_t t = time(NULL);
        strftime(date, sizeof date, "%Y-%m-%d", gmtime(&t));
        fprintf(rows, "{\"device\": \"%s, %ld cpus\", \"date\": \"%s\", \"rows\": [\n", host,
                sysconf(_SC_NPROCESSORS_ONLN), date);
    }
    int fails = call_rows(self, pre, quick, host, ncpu);
    if (fails < 0)
        return 1;
    fails += snapshot_rows(self, pre);
    fails += death_row(self, pre);
    clock_rows();
    if (rows) {
        fprintf(rows, "\n]}\n");
        fclose(rows);
    }
    return fails ? 3 : 0;
}

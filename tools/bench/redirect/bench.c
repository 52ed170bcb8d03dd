/* bench.c - fbcount-bench-redirect: nanoseconds per call of an exit the shim reaches by
 * redirection (declared: FBCOUNT_EXIT, its entry in hooks/entries.S) against the same call of
 * an exit it defines (host_result, preloaded), recording off and on (depth 32), 1 thread.
 * Each case runs in a child of its own, several times interleaved; the best run of each is
 * reported (on a machine shared with other work, the figure least disturbed by it) with the
 * targets: a declared exit within 5 ns of the built-in one off, within 10% on.
 *
 * usage: fbcount-bench-redirect [--quick] --shim PATH --backend PATH [--json FILE] */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int vkt_bench(size_t nbytes);      /* the overhead benchmark's backend: host_result */
int vkt_bench_decl(size_t nbytes); /* this one's: decl_exit, the same way */

static inline void call_exit(bool declared)
{
    if (declared)
        vkt_bench_decl(8);
    else
        vkt_bench(8);
}

#define CALL_DEPTH 40 /* frames between main and the loop: depth 32 captures 32 */

static double ns_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e9 + (double)(b->tv_nsec - a->tv_nsec);
}

/* The child: runs of calls at CALL_DEPTH frames; prints the best run's ns per call (the run
 * least disturbed by the other work of a shared machine). */
__attribute__((noinline)) static double deep(int level, bool declared, long calls, int runs)
{
    if (level < CALL_DEPTH) {
        double r = deep(level + 1, declared, calls, runs);
        return r;
    }
    for (long i = 0; i < calls / 10; i++) /* warm up: first stacks, lazy binding */
        call_exit(declared);
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long i = 0; i < calls; i++)
            call_exit(declared);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ns = ns_between(&t0, &t1) / (double)calls;
        best = ns < best ? ns : best;
    }
    return best;
}

/* Runs this program as a child with the variables set (NAME, VALUE pairs, NULL-ended); the
 * number it printed, or -1. The variables are set here for popen's child and taken back. */
static double child(const char *self, const char *const env[], const char *which, const char *calls,
                    const char *runs)
{
    for (int i = 0; env[i]; i += 2)
        setenv(env[i], env[i + 1], 1);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "exec '%s' --child %s %s %s", self, which, calls, runs);
    FILE *f = strchr(self, '\'') ? NULL : popen(cmd, "r");
    double v = -1;
    if (f && fscanf(f, "%lf", &v) != 1)
        v = -1;
    if (f && pclose(f) != 0)
        v = -1;
    for (int i = 0; env[i]; i += 2)
        unsetenv(env[i]);
    return v;
}

typedef struct {
    const char *name;
    const char *which; /* "builtin" or "declared" */
    bool on;
} bench_case;

static const bench_case cases[] = {
    {"built-in exit (host_result), off", "builtin", false},
    {"declared exit (redirected), off", "declared", false},
    {"built-in exit (host_result), depth 32", "builtin", true},
    {"declared exit (redirected), depth 32", "declared", true},
};

/* The best of `repeats` children for each case into m[]; -1 when a child failed. */
static int measure(const char *self, const char *const *off, const char *const *on, bool quick,
                   int repeats, const char *runs, double m[4])
{
    double res[4][16];
    for (int r = 0; r < repeats; r++)
        for (int c = 0; c < 4; c++) {
            res[c][r] = child(
                self, cases[c].on ? on : off, cases[c].which,
                cases[c].on ? (quick ? "5000" : "20000") : (quick ? "2000000" : "10000000"), runs);
            if (res[c][r] < 0) {
                fprintf(stderr, "fbcount-bench-redirect: %s failed\n", cases[c].name);
                return -1;
            }
        }
    for (int c = 0; c < 4; c++) {
        m[c] = res[c][0];
        for (int r = 1; r < repeats; r++)
            m[c] = res[c][r] < m[c] ? res[c][r] : m[c];
    }
    return 0;
}

/* The table, and the rows in JSON to rows where given; the exit status (3: a target missed). */
static int report(FILE *rows, const double m[4], int repeats, const char *runs)
{
    char host[128] = "?", date[32];
    gethostname(host, sizeof host);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    if (rows)
        fprintf(rows, "{\"device\": \"%s, %ld cpus\", \"date\": \"%s\", \"rows\": [\n", host,
                sysconf(_SC_NPROCESSORS_ONLN), date);
    printf("fbcount-bench-redirect: %s, %ld cpus; best of %d children x %s runs\n", host,
           sysconf(_SC_NPROCESSORS_ONLN), repeats, runs);
    printf("%-40s %10s %-26s %8s %s\n", "what", "ns/call", "target", "ratio", "verdict");
    int fails = 0;
    for (int c = 0; c < 4; c++) {
        char target[40] = "(peer)";
        const char *verdict = "";
        double limit = 0;
        if (c == 1)
            limit = m[0] + 5, snprintf(target, sizeof target, "built-in off + 5 = %.2f", limit);
        if (c == 3)
            limit = m[2] * 1.10,
            snprintf(target, sizeof target, "built-in on x 1.10 = %.0f", limit);
        if (limit > 0) {
            verdict = m[c] <= limit ? "ok" : "MISSED";
            fails += m[c] > limit;
        }
        printf("%-40s %10.2f %-26s %8.3f %s\n", cases[c].name, m[c], target,
               m[c] / m[c & 2 ? 2 : 0], verdict);
        if (rows)
            fprintf(rows,
                    "%s  {\"bench\": \"redirect\", \"case\": \"%s\", \"threads\": 1, "
                    "\"value\": %.3f, \"unit\": \"ns/call\"%s%.3f%s%s%s}",
                    c ? ",\n" : "", cases[c].name, m[c],
                    limit > 0 ? ", \"target\": " : ", \"peer\": ", limit > 0 ? limit : m[c & 2],
                    limit > 0 ? ", \"verdict\": \"" : "", verdict, limit > 0 ? "\"" : "");
    }
    if (rows) {
        fprintf(rows, "\n]}\n");
        fclose(rows);
    }
    return fails ? 3 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "--child"))
        return printf("%.3f\n", deep(0, !strcmp(argv[2], "declared"), atol(argv[3]),
                                     atoi(argv[4]) > 0 ? atoi(argv[4]) : 1)) < 0;
    bool quick = false;
    const char *shim = NULL, *backend = NULL, *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--shim") && i + 1 < argc)
            shim = argv[++i];
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            backend = argv[++i];
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else
            shim = NULL, i = argc;
    }
    FILE *rows = NULL;
    if (!shim || !backend || (json && !(rows = fopen(json, "w")))) {
        fprintf(stderr, "usage: fbcount-bench-redirect [--quick] --shim PATH --backend PATH "
                        "[--json FILE]\n");
        return 2;
    }
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        return 1;
    self[sl] = '\0';
    char exit_spec[4200];
    const char *base = strrchr(backend, '/') ? strrchr(backend, '/') + 1 : backend;
    snprintf(exit_spec, sizeof exit_spec, "%s:decl_exit", base);
    const char *off[] = {"LD_PRELOAD", shim, "FBCOUNT_EXIT", exit_spec, "FBCOUNT", "0", NULL};
    const char *on[] = {"LD_PRELOAD",
                        shim,
                        "FBCOUNT_EXIT",
                        exit_spec,
                        "FBCOUNT_DEPTH",
                        "32",
                        "FBCOUNT_OUTPUT",
                        "none",
                        "FBCOUNT_QUIET",
                        "1",
                        NULL};
    const int repeats = quick ? 3 : 7;
    const char *runs = quick ? "5" : "9";
    double m[4];
    if (measure(self, off, on, quick, repeats, runs, m) != 0)
        return 1;
    return report(rows, m, repeats, runs);
}

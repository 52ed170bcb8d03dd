/* census-prog: a program for the tests of when a census exists. It makes fallbacks through the
 * test backend (tests/shim/fakevkt.c) over distinct stacks, native ops the backend counts,
 * forks children, and ends in a chosen way, saying on stdout when each part is done.
 *   --fallbacks N   fallbacks from work(), spread over --stacks distinct stacks (default 0)
 *   --stacks S      distinct stacks (1..4096, default 1)
 *   --native N      native ops (counted by the backend's counters, not by the census)
 *   --children K    then fork K children, each doing --child-fallbacks fallbacks (default 0)
 *                   and ending as --child-end says; the parent waits for them
 *   --child-fallbacks N, --child-end HOW   as below, for the children
 *   --sleep S       then sleep S seconds (after printing "ready")
 *   --more N        then wait for a line on standard input and make N more fallbacks (a test
 *                   attaches meanwhile)
 *   --end HOW       exit (default), _exit, _Exit, return
 *   --code C        the exit status (default 0)
 *   --sync DIR      just before ending, create DIR/ending.<pid>
 *   --stamp 1       "ending" and a last line "exited" carry CLOCK_MONOTONIC (ns): the second is
 *                   printed by an exit handler registered at start, which runs after the
 *                   shim's exit census (tools/bench/exit times that with it)
 *   --fail-rank R   the MPI rank R (OMPI_COMM_WORLD_RANK) does no work: it waits until
 *                   --peers N files are in --sync's DIR (30 s at most) and exits 3, so that
 *                   the launcher ends the other ranks while they write their exit census
 * It prints "ready" (flushed) once its work is done, and "ending" just before it ends. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fakevkt.h"

typedef struct {
    long fallbacks, stacks, native, children, child_fallbacks, fail_rank, peers, more;
    double sleep_s;
    const char *end, *child_end, *sync;
    int code;
} opts;

static const char *sync_dir;
static bool stamp;

static unsigned long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void exited(void)
{
    printf("exited %llu\n", now_ns());
    fflush(stdout);
}

__attribute__((noinline)) static void work(long n, long stacks)
{
    for (long i = 0; i < n; i++)
        fake_recurse((unsigned)(i % stacks), 12); /* 12 levels: 4096 stacks at most */
}

static void say_ending(void)
{
    if (stamp)
        printf("ending %llu\n", now_ns());
    else
        printf("ending\n");
    fflush(stdout);
    if (sync_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/ending.%ld", sync_dir, (long)getpid());
        FILE *f = fopen(path, "w");
        if (f)
            fclose(f);
    }
}

/* The files in dir whose names start with "ending.". */
static long endings(const char *dir)
{
    long n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        n += !strncmp(e->d_name, "ending.", 7);
    if (d)
        closedir(d);
    return n;
}

__attribute__((noreturn)) static void end(const char *how, int code)
{
    say_ending();
    if (!strcmp(how, "_exit"))
        _exit(code);
    if (!strcmp(how, "_Exit"))
        _Exit(code);
    exit(code);
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts))
        ;
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){.stacks = 1, .end = "exit", .child_end = "exit", .fail_rank = -1};
    for (int i = 1; i < argc; i += 2) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return -1;
        if (!strcmp(k, "--fallbacks"))
            o->fallbacks = atol(v);
        else if (!strcmp(k, "--stacks"))
            o->stacks = atol(v);
        else if (!strcmp(k, "--native"))
            o->native = atol(v);
        else if (!strcmp(k, "--children"))
            o->children = atol(v);
        else if (!strcmp(k, "--child-fallbacks"))
            o->child_fallbacks = atol(v);
        else if (!strcmp(k, "--child-end"))
            o->child_end = v;
        else if (!strcmp(k, "--sleep"))
            o->sleep_s = atof(v);
        else if (!strcmp(k, "--end"))
            o->end = v;
        else if (!strcmp(k, "--code"))
            o->code = atoi(v);
        else if (!strcmp(k, "--sync"))
            o->sync = v;
        else if (!strcmp(k, "--more"))
            o->more = atol(v);
        else if (!strcmp(k, "--stamp"))
            stamp = atoi(v) != 0;
        else if (!strcmp(k, "--fail-rank"))
            o->fail_rank = atol(v);
        else if (!strcmp(k, "--peers"))
            o->peers = atol(v);
        else
            return -1;
    }
    return o->stacks >= 1 && o->stacks <= 4096 ? 0 : -1;
}

int main(int argc, char **argv)
{
    opts o;
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: census-prog [--fallbacks N] [--stacks S] [--native N] "
                        "[--children K] [--child-fallbacks N] [--child-end HOW] [--sleep S] "
                        "[--end exit|_exit|_Exit|return] [--code C] [--more N] [--sync DIR] "
                        "[--stamp 1] [--fail-rank R --peers N]\n");
        return 2;
    }
    sync_dir = o.sync;
    if (stamp)
        atexit(exited); /* before the shim's own: it runs after the exit census */
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (o.sync && rank && atol(rank) == o.fail_rank) {
        for (int i = 0; i < 3000 && endings(o.sync) < o.peers; i++)
            nap(0.01);
        return 3;
    }
    for (long i = 0; i < o.native; i++)
        vkt_native();
    work(o.fallbacks, o.stacks);
    for (long c = 0; c < o.children; c++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            work(o.child_fallbacks, 1);
            end(o.child_end, 0);
        }
        if (pid > 0)
            waitpid(pid, NULL, 0);
    }
    printf("ready\n");
    fflush(stdout);
    if (o.sleep_s > 0)
        nap(o.sleep_s);
    if (o.more) {
        char line[64];
        if (!fgets(line, sizeof line, stdin))
            return 2;
        work(o.more, o.stacks);
    }
    if (!strcmp(o.end, "return")) {
        say_ending();
        return o.code;
    }
    end(o.end, o.code);
}

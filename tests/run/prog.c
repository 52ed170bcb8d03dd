/* run-prog: a program for the tests of fbcount run and snapshot. It makes a known number of
 * fallbacks through the test backend (tests/shim/fakevkt.c), says so, and then waits, so a
 * test can signal it, snapshot it or let it end; it can count the termination signals it
 * receives, to show that fbcount passes each one on exactly once.
 *   --fallbacks N        vkt_dot fallbacks from work() (default 3)
 *   --children K         first fork K children that do the same and exit 0
 *   --ready FILE         create FILE (in each process: FILE.<pid>) when the fallbacks are done
 *   --sleep S            then sleep S seconds (default 0)
 *   --count-signals FILE catch INT, TERM, HUP and QUIT; after the first, wait --linger
 *                        seconds (default 0.5) for more, write "<signal> <count>" to FILE
 *                        and exit 3
 *   --linger S           see --count-signals
 *   --exit CODE          exit status at the end (default 0)
 * It prints "pid N" first. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fakevkt.h"

static volatile sig_atomic_t got, nsig;

static void on_signal(int sig)
{
    got = sig;
    nsig++;
}

static fake_tensor t32 = {0, 2, {16, 32}};

__attribute__((noinline)) static void work(int n)
{
    for (int i = 0; i < n; i++)
        vkt_dot(&t32, 2048);
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int n = 3, children = 0, code = 0;
    double sleep_s = 0, linger = 0.5;
    const char *ready = NULL, *count = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--fallbacks"))
            n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--children"))
            children = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--ready"))
            ready = argv[i + 1];
        else if (!strcmp(argv[i], "--sleep"))
            sleep_s = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--count-signals"))
            count = argv[i + 1];
        else if (!strcmp(argv[i], "--linger"))
            linger = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--exit"))
            code = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "run-prog: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    printf("pid %ld\n", (long)getpid());
    fflush(stdout);
    if (count) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
        for (int i = 0; i < 4; i++)
            sigaction(sigs[i], &sa, NULL);
    }
    pid_t kids[64];
    int nk = 0;
    for (int i = 0; i < children && i < 64; i++) {
        pid_t p = fork();
        if (p == 0) {
            children = 0;
            nk = 0;
            code = 0;
            break;
        }
        if (p > 0)
            kids[nk++] = p;
    }
    work(n);
    if (ready) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%ld", ready, (long)getpid());
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
            close(fd);
    }
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
        if (got && count) {
            nap(linger);
            FILE *f = fopen(count, "w");
            if (f) {
                fprintf(f, "%d %d\n", (int)got, (int)nsig);
                fclose(f);
            }
            return 3;
        }
        if (el >= sleep_s)
            break;
        nap(0.02);
    }
    for (int i = 0; i < nk; i++)
        waitpid(kids[i], NULL, 0);
    return code;
}

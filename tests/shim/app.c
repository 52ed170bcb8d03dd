/* app.c - the program the preload tests run under libfbcount.so: each command makes a known
 * number of fallbacks from known sites, then ends in a known way (exit code, signal, fork,
 * exec). It prints only what the tests compare with and without the shim. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fakevkt.h"

#define SITE __attribute__((noinline))

static fake_tensor t32 = {0, 2, {16, 32}};
static fake_tensor t8 = {1, 1, {8}};

SITE static void site_alpha(int n)
{
    for (int i = 0; i < n; i++)
        vkt_dot(&t32, 2048);
}

SITE static void site_beta(int n)
{
    for (int i = 0; i < n; i++)
        vkt_add(&t8, 32);
}

SITE static void site_gamma(int n)
{
    for (int i = 0; i < n; i++)
        vkt_matmul(&t32, 2048);
}

SITE static void site_host(int n)
{
    for (int i = 0; i < n; i++)
        vkt_transpose(&t8, 32);
}

SITE static void site_raw(int n)
{
    for (int i = 0; i < n; i++)
        fake_raw(16);
}

static int per_thread;
static volatile int stop;

SITE static void *site_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < per_thread; i++)
        vkt_dot(&t32, 8);
    return NULL;
}

SITE static void *site_spin(void *arg)
{
    long *n = arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        vkt_dot(&t8, 4);
        (*n)++;
    }
    return NULL;
}

static volatile sig_atomic_t handled;
static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

SITE static void *exit_from_thread(void *arg)
{
    (void)arg;
    site_alpha(2);
    exit(5);
}

static void run_threads(int nthreads, void *(*fn)(void *), void *args, size_t argsz)
{
    pthread_t th[64];
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, fn, args ? (char *)args + i * argsz : NULL);
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: shim-app CMD [N...]\n");
        return 2;
    }
    const char *cmd = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 1;
    if (!strcmp(cmd, "mix")) { /* alpha n dot, beta 2n add, gamma n matmul, raw n, host n */
        site_alpha(n);
        site_beta(2 * n);
        site_gamma(n);
        site_raw(n);
        site_host(n);
        vkt_native();
        printf("mix done %d\n", n);
        return argc > 3 ? atoi(argv[3]) : 0;
    }
    if (!strcmp(cmd, "rc")) { /* prints, falls back, exits with argv[3] */
        site_alpha(n);
        printf("hello from the app\n");
        return argc > 3 ? atoi(argv[3]) : 0;
    }
    if (!strcmp(cmd, "none")) {
        vkt_native();
        printf("nothing fell back\n");
        return 0;
    }
    if (!strcmp(cmd, "passthrough")) { /* the shim returns the backend's result unchanged */
        fake_set_rc(-42);
        int r = vkt_dot(&t32, 4);
        printf("rc %d calls %llu\n", r, (unsigned long long)fake_calls());
        return r == -42 && fake_calls() == 1 ? 0 : 1;
    }
    if (!strcmp(cmd, "threads")) { /* argv[2] threads, argv[3] fallbacks each */
        per_thread = argc > 3 ? atoi(argv[3]) : 1000;
        run_threads(n, site_thread, NULL, 0);
        printf("calls %llu\n", (unsigned long long)fake_calls());
        return 0;
    }
    if (!strcmp(cmd, "spin")) { /* n spinning threads; snapshots requested meanwhile */
        long counts[64] = {0};
        stop = 0;
        pthread_t th[64];
        for (int i = 0; i < n; i++)
            pthread_create(&th[i], NULL, site_spin, &counts[i]);
        for (int k = 0; k < 5; k++) {
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
            kill(getpid(), SIGUSR1);
        }
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
        stop = 1;
        long total = 0;
        for (int i = 0; i < n; i++) {
            pthread_join(th[i], NULL);
            total += counts[i];
        }
        printf("spun %ld\n", total);
        return 0;
    }
    if (!strcmp(cmd, "usr1")) { /* the application's own handler, installed after the shim */
        if (argc > 3 && !strcmp(argv[3], "sigaction")) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_usr1;
            sigaction(SIGUSR1, &sa, NULL);
        } else {
            signal(SIGUSR1, on_usr1);
        }
        site_alpha(n);
        raise(SIGUSR1);
        struct sigaction cur;
        sigaction(SIGUSR1, NULL, &cur);
        printf("handled %d own %d\n", (int)handled, cur.sa_handler == on_usr1);
        return handled == 1 && cur.sa_handler == on_usr1 ? 0 : 1;
    }
    if (!strcmp(cmd, "segv")) {
        site_alpha(n);
        volatile int *p = NULL;
        *p = 1;
        return 0;
    }
    if (!strcmp(cmd, "abort")) {
        site_alpha(n);
        abort();
    }
    if (!strcmp(cmd, "thread-exit")) {
        pthread_t th;
        pthread_create(&th, NULL, exit_from_thread, NULL);
        pthread_join(th, NULL);
        return 0;
    }
    if (!strcmp(cmd, "fork")) { /* parent: n alpha; child: 2n beta */
        site_alpha(n);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            site_beta(2 * n);
            exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        printf("child %d\n", (int)pid);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    if (!strcmp(cmd, "exec")) { /* n alpha, then this program again as "mix 1" */
        site_alpha(n);
        fflush(stdout);
        char *args[] = {argv[0], "mix", "1", NULL};
        execv("/proc/self/exe", args);
        return 1;
    }
    if (!strcmp(cmd, "stacks")) { /* n distinct stacks */
        for (int i = 0; i < n; i++)
            fake_recurse((unsigned)i, 14);
        printf("stacks %d\n", n);
        return 0;
    }
    fprintf(stderr, "shim-app: unknown command %s\n", cmd);
    return 2;
}

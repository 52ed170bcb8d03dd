/* field.c - the ways real programs end and misbehave, for the shim's field suite
 * (test_field.c): termination signals, their own signal handlers, SIGKILL after checkpoints,
 * the exec family, _Fork, late fallbacks, file-size limits, daemons that close every
 * descriptor, tiny thread stacks, two RTLD_LOCAL backends, recovered faults, alternate
 * signal stacks. Each command makes known fallbacks, then ends in a known way. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fakevkt.h"

#define SITE __attribute__((noinline))

pid_t _Fork(void);
int recover_probe(volatile int *p, void **addr);
extern char **environ;

static fake_tensor t32 = {0, 2, {16, 32}};

SITE static void site_a(int n)
{
    for (int i = 0; i < n; i++)
        vkt_dot(&t32, 2048);
}

SITE static void site_b(int n)
{
    for (int i = 0; i < n; i++)
        vkt_add(&t32, 64);
}

/* Inlined into its caller at -O2: the census must still show it, at its own line. */
static inline __attribute__((always_inline)) void helper_inlined(int n)
{
    for (int i = 0; i < n; i++)
        vkt_dot(&t32, 64); /* the inlined call */
}

SITE static void site_inl(int n)
{
    helper_inlined(n);
}

static void nap(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static volatile sig_atomic_t got;
static void on_term(int sig)
{
    got = sig;
}

static void *storm(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++)
        kill(getpid(), SIGUSR1);
    return NULL;
}

static void late(void)
{
    site_b(2);
}

/* Recursion until the stack runs out (the limit is never reached on an 8 MiB stack). */
SITE static int deep(int n, int limit)
{
    volatile char pad[512];
    pad[0] = (char)n;
    return n < limit ? deep(n + 1, limit) + pad[0] : 0;
}

static void *small_thread(void *arg)
{
    site_a(*(int *)arg);
    return NULL;
}

static void *fault_thread(void *arg)
{
    (void)arg;
    nap(5);
    volatile int *p = NULL;
    *p = 1;
    return NULL;
}

/* The scheduling policy (field 41 of /proc/self/task/T/stat) of the shim's dumper thread
 * (named "fbcount"), or -1 where there is none. */
static int dumper_policy(void)
{
    char path[300], comm[32], stat[1024];
    int policy = -1;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && policy < 0 && (e = readdir(d));) {
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(path, "r") : NULL;
        if (!f)
            continue;
        bool ours = fgets(comm, sizeof comm, f) && !strncmp(comm, "fbcount", 7);
        fclose(f);
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        if (!ours || !(f = fopen(path, "r")))
            continue;
        if (fgets(stat, sizeof stat, f)) {
            const char *p = strrchr(stat, ')'); /* the fields after the command's name */
            for (int field = 2; p && field < 41; field++)
                p = strchr(p + 1, ' ');
            policy = p ? atoi(p + 1) : -1;
        }
        fclose(f);
    }
    if (d)
        closedir(d);
    return policy;
}

static int cmd_exec(const char *how, const char *self)
{
    char *args[] = {(char *)self, "count", "1", NULL};
    if (!strcmp(how, "execl"))
        execl(self, self, "count", "1", (char *)NULL);
    else if (!strcmp(how, "execlp"))
        execlp(self, self, "count", "1", (char *)NULL);
    else if (!strcmp(how, "execle"))
        execle(self, self, "count", "1", (char *)NULL, environ);
    else if (!strcmp(how, "fexecve")) {
        int fd = open(self, O_RDONLY | O_CLOEXEC);
        fexecve(fd, args, environ);
    } else if (!strcmp(how, "execveat")) {
        execveat(AT_FDCWD, self, args, environ, 0);
    }
    perror("exec");
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: shim-field CMD [N [ARG]]\n");
        return 2;
    }
    const char *cmd = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 1;
    const char *arg = argc > 3 ? argv[3] : "";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!strcmp(cmd, "count")) { /* n fallbacks, exit 0 */
        site_a(n);
        return 0;
    }
    if (!strcmp(cmd, "slow")) { /* n fallbacks, each sleeping arg microseconds in host_result */
        fake_set_delay((unsigned)atoi(arg));
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        site_a(n);
        clock_gettime(CLOCK_MONOTONIC, &b);
        printf("elapsed %lld\n",
               (long long)(b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec));
        return 0;
    }
    if (!strcmp(cmd, "policy")) { /* n fallbacks, arg ms, then the dumper's policy on stdout */
        site_a(n);
        nap(atol(arg));
        printf("dumper policy %d\n", dumper_policy());
        return 0;
    }
    if (!strcmp(cmd, "signal")) { /* n fallbacks, then the signal arg (a number) */
        site_a(n);
        kill(getpid(), atoi(arg));
        nap(5000);
        return 9;
    }
    if (!strcmp(cmd, "pipe")) { /* n fallbacks, then a write to a pipe nobody reads */
        site_a(n);
        int p[2];
        if (pipe(p) != 0)
            return 9;
        close(p[0]);
        (void)!write(p[1], "x", 1);
        return 9;
    }
    if (!strcmp(cmd, "own-term")) { /* its own SIGTERM handler: exits 3 through its own path */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_term;
        sigaction(SIGTERM, &sa, NULL);
        site_a(n);
        kill(getpid(), SIGTERM);
        while (!got)
            nap(1);
        return 3;
    }
    if (!strcmp(cmd, "ignore-term")) { /* SIGTERM ignored: it goes on */
        signal(SIGTERM, SIG_IGN);
        site_a(n);
        kill(getpid(), SIGTERM);
        nap(50);
        site_b(1);
        return 0;
    }
    if (!strcmp(cmd, "views")) { /* what sigaction reports for the signals the shim handles */
        struct sigaction cur;
        int dfl = 0;
        int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGSEGV, SIGABRT};
        site_a(1);
        for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
            sigaction(sigs[i], NULL, &cur);
            dfl += cur.sa_handler == SIG_DFL && !(cur.sa_flags & SA_SIGINFO);
        }
        /* A handler, then the default again: the default's meaning comes back. */
        signal(SIGTERM, on_term);
        sigaction(SIGTERM, NULL, &cur);
        int own = cur.sa_handler == on_term;
        signal(SIGTERM, SIG_DFL);
        printf("default %d own %d\n", dfl, own);
        site_a(n);
        kill(getpid(), SIGTERM);
        nap(5000);
        return 9;
    }
    if (!strcmp(cmd, "storm")) { /* census signals in a storm, then SIGTERM */
        pthread_t t;
        pthread_create(&t, NULL, storm, NULL);
        site_a(n);
        pthread_join(t, NULL);
        kill(getpid(), SIGTERM);
        nap(5000);
        return 9;
    }
    if (!strcmp(cmd, "inline")) { /* n fallbacks from a function inlined into site_inl */
        site_inl(n);
        return 0;
    }
    if (!strcmp(cmd, "sleepy")) { /* n fallbacks, arg ms asleep, exit 0 */
        site_a(n);
        nap(atoi(arg));
        return 0;
    }
    if (!strcmp(cmd, "kill-later")) { /* n, wait, n more, wait, SIGKILL */
        int ms = atoi(arg);
        site_a(n);
        nap(ms);
        site_b(n);
        nap(ms);
        kill(getpid(), SIGKILL);
        return 9;
    }
    if (!strcmp(cmd, "exec"))
        return site_a(n), cmd_exec(arg, argv[0]);
    if (!strcmp(cmd, "exec-env")) { /* what an exec'ed program inherits */
        site_a(n);
        execl("/usr/bin/env", "env", (char *)NULL);
        return 1;
    }
    if (!strcmp(cmd, "_Fork")) { /* child: n b; parent: n a after the child ended */
        pid_t pid = _Fork();
        if (pid == 0) {
            site_b(n);
            exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        site_a(n);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    if (!strcmp(cmd, "late")) { /* an atexit handler registered first falls back at exit */
        atexit(late);
        site_a(n);
        return 0;
    }
    if (!strcmp(cmd, "fsize")) { /* a file-size limit smaller than any dump */
        struct rlimit rl = {256, 256};
        setrlimit(RLIMIT_FSIZE, &rl);
        site_a(n);
        return 0;
    }
    if (!strcmp(cmd, "daemon")) { /* closes every descriptor from 3, opens its own, writes */
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        int f = open(arg, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (f < 0)
            return 8;
        for (int i = 0; i < n; i++)
            fake_recurse((unsigned)i, 12);
        kill(getpid(), SIGUSR1);
        nap(100);
        site_a(n);
        if (write(f, "daemon-ok\n", 10) != 10)
            return 7;
        close(f);
        return 0;
    }
    if (!strcmp(cmd, "setuid")) { /* the dumper thread is running; glibc changes every thread */
        site_a(n);
        if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
            return 6;
        uid_t r, e, s;
        getresuid(&r, &e, &s);
        printf("uid %d\n", (int)e);
        return 0;
    }
    if (!strcmp(cmd, "smallstack")) { /* a 16 KiB thread falls back */
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setstacksize(&at, 16384);
        pthread_t t;
        if (pthread_create(&t, &at, small_thread, &n) != 0)
            return 5;
        pthread_join(t, NULL);
        return 0;
    }
    if (!strcmp(cmd, "twolocal")) { /* two RTLD_LOCAL backends, arg "A:B" */
        char a[512], b[512];
        if (sscanf(arg, "%511[^:]:%511s", a, b) != 2)
            return 2;
        void *ha = dlopen(a, RTLD_NOW | RTLD_LOCAL), *hb = dlopen(b, RTLD_NOW | RTLD_LOCAL);
        if (!ha || !hb)
            return 4;
        int (*dot_a)(fake_tensor *, size_t), (*dot_b)(fake_tensor *, size_t);
        uint64_t (*calls_a)(void), (*calls_b)(void);
        *(void **)&dot_a = dlsym(ha, "vkt_dot");
        *(void **)&dot_b = dlsym(hb, "vkt_dot");
        *(void **)&calls_a = dlsym(ha, "fake_calls");
        *(void **)&calls_b = dlsym(hb, "fake_calls");
        for (int i = 0; i < n; i++)
            dot_a(&t32, 8);
        for (int i = 0; i < 2 * n; i++)
            dot_b(&t32, 8);
        printf("a %llu b %llu\n", (unsigned long long)calls_a(), (unsigned long long)calls_b());
        return calls_a() == (uint64_t)n && calls_b() == 2 * (uint64_t)n ? 0 : 1;
    }
    if (!strcmp(cmd, "recover")) { /* n times: a fallback, then a fault its library recovers */
        int ok = 0;
        for (int i = 0; i < n; i++) {
            site_a(1);
            void *addr = NULL;
            volatile int *bad = (volatile int *)(uintptr_t)(0x1000 + 8 * i);
            ok += recover_probe(bad, &addr) && addr == (void *)bad;
        }
        printf("recovered %d\n", ok);
        return ok == n ? 0 : 1;
    }
    if (!strcmp(cmd, "stacks")) { /* n distinct stacks */
        for (int i = 0; i < n; i++)
            fake_recurse((unsigned)i, 16);
        return 0;
    }
    if (!strcmp(cmd, "segv2")) { /* n stacks, then two threads fault at once */
        for (int i = 0; i < n; i++)
            fake_recurse((unsigned)i, 12);
        pthread_t t1, t2;
        pthread_create(&t1, NULL, fault_thread, NULL);
        pthread_create(&t2, NULL, fault_thread, NULL);
        pthread_join(t1, NULL);
        return 9;
    }
    if (!strcmp(cmd, "altstack")) { /* the legacy 8 KiB alternate stack, then a fault */
        static char mem[8192];
        stack_t ss = {.ss_sp = mem, .ss_size = sizeof mem};
        sigaltstack(&ss, NULL);
        site_a(n);
        volatile int *p = NULL;
        *p = 1;
        return 9;
    }
    if (!strcmp(cmd, "overflow")) { /* a stack overflow, no alternate stack of its own */
        site_a(n);
        return deep(0, 1 << 30);
    }
    fprintf(stderr, "shim-field: unknown command %s\n", cmd);
    return 2;
}

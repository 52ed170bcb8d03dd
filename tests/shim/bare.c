/* bare.c - what a process looks like to itself, printed so that a run under the preloaded shim
 * can be compared line by line with a run without it (test_bare.c). A process that never
 * uses a backend must find nothing of the shim's: no descriptor, thread, signal action,
 * alternate stack, heap block, pending dlerror or heavy library. The signal commands print
 * what sigaction(), signal() and siginterrupt() answer, before and after a backend (loaded
 * with dlopen) has armed the shim. The exec commands fall back N times and then run PROGRAM
 * through execveat(), or vfork() and execv() in the child; fork-first
 * forks before anything used the shim, and both processes fall back afterwards.
 *
 * usage: bare state | bare signals [BACKEND]
 *        bare execveat|vfork-exec BACKEND N PROGRAM
 *        bare fork-first BACKEND N */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* siginterrupt is deprecated, and still what programs (and CPython's signal module) call. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* The kernel's own view of a signal's action, past any sigaction() wrapper. */
struct kaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    unsigned long mask;
};

static int kernel_action(int sig, struct kaction *ka)
{
    return (int)syscall(SYS_rt_sigaction, sig, NULL, ka, sizeof ka->mask);
}

static void print_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int self = d ? dirfd(d) : -1;
    struct dirent *e;
    printf("fds:");
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' && atoi(e->d_name) != self)
            printf(" %s", e->d_name);
    printf("\n");
    if (d)
        closedir(d);
}

static void print_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    printf("threads: %d\n", n);
}

static void print_handlers(void)
{
    printf("actions:");
    for (int sig = 1; sig < 65; sig++) {
        struct kaction ka;
        if (kernel_action(sig, &ka) == 0 && ka.handler != SIG_DFL)
            printf(" %d:%s/%#lx", sig, ka.handler == SIG_IGN ? "ign" : "fn", ka.flags);
    }
    printf("\n");
}

/* Whether a library whose file name starts with name is mapped. */
static bool mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    bool found = false;
    while (f && fgets(line, sizeof line, f)) {
        const char *slash = strrchr(line, '/');
        if (slash && !strncmp(slash + 1, name, strlen(name)))
            found = true;
    }
    if (f)
        fclose(f);
    return found;
}

static int state(void)
{
    /* A pending dlerror first (any dl call clears it), copied and released; then, before this
     * program allocates anything itself (stdio's buffers), the blocks the counting allocator
     * (heapcount.c) saw allocated and not freed, when it is preloaded. */
    static char dlerr[512];
    const char *e = dlerror();
    snprintf(dlerr, sizeof dlerr, "%s", e ? e : "none");
    (void)dlerror();
    void *f = dlsym(RTLD_DEFAULT, "heapcount_live");
    size_t (*live)(void);
    memcpy(&live, &f, sizeof f);
    long blocks = live ? (long)live() : -1;
    stack_t ss;
    sigaltstack(NULL, &ss);
    sigset_t mask;
    sigprocmask(SIG_BLOCK, NULL, &mask);
    if (blocks >= 0)
        printf("heap: %ld blocks live\n", blocks);
    else
        printf("heap: not counted\n");
    printf("dlerror: %s\n", dlerr);
    printf("altstack: %s\n", ss.ss_flags & SS_DISABLE ? "none" : "set");
    printf("blocked:");
    for (int sig = 1; sig < 65; sig++)
        if (sigismember(&mask, sig) == 1)
            printf(" %d", sig);
    printf("\n");
    print_fds();
    print_threads();
    print_handlers();
    /* The shim loads these at their first use: a process without a backend maps none. */
    printf("mapped:");
    static const char *const heavy[] = {"libunwind", "liblzma", "libdw", "libelf"};
    for (size_t i = 0; i < sizeof heavy / sizeof *heavy; i++)
        if (mapped(heavy[i]))
            printf(" %s", heavy[i]);
    printf("\n");
    return 0;
}

static void on_signal(int sig)
{
    (void)sig;
}

/* One line per call: its result, errno where it failed, and the action left behind. */
static void try_sigaction(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    errno = 0;
    int rc = sigaction(sig, &sa, NULL);
    printf("sigaction(%d): %d %s\n", sig, rc, rc ? strerror(errno) : "");
    errno = 0;
    rc = sigaction(sig, NULL, &sa);
    printf("sigaction(%d, query): %d %s\n", sig, rc, rc ? strerror(errno) : "");
}

static void try_signal(int sig, __sighandler_t h, const char *what)
{
    errno = 0;
    __sighandler_t old = signal(sig, h);
    printf("signal(%d, %s): %s %s\n", sig, what, old == SIG_ERR ? "SIG_ERR" : "ok",
           old == SIG_ERR ? strerror(errno) : "");
}

/* The SA_RESTART bit as the program sees it and as the kernel has it. */
static void restart_bits(int sig, const char *when)
{
    struct sigaction sa;
    struct kaction ka;
    sigaction(sig, NULL, &sa);
    kernel_action(sig, &ka);
    printf("%d %s: program sees SA_RESTART %s", sig, when, sa.sa_flags & SA_RESTART ? "on" : "off");
    /* The kernel's bit matters where the program's handler is installed for real; on a
     * signal the shim keeps for itself the shim's handler calls the program's. */
    if (ka.handler != SIG_DFL && ka.handler != SIG_IGN)
        printf(", kernel %s", ka.flags & SA_RESTART ? "on" : "off");
    printf("\n");
}

static void interrupt_cycle(int sig)
{
    try_signal(sig, on_signal, "handler");
    restart_bits(sig, "signal()");
    errno = 0;
    int rc = siginterrupt(sig, 1);
    printf("siginterrupt(%d, 1): %d %s\n", sig, rc, rc ? strerror(errno) : "");
    restart_bits(sig, "siginterrupt(1)");
    try_signal(sig, on_signal, "handler");
    restart_bits(sig, "signal() after siginterrupt(1)");
    rc = siginterrupt(sig, 0);
    printf("siginterrupt(%d, 0): %d\n", sig, rc);
    restart_bits(sig, "siginterrupt(0)");
    try_signal(sig, on_signal, "handler");
    restart_bits(sig, "signal() after siginterrupt(0)");
    try_signal(sig, SIG_DFL, "SIG_DFL");
}

/* Falls back once through the backend at path, so a preloaded shim arms. */
static int fall_back(const char *path, int n)
{
    void *h = dlopen(path, RTLD_NOW);
    void *f = h ? dlsym(h, "vkt_dot") : NULL;
    if (!f) {
        fprintf(stderr, "bare: %s: %s\n", path, dlerror());
        return -1;
    }
    int (*dot)(void *, size_t);
    memcpy(&dot, &f, sizeof f);
    static struct {
        int dtype, rank;
        long long shape[4];
    } t = {0, 1, {4}};
    for (int i = 0; i < n; i++)
        dot(&t, 16);
    return 0;
}

static int signals(const char *backend)
{
    if (backend && fall_back(backend, 1) != 0)
        return 2;
    try_sigaction(0);
    try_sigaction(65);
    try_sigaction(-1);
    try_sigaction(SIGKILL);
    try_signal(0, on_signal, "handler");
    try_signal(65, on_signal, "handler");
    try_signal(SIGSTOP, on_signal, "handler");
    try_signal(SIGUSR2, SIG_ERR, "SIG_ERR");
    errno = 0;
    int rc = siginterrupt(0, 1);
    printf("siginterrupt(0, 1): %d %s\n", rc, rc ? strerror(errno) : "");
    interrupt_cycle(SIGUSR2);
    interrupt_cycle(SIGUSR1); /* the census signal, once the shim is armed */
    interrupt_cycle(SIGTERM); /* a termination signal the shim stands in for */
    return 0;
}

static int run_exec(const char *how, const char *backend, int n, const char *program)
{
    if (fall_back(backend, n) != 0)
        return 2;
    char *argv[] = {(char *)program, NULL};
    if (!strcmp(how, "execveat")) {
        execveat(AT_FDCWD, program, argv, environ, 0);
    } else {
        /* The child shares this process's memory until it execs: the census stays the
         * parent's, written once at its exit. */
        pid_t pid = vfork();
        if (pid == 0) {
            execv(program, argv);
            _exit(127);
        }
        int status;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            return 4;
        printf("parent after vfork\n");
        return 0;
    }
    fprintf(stderr, "bare: %s %s: %s\n", how, program, strerror(errno));
    return 3;
}

/* The child of a fork made before the shim was used falls back n times, the parent once. */
static int fork_first(const char *backend, int n)
{
    pid_t pid = fork();
    if (pid == 0)
        exit(fall_back(backend, n) ? 2 : 0);
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        return 4;
    return fall_back(backend, 1) ? 2 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "state"))
        return state();
    if (argc >= 2 && !strcmp(argv[1], "signals"))
        return signals(argc > 2 ? argv[2] : NULL);
    if (argc == 5 && (!strcmp(argv[1], "execveat") || !strcmp(argv[1], "vfork-exec")))
        return run_exec(argv[1], argv[2], atoi(argv[3]), argv[4]);
    if (argc == 4 && !strcmp(argv[1], "fork-first"))
        return fork_first(argv[2], atoi(argv[3]));
    fprintf(stderr, "usage: see bare.c\n");
    return 2;
}

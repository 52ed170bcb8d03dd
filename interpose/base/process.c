/* process.c - pid, host, program name, argv, census id and rank, read once (and again in a
 * fork child) so that the crash handler can write them without calling anything unsafe.
 * What is read at load is what cannot be read later (the arguments before the program can
 * rewrite them, the pid a fork child is told apart by, the parent, the start) and no more,
 * by early.h's rules: every process the shim is loaded into pays for it at every exec. argv
 * comes from the arguments the loader passes every constructor, the start is a counter
 * reading, the rest is made at the first use. */
#include <pthread.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "early.h"

/* Page-aligned: what load writes (the small facts first, then argv) is one page. */
fbc_process fbc_proc __attribute__((aligned(4096))) = {.rank = -1};

/* The program's arguments, NUL-separated as /proc/self/cmdline gives them (truncated to
 * fit), from those the loader passes every constructor (also a library dlopen-ed later:
 * attach). Before any other constructor of the shim. */
FBC_EARLY __attribute__((constructor(101))) static void keep_args(int argc, char **argv,
                                                                  char **envp)
{
    (void)envp;
    size_t len = 0, cap = sizeof fbc_proc.argv - 1;
    for (int i = 0; argv && i < argc && argv[i] && len < cap; i++) {
        const char *a = argv[i];
        do
            fbc_proc.argv[len++] = *a;
        while (*a++ && len < cap);
    }
    fbc_proc.argv_len = len;
    fbc_proc.argv[len] = '\0';
}

/* The same from /proc: a loader that passes constructors nothing, or a use of the shim from
 * another library's constructor before the shim's own ran. */
static void read_cmdline(void)
{
    size_t len = 0, cap = sizeof fbc_proc.argv - 1;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t r;
    while (fd >= 0 && len < cap &&
           ((r = read(fd, fbc_proc.argv + len, cap - len)) > 0 || (r < 0 && errno == EINTR)))
        if (r > 0)
            len += (size_t)r;
    if (fd >= 0)
        close(fd);
    fbc_proc.argv_len = len;
    fbc_proc.argv[len] = '\0';
}

static pthread_once_t exe_once = PTHREAD_ONCE_INIT;
static void read_rank(void);

/* %e: the program as it was invoked (argv[0]'s last part), else the executable's name, kept
 * to one path component (it goes into a file name). Made at its first use (at load under
 * `fbcount run`, whose run log names every process): by early.h's rules. complete() does
 * not make it: an empty argv[0] reads the executable's path through complete()'s once. */
FBC_EARLY static void make_name(void)
{
    const char *name = fbc_proc.argv_len && fbc_proc.argv[0] ? fbc_proc.argv : fbc_process_exe();
    for (const char *p = name; *p; p++)
        if (*p == '/')
            name = p + 1;
    if (!*name)
        name = "unknown";
    size_t len = 0;
    for (; name[len] && len < sizeof fbc_proc.name - 1; len++) {
        unsigned char c = (unsigned char)name[len];
        fbc_proc.name[len] = c == '/' || c < 0x20 ? '_' : (char)c;
    }
    fbc_proc.name[len] = '\0';
}

FBC_EARLY const char *fbc_process_name(void)
{
    fbc_early_once(&fbc_proc.name_state, make_name);
    return fbc_proc.name;
}

/* What the first use adds, the facts only a census needs: the executable's path, the host,
 * the rank. (The census id is made at load: a child forked before the first use,
 * when no fork handler of the shim's runs, names its parent's.) */
static void complete(void)
{
    ssize_t n = readlink("/proc/self/exe", fbc_proc.exe, sizeof fbc_proc.exe - 1);
    fbc_proc.exe[n > 0 ? n : 0] = '\0';
    if (gethostname(fbc_proc.host, sizeof fbc_proc.host - 1) != 0)
        strcpy(fbc_proc.host, "unknown");
    read_rank();
}

const char *fbc_process_exe(void)
{
    pthread_once(&exe_once, complete);
    return fbc_proc.exe;
}

/* A census id: 128 random bits. Pids repeat across pid namespaces and after exec, so dumps
 * are told apart by this instead. getrandom is a plain system call: safe in a fork child. */
FBC_EARLY static void new_id(char out[33])
{
    unsigned char r[16];
    long n = fbc_sys3(SYS_getrandom, (long)r, sizeof r, GRND_NONBLOCK);
    if (n != (long)sizeof r) {
        /* No entropy yet (early boot): time and pid still make a collision unlikely. */
        uint64_t a = fbc_now_ns() ^ ((uint64_t)getpid() << 32),
                 b = (uint64_t)time(NULL) ^ (uintptr_t)&n;
        for (int i = 0; i < 8; i++) {
            r[i] = (unsigned char)(a >> (8 * i));
            r[8 + i] = (unsigned char)(b >> (8 * i));
        }
    }
    for (int i = 0; i < 32; i++) {
        unsigned d = (r[i / 2] >> (i % 2 ? 0 : 4)) & 15; /* no table: no page of read-only data */
        out[i] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    }
    out[32] = '\0';
}

/* The rank of an MPI or Slurm job, from the first variable set; -1 when none. */
static void read_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = secure_getenv(vars[i]);
        if (!v)
            continue;
        char *end;
        errno = 0;
        long r = strtol(v, &end, 10);
        if (errno || end == v || *end || r < 0 || r > 100000000) {
            fbc_warn("%s=%.32s is not a rank; the dump records none", vars[i], v);
            return;
        }
        fbc_proc.rank = r;
        return;
    }
}

FBC_EARLY void fbc_process_load(void)
{
    fbc_proc.pid = fbc_sys_getpid();
    fbc_proc.ppid = (int)fbc_sys3(SYS_getppid, 0, 0, 0);
    if (!fbc_proc.argv_len)
        read_cmdline();
    new_id(fbc_proc.id);
    if (!(fbc_proc.start_ticks = fbc_early_ticks()))
        fbc_proc.start_ns = fbc_now_ns(); /* no counter: the clock itself */
}

uint64_t fbc_process_start_ns(void)
{
    uint64_t ns = __atomic_load_n(&fbc_proc.start_ns, __ATOMIC_ACQUIRE);
    if (!ns) { /* racing callers (a signal handler too) compute the same; any store wins */
        ns = fbc_clock_ns_at(fbc_proc.start_ticks);
        __atomic_store_n(&fbc_proc.start_ns, ns ? ns : 1, __ATOMIC_RELEASE);
    }
    return ns;
}

void fbc_process_start_time(char out[21])
{
    uint64_t unix_s = __atomic_load_n(&fbc_proc.start_unix, __ATOMIC_ACQUIRE);
    if (!unix_s) {
        struct timespec real, mono;
        uint64_t start = fbc_process_start_ns();
        clock_gettime(CLOCK_REALTIME, &real);
        clock_gettime(CLOCK_MONOTONIC, &mono);
        uint64_t since = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec - start;
        uint64_t real_ns = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec;
        unix_s = (real_ns > since ? real_ns - since : 0) / 1000000000u;
        __atomic_store_n(&fbc_proc.start_unix, unix_s, __ATOMIC_RELEASE);
    }
    fbc_fmt_time(out, unix_s);
}

FBC_EARLY void fbc_process_log(void)
{
    if (!fbc_cfg.run_log[0])
        return;
    long fd = fbc_sys4(SYS_openat, AT_FDCWD, (long)fbc_cfg.run_log,
                       O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return;
    char line[sizeof fbc_proc.id + 24 + sizeof fbc_proc.name + 1];
    size_t n = 0;
    for (const char *p = fbc_proc.id; *p; p++)
        line[n++] = *p;
    line[n++] = ' ';
    n += fbr_fmt_u64(line + n, (uint64_t)fbc_proc.pid);
    line[n++] = ' ';
    for (const char *p = fbc_process_name(); *p; p++)
        line[n++] = *p;
    line[n++] = '\n';
    fbc_sys3(SYS_write, fd, (long)line, (long)n);
    fbc_sys3(SYS_close, fd, 0, 0);
}

void fbc_process_forked(void)
{
    memcpy(fbc_proc.parent_id, fbc_proc.id, sizeof fbc_proc.id);
    new_id(fbc_proc.id);
    fbc_proc.pid = (int)getpid();
    fbc_proc.ppid = (int)getppid();
    fbc_proc.forked = true;
    fbc_proc.start_ns = fbc_now_ns();
    fbc_proc.start_unix = (uint64_t)time(NULL);
    fbc_process_log(); /* a process of its own under `fbcount run` */
}

void fbc_mutex_fork(pthread_mutex_t *m, int phase)
{
    if (phase == 0)
        pthread_mutex_lock(m);
    else if (phase == 1)
        pthread_mutex_unlock(m);
    else
        pthread_mutex_init(m, NULL);
}

#define FORK_LOCKS 8
static pthread_mutex_t *fork_locks[FORK_LOCKS];
static unsigned nfork_locks, fork_held; /* registered; taken by the last prepare */

void fbc_mutex_fork_register(pthread_mutex_t *m)
{
    unsigned i = __atomic_fetch_add(&nfork_locks, 1, __ATOMIC_RELAXED);
    if (i < FORK_LOCKS)
        __atomic_store_n(&fork_locks[i], m, __ATOMIC_RELEASE);
}

void fbc_mutex_fork_registered(int phase)
{
    unsigned n = __atomic_load_n(&nfork_locks, __ATOMIC_RELAXED);
    if (n > FORK_LOCKS)
        n = FORK_LOCKS;
    /* The parent releases only what its prepare took (one may be registered in between);
     * a child makes every one anew, as no other thread of it holds one. */
    if (phase == 0)
        fork_held = n;
    else if (phase == 1)
        n = fork_held;
    for (unsigned i = 0; i < n; i++) {
        pthread_mutex_t *m = __atomic_load_n(&fork_locks[i], __ATOMIC_ACQUIRE);
        if (m)
            fbc_mutex_fork(m, phase);
    }
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int fbc_thread_create(pthread_t *t, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
#ifdef FBC_NO_THREAD_WRAPPER
    /* No wrapper to pass: the sanitizer's interceptor, first in line, must see the thread. */
    return pthread_create(t, attr, start, arg);
#else
    static create_fn real;
    create_fn fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!fn) {
        void *p = dlsym(RTLD_NEXT, "pthread_create");
        memcpy(&fn, &p, sizeof fn);
        if (!fn)
            return EAGAIN;
        __atomic_store_n(&real, fn, __ATOMIC_RELEASE);
    }
    return fn(t, attr, start, arg);
#endif
}

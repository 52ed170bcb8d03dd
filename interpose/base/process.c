/* process.c - pid, host, program name, argv, census id and rank, read once (and again in a
 * fork child) so that the crash handler can write them without calling anything unsafe.
 * Nothing here opens /proc at load: every process the shim is loaded into pays for load
 * time, and a lookup in /proc costs more than the rest of it. argv comes from the arguments
 * the loader passes every constructor, the executable's path is read at the first use. */
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

/* Page-aligned: what the constructor writes (the small facts first) is then one page. */
fbc_process fbc_proc __attribute__((aligned(4096))) = {.rank = -1};
static uint64_t start_unix; /* the start, formatted into fbc_proc.start_time at the first use */

/* The program's arguments, NUL-separated as /proc/self/cmdline gives them (truncated to
 * fit), from those the loader passes every constructor (also a library dlopen-ed later:
 * attach). Before any other constructor of the shim. */
__attribute__((constructor(101))) static void keep_args(int argc, char **argv, char **envp)
{
    (void)envp;
    size_t len = 0, cap = sizeof fbc_proc.argv - 1;
    for (int i = 0; argv && i < argc && argv[i] && len < cap; i++) {
        size_t n = strlen(argv[i]) + 1;
        n = n < cap - len ? n : cap - len;
        memcpy(fbc_proc.argv + len, argv[i], n);
        len += n;
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

/* What the first use adds, the facts only a census needs: the executable's path, the start
 * time written out, the host, the rank. (The census id is made at load: a child forked before
 * the first use, when no fork handler of the shim's runs, names its parent's.) */
static void complete(void)
{
    ssize_t n = readlink("/proc/self/exe", fbc_proc.exe, sizeof fbc_proc.exe - 1);
    fbc_proc.exe[n > 0 ? n : 0] = '\0';
    fbc_fmt_time(fbc_proc.start_time, start_unix);
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
static void new_id(char out[33])
{
    unsigned char r[16];
    ssize_t n = getrandom(r, sizeof r, GRND_NONBLOCK);
    if (n != (ssize_t)sizeof r) {
        /* No entropy yet (early boot): time and pid still make a collision unlikely. */
        uint64_t a = fbc_now_ns() ^ ((uint64_t)getpid() << 32), b = (uint64_t)time(NULL) ^ (uintptr_t)&n;
        for (int i = 0; i < 8; i++) {
            r[i] = (unsigned char)(a >> (8 * i));
            r[8 + i] = (unsigned char)(b >> (8 * i));
        }
    }
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hex[r[i] >> 4];
        out[2 * i + 1] = hex[r[i] & 15];
    }
    out[32] = '\0';
}

static void stamp_start(void)
{
    fbc_proc.start_ns = fbc_now_ns();
    start_unix = (uint64_t)time(NULL);
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

void fbc_process_load(void)
{
    fbc_proc.pid = (int)getpid();
    fbc_proc.ppid = (int)getppid();
    if (!fbc_proc.argv_len)
        read_cmdline();
    /* %e: the program as it was invoked (argv[0]'s last part), else the executable's name. */
    const char *name = fbc_proc.argv_len && fbc_proc.argv[0] ? fbc_proc.argv : fbc_process_exe();
    const char *slash = strrchr(name, '/');
    name = slash ? slash + 1 : name;
    if (!*name)
        name = "unknown";
    size_t len = strlen(name) < sizeof fbc_proc.name - 1 ? strlen(name) : sizeof fbc_proc.name - 1;
    memcpy(fbc_proc.name, name, len);
    fbc_proc.name[len] = '\0';
    /* A name goes into a file name: keep it to one path component. */
    for (char *p = fbc_proc.name; *p; p++)
        if (*p == '/' || (unsigned char)*p < 0x20)
            *p = '_';
    new_id(fbc_proc.id);
    stamp_start();
}

void fbc_process_forked(void)
{
    memcpy(fbc_proc.parent_id, fbc_proc.id, sizeof fbc_proc.id);
    new_id(fbc_proc.id);
    fbc_proc.pid = (int)getpid();
    fbc_proc.ppid = (int)getppid();
    fbc_proc.forked = true;
    stamp_start();
    fbc_fmt_time(fbc_proc.start_time, start_unix);
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

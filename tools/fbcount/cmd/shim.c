/* shim.c - locate libfbcount.so, so the same binary works from the build tree and installed;
 * and tell from /proc whether a process runs it (see shim.h). */
#include "grow.h"
#include "shim.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "choice.h"
#include "contract.h"
#include "fields.h"
#include "readfile.h"
#include "signals.h"

static int usable(const char *p)
{
    return access(p, R_OK) == 0;
}

int fbs_find(char *buf, size_t len)
{
    const char *env = getenv("FBCOUNT_SHIM");
    if (env && *env) {
        char abs[PATH_MAX];
        if (usable(env) && realpath(env, abs)) {
            snprintf(buf, len, "%s", abs);
            return 0;
        }
        snprintf(buf, len, "FBCOUNT_SHIM=%s (not readable)", env);
        return -1;
    }
    char self[PATH_MAX], cand[PATH_MAX + 64], abs[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    cand[0] = '\0';
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        snprintf(cand, sizeof cand, "%s/../../interpose/libfbcount.so", self);
        if (usable(cand) && realpath(cand, abs)) {
            snprintf(buf, len, "%s", abs);
            return 0;
        }
        /* An installed tree beside this binary (<prefix>/bin and <prefix>/<libdir>), even one
         * moved or staged with --destdir: its own shim, never another installation's. */
        snprintf(cand, sizeof cand, "%s/../%s/libfbcount.so", self, FBCOUNT_LIBDIR);
        if (usable(cand) && realpath(cand, abs)) {
            snprintf(buf, len, "%s", abs);
            return 0;
        }
    }
    if (usable(FBCOUNT_SHIM_INSTALLED)) {
        snprintf(buf, len, "%s", FBCOUNT_SHIM_INSTALLED);
        return 0;
    }
    snprintf(buf, len, "%s%s%s", cand, cand[0] ? ", " : "", FBCOUNT_SHIM_INSTALLED);
    return -1;
}

/* /proc files are small but unbounded in principle (a huge environment): cap what is read. */
#define PROC_MAX ((size_t)16 << 20)

static char *proc_read(pid_t pid, const char *what, size_t *len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, what);
    return fbr_read_file(path, PROC_MAX, len);
}

/* The attach's variables of an attached process: the memfd its shim holds (see
 * interpose/hooks/attach.c), NUL-separated lines; NULL when it holds none. */
static char *attach_vars(pid_t pid, size_t *n)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%ld/fd", (long)pid);
    DIR *d = opendir(dir);
    char *text = NULL;
    struct dirent *e;
    while (d && !text && (e = readdir(d))) {
        char link[PATH_MAX + 80], to[128];
        snprintf(link, sizeof link, "%s/%s", dir, e->d_name);
        ssize_t l = readlink(link, to, sizeof to - 1);
        if (l <= 0)
            continue;
        to[l] = '\0';
        if (strncmp(to, "/memfd:" FBR_ATTACH_MEMFD " ", sizeof "/memfd:" FBR_ATTACH_MEMFD))
            continue;
        text = fbr_read_file(link, PROC_MAX, n);
        for (size_t i = 0; text && i < *n; i++)
            if (text[i] == '\n')
                text[i] = '\0';
    }
    if (d)
        closedir(d);
    return text;
}

bool fbs_attached(pid_t pid)
{
    size_t n;
    char *v = attach_vars(pid, &n);
    free(v);
    return v != NULL;
}

bool fbs_environ(pid_t pid, const char *name, char *buf, size_t len)
{
    size_t n, nl = strlen(name);
    char *env = attach_vars(pid, &n);
    if (!env)
        env = proc_read(pid, "environ", &n);
    bool found = false;
    for (size_t i = 0; env && i < n; i += strlen(env + i) + 1)
        if (!strncmp(env + i, name, nl) && env[i + nl] == '=') {
            snprintf(buf, len, "%s", env + i + nl + 1);
            found = true;
        }
    free(env);
    return found;
}

/* Whether a line of /proc/PID/maps maps a file whose name starts with libfbcount. */
static bool maps_shim(const char *maps)
{
    for (const char *line = maps; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t l = end ? (size_t)(end - line) : strlen(line);
        const char *path = memchr(line, '/', l);
        if (path) {
            const char *base = path;
            for (const char *p = path; p < line + l; p++)
                if (*p == '/')
                    base = p + 1;
            if (!strncmp(base, "libfbcount", 10))
                return true;
        }
        line = end ? end + 1 : NULL;
    }
    return false;
}

bool fbs_mapped_shim(pid_t pid, char *path, size_t len)
{
    size_t n;
    char *maps = proc_read(pid, "maps", &n);
    bool found = false;
    for (char *line = maps; line && *line && !found;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        const char *p = strchr(line, '/'), *base = p ? strrchr(p, '/') + 1 : NULL;
        if (base && !strncmp(base, "libfbcount", 10)) {
            snprintf(path, len, "%s", p);
            found = true;
        }
        line = end ? end + 1 : NULL;
    }
    free(maps);
    return found;
}

/* The SigCgt mask of /proc/PID/status: bit sig-1 is set when sig has a handler. */
static bool catches(const char *status, int sig)
{
    const char *p = strstr(status, "\nSigCgt:");
    if (!p)
        return false;
    p += 8;
    while (*p == ' ' || *p == '\t')
        p++;
    unsigned long long mask = strtoull(p, NULL, 16);
    return sig >= 1 && sig <= 64 && (mask >> (sig - 1) & 1);
}

int fbs_probe(pid_t pid, int *sig, char *why, size_t len)
{
    size_t n;
    char *maps = proc_read(pid, "maps", &n);
    if (!maps) {
        int e = errno;
        snprintf(why, len, "%s",
                 e == ENOENT   ? "no such process"
                 : e == EACCES ? "cannot read its memory map (permission denied)"
                               : strerror(e));
        errno = e == ENOENT ? ESRCH : e;
        return -1;
    }
    bool shim = maps_shim(maps);
    free(maps);
    if (!shim) {
        snprintf(why, len, "does not run libfbcount.so (not in /proc/%ld/maps)", (long)pid);
        errno = EINVAL;
        return -1;
    }
    char value[256];
    int s = SIGUSR1;
    if (fbs_environ(pid, "FBCOUNT_SIGNAL", value, sizeof value) && fbr_signal_parse(value, &s) != 0)
        s = SIGUSR1; /* the shim warns and keeps its default */
    if (s == 0) {
        snprintf(why, len, "has no census signal (FBCOUNT_SIGNAL=none)");
        errno = EINVAL;
        return -1;
    }
    char *status = proc_read(pid, "status", &n);
    bool caught = status && catches(status, s);
    free(status);
    if (!caught) {
        snprintf(why, len, "does not catch its census signal %s (its shim has not set it up)",
                 fbr_signal_name(s));
        errno = EINVAL;
        return -1;
    }
    *sig = s;
    return 0;
}

int fbs_signal(pid_t pid, int want, int *sent, char *why, size_t len)
{
    int pfd = pidfd_open(pid, 0);
    if (pfd < 0 && errno == ESRCH) {
        snprintf(why, len, "no such process");
        return -1;
    }
    int sig, rc = -1;
    if (fbs_probe(pid, &sig, why, len) != 0)
        goto out;
    if (want > 0 && want != sig) {
        snprintf(why, len, "its census signal is %s (FBCOUNT_SIGNAL), not %s", fbr_signal_name(sig),
                 fbr_signal_name(want));
        goto out;
    }
    if ((pfd >= 0 ? pidfd_send_signal(pfd, sig, NULL, 0) : kill(pid, sig)) != 0) {
        snprintf(why, len, "cannot signal it: %s", strerror(errno));
        goto out;
    }
    *sent = sig;
    rc = 0;
out:
    if (pfd >= 0)
        close(pfd);
    return rc;
}

typedef struct {
    pid_t pid, ppid;
} pp;

static int by_ppid(const void *a, const void *b)
{
    const pp *x = a, *y = b;
    return (x->ppid > y->ppid) - (x->ppid < y->ppid);
}

pid_t *fbs_descendants(pid_t root, size_t *n)
{
    *n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return NULL;
    pp *all = NULL;
    size_t na = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[got] = '\0';
        /* The command name may hold spaces and parentheses: the fields resume after the
         * last ')'. */
        char *rp = strrchr(buf, ')');
        long ppid;
        char state;
        if (!rp || sscanf(rp + 1, " %c %ld", &state, &ppid) != 2 || state == 'Z')
            continue;
        if (!fbr_grow(&all, &cap, na, sizeof *all, 256))
            break;
        all[na++] = (pp){(pid_t)atol(e->d_name), (pid_t)ppid};
    }
    closedir(d);
    qsort(all, na, sizeof *all, by_ppid);
    pid_t *out = malloc((na ? na : 1) * sizeof *out);
    size_t head = 0, tail = 0;
    pid_t cur = root;
    /* Breadth first: out[] doubles as the queue of processes whose children are next. */
    for (;;) {
        pp key = {0, cur};
        pp *hit = na ? bsearch(&key, all, na, sizeof *all, by_ppid) : NULL;
        while (hit && hit > all && hit[-1].ppid == cur)
            hit--;
        for (; out && hit && hit < all + na && hit->ppid == cur; hit++)
            if (hit->pid != root && tail < na)
                out[tail++] = hit->pid;
        if (head == tail)
            break;
        cur = out[head++];
    }
    free(all);
    if (!tail) {
        free(out);
        return NULL;
    }
    *n = tail;
    return out;
}

bool fbs_is_supervisor(pid_t pid)
{
    size_t n;
    char *cmd = proc_read(pid, "cmdline", &n);
    bool yes = false;
    if (cmd && n) {
        const char *argv0 = cmd, *slash = strrchr(argv0, '/');
        const char *base = slash ? slash + 1 : argv0;
        size_t l0 = strlen(argv0);
        yes = !strncmp(base, "fbcount", 7) && l0 + 1 < n && !strcmp(cmd + l0 + 1, "run");
    }
    free(cmd);
    return yes;
}

#define VERSION_TEXT(v) #v
#define VERSION(v) VERSION_TEXT(v)

const fbx_choice fbs_modes[FBR_NMODES] = {
#define MODE_CHOICE(id, name, what) {name, FBR_MODE_##id},
    FBR_MODES(MODE_CHOICE)
#undef MODE_CHOICE
};

const char *fbs_mode_values(void)
{
    static char b[64];
    return fbx_choices(fbs_modes, FBR_NMODES, "|", b, sizeof b);
}

int fbs_settings(const fbs_request *req, fbs_setting out[FBR_NVARS], char *buf, size_t cap)
{
    if (!fbr_run_output(req->dir, buf, cap))
        return -1;
    const fbs_setting all[] = {
        {FBR_VAR_OUTPUT, buf},
        {FBR_VAR_QUIET, "1"},
        {FBR_VAR_CONTRACT, VERSION(FBR_CONTRACT_VERSION)},
        {FBR_VAR_RUN_LOG, req->log},
        {FBR_VAR_MODE, req->mode},
        {FBR_VAR_ALLOW, req->allow},
        {FBR_VAR_EXIT, req->exits},
        {FBR_VAR_BACKEND, req->backends},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i].value && *all[i].value)
            out[n++] = all[i];
    return n;
}

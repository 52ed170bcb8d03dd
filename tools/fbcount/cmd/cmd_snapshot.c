/* cmd_snapshot.c - fbcount snapshot: a live census of a running process.
 *
 * A signal is sent only to a process that runs the shim and catches its census signal
 * (shim.h, fbs_probe): the census signal's default action ends a process, so a snapshot of
 * the wrong pid must not kill it. Given the pid of an `fbcount run` supervisor, the
 * processes below it that run the shim are asked instead.
 *
 * Rather than re-expanding each process's FBCOUNT_OUTPUT template (its %e, %h and the .<n>
 * rule), we watch the template's directory and take the first new or rewritten dump whose
 * process.pid is the target's: the shim renames dumps into place, so a dump that appears is
 * complete.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "contract.h"
#include "shim.h"
#include "signals.h"
#include "table.h"

static const fbx_opt options[] = {
    {'t', false, "timeout", "S", "seconds to wait (default 5; fractions allowed)", NULL, NULL},
    {'s', false, "signal", "SIG", "send only if SIG is the process's census signal (a check)", NULL,
     NULL},
    {'d', false, "dir", "DIR", "look for the dump in DIR instead", NULL, NULL},
    {'h', true, "help", NULL, "this text", NULL, NULL},
};
#define NOPTIONS (sizeof options / sizeof *options)

static void help(void)
{
    fputs("usage: fbcount snapshot [options] PID\n\n"
          "Asks a process running under libfbcount.so for a census (its census signal), waits\n"
          "for the snapshot dump it writes, and prints its report. The signal is sent only when\n"
          "/proc shows that PID maps libfbcount and catches the signal its FBCOUNT_SIGNAL names\n"
          "(USR1 by default); otherwise nothing is sent and the exit status is 7. Given the pid\n"
          "of an `fbcount run`, every process that run watches and that runs the shim is asked.\n"
          "The dump directory comes from each process's FBCOUNT_OUTPUT (read from\n"
          "/proc/PID/environ, relative to /proc/PID/cwd).\n\n",
          stdout);
    fbx_put_options(stdout, options, NOPTIONS, 18);
    putchar('\n');
    fbx_put_exit_codes(stdout, "snapshot");
}

typedef struct seen {
    char *name;
    struct timespec mtime;
} seen;

/* A process asked for a snapshot, and where its dump will appear. */
typedef struct {
    pid_t pid;
    char dir[PATH_MAX + 64];
    seen *before;
    size_t nbefore;
    bool got;
} target;

/* Reads /proc/PID/environ for FBCOUNT_OUTPUT and turns its directory into an absolute
 * path through /proc/PID/cwd. */
static int find_dir(long pid, char *dir, size_t len)
{
    char tmpl[PATH_MAX];
    if (!fbs_environ((pid_t)pid, fbr_var_names[FBR_VAR_OUTPUT], tmpl, sizeof tmpl))
        snprintf(tmpl, sizeof tmpl, "%s", FBR_DEFAULT_OUTPUT);
    if (!strcmp(tmpl, FBR_OUTPUT_NONE))
        return -2;
    char *slash = strrchr(tmpl, '/');
    const char *d = ".";
    if (slash == tmpl)
        d = "/";
    else if (slash) {
        *slash = '\0';
        d = tmpl;
    }
    char joined[PATH_MAX + 64];
    if (d[0] == '/')
        snprintf(joined, sizeof joined, "%s", d);
    else
        snprintf(joined, sizeof joined, "/proc/%ld/cwd/%s", pid, d);
    /* Resolved now so messages name the real directory, not the /proc link. */
    char real[PATH_MAX];
    snprintf(dir, len, "%s", realpath(joined, real) ? real : joined);
    return 0;
}

static seen *scan(const char *dir, size_t *n)
{
    DIR *dp = opendir(dir);
    seen *s = NULL;
    *n = 0;
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        if (!fbr_is_dump_name(e->d_name))
            continue;
        char p[PATH_MAX + 256];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &sb) != 0)
            continue;
        seen *ns = realloc(s, (*n + 1) * sizeof *ns);
        if (!ns)
            break;
        s = ns;
        if (!(s[*n].name = strdup(e->d_name)))
            break;
        s[(*n)++].mtime = sb.st_mtim;
    }
    if (dp)
        closedir(dp);
    return s;
}

static void free_seen(seen *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i].name);
    free(s);
}

static bool changed(const seen *before, size_t nb, const seen *e)
{
    for (size_t i = 0; i < nb; i++)
        if (!strcmp(before[i].name, e->name))
            return before[i].mtime.tv_sec != e->mtime.tv_sec ||
                   before[i].mtime.tv_nsec != e->mtime.tv_nsec;
    return true;
}

/* Looks in t's directory for a new dump of t's process; adds it to c. */
static void look(target *t, fbm_census *c)
{
    size_t na;
    seen *after = scan(t->dir, &na);
    for (size_t i = 0; i < na && !t->got; i++) {
        if (!changed(t->before, t->nbefore, &after[i]))
            continue;
        char p[PATH_MAX + 256], err[512];
        snprintf(p, sizeof p, "%s/%s", t->dir, after[i].name);
        fbd_status st;
        fbd_dump *d = fbd_load_file(p, &st, err, sizeof err);
        if (!d || fbd_pid(d) != t->pid) {
            fbd_free(d);
            continue;
        }
        printf("fbcount: snapshot of process %ld: %s\n", (long)t->pid, p);
        if (fbm_census_add(c, d) == 0)
            t->got = true;
    }
    free_seen(after, na);
}

/* The processes to ask: pid itself when it runs the shim, else those an `fbcount run`
 * supervisor watches. Returns the count, or -1 after an error line (exit 7). */
static long pick(long pid, target **out)
{
    int sig;
    char why[512];
    *out = NULL;
    if (fbs_probe((pid_t)pid, &sig, why, sizeof why) == 0) {
        *out = calloc(1, sizeof **out);
        if (!*out)
            return -1;
        (*out)->pid = (pid_t)pid;
        return 1;
    }
    if (errno == ESRCH) {
        fbx_error("snapshot", "process %ld: no such process", pid);
        return -1;
    }
    if (!fbs_is_supervisor((pid_t)pid)) {
        fbx_error("snapshot", "process %ld %s: nothing sent (a census signal would end it)", pid,
                  why);
        return -1;
    }
    size_t n, k = 0;
    pid_t *d = fbs_descendants((pid_t)pid, &n);
    target *t = calloc(n ? n : 1, sizeof *t);
    for (size_t i = 0; t && i < n; i++)
        if (fbs_probe(d[i], &sig, why, sizeof why) == 0)
            t[k++].pid = d[i];
    free(d);
    if (!k) {
        fbx_error("snapshot",
                  "process %ld is an fbcount run; none of the %zu processes it "
                  "watches runs libfbcount.so yet: nothing sent",
                  pid, n);
        free(t);
        return -1;
    }
    *out = t;
    return (long)k;
}

typedef struct {
    double timeout;
    int want;
    const char *dir;
    long pid;
} snap_opts;

static int option(void *ctx, int key, char *arg)
{
    snap_opts *o = ctx;
    char *end;
    switch (key) {
    case 't':
        o->timeout = strtod(arg, &end);
        if (*end || end == arg || !(o->timeout > 0) || o->timeout > 86400) {
            fbx_error("snapshot", "--timeout: expected seconds, got '%s'", arg);
            return FBX_USAGE;
        }
        return FBX_OK;
    case 's':
        if (fbr_signal_parse(arg, &o->want) != 0 || o->want == 0) {
            fbx_error("snapshot",
                      "--signal: '%s' is not a census signal (USR1, USR2, "
                      "WINCH, URG or a real-time signal)",
                      arg);
            return FBX_USAGE;
        }
        return FBX_OK;
    case 'd': o->dir = arg; return FBX_OK;
    case 'h': help(); return -1;
    }
    return FBX_OK; /* fbx_options gives the keys of the table's rows alone */
}

static int parse(snap_opts *o, int argc, char **argv)
{
    int rc = fbx_options(argc, argv, options, NOPTIONS, false, option, o);
    if (rc != FBX_OK)
        return rc;
    char *end;
    o->pid = optind + 1 == argc ? strtol(argv[optind], &end, 10) : 0;
    if (optind + 1 != argc || *end || o->pid <= 0 || o->pid > INT_MAX) {
        fbx_error("snapshot", "expected one PID (try --help)");
        return FBX_USAGE;
    }
    return FBX_OK;
}

/* Sends each target its census signal, after noting what its directory holds. Returns how
 * many were sent; *code becomes FBX_PROCESS for a target that could not be asked. */
static size_t ask(target *t, long n, const snap_opts *o, int *code)
{
    size_t sent = 0;
    for (long i = 0; i < n; i++) {
        if (o->dir) {
            snprintf(t[i].dir, sizeof t[i].dir, "%s", o->dir);
        } else if (find_dir(t[i].pid, t[i].dir, sizeof t[i].dir) == -2) {
            fbx_error("snapshot", "process %ld has FBCOUNT_OUTPUT=none: it writes no dumps",
                      (long)t[i].pid);
            t[i].got = true; /* nothing to wait for */
            *code = FBX_PROCESS;
            continue;
        }
        t[i].before = scan(t[i].dir, &t[i].nbefore);
        int sig;
        char why[512];
        if (fbs_signal(t[i].pid, o->want, &sig, why, sizeof why) != 0) {
            fbx_error("snapshot", "process %ld %s: nothing sent", (long)t[i].pid, why);
            t[i].got = true;
            *code = FBX_PROCESS;
            continue;
        }
        sent++;
    }
    return sent;
}

/* Waits up to the timeout for each target's new dump, adding it to c. */
static void wait_dumps(target *t, long n, double timeout, fbm_census *c)
{
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (bool waiting = true; waiting;) {
        waiting = false;
        for (long i = 0; i < n; i++)
            if (!t[i].got) {
                look(&t[i], c);
                waiting |= !t[i].got;
            }
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
        if (!waiting || el >= timeout)
            break;
        usleep(50000);
    }
}

int fbx_snapshot(int argc, char **argv)
{
    snap_opts o = {.timeout = 5.0};
    int code = parse(&o, argc, argv);
    if (code != FBX_OK)
        return code < 0 ? FBX_OK : code;
    target *t;
    long n = pick(o.pid, &t);
    if (n < 0)
        return FBX_PROCESS;
    fbm_census *c = fbm_census_new();
    if (!c) {
        fbx_error("snapshot", "out of memory");
        code = FBX_NOMEM;
    } else if (ask(t, n, &o, &code) > 0) {
        wait_dumps(t, n, o.timeout, c);
    }
    for (long i = 0; i < n; i++) {
        if (!t[i].got && code != FBX_NOMEM) {
            fbx_error("snapshot", "no new dump of process %ld appeared in %s within %g s",
                      (long)t[i].pid, t[i].dir, o.timeout);
            code = FBX_TIMEOUT;
        }
        free_seen(t[i].before, t[i].nbefore);
    }
    if (c && fbm_census_ndumps(c) > 0)
        fbt_text(stdout, c, FBM_BY_OP, FBM_SORT_BYTES, 0);
    fbm_census_free(c);
    free(t);
    return code;
}

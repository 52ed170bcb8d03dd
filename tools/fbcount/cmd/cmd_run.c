/* cmd_run.c - fbcount run: run a command under the shim, then report its census.
 *
 * Every process of the command inherits LD_PRELOAD and FBCOUNT_OUTPUT, so children that
 * fork or exec write their own dumps into the same directory; the report merges them.
 *
 * Signals. The command must end the way it would without fbcount, and its census must
 * survive that end. fbcount becomes a child subreaper, so every process the command starts
 * stays below it (a daemon's double fork included), and it takes its signals through a
 * signalfd, so the supervisor's logic never runs in a handler:
 * - On a terminal, fbcount and the command share the foreground process group, as any
 *   pipeline does: Ctrl-C reaches both from the terminal (si_code SI_KERNEL), so fbcount
 *   does not send it again; a kill aimed at fbcount alone is passed on to the command's
 *   processes.
 * - Elsewhere (CI, timeout, a batch system) the command gets a process group of its own,
 *   and INT, TERM, HUP and QUIT that reach fbcount are sent to that group once. `timeout`
 *   signals both its child and its own group; with the command in another group it gets
 *   the signal from fbcount only, once, and the shim's "a second signal ends at once" is
 *   not triggered by a duplicate.
 * Then fbcount waits for the watched processes to write their census and die, prints what
 * they wrote, and ends as the command did: its exit status, or the same signal raised
 * again. A second termination signal within a second stops the wait at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>

#include "backend.h" /* rules/: declared exits and descriptor files */
#include "backend_args.h"
#include "allow.h" /* rules/: the allow file, read as the shim reads it */
#include "cli.h"
#include "contract.h"
#include "output.h"
#include "readfile.h"
#include "report_json.h"
#include "run_dir.h"
#include "shim.h"
#include "signals.h"
#include "text.h"

static const fbx_opt options[] = {
    {'m', false, "mode", "%s",
     "FBCOUNT_MODE for the command (default count); error makes\n"
     "a disallowed fallback fail in the backend's error path",
     fbs_mode_values, NULL},
    {'a', false, "allow", "FILE", "FBCOUNT_ALLOW: ops allowed to fall back (warn/abort/error)",
     NULL, NULL},
    {'x', false, "exit", "LIB:SYMBOL[:op=PREFIX]",
     "FBCOUNT_EXIT: also count every call of SYMBOL into LIB, a\n"
     "backend fbcount has no row for (repeatable)",
     NULL, NULL},
    {'b', false, "backend", "FILE", "FBCOUNT_BACKEND: a backend descriptor file (repeatable)", NULL,
     NULL},
    {'o', true, "output", "DIR",
     "where dumps go. A new directory by default,\n"
     "./fbcount-<pid>. An existing DIR with dumps in it is\n"
     "moved aside to DIR.old first (a DIR.old of dumps is\n"
     "replaced), so DIR holds this run only",
     NULL, NULL},
    {'A', false, "append", NULL,
     "add this run's dumps to those already in DIR; the\n"
     "summary then covers them all, as report DIR does",
     NULL, NULL},
    {'j', false, "json", "[=FILE]",
     "the result as one JSON object (fbcount-run/1): written to\n"
     "FILE (the text summary kept), or alone on standard output\n"
     "(CMD's standard output then goes to standard error)",
     NULL, NULL},
    {'h', true, "help", NULL, "this text", NULL, NULL},
};
#define NOPTIONS (sizeof options / sizeof *options)

static void help(void)
{
    fputs("usage: fbcount run [options] [--] CMD [ARGS...]\n\n"
          "Runs CMD with libfbcount.so preloaded (appended to LD_PRELOAD), collects the dumps\n"
          "of CMD and of every process it forks or execs, prints the merged census on standard\n"
          "error, and exits as CMD did: its status, or the signal that ended it.\n\n",
          stdout);
    fbx_put_options(stdout, options, NOPTIONS, 28);
    fputs("\nAt start, fbcount prints the command's pid and the dump directory on standard error.\n"
          "A run whose processes wrote no dump leaves no directory behind (a directory it made is\n"
          "removed; dumps it moved aside are moved back).\n"
          "SIGUSR1 sent to fbcount asks every watched process that runs the shim for a snapshot.\n"
          "INT, TERM, HUP and QUIT are passed on to the command (Ctrl-C on a terminal reaches it\n"
          "directly); fbcount then waits for the census, prints it and ends by the same signal.\n"
          "A second one within a second stops the wait and prints what is on disk.\n\n"
          "The shim is $FBCOUNT_SHIM, else the build tree next to this binary, else the\n"
          "installed " FBCOUNT_SHIM_INSTALLED ".\n\n",
          stdout);
    fbx_put_exit_codes(stdout, "run");
}

/* How long watched processes get, after a termination signal was passed on, to write
 * their census and end: the shim waits FBCOUNT_SIGNAL_WAIT (2 s) before dying anyway. */
#define GRACE_S 10.0

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

typedef struct {
    const char *mode, *allow, *output, *json_file;
    bool append, json;
    char **cmd;
    char shim[PATH_MAX + 256], absallow[PATH_MAX];
    fbx_backend_args b; /* --exit, --backend */
} run_opts;

/* ---- the command ------------------------------------------------------------------- */

/* The child: the shim's environment, the caller's signal mask, then CMD. When the exec fails,
 * its errno goes up the pipe (close-on-exec: a successful exec closes it unread). */
static void child(const run_opts *o, const fbx_run_dir *d, bool own_group, const sigset_t *mask,
                  int report_fd)
{
    if (own_group)
        setpgid(0, 0);
    /* --json alone on standard output: CMD's own output goes where fbcount's messages go. */
    if (o->json && !o->json_file)
        dup2(STDERR_FILENO, STDOUT_FILENO);
    const char *old = getenv("LD_PRELOAD");
    size_t len = (old ? strlen(old) : 0) + strlen(o->shim) + 2;
    char *preload = malloc(len), output[PATH_MAX + 64];
    const fbs_request req = {d->abs,     d->log,       o->mode, o->allow ? o->absallow : NULL,
                             o->b.exits, o->b.backends};
    fbs_setting set[FBR_NVARS];
    int nset = fbs_settings(&req, set, output, sizeof output);
    int e = nset < 0 ? ENAMETOOLONG : ENOMEM;
    if (preload && nset >= 0) {
        snprintf(preload, len, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "", o->shim);
        setenv("LD_PRELOAD", preload, 1);
        for (int i = 0; i < nset; i++)
            setenv(fbr_var_names[set[i].var], set[i].value, 1);
        sigprocmask(SIG_SETMASK, mask, NULL);
        execvp(o->cmd[0], o->cmd);
        e = errno;
    }
    ssize_t w = write(report_fd, &e, sizeof e);
    (void)w;
    _exit(e == ENOENT ? FBX_NOTFOUND : FBX_NOEXEC);
}

/* Whether fbcount runs in the foreground of its controlling terminal. */
static bool terminal_foreground(void)
{
    int fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool fg = tcgetpgrp(fd) == getpgrp();
    close(fd);
    return fg;
}

/* Whether sig is already pending for pid: the sender reached it too (a signal to the whole
 * group), so a second copy is not sent. */
static bool pending(pid_t pid, int sig)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool yes = false;
    while (fgets(buf, sizeof buf, f))
        if (!strncmp(buf, "SigPnd:", 7) || !strncmp(buf, "ShdPnd:", 7))
            yes |= (strtoull(buf + 7, NULL, 16) >> (sig - 1)) & 1;
    fclose(f);
    return yes;
}

typedef struct {
    pid_t pid;      /* the command */
    bool own_group; /* it leads a process group of its own */
    bool done;      /* reaped */
    int status;
    int termsig;     /* the last termination signal received, 0 if none */
    double term_at;  /* when */
    pid_t term_from; /* and who sent it */
    bool cut_short;  /* a second signal stopped the wait */
} run_state;

static void pass_on(run_state *r, int sig, const struct signalfd_siginfo *si)
{
    if (r->own_group) {
        kill(-r->pid, sig); /* the group outlives its leader while members remain */
        return;
    }
    /* Same group: a terminal's signal has reached everyone already. */
    if (si->ssi_code == SI_KERNEL)
        return;
    size_t n;
    pid_t *d = fbs_descendants(getpid(), &n);
    for (size_t i = 0; i < n; i++)
        if (getpgid(d[i]) == getpgrp() && !pending(d[i], sig))
            kill(d[i], sig);
    free(d);
}

/* SIGUSR1 to the supervisor: a snapshot of every watched process that runs the shim. */
static void snapshot_all(void)
{
    size_t n, asked = 0;
    pid_t *d = fbs_descendants(getpid(), &n);
    char pids[256] = "";
    for (size_t i = 0; i < n; i++) {
        int sig;
        char why[256];
        if (fbs_signal(d[i], 0, &sig, why, sizeof why) == 0) {
            size_t l = strlen(pids);
            if (l < sizeof pids - 16)
                snprintf(pids + l, sizeof pids - l, "%s%ld", asked ? " " : "", (long)d[i]);
            asked++;
        }
    }
    free(d);
    if (asked)
        fprintf(stderr, "fbcount: run: snapshot asked of %zu process%s (%s)\n", asked,
                asked == 1 ? "" : "es", pids);
    else
        fprintf(stderr, "fbcount: run: snapshot: no watched process runs the shim yet\n");
}

static void reap(run_state *r)
{
    int st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0)
        if (p == r->pid) {
            r->done = true;
            r->status = st;
        }
}

/* Waits for the command and, after a termination signal, for every watched process. */
static void supervise(run_state *r, int sfd)
{
    double grace_end = 0;
    for (;;) {
        reap(r);
        size_t alive = 0;
        if (r->done) {
            if (!r->termsig)
                return;
            pid_t *d = fbs_descendants(getpid(), &alive);
            free(d);
            if (!alive)
                return;
            if (!grace_end)
                grace_end = r->term_at + GRACE_S;
            if (now_s() >= grace_end)
                return;
        }
        struct pollfd pfd = {sfd, POLLIN, 0};
        if (poll(&pfd, 1, r->done ? 50 : 1000) <= 0)
            continue;
        struct signalfd_siginfo si;
        if (read(sfd, &si, sizeof si) != sizeof si)
            continue;
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD)
            continue;
        if (sig == SIGUSR1) {
            snapshot_all();
            continue;
        }
        double t = now_s();
        /* `timeout` sends its signal to fbcount and then to its own group, fbcount again: the
         * same signal from the same sender at once is one request, not a second one. */
        if (sig == r->termsig && (pid_t)si.ssi_pid == r->term_from && si.ssi_code == SI_USER &&
            t - r->term_at < 0.25)
            continue;
        bool again = r->termsig && t - r->term_at < 1.0;
        pass_on(r, sig, &si);
        r->termsig = sig;
        r->term_at = t;
        r->term_from = (pid_t)si.ssi_pid;
        if (again) {
            r->cut_short = true;
            return;
        }
    }
}

/* ---- starting and ending ------------------------------------------------------------ */

/* What start() changed in fbcount itself, for end() to restore. */
typedef struct {
    sigset_t watch, oldmask;
    int sfd;
    bool subreaper, blocked;
} supervisor;

static void restore(supervisor *s)
{
    if (s->sfd >= 0)
        close(s->sfd);
    s->sfd = -1;
    if (s->blocked)
        sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
    s->blocked = false;
    if (s->subreaper)
        prctl(PR_SET_CHILD_SUBREAPER, 0);
    s->subreaper = false;
}

/* Becomes the supervisor (subreaper, signals through a signalfd) and starts CMD. Returns 0,
 * or an exit code after one line on stderr, with everything restored. */
static int start(const run_opts *o, const fbx_run_dir *d, supervisor *s, run_state *r)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGCHLD};
    s->sfd = -1;
    /* Every process the command starts stays below fbcount, whatever it reparents. */
    s->subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    sigemptyset(&s->watch);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaddset(&s->watch, sigs[i]);
    s->blocked = sigprocmask(SIG_BLOCK, &s->watch, &s->oldmask) == 0;
    int pipefd[2] = {-1, -1};
    const char *failed = (s->sfd = signalfd(-1, &s->watch, SFD_CLOEXEC)) < 0 ? "signalfd"
                         : pipe2(pipefd, O_CLOEXEC) != 0                     ? "pipe"
                                                                             : NULL;
    if (!failed) {
        r->own_group = !terminal_foreground();
        fflush(NULL);
        if ((r->pid = fork()) == 0)
            child(o, d, r->own_group, &s->oldmask, pipefd[1]);
        if (r->pid < 0)
            failed = "fork";
    }
    int e = errno;
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    if (failed) {
        if (pipefd[0] >= 0)
            close(pipefd[0]);
        fbx_error("run", "%s: %s", failed, strerror(e));
        restore(s);
        return FBX_SYSTEM;
    }
    if (r->own_group)
        setpgid(r->pid, r->pid); /* also here, so a signal right after fork finds the group */
    ssize_t n;
    while ((n = read(pipefd[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(pipefd[0]);
    if (n == (ssize_t)sizeof e) { /* the exec failed: the child is gone, nothing ran */
        waitpid(r->pid, NULL, 0);
        fbx_error("run", "%s: cannot execute: %s", o->cmd[0], strerror(e));
        restore(s);
        return e == ENOENT ? FBX_NOTFOUND : FBX_NOEXEC;
    }
    const char *slash = strrchr(o->cmd[0], '/');
    fprintf(stderr, "fbcount: run: %s is pid %ld; dumps in %s\n",
            slash && slash[1] ? slash + 1 : o->cmd[0], (long)r->pid, d->abs);
    return 0;
}

/* ---- the census of the run ------------------------------------------------------------ */

typedef struct {
    char **ids; /* census ids of the run log */
    long *pids;
    size_t n;
} run_log;

static void read_log(const char *path, run_log *lg)
{
    FILE *f = fopen(path, "r");
    char line[PATH_MAX + 128];
    while (f && fgets(line, sizeof line, f)) {
        char id[128];
        long pid;
        if (sscanf(line, "%127s %ld", id, &pid) != 2)
            continue;
        char **ni = realloc(lg->ids, (lg->n + 1) * sizeof *ni);
        long *np = ni ? realloc(lg->pids, (lg->n + 1) * sizeof *np) : NULL;
        if (ni)
            lg->ids = ni;
        if (!np)
            break;
        lg->pids = np;
        if (!(lg->ids[lg->n] = strdup(id)))
            break;
        lg->pids[lg->n++] = pid;
    }
    if (f)
        fclose(f);
}

static void free_log(run_log *lg)
{
    for (size_t i = 0; i < lg->n; i++)
        free(lg->ids[i]);
    free(lg->ids);
    free(lg->pids);
}

/* Whether dump d was written by a process of this run: by census id where both have one,
 * else by pid. */
static bool of_run(const fbd_dump *d, const run_log *lg)
{
    const char *id = fbd_proc(d)->id;
    for (size_t i = 0; i < lg->n; i++)
        if (id ? !strcmp(id, lg->ids[i]) : fbd_pid(d) == lg->pids[i])
            return true;
    return false;
}

/* Loads every dump in dir; a dump cut short by a crash is reported and skipped, so the rest
 * of the census still prints. */
static fbm_census *collect(const char *dir, json_t *bad)
{
    fbm_census *c = fbm_census_new();
    DIR *dp = opendir(dir);
    struct dirent *e;
    while (c && dp && (e = readdir(dp))) {
        const char *nm = e->d_name;
        if (!fbr_is_dump_name(nm))
            continue;
        char path[PATH_MAX + 256], err[512];
        snprintf(path, sizeof path, "%s/%s", dir, nm);
        fbd_status st;
        fbd_dump *d = fbd_load_file(path, &st, err, sizeof err);
        /* A raw census (a process that ended by _exit, or was killed while it named its
         * frames) is named here, once, in the run's folder. */
        if (d && !fbd_symbolized(d) && fbx_symbolize_in_place("run", path) == FBX_OK) {
            fbd_free(d);
            d = fbd_load_file(path, &st, err, sizeof err);
        }
        if (!d) {
            fbx_error("run", "%s", err);
            json_array_append_new(bad, json_string(err));
        } else {
            fbm_census_add(c, d);
        }
    }
    if (dp)
        closedir(dp);
    return c;
}

/* ---- what the run reports ---------------------------------------------------------- */

typedef struct {
    fbm_census *census; /* NULL when out of memory */
    json_t *bad;        /* dumps that could not be read */
    run_log log;
    size_t with_dump, nalive;
    pid_t *alive;
    int status, sig, exit_code;
    bool by_signal;
} run_result;

static void gather(const fbx_run_dir *d, const run_state *r, run_result *res)
{
    res->bad = json_array();
    res->census = collect(d->abs, res->bad);
    read_log(d->log, &res->log);
    size_t nd = res->census ? fbm_census_ndumps(res->census) : 0;
    for (size_t i = 0; i < nd; i++)
        res->with_dump += !res->log.n || of_run(fbm_census_dump(res->census, i), &res->log);
    res->alive = fbs_descendants(getpid(), &res->nalive);
    res->status = r->status;
    res->by_signal = r->done && WIFSIGNALED(r->status);
    res->sig = res->by_signal ? WTERMSIG(r->status) : r->cut_short ? r->termsig : 0;
    res->exit_code = res->sig                          ? 128 + res->sig
                     : r->done && WIFEXITED(r->status) ? WEXITSTATUS(r->status)
                                                       : 1;
}

static void summary(const run_opts *o, const fbx_run_dir *d, const run_state *r,
                    const run_result *res, bool kept)
{
    size_t nd = res->census ? fbm_census_ndumps(res->census) : 0;
    fputc('\n', stderr);
    if (!res->census)
        fbx_error("run", "out of memory");
    else if (nd == 0 && !json_array_size(res->bad))
        fbx_error("run", "no dump was written: no process of %s used a backend", o->cmd[0]);
    else
        fbt_text(stderr, res->census, FBM_BY_OP, FBM_SORT_BYTES, 0);
    fputc('\n', stderr);
    if (res->log.n)
        fprintf(stderr, "fbcount: %zu process%s watched, %zu used a backend\n", res->log.n,
                res->log.n == 1 ? "" : "es", res->with_dump);
    else
        fprintf(stderr, "fbcount: %zu process%s used a backend\n", res->with_dump,
                res->with_dump == 1 ? "" : "es");
    if (r->cut_short)
        fprintf(stderr,
                "fbcount: a second %s: stopped waiting; the census may lack "
                "processes that were still writing\n",
                fbr_signal_name(r->termsig));
    if (res->nalive)
        fprintf(stderr,
                "fbcount: %zu watched process%s still running (first pid %ld): "
                "not in this summary\n",
                res->nalive, res->nalive == 1 ? " is" : "es are", (long)res->alive[0]);
    if (kept)
        fprintf(stderr, "fbcount: dumps in %s (fbcount report %s)\n", d->abs, d->abs);
    else if (d->created)
        fprintf(stderr, "fbcount: removed %s, which holds no census\n", d->abs);
    if (res->by_signal)
        fprintf(stderr, "fbcount: %s died by %s\n", o->cmd[0], fbr_signal_name(res->sig));
}

static json_t *result_json(const run_opts *o, const fbx_run_dir *d, const run_state *r,
                           const run_result *res, bool kept)
{
    json_t *cmd = json_array(), *st = json_object(), *still = json_array();
    for (char **a = o->cmd; *a; a++)
        json_array_append_new(cmd, json_string(*a));
    for (size_t i = 0; i < res->nalive; i++)
        json_array_append_new(still, json_integer(res->alive[i]));
    if (r->done && WIFEXITED(res->status))
        json_object_set_new(st, "exit", json_integer(WEXITSTATUS(res->status)));
    if (res->sig) {
        json_object_set_new(st, "signal", json_integer(res->sig));
        json_object_set_new(st, "signal_name", json_string(fbr_signal_name(res->sig)));
    }
    fbt_opts to = {.by = FBM_BY_OP, .sort = FBM_SORT_BYTES};
    bool any = res->census && fbm_census_ndumps(res->census);
    return json_pack(
        "{s:s,s:o,s:I,s:o,s:o,s:o,s:i,s:b,s:o,s:I,s:o,s:O,s:o}", "schema", "fbcount-run/1", "argv",
        cmd, "pid", (json_int_t)r->pid, "dir", kept ? json_string(d->abs) : json_null(), "moved_to",
        d->moved[0] ? json_string(d->moved) : json_null(), "status", st, "exit_code",
        res->exit_code, "cut_short", r->cut_short, "watched",
        res->log.n ? json_integer((json_int_t)res->log.n) : json_null(), "used_backend",
        (json_int_t)res->with_dump, "still_running", still, "bad_dumps", res->bad, "census",
        any ? fbt_json(res->census, &to) : json_null());
}

/* The JSON result (taken over: freed here), on standard output or into the file (output.h,
 * as every file written). */
static int write_result(const run_opts *o, json_t *j)
{
    char err[512];
    fbo_file out;
    int code = FBX_OK;
    if (!j) {
        fbx_error("run", "out of memory");
        return FBX_NOMEM;
    }
    if (fbo_open(&out, o->json_file, err, sizeof err) != 0) {
        code = FBX_WRITE;
    } else {
        int rc = json_dumpf(j, out.f, JSON_INDENT(2)) || fputc('\n', out.f) == EOF ? -1 : 0;
        code = fbo_close(&out, rc == 0, err, sizeof err) != 0 ? FBX_WRITE : FBX_OK;
    }
    if (code != FBX_OK)
        fbx_error("run", "%s", err);
    json_decref(j);
    return code;
}

static void free_result(run_result *res)
{
    json_decref(res->bad);
    free(res->alive);
    free_log(&res->log);
    fbm_census_free(res->census);
}

/* Ends as the command did: its status, or the same signal raised again, with no core file
 * of fbcount for a QUIT or a crash. */
static int end_like(int sig, int exit_code)
{
    fflush(NULL);
    if (!sig)
        return exit_code;
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    return exit_code;
}

/* ---- the command line ------------------------------------------------------------- */

static int option(void *ctx, int key, char *arg)
{
    run_opts *o = ctx;
    switch (key) {
    case 'm':
        if (fbx_choose("run", "--mode", arg, fbs_modes, FBR_NMODES) < 0)
            return FBX_USAGE;
        o->mode = arg;
        return FBX_OK;
    case 'a': o->allow = arg; return FBX_OK;
    case 'x': return fbx_add_exit(&o->b, "run", arg);
    case 'b': return fbx_add_backend(&o->b, "run", arg);
    case 'o': o->output = arg; return FBX_OK;
    case 'A': o->append = true; return FBX_OK;
    case 'j':
        o->json = true;
        o->json_file = arg;
        return FBX_OK;
    case 'h': help(); return -1;
    }
    return FBX_OK; /* fbx_options gives the keys of the table's rows alone */
}

static int parse(run_opts *o, int argc, char **argv)
{
    int rc = fbx_options(argc, argv, options, NOPTIONS, true, option, o);
    if (rc != FBX_OK)
        return rc;
    const char *bad = optind >= argc                   ? "no command given (try --help)"
                      : o->append && !o->output        ? "--append needs -o DIR"
                      : o->json_file && !*o->json_file ? "--json=: expected a file name"
                                                       : NULL;
    if (bad) {
        fbx_error("run", "%s", bad);
        return FBX_USAGE;
    }
    o->cmd = argv + optind;
    return FBX_OK;
}

/* What must hold before anything is made: the shim, the allow file. */
static int check_inputs(run_opts *o)
{
    if (fbs_find(o->shim, sizeof o->shim) != 0) {
        fbx_error("run", "libfbcount.so not found (tried %s); set FBCOUNT_SHIM", o->shim);
        return FBX_SHIM;
    }
    if (o->allow && !realpath(o->allow, o->absallow)) {
        fbx_error("run", "%s: cannot open allow file: %s", o->allow, strerror(errno));
        return FBX_READ;
    }
    /* Read as the shim will read it, before anything runs: a directory, a device or a file
     * that is no allow file would run the program with nothing allowed. */
    char err[768];
    bool unreadable = false;
    fbr_allow *a =
        o->allow ? fbr_allow_load(o->absallow, NULL, NULL, err, sizeof err, &unreadable) : NULL;
    if (o->allow && !a) {
        char e1[1600];
        fbx_error("run", "--allow %s", fbx_escape(err, e1, sizeof e1, 0));
        return unreadable ? FBX_READ : FBX_INVALID;
    }
    fbr_allow_free(a);
    return FBX_OK;
}

int fbx_run(int argc, char **argv)
{
    run_opts o = {0};
    fbx_run_dir d;
    supervisor s = {.sfd = -1};
    run_state r = {0};
    int code = parse(&o, argc, argv);
    if (code == FBX_OK)
        code = check_inputs(&o);
    if (code == FBX_OK)
        code = fbx_run_dir_make(&d, o.output, o.append);
    if (code == FBX_OK && (code = start(&o, &d, &s, &r)) != 0)
        fbx_run_dir_undo(&d);
    if (code != FBX_OK) /* nothing ran: the status is the command's own */
        return fbx_finish("run", code < 0 ? FBX_OK : code);
    supervise(&r, s.sfd);
    close(s.sfd);
    s.sfd = -1;
    run_result res = {0};
    gather(&d, &r, &res);
    if (!res.nalive)
        fbx_run_dir_sweep(&d);
    bool kept = fbx_run_dir_has_dump(&d) || !fbx_run_dir_undo(&d);
    if (!o.json || o.json_file)
        summary(&o, &d, &r, &res, kept);
    if (o.json)
        write_result(&o, result_json(&o, &d, &r, &res, kept));
    int sig = res.sig, exit_code = res.exit_code;
    free_result(&res);
    restore(&s);
    return end_like(sig, exit_code);
}

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

#include "cli.h"
#include "shim.h"
#include "signals.h"
#include "table.h"

static const char help[] =
    "usage: fbcount run [options] [--] CMD [ARGS...]\n\n"
    "Runs CMD with libfbcount.so preloaded (appended to LD_PRELOAD), collects the dumps\n"
    "of CMD and of every process it forks or execs, prints the merged census on standard\n"
    "error, and exits as CMD did: its status, or the signal that ended it.\n\n"
    "  --mode count|warn|abort   FBCOUNT_MODE for the command (default count)\n"
    "  --allow FILE              FBCOUNT_ALLOW: ops allowed to fall back (warn/abort)\n"
    "  -o, --output DIR          where dumps go. A new directory by default,\n"
    "                            ./fbcount-<pid>. An existing DIR with dumps in it is\n"
    "                            moved aside to DIR.old first (a DIR.old of dumps is\n"
    "                            replaced), so DIR holds this run only\n"
    "  --append                  add this run's dumps to those already in DIR; the\n"
    "                            summary then covers them all, as report DIR does\n"
    "  --json[=FILE]             the result as one JSON object (fbcount-run/1): in FILE,\n"
    "                            or on standard error instead of the text summary\n"
    "  -h, --help                this text\n\n"
    "At start, fbcount prints the command's pid and the dump directory on standard error.\n"
    "SIGUSR1 sent to fbcount asks every watched process that runs the shim for a snapshot.\n"
    "INT, TERM, HUP and QUIT are passed on to the command (Ctrl-C on a terminal reaches it\n"
    "directly); fbcount then waits for the census, prints it and ends by the same signal.\n"
    "A second one within a second stops the wait and prints what is on disk.\n\n"
    "The shim is $FBCOUNT_SHIM, else the build tree next to this binary, else the\n"
    "installed " FBCOUNT_SHIM_INSTALLED ".\n\n";

/* How long watched processes get, after a termination signal was passed on, to write
 * their census and end: the shim waits FBCOUNT_SIGNAL_WAIT (2 s) before dying anyway. */
#define GRACE_S 10.0
#define RUN_LOG_FMT "%s/.fbcount-run.%ld.log"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- the output directory ---------------------------------------------------------- */

/* Files a run leaves in its directory: dumps, the shim's temporaries, its run log. */
static bool ours(const char *name)
{
    size_t l = strlen(name);
    return (l > 5 && !strcmp(name + l - 5, ".json")) || strstr(name, ".json.tmp") ||
           !strncmp(name, ".fbcount-run.", 13);
}

/* Whether dir holds anything; *foreign names the first entry a run does not write. */
static int scan_dir(const char *dir, bool *empty, char *foreign, size_t len)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return -1;
    *empty = true;
    foreign[0] = '\0';
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        *empty = false;
        char p[PATH_MAX + 256];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (!foreign[0] && (!ours(e->d_name) || lstat(p, &sb) != 0 || !S_ISREG(sb.st_mode)))
            snprintf(foreign, len, "%s", e->d_name);
    }
    closedir(dp);
    return 0;
}

/* Empties and removes a DIR.old that holds only what runs write. */
static int remove_old(const char *old)
{
    DIR *dp = opendir(old);
    if (!dp)
        return -1;
    struct dirent *e;
    while ((e = readdir(dp))) {
        char p[PATH_MAX + 256];
        snprintf(p, sizeof p, "%s/%s", old, e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(p);
    }
    closedir(dp);
    return rmdir(old);
}

/* Prepares the directory. Returns 0, or an exit code after one line on stderr. *moved is
 * set when the previous contents went to DIR.old. */
static int make_dir(const char *out, bool append, char *dir, size_t len, char *moved,
                    size_t mlen)
{
    moved[0] = '\0';
    if (!out) {
        for (int i = 0; i < 100; i++) {
            if (i)
                snprintf(dir, len, "fbcount-%ld.%d", (long)getpid(), i);
            else
                snprintf(dir, len, "fbcount-%ld", (long)getpid());
            if (mkdir(dir, 0777) == 0)
                return 0;
            if (errno != EEXIST)
                break;
        }
        fbx_error("run", "%s: cannot create directory: %s", dir, strerror(errno));
        return FBX_READ;
    }
    snprintf(dir, len, "%s", out);
    for (size_t l = strlen(dir); l > 1 && dir[l - 1] == '/'; l--)
        dir[l - 1] = '\0';
    struct stat sb;
    if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
        fbx_error("run", "-o %s: exists and is not a directory", out);
        return FBX_USAGE;
    }
    if (mkdir(dir, 0777) == 0)
        return 0;
    if (errno != EEXIST) {
        fbx_error("run", "%s: cannot create directory: %s", dir, strerror(errno));
        return FBX_READ;
    }
    bool empty;
    char foreign[256];
    if (scan_dir(dir, &empty, foreign, sizeof foreign) != 0) {
        fbx_error("run", "%s: cannot read directory: %s", dir, strerror(errno));
        return FBX_READ;
    }
    if (empty || append)
        return 0;
    if (foreign[0]) {
        fbx_error("run", "-o %s: holds '%s', which is not a dump: name a new directory, or "
                  "add to this one with --append", out, foreign);
        return FBX_USAGE;
    }
    snprintf(moved, mlen, "%s.old", dir);
    if (lstat(moved, &sb) == 0) {
        bool oempty;
        char ofor[256];
        if (!S_ISDIR(sb.st_mode) || scan_dir(moved, &oempty, ofor, sizeof ofor) != 0 ||
            ofor[0] || remove_old(moved) != 0) {
            fbx_error("run", "%s: holds more than dumps of an earlier run: remove it, or use "
                      "--append", moved);
            return FBX_USAGE;
        }
    }
    if (rename(dir, moved) != 0 || mkdir(dir, 0777) != 0) {
        fbx_error("run", "%s: cannot move it aside to %s: %s", dir, moved, strerror(errno));
        return FBX_READ;
    }
    return 0;
}

/* ---- the command ------------------------------------------------------------------- */

static void child(char **cmd, const char *shim, const char *dir, const char *log,
                  const char *mode, const char *allow, bool own_group, const sigset_t *mask)
{
    if (own_group)
        setpgid(0, 0);
    const char *old = getenv("LD_PRELOAD");
    size_t len = (old ? strlen(old) : 0) + strlen(shim) + 2;
    char *preload = malloc(len), output[PATH_MAX + 64];
    if (!preload)
        _exit(127);
    snprintf(preload, len, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "", shim);
    snprintf(output, sizeof output, "%s/fbcount.%%e.%%p.%%n.json", dir);
    setenv("LD_PRELOAD", preload, 1);
    setenv("FBCOUNT_OUTPUT", output, 1);
    setenv("FBCOUNT_RUN_LOG", log, 1);
    setenv("FBCOUNT_QUIET", "1", 1);
    if (mode)
        setenv("FBCOUNT_MODE", mode, 1);
    if (allow)
        setenv("FBCOUNT_ALLOW", allow, 1);
    sigprocmask(SIG_SETMASK, mask, NULL);
    execvp(cmd[0], cmd);
    int e = errno;
    fbx_error("run", "%s: cannot execute: %s", cmd[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
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
    pid_t pid;          /* the command */
    bool own_group;     /* it leads a process group of its own */
    bool done;          /* reaped */
    int status;
    int termsig;        /* the last termination signal received, 0 if none */
    double term_at;     /* when */
    bool cut_short;     /* a second signal stopped the wait */
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
        bool again = r->termsig && t - r->term_at < 1.0;
        pass_on(r, sig, &si);
        r->termsig = sig;
        r->term_at = t;
        if (again) {
            r->cut_short = true;
            return;
        }
    }
}

/* ---- the census of the run ------------------------------------------------------------ */

typedef struct {
    char **ids;  /* census ids of the run log */
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
        size_t l = strlen(nm);
        if (nm[0] == '.' || l < 6 || strcmp(nm + l - 5, ".json"))
            continue;
        char path[PATH_MAX + 256], err[512];
        snprintf(path, sizeof path, "%s/%s", dir, nm);
        fbd_status st;
        fbd_dump *d = fbd_load_file(path, &st, err, sizeof err);
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

static int write_json(const char *file, json_t *j)
{
    if (!file)
        return json_dumpf(j, stderr, JSON_COMPACT) || fputc('\n', stderr) == EOF ? -1 : 0;
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", file, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int rc = json_dumpf(j, f, JSON_INDENT(2)) == 0 && fputc('\n', f) != EOF ? 0 : -1;
    if (fclose(f) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, file) != 0)
        rc = -1;
    if (rc)
        unlink(tmp);
    return rc;
}

int fbx_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"mode", required_argument, 0, 'm'}, {"allow", required_argument, 0, 'a'},
        {"output", required_argument, 0, 'o'}, {"append", no_argument, 0, 'A'},
        {"json", optional_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *mode = NULL, *allow = NULL, *out = NULL, *json_file = NULL;
    bool append = false, json = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "+ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'm':
            if (strcmp(optarg, "count") && strcmp(optarg, "warn") && strcmp(optarg, "abort")) {
                fbx_error("run", "--mode: unknown value '%s' (count, warn or abort)", optarg);
                return FBX_USAGE;
            }
            mode = optarg;
            break;
        case 'a': allow = optarg; break;
        case 'o': out = optarg; break;
        case 'A': append = true; break;
        case 'j':
            json = true;
            json_file = optarg;
            break;
        case 'h': fputs(help, stdout); fputs(fbx_exit_codes, stdout); return FBX_OK;
        default:
            fbx_error("run", "unknown or incomplete option '%s' (try --help)", argv[optind - 1]);
            return FBX_USAGE;
        }
    }
    if (optind >= argc) {
        fbx_error("run", "no command given (try --help)");
        return FBX_USAGE;
    }
    if (append && !out) {
        fbx_error("run", "--append needs -o DIR");
        return FBX_USAGE;
    }
    if (json_file && !*json_file) {
        fbx_error("run", "--json=: expected a file name");
        return FBX_USAGE;
    }
    char shim[PATH_MAX + 256], dir[PATH_MAX], absdir[PATH_MAX], absallow[PATH_MAX];
    char moved[PATH_MAX + 8], log[PATH_MAX + 64];
    if (fbs_find(shim, sizeof shim) != 0) {
        fbx_error("run", "libfbcount.so not found (tried %s); set FBCOUNT_SHIM", shim);
        return FBX_SHIM;
    }
    if (allow && !realpath(allow, absallow)) {
        fbx_error("run", "%s: cannot open allow file: %s", allow, strerror(errno));
        return FBX_READ;
    }
    int code = make_dir(out, append, dir, sizeof dir, moved, sizeof moved);
    if (code)
        return code;
    if (!realpath(dir, absdir)) {
        fbx_error("run", "%s: %s", dir, strerror(errno));
        return FBX_READ;
    }
    if (moved[0])
        fprintf(stderr, "fbcount: run: moved the previous dumps in %s to %s\n", dir, moved);
    snprintf(log, sizeof log, RUN_LOG_FMT, absdir, (long)getpid());

    /* Every process the command starts stays below fbcount, whatever it reparents. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    sigset_t watch, oldmask;
    sigemptyset(&watch);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGCHLD};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaddset(&watch, sigs[i]);
    sigprocmask(SIG_BLOCK, &watch, &oldmask);
    int sfd = signalfd(-1, &watch, SFD_CLOEXEC);
    if (sfd < 0) {
        fbx_error("run", "signalfd: %s", strerror(errno));
        sigprocmask(SIG_SETMASK, &oldmask, NULL);
        return FBX_READ;
    }
    run_state r = {0};
    r.own_group = !terminal_foreground();
    fflush(NULL);
    r.pid = fork();
    if (r.pid < 0) {
        fbx_error("run", "fork: %s", strerror(errno));
        return FBX_READ;
    }
    if (r.pid == 0)
        child(argv + optind, shim, absdir, log, mode, allow ? absallow : NULL, r.own_group,
              &oldmask);
    if (r.own_group)
        setpgid(r.pid, r.pid); /* also here, so a signal right after fork finds the group */
    const char *slash = strrchr(argv[optind], '/');
    fprintf(stderr, "fbcount: run: %s is pid %ld; dumps in %s\n",
            slash && slash[1] ? slash + 1 : argv[optind], (long)r.pid, absdir);
    supervise(&r, sfd);
    close(sfd);

    json_t *bad = json_array();
    fbm_census *c = collect(absdir, bad);
    run_log lg = {0};
    read_log(log, &lg);
    size_t with_dump = 0, nd = c ? fbm_census_ndumps(c) : 0;
    for (size_t i = 0; i < nd; i++)
        with_dump += !lg.n || of_run(fbm_census_dump(c, i), &lg);
    size_t nalive = 0;
    pid_t *alive = fbs_descendants(getpid(), &nalive);
    int status = r.status;
    bool by_signal = r.done && WIFSIGNALED(status);
    int sig = by_signal ? WTERMSIG(status) : r.cut_short ? r.termsig : 0;
    int exit_code = sig ? 128 + sig : r.done && WIFEXITED(status) ? WEXITSTATUS(status) : 1;

    if (!json || json_file) {
        fputc('\n', stderr);
        if (!c)
            fbx_error("run", "out of memory");
        else if (nd == 0 && !json_array_size(bad))
            fbx_error("run", "no dump was written in %s (does %s use libvkt?)", absdir,
                      argv[optind]);
        else
            fbt_text(stderr, c, FBM_BY_OP, FBM_SORT_BYTES, 0);
        fputc('\n', stderr);
        if (lg.n)
            fprintf(stderr, "fbcount: %zu process%s watched, %zu used a backend\n", lg.n,
                    lg.n == 1 ? "" : "es", with_dump);
        else
            fprintf(stderr, "fbcount: %zu process%s used a backend\n", with_dump,
                    with_dump == 1 ? "" : "es");
        if (r.cut_short)
            fprintf(stderr, "fbcount: a second %s: stopped waiting; the census may lack "
                    "processes that were still writing\n", fbr_signal_name(r.termsig));
        if (nalive)
            fprintf(stderr, "fbcount: %zu watched process%s still running (first pid %ld): "
                    "not in this summary\n", nalive, nalive == 1 ? " is" : "es are",
                    (long)alive[0]);
        fprintf(stderr, "fbcount: dumps in %s (fbcount report %s)\n", absdir, absdir);
        if (by_signal)
            fprintf(stderr, "fbcount: %s died by %s\n", argv[optind], fbr_signal_name(sig));
    }
    if (json) {
        json_t *j = json_object(), *cmd = json_array(), *st = json_object();
        for (int i = optind; i < argc; i++)
            json_array_append_new(cmd, json_string(argv[i]));
        json_t *still = json_array();
        for (size_t i = 0; i < nalive; i++)
            json_array_append_new(still, json_integer(alive[i]));
        if (r.done && WIFEXITED(status))
            json_object_set_new(st, "exit", json_integer(WEXITSTATUS(status)));
        if (sig) {
            json_object_set_new(st, "signal", json_integer(sig));
            json_object_set_new(st, "signal_name", json_string(fbr_signal_name(sig)));
        }
        json_object_set_new(j, "schema", json_string("fbcount-run/1"));
        json_object_set_new(j, "argv", cmd);
        json_object_set_new(j, "pid", json_integer(r.pid));
        json_object_set_new(j, "dir", json_string(absdir));
        json_object_set_new(j, "moved_to", moved[0] ? json_string(moved) : json_null());
        json_object_set_new(j, "status", st);
        json_object_set_new(j, "exit_code", json_integer(exit_code));
        json_object_set_new(j, "cut_short", json_boolean(r.cut_short));
        json_object_set_new(j, "watched", lg.n ? json_integer((json_int_t)lg.n) : json_null());
        json_object_set_new(j, "used_backend", json_integer((json_int_t)with_dump));
        json_object_set_new(j, "still_running", still);
        json_object_set_new(j, "bad_dumps", json_incref(bad));
        fbt_opts o = {.by = FBM_BY_OP, .sort = FBM_SORT_BYTES};
        json_object_set_new(j, "census", c ? fbt_json(c, &o) : json_null());
        if (write_json(json_file, j) != 0)
            fbx_error("run", "%s: cannot write the JSON result", json_file ? json_file : "stderr");
        json_decref(j);
    }
    json_decref(bad);
    free(alive);
    free_log(&lg);
    fbm_census_free(c);
    fflush(NULL);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    if (sig) {
        /* End as the command did. No core file of fbcount for a QUIT or a crash. */
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
    }
    return exit_code;
}

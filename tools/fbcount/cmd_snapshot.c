/* cmd_snapshot.c - fbcount snapshot: a live census of a running process.
 *
 * Rather than re-expanding the process's FBCOUNT_OUTPUT template (its %e, %h and the
 * .<n> rule), we watch the template's directory and take the first new or rewritten dump
 * whose process.pid is the target's: the shim renames dumps into place, so a dump that
 * appears is complete.
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
#include "table.h"

static const char help[] =
    "usage: fbcount snapshot [options] PID\n\n"
    "Sends the census signal to a process running under libfbcount.so, waits for the\n"
    "snapshot dump it writes, and prints its report. The dump directory comes from the\n"
    "process's FBCOUNT_OUTPUT (read from /proc/PID/environ, relative to /proc/PID/cwd).\n\n"
    "  --timeout S     seconds to wait (default 5; fractions allowed)\n"
    "  --signal SIG    signal name or number (default USR1, as FBCOUNT_SIGNAL)\n"
    "  --dir DIR       look for the dump in DIR instead\n"
    "  -h, --help      this text\n\n";

typedef struct seen {
    char *name;
    struct timespec mtime;
} seen;

static int parse_signal(const char *s)
{
    static const struct { const char *name; int sig; } sigs[] = {
        {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"INT", SIGINT},
        {"QUIT", SIGQUIT}, {"TERM", SIGTERM}, {"WINCH", SIGWINCH}};
    if (!strncasecmp(s, "SIG", 3))
        s += 3;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (!strcasecmp(s, sigs[i].name))
            return sigs[i].sig;
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end && v > 0 && v < NSIG ? (int)v : -1;
}

/* Reads /proc/PID/environ for FBCOUNT_OUTPUT and turns its directory into an absolute
 * path through /proc/PID/cwd. */
static int find_dir(long pid, char *dir, size_t len)
{
    char path[64], buf[65536];
    snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *tmpl = "fbcount.%e.%p.json";
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
        if (!strncmp(buf + i, "FBCOUNT_OUTPUT=", 15))
            tmpl = buf + i + 15;
    if (!strcmp(tmpl, "none"))
        return -2;
    char t[PATH_MAX];
    snprintf(t, sizeof t, "%s", tmpl);
    char *slash = strrchr(t, '/');
    const char *d = ".";
    if (slash == t)
        d = "/";
    else if (slash) {
        *slash = '\0';
        d = t;
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
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l < 6 || strcmp(e->d_name + l - 5, ".json"))
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

int fbx_snapshot(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"timeout", required_argument, 0, 't'}, {"signal", required_argument, 0, 's'},
        {"dir", required_argument, 0, 'd'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    double timeout = 5.0;
    int sig = SIGUSR1, opt;
    const char *dir_opt = NULL;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end;
        switch (opt) {
        case 't':
            timeout = strtod(optarg, &end);
            if (*end || end == optarg || !(timeout > 0) || timeout > 86400) {
                fbx_error("snapshot", "--timeout: expected seconds, got '%s'", optarg);
                return FBX_USAGE;
            }
            break;
        case 's':
            if ((sig = parse_signal(optarg)) < 0) {
                fbx_error("snapshot", "--signal: unknown signal '%s'", optarg);
                return FBX_USAGE;
            }
            break;
        case 'd': dir_opt = optarg; break;
        case 'h': fputs(help, stdout); fputs(fbx_exit_codes, stdout); return FBX_OK;
        default:
            fbx_error("snapshot", "unknown or incomplete option '%s' (try --help)",
                      argv[optind - 1]);
            return FBX_USAGE;
        }
    }
    char *end;
    long pid = optind + 1 == argc ? strtol(argv[optind], &end, 10) : 0;
    if (optind + 1 != argc || *end || pid <= 0) {
        fbx_error("snapshot", "expected one PID (try --help)");
        return FBX_USAGE;
    }
    char dir[PATH_MAX + 64];
    if (dir_opt) {
        snprintf(dir, sizeof dir, "%s", dir_opt);
    } else {
        int r = find_dir(pid, dir, sizeof dir);
        if (r == -2) {
            fbx_error("snapshot", "process %ld has FBCOUNT_OUTPUT=none: it writes no dumps", pid);
            return FBX_PROCESS;
        }
        if (r != 0) {
            fbx_error("snapshot", "process %ld: cannot read its environment: %s", pid,
                      strerror(errno));
            return FBX_PROCESS;
        }
    }
    size_t nb;
    seen *before = scan(dir, &nb);
    if (kill((pid_t)pid, sig) != 0) {
        fbx_error("snapshot", "cannot signal process %ld: %s", pid, strerror(errno));
        free_seen(before, nb);
        return FBX_PROCESS;
    }
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int code = FBX_TIMEOUT;
    for (;;) {
        size_t na;
        seen *after = scan(dir, &na);
        for (size_t i = 0; i < na && code == FBX_TIMEOUT; i++) {
            if (!changed(before, nb, &after[i]))
                continue;
            char p[PATH_MAX + 256], err[512];
            snprintf(p, sizeof p, "%s/%s", dir, after[i].name);
            fbd_status st;
            fbd_dump *d = fbd_load_file(p, &st, err, sizeof err);
            if (!d || fbd_pid(d) != pid) {
                fbd_free(d);
                continue;
            }
            fbm_census *c = fbm_census_new();
            if (c && fbm_census_add(c, d) == 0) {
                printf("fbcount: snapshot of process %ld: %s\n", pid, p);
                fbt_text(stdout, c, FBM_BY_OP, FBM_SORT_BYTES, 0);
                code = FBX_OK;
            }
            fbm_census_free(c);
        }
        free_seen(after, na);
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
        if (code != FBX_TIMEOUT || el >= timeout)
            break;
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH && el > 0.5)
            break; /* gone: a late dump is still looked for once above */
        usleep(50000);
    }
    free_seen(before, nb);
    if (code == FBX_TIMEOUT)
        fbx_error("snapshot", "no new dump of process %ld appeared in %s within %g s (is "
                  "libfbcount.so preloaded, and FBCOUNT_SIGNAL left at its default?)", pid, dir,
                  timeout);
    return code;
}

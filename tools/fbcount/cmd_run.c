/* cmd_run.c - fbcount run: run a command under the shim, then report its census.
 *
 * Every process of the command inherits LD_PRELOAD and FBCOUNT_OUTPUT, so children that
 * fork or exec write their own dumps into the same directory; the report merges them.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "shim.h"
#include "table.h"

static const char help[] =
    "usage: fbcount run [options] [--] CMD [ARGS...]\n\n"
    "Runs CMD with libfbcount.so preloaded (appended to LD_PRELOAD), collects the dumps\n"
    "of CMD and of every process it forks or execs, prints the merged census on standard\n"
    "error, and exits with CMD's status (128+N if it died by signal N).\n\n"
    "  --mode count|warn|abort   FBCOUNT_MODE for the command (default count)\n"
    "  --allow FILE              FBCOUNT_ALLOW: ops allowed to fall back (warn/abort)\n"
    "  -o, --output DIR          where dumps go (created if missing; dumps already there\n"
    "                            are left out of the report). Default: a new directory\n"
    "                            ./fbcount-<pid> in the current directory, kept afterwards\n"
    "  -h, --help                this text\n\n"
    "The shim is $FBCOUNT_SHIM, else the build tree next to this binary, else the\n"
    "installed " FBCOUNT_SHIM_INSTALLED ".\n\n";

typedef struct {
    char **names;
    size_t n;
} name_set;

static bool has_name(const name_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->names[i], name))
            return true;
    return false;
}

/* The dumps already in DIR, so a reused directory reports only this run. */
static void list_names(const char *dir, name_set *s)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        char **nn = realloc(s->names, (s->n + 1) * sizeof *nn);
        if (!nn)
            break;
        s->names = nn;
        if ((s->names[s->n] = strdup(e->d_name)))
            s->n++;
    }
    if (dp)
        closedir(dp);
}

static void free_names(name_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
}

static int make_dir(const char *out, char *dir, size_t len)
{
    if (out) {
        if (mkdir(out, 0777) != 0 && errno != EEXIST) {
            fbx_error("run", "%s: cannot create directory: %s", out, strerror(errno));
            return -1;
        }
        snprintf(dir, len, "%s", out);
        return 0;
    }
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
    return -1;
}

static void child(char **cmd, const char *shim, const char *dir, const char *mode,
                  const char *allow)
{
    const char *old = getenv("LD_PRELOAD");
    size_t len = (old ? strlen(old) : 0) + strlen(shim) + 2;
    char *preload = malloc(len), output[PATH_MAX + 64];
    if (!preload)
        _exit(127);
    snprintf(preload, len, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "", shim);
    snprintf(output, sizeof output, "%s/fbcount.%%e.%%p.%%n.json", dir);
    setenv("LD_PRELOAD", preload, 1);
    setenv("FBCOUNT_OUTPUT", output, 1);
    setenv("FBCOUNT_QUIET", "1", 1);
    if (mode)
        setenv("FBCOUNT_MODE", mode, 1);
    if (allow)
        setenv("FBCOUNT_ALLOW", allow, 1);
    execvp(cmd[0], cmd);
    int e = errno;
    fbx_error("run", "%s: cannot execute: %s", cmd[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
}

/* Loads this run's dumps; a dump cut short by a crash is reported and skipped, so the
 * rest of the census still prints. */
static fbm_census *collect(const char *dir, const name_set *before, size_t *bad)
{
    fbm_census *c = fbm_census_new();
    name_set now = {0};
    list_names(dir, &now);
    for (size_t i = 0; c && i < now.n; i++) {
        const char *nm = now.names[i];
        size_t l = strlen(nm);
        if (nm[0] == '.' || l < 6 || strcmp(nm + l - 5, ".json") || has_name(before, nm))
            continue;
        char path[PATH_MAX + 256], err[512];
        snprintf(path, sizeof path, "%s/%s", dir, nm);
        fbd_status st;
        fbd_dump *d = fbd_load_file(path, &st, err, sizeof err);
        if (!d) {
            fbx_error("run", "%s", err);
            (*bad)++;
        } else {
            fbm_census_add(c, d);
        }
    }
    free_names(&now);
    return c;
}

int fbx_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"mode", required_argument, 0, 'm'}, {"allow", required_argument, 0, 'a'},
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *mode = NULL, *allow = NULL, *out = NULL;
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
    char shim[PATH_MAX + 256], dir[PATH_MAX], absdir[PATH_MAX], absallow[PATH_MAX];
    if (fbs_find(shim, sizeof shim) != 0) {
        fbx_error("run", "libfbcount.so not found (tried %s); set FBCOUNT_SHIM", shim);
        return FBX_SHIM;
    }
    if (allow && !realpath(allow, absallow)) {
        fbx_error("run", "%s: cannot open allow file: %s", allow, strerror(errno));
        return FBX_READ;
    }
    if (make_dir(out, dir, sizeof dir) != 0)
        return FBX_READ;
    if (!realpath(dir, absdir)) {
        fbx_error("run", "%s: %s", dir, strerror(errno));
        return FBX_READ;
    }
    name_set before = {0};
    list_names(absdir, &before);

    /* Like system(): the terminal's ^C goes to the command; we wait for it to finish
     * and still report what it counted. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, oint, oquit;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &oint);
    sigaction(SIGQUIT, &ign, &oquit);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fbx_error("run", "fork: %s", strerror(errno));
        free_names(&before);
        return FBX_READ;
    }
    if (pid == 0) {
        sigaction(SIGINT, &oint, NULL);
        sigaction(SIGQUIT, &oquit, NULL);
        child(argv + optind, shim, absdir, mode, allow ? absallow : NULL);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &oint, NULL);
    sigaction(SIGQUIT, &oquit, NULL);
    int code = WIFEXITED(status) ? WEXITSTATUS(status)
               : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

    size_t bad = 0;
    fbm_census *c = collect(absdir, &before, &bad);
    free_names(&before);
    if (!c) {
        fbx_error("run", "out of memory");
        return code;
    }
    fputc('\n', stderr);
    if (fbm_census_ndumps(c) == 0 && !bad)
        fbx_error("run", "no dump was written in %s (does %s use libvkt?)", absdir,
                  argv[optind]);
    else
        fbt_text(stderr, c, FBM_BY_OP, FBM_SORT_BYTES, 0);
    fprintf(stderr, "\nfbcount: dumps in %s (fbcount report %s)\n", absdir, absdir);
    if (WIFSIGNALED(status))
        fprintf(stderr, "fbcount: %s died by signal %d\n", argv[optind], WTERMSIG(status));
    fbm_census_free(c);
    return code;
}

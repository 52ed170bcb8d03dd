/* cli.c - shared helpers of the subcommands. */
#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "contract.h"
#include "output.h"
#include "text.h"

/* Whether cmd is one of the space-separated names in list ("" names every command). */
static bool among(const char *list, const char *cmd)
{
    size_t n = strlen(cmd);
    if (!*list)
        return true;
    for (const char *p = list; (p = strstr(p, cmd)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
            return true;
    return false;
}

void fbx_put_exit_codes(FILE *out, const char *cmd)
{
    static const struct {
        int code;
        const char *cmds, *text;
    } codes[] = {
#define FBX_ROW(code, name, cmds, text) {code, cmds, text},
        FBX_EXIT_CODES(FBX_ROW)
#undef FBX_ROW
    };
    fputs("Exit codes:\n", out);
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++)
        if (!cmd || among(codes[i].cmds, cmd))
            fprintf(out, "  %2d  %s\n", codes[i].code, codes[i].text);
    if (!cmd || !strcmp(cmd, "run"))
        fputs("  run ends as the command did: its status, or the same signal (a shell shows\n"
              "  128+N); 126/127 if it cannot be executed.\n", out);
}

int fbx_load_code(fbd_status st)
{
    return st == FBD_ENOMEM ? FBX_NOMEM : st == FBD_EREAD ? FBX_READ : FBX_INVALID;
}

void fbx_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fbcount: %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

fbm_census *fbx_load(const char *cmd, char *const *paths, int n, int *code)
{
    fbm_census *c = fbm_census_new();
    if (!c) {
        fbx_error(cmd, "out of memory");
        *code = FBX_NOMEM;
        return NULL;
    }
    if ((*code = fbx_load_into(cmd, c, paths, n)) != FBX_OK) {
        fbm_census_free(c);
        return NULL;
    }
    return c;
}

int fbx_load_into(const char *cmd, fbm_census *c, char *const *paths, int n)
{
    char err[512];
    size_t before, after;
    fbm_census_skipped(c, &before);
    fbm_census_set_namer(c, fbx_name_raw);
    fbd_status st = fbm_census_load(c, paths, (size_t)n, err, sizeof err);
    const char *const *skipped = fbm_census_skipped(c, &after);
    for (size_t i = before; i < after; i++)
        fbx_error(cmd, "skipped %s", skipped[i]);
    if (st != FBD_OK) {
        fbx_error(cmd, "%s", err);
        return fbx_load_code(st);
    }
    return FBX_OK;
}

/* A folder fbcount run made, and whether it holds a dump. */
typedef struct {
    char name[256];
    struct timespec mtime;
    bool dumps;
} run_dir;

static int cmp_run_dir(const run_dir *a, const run_dir *b)
{
    if (a->mtime.tv_sec != b->mtime.tv_sec)
        return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
    if (a->mtime.tv_nsec != b->mtime.tv_nsec)
        return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
    return strcmp(a->name, b->name);
}

bool fbx_holds_dump(const char *dir)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    bool any = false;
    while (dp && !any && (e = readdir(dp))) {
        any = fbr_is_dump_name(e->d_name);
    }
    if (dp)
        closedir(dp);
    return any;
}

static int cmp_run_dirs(const void *a, const void *b) { return cmp_run_dir(a, b); }

size_t fbx_newest_runs(const char *cmd, size_t k, char names[][FBX_PATH])
{
    run_dir *all = NULL;
    size_t n = 0;
    DIR *dp = opendir(".");
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        struct stat sb;
        run_dir *more;
        if (!fbr_is_run_dir(e->d_name) || strlen(e->d_name) >= sizeof all->name ||
            lstat(e->d_name, &sb) || !S_ISDIR(sb.st_mode) ||
            !(more = realloc(all, (n + 1) * sizeof *all)))
            continue;
        all = more;
        snprintf(all[n].name, sizeof all[n].name, "%s", e->d_name);
        all[n].mtime = sb.st_mtim;
        all[n].dumps = fbx_holds_dump(all[n].name);
        n++;
    }
    if (dp)
        closedir(dp);
    if (n)
        qsort(all, n, sizeof *all, cmp_run_dirs);
    /* The k newest that hold a dump; a newer run whose program used no backend left an empty
     * folder (older versions of run kept them): say why it is not the one read. */
    size_t found = 0;
    for (size_t i = n; i-- > 0 && found < k;) {
        if (all[i].dumps)
            snprintf(names[k - 1 - found++], FBX_PATH, "%s", all[i].name);
        else
            fprintf(stderr, "fbcount: %s: skipping %s: no dump in it (no process of that run "
                    "used a backend)\n", cmd, all[i].name);
    }
    if (found && found < k) /* oldest first, from names[0] */
        memmove(names, names + (k - found), found * sizeof *names);
    free(all);
    return found;
}

int fbx_default_dir(const char *cmd, char *buf, size_t len)
{
    char names[1][FBX_PATH];
    if (fbx_newest_runs(cmd, 1, names) == 0) {
        fbx_error(cmd, "no dump given and no fbcount-* folder with a dump in the working "
                  "directory (try --help)");
        return -1;
    }
    snprintf(buf, len, "%s", names[0]);
    fprintf(stderr, "fbcount: %s: reading %s (the newest fbcount-* folder here)\n", cmd, buf);
    return 0;
}

int fbx_where(const char *cmd, fbm_census *c, char *arg)
{
    char *eq = strchr(arg, '=');
    if (eq)
        *eq = '\0';
    int rc = eq ? fbm_census_where(c, arg, eq + 1) : -1;
    if (eq)
        *eq = '=';
    if (rc == 0)
        return FBX_OK;
    if (rc == -2) {
        fbx_error(cmd, "out of memory");
        return FBX_NOMEM;
    }
    char e[256];
    fbx_error(cmd, "--where: expected FIELD=VALUE with FIELD one of %s (rank and pid take a "
              "number), got '%s'", fbm_where_help(), fbx_escape(arg, e, sizeof e, 0));
    return FBX_USAGE;
}

int fbx_load_args(const char *cmd, fbm_census *c, char *const *paths, int n)
{
    char dflt[FBX_PATH];
    char *dpath[] = {dflt};
    if (n == 0 && fbx_default_dir(cmd, dflt, sizeof dflt) != 0)
        return FBX_USAGE;
    int code = n ? fbx_load_into(cmd, c, paths, n) : fbx_load_into(cmd, c, dpath, 1);
    if (code != FBX_OK)
        return code;
    char why[2048];
    if (fbm_census_unmatched(c, why, sizeof why)) {
        char e[2100];
        fbx_error(cmd, "%s", fbx_escape(why, e, sizeof e, 0));
        return FBX_NO_MATCH;
    }
    fbm_summary s = fbm_census_summary(c);
    if (s.dumps + s.filtered + s.superseded == 0) {
        char e[256];
        fbx_error(cmd, "no dump in %s%s (no process used a backend, or libfbcount.so was not "
                  "preloaded)", fbx_escape(n ? paths[0] : dflt, e, sizeof e, 0),
                  n > 1 ? " and the others given" : "");
        return FBX_READ;
    }
    return FBX_OK;
}

void fbx_version(void) { printf("fbcount %s\n", FBCOUNT_VERSION); }

int fbx_options(int argc, char **argv, const char *shortopts, const struct option *longopts,
                fbx_option_fn each, void *ctx)
{
    optind = 1;
    opterr = 0; /* each() names an unknown option itself, in the command's words */
    int opt, code = FBX_OK;
    while (code == FBX_OK && (opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1)
        code = each(ctx, opt, optarg, argv[optind - 1]);
    return code;
}

int fbx_finish(const char *cmd, int code)
{
    /* Only a status that stands for the output: an error's code says more than its output. */
    if (code != FBX_OK && code != FBX_CHECK && code != FBX_HAS_SHIM)
        return code;
    char err[256];
    if (fbo_check_stdout(err, sizeof err) != 0) {
        fbx_error(cmd, "%s", err);
        return FBX_WRITE;
    }
    return code;
}

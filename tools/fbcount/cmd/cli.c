/* cli.c - shared helpers of the subcommands. */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "run_dir.h"
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
              "  128+N); 126/127 if it cannot be executed.\n",
              out);
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
    fbx_error(cmd,
              "--where: expected FIELD=VALUE with FIELD one of %s (rank and pid take a "
              "number), got '%s'",
              fbm_where_help(), fbx_escape(arg, e, sizeof e, 0));
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
        fbx_error(cmd,
                  "no dump in %s%s (no process used a backend, or libfbcount.so was not "
                  "preloaded)",
                  fbx_escape(n ? paths[0] : dflt, e, sizeof e, 0),
                  n > 1 ? " and the others given" : "");
        return FBX_READ;
    }
    return FBX_OK;
}

void fbx_version(void)
{
    printf("fbcount %s\n", FBCOUNT_VERSION);
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

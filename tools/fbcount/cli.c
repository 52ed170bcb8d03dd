/* cli.c - shared helpers of the subcommands. */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>

const char fbx_exit_codes[] =
    "Exit codes:\n"
    "  0  success (check: within the allowance)\n"
    "  1  check: over the allowance\n"
    "  2  usage error\n"
    "  3  a file or directory cannot be read (check: no dump found)\n"
    "  4  a file is not a valid fbcount/1 dump (bad JSON, truncated, wrong schema or type)\n"
    "  5  run: libfbcount.so not found\n"
    "  6  snapshot: no new dump before the timeout\n"
    "  7  snapshot: no such process, or it cannot be signalled\n"
    "  8  symbolize: cannot write the output\n"
    "  run exits with the command's status, 128+N if it died by signal N,\n"
    "  126/127 if it cannot be executed.\n";

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
        *code = FBX_READ;
        return NULL;
    }
    char err[512];
    fbd_status st = fbm_census_load(c, paths, (size_t)n, err, sizeof err);
    if (st != FBD_OK) {
        fbx_error(cmd, "%s", err);
        *code = st == FBD_EREAD ? FBX_READ : FBX_INVALID;
        fbm_census_free(c);
        return NULL;
    }
    *code = FBX_OK;
    return c;
}

/* cli.c - shared helpers of the subcommands. */
#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output.h"

const char fbx_exit_codes[] =
    "Exit codes:\n"
    "  0  success (check: within the allowance)\n"
    "  1  check: over the allowance\n"
    "  2  usage error\n"
    "  3  a file or directory cannot be read (check: no dump found)\n"
    "  4  a file is not a valid fbcount/1 dump (bad JSON, truncated, wrong schema or type)\n"
    "  5  run: libfbcount.so not found\n"
    "  6  snapshot: no new dump before the timeout\n"
    "  7  snapshot: no such process, or it does not run the shim or catch its census\n"
    "     signal (nothing is sent then)\n"
    "  8  symbolize: the dump's modules cannot be read\n"
    "  9  the output cannot be written (a full disk, a closed pipe, -o naming a device)\n"
    "  run ends as the command did: its status, or the same signal (a shell shows\n"
    "  128+N); 126/127 if it cannot be executed.\n";

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

int fbx_load_into(const char *cmd, fbm_census *c, char *const *paths, int n)
{
    char err[512];
    fbd_status st = fbm_census_load(c, paths, (size_t)n, err, sizeof err);
    if (st != FBD_OK) {
        fbx_error(cmd, "%s", err);
        return st == FBD_EREAD ? FBX_READ : FBX_INVALID;
    }
    return FBX_OK;
}

bool fbx_is_run_dir(const char *name)
{
    if (strncmp(name, "fbcount-", 8))
        return false;
    const char *p = name + 8;
    if (!isdigit((unsigned char)*p))
        return false;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.' && isdigit((unsigned char)p[1]))
        for (p++; isdigit((unsigned char)*p);)
            p++;
    return *p == '\0';
}

int fbx_default_dir(const char *cmd, char *buf, size_t len)
{
    DIR *dp = opendir(".");
    struct dirent *e;
    struct timespec best = {0, 0};
    buf[0] = '\0';
    while (dp && (e = readdir(dp))) {
        struct stat sb;
        if (!fbx_is_run_dir(e->d_name) || lstat(e->d_name, &sb) || !S_ISDIR(sb.st_mode))
            continue;
        if (!buf[0] || sb.st_mtim.tv_sec > best.tv_sec ||
            (sb.st_mtim.tv_sec == best.tv_sec && sb.st_mtim.tv_nsec > best.tv_nsec) ||
            (sb.st_mtim.tv_sec == best.tv_sec && sb.st_mtim.tv_nsec == best.tv_nsec &&
             strcmp(e->d_name, buf) > 0)) {
            best = sb.st_mtim;
            snprintf(buf, len, "%s", e->d_name);
        }
    }
    if (dp)
        closedir(dp);
    if (!buf[0]) {
        fbx_error(cmd, "no dump given and no fbcount-* folder in the working directory "
                  "(try --help)");
        return -1;
    }
    fprintf(stderr, "fbcount: %s: reading %s (the newest fbcount-* folder here)\n", cmd, buf);
    return 0;
}

void fbx_version(void) { printf("fbcount %s\n", FBCOUNT_VERSION); }

int fbx_finish(const char *cmd, int code)
{
    char err[256];
    if (fbo_check_stdout(err, sizeof err) != 0) {
        fbx_error(cmd, "%s", err);
        return FBX_WRITE;
    }
    return code;
}

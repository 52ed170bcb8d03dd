/* shim.c - locate libfbcount.so, so the same binary works from the build tree and installed. */
#include "shim.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int usable(const char *p) { return access(p, R_OK) == 0; }

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
    }
    if (usable(FBCOUNT_SHIM_INSTALLED)) {
        snprintf(buf, len, "%s", FBCOUNT_SHIM_INSTALLED);
        return 0;
    }
    snprintf(buf, len, "%s%s%s", cand, cand[0] ? ", " : "", FBCOUNT_SHIM_INSTALLED);
    return -1;
}

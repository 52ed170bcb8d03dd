/* contract.c - see contract.h. */
#include "contract.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const char fbr_var_names[FBR_NVARS][FBR_VAR_NAME_MAX] = {
#define FBR_VAR_NAME(id, name) [FBR_VAR_##id] = name,
    FBR_VARIABLES(FBR_VAR_NAME)
#undef FBR_VAR_NAME
};

static const char *const mode_names[FBR_NMODES] = {
#define FBR_MODE_NAME(id, name, what) [FBR_MODE_##id] = name,
    FBR_MODES(FBR_MODE_NAME)
#undef FBR_MODE_NAME
};

const char *fbr_mode_name(fbr_mode m)
{
    return (unsigned)m < FBR_NMODES ? mode_names[m] : mode_names[FBR_MODE_COUNT];
}

bool fbr_mode_parse(const char *name, fbr_mode *out)
{
    for (int m = 0; name && m < FBR_NMODES; m++)
        if (!strcmp(name, mode_names[m])) {
            *out = (fbr_mode)m;
            return true;
        }
    return false;
}

const char *fbr_mode_list(const char *sep, const char *last, char *buf, size_t cap)
{
    size_t len = 0;
    if (cap)
        buf[0] = '\0';
    for (int m = 0; m < FBR_NMODES && len < cap; m++) {
        const char *before = m == 0 ? "" : m + 1 == FBR_NMODES ? last : sep;
        int n = snprintf(buf + len, cap - len, "%s%s", before, mode_names[m]);
        len += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

bool fbr_run_output(const char *dir, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/fbcount.%%e.%%p.%%n.json", dir);
    return n > 0 && (size_t)n < cap;
}

#define RUN_DIR "fbcount-"
#define RUN_LOG ".fbcount-run."

bool fbr_run_dir_name(long pid, int n, char *out, size_t cap)
{
    int w =
        n ? snprintf(out, cap, RUN_DIR "%ld.%d", pid, n) : snprintf(out, cap, RUN_DIR "%ld", pid);
    return w > 0 && (size_t)w < cap;
}

bool fbr_run_log(const char *dir, long pid, char *out, size_t cap)
{
    int w = snprintf(out, cap, "%s/" RUN_LOG "%ld.log", dir, pid);
    return w > 0 && (size_t)w < cap;
}

bool fbr_is_run_file(const char *name)
{
    return fbr_is_dump_name(name) || fbr_is_dump_temporary(name) ||
           !strncmp(name, RUN_LOG, strlen(RUN_LOG));
}

bool fbr_is_dump_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 5 && !strcmp(name + n - 5, ".json");
}

bool fbr_is_dump_temporary(const char *name)
{
    return strstr(name, ".json" FBR_TEMPORARY) != NULL;
}

bool fbr_is_run_dir(const char *name)
{
    if (strncmp(name, RUN_DIR, strlen(RUN_DIR)))
        return false;
    const char *p = name + strlen(RUN_DIR);
    if (!isdigit((unsigned char)*p))
        return false;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.' && isdigit((unsigned char)p[1]))
        for (p++; isdigit((unsigned char)*p);)
            p++;
    return *p == '\0';
}

/* backend_args.c - see backend_args.h. */
#include "backend_args.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h" /* rules/: declared exits and descriptor files */
#include "cli.h"
#include "contract.h"
#include "readfile.h"

/* Appends item to list (sep between items); false when it does not fit. */
static bool append_item(char *list, size_t cap, char sep, const char *item)
{
    size_t n = strlen(list);
    int w = snprintf(list + n, cap - n, "%s%s", n ? (char[2]){sep, 0} : "", item);
    return w > 0 && (size_t)w < cap - n;
}

int fbx_add_exit(fbx_backend_args *a, const char *cmd, const char *spec)
{
    fbr_backend row;
    char err[320];
    if (fbr_backend_declare(spec, &row, err, sizeof err) != 0) {
        fbx_error(cmd, "--exit: %s", err);
        return FBX_USAGE;
    }
    if (strchr(spec, FBR_EXIT_SEP) || !append_item(a->exits, sizeof a->exits, FBR_EXIT_SEP, spec)) {
        fbx_error(cmd, "--exit: '%.80s': too many or too long exits", spec);
        return FBX_USAGE;
    }
    return FBX_OK;
}

int fbx_add_backend(fbx_backend_args *a, const char *cmd, const char *path)
{
    char abs[PATH_MAX], err[320], why[128];
    size_t len;
    char *text = fbr_read_file(path, FBR_DESCRIPTOR_MAX, &len);
    if (!text) {
        fbx_error(cmd, "--backend %s: %s", path,
                  fbr_read_error(errno, FBR_DESCRIPTOR_MAX, why, sizeof why));
        return FBX_READ;
    }
    fbr_backend row;
    int rc = fbr_backend_parse(text, len, FBR_FROM_FILE, &row, err, sizeof err);
    free(text);
    if (rc != 0) {
        fbx_error(cmd, "--backend %s: %s", path, err);
        return FBX_INVALID;
    }
    int unused = fbr_backend_unused(&row, err, sizeof err);
    if (unused)
        fbx_error(cmd, "warning: --backend %s: %s%s", path, err,
                  unused > 1 ? " (and more directives like it)" : "");
    if (!realpath(path, abs) || strchr(abs, FBR_BACKEND_SEP) ||
        !append_item(a->backends, sizeof a->backends, FBR_BACKEND_SEP, abs)) {
        fbx_error(cmd, "--backend %s: the path cannot be passed on (a ':' in it, or too long)",
                  path);
        return FBX_USAGE;
    }
    return FBX_OK;
}

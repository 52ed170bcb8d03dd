/* fold.c - see fold.h. */
#include "fold.h"

#include <string.h>

#include "attrib.h" /* rules/: interpreters and FFI layers, Python packages */
#include "names.h"

/* The innermost native frame named with one of the dump's op prefixes, or -1. */
static long op_frame(const fbd_dump *d, const fbd_stack *st)
{
    size_t np;
    const char *const *pre = fbd_op_prefixes(d, &np);
    for (size_t i = 0; i < st->nframes; i++) {
        const fbd_frame *f = st->frames[i];
        for (size_t k = 0; !f->python && f->symbol && k < np; k++)
            if (!strncmp(f->symbol, pre[k], strlen(pre[k])))
                return (long)i;
    }
    return -1;
}

/* Whether a native module is the backend's: the op's own module, one the dump lists for
 * the stack's backend (backends[].modules), or libvkt's library (dumps of shims that knew
 * libvkt alone list no modules). */
static bool backend_module(const fbd_dump *d, const char *backend, const char *path,
                           const char *op_module)
{
    if (!path)
        return false;
    if (op_module && !strcmp(path, op_module))
        return true;
    size_t n;
    const fbd_backend *b = fbd_backends(d, &n);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; !strcmp(b[i].name, backend) && k < b[i].nmodules; k++)
            if (!strcmp(b[i].modules[k], path))
                return true;
    return !strncmp(fbn_base(path), "libvkt.so", 9);
}

static bool system_frame(const fbd_frame *f)
{
    static const char *const libs[] = {"libc.so", "ld-linux", "libpthread.so", "libstdc++.so",
                                       "libgcc_s.so", "libdl.so"};
    const char *b = f->module ? fbn_base(f->module) : "";
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++)
        if (!strncmp(b, libs[i], strlen(libs[i])))
            return true;
    return f->symbol && (!strcmp(f->symbol, "_start") ||
                         !strncmp(f->symbol, "__libc_start", 12));
}

static bool python_backend(const fbd_dump *d, const char *file)
{
    size_t n;
    const char *const *pkgs = fbd_py_backends(d, &n);
    fbr_names names = {.n = 0};
    for (size_t i = 0; i < n && i < FBR_MAX_NAMES; i++)
        names.name[names.n++] = pkgs[i];
    return fbr_py_in_package(file, &names);
}

void fbm_frame_roles(const fbd_dump *d, const fbd_stack *st, unsigned char *roles)
{
    long op = op_frame(d, st);
    size_t first = op >= 0 ? (size_t)op : 0;
    const char *op_module = st->nframes ? st->frames[first]->module : NULL;
    /* Outermost first, so an inlined frame takes the role of the frame it was inlined into,
     * which comes after it. */
    unsigned char outer = FBM_ROLE_USER;
    for (size_t i = st->nframes; i-- > 0;) {
        const fbd_frame *f = st->frames[i];
        unsigned char r;
        if (f->python)
            r = python_backend(d, f->file) ? FBM_ROLE_BACKEND : FBM_ROLE_USER;
        else if (f->inlined)
            r = outer;
        else if (op >= 0 && i <= first)
            r = FBM_ROLE_BACKEND;
        else if (backend_module(d, st->backend, f->module, op_module))
            r = FBM_ROLE_BACKEND;
        else if (fbr_module_is_interpreter(f->module))
            r = FBM_ROLE_INTERPRETER;
        else if (system_frame(f))
            r = FBM_ROLE_SYSTEM;
        else
            r = FBM_ROLE_USER;
        roles[i] = r;
        if (!f->python)
            outer = r;
    }
}

const char *fbm_role_name(fbm_role role)
{
    static const char *const names[] = {NULL, "backend", "interpreter", "system"};
    return (unsigned)role < sizeof names / sizeof *names ? names[role] : NULL;
}

void fbm_stack_site(const fbd_dump *d, const fbd_stack *st, const char **file, long *line)
{
    *file = NULL;
    *line = 0;
    long op = op_frame(d, st);
    for (size_t i = op >= 0 ? (size_t)op + 1 : 0; i < st->nframes; i++) {
        const fbd_frame *f = st->frames[i];
        if (f->symbol && !strcmp(f->symbol, st->site) && (f->file || f->line > 0)) {
            *file = f->file;
            *line = f->line;
            return;
        }
    }
}

/* fold.c - see fold.h. */
#include "fold.h"

#include <string.h>

#include "attrib.h"  /* rules/: interpreters and FFI layers, Python packages */
#include "backend.h" /* rules/: each backend's modules, Python packages and sources */
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

/* Rows parsed from dumps' descriptors (backends not built in), kept by their text: a census
 * holds few, and each stack row asks for its backend's. */
#define ROWS 8
static struct {
    const char *text; /* the dump's string: compared by address, then by content */
    fbr_backend row;
    bool ok;
} parsed[ROWS];
static unsigned next_slot;

static const fbr_backend *parse_row(const char *text)
{
    for (unsigned i = 0; i < ROWS; i++)
        if (parsed[i].text && (parsed[i].text == text || !strcmp(parsed[i].text, text)))
            return parsed[i].ok ? &parsed[i].row : NULL;
    unsigned i = next_slot++ % ROWS;
    char err[256];
    parsed[i].text = text;
    parsed[i].ok =
        fbr_backend_parse(text, strlen(text), FBR_FROM_FILE, &parsed[i].row, err, sizeof err) == 0;
    return parsed[i].ok ? &parsed[i].row : NULL;
}

/* The row of the stack's backend in force (fbr_row_in_force): the descriptor the dump gives
 * for it, else the built-in one; NULL when neither is known. */
static const fbr_backend *row_of(const fbd_dump *d, const char *backend)
{
    const fbr_backend *own = NULL;
    size_t n;
    const fbd_backend *seen = fbd_backends(d, &n);
    for (size_t i = 0; backend && !own && i < n; i++)
        if (!strcmp(seen[i].name, backend) && seen[i].descriptor)
            own = parse_row(seen[i].descriptor);
    return backend ? fbr_row_in_force(backend, own) : NULL;
}

/* Whether a native module is the backend's: the op's own module, one the backend's row names
 * (library, modules), or one the dump lists for it (backends[].modules). */
static bool backend_module(const fbd_dump *d, const char *backend, const fbr_backend *row,
                           const char *path, const char *op_module)
{
    if (!path)
        return false;
    if ((op_module && !strcmp(path, op_module)) || (row && fbr_backend_module(row, path)))
        return true;
    size_t n;
    const fbd_backend *b = fbd_backends(d, &n);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; !strcmp(b[i].name, backend) && k < b[i].nmodules; k++)
            if (!strcmp(b[i].modules[k], path))
                return true;
    return false;
}

/* A Python frame is the backend's in one of its packages: the row's, and the dump's
 * config.py_backend (which older shims wrote, libvkt's vkt by default). */
static bool python_backend(const fbd_dump *d, const fbr_backend *row, const char *file)
{
    if (row && fbr_backend_python(row, file))
        return true;
    size_t n;
    const char *const *pkgs = fbd_py_backends(d, &n);
    fbr_names names = {.n = 0};
    for (size_t i = 0; i < n && i < FBR_MAX_NAMES; i++)
        names.name[names.n++] = pkgs[i];
    return fbr_py_in_package(file, &names);
}

static bool system_frame(const fbd_frame *f)
{
    return fbr_module_is_system(f->module) ||
           (f->symbol && (!strcmp(f->symbol, "_start") || !strncmp(f->symbol, "__libc_start", 12)));
}

/* The role of native frame f, not inlined, outward from the op frame. */
static unsigned char native_role(const fbd_dump *d, const fbd_stack *st, const fbr_backend *row,
                                 const fbd_frame *f, const char *op_module)
{
    if (backend_module(d, st->backend, row, f->module, op_module))
        return FBM_ROLE_BACKEND;
    if (fbr_module_is_interpreter(f->module))
        return FBM_ROLE_INTERPRETER;
    return system_frame(f) ? FBM_ROLE_SYSTEM : FBM_ROLE_USER;
}

/* Where the stack's site begins: the innermost frame outward from the op that bears the
 * site's name (a Python frame outside the backend's packages), with the functions inlined
 * into it; -1 when none does. Every frame inside it was on the backend's side of the call:
 * the accelerator's own library that called the fallback, a template of the framework
 * instantiated there. */
static long site_frame(const fbd_dump *d, const fbd_stack *st, const fbr_backend *row, long op)
{
    for (size_t i = op >= 0 ? (size_t)op + 1 : 0; i < st->nframes; i++) {
        const fbd_frame *f = st->frames[i];
        if (!f->symbol || strcmp(f->symbol, st->site) ||
            (f->python && python_backend(d, row, f->file)))
            continue;
        /* The shim's site names its line: another function of the same name (torch.nn's
         * forward around the model's) is not it. */
        if (st->site_file && (!f->file || strcmp(f->file, st->site_file) ||
                              (st->site_line > 0 && f->line != st->site_line)))
            continue;
        /* The functions inlined into the site's frame are of that frame (they precede it). */
        while (i > 0 && st->frames[i - 1]->inlined && !st->frames[i - 1]->python)
            i--;
        return (long)i;
    }
    return -1;
}

void fbm_frame_roles(const fbd_dump *d, const fbd_stack *st, unsigned char *roles)
{
    const fbr_backend *row = row_of(d, st->backend);
    long op = op_frame(d, st), site = site_frame(d, st, row, op);
    /* A stack sited where its thread's work came from has no frame of the user's: every
     * frame of it is on the backend's side of the call, as inside a site on any thread. */
    if (st->origin)
        site = (long)st->nframes;
    size_t first = op >= 0 ? (size_t)op : 0;
    const char *op_module = st->nframes ? st->frames[first]->module : NULL;
    /* Outermost first, so an inlined frame takes the role of the frame it was inlined into,
     * which comes after it, unless its source is the backend's (a header of its C++ API). */
    unsigned char outer = FBM_ROLE_USER;
    for (size_t i = st->nframes; i-- > 0;) {
        const fbd_frame *f = st->frames[i];
        unsigned char r;
        if ((long)i < site)
            r = !f->python && fbr_module_is_interpreter(f->module) ? FBM_ROLE_INTERPRETER
                                                                   : FBM_ROLE_BACKEND;
        else if (f->python)
            r = python_backend(d, row, f->file) ? FBM_ROLE_BACKEND : FBM_ROLE_USER;
        else if (f->inlined)
            r = row && f->file && fbr_backend_source(row, f->file) ? FBM_ROLE_BACKEND : outer;
        else if (op >= 0 && i <= first)
            r = FBM_ROLE_BACKEND;
        else
            r = native_role(d, st, row, f, op_module);
        roles[i] = r;
        if (!f->python && !f->inlined)
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
    if (st->site_file) { /* the shim's own answer: the one every view gives */
        *file = st->site_file;
        *line = st->site_line;
        return;
    }
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

/* symbolize.c - function, file and line for an address (elfutils libdwfl, reading the module
 * files at their load bases), and the attribution of a stack to an op and a site by the rule
 * the command applies too (rules/attrib.h). Only dumps and the warn/abort modes come here,
 * on the dumper thread or at exit, never the counting path or a signal handler. */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <link.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "dwname.h"     /* rules/: how DWARF names a frame and its file */
#include "symbolizer.h" /* rules/: which debug information is read */
#include "fields.h"

pthread_mutex_t fbc_sym_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    uintptr_t key; /* ip * 2 + first: the first frame is looked up as is, the others at ip - 1 */
    fbc_frame_info info;
    bool lines; /* file:line looked up (sites only: a line table can take 0.4 s to load) */
    UT_hash_handle hh;
} cached;

typedef struct {
    UT_hash_handle hh;
    char s[];
} interned;

/* The shim's policy: the local build-id tree only, none for the system's runtime
 * (rules/symbolizer.c says why the standard search must not run in a watched program). */
const fbr_debuginfo fbc_debuginfo = FBR_DEBUGINFO_BUILD_ID;

static Dwfl *dwfl;
static Dwfl_Module *dmods[1024];
static unsigned char reported[1024];

/* Module i's functions by address (rules/symbolizer.h), sorted at its first lookup. */
static fbr_functions *fns[1024];

static cached *cache;
static interned *strings;

static const char *intern(const char *s)
{
    if (!s)
        return NULL;
    interned *e;
    size_t len = strlen(s);
    HASH_FIND(hh, strings, s, len, e);
    if (e)
        return e->s;
    e = malloc(sizeof *e + len + 1);
    if (!e)
        return NULL;
    memcpy(e->s, s, len + 1);
    HASH_ADD_KEYPTR(hh, strings, e->s, len, e);
    return e->s;
}

static Dwfl_Module *module(long i)
{
    if (i < 0 || i >= 1024)
        return NULL;
    if (reported[i])
        return dmods[i];
    reported[i] = 1;
    const fbc_module *m = fbc_modmap_at((size_t)i);
    if (!m->file)
        return NULL;
    if (!dwfl && !(dwfl = dwfl_begin(fbr_debuginfo_callbacks(fbc_debuginfo))))
        return NULL;
    /* A file replaced since the process loaded it (a rebuild while it runs) is not read: its
     * frames stay module+offset, never named from another build. */
    char why[512];
    dwfl_report_begin_add(dwfl);
    dmods[i] = fbr_report_module(dwfl, fbr_base_name(m->path), m->path, -1, m->base, m->build_id,
                                 why, sizeof why);
    dwfl_report_end(dwfl, NULL, NULL);
    return dmods[i];
}

/* Whether module i is the system's runtime, named from the loader's own tables: its files
 * are not read at all (glibc's symbol table and debug information are megabytes). */
static bool system_module(long i)
{
    return i >= 0 && fbr_module_is_system(fbc_modmap_at((size_t)i)->path);
}

/* The exported function whose extent holds addr, by the loader's tables; NULL where addr
 * lies in a function the module does not export (its nearest export is not its name). */
static const char *exported_at(uintptr_t addr)
{
    Dl_info di;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1((void *)addr, &di, (void **)&sym, RTLD_DL_SYMENT) || !di.dli_sname || !sym)
        return NULL;
    uintptr_t start = (uintptr_t)di.dli_saddr;
    return addr >= start && addr < start + sym->st_size ? di.dli_sname : NULL;
}

static cached *lookup(uintptr_t ip, bool first, fbc_frame_info *out)
{
    uintptr_t key = ip * 2 + first;
    cached *c;
    HASH_FIND(hh, cache, &key, sizeof key, c);
    if (c) {
        *out = c->info;
        return c;
    }
    memset(out, 0, sizeof *out);
    out->module = fbc_modmap_find(ip);
    out->offset = out->module >= 0 ? ip - fbc_modmap_at((size_t)out->module)->base : ip;
    Dwfl_Module *m = system_module(out->module) ? NULL : module(out->module);
    if (out->module >= 0 && !m) {
        out->symbol = intern(exported_at(first ? ip : ip - 1));
    } else if (m) {
        out->symbol = intern(fbr_function_at(&fns[out->module], m, first ? ip : ip - 1));
    }
    c = malloc(sizeof *c);
    if (c) {
        c->key = key;
        c->info = *out;
        c->lines = false;
        HASH_ADD(hh, cache, key, sizeof key, c);
    }
    return c;
}

void fbc_symbolize(uintptr_t ip, bool first, fbc_frame_info *out)
{
    lookup(ip, first, out);
}

/* The shared rule (rules/dwname.c), interned. */
static const char *source_path(const char *file, const char *comp_dir)
{
    char out[4096];
    return intern(fbr_source_path(file, comp_dir, out, sizeof out));
}

static void line_of(Dwfl_Module *m, Dwarf_Addr addr, fbc_frame_info *out)
{
    Dwfl_Line *line = dwfl_module_getsrc(m, addr);
    int lineno = 0;
    const char *src = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
    if (src) {
        out->file = source_path(src, dwfl_line_comp_dir(line));
        out->line = lineno;
    }
}

void fbc_symbolize_line(uintptr_t ip, bool first, fbc_frame_info *out)
{
    cached *c = lookup(ip, first, out);
    if (c && c->lines) {
        *out = c->info;
        return;
    }
    Dwfl_Module *m = module(out->module);
    if (m)
        line_of(m, first ? ip : ip - 1, out);
    if (c) {
        c->info = *out;
        c->lines = true;
    }
}

/* The core's cache of named frames (rules/dwname.h), for the process's life. */
static fbr_chains *named;

/* Inlined chains as this file's frames, per (ip, first): module and offset with the names. */
typedef struct {
    uintptr_t key;
    int n;
    fbc_frame_info f[FBC_MAX_INLINE];
    UT_hash_handle hh;
} chain;

static chain *chains;

int fbc_symbolize_chain(uintptr_t ip, bool first, fbc_frame_info *out, int max)
{
    uintptr_t key = ip * 2 + first;
    chain *c;
    HASH_FIND(hh, chains, &key, sizeof key, c);
    if (!c && (c = calloc(1, sizeof *c))) {
        c->key = key;
        fbc_frame_info real;
        lookup(ip, first, &real);
        Dwfl_Module *m = module(real.module);
        const fbr_dw_frame *dw = NULL;
        /* The rule the command follows for a crash dump's addresses (rules/dwname.h), its
         * frames named once per address in the core's cache. */
        c->n = m ? fbr_chain_at(&named, m, &fns[real.module], first ? ip : ip - 1, &dw) : 0;
        for (int i = 0; i < c->n; i++) {
            c->f[i] = real;
            c->f[i].symbol = intern(dw[i].symbol);
            c->f[i].file = intern(dw[i].file);
            c->f[i].line = (int)dw[i].line;
            c->f[i].inlined = dw[i].inlined;
        }
        if (!c->n) {
            fbc_symbolize_line(ip, first, &c->f[0]);
            c->n = 1;
        }
        HASH_ADD(hh, chains, key, sizeof key, c);
    }
    if (!c) {
        fbc_symbolize_line(ip, first, out);
        return 1;
    }
    int n = c->n < max ? c->n : max;
    memcpy(out, c->f, (size_t)n * sizeof *out);
    return n;
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

const char *fbc_demangle(const char *name)
{
    static demangle_fn fn;
    static int looked;
    if (!name || name[0] != '_' || name[1] != 'Z')
        return name;
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
        void *p = dlsym(RTLD_DEFAULT, "__cxa_demangle");
        memcpy(&fn, &p, sizeof p);
        __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    }
    int status = -1;
    char *d = fn ? fn(name, NULL, NULL, &status) : NULL;
    if (status != 0) {
        free(d);
        return name;
    }
    return d;
}

static const char *unnamed(const fbc_frame_info *f)
{
    char buf[512];
    const char *n =
        fbr_unnamed(f->symbol, f->module >= 0 ? fbc_modmap_at((size_t)f->module)->path : NULL,
                    (unsigned long)f->offset, buf, sizeof buf);
    const char *s = n == buf ? intern(buf) : n;
    return s ? s : FBR_UNKNOWN;
}

/* The lazy frame accessor rules/attrib.h walks: names a frame the first time it is asked. */
typedef struct {
    const uintptr_t *frames;
    bool exit_first; /* frame 0 is the exit's definition (looked up as is), not a caller */
    fbc_frame_info *infos;
    fbr_native *natives;
    unsigned named;
} walk;

static const fbr_native *native_at(void *ctx, size_t i)
{
    walk *w = ctx;
    while (w->named <= i) {
        unsigned j = w->named++;
        fbc_symbolize(w->frames[j], j == 0 && w->exit_first, &w->infos[j]);
        long m = w->infos[j].module;
        w->natives[j] =
            (fbr_native){w->infos[j].symbol, m, m >= 0 ? fbc_modmap_at((size_t)m)->path : NULL};
    }
    return &w->natives[i];
}

/* The row a stack was recorded under; libvkt's for a stack of no known backend. */
static const fbr_backend *row_of(const fbc_entry *e, const fbc_bmod **bm)
{
    *bm = fbc_bmod_at(FBC_BACKEND_BMOD(e->backend));
    if (*bm)
        return (*bm)->row;
    const fbr_backend *vkt = fbc_row_at(0);
    return vkt ? vkt : fbr_backend_named(FBR_BACKEND_DEFAULT);
}

const fbr_backend *fbc_entry_row(const fbc_entry *e)
{
    const fbc_bmod *bm;
    return row_of(e, &bm);
}

/* The files of the functions inlined at a candidate site, as rules/backend.h asks. */
static int files_at(void *ctx, size_t i, const char **files, int max)
{
    walk *w = ctx;
    bool first = i == 0 && w->exit_first;
    if (max == 1) {
        fbc_frame_info line;
        fbc_symbolize_line(w->frames[i], first, &line);
        files[0] = line.file;
        return line.file ? 1 : 0;
    }
    fbc_frame_info chain[FBC_MAX_INLINE];
    int n = fbc_symbolize_chain(w->frames[i], first, chain, FBC_MAX_INLINE);
    int k = 0;
    for (int j = 0; j < n && k < max; j++)
        if (chain[j].file)
            files[k++] = chain[j].file;
        else
            return 0; /* a function of no known file: the rule cannot tell */
    return k;
}

/* A stack as the rule reads it: its native frames, named lazily through w, and its Python
 * frames. */
typedef struct {
    walk w;
    fbr_native natives[FBC_MAX_DEPTH];
    fbr_pyframe py[FBC_MAX_PY];
    unsigned n, npy;
} view;

/* v over nframes native frames then npy Python ones at frames; exit_first: frame 0 is an
 * exit's definition; infos: room for the names of the native frames. */
static void view_init(view *v, const uintptr_t *frames, uint32_t nframes, uint32_t npy,
                      bool exit_first, fbc_frame_info *infos)
{
    v->n = nframes < FBC_MAX_DEPTH ? nframes : FBC_MAX_DEPTH;
    v->npy = npy < FBC_MAX_PY ? npy : FBC_MAX_PY;
    for (unsigned k = 0; k < v->npy; k++) {
        const fbc_pyframe *f = (const fbc_pyframe *)(frames[nframes + k] & ~(uintptr_t)1);
        v->py[k] = (fbr_pyframe){f->file, f->function, f->line};
    }
    v->w = (walk){frames, exit_first, infos, v->natives, 0};
}

/* The user's functions that chain[k] is inlined in, as the views print them after the site
 * ("main (app.cpp:20)"; rules/attrib.h): outward while their source is neither the backend's
 * nor the system's, interned; NULL where none is. */
static const char *inlined_in(const fbr_backend *row, const fbc_frame_info *chain, int k, int n)
{
    char text[1024] = "";
    for (int j = k + 1; j < n; j++) {
        if (!fbr_backend_user_source(row, chain[j].file))
            break;
        const char *name = fbc_demangle(chain[j].symbol);
        fbr_inlined_in_add(text, sizeof text, name, chain[j].file, chain[j].line);
        if (name != chain[j].symbol)
            free((void *)name);
    }
    return text[0] ? intern(text) : NULL;
}

/* out's site from frame a.site or Python frame a.py_site of frames (py: its Python frames). */
static void site_of(const fbr_backend *row, const fbr_attrib *a, const uintptr_t *frames,
                    const fbr_pyframe *py, fbc_attrib *out)
{
    out->site_inlined_in = NULL;
    out->site_frame = a->site;
    if (a->py_site >= 0) {
        out->site = py[a->py_site].function ? py[a->py_site].function : FBR_UNKNOWN;
        out->site_file = py[a->py_site].file;
        out->site_line = (int)py[a->py_site].line;
        out->site_python = true;
        out->site_module = NULL;
    } else if (a->site >= 0) {
        /* The innermost function at that address: a helper inlined into its caller is the
         * code that called the op, at its own line. */
        fbc_frame_info chain[FBC_MAX_INLINE];
        int nc = fbc_symbolize_chain(frames[a->site], false, chain, FBC_MAX_INLINE);
        int k = a->site_inline < nc ? a->site_inline : 0;
        fbc_frame_info *f = &chain[k];
        out->site_inlined_in = inlined_in(row, chain, k, nc);
        out->site = unnamed(f);
        out->site_file = f->file;
        out->site_line = f->line;
        out->site_python = false;
        out->site_module = f->module >= 0 ? fbc_modmap_at((size_t)f->module)->path : NULL;
    }
}

/* Whether a stack's own site names no code of the user's: none found, or a frame of the
 * system's runtime (a thread's start, all that is left outward of a worker's frames). */
static bool no_user_site(const fbr_attrib *a, const fbc_frame_info *infos, const fbc_attrib *out)
{
    if (a->py_site >= 0)
        return false;
    if (a->site < 0)
        return true;
    long m = infos[a->site].module;
    return m < 0 || fbr_module_is_system(fbc_modmap_at((size_t)m)->path) ||
           fbr_source_is_system(out->site_file) || fbr_function_is_runtime(infos[a->site].symbol);
}

/* Sites out by o's stack, the rule of every site; false where no frame of it is the user's. */
static bool site_in_origin(const fbc_origin *o, const fbr_backend *row, fbc_attrib *out)
{
    fbc_frame_info infos[FBC_MAX_DEPTH];
    view v;
    view_init(&v, o->frames, o->nframes, o->npy, false, infos);
    fbr_attrib a;
    fbr_attribute_caller(row, v.n, native_at, files_at, &v.w, v.py, v.npy, &a);
    if (a.site < 0 && a.py_site < 0)
        return false;
    site_of(row, &a, o->frames, v.py, out);
    return true;
}

/* Where the forward op that made a backward's node ran (f: its stack), as a site reads;
 * interned, NULL where no frame is the user's. */
static const char *forward_site(const fbc_origin *f, const fbr_backend *row)
{
    fbc_attrib s;
    memset(&s, 0, sizeof s);
    if (!site_in_origin(f, row, &s))
        return NULL;
    const char *name = fbc_demangle(s.site);
    fbr_site site = {NULL, NULL, NULL, name, s.site_file, s.site_line, s.site_inlined_in};
    char text[1024];
    fbr_site_text(&site, text, sizeof text);
    if (name != s.site)
        free((void *)name);
    return intern(text);
}

/* Sites e by the stack its work came from (record/origin.c), where its own has no user's. */
static void origin_site(const fbc_entry *e, const fbr_backend *row, fbc_attrib *out)
{
    const fbc_origin *o = (const fbc_origin *)e->origin;
    if (!site_in_origin(o, row, out))
        return;
    out->origin = (int)o->kind;
    out->node = o->node;
    out->forward = o->forward ? forward_site(o->forward, row) : NULL;
}

unsigned fbc_attribute(const fbc_entry *e, fbc_frame_info *infos, fbc_attrib *out)
{
    /* Frames are named only as far as the op and its site need: a stack's outer frames
     * cost lookups (ten thousand stacks, a snapshot) and say nothing about attribution. */
    view v;
    view_init(&v, e->frames, e->nframes, e->npy, true, infos);
    fbr_attrib a;
    char op[256];
    memset(out, 0, sizeof *out);
    out->site_frame = -1;
    const fbr_backend *row = row_of(e, &out->backend);
    fbr_attribute_backend(row, v.n, native_at, files_at, &v.w, v.py, v.npy, &a, op, sizeof op);
    out->op = out->site = FBR_UNKNOWN;
    /* A name the reader gave (ggml's node, the dispatcher's operator) wins over the stack's. */
    if (e->op)
        out->op = (const char *)e->op;
    else if (op[0] && a.op >= 0 && infos[a.op].symbol && !strcmp(op, infos[a.op].symbol))
        out->op = infos[a.op].symbol;
    else if (op[0] && intern(op))
        out->op = intern(op); /* the second lookup finds the first's copy */
    site_of(row, &a, e->frames, v.py, out);
    if (e->origin && no_user_site(&a, infos, out))
        origin_site(e, row, out);
    return v.w.named;
}

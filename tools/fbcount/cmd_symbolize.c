/* cmd_symbolize.c - fbcount symbolize: name the raw frames of a crash dump.
 *
 * A crash dump is written from a signal handler, where symbolization is not safe, so its
 * frames carry module + offset only. Here libdwfl resolves them against the module files
 * (checked against the build ids the dump recorded) the way the shim resolves a live dump's:
 * each address expanded into the functions inlined there, source files made absolute against
 * the compilation directory, and stacks whose op could not be named attributed by the shim's
 * rule (rules/attrib.h), their counts moved out of the "(unknown)" op. A crash dump
 * symbolized afterwards then reads like the dump the process would have written live.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "attrib.h" /* rules/: which frame is the op, which the site */
#include "cli.h"
#include "dwname.h" /* rules/: how DWARF names a frame and its file */
#include "fields.h" /* rules/: the dump's field names */
#include "output.h"
#include "readfile.h"
#include "table.h"
#include "text.h"

static const char help[] =
    "usage: fbcount symbolize [options] DUMP\n\n"
    "Resolves frames that have a module and offset but no symbol (crash dumps) to\n"
    "function and file:line with elfutils, functions inlined at an address as frames\n"
    "of their own, as the shim names them in a live dump; re-attributes stacks whose op\n"
    "was unknown, writes the symbolized dump and prints its report.\n\n"
    "  -o, --output OUT   where to write (default: DUMP with .sym.json for .json); the\n"
    "                     file is replaced atomically, never written through a link\n"
    "  -q, --quiet        do not print the report\n"
    "  -V, --version      print the version\n"
    "  -h, --help         this text\n\n"
    "A module the dump names is read only when it is a regular file (a FIFO or a device\n"
    "is refused with one line, and its frames stay raw).\n\n";

typedef struct {
    Dwfl *dwfl;
    size_t n;
    const char **paths;
    Dwfl_Module **mods; /* NULL where the file is missing or its build id differs */
    GElf_Addr *bias;
    uint64_t *base, *size;
} modtab;

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static void hex(const unsigned char *b, int n, char *out)
{
    for (int i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * n] = '\0';
}

static int open_modules(modtab *t, const fbd_dump *d)
{
    const fbd_module *m = fbd_modules(d, &t->n);
    t->dwfl = dwfl_begin(&callbacks);
    t->paths = calloc(t->n + 1, sizeof *t->paths);
    t->mods = calloc(t->n + 1, sizeof *t->mods);
    t->bias = calloc(t->n + 1, sizeof *t->bias);
    t->base = calloc(t->n + 1, sizeof *t->base);
    t->size = calloc(t->n + 1, sizeof *t->size);
    if (!t->dwfl || !t->paths || !t->mods || !t->bias || !t->base || !t->size)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        t->paths[i] = m[i].path;
        t->base[i] = m[i].base;
        t->size[i] = m[i].size;
        char e1[1200];
        fbx_escape(m[i].path, e1, sizeof e1, 0);
        /* The dump names the file: open it ourselves, without blocking and only when it is a
         * regular file, so a FIFO or a device named there cannot hang or feed us. */
        int fd = open(m[i].path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat sb;
        if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            fprintf(stderr, "fbcount: symbolize: %s: cannot open: %s (its frames stay raw)\n",
                    e1, fd < 0 ? strerror(errno) : "not a regular file");
            if (fd >= 0)
                close(fd);
            continue;
        }
        /* Reported at 0 without p_vaddr: a dwfl address is then the file's vaddr plus
         * the module's bias, and offsets relative to the load base are file vaddrs.
         * libdwfl owns fd from here. */
        Dwfl_Module *mod = dwfl_report_elf(t->dwfl, m[i].path, m[i].path, fd, 0, false);
        if (!mod) {
            fprintf(stderr, "fbcount: symbolize: %s: cannot open: %s (its frames stay raw)\n",
                    e1, dwfl_errmsg(-1));
            continue;
        }
        const unsigned char *bits;
        GElf_Addr vaddr;
        int len = dwfl_module_build_id(mod, &bits, &vaddr);
        if (m[i].build_id && len > 0 && len < 128) {
            char id[257];
            hex(bits, len, id);
            if (strcasecmp(id, m[i].build_id)) {
                char e2[600];
                fprintf(stderr, "fbcount: symbolize: %s: build id %s differs from the dump's "
                        "%s: the file changed since the crash (its frames stay raw)\n",
                        e1, id, fbx_escape(m[i].build_id, e2, sizeof e2, 0));
                continue;
            }
        }
        GElf_Addr bias = 0;
        if (!dwfl_module_getelf(mod, &bias))
            continue;
        t->mods[i] = mod;
        t->bias[i] = bias;
    }
    dwfl_report_end(t->dwfl, NULL, NULL);
    return 0;
}

static void close_modules(modtab *t)
{
    if (t->dwfl)
        dwfl_end(t->dwfl);
    free(t->paths);
    free(t->mods);
    free(t->bias);
    free(t->base);
    free(t->size);
}

/* Which module a frame lies in: by its module name, else by its ip within [base, size). */
static long module_of(const modtab *t, const fbd_frame *f, uint64_t *offset)
{
    for (size_t i = 0; f->module && f->has_offset && i < t->n; i++)
        if (!strcmp(t->paths[i], f->module)) {
            *offset = f->offset;
            return (long)i;
        }
    for (size_t i = 0; f->has_ip && i < t->n; i++)
        if (f->ip >= t->base[i] && f->ip - t->base[i] < t->size[i]) {
            *offset = f->ip - t->base[i];
            return (long)i;
        }
    return -1;
}

/* ---- an address's frames, as the shim names them (interpose/dump/symbolize.c) ---------- */
/* chain_at follows the shim's fbc_symbolize_chain step for step, naming frames by the same
 * rules (rules/dwname.h); tests/cpp checks that both name a crash dump's addresses alike, so
 * change them together. */

/* The shim's FBC_MAX_INLINE: the same chain for the same address, live or afterwards. */
#define SYM_MAX_INLINE 16

/* One frame at an address: a function inlined there, or the function the symbol table
 * names (the last of a chain). file is owned. */
typedef struct {
    const char *symbol;
    char *file;
    long line;
    bool inlined;
} inl_frame;

/* The shared rule (rules/dwname.c), in a buffer of its own: file is owned. */
static char *source_path(const char *file, const char *comp_dir)
{
    if (!file)
        return NULL;
    size_t cap = (comp_dir ? strlen(comp_dir) : 0) + strlen(file) + 3;
    char *out = malloc(cap);
    return out ? fbr_source_path(file, comp_dir, out, cap) : NULL;
}

static int chain_at(Dwfl_Module *mod, Dwarf_Addr addr, inl_frame *out)
{
    memset(out, 0, SYM_MAX_INLINE * sizeof *out);
    GElf_Off symoff;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(mod, addr, &symoff, &sym, NULL, NULL, NULL);
    Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
    int lineno = 0;
    const char *src = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
    if (src) {
        out[0].file = source_path(src, dwfl_line_comp_dir(line));
        out[0].line = lineno;
    }
    int n = 1;
    Dwarf_Addr bias;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
    Dwarf_Die *scopes = NULL;
    int ns = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    const char *comp_dir = NULL;
    Dwarf_Attribute cd;
    if (cu && dwarf_attr(cu, DW_AT_comp_dir, &cd))
        comp_dir = dwarf_formstring(&cd);
    if (cu && dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
        files = NULL;
    for (int i = 0; i < ns && n < SYM_MAX_INLINE; i++) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        out[n - 1].symbol = fbr_die_name(&scopes[i]);
        out[n - 1].inlined = true;
        inl_frame *caller = &out[n++];
        Dwarf_Attribute a;
        Dwarf_Word fi = 0, li = 0;
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &fi) == 0 && files &&
            fi < nfiles)
            caller->file = source_path(dwarf_filesrc(files, fi, NULL, NULL), comp_dir);
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &li) == 0)
            caller->line = (long)li;
    }
    free(scopes);
    out[n - 1].symbol = name;
    return n;
}

static void chain_free(inl_frame *c, int n)
{
    for (int i = 0; i < n; i++)
        free(c[i].file);
}

/* file and line as the shim writes them: a line only with its file. */
static void set_source(json_t *fr, const inl_frame *l)
{
    json_t *file = l->file ? json_string(l->file) : NULL;
    if (!file)
        return;
    json_object_set_new(fr, FBR_FILE, file);
    if (l->line > 0)
        json_object_set_new(fr, FBR_LINE, json_integer(l->line));
}

/* An inlined frame: the ip, module and offset of the frame it was inlined into. */
static json_t *inlined_frame(json_t *real, const inl_frame *l)
{
    json_t *fr = json_object(), *v;
    if (!fr)
        return NULL;
    if ((v = json_object_get(real, FBR_IP)))
        json_object_set(fr, FBR_IP, v);
    if (l->symbol)
        json_object_set_new(fr, FBR_SYMBOL, json_string(l->symbol));
    if ((v = json_object_get(real, FBR_MODULE)))
        json_object_set(fr, FBR_MODULE, v);
    if ((v = json_object_get(real, FBR_OFFSET)))
        json_object_set(fr, FBR_OFFSET, v);
    set_source(fr, l);
    json_object_set_new(fr, FBR_INLINED, json_true());
    return fr;
}

/* ---- attribution (rules/attrib.h) and the op lists ------------------------------------ */

/* A native frame of a stack after symbolizing: what attribution needs, and where its
 * chain starts in the stack's frames (its innermost inlined frame, else itself). */
typedef struct {
    fbr_native n;
    size_t first;
    uint64_t offset; /* in its module, when n.module >= 0 */
} native;

static const fbr_native *native_at(void *ctx, size_t i)
{
    return &((const native *)ctx)[i].n;
}

typedef struct {
    const char *site, *file, *module; /* file and module may be NULL */
    long line;
    bool python;
} site_info;

static json_int_t get_int(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static void add_int(json_t *o, const char *key, json_int_t v)
{
    json_int_t r = get_int(o, key) + v;
    json_object_set_new(o, key, json_integer(r > 0 ? r : 0));
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static json_t *find_op(json_t *ops, const char *op)
{
    json_t *e;
    size_t i;
    json_array_foreach(ops, i, e) {
        const char *name = json_string_value(json_object_get(e, FBR_OP));
        if (name && !strcmp(name, op))
            return e;
    }
    return NULL;
}

/* An op's or a site's largest tensor and longest fallback take in the stack's. */
static void raise_maxes(json_t *to, const json_t *st)
{
    const char *maxes[] = {FBR_MAX_BYTES, FBR_MAX_NS};
    for (size_t k = 0; k < 2; k++)
        if (get_int(st, maxes[k]) > get_int(to, maxes[k]))
            json_object_set_new(to, maxes[k], json_integer(get_int(st, maxes[k])));
}

/* Moves a stack's counts from the "(unknown)" op to its op and site, as the shim would have
 * listed it: the site with its file, line and module, merged with an equal one. */
static void move_counts(json_t *ops, const char *op, const site_info *s, const json_t *st)
{
    json_int_t count = get_int(st, FBR_COUNT), bytes = get_int(st, FBR_BYTES),
               ns = get_int(st, FBR_NS);
    json_t *from = find_op(ops, FBR_UNKNOWN), *to = find_op(ops, op);
    if (from) {
        add_int(from, FBR_COUNT, -count);
        add_int(from, FBR_BYTES, -bytes);
        if (json_object_get(from, FBR_NS))
            add_int(from, FBR_NS, -ns);
        json_t *sites = json_object_get(from, FBR_SITES), *e;
        size_t i;
        json_array_foreach(sites, i, e) {
            const char *name = json_string_value(json_object_get(e, FBR_SITE));
            if (name && !strcmp(name, FBR_UNKNOWN)) {
                add_int(e, FBR_COUNT, -count);
                add_int(e, FBR_BYTES, -bytes);
                if (json_object_get(e, FBR_NS))
                    add_int(e, FBR_NS, -ns);
                if (get_int(e, FBR_COUNT) == 0)
                    json_array_remove(sites, i);
                break;
            }
        }
    }
    if (!to) {
        to = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:[],s:[]}", FBR_OP, op, FBR_COUNT,
                       (json_int_t)0, FBR_BYTES, (json_int_t)0, FBR_MAX_BYTES, (json_int_t)0,
                       FBR_NS, (json_int_t)0, FBR_MAX_NS, (json_int_t)0, FBR_SHAPES, FBR_SITES);
        if (!to || json_array_append_new(ops, to) != 0)
            return;
    }
    add_int(to, FBR_COUNT, count);
    add_int(to, FBR_BYTES, bytes);
    add_int(to, FBR_NS, ns);
    raise_maxes(to, st);
    json_t *sites = json_object_get(to, FBR_SITES), *e;
    if (!json_is_array(sites))
        return;
    size_t i;
    json_array_foreach(sites, i, e) {
        const char *file = json_string_value(json_object_get(e, FBR_FILE));
        if (same_str(json_string_value(json_object_get(e, FBR_SITE)), s->site) &&
            same_str(file, s->file) && (!s->file || get_int(e, FBR_LINE) == s->line) &&
            json_is_true(json_object_get(e, FBR_PYTHON)) == s->python) {
            add_int(e, FBR_COUNT, count);
            add_int(e, FBR_BYTES, bytes);
            add_int(e, FBR_NS, ns);
            raise_maxes(e, st);
            return;
        }
    }
    json_t *site = json_object();
    if (!site)
        return;
    json_object_set_new(site, FBR_SITE, json_string(s->site));
    if (s->file) {
        json_object_set_new(site, FBR_FILE, json_string(s->file));
        if (s->line > 0)
            json_object_set_new(site, FBR_LINE, json_integer(s->line));
    }
    if (s->python)
        json_object_set_new(site, FBR_PYTHON, json_true());
    if (s->module)
        json_object_set_new(site, FBR_MODULE, json_string(s->module));
    json_object_set_new(site, FBR_COUNT, json_integer(count));
    json_object_set_new(site, FBR_BYTES, json_integer(bytes));
    json_object_set_new(site, FBR_NS, json_integer(ns));
    raise_maxes(site, st);
    json_array_append_new(sites, site);
}

/* Heavier first, as the shim orders ops and sites: bytes, then count, then the name. */
static bool heavier(const json_t *a, const json_t *b, const char *name)
{
    json_int_t ab = get_int(a, FBR_BYTES), bb = get_int(b, FBR_BYTES);
    if (ab != bb)
        return ab > bb;
    json_int_t ac = get_int(a, FBR_COUNT), bc = get_int(b, FBR_COUNT);
    if (ac != bc)
        return ac > bc;
    const char *an = json_string_value(json_object_get(a, name));
    const char *bn = json_string_value(json_object_get(b, name));
    return an && bn && strcmp(an, bn) < 0;
}

static void sort_by_weight(json_t *a, const char *name)
{
    size_t n = json_array_size(a);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && heavier(json_array_get(a, j), json_array_get(a, j - 1), name);
             j--) {
            json_t *e = json_incref(json_array_get(a, j));
            json_array_remove(a, j);
            json_array_insert_new(a, j - 1, e);
        }
}

/* Drops an emptied "(unknown)" entry and orders ops and their sites as the shim does. */
static void tidy_ops(json_t *ops)
{
    for (size_t i = json_array_size(ops); i-- > 0;) {
        json_t *e = json_array_get(ops, i);
        if (!strcmp(json_string_value(json_object_get(e, FBR_OP)), FBR_UNKNOWN) &&
            get_int(e, FBR_COUNT) == 0)
            json_array_remove(ops, i);
    }
    json_t *e;
    size_t i;
    json_array_foreach(ops, i, e)
        sort_by_weight(json_object_get(e, FBR_SITES), FBR_SITE);
    sort_by_weight(ops, FBR_OP);
}

/* Writes each frame_table index in the stacks out as a copy of the frame it names, so every
 * frame can be symbolized in place; the table is dropped. */
static void expand_frame_table(json_t *root)
{
    json_t *table = json_object_get(root, FBR_FRAME_TABLE), *st, *fr;
    size_t i, j;
    if (!json_is_array(table))
        return;
    json_array_foreach(json_object_get(root, FBR_STACKS), i, st) {
        json_t *frames = json_object_get(st, FBR_FRAMES);
        json_array_foreach(frames, j, fr) {
            if (json_is_integer(fr))
                json_array_set_new(frames, j, json_deep_copy(json_array_get(
                                                  table, (size_t)json_integer_value(fr))));
        }
    }
    json_object_del(root, FBR_FRAME_TABLE);
}

/* The name of a site frame, as the shim names one without a symbol: module+0xoffset. */
static const char *unnamed(const json_t *fr, const native *n, char *buf, size_t cap)
{
    const char *sym = json_string_value(json_object_get(fr, FBR_SYMBOL));
    if (sym)
        return sym;
    if (!n->n.path)
        return FBR_UNKNOWN;
    const char *slash = strrchr(n->n.path, '/');
    snprintf(buf, cap, "%s+0x%" PRIx64, slash ? slash + 1 : n->n.path, n->offset);
    return buf;
}

/* Names the ops and sites of a stack whose op was "(unknown)" by the shim's rule, and moves
 * its counts there. */
static void attribute(json_t *root, json_t *js, const native *nat, size_t n,
                      const fbr_pyframe *py, size_t npy, const fbr_names *prefixes,
                      const fbr_names *py_backend)
{
    fbr_attrib a;
    fbr_attribute(n, native_at, (void *)nat, py, npy, prefixes, py_backend, &a);
    if (a.op < 0 || !nat[a.op].n.symbol)
        return;
    json_t *frames = json_object_get(js, FBR_FRAMES);
    char buf[1200];
    site_info s = {.site = FBR_UNKNOWN};
    if (a.py_site >= 0) {
        s.site = py[a.py_site].function ? py[a.py_site].function : FBR_UNKNOWN;
        s.file = py[a.py_site].file;
        s.line = py[a.py_site].line;
        s.python = true;
    } else if (a.site >= 0) {
        /* The innermost function at that address: a helper inlined into its caller is the
         * code that called the op, at its own line. */
        const json_t *fr = json_array_get(frames, nat[a.site].first);
        s.site = unnamed(fr, &nat[a.site], buf, sizeof buf);
        s.file = json_string_value(json_object_get(fr, FBR_FILE));
        s.line = s.file ? (long)get_int(fr, FBR_LINE) : 0;
        s.module = nat[a.site].n.path;
    }
    const char *kind = json_string_value(json_object_get(js, FBR_KIND));
    bool host = kind && !strcmp(kind, FBR_KIND_HOST);
    /* Copies: the stack's strings are replaced below and may be what these point to. */
    char *op = strdup(nat[a.op].n.symbol), *site = strdup(s.site);
    if (op && site) {
        s.site = site;
        move_counts(json_object_get(root, host ? FBR_HOST_OPS : FBR_OPS), op, &s, js);
        json_object_set_new(js, FBR_OP, json_string(op));
        json_object_set_new(js, FBR_SITE, json_string(site));
    }
    free(op);
    free(site);
}

/* Symbolizes every raw frame in place, each expanded into its inlined chain, and attributes
 * again the stacks whose op was unknown; returns the number of frames resolved. */
static size_t symbolize(json_t *root, const modtab *t)
{
    json_t *jstacks = json_object_get(root, FBR_STACKS), *js;
    json_t *cfg = json_object_get(root, FBR_CONFIG);
    fbr_names prefixes, py_backend;
    /* The lists the shim attributed with, as its dump records them. */
    char *pre = NULL, *pyb = NULL;
    const char *keys[] = {FBR_OP_PREFIX, FBR_PY_BACKEND};
    char **lists[] = {&pre, &pyb};
    for (size_t k = 0; k < 2; k++) {
        json_t *l = json_object_get(cfg, keys[k]), *e;
        size_t i, len = 1;
        json_array_foreach(l, i, e)
            len += strlen(json_string_value(e) ? json_string_value(e) : "") + 1;
        if (!(*lists[k] = calloc(1, len)))
            continue;
        json_array_foreach(l, i, e)
            if (json_string_value(e) && !strchr(json_string_value(e), ',')) {
                strcat(*lists[k], i ? "," : "");
                strcat(*lists[k], json_string_value(e));
            }
    }
    fbr_names_parse(pre && *pre ? pre : NULL, FBR_DEFAULT_OP_PREFIX, &prefixes);
    fbr_names_parse(pyb && *pyb ? pyb : NULL, FBR_DEFAULT_PY_BACKEND, &py_backend);
    free(pre);
    free(pyb);
    size_t resolved = 0, s;
    json_array_foreach(jstacks, s, js) {
        json_t *in = json_object_get(js, FBR_FRAMES);
        size_t nin = json_array_size(in);
        json_t *out = json_array();
        native *nat = calloc(nin + 1, sizeof *nat);
        fbr_pyframe *py = calloc(nin + 1, sizeof *py);
        if (!out || !nat || !py) {
            json_decref(out);
            free(nat);
            free(py);
            continue;
        }
        size_t nn = 0, npy = 0, pending = SIZE_MAX; /* where inlined frames already there start */
        for (size_t f = 0; f < nin; f++) {
            json_t *fr = json_array_get(in, f);
            if (json_is_true(json_object_get(fr, FBR_PYTHON))) {
                py[npy++] = (fbr_pyframe){json_string_value(json_object_get(fr, FBR_FILE)),
                                          json_string_value(json_object_get(fr, FBR_SYMBOL)),
                                          (long)get_int(fr, FBR_LINE)};
                json_array_append(out, fr);
                continue;
            }
            if (json_is_true(json_object_get(fr, FBR_INLINED))) {
                if (pending == SIZE_MAX)
                    pending = json_array_size(out);
                json_array_append(out, fr);
                continue;
            }
            const fbd_frame raw = {
                .module = json_string_value(json_object_get(fr, FBR_MODULE)),
                .has_offset = json_is_string(json_object_get(fr, FBR_OFFSET)),
                .has_ip = json_is_string(json_object_get(fr, FBR_IP)),
                .offset = strtoull(json_string_value(json_object_get(fr, FBR_OFFSET))
                                       ? json_string_value(json_object_get(fr, FBR_OFFSET))
                                       : "0", NULL, 16),
                .ip = strtoull(json_string_value(json_object_get(fr, FBR_IP))
                                   ? json_string_value(json_object_get(fr, FBR_IP))
                                   : "0", NULL, 16)};
            uint64_t off = 0;
            long m = module_of(t, &raw, &off);
            size_t first = pending != SIZE_MAX ? pending : json_array_size(out);
            pending = SIZE_MAX;
            if (!json_object_get(fr, FBR_SYMBOL) && m >= 0 && t->mods[m]) {
                /* The first frame is where the fallback was; the others are return
                 * addresses, looked up at the call instruction before them. */
                inl_frame chain[SYM_MAX_INLINE];
                int nc = chain_at(t->mods[m], off + t->bias[m] - (f ? 1 : 0), chain);
                if (chain[nc - 1].symbol || chain[nc - 1].file) {
                    for (int k = 0; k + 1 < nc; k++)
                        json_array_append_new(out, inlined_frame(fr, &chain[k]));
                    if (chain[nc - 1].symbol)
                        json_object_set_new(fr, FBR_SYMBOL, json_string(chain[nc - 1].symbol));
                    if (!json_object_get(fr, FBR_FILE))
                        set_source(fr, &chain[nc - 1]);
                    resolved += chain[nc - 1].symbol != NULL;
                }
                chain_free(chain, nc);
            }
            json_array_append(out, fr);
            nat[nn++] = (native){{json_string_value(json_object_get(fr, FBR_SYMBOL)), m,
                                  m >= 0 ? t->paths[m] : NULL},
                                 first, off};
        }
        json_object_set(js, FBR_FRAMES, out);
        const char *op = json_string_value(json_object_get(js, FBR_OP));
        if (op && !strcmp(op, FBR_UNKNOWN))
            attribute(root, js, nat, nn, py, npy, &prefixes, &py_backend);
        json_decref(out);
        free(nat);
        free(py);
    }
    fbr_names_free(&prefixes);
    fbr_names_free(&py_backend);
    tidy_ops(json_object_get(root, FBR_OPS));
    tidy_ops(json_object_get(root, FBR_HOST_OPS));
    json_object_set_new(root, FBR_SYMBOLIZED, json_true());
    return resolved;
}

int fbx_symbolize(int argc, char **argv)
{
    static const struct option longopts[] = {{"output", required_argument, 0, 'o'},
                                             {"quiet", no_argument, 0, 'q'},
                                             {"version", no_argument, 0, 'V'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    const char *out = NULL;
    bool quiet = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ho:qV", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o': out = optarg; break;
        case 'q': quiet = true; break;
        case 'V': fbx_version(); return fbx_finish("symbolize", FBX_OK);
        case 'h': fputs(help, stdout); fputs(fbx_exit_codes, stdout); return FBX_OK;
        default:
            fbx_error("symbolize", "unknown or incomplete option '%s' (try --help)",
                      argv[optind - 1]);
            return FBX_USAGE;
        }
    }
    if (argc - optind != 1) {
        fbx_error("symbolize", "expected one dump (try --help)");
        return FBX_USAGE;
    }
    const char *in = argv[optind];
    char outbuf[PATH_MAX], err[512];
    if (!out) {
        size_t l = strlen(in);
        if (l > 5 && !strcmp(in + l - 5, ".json"))
            snprintf(outbuf, sizeof outbuf, "%.*s.sym.json", (int)(l - 5), in);
        else
            snprintf(outbuf, sizeof outbuf, "%s.sym.json", in);
        out = outbuf;
    }
    /* Validated by the reader; rewritten from the whole document, which the reader does
     * not keep (it streams the stacks). */
    size_t len = 0;
    char *text = fbr_read_file(in, FBD_MAX_FILE_BYTES, &len);
    fbd_status st = FBD_EREAD;
    fbd_dump *d = NULL;
    if (!text) {
        int e = errno;
        char why[128];
        if (e == ENOENT || e == EACCES)
            snprintf(err, sizeof err, "%s: cannot open: %s", in, strerror(e));
        else
            snprintf(err, sizeof err, "%s: %s", in,
                     fbr_read_error(e, FBD_MAX_FILE_BYTES, why, sizeof why));
        st = e == EFBIG ? FBD_EINVALID : FBD_EREAD;
    } else {
        d = fbd_load_buffer(text, len, in, &st, err, sizeof err);
    }
    json_error_t jerr;
    json_t *root = d ? json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    free(text);
    if (!d || !root) {
        if (d)
            snprintf(err, sizeof err, "%s: out of memory", in);
        char e1[1200];
        fbx_error("symbolize", "%s", fbx_escape(err, e1, sizeof e1, 0));
        fbd_free(d);
        return st == FBD_EREAD ? FBX_READ : FBX_INVALID;
    }
    modtab t = {0};
    if (open_modules(&t, d) != 0) {
        fbx_error("symbolize", "out of memory");
        close_modules(&t);
        fbd_free(d);
        json_decref(root);
        return FBX_SYMBOLS;
    }
    expand_frame_table(root);
    size_t resolved = symbolize(root, &t);
    close_modules(&t);
    fbd_free(d);
    fbo_file o;
    int rc = fbo_open(&o, out, err, sizeof err);
    if (rc == 0) {
        bool ok = json_dumpf(root, o.f, JSON_INDENT(1)) == 0;
        rc = fbo_close(&o, ok, err, sizeof err);
        if (!ok && rc == 0)
            rc = -1;
    }
    json_decref(root);
    if (rc != 0) {
        char e1[1200];
        fbx_error("symbolize", "%s", fbx_escape(err, e1, sizeof e1, 0));
        return FBX_WRITE;
    }
    char e1[1200];
    fprintf(stderr, "fbcount: symbolize: %zu frame%s resolved; wrote %s\n", resolved,
            resolved == 1 ? "" : "s", fbx_escape(out, e1, sizeof e1, 0));
    if (quiet)
        return FBX_OK;
    int code;
    char *paths[] = {(char *)out};
    fbm_census *c = fbx_load("symbolize", paths, 1, &code);
    if (!c)
        return code;
    fbt_opts to = {.width = fbt_term_width(stdout)};
    fbt_print_census(stdout, c, &to);
    fbm_census_free(c);
    return fbx_finish("symbolize", FBX_OK);
}

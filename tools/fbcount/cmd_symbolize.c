/* cmd_symbolize.c - fbcount symbolize: name the raw frames of a crash dump.
 *
 * A crash dump is written from a signal handler, where symbolization is not safe, so its
 * frames carry module + offset only. Here libdwfl resolves them against the module files
 * (checked against the build ids the dump recorded) the way the shim resolves a live dump's:
 * each address expanded into the functions inlined there, source files made absolute against
 * the compilation directory (rules/dwname.h, the shim's walk), and stacks whose op or site
 * could not be named attributed by their backend's rule (rules/backend.h), their counts moved
 * out of the "(unknown)" rows. A crash dump symbolized afterwards then reads like the dump the
 * process would have written live.
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

#include <uthash.h>

#include "attrib.h"  /* rules/: how an unnamed frame is named, when two sites are one */
#include "backend.h" /* rules/: each backend's rule for the op and the site */
#include "cli.h"
#include "dwname.h" /* rules/: how DWARF names a frame and its file */
#include "fields.h" /* rules/: the dump's field names */
#include "output.h"
#include "pool.h"
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

/* ---- an address's frames, as the shim names them (rules/dwname.h's chain walk) ------- */

/* The shim's FBC_MAX_INLINE: the same chain for the same address, live or afterwards. */
#define SYM_MAX_INLINE 16

/* file and line as the shim writes them: a line only with its file. */
static void set_source(json_t *fr, const fbr_dw_frame *l)
{
    json_t *file = l->file ? json_string(l->file) : NULL;
    if (!file)
        return;
    json_object_set_new(fr, FBR_FILE, file);
    if (l->line > 0)
        json_object_set_new(fr, FBR_LINE, json_integer(l->line));
}

/* An inlined frame: the ip, module and offset of the frame it was inlined into. */
static json_t *inlined_frame(json_t *real, const fbr_dw_frame *l)
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

static json_int_t get_int(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static const char *get_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* In place where the member is an integer already: a new value per update was most of the
 * time on a dump of many ops. */
static void add_int(json_t *o, const char *key, json_int_t v)
{
    json_t *m = json_object_get(o, key);
    json_int_t r = json_integer_value(m) + v;
    if (json_is_integer(m))
        json_integer_set(m, r > 0 ? r : 0);
    else
        json_object_set_new(o, key, json_integer(r > 0 ? r : 0));
}

/* ---- the rows of each kind, by backend and op, and their sites: found in O(1) ---------- */

/* The JSON tree of a dump and its indexes live until the command ends: tens of millions of small values for a
 * dump of 100,000 stacks, each a pointer bump in one arena (glibc's malloc and free were half
 * of the command's time), freed at once with the process. */
static fbp_pool *tree_pool;

static void *tree_alloc(size_t size)
{
    return fbp_alloc_raw(tree_pool, size);
}

static void tree_free(void *p)
{
    (void)p; /* the arena goes with the process */
}


static const char *const lists[] = {FBR_OPS, FBR_HOST_OPS, FBR_TRANSFERS};
static const char *const kinds[] = {FBR_KIND_FALLBACK, FBR_KIND_HOST, FBR_KIND_TRANSFER};
#define NKINDS (sizeof lists / sizeof *lists)

typedef struct site_ent {
    UT_hash_handle hh;
    json_t *obj;
    char key[];
} site_ent;

typedef struct row_ent {
    UT_hash_handle hh;
    json_t *obj;
    site_ent *sites; /* built at the first lookup */
    bool indexed;
    char key[];
} row_ent;

typedef struct {
    json_t *root;
    row_ent *rows;
} rowtab;

/* "kind\0backend\0op": a row's identity (a row without a backend is libvkt's, as older dumps
 * have it). */
static size_t row_key(char *out, size_t cap, size_t kind, const char *backend, const char *op)
{
    int n = snprintf(out, cap, "%zu%c%s%c%s", kind, 0, backend ? backend : FBR_BACKEND_DEFAULT, 0,
                     op ? op : FBR_UNKNOWN);
    return n > 0 && (size_t)n < cap ? (size_t)n : cap - 1;
}

static row_ent *row_index(rowtab *t, size_t kind, json_t *obj)
{
    char key[1200];
    size_t len = row_key(key, sizeof key, kind, get_str(obj, FBR_BACKEND_NAME), get_str(obj, FBR_OP));
    row_ent *r = fbp_alloc(tree_pool, sizeof *r + len + 1);
    if (!r)
        return NULL;
    memcpy(r->key, key, len + 1);
    r->obj = obj;
    HASH_ADD(hh, t->rows, key, len, r);
    return r;
}

static int rowtab_build(rowtab *t, json_t *root)
{
    *t = (rowtab){root, NULL};
    for (size_t k = 0; k < NKINDS; k++) {
        json_t *list = json_object_get(root, lists[k]), *e;
        size_t i;
        if (!list) {
            list = json_array();
            if (!list || json_object_set_new(root, lists[k], list) != 0)
                return -1;
        }
        json_array_foreach(list, i, e)
            if (!row_index(t, k, e))
                return -1;
    }
    return 0;
}

static void rowtab_free(rowtab *t)
{
    row_ent *r, *rt;
    HASH_ITER(hh, t->rows, r, rt) { /* the entries are the arena's */
        HASH_CLEAR(hh, r->sites);
    }
    HASH_CLEAR(hh, t->rows);
}

/* The row (kind, backend, op), made empty and listed when there is none and make is set. */
static row_ent *row_get(rowtab *t, size_t kind, const char *backend, const char *op, bool make)
{
    char key[1200];
    size_t len = row_key(key, sizeof key, kind, backend, op);
    row_ent *r;
    HASH_FIND(hh, t->rows, key, len, r);
    if (r || !make)
        return r;
    json_t *obj = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:[],s:[]}", FBR_OP, op,
                            FBR_BACKEND_NAME, backend ? backend : FBR_BACKEND_DEFAULT, FBR_COUNT,
                            (json_int_t)0, FBR_BYTES, (json_int_t)0, FBR_MAX_BYTES, (json_int_t)0,
                            FBR_NS, (json_int_t)0, FBR_MAX_NS, (json_int_t)0, FBR_SHAPES, FBR_SITES);
    if (!obj || json_array_append_new(json_object_get(t->root, lists[kind]), obj) != 0)
        return NULL;
    return row_index(t, kind, obj);
}

/* "site\0file\0line": one site by rules/attrib.h's fbr_same_site (without a file, the
 * function alone). */
static size_t site_key(char *out, size_t cap, const char *site, const char *file, long line)
{
    int n = snprintf(out, cap, "%s%c%s%c%ld", site ? site : "", 0, file ? file : "", 0,
                     file ? line : 0L);
    return n > 0 && (size_t)n < cap ? (size_t)n : cap - 1;
}

static site_ent *site_index(row_ent *r, json_t *obj)
{
    char key[4200];
    size_t len = site_key(key, sizeof key, get_str(obj, FBR_SITE), get_str(obj, FBR_FILE),
                          (long)get_int(obj, FBR_LINE));
    site_ent *s = fbp_alloc(tree_pool, sizeof *s + len + 1);
    if (!s)
        return NULL;
    memcpy(s->key, key, len + 1);
    s->obj = obj;
    HASH_ADD(hh, r->sites, key, len, s);
    return s;
}

typedef struct {
    const char *site, *file, *module; /* file and module may be NULL */
    long line;
    bool python;
} site_info;

static json_t *site_get(row_ent *r, const site_info *si)
{
    json_t *sites = json_object_get(r->obj, FBR_SITES), *e;
    if (!json_is_array(sites))
        return NULL;
    if (!r->indexed) {
        size_t i;
        json_array_foreach(sites, i, e)
            site_index(r, e);
        r->indexed = true;
    }
    char key[4200];
    size_t len = site_key(key, sizeof key, si->site, si->file, si->line);
    site_ent *s;
    HASH_FIND(hh, r->sites, key, len, s);
    if (s)
        return s->obj;
    json_t *site = json_object();
    if (!site)
        return NULL;
    json_object_set_new(site, FBR_SITE, json_string(si->site));
    if (si->file) {
        json_object_set_new(site, FBR_FILE, json_string(si->file));
        if (si->line > 0)
            json_object_set_new(site, FBR_LINE, json_integer(si->line));
    }
    if (si->python)
        json_object_set_new(site, FBR_PYTHON, json_true());
    if (si->module)
        json_object_set_new(site, FBR_MODULE, json_string(si->module));
    if (json_array_append_new(sites, site) != 0)
        return NULL;
    site_index(r, site);
    return site;
}

/* An op's or a site's largest tensor and longest fallback take in the stack's. */
static void raise_maxes(json_t *to, const json_t *st)
{
    const char *maxes[] = {FBR_MAX_BYTES, FBR_MAX_NS};
    for (size_t k = 0; k < 2; k++)
        if (get_int(st, maxes[k]) > get_int(to, maxes[k]))
            add_int(to, maxes[k], get_int(st, maxes[k]) - get_int(to, maxes[k]));
}

static void add_counts(json_t *to, const json_t *st, int sign)
{
    add_int(to, FBR_COUNT, sign * get_int(st, FBR_COUNT));
    add_int(to, FBR_BYTES, sign * get_int(st, FBR_BYTES));
    if (sign > 0 || json_object_get(to, FBR_NS))
        add_int(to, FBR_NS, sign * get_int(st, FBR_NS));
    if (sign > 0)
        raise_maxes(to, st);
}

/* Moves a stack's counts from where the dump listed them (its "(unknown)" row and site) to
 * its op and site, as the shim would have listed it. */
static void move_counts(rowtab *t, size_t kind, const char *backend, const char *from_op,
                        const char *op, const site_info *si, const json_t *st)
{
    row_ent *from = row_get(t, kind, backend, from_op, false);
    if (!from) /* a crash dump's rows of unknown ops name no backend */
        from = row_get(t, kind, NULL, from_op, false);
    if (from) {
        add_counts(from->obj, st, -1);
        site_info unknown = {.site = FBR_UNKNOWN};
        json_t *s = site_get(from, &unknown);
        if (s)
            add_counts(s, st, -1);
    }
    row_ent *to = row_get(t, kind, backend, op, true);
    if (!to)
        return;
    add_counts(to->obj, st, 1);
    json_t *s = site_get(to, si);
    if (s)
        add_counts(s, st, 1);
}

/* Heavier first, as the shim orders ops and sites: bytes, then count, then the name. */
static const char *sort_name;

static int lighter(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    json_int_t ab = get_int(a, FBR_BYTES), bb = get_int(b, FBR_BYTES);
    if (ab != bb)
        return ab > bb ? -1 : 1;
    json_int_t ac = get_int(a, FBR_COUNT), bc = get_int(b, FBR_COUNT);
    if (ac != bc)
        return ac > bc ? -1 : 1;
    const char *an = get_str(a, sort_name), *bn = get_str(b, sort_name);
    return an && bn ? strcmp(an, bn) : 0;
}

/* Orders a list (O(n log n)) and drops the entries emptied by moving their counts. */
static void sort_list(json_t *list, const char *name)
{
    size_t n = json_array_size(list), k = 0;
    json_t **v = calloc(n + 1, sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(list, i);
        const char *nm = get_str(e, name);
        if (nm && !strcmp(nm, FBR_UNKNOWN) && get_int(e, FBR_COUNT) == 0)
            continue;
        v[k++] = json_incref(e);
    }
    sort_name = name;
    qsort(v, k, sizeof *v, lighter);
    json_array_clear(list);
    for (size_t i = 0; i < k; i++)
        json_array_append_new(list, v[i]);
    free(v);
}

static void tidy(json_t *root)
{
    for (size_t k = 0; k < NKINDS; k++) {
        json_t *list = json_object_get(root, lists[k]), *e;
        size_t i;
        json_array_foreach(list, i, e)
            sort_list(json_object_get(e, FBR_SITES), FBR_SITE);
        sort_list(list, FBR_OP);
    }
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

/* ---- the backends' rows (rules/backend.h), as the dump knew them ---------------------- */

typedef struct {
    fbr_backend vkt;             /* the built-in row with the dump's op prefixes and packages */
    size_t n;
    fbr_backend own[FBR_BACKENDS_MAX]; /* rows not built in, from the dump's descriptors */
} rowset;

static void patterns_from(const json_t *list, fbr_patterns *to)
{
    json_t *e;
    size_t i;
    if (!json_is_array(list) || !json_array_size(list))
        return;
    to->n = 0;
    json_array_foreach(list, i, e)
        if (json_is_string(e) && to->n < FBR_PATTERNS_MAX)
            snprintf(to->s[to->n++], FBR_PATTERN_LEN, "%s", json_string_value(e));
}

static void rowset_load(rowset *rs, const json_t *root)
{
    memset(rs, 0, sizeof *rs);
    rs->vkt = *fbr_backend_named(FBR_BACKEND_DEFAULT);
    const json_t *cfg = json_object_get(root, FBR_CONFIG);
    patterns_from(json_object_get(cfg, FBR_OP_PREFIX), &rs->vkt.op);
    patterns_from(json_object_get(cfg, FBR_PY_BACKEND), &rs->vkt.python);
    json_t *b;
    size_t i;
    json_array_foreach(json_object_get(root, FBR_BACKENDS), i, b) {
        const char *text = get_str(b, FBR_DESCRIPTOR);
        char err[256];
        if (text && rs->n < FBR_BACKENDS_MAX &&
            fbr_backend_parse(text, strlen(text), FBR_FROM_FILE, &rs->own[rs->n], err, sizeof err) == 0)
            rs->n++;
    }
}

static const fbr_backend *rowset_get(const rowset *rs, const char *name)
{
    for (size_t i = 0; name && i < rs->n; i++)
        if (!strcmp(rs->own[i].name, name))
            return &rs->own[i];
    if (!name || !strcmp(name, FBR_BACKEND_DEFAULT))
        return &rs->vkt;
    const fbr_backend *b = fbr_backend_named(name);
    return b ? b : &rs->vkt;
}

/* ---- attribution (rules/backend.h) -------------------------------------------------- */

/* A native frame of a stack after symbolizing: what attribution needs, and where its chain
 * lies in the stack's frames (its innermost inlined frame first, itself last). */
typedef struct {
    fbr_native n;
    size_t first, self;
    uint64_t offset; /* in its module, when n.module >= 0 */
} native;

typedef struct {
    const native *nat;
    json_t *frames;
} walk;

static const fbr_native *native_at(void *ctx, size_t i)
{
    return &((const walk *)ctx)->nat[i].n;
}

static int files_at(void *ctx, size_t i, const char **files, int max)
{
    const walk *w = ctx;
    int k = 0;
    for (size_t f = w->nat[i].first; f <= w->nat[i].self && k < max; f++) {
        const char *file = get_str(json_array_get(w->frames, f), FBR_FILE);
        if (!file)
            return 0; /* a function of no known file: the rule cannot tell */
        files[k++] = file;
    }
    return k;
}

/* Names the op and site of a stack the shim could not attribute live (a crash dump's), by its
 * backend's rule, and moves its counts there. */
static void attribute(rowtab *t, const rowset *rs, json_t *js, const native *nat, size_t n,
                      const fbr_pyframe *py, size_t npy)
{
    const char *backend = get_str(js, FBR_BACKEND_NAME), *was = get_str(js, FBR_OP);
    const char *kind = get_str(js, FBR_KIND);
    size_t k = 0;
    while (k + 1 < NKINDS && !(kind && !strcmp(kind, kinds[k])))
        k++;
    if (!kind || strcmp(kind, kinds[k]))
        k = 0;
    json_t *frames = json_object_get(js, FBR_FRAMES);
    walk w = {nat, frames};
    fbr_attrib a;
    char opbuf[256], buf[1200];
    fbr_attribute_backend(rowset_get(rs, backend), n, native_at, files_at, &w, py, npy, &a, opbuf,
                          sizeof opbuf);
    /* A reader's name, kept in the crash dump, wins over the stack's. */
    const char *op = was && strcmp(was, FBR_UNKNOWN) ? was : opbuf[0] ? opbuf : NULL;
    if (!op)
        return;
    site_info s = {.site = FBR_UNKNOWN};
    if (a.py_site >= 0) {
        s.site = py[a.py_site].function ? py[a.py_site].function : FBR_UNKNOWN;
        s.file = py[a.py_site].file;
        s.line = py[a.py_site].line;
        s.python = true;
    } else if (a.site >= 0) {
        /* The chosen function at that address (rules/backend.h's site_inline): a helper
         * inlined into its caller is the code that called the op, at its own line. */
        size_t at = nat[a.site].first + (size_t)a.site_inline;
        const json_t *fr = json_array_get(frames, at <= nat[a.site].self ? at : nat[a.site].first);
        s.site = fbr_unnamed(get_str(fr, FBR_SYMBOL), nat[a.site].n.path,
                             (unsigned long)nat[a.site].offset, buf, sizeof buf);
        s.file = get_str(fr, FBR_FILE);
        s.line = s.file ? (long)get_int(fr, FBR_LINE) : 0;
        s.module = nat[a.site].n.path;
    }
    /* Copies: the stack's strings are replaced below and may be what these point to. */
    char *op_copy = strdup(op), *site = strdup(s.site), *from = strdup(was ? was : FBR_UNKNOWN);
    if (op_copy && site && from) {
        s.site = site;
        move_counts(t, k, backend, from, op_copy, &s, js);
        json_object_set_new(js, FBR_OP, json_string(op_copy));
        json_object_set_new(js, FBR_SITE, json_string(site));
    }
    free(op_copy);
    free(site);
    free(from);
}

/* Symbolizes one raw frame in place (m: its module, or -1) and appends it, after the frames
 * inlined at its address, to out; returns whether it was resolved. */
static bool symbolize_frame(const modtab *t, json_t *fr, long m, uint64_t off, bool first,
                            json_t *out)
{
    bool resolved = false;
    if (!json_object_get(fr, FBR_SYMBOL) && m >= 0 && t->mods[m]) {
        /* The first frame is where the fallback was; the others are return addresses,
         * looked up at the call instruction before them. */
        fbr_dw_frame chain[SYM_MAX_INLINE];
        char files[8192];
        int nc = fbr_dw_chain(t->mods[m], off + t->bias[m] - (first ? 0 : 1), chain,
                              SYM_MAX_INLINE, files, sizeof files);
        if (chain[nc - 1].symbol || chain[nc - 1].file) {
            for (int k = 0; k + 1 < nc; k++)
                json_array_append_new(out, inlined_frame(fr, &chain[k]));
            if (chain[nc - 1].symbol)
                json_object_set_new(fr, FBR_SYMBOL, json_string(chain[nc - 1].symbol));
            if (!json_object_get(fr, FBR_FILE))
                set_source(fr, &chain[nc - 1]);
            resolved = chain[nc - 1].symbol != NULL;
        }
    }
    json_array_append(out, fr);
    return resolved;
}

static uint64_t hex_of(const json_t *fr, const char *key)
{
    const char *s = get_str(fr, key);
    return s ? strtoull(s, NULL, 16) : 0;
}

/* Symbolizes the frames of one stack, each expanded into its inlined chain, and attributes it
 * again when the shim could not; returns the frames resolved. */
static size_t symbolize_stack(const modtab *t, rowtab *rows, const rowset *rs, json_t *js)
{
    json_t *in = json_object_get(js, FBR_FRAMES);
    size_t nin = json_array_size(in), resolved = 0;
    json_t *out = json_array();
    native *nat = calloc(nin + 1, sizeof *nat);
    fbr_pyframe *py = calloc(nin + 1, sizeof *py);
    if (!out || !nat || !py) {
        json_decref(out);
        free(nat);
        free(py);
        return 0;
    }
    size_t nn = 0, npy = 0, pending = SIZE_MAX; /* where inlined frames already there start */
    for (size_t f = 0; f < nin; f++) {
        json_t *fr = json_array_get(in, f);
        if (json_is_true(json_object_get(fr, FBR_PYTHON))) {
            py[npy++] = (fbr_pyframe){get_str(fr, FBR_FILE), get_str(fr, FBR_SYMBOL),
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
        const fbd_frame raw = {.module = get_str(fr, FBR_MODULE),
                               .has_offset = json_is_string(json_object_get(fr, FBR_OFFSET)),
                               .has_ip = json_is_string(json_object_get(fr, FBR_IP)),
                               .offset = hex_of(fr, FBR_OFFSET),
                               .ip = hex_of(fr, FBR_IP)};
        uint64_t off = 0;
        long m = module_of(t, &raw, &off);
        size_t first = pending != SIZE_MAX ? pending : json_array_size(out);
        pending = SIZE_MAX;
        resolved += symbolize_frame(t, fr, m, off, f == 0, out);
        nat[nn++] = (native){{get_str(fr, FBR_SYMBOL), m, m >= 0 ? t->paths[m] : NULL}, first,
                             json_array_size(out) - 1, off};
    }
    json_object_set(js, FBR_FRAMES, out);
    const char *op = get_str(js, FBR_OP), *site = get_str(js, FBR_SITE);
    if ((op && !strcmp(op, FBR_UNKNOWN)) || (site && !strcmp(site, FBR_UNKNOWN)))
        attribute(rows, rs, js, nat, nn, py, npy);
    json_decref(out);
    free(nat);
    free(py);
    return resolved;
}

/* Symbolizes every raw frame in place and attributes again the stacks the shim could not
 * name; linear in the stacks and ops (rows and sites are found by hash). Returns the number
 * of frames resolved, or -1 when out of memory. */
static long symbolize(json_t *root, const modtab *t)
{
    rowtab rows;
    rowset *rs = malloc(sizeof *rs);
    if (!rs || rowtab_build(&rows, root) != 0) {
        free(rs);
        return -1;
    }
    rowset_load(rs, root);
    size_t resolved = 0, s;
    json_t *js;
    json_array_foreach(json_object_get(root, FBR_STACKS), s, js)
        resolved += symbolize_stack(t, &rows, rs, js);
    rowtab_free(&rows);
    free(rs);
    tidy(root);
    json_object_set_new(root, FBR_SYMBOLIZED, json_true());
    return (long)resolved;
}

typedef struct {
    const char *in, *out;
    bool quiet;
    char outbuf[PATH_MAX];
} sym_opts;

/* The command line; FBX_OK, a usage error, or -1 when it was answered (--help, -V). */
static int parse(sym_opts *o, int argc, char **argv)
{
    static const struct option longopts[] = {{"output", required_argument, 0, 'o'},
                                             {"quiet", no_argument, 0, 'q'},
                                             {"version", no_argument, 0, 'V'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ho:qV", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o': o->out = optarg; break;
        case 'q': o->quiet = true; break;
        case 'V': fbx_version(); return -1;
        case 'h': fputs(help, stdout); fputs(fbx_exit_codes, stdout); return -1;
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
    o->in = argv[optind];
    if (!o->out) {
        size_t l = strlen(o->in);
        if (l > 5 && !strcmp(o->in + l - 5, ".json"))
            snprintf(o->outbuf, sizeof o->outbuf, "%.*s.sym.json", (int)(l - 5), o->in);
        else
            snprintf(o->outbuf, sizeof o->outbuf, "%s.sym.json", o->in);
        o->out = o->outbuf;
    }
    return FBX_OK;
}

/* The dump, validated by the reader (*d) and whole as a document (*root), which the reader
 * does not keep (it streams the stacks) and which is rewritten in place. */
static int load(const char *in, fbd_dump **d, json_t **root)
{
    char err[512];
    size_t len = 0;
    char *text = fbr_read_file(in, FBD_MAX_FILE_BYTES, &len);
    fbd_status st = FBD_EREAD;
    *d = NULL;
    *root = NULL;
    if (!text) {
        int e = errno;
        char why[128];
        if (e == ENOENT || e == EACCES)
            snprintf(err, sizeof err, "%s: cannot open: %s", in, strerror(e));
        else
            snprintf(err, sizeof err, "%s: %s", in, fbr_read_error(e, FBD_MAX_FILE_BYTES, why, sizeof why));
        st = e == EFBIG ? FBD_EINVALID : FBD_EREAD;
    } else {
        *d = fbd_load_buffer(text, len, in, &st, err, sizeof err);
    }
    json_error_t jerr;
    /* The checked dump's own values are freed as it goes; the tree kept is the arena's. */
    json_set_alloc_funcs(tree_alloc, tree_free);
    *root = *d ? json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    free(text);
    if (*d && *root)
        return FBX_OK;
    if (*d) {
        snprintf(err, sizeof err, "%s: out of memory", in);
        st = FBD_ENOMEM;
    }
    char e1[1200];
    fbx_error("symbolize", "%s", fbx_escape(err, e1, sizeof e1, 0));
    json_set_alloc_funcs(malloc, free); /* the checked dump's values are malloc's */
    fbd_free(*d);
    return fbx_load_code(st);
}

/* The dump's text gathered in large pieces: jansson hands over each token alone, and a stdio
 * call per token was a third of the writing. */
typedef struct {
    FILE *f;
    size_t n;
    bool failed;
    char buf[1 << 16];
} text_out;

static int put_text(const char *s, size_t n, void *data)
{
    text_out *t = data;
    if (t->n + n > sizeof t->buf) {
        t->failed |= t->n && fwrite(t->buf, 1, t->n, t->f) != t->n;
        t->n = 0;
        if (n > sizeof t->buf) {
            t->failed |= fwrite(s, 1, n, t->f) != n;
            return t->failed ? -1 : 0;
        }
    }
    memcpy(t->buf + t->n, s, n);
    t->n += n;
    return t->failed ? -1 : 0;
}

/* Writes root to out as the shim writes dumps (compact), atomically. */
static int write_dump(json_t *root, const char *out)
{
    char err[512];
    fbo_file o;
    int rc = fbo_open(&o, out, err, sizeof err);
    if (rc == 0) {
        static text_out t;
        t = (text_out){.f = o.f};
        bool ok = json_dump_callback(root, put_text, &t, JSON_COMPACT) == 0 &&
                  fwrite(t.buf, 1, t.n, t.f) == t.n;
        rc = fbo_close(&o, ok, err, sizeof err);
        if (!ok && rc == 0)
            rc = -1;
    }
    if (rc == 0)
        return FBX_OK;
    char e1[1200];
    fbx_error("symbolize", "%s", fbx_escape(err, e1, sizeof e1, 0));
    return FBX_WRITE;
}

int fbx_symbolize(int argc, char **argv)
{
    sym_opts o = {0};
    int code = parse(&o, argc, argv);
    if (code != FBX_OK)
        return code < 0 ? fbx_finish("symbolize", FBX_OK) : code;
    fbd_dump *d;
    json_t *root;
    if (!(tree_pool = fbp_new())) {
        fbx_error("symbolize", "out of memory");
        return FBX_NOMEM;
    }
    if ((code = load(o.in, &d, &root)) != FBX_OK)
        return code;
    modtab t = {0};
    long resolved = -1;
    if (open_modules(&t, d) == 0) {
        expand_frame_table(root);
        resolved = symbolize(root, &t);
    }
    close_modules(&t);
    /* The checked dump's values came from malloc; the tree stays in the arena, never freed
     * value by value, and what is allocated from here on is malloc's again. */
    json_set_alloc_funcs(malloc, free);
    fbd_free(d);
    code = resolved < 0 ? FBX_NOMEM : write_dump(root, o.out);
    if (resolved < 0)
        fbx_error("symbolize", "out of memory");
    if (code != FBX_OK)
        return code;
    char e1[1200];
    fprintf(stderr, "fbcount: symbolize: %ld frame%s resolved; wrote %s\n", resolved,
            resolved == 1 ? "" : "s", fbx_escape(o.out, e1, sizeof e1, 0));
    if (o.quiet)
        return FBX_OK;
    char *paths[] = {(char *)o.out};
    fbm_census *c = fbx_load("symbolize", paths, 1, &code);
    if (!c)
        return code;
    fbt_opts to = {.width = fbt_term_width(stdout)};
    fbt_print_census(stdout, c, &to);
    fbm_census_free(c);
    return fbx_finish("symbolize", FBX_OK);
}

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
 *
 * One parse: the reader (dump.h) validates the dump and keeps its top level; the stacks are
 * rewritten from the text (jtext.h), each raw frame symbolized once per distinct text, and the
 * counts move into the dump's rows and into records for the rows made. The output is what
 * jansson would write for the symbolized document, byte for byte, without building it: that
 * tree, parsed a second time and written out, was most of the time of a dump of many ops.
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
#include "jtext.h"
#include "names.h"
#include "output.h"
#include "pool.h"
#include "readfile.h"
#include "symbolizer.h" /* rules/: which debug information names frames */
#include "table.h"
#include "text.h"

static const char *debuginfo_values(void)
{
    static char b[64];
    snprintf(b, sizeof b, "%s|%s", fbr_debuginfo_name(FBR_DEBUGINFO_STANDARD),
             fbr_debuginfo_name(FBR_DEBUGINFO_BUILD_ID));
    return b;
}

static const fbx_opt options[] = {
    {'o', true, "output", "OUT",
     "where to write (default: DUMP with .sym.json for .json); the\n"
     "file is replaced atomically, never written through a link",
     NULL, NULL},
    {'d', false, "debuginfo", "POLICY",
     "which debug information names frames (recorded in the dump):\n"
     "%s; standard (the default) is elfutils' search,\n"
     ".gnu_debuglink and debuginfod where DEBUGINFOD_URLS is set;\n"
     "build-id is the shim's: the local build-id tree only, none\n"
     "for the C and C++ runtimes",
     debuginfo_values, NULL},
    {'q', true, "quiet", NULL, "do not print the report", NULL, NULL},
    FBX_OPTS_VERSION_HELP,
};
#define NOPTIONS (sizeof options / sizeof *options)

static void help(void)
{
    printf("usage: fbcount symbolize [options] DUMP\n\n"
           "Resolves frames that have a module and offset but no symbol (crash dumps) to\n"
           "function and file:line with elfutils, functions inlined at an address as frames\n"
           "of their own, as the shim names them in a live dump; re-attributes stacks whose op\n"
           "was unknown, writes the symbolized dump and prints its report.\n\n");
    fbx_put_options(stdout, options, NOPTIONS, 21);
    printf("\nA module the dump names is read only when it is a regular file (a FIFO or a device\n"
           "is refused with one line, and its frames stay raw).\n\n");
    fbx_put_exit_codes(stdout, "symbolize");
}

typedef struct {
    Dwfl *dwfl;
    fbr_debuginfo policy; /* what debug information dwfl reads (rules/symbolizer.h) */
    size_t n;
    const char **paths;
    Dwfl_Module **mods;  /* NULL where the file is missing or its build id differs */
    fbr_functions **fns; /* each module's functions by address, sorted at its first lookup */
    fbr_chains **named;  /* the frames named, once per address (rules/dwname.h) */
    GElf_Addr *bias;
    uint64_t *base, *size;
} modtab;

/* The dump's modules reported to a libdwfl session that reads debug information by policy
 * (the core the shim names live frames with, rules/symbolizer.h). */
static int open_modules(modtab *t, const fbd_dump *d, fbr_debuginfo policy)
{
    const fbd_module *m = fbd_modules(d, &t->n);
    t->policy = policy;
    t->dwfl = dwfl_begin(fbr_debuginfo_callbacks(policy));
    t->paths = calloc(t->n + 1, sizeof *t->paths);
    t->mods = calloc(t->n + 1, sizeof *t->mods);
    t->fns = calloc(t->n + 1, sizeof *t->fns);
    t->named = calloc(1, sizeof *t->named);
    t->bias = calloc(t->n + 1, sizeof *t->bias);
    t->base = calloc(t->n + 1, sizeof *t->base);
    t->size = calloc(t->n + 1, sizeof *t->size);
    if (!t->dwfl || !t->paths || !t->mods || !t->fns || !t->named || !t->bias || !t->base ||
        !t->size)
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
            fprintf(stderr, "fbcount: symbolize: %s: cannot open: %s (its frames stay raw)\n", e1,
                    fd < 0 ? strerror(errno) : "not a regular file");
            if (fd >= 0)
                close(fd);
            continue;
        }
        /* Reported at 0 without p_vaddr: a dwfl address is then the file's vaddr plus
         * the module's bias, and offsets relative to the load base are file vaddrs.
         * libdwfl owns fd from here. */
        char why[800], e2[1700];
        Dwfl_Module *mod =
            fbr_report_module(t->dwfl, m[i].path, m[i].path, fd, 0, m[i].build_id, why, sizeof why);
        if (!mod) {
            fprintf(stderr, "fbcount: symbolize: %s: %s (its frames stay raw)\n", e1,
                    fbx_escape(why, e2, sizeof e2, 0));
            continue;
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
    for (size_t i = 0; t->fns && i < t->n; i++)
        fbr_functions_free(t->fns[i]);
    if (t->named)
        fbr_chains_free(*t->named);
    free(t->named);
    if (t->dwfl)
        dwfl_end(t->dwfl);
    free(t->paths);
    free(t->mods);
    free(t->fns);
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

/* The indexes of rows and sites, the rows and sites the stacks' counts move to, and the
 * symbolized frames kept per distinct text: small records by the hundred thousand, each a
 * pointer bump in one arena, freed at once with the process. */
static fbp_pool *tree_pool;

static void *tree_alloc(size_t size)
{
    return fbp_alloc_raw(tree_pool, size);
}

/* The reader's values are malloc's and go back to it (an array that grows frees its old
 * table); the arena's go with the process. */
static void tree_free(void *p)
{
    if (p && !fbp_owns(tree_pool, p))
        free(p);
}

/* Appends len bytes at s to the key of n bytes at out, as far as cap - 1 allows (as snprintf
 * truncates; built by hand, as a printf per key was a tenth of the time of 100,000 ops). */
static size_t key_put(char *out, size_t cap, size_t n, const char *s, size_t len)
{
    size_t room = n < cap - 1 ? cap - 1 - n : 0;
    len = len < room ? len : room;
    memcpy(out + n, s, len);
    out[n + len] = '\0';
    return n + len;
}

static size_t key_str(char *out, size_t cap, size_t n, const char *s)
{
    return key_put(out, cap, n, s, strlen(s) + 1); /* with its NUL, the separator */
}

static const char *const lists[] = {FBR_OPS, FBR_HOST_OPS, FBR_TRANSFERS};
#define NKINDS (sizeof lists / sizeof *lists)

/* A row's or a site's counters, by index: members of a jansson object (the dump's rows), or
 * of a record (the rows the stacks' counts move to: 100,000 ops made as many jansson objects,
 * 2.3 KiB each, half of what was left of the command's time). A record keeps the order its
 * counters were set in, which is where jansson would have written them. */
enum { C_COUNT, C_BYTES, C_MAX_BYTES, C_NS, C_MAX_NS, NCOUNTERS };
static const char *const counter_keys[NCOUNTERS] = {FBR_COUNT, FBR_BYTES, FBR_MAX_BYTES, FBR_NS,
                                                    FBR_MAX_NS};

typedef struct {
    json_int_t v[NCOUNTERS];
    unsigned char order[NCOUNTERS], n; /* the counters set, in the order set */
    bool set[NCOUNTERS];
} counters;

typedef struct {
    json_t *j; /* or */
    counters *c;
} cref;

static bool c_has(cref r, int k)
{
    return r.j ? json_object_get(r.j, counter_keys[k]) != NULL : r.c->set[k];
}

static json_int_t c_get(cref r, int k)
{
    return r.j ? get_int(r.j, counter_keys[k]) : r.c->v[k];
}

/* Adds v, never below 0; a counter not there yet is set after those that are. */
static void c_add(cref r, int k, json_int_t v)
{
    if (r.j) {
        add_int(r.j, counter_keys[k], v);
        return;
    }
    json_int_t x = r.c->v[k] + v;
    r.c->v[k] = x > 0 ? x : 0;
    if (!r.c->set[k]) {
        r.c->set[k] = true;
        r.c->order[r.c->n++] = (unsigned char)k;
    }
}

/* A site made for a stack's counts: what site_get writes into a site, members left out where
 * the name is not UTF-8 (jansson holds no such string). */
typedef struct {
    const char *site, *file, *module; /* NULL where left out */
    long line;                        /* written when > 0, after a file */
    const char *inlined_in;           /* NULL where left out */
    bool python;
    counters c;
} nsite;

/* A row made for a stack's counts: op and backend, the five counters at 0, no shapes. */
typedef struct {
    const char *op, *backend;
    counters c;
    nsite **sites;
    size_t nsites, capsites;
} nrow;

typedef struct site_ent {
    UT_hash_handle hh;
    cref ref;
    char key[];
} site_ent;

typedef struct row_ent {
    UT_hash_handle hh;
    json_t *obj; /* or */
    nrow *nr;
    bool indexed; /* its sites are in the table of sites */
    char key[];
} row_ent;

/* A row or site in a sorted list: a jansson object, or a record made here. */
typedef struct {
    json_t *j;
    const void *rec;
    json_int_t bytes, count;
    const char *name;
    size_t at; /* where it was: ties keep their order */
} sort_ent;

typedef struct {
    json_t *root;
    row_ent *rows;
    site_ent *sites;     /* of every row, by the row and the site: one table, not one a row
                      * (uthash's 600 bytes each were 60 MiB for 100,000 ops) */
    nrow **made[NKINDS]; /* the rows made, in the order made (after the dump's) */
    size_t nmade[NKINDS], capmade[NKINDS];
    sort_ent *sorted[NKINDS]; /* each list as written: the dump's rows and the made */
    size_t nsorted[NKINDS];
} rowtab;

/* "kind\0backend\0op": a row's identity (a row without a backend is libvkt's, as older dumps
 * have it). */
static size_t row_key(char *out, size_t cap, size_t kind, const char *backend, const char *op)
{
    char k[2] = {(char)('0' + kind), '\0'};
    size_t n = key_put(out, cap, 0, k, 2);
    n = key_str(out, cap, n, backend ? backend : FBR_BACKEND_DEFAULT);
    return key_put(out, cap, n, op ? op : FBR_UNKNOWN, strlen(op ? op : FBR_UNKNOWN));
}

static row_ent *row_index(rowtab *t, size_t kind, const char *backend, const char *op)
{
    char key[1200];
    size_t len = row_key(key, sizeof key, kind, backend, op);
    row_ent *r = fbp_alloc(tree_pool, sizeof *r + len + 1);
    if (!r)
        return NULL;
    memcpy(r->key, key, len + 1);
    HASH_ADD(hh, t->rows, key, len, r);
    return r;
}

static int rowtab_build(rowtab *t, json_t *root)
{
    *t = (rowtab){.root = root};
    for (size_t k = 0; k < NKINDS; k++) {
        json_t *list = json_object_get(root, lists[k]), *e;
        size_t i;
        if (!list) {
            list = json_array();
            if (!list || json_object_set_new(root, lists[k], list) != 0)
                return -1;
        }
        json_array_foreach(list, i, e)
        {
            row_ent *r = row_index(t, k, get_str(e, FBR_BACKEND_NAME), get_str(e, FBR_OP));
            if (!r)
                return -1;
            r->obj = e;
        }
    }
    return 0;
}

static void rowtab_free(rowtab *t)
{
    HASH_CLEAR(hh, t->rows); /* the entries are the arena's */
    HASH_CLEAR(hh, t->sites);
    for (size_t k = 0; k < NKINDS; k++) {
        for (size_t i = 0; i < t->nmade[k]; i++)
            free(t->made[k][i]->sites); /* a made row's list of sites grows by realloc */
        free(t->made[k]);
        free(t->sorted[k]);
    }
}

/* Room for need records of size bytes at *p, from first on (a made row has one site or
 * two, the rows made number thousands). */
static bool grow(void *p, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap * 2 : first;
    while (n < need)
        n *= 2;
    void *r = realloc(*(void **)p, n * size);
    if (!r)
        return false;
    *(void **)p = r;
    *cap = n;
    return true;
}

/* The pool's copy of s when it is UTF-8, else NULL. */
static const char *utf8_copy(const char *s)
{
    return s && fbj_utf8(s) ? fbp_str(tree_pool, s, strlen(s)) : NULL;
}

/* The row (kind, backend, op), made empty and listed when there is none and make is set
 * (none when a name is not UTF-8, as jansson would have made none). */
static row_ent *row_get(rowtab *t, size_t kind, const char *backend, const char *op, bool make)
{
    char key[1200];
    size_t len = row_key(key, sizeof key, kind, backend, op);
    row_ent *r;
    HASH_FIND(hh, t->rows, key, len, r);
    if (r || !make)
        return r;
    nrow *nr = fbp_alloc(tree_pool, sizeof *nr);
    if (!nr || !(nr->op = utf8_copy(op)) ||
        !(nr->backend = utf8_copy(backend ? backend : FBR_BACKEND_DEFAULT)) ||
        !grow(&t->made[kind], &t->capmade[kind], t->nmade[kind] + 1, sizeof *t->made[kind], 1024))
        return NULL;
    for (int k = 0; k < NCOUNTERS; k++)
        c_add((cref){NULL, &nr->c}, k, 0);
    t->made[kind][t->nmade[kind]++] = nr;
    if ((r = row_index(t, kind, backend, op)))
        r->nr = nr;
    return r;
}

/* "row site\0file\0inlined_in\0line": one site of a row (the row by its address) by
 * rules/attrib.h's fbr_same_site (without a file, the function alone), and the functions it is
 * inlined in. */
static size_t site_key(char *out, size_t cap, const row_ent *r, const char *site, const char *file,
                       const char *inlined_in, long line)
{
    char num[24], *p = num + sizeof num;
    unsigned long u = file ? (line < 0 ? 0UL - (unsigned long)line : (unsigned long)line) : 0;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (file && line < 0)
        *--p = '-';
    size_t n = key_put(out, cap, 0, (const char *)&r, sizeof r);
    n = key_str(out, cap, n, site ? site : "");
    n = key_str(out, cap, n, file ? file : "");
    n = key_str(out, cap, n, inlined_in ? inlined_in : "");
    return key_put(out, cap, n, p, (size_t)(num + sizeof num - p));
}

static site_ent *site_index(rowtab *t, row_ent *r, cref ref, const char *site, const char *file,
                            const char *inlined_in, long line)
{
    char key[5300 + sizeof(void *)]; /* the row, then the site as before */
    size_t len = site_key(key, sizeof key, r, site, file, inlined_in, line);
    site_ent *s = fbp_alloc(tree_pool, sizeof *s + len + 1);
    if (!s)
        return NULL;
    memcpy(s->key, key, len + 1);
    s->ref = ref;
    HASH_ADD(hh, t->sites, key, len, s);
    return s;
}

typedef struct {
    const char *site, *file, *module; /* file and module may be NULL */
    long line;
    const char *inlined_in; /* the functions the site is inlined in, or NULL */
    bool python;
} site_info;

/* A new site of a dump's row, as the shim writes one. */
static json_t *site_json(json_t *sites, const site_info *si)
{
    json_t *site = json_object();
    if (!site)
        return NULL;
    json_object_set_new(site, FBR_SITE, json_string(si->site));
    if (si->file) {
        json_object_set_new(site, FBR_FILE, json_string(si->file));
        if (si->line > 0)
            json_object_set_new(site, FBR_LINE, json_integer(si->line));
    }
    if (si->inlined_in)
        json_object_set_new(site, FBR_INLINED_IN, json_string(si->inlined_in));
    if (si->python)
        json_object_set_new(site, FBR_PYTHON, json_true());
    if (si->module)
        json_object_set_new(site, FBR_MODULE, json_string(si->module));
    return json_array_append_new(sites, site) == 0 ? site : NULL;
}

/* The same site as a record of a made row. */
static nsite *site_rec(nrow *nr, const site_info *si)
{
    nsite *s = fbp_alloc(tree_pool, sizeof *s);
    if (!s || !grow(&nr->sites, &nr->capsites, nr->nsites + 1, sizeof *nr->sites, 2))
        return NULL;
    s->site = utf8_copy(si->site);
    s->file = utf8_copy(si->file);
    s->line = s->file && si->line > 0 ? si->line : 0;
    s->python = si->python;
    s->module = utf8_copy(si->module);
    s->inlined_in = utf8_copy(si->inlined_in);
    nr->sites[nr->nsites++] = s;
    return s;
}

/* The site si of row r, made when there is none; its counters. */
static bool site_get(rowtab *t, row_ent *r, const site_info *si, cref *out)
{
    json_t *sites = r->obj ? json_object_get(r->obj, FBR_SITES) : NULL, *e;
    if (r->obj && !json_is_array(sites))
        return false;
    if (!r->indexed) {
        size_t i;
        json_array_foreach(sites, i, e)
            site_index(t, r, (cref){e, NULL}, get_str(e, FBR_SITE), get_str(e, FBR_FILE),
                       get_str(e, FBR_INLINED_IN), (long)get_int(e, FBR_LINE));
        r->indexed = true;
    }
    char key[5300 + sizeof(void *)]; /* the row, then the site as before */
    size_t len = site_key(key, sizeof key, r, si->site, si->file, si->inlined_in, si->line);
    site_ent *s;
    HASH_FIND(hh, t->sites, key, len, s);
    if (s) {
        *out = s->ref;
        return true;
    }
    if (r->obj) {
        json_t *site = site_json(sites, si);
        if (!site)
            return false;
        *out = (cref){site, NULL};
        site_index(t, r, *out, get_str(site, FBR_SITE), get_str(site, FBR_FILE),
                   get_str(site, FBR_INLINED_IN), (long)get_int(site, FBR_LINE));
        return true;
    }
    nsite *ns = site_rec(r->nr, si);
    if (!ns)
        return false;
    *out = (cref){NULL, &ns->c};
    site_index(t, r, *out, ns->site, ns->file, ns->inlined_in, ns->line);
    return true;
}

/* An op's or a site's largest tensor and longest fallback take in the stack's. */
static void raise_maxes(cref to, const fbd_stack *st)
{
    const int maxes[] = {C_MAX_BYTES, C_MAX_NS};
    const json_int_t v[] = {(json_int_t)st->max_bytes, (json_int_t)st->max_ns};
    for (size_t k = 0; k < 2; k++)
        if (v[k] > c_get(to, maxes[k]))
            c_add(to, maxes[k], v[k] - c_get(to, maxes[k]));
}

/* The stack's counts as the reader validated them (each in [0, 2^53]). */
static void add_counts(cref to, const fbd_stack *st, int sign)
{
    c_add(to, C_COUNT, sign * (json_int_t)st->count);
    c_add(to, C_BYTES, sign * (json_int_t)st->bytes);
    if (sign > 0 || c_has(to, C_NS))
        c_add(to, C_NS, sign * (json_int_t)st->ns);
    if (sign > 0)
        raise_maxes(to, st);
}

static cref row_counts(const row_ent *r)
{
    return r->obj ? (cref){r->obj, NULL} : (cref){NULL, &r->nr->c};
}

/* The dump's own row of op (a row made here by a move lists nothing of the dump's); a crash
 * dump's rows of unknown ops name no backend. */
static row_ent *listed_row(rowtab *t, size_t kind, const char *backend, const char *op)
{
    row_ent *r = row_get(t, kind, backend, op, false);
    if (!r || !r->obj)
        r = row_get(t, kind, NULL, op, false);
    return r && r->obj ? r : NULL;
}

/* Moves a stack's counts from where the dump listed them (its op's row, or, where the dump has
 * none, as a crash dump lists a stack whose op its reader named, the "(unknown)" row; and
 * the "(unknown)" site) to its op and site, as the shim would have listed it. */
static void move_counts(rowtab *t, size_t kind, const char *backend, const char *from_op,
                        const char *op, const site_info *si, const fbd_stack *st)
{
    row_ent *from = listed_row(t, kind, backend, from_op);
    if (!from && strcmp(from_op, FBR_UNKNOWN))
        from = listed_row(t, kind, backend, FBR_UNKNOWN);
    cref s;
    if (from) {
        add_counts(row_counts(from), st, -1);
        site_info unknown = {.site = FBR_UNKNOWN};
        if (site_get(t, from, &unknown, &s))
            add_counts(s, st, -1);
    }
    row_ent *to = row_get(t, kind, backend, op, true);
    if (!to)
        return;
    add_counts(row_counts(to), st, 1);
    if (site_get(t, to, si, &s))
        add_counts(s, st, 1);
}

/* Heavier first, as the shim orders ops and sites: bytes, then count, then the name; ties
 * keep the order they had (as glibc's merge sort kept them). */
static int lighter(const void *pa, const void *pb)
{
    const sort_ent *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    int c = a->name && b->name ? strcmp(a->name, b->name) : 0;
    return c ? c : a->at < b->at ? -1 : a->at > b->at;
}

/* Drops the "(unknown)" entries emptied by moving their counts, and orders the rest. */
static size_t sort_ents(sort_ent *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!v[i].name || strcmp(v[i].name, FBR_UNKNOWN) || v[i].count != 0) {
            v[k] = v[i];
            v[k].at = k;
            k++;
        }
    qsort(v, k, sizeof *v, lighter);
    return k;
}

/* Orders a dump's list in place (O(n log n)). */
static void sort_list(json_t *list, const char *name)
{
    size_t n = json_array_size(list);
    sort_ent *v = calloc(n + 1, sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_incref(json_array_get(list, i));
        v[i] =
            (sort_ent){e, NULL, get_int(e, FBR_BYTES), get_int(e, FBR_COUNT), get_str(e, name), i};
    }
    size_t k = sort_ents(v, n);
    json_array_clear(list);
    for (size_t i = 0; i < k; i++)
        json_array_append(list, v[i].j);
    for (size_t i = 0; i < n; i++)
        json_decref(v[i].j);
    free(v);
}

static int tidy(rowtab *t)
{
    for (size_t k = 0; k < NKINDS; k++) {
        json_t *list = json_object_get(t->root, lists[k]), *e;
        size_t i, n = json_array_size(list), m = t->nmade[k];
        json_array_foreach(list, i, e) sort_list(json_object_get(e, FBR_SITES), FBR_SITE);
        sort_ent *v = calloc(n + m + 1, sizeof *v);
        if (!v)
            return -1;
        json_array_foreach(list, i, e) v[i] = (sort_ent){
            e, NULL, get_int(e, FBR_BYTES), get_int(e, FBR_COUNT), get_str(e, FBR_OP), i};
        for (size_t j = 0; j < m; j++) {
            nrow *nr = t->made[k][j];
            sort_ent *s = calloc(nr->nsites + 1, sizeof *s);
            if (!s) {
                free(v);
                return -1;
            }
            for (size_t q = 0; q < nr->nsites; q++)
                s[q] = (sort_ent){NULL,
                                  nr->sites[q],
                                  nr->sites[q]->c.v[C_BYTES],
                                  nr->sites[q]->c.v[C_COUNT],
                                  nr->sites[q]->site,
                                  q};
            nr->nsites = sort_ents(s, nr->nsites);
            for (size_t q = 0; q < nr->nsites; q++)
                nr->sites[q] = (nsite *)s[q].rec;
            free(s);
            v[n + j] = (sort_ent){NULL, nr, nr->c.v[C_BYTES], nr->c.v[C_COUNT], nr->op, n + j};
        }
        t->sorted[k] = v;
        t->nsorted[k] = sort_ents(v, n + m);
    }
    return 0;
}

/* ---- the rows written as jansson writes them -------------------------------------------- */

#define PUT_LIT(b, s) fbj_put(b, s, sizeof s - 1)

static void put_key(fbj_buf *b, const char *key)
{
    fbj_put(b, ",\"", 2);
    fbj_put(b, key, strlen(key));
    fbj_put(b, "\":", 2);
}

static void put_int(fbj_buf *b, json_int_t v)
{
    char num[24];
    int n = snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, v);
    fbj_put(b, num, (size_t)n);
}

static void put_counters(fbj_buf *b, const counters *c)
{
    for (unsigned i = 0; i < c->n; i++) {
        put_key(b, counter_keys[c->order[i]]);
        put_int(b, c->v[c->order[i]]);
    }
}

/* Members of a record start with a comma; the first one's is the object's brace. */
static void open_object(fbj_buf *b, size_t at)
{
    if (b->n > at && !b->failed)
        b->p[at] = '{';
    else
        fbj_put(b, "{", 1);
}

static void put_site(fbj_buf *b, const nsite *s)
{
    size_t at = b->n;
    if (s->site) {
        put_key(b, FBR_SITE);
        fbj_put_string(b, s->site);
    }
    if (s->file) {
        put_key(b, FBR_FILE);
        fbj_put_string(b, s->file);
        if (s->line > 0) {
            put_key(b, FBR_LINE);
            put_int(b, s->line);
        }
    }
    if (s->inlined_in) {
        put_key(b, FBR_INLINED_IN);
        fbj_put_string(b, s->inlined_in);
    }
    if (s->python)
        PUT_LIT(b, ",\"" FBR_PYTHON "\":true");
    if (s->module) {
        put_key(b, FBR_MODULE);
        fbj_put_string(b, s->module);
    }
    put_counters(b, &s->c);
    open_object(b, at);
    fbj_put(b, "}", 1);
}

static void put_row(fbj_buf *b, const nrow *r)
{
    PUT_LIT(b, "{\"" FBR_OP "\":");
    fbj_put_string(b, r->op);
    put_key(b, FBR_BACKEND_NAME);
    fbj_put_string(b, r->backend);
    put_counters(b, &r->c);
    PUT_LIT(b, ",\"" FBR_SHAPES "\":[],\"" FBR_SITES "\":[");
    for (size_t i = 0; i < r->nsites; i++) {
        fbj_put(b, ",", i > 0);
        put_site(b, r->sites[i]);
    }
    fbj_put(b, "]}", 2);
}

/* The list of kind k as sorted, the dump's rows and the made ones. */
static void put_list(fbj_buf *b, const rowtab *t, size_t k)
{
    fbj_put(b, "[", 1);
    for (size_t i = 0; i < t->nsorted[k]; i++) {
        fbj_put(b, ",", i > 0);
        if (t->sorted[k][i].j)
            fbj_put_json(b, t->sorted[k][i].j);
        else
            put_row(b, t->sorted[k][i].rec);
    }
    fbj_put(b, "]", 1);
}

/* Which of the lists key names, or NKINDS. */
static size_t list_of(const char *key)
{
    size_t k = 0;
    while (k < NKINDS && strcmp(key, lists[k]))
        k++;
    return k;
}

/* ---- the backends' rows (rules/backend.h), as the dump knew them ---------------------- */

typedef struct {
    fbr_backend vkt; /* the built-in row with the dump's op prefixes and packages */
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
    json_array_foreach(list, i, e) if (json_is_string(e) && to->n < FBR_PATTERNS_MAX)
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
    json_array_foreach(json_object_get(root, FBR_BACKENDS), i, b)
    {
        const char *text = get_str(b, FBR_DESCRIPTOR);
        char err[256];
        if (text && rs->n < FBR_BACKENDS_MAX &&
            fbr_backend_parse(text, strlen(text), FBR_FROM_FILE, &rs->own[rs->n], err,
                              sizeof err) == 0)
            rs->n++;
    }
}

/* The row in force for a stack's backend (fbr_row_in_force); libvkt's row, with the dump's
 * op prefixes and packages, for a stack that names none or a backend not known here. */
static const fbr_backend *rowset_get(const rowset *rs, const char *name)
{
    const fbr_backend *own = NULL;
    for (size_t i = 0; name && !own && i < rs->n; i++)
        if (!strcmp(rs->own[i].name, name))
            own = &rs->own[i];
    if (!own && (!name || !strcmp(name, FBR_BACKEND_DEFAULT)))
        return &rs->vkt;
    const fbr_backend *b = fbr_row_in_force(name, own);
    return b ? b : &rs->vkt;
}

/* ---- attribution (rules/backend.h) -------------------------------------------------- */

/* What attribution reads of a frame of the symbolized stack (its symbol, file and line as a
 * stack's JSON says them: NULL and 0 when absent or null). */
typedef struct {
    const char *symbol, *file;
    long line;
} frame_names;

/* A native frame of a stack after symbolizing: what attribution needs, and where its chain
 * lies in the stack's frames (its innermost inlined frame first, itself last). */
typedef struct {
    fbr_native n;
    size_t first, self;
    uint64_t offset; /* in its module, when n.module >= 0 */
} native;

typedef struct {
    const native *nat;
    const frame_names *names;
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
        const char *file = w->names[f].file;
        if (!file)
            return 0; /* a function of no known file: the rule cannot tell */
        files[k++] = file;
    }
    return k;
}

/* The user's functions names[from..to] that a site is inlined in (its callers, innermost
 * first), as the shim writes them (rules/attrib.h): outward while their source is neither the
 * backend's nor the system's; into out (cap bytes), NULL where none is. */
static const char *inlined_in(const fbr_backend *row, const frame_names *names, size_t from,
                              size_t to, char *out, size_t cap)
{
    out[0] = '\0';
    for (size_t f = from; f <= to; f++) {
        if (!fbr_backend_user_source(row, names[f].file))
            break;
        char *d = fbn_demangle(names[f].symbol);
        fbr_inlined_in_add(out, cap, d ? d : names[f].symbol, names[f].file, names[f].line);
        free(d);
    }
    return out[0] ? out : NULL;
}

/* A stack as the attribution sees it: the reader's record, and op, site and backend as its
 * JSON says them (NULL when absent or null, where the reader gives defaults). */
typedef struct {
    const fbd_stack *st;
    const char *op, *site, *backend;
    const native *nat;
    size_t nn;
    const frame_names *names;
    const fbr_pyframe *py;
    size_t npy;
} stack_view;

/* Names the op and site of a stack the shim could not attribute live (a crash dump's), by its
 * backend's rule, and moves its counts there. *op and *site: the new names (malloc's), NULL
 * when the stack keeps its own. */
static void attribute(rowtab *t, const rowset *rs, const stack_view *v, char **op_out,
                      char **site_out)
{
    const char *backend = v->backend, *was = v->op;
    size_t k = v->st->kind < NKINDS ? (size_t)v->st->kind : 0; /* lists[]' order is fbd_kind's */
    walk w = {v->nat, v->names};
    fbr_attrib a;
    char opbuf[256], buf[1200], callers[1024];
    fbr_attribute_backend(rowset_get(rs, backend), v->nn, native_at, files_at, &w, v->py, v->npy,
                          &a, opbuf, sizeof opbuf);
    /* A reader's name, kept in the crash dump, wins over the stack's. */
    const char *op = was && strcmp(was, FBR_UNKNOWN) ? was : opbuf[0] ? opbuf : NULL;
    if (!op)
        return;
    site_info s = {.site = FBR_UNKNOWN};
    const native *nat = v->nat;
    if (a.py_site >= 0) {
        const fbr_pyframe *py = &v->py[a.py_site];
        s.site = py->function ? py->function : FBR_UNKNOWN;
        s.file = py->file;
        s.line = py->line;
        s.python = true;
    } else if (a.site >= 0) {
        /* The chosen function at that address (rules/backend.h's site_inline): a helper
         * inlined into its caller is the code that called the op, at its own line. */
        size_t at = nat[a.site].first + (size_t)a.site_inline;
        const frame_names *fr = &v->names[at <= nat[a.site].self ? at : nat[a.site].first];
        s.site = fbr_unnamed(fr->symbol, nat[a.site].n.path, (unsigned long)nat[a.site].offset, buf,
                             sizeof buf);
        s.file = fr->file;
        s.line = s.file ? fr->line : 0;
        s.module = nat[a.site].n.path;
        s.inlined_in = inlined_in(rowset_get(rs, backend), v->names, at + 1, nat[a.site].self,
                                  callers, sizeof callers);
    }
    *op_out = strdup(op);
    *site_out = strdup(s.site);
    if (*op_out && *site_out) {
        s.site = *site_out;
        move_counts(t, k, backend, was ? was : FBR_UNKNOWN, *op_out, &s, v->st);
        return;
    }
    free(*op_out);
    free(*site_out);
    *op_out = *site_out = NULL;
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
        const fbr_dw_frame *chain = NULL;
        int nc = fbr_chain_at(t->named, t->mods[m], &t->fns[m], off + t->bias[m] - (first ? 0 : 1),
                              &chain);
        if (nc > 0 && (chain[nc - 1].symbol || chain[nc - 1].file)) {
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

/* ---- the stacks, read and rewritten as text ------------------------------------------- */

/* A raw frame that may resolve, symbolized once per distinct text (and per first frame or
 * not: the first is looked up at its address, the others before it): a crash dump repeats
 * the same frames in stack after stack. */
typedef struct sym_ent {
    UT_hash_handle hh; /* keyed by the frame's bytes in the dump's text */
    const char *text;  /* its frames as written, inlined ones first, comma-separated */
    size_t ntext, n;
    frame_names *names; /* of each of its n frames */
    bool resolved;
} sym_ent;

typedef struct {
    const modtab *t;
    rowtab *rows;
    const rowset *rs;
    sym_ent *cache[2]; /* [first] */
    fbj_span *table;   /* frame_table's frames, for stacks that give indices */
    size_t ntable, captable;
    fbj_buf frames;        /* the stack at hand's frames, written */
    fbj_span *keys, *vals; /* the stack at hand's members */
    size_t capkeys, capvals;
    native *nat;
    size_t capnat;
    frame_names *names;
    size_t capnames;
    fbr_pyframe *py;
    size_t cappy;
    bool nomem;
} sym_ctx;

/* Room for need records of size bytes at *p; false (and ctx->nomem) when out of memory. */
static bool reserve(sym_ctx *c, void *p, size_t *cap, size_t need, size_t size)
{
    if (grow(p, cap, need, size, 64))
        return true;
    c->nomem = true;
    return false;
}

static const char *pool_str(const char *s)
{
    return s ? fbp_str(tree_pool, s, strlen(s)) : NULL;
}

/* The frames the raw frame at e symbolizes to (jansson's own values: a text at a time); NULL
 * when out of memory. */
static const sym_ent *symbolize_text(sym_ctx *c, fbj_span e, long m, uint64_t off, bool first)
{
    sym_ent *s;
    HASH_FIND(hh, c->cache[first], e.p, e.n, s);
    if (s)
        return s;
    json_t *fr = json_loadb(e.p, e.n, JSON_DECODE_ANY, NULL), *out = json_array();
    s = fbp_alloc(tree_pool, sizeof *s);
    fbj_buf b = {0};
    if (fr && out && s) {
        s->resolved = symbolize_frame(c->t, fr, m, off, first, out);
        s->n = json_array_size(out);
        s->names = fbp_alloc(tree_pool, s->n * sizeof *s->names);
        for (size_t k = 0; s->names && k < s->n; k++) {
            json_t *f = json_array_get(out, k);
            fbj_put(&b, ",", k > 0);
            fbj_put_json(&b, f);
            s->names[k] = (frame_names){pool_str(get_str(f, FBR_SYMBOL)),
                                        pool_str(get_str(f, FBR_FILE)), (long)get_int(f, FBR_LINE)};
        }
        s->ntext = b.n;
        s->text = b.failed || !s->names ? NULL : fbp_str(tree_pool, b.p ? b.p : "", b.n);
    }
    json_decref(fr);
    json_decref(out);
    fbj_buf_free(&b);
    if (!fr || !out || !s || !s->text) {
        c->nomem = true;
        return NULL;
    }
    HASH_ADD_KEYPTR(hh, c->cache[first], e.p, e.n, s);
    return s;
}

/* The frame at e of a stack: e itself, or the frame_table entry an index names. */
static fbj_span frame_text(const sym_ctx *c, fbj_span e)
{
    if (*e.p == '{')
        return e;
    size_t k = (size_t)strtoull(e.p, NULL, 10); /* checked by the reader against the table */
    return k < c->ntable ? c->table[k] : e;
}

/* Symbolizes the frames of one stack (at frames, read as st) into c->frames, each expanded
 * into its inlined chain; fills v's frames for attribution. Returns the frames resolved. */
static size_t symbolize_frames(sym_ctx *c, const fbd_stack *st, fbj_span frames, stack_view *v)
{
    const modtab *t = c->t;
    size_t nn = 0, npy = 0, nout = 0, resolved = 0, pending = SIZE_MAX; /* pending: where
                                                      inlined frames already there start */
    c->frames.n = 0;
    if (!reserve(c, &c->nat, &c->capnat, st->nframes + 1, sizeof *c->nat) ||
        !reserve(c, &c->py, &c->cappy, st->nframes + 1, sizeof *c->py))
        return 0;
    fbj_iter it = fbj_open(frames);
    fbj_span e;
    for (size_t f = 0; f < st->nframes && fbj_next_element(&it, &e); f++) {
        const fbd_frame *fr = st->frames[f];
        e = frame_text(c, e);
        fbj_put(&c->frames, ",", c->frames.n > 0);
        if (fr->python || fr->inlined) {
            if (fr->python)
                c->py[npy++] = (fbr_pyframe){fr->file, fr->symbol, fr->line};
            else if (pending == SIZE_MAX)
                pending = nout;
            if (!reserve(c, &c->names, &c->capnames, nout + 1, sizeof *c->names))
                return 0;
            c->names[nout++] = (frame_names){fr->symbol, fr->file, fr->line};
            fbj_put_compact(&c->frames, e);
            continue;
        }
        uint64_t off = 0;
        long m = module_of(t, fr, &off);
        size_t first = pending != SIZE_MAX ? pending : nout;
        pending = SIZE_MAX;
        if (!fr->symbol && m >= 0 && t->mods[m]) { /* "symbol": null stays, as in jansson */
            const sym_ent *s = symbolize_text(c, e, m, off, f == 0);
            if (!s || !reserve(c, &c->names, &c->capnames, nout + s->n, sizeof *c->names))
                return 0;
            memcpy(c->names + nout, s->names, s->n * sizeof *s->names);
            nout += s->n;
            fbj_put(&c->frames, s->text, s->ntext);
            resolved += s->resolved;
        } else {
            if (!reserve(c, &c->names, &c->capnames, nout + 1, sizeof *c->names))
                return 0;
            c->names[nout++] = (frame_names){fr->symbol, fr->file, fr->line};
            fbj_put_compact(&c->frames, e);
        }
        c->nat[nn++] = (native){
            {c->names[nout - 1].symbol, m, m >= 0 ? t->paths[m] : NULL}, first, nout - 1, off};
    }
    *v =
        (stack_view){.st = st, .nat = c->nat, .nn = nn, .names = c->names, .py = c->py, .npy = npy};
    return resolved;
}

/* Writes a member "key":value whose value is a new name (s) as jansson would; nothing
 * when s is not valid UTF-8, as jansson holds no such string. */
static void put_name_member(fbj_buf *out, bool comma, const char *key, const char *s)
{
    size_t at = out->n;
    fbj_put(out, ",", comma);
    fbj_put_string(out, key);
    fbj_put(out, ":", 1);
    if (!fbj_put_string(out, s))
        out->n = at;
}

/* Symbolizes one stack (its text at text, read as st) and writes it to out, its members in
 * their order, as jansson would have written the symbolized stack: frames expanded and
 * resolved, op and site named where the shim could not. Returns the frames resolved. */
static size_t symbolize_stack(sym_ctx *c, const fbd_stack *st, fbj_span text, fbj_buf *out)
{
    size_t n = 0, at_frames = SIZE_MAX, at_op = SIZE_MAX, at_site = SIZE_MAX, at_backend = SIZE_MAX;
    fbj_iter it = fbj_open(text);
    for (;; n++) {
        if (!reserve(c, &c->keys, &c->capkeys, n + 1, sizeof *c->keys) ||
            !reserve(c, &c->vals, &c->capvals, n + 1, sizeof *c->vals) ||
            !fbj_next_member(&it, &c->keys[n], &c->vals[n]))
            break;
        const fbj_span k = c->keys[n];
        if (fbj_is(k, FBR_FRAMES))
            at_frames = n;
        else if (fbj_is(k, FBR_OP))
            at_op = n;
        else if (fbj_is(k, FBR_SITE))
            at_site = n;
        else if (fbj_is(k, FBR_BACKEND_NAME))
            at_backend = n;
    }
    if (c->nomem || at_frames == SIZE_MAX) /* the reader requires frames */
        return 0;
    stack_view v = {0};
    size_t resolved = symbolize_frames(c, st, c->vals[at_frames], &v);
    /* Where the JSON has a string, the reader's record holds it; null or absent is NULL. */
    v.op = at_op != SIZE_MAX && *c->vals[at_op].p == '"' ? st->op : NULL;
    v.site = at_site != SIZE_MAX && *c->vals[at_site].p == '"' ? st->site : NULL;
    v.backend = at_backend != SIZE_MAX && *c->vals[at_backend].p == '"' ? st->backend : NULL;
    char *op = NULL, *site = NULL;
    if (!c->nomem &&
        ((v.op && !strcmp(v.op, FBR_UNKNOWN)) || (v.site && !strcmp(v.site, FBR_UNKNOWN))))
        attribute(c->rows, c->rs, &v, &op, &site);
    fbj_put(out, "{", 1);
    for (size_t i = 0; i < n; i++) {
        const char *name = i == at_op ? op : i == at_site ? site : NULL;
        fbj_put(out, ",", i > 0);
        fbj_put_compact(out, c->keys[i]);
        fbj_put(out, ":", 1);
        if (i == at_frames) {
            fbj_put(out, "[", 1);
            fbj_put(out, c->frames.p, c->frames.n);
            fbj_put(out, "]", 1);
        } else if (!name || !fbj_put_string(out, name)) {
            fbj_put_compact(out, c->vals[i]);
        }
    }
    if (op && at_op == SIZE_MAX)
        put_name_member(out, n > 0, FBR_OP, op);
    if (site && at_site == SIZE_MAX)
        put_name_member(out, true, FBR_SITE, site);
    fbj_put(out, "}", 1);
    free(op);
    free(site);
    return resolved;
}

/* The top level's members: where "stacks" is among those the reader kept (all but stacks
 * and frame_table, in their order), and both arrays' text. */
typedef struct {
    fbj_span stacks, table;
    size_t stacks_at;
} top_text;

static top_text top_of(const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end && *p != '{')
        p++;
    while (end > p && end[-1] != '}')
        end--;
    top_text top = {0};
    fbj_iter it = fbj_open((fbj_span){p, (size_t)(end - p), false});
    fbj_span k, v;
    size_t kept = 0;
    while (fbj_next_member(&it, &k, &v)) {
        if (fbj_is(k, FBR_STACKS)) {
            top.stacks = v;
            top.stacks_at = kept;
        } else if (fbj_is(k, FBR_FRAME_TABLE)) {
            top.table = v;
        } else {
            kept++;
        }
    }
    return top;
}

/* Symbolizes every raw frame and attributes again the stacks the shim could not name,
 * writing the stacks to out (the elements of the array, comma-separated) and their counts
 * into the dump's rows (fbd_json(d)); linear in the stacks and ops (rows and sites are found
 * by hash, frames symbolized once per distinct text). Returns the number of frames resolved,
 * or -1 when out of memory. */
static long symbolize(fbd_dump *d, const top_text *top, const modtab *t, rowtab *rows, fbj_buf *out)
{
    json_t *root = fbd_json(d);
    rowset *rs = malloc(sizeof *rs);
    if (!rs || rowtab_build(rows, root) != 0) {
        free(rs);
        return -1;
    }
    rowset_load(rs, root);
    sym_ctx c = {.t = t, .rows = rows, .rs = rs};
    fbj_iter it;
    fbj_span e;
    if (top->table.p) {
        it = fbj_open(top->table);
        while (reserve(&c, &c.table, &c.captable, c.ntable + 1, sizeof *c.table) &&
               fbj_next_element(&it, &c.table[c.ntable]))
            c.ntable++;
    }
    size_t nst, resolved = 0;
    const fbd_stack *st = fbd_stacks(d, &nst);
    it = fbj_open(top->stacks);
    for (size_t i = 0; i < nst && !c.nomem && fbj_next_element(&it, &e); i++) {
        fbj_put(out, ",", i > 0);
        resolved += symbolize_stack(&c, &st[i], e, out);
    }

    free(rs);
    free(c.table);
    free(c.keys);
    free(c.vals);
    free(c.nat);
    free(c.names);
    free(c.py);
    fbj_buf_free(&c.frames);
    HASH_CLEAR(hh, c.cache[0]); /* the entries are the arena's */
    HASH_CLEAR(hh, c.cache[1]);
    if (c.nomem || c.frames.failed || out->failed)
        return -1;
    if (tidy(rows) != 0)
        return -1;
    json_object_set_new(root, FBR_SYMBOLIZED, json_true());
    /* The policy of the last namer that named frames: the shim's stays where nothing more
     * was named here. */
    if (resolved > 0 || !json_object_get(root, FBR_DEBUGINFO))
        json_object_set_new(root, FBR_DEBUGINFO, json_string(fbr_debuginfo_name(t->policy)));
    return (long)resolved;
}

typedef struct {
    const char *in, *out;
    bool quiet;
    fbr_debuginfo debuginfo;
    char outbuf[PATH_MAX];
} sym_opts;

static int option(void *ctx, int key, char *arg)
{
    sym_opts *o = ctx;
    switch (key) {
    case 'o': o->out = arg; return FBX_OK;
    case 'd':
        if (fbr_debuginfo_parse(arg, &o->debuginfo) != 0) {
            char e1[200];
            fbx_error("symbolize", "--debuginfo: no policy '%s' (%s)",
                      fbx_escape(arg, e1, sizeof e1, 0), debuginfo_values());
            return FBX_USAGE;
        }
        return FBX_OK;
    case 'q': o->quiet = true; return FBX_OK;
    case 'V': fbx_version(); return -1;
    case 'h': help(); return -1;
    }
    return FBX_OK; /* fbx_options gives the keys of the table's rows alone */
}

/* The command line; FBX_OK, a usage error, or -1 when it was answered (--help, -V). */
static int parse(sym_opts *o, int argc, char **argv)
{
    o->debuginfo = FBR_DEBUGINFO_STANDARD;
    int code = fbx_options(argc, argv, options, NOPTIONS, false, option, o);
    if (code != FBX_OK)
        return code;
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

/* The dump, validated by the reader (*d), and its text (*text, malloc's), which the stacks
 * are rewritten from: the reader keeps the top level but not the stacks (it streams them). */
static int load(const char *in, fbd_dump **d, char **text, size_t *len)
{
    char err[512];
    fbd_status st = FBD_EREAD;
    *d = NULL;
    *text = fbr_read_file(in, FBD_MAX_FILE_BYTES, len);
    if (!*text) {
        int e = errno;
        char why[128];
        if (e == ENOENT || e == EACCES)
            snprintf(err, sizeof err, "%s: cannot open: %s", in, strerror(e));
        else
            snprintf(err, sizeof err, "%s: %s", in,
                     fbr_read_error(e, FBD_MAX_FILE_BYTES, why, sizeof why));
        st = e == EFBIG ? FBD_EINVALID : FBD_EREAD;
    } else {
        *d = fbd_load_buffer(*text, *len, in, &st, err, sizeof err);
    }
    if (*d)
        return FBX_OK;
    free(*text);
    *text = NULL;
    char e1[1200];
    fbx_error("symbolize", "%s", fbx_escape(err, e1, sizeof e1, 0));
    return fbx_load_code(st);
}

/* The symbolized dump as jansson writes a dump (compact), in three pieces: the top level
 * the reader kept (rows updated) before the stacks into b[0], after them into b[1]; the
 * stacks themselves are their own text. */
static bool render(const rowtab *rows, const top_text *top, fbj_buf b[2])
{
    const char *key;
    json_t *v;
    size_t i = 0;
    fbj_put(&b[0], "{", 1);
    json_object_foreach(rows->root, key, v)
    {
        fbj_buf *to = &b[i >= top->stacks_at];
        fbj_put(to, ",", i++ > 0 || to == &b[1]); /* after the stacks: always a comma */
        fbj_put_string(to, key);
        fbj_put(to, ":", 1);
        if (list_of(key) < NKINDS)
            put_list(to, rows, list_of(key));
        else
            fbj_put_json(to, v);
    }
    fbj_put(&b[1], "}", 1);
    static const char head[] = ",\"" FBR_STACKS "\":[";
    fbj_put(&b[0], top->stacks_at ? head : head + 1, strlen(top->stacks_at ? head : head + 1));
    return !b[0].failed && !b[1].failed;
}

/* The pieces written out: the stacks are most of the dump and are not copied again. */
static int write_dump(const fbj_buf b[2], const fbj_buf *stacks, const char *out)
{
    char err[512];
    fbo_file o;
    int rc = fbo_open(&o, out, err, sizeof err);
    if (rc == 0) {
        bool ok = fwrite(b[0].p, 1, b[0].n, o.f) == b[0].n &&
                  (!stacks->n || fwrite(stacks->p, 1, stacks->n, o.f) == stacks->n) &&
                  fputs("]", o.f) >= 0 && fwrite(b[1].p, 1, b[1].n, o.f) == b[1].n;
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

/* A dump symbolized: its pieces (render), and how many frames were resolved. */
typedef struct {
    fbj_buf top[2], stacks;
    long resolved;
} named;

static void named_free(named *n)
{
    fbj_buf_free(&n->top[0]);
    fbj_buf_free(&n->top[1]);
    fbj_buf_free(&n->stacks);
}

/* Symbolizes the dump at in (loaded and validated here, errors printed under cmd) into n.
 * FBX_OK, or the exit code of what failed. The tables live in an arena of their own, freed
 * before returning. */
static int symbolize_file(const char *cmd, const char *in, fbr_debuginfo policy, named *n)
{
    fbd_dump *d;
    char *text;
    size_t len;
    int code;
    *n = (named){.resolved = -1};
    if (!(tree_pool = fbp_new())) {
        fbx_error(cmd, "out of memory");
        return FBX_NOMEM;
    }
    if ((code = load(in, &d, &text, &len)) != FBX_OK) {
        fbp_free(tree_pool);
        return code;
    }
    modtab t = {0};
    rowtab rows = {0};
    fbj_reserve(&n->stacks, len + len / 4); /* symbolized frames make the text longer */
    top_text top = top_of(text, len);
    json_set_alloc_funcs(tree_alloc, tree_free);
    if (open_modules(&t, d, policy) == 0)
        n->resolved = symbolize(d, &top, &t, &rows, &n->stacks);
    close_modules(&t);
    bool ok = n->resolved >= 0 && render(&rows, &top, n->top);
    rowtab_free(&rows);
    fbd_free(d); /* the reader's values go back to malloc, the arena's with the arena */
    free(text);
    json_set_alloc_funcs(malloc, free);
    fbp_free(tree_pool);
    tree_pool = NULL;
    if (ok)
        return FBX_OK;
    fbx_error(cmd, "out of memory");
    named_free(n);
    return FBX_NOMEM;
}

fbd_dump *fbx_name_raw(fbd_dump *d, const char *path)
{
    named n;
    char e1[1200];
    if (symbolize_file("symbolize", path, FBR_DEBUGINFO_STANDARD, &n) != FBX_OK)
        return d;
    if (n.resolved > 0)
        fprintf(stderr,
                "fbcount: %s: a raw census (written before its frames were named): "
                "named here\n",
                fbx_escape(path, e1, sizeof e1, 0));
    else
        fprintf(stderr,
                "fbcount: %s: a raw census whose frames cannot be named here (its "
                "modules are not on this machine): run `fbcount symbolize` where they are\n",
                fbx_escape(path, e1, sizeof e1, 0));
    fbj_buf all = {0};
    fbj_put(&all, n.top[0].p, n.top[0].n);
    fbj_put(&all, n.stacks.p, n.stacks.n);
    fbj_put(&all, "]", 1);
    fbj_put(&all, n.top[1].p, n.top[1].n);
    named_free(&n);
    char err[512];
    fbd_status st;
    fbd_dump *out = all.failed ? NULL : fbd_load_buffer(all.p, all.n, path, &st, err, sizeof err);
    fbj_buf_free(&all);
    if (!out)
        return d;
    fbd_free(d);
    return out;
}

int fbx_symbolize_in_place(const char *cmd, const char *path)
{
    named n;
    int code = symbolize_file(cmd, path, FBR_DEBUGINFO_STANDARD, &n);
    if (code == FBX_OK)
        code = write_dump(n.top, &n.stacks, path);
    named_free(&n);
    return code;
}

int fbx_symbolize(int argc, char **argv)
{
    sym_opts o = {0};
    int code = parse(&o, argc, argv);
    if (code != FBX_OK)
        return code < 0 ? FBX_OK : code;
    named n;
    if ((code = symbolize_file("symbolize", o.in, o.debuginfo, &n)) != FBX_OK)
        return code;
    code = write_dump(n.top, &n.stacks, o.out);
    long resolved = n.resolved;
    named_free(&n);
    if (code != FBX_OK)
        return code;
    char e1[1200];
    fprintf(stderr, "fbcount: symbolize: %ld frame%s resolved (debug information: %s); wrote %s\n",
            resolved, resolved == 1 ? "" : "s", fbr_debuginfo_name(o.debuginfo),
            fbx_escape(o.out, e1, sizeof e1, 0));
    if (o.quiet)
        return FBX_OK;
    char *paths[] = {(char *)o.out};
    fbm_census *c = fbx_load("symbolize", paths, 1, &code);
    if (!c)
        return code;
    fbt_opts to = {.width = fbt_term_width(stdout)};
    fbt_print_census(stdout, c, &to);
    fbm_census_free(c);
    return FBX_OK;
}

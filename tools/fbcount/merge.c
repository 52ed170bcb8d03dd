/* merge.c - merge dumps: latest dump per process, then sums per op, site, stack, shape.
 *
 * Tables are uthash maps from a row key to an accumulating row, flattened into sorted
 * arrays once; a row's parts use a second map while accumulating.
 */
#include "merge.h"
#include "text.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <uthash.h>

typedef struct proc_entry {
    char *key; /* host \x1f pid \x1f exe */
    fbd_dump *dump;
    UT_hash_handle hh;
} proc_entry;

typedef struct part_acc {
    char *name;
    uint64_t count, bytes;
    UT_hash_handle hh;
} part_acc;

typedef struct row_acc {
    char *key;
    fbm_row row;
    part_acc *parts;
    UT_hash_handle hh;
} row_acc;

typedef struct {
    bool built;
    fbm_row *rows;
    size_t n;
    row_acc *map;
} table;

struct fbm_census {
    proc_entry *procs;
    fbd_dump **order; /* kept dumps in insertion order */
    size_t ndumps, cap, added;
    table tables[2][4];
    char **strings; /* owned strings referenced by rows */
    size_t nstrings, capstrings;
};

fbm_census *fbm_census_new(void) { return calloc(1, sizeof(fbm_census)); }

static void free_table(table *t)
{
    row_acc *r, *tmp;
    HASH_ITER(hh, t->map, r, tmp) {
        HASH_DEL(t->map, r);
        part_acc *p, *ptmp;
        HASH_ITER(hh, r->parts, p, ptmp) {
            HASH_DEL(r->parts, p);
            free(p->name);
            free(p);
        }
        free(r->row.parts);
        free(r->row.frames);
        free(r->key);
        free(r);
    }
    free(t->rows);
    memset(t, 0, sizeof *t);
}

void fbm_census_free(fbm_census *c)
{
    if (!c)
        return;
    proc_entry *p, *tmp;
    HASH_ITER(hh, c->procs, p, tmp) {
        HASH_DEL(c->procs, p);
        free(p->key);
        free(p);
    }
    for (size_t i = 0; i < c->ndumps; i++)
        fbd_free(c->order[i]);
    free(c->order);
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < 4; b++)
            free_table(&c->tables[k][b]);
    for (size_t i = 0; i < c->nstrings; i++)
        free(c->strings[i]);
    free(c->strings);
    free(c);
}

/* Is a newer than b as a dump of the same process? seq decides, then the time stamp. */
static bool newer(const fbd_dump *a, const fbd_dump *b)
{
    if (fbd_seq(a) != fbd_seq(b))
        return fbd_seq(a) > fbd_seq(b);
    int t = strcmp(fbd_time(a), fbd_time(b));
    if (t)
        return t > 0;
    /* The same dump before and after fbcount symbolize: prefer the symbolized copy. */
    return fbd_symbolized(a) && !fbd_symbolized(b);
}

int fbm_census_add(fbm_census *c, fbd_dump *d)
{
    c->added++;
    size_t len = strlen(fbd_host(d)) + strlen(fbd_exe(d)) + 32;
    char *key = malloc(len);
    if (!key) {
        fbd_free(d);
        return -1;
    }
    snprintf(key, len, "%s\x1f%" PRId64 "\x1f%s", fbd_host(d), fbd_pid(d), fbd_exe(d));
    proc_entry *p;
    HASH_FIND_STR(c->procs, key, p);
    if (p) {
        free(key);
        if (newer(d, p->dump)) {
            for (size_t i = 0; i < c->ndumps; i++)
                if (c->order[i] == p->dump)
                    c->order[i] = d;
            fbd_free(p->dump);
            p->dump = d;
        } else {
            fbd_free(d);
        }
        return 0;
    }
    if (c->ndumps == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        fbd_dump **o = realloc(c->order, cap * sizeof *o);
        if (!o) {
            free(key);
            fbd_free(d);
            return -1;
        }
        c->order = o;
        c->cap = cap;
    }
    p = calloc(1, sizeof *p);
    if (!p) {
        free(key);
        fbd_free(d);
        return -1;
    }
    p->key = key;
    p->dump = d;
    HASH_ADD_KEYPTR(hh, c->procs, p->key, strlen(p->key), p);
    c->order[c->ndumps++] = d;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_dump_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 5 && !strcmp(name + n - 5, ".json");
}

static fbd_status load_one(fbm_census *c, const char *path, char *err, size_t errlen)
{
    fbd_status st;
    fbd_dump *d = fbd_load_file(path, &st, err, errlen);
    if (!d)
        return st;
    if (fbm_census_add(c, d) != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return FBD_EREAD;
    }
    return FBD_OK;
}

static fbd_status load_dir(fbm_census *c, const char *dir, char *err, size_t errlen)
{
    DIR *dp = opendir(dir);
    if (!dp) {
        snprintf(err, errlen, "%s: cannot open directory: %s", dir, strerror(errno));
        return FBD_EREAD;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    fbd_status st = FBD_OK;
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (!is_dump_name(e->d_name) || (e->d_type != DT_REG && e->d_type != DT_UNKNOWN &&
                                          e->d_type != DT_LNK))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) {
                st = FBD_EREAD;
                break;
            }
            names = nn;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(len))) {
            st = FBD_EREAD;
            break;
        }
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(dp);
    if (st != FBD_OK)
        snprintf(err, errlen, "%s: out of memory", dir);
    if (names)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (st == FBD_OK)
            st = load_one(c, names[i], err, errlen);
        free(names[i]);
    }
    free(names);
    return st;
}

fbd_status fbm_census_load(fbm_census *c, char *const *paths, size_t n, char *err,
                           size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        fbd_status st;
        if (stat(paths[i], &sb) != 0) {
            snprintf(err, errlen, "%s: cannot open: %s", paths[i], strerror(errno));
            return FBD_EREAD;
        }
        st = S_ISDIR(sb.st_mode) ? load_dir(c, paths[i], err, errlen)
                                 : load_one(c, paths[i], err, errlen);
        if (st != FBD_OK)
            return st;
    }
    return FBD_OK;
}

size_t fbm_census_ndumps(const fbm_census *c) { return c->ndumps; }
fbd_dump *fbm_census_dump(const fbm_census *c, size_t i) { return c->order[i]; }

/* Counts are capped at 2^53 each, so sums of a sane number of dumps cannot overflow;
 * saturate anyway so that no input can wrap a total. */
static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

fbm_summary fbm_census_summary(const fbm_census *c)
{
    fbm_summary s = {.dumps = c->ndumps, .processes = c->ndumps,
                     .superseded = c->added - c->ndumps};
    for (size_t i = 0; i < c->ndumps; i++) {
        fbd_total t = fbd_totals(c->order[i]);
        s.total.fallbacks = sat_add(s.total.fallbacks, t.fallbacks);
        s.total.bytes = sat_add(s.total.bytes, t.bytes);
        s.total.host_ops = sat_add(s.total.host_ops, t.host_ops);
        s.total.host_bytes = sat_add(s.total.host_bytes, t.host_bytes);
        if (t.max_bytes > s.total.max_bytes)
            s.total.max_bytes = t.max_bytes;
        fbd_backend b = fbd_backend_stats(c->order[i]);
        if (b.present) {
            s.backend.present = true;
            s.backend.native = sat_add(s.backend.native, b.native);
            s.backend.fallback = sat_add(s.backend.fallback, b.fallback);
            s.backend.host = sat_add(s.backend.host, b.host);
        }
        if (!strcmp(fbd_reason(c->order[i]), "crash"))
            s.crashed++;
    }
    return s;
}

/* snprintf may cut a name inside a UTF-8 sequence; the caller trims the partial character. */
static void frame_label_raw(const fbd_frame *f, char *buf, size_t len)
{
    if (f->symbol) {
        snprintf(buf, len, "%s", f->symbol);
    } else if (f->module && f->has_offset) {
        const char *base = strrchr(f->module, '/');
        snprintf(buf, len, "%s+0x%" PRIx64, base ? base + 1 : f->module, f->offset);
    } else if (f->has_ip) {
        snprintf(buf, len, "0x%" PRIx64, f->ip);
    } else {
        snprintf(buf, len, "??");
    }
}

void fbm_frame_label(const fbd_frame *f, char *buf, size_t len)
{
    frame_label_raw(f, buf, len);
    /* A label that filled the buffer may end inside a character. */
    if (strlen(buf) + 1 >= len)
        fbx_utf8_truncate(buf, strlen(buf) - 1);
}

/* A site row names the calling line where the dump has it ("train_step (lenet.c:230)"):
 * one function often calls the same op from several lines, and the line is what a user
 * goes to fix. Op rows keep the function alone, so their site lists stay short. */
static void site_label(const fbd_site *s, char *buf, size_t len)
{
    if (s->file && s->line > 0) {
        const char *base = strrchr(s->file, '/');
        snprintf(buf, len, "%s (%s:%ld)", s->site, base ? base + 1 : s->file, s->line);
    } else {
        snprintf(buf, len, "%s", s->site);
    }
    if (strlen(buf) + 1 >= len)
        fbx_utf8_truncate(buf, strlen(buf) - 1);
}

static const char *keep(fbm_census *c, char *s)
{
    if (!s)
        return NULL;
    if (c->nstrings == c->capstrings) {
        size_t cap = c->capstrings ? c->capstrings * 2 : 64;
        char **n = realloc(c->strings, cap * sizeof *n);
        if (!n) {
            free(s);
            return NULL;
        }
        c->strings = n;
        c->capstrings = cap;
    }
    c->strings[c->nstrings++] = s;
    return s;
}

static row_acc *acc_row(table *t, const char *key, fbd_kind kind)
{
    row_acc *r;
    HASH_FIND_STR(t->map, key, r);
    if (r)
        return r;
    r = calloc(1, sizeof *r);
    if (!r || !(r->key = strdup(key))) {
        free(r);
        return NULL;
    }
    r->row.key = r->key;
    r->row.kind = kind;
    r->row.has_bytes = true;
    HASH_ADD_KEYPTR(hh, t->map, r->key, strlen(r->key), r);
    return r;
}

static int acc_part(row_acc *r, const char *name, uint64_t count, uint64_t bytes)
{
    part_acc *p;
    HASH_FIND_STR(r->parts, name, p);
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p || !(p->name = strdup(name))) {
            free(p);
            return -1;
        }
        HASH_ADD_KEYPTR(hh, r->parts, p->name, strlen(p->name), p);
    }
    p->count = sat_add(p->count, count);
    p->bytes = sat_add(p->bytes, bytes);
    return 0;
}

static void acc_add(row_acc *r, uint64_t count, uint64_t bytes, uint64_t max_bytes)
{
    r->row.count = sat_add(r->row.count, count);
    r->row.bytes = sat_add(r->row.bytes, bytes);
    if (max_bytes > r->row.max_bytes)
        r->row.max_bytes = max_bytes;
}

static int build_ops(table *t, const fbd_dump *d, fbd_kind kind, fbm_by by)
{
    size_t n;
    const fbd_op *ops = fbd_ops(d, kind, &n);
    char key[512];
    for (size_t i = 0; i < n; i++) {
        const fbd_op *o = &ops[i];
        if (by == FBM_BY_OP) {
            row_acc *r = acc_row(t, o->op, kind);
            if (!r)
                return -1;
            acc_add(r, o->count, o->bytes, o->max_bytes);
            for (size_t s = 0; s < o->nsites; s++)
                if (acc_part(r, o->sites[s].site, o->sites[s].count, o->sites[s].bytes))
                    return -1;
        } else if (by == FBM_BY_SITE) {
            for (size_t s = 0; s < o->nsites; s++) {
                site_label(&o->sites[s], key, sizeof key);
                row_acc *r = acc_row(t, key, kind);
                if (!r)
                    return -1;
                acc_add(r, o->sites[s].count, o->sites[s].bytes, 0);
                if (acc_part(r, o->op, o->sites[s].count, o->sites[s].bytes))
                    return -1;
            }
        } else {
            for (size_t s = 0; s < o->nshapes; s++) {
                const fbd_shape *sh = &o->shapes[s];
                int w = snprintf(key, sizeof key, "%s %s[", o->op, sh->dtype);
                for (size_t k = 0; k < sh->ndims && w > 0 && (size_t)w < sizeof key; k++)
                    w += snprintf(key + w, sizeof key - w, "%s%" PRId64, k ? "x" : "",
                                  sh->dims[k]);
                if (w > 0 && (size_t)w < sizeof key - 1)
                    snprintf(key + w, sizeof key - w, "]");
                row_acc *r = acc_row(t, key, kind);
                if (!r)
                    return -1;
                r->row.has_bytes = false;
                acc_add(r, sh->count, 0, 0);
            }
        }
    }
    return 0;
}

/* Stack rows merge across processes by their frame labels, since addresses differ
 * between runs; the key is kind, op, site and the labels. */
static int build_stacks(fbm_census *c, table *t, const fbd_dump *d, fbd_kind kind)
{
    size_t n;
    const fbd_stack *st = fbd_stacks(d, &n);
    for (size_t i = 0; i < n; i++) {
        if (st[i].kind != kind)
            continue;
        size_t cap = strlen(st[i].op) + strlen(st[i].site) + 16 + st[i].nframes * 64;
        char *key = malloc(cap);
        if (!key)
            return -1;
        int w = snprintf(key, cap, "%s @ %s", st[i].op, st[i].site);
        size_t keep_n = st[i].nframes < FBM_MAX_FRAMES ? st[i].nframes : FBM_MAX_FRAMES;
        for (size_t f = keep_n; f-- > 0 && w > 0 && (size_t)w < cap;) {
            char lab[256];
            fbm_frame_label(&st[i].frames[f], lab, sizeof lab);
            fbx_utf8_truncate(lab, 60);
            w += snprintf(key + w, cap - w, "%s%s", f + 1 == keep_n ? ": " : ";", lab);
        }
        row_acc *r = acc_row(t, key, kind);
        free(key);
        if (!r)
            return -1;
        acc_add(r, st[i].count, st[i].bytes, st[i].max_bytes);
        if (!r->row.frames && st[i].nframes) {
            size_t keep_n = st[i].nframes < FBM_MAX_FRAMES ? st[i].nframes : FBM_MAX_FRAMES;
            r->row.frames = calloc(keep_n, sizeof *r->row.frames);
            if (!r->row.frames)
                return -1;
            r->row.nframes = keep_n;
            for (size_t f = 0; f < keep_n; f++) {
                char lab[256];
                fbm_frame_label(&st[i].frames[keep_n - 1 - f], lab, sizeof lab);
                if (!(r->row.frames[f] = keep(c, strdup(lab))))
                    return -1;
            }
        }
        if (acc_part(r, st[i].op, st[i].count, st[i].bytes))
            return -1;
    }
    return 0;
}

static fbm_sort g_sort;

static int cmp_row(const void *pa, const void *pb)
{
    const fbm_row *a = pa, *b = pb;
    uint64_t ka = g_sort == FBM_SORT_BYTES ? a->bytes : a->count;
    uint64_t kb = g_sort == FBM_SORT_BYTES ? b->bytes : b->count;
    uint64_t la = g_sort == FBM_SORT_BYTES ? a->count : a->bytes;
    uint64_t lb = g_sort == FBM_SORT_BYTES ? b->count : b->bytes;
    if (ka != kb)
        return ka < kb ? 1 : -1;
    if (la != lb)
        return la < lb ? 1 : -1;
    return strcmp(a->key, b->key);
}

static int cmp_part(const void *pa, const void *pb)
{
    const fbm_part *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count < b->count ? 1 : -1;
    return strcmp(a->name, b->name);
}

static int build_table(fbm_census *c, table *t, fbd_kind kind, fbm_by by)
{
    for (size_t i = 0; i < c->ndumps; i++) {
        int rc = by == FBM_BY_STACK ? build_stacks(c, t, c->order[i], kind)
                                    : build_ops(t, c->order[i], kind, by);
        if (rc)
            return -1;
    }
    size_t n = HASH_COUNT(t->map);
    t->rows = calloc(n ? n : 1, sizeof *t->rows);
    if (!t->rows)
        return -1;
    row_acc *r, *tmp;
    size_t i = 0;
    HASH_ITER(hh, t->map, r, tmp) {
        size_t np = HASH_COUNT(r->parts), j = 0;
        if (np) {
            r->row.parts = calloc(np, sizeof *r->row.parts);
            if (!r->row.parts)
                return -1;
            part_acc *p, *ptmp;
            HASH_ITER(hh, r->parts, p, ptmp) {
                r->row.parts[j++] = (fbm_part){p->name, p->count, p->bytes};
            }
            r->row.nparts = np;
            qsort(r->row.parts, np, sizeof *r->row.parts, cmp_part);
        }
        t->rows[i++] = r->row;
    }
    t->n = n;
    t->built = true;
    return 0;
}

const fbm_row *fbm_census_rows(fbm_census *c, fbd_kind kind, fbm_by by, fbm_sort sort,
                               size_t *n)
{
    table *t = &c->tables[kind][by];
    *n = 0;
    if (!t->built && build_table(c, t, kind, by) != 0) {
        free_table(t);
        return NULL;
    }
    g_sort = sort;
    qsort(t->rows, t->n, sizeof *t->rows, cmp_row);
    *n = t->n;
    return t->rows;
}

const fbm_row *fbm_census_find(fbm_census *c, fbd_kind kind, fbm_by by, const char *key)
{
    size_t n;
    table *t = &c->tables[kind][by];
    if (!t->built && !fbm_census_rows(c, kind, by, FBM_SORT_BYTES, &n))
        return NULL;
    row_acc *r;
    HASH_FIND_STR(t->map, key, r);
    return r ? &r->row : NULL;
}

/* merge.c - merge dumps: the latest state per census, then sums per op, site, stack,
 * shape, rank, host and process.
 *
 * Rows accumulate in a growing array with a uthash index from the row's identity (a byte
 * string: interned pointers for stack rows, the name for the others) to its place; a row's
 * parts use a second map while accumulating. Names for people (demangled symbols, frame
 * labels) are interned in the census's pool, once per distinct frame.
 */
#include "merge.h"
#include "names.h"
#include "pool.h"
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
    char *key; /* process.id, else host \x1f pid \x1f exe */
    fbd_dump *dump;
    UT_hash_handle hh;
} proc_entry;

typedef struct part_acc {
    const char *name;
    fbm_part part;
    UT_hash_handle hh;
} part_acc;

typedef struct row_acc {
    UT_hash_handle hh;
    size_t index;
    part_acc *parts;
    size_t keylen;
    unsigned char key[];
} row_acc;

typedef struct {
    bool built;
    fbm_row *rows;
    size_t n, cap;
    row_acc *map;
    uint64_t gen; /* by stack: marks the rows this build found (stack_row) */
    fbm_sort sorted; /* the order rows are in, valid when sorted_ok */
    bool sorted_ok;
} table;

enum { W_RANK, W_PID, W_HOST, W_EXE, W_N };

struct fbm_census {
    proc_entry *procs;
    fbd_dump **order; /* kept dumps in insertion order */
    size_t ndumps, cap, added, filtered;
    char **where[W_N];
    size_t nwhere[W_N];
    fbm_frames frames;
    fbp_pool *pool;
    fbp_map *labels;  /* frame -> its label */
    fbp_map *interned; /* a dump's string -> the census's copy */
    table tables[2][FBM_NBY];
    uint64_t builds; /* tables built so far: each build's generation */
};

fbm_census *fbm_census_new(void)
{
    fbm_census *c = calloc(1, sizeof(fbm_census));
    if (c && (!(c->pool = fbp_new()) || !(c->labels = fbp_map_new()) ||
              !(c->interned = fbp_map_new()))) {
        fbp_free(c->pool);
        fbp_map_free(c->labels);
        free(c);
        return NULL;
    }
    return c;
}

static void free_table(table *t)
{
    row_acc *r, *tmp;
    HASH_ITER(hh, t->map, r, tmp) {
        HASH_DEL(t->map, r);
        part_acc *p, *ptmp;
        HASH_ITER(hh, r->parts, p, ptmp) {
            HASH_DEL(r->parts, p);
            free(p);
        }
        free(r);
    }
    for (size_t i = 0; i < t->n; i++)
        free(t->rows[i].parts);
    free(t->rows);
    memset(t, 0, sizeof *t);
}

static void free_tables(fbm_census *c)
{
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < FBM_NBY; b++)
            free_table(&c->tables[k][b]);
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
    free_tables(c);
    fbp_map_free(c->labels);
    fbp_map_free(c->interned);
    for (int w = 0; w < W_N; w++) {
        for (size_t i = 0; i < c->nwhere[w]; i++)
            free(c->where[w][i]);
        free(c->where[w]);
    }
    fbp_free(c->pool);
    free(c);
}

int fbm_census_where(fbm_census *c, const char *field, const char *value)
{
    static const char *names[W_N] = {"rank", "pid", "host", "exe"};
    int w = 0;
    while (w < W_N && strcmp(field, names[w]))
        w++;
    if (w == W_N)
        return -1;
    if (w == W_RANK || w == W_PID) {
        char *end;
        errno = 0;
        long long v = strtoll(value, &end, 10);
        if (!*value || *end || errno || v < 0)
            return -1;
    }
    char **n = realloc(c->where[w], (c->nwhere[w] + 1) * sizeof *n);
    if (!n)
        return -1;
    c->where[w] = n;
    if (!(n[c->nwhere[w]] = strdup(value)))
        return -1;
    c->nwhere[w]++;
    return 0;
}

void fbm_census_set_frames(fbm_census *c, fbm_frames mode)
{
    if (c->frames == mode)
        return;
    c->frames = mode;
    free_tables(c);
    fbp_map_free(c->labels);
    c->labels = fbp_map_new();
}

static bool matches(const fbm_census *c, const fbd_dump *d)
{
    const fbd_process *p = fbd_proc(d);
    for (int w = 0; w < W_N; w++) {
        if (!c->nwhere[w])
            continue;
        bool any = false;
        for (size_t i = 0; i < c->nwhere[w] && !any; i++) {
            const char *v = c->where[w][i];
            switch (w) {
            case W_RANK: any = p->rank >= 0 && p->rank == strtol(v, NULL, 10); break;
            case W_PID: any = p->pid == strtoll(v, NULL, 10); break;
            case W_HOST: any = !strcmp(p->host, v); break;
            default: any = !strcmp(p->exe, v) || !strcmp(fbn_base(p->exe), v); break;
            }
        }
        if (!any)
            return false;
    }
    return true;
}

/* Is a newer than b as a state of the same census? seq decides, then the time stamp. */
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

/* The census a dump belongs to: its id, which tells apart two pid 1s of two pid
 * namespaces and the images one pid exec'ed; older dumps fall back to host, pid, exe. */
static char *census_key(const fbd_dump *d)
{
    const fbd_process *p = fbd_proc(d);
    size_t len = (p->id ? strlen(p->id) : 0) + strlen(p->host) + strlen(p->exe) + 40;
    char *key = malloc(len);
    if (key && p->id)
        snprintf(key, len, "id\x1f%s", p->id);
    else if (key)
        snprintf(key, len, "%s\x1f%" PRId64 "\x1f%s", p->host, p->pid, p->exe);
    return key;
}

int fbm_census_add(fbm_census *c, fbd_dump *d)
{
    c->added++;
    if (!matches(c, d)) {
        c->filtered++;
        fbd_free(d);
        return 0;
    }
    /* Built tables and the caches point into dumps that this one may replace. */
    free_tables(c);
    fbp_map_free(c->labels);
    fbp_map_free(c->interned);
    c->labels = fbp_map_new();
    c->interned = fbp_map_new();
    if (!c->labels || !c->interned) {
        fbd_free(d);
        return -1;
    }
    char *key = census_key(d);
    if (!key) {
        fbd_free(d);
        return -1;
    }
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

/* Each count is at most 2^53, so a sum wraps only over a thousand dumps; it saturates
 * instead, where JSON's signed 64-bit integers end. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > FBM_SAT_MAX - (b > FBM_SAT_MAX ? FBM_SAT_MAX : b) ? FBM_SAT_MAX : a + b;
}

bool fbm_census_has_time(const fbm_census *c)
{
    for (size_t i = 0; i < c->ndumps; i++)
        if (fbd_has_time(c->order[i]))
            return true;
    return false;
}

fbm_summary fbm_census_summary(const fbm_census *c)
{
    fbm_summary s = {.dumps = c->ndumps, .processes = c->ndumps,
                     .superseded = c->added - c->ndumps - c->filtered,
                     .filtered = c->filtered};
    for (size_t i = 0; i < c->ndumps; i++) {
        const fbd_dump *d = c->order[i];
        fbd_total t = fbd_totals(d);
        s.total.fallbacks = sat_add(s.total.fallbacks, t.fallbacks);
        s.total.bytes = sat_add(s.total.bytes, t.bytes);
        s.total.host_ops = sat_add(s.total.host_ops, t.host_ops);
        s.total.host_bytes = sat_add(s.total.host_bytes, t.host_bytes);
        s.total.ns = sat_add(s.total.ns, t.ns);
        s.total.host_ns = sat_add(s.total.host_ns, t.host_ns);
        if (t.max_bytes > s.total.max_bytes)
            s.total.max_bytes = t.max_bytes;
        fbd_backend b = fbd_backend_stats(d);
        if (b.present) {
            s.backend.present = true;
            s.backend.native = sat_add(s.backend.native, b.native);
            s.backend.fallback = sat_add(s.backend.fallback, b.fallback);
            s.backend.host = sat_add(s.backend.host, b.host);
        }
        const char *r = fbd_reason(d);
        s.crashed += !strcmp(r, "crash");
        s.signalled += !strcmp(r, "signal");
        s.checkpoints += !strcmp(r, "checkpoint");
        s.snapshots += !strcmp(r, "snapshot");
        s.timed += fbd_has_time(d);
        if (fbd_proc(d)->has_elapsed) {
            s.elapsed_ns = sat_add(s.elapsed_ns, fbd_proc(d)->elapsed_ns);
            s.with_elapsed++;
        }
    }
    s.saturated = s.total.fallbacks == FBM_SAT_MAX || s.total.bytes == FBM_SAT_MAX ||
                  s.total.host_ops == FBM_SAT_MAX || s.total.host_bytes == FBM_SAT_MAX;
    return s;
}

/* snprintf may cut a name inside a UTF-8 sequence; the caller trims the partial character. */
static void frame_label_raw(const fbd_frame *f, fbm_frames mode, char *buf, size_t len)
{
    int w;
    if (f->symbol) {
        char *dm = fbn_demangle(f->symbol);
        w = snprintf(buf, len, "%s", dm ? dm : f->symbol);
        free(dm);
    } else if (f->module && f->has_offset) {
        w = snprintf(buf, len, "%s+0x%" PRIx64, fbn_base(f->module), f->offset);
    } else if (f->has_ip) {
        w = snprintf(buf, len, "0x%" PRIx64, f->ip);
    } else {
        w = snprintf(buf, len, "??");
    }
    /* Python frames always name their line: the function alone says little in a script. */
    if (w >= 0 && (size_t)w < len && f->file && (f->python || mode == FBM_FRAMES_LINE)) {
        if (f->line > 0)
            snprintf(buf + w, len - (size_t)w, " (%s:%ld)", fbn_base(f->file), f->line);
        else
            snprintf(buf + w, len - (size_t)w, " (%s)", fbn_base(f->file));
    }
}

void fbm_frame_label(const fbd_frame *f, fbm_frames mode, char *buf, size_t len)
{
    frame_label_raw(f, mode, buf, len);
    /* A label that filled the buffer may end inside a character. */
    if (strlen(buf) + 1 >= len)
        fbx_utf8_truncate(buf, strlen(buf) - 1);
}

/* The interned label of a frame, computed once per distinct frame. */
static const char *label_of(fbm_census *c, const fbd_frame *f)
{
    void **v = fbp_map_at(c->labels, f);
    if (!v || *v)
        return v ? *v : NULL;
    char buf[1024];
    fbm_frame_label(f, c->frames, buf, sizeof buf);
    return *v = (void *)fbp_str(c->pool, buf, strlen(buf));
}

/* The census's copy of a string interned in a dump's pool: by address, without hashing
 * the text again for every stack that names it. */
static const char *census_str(fbm_census *c, const char *s)
{
    void **v = fbp_map_at(c->interned, s);
    if (!v || *v)
        return v ? *v : NULL;
    return *v = (void *)fbp_str(c->pool, s, strlen(s));
}

static const char *keep(fbm_census *c, const char *s)
{
    return s ? fbp_str(c->pool, s, strlen(s)) : NULL;
}

/* A site as people read it: "train_step (lenet.c:230)" where the dump has the line: one
 * function often calls the same op from several lines, and the line is what a user goes to
 * fix. Op rows' site lists keep the function alone, so they stay short; Python sites
 * always carry their line. */
static const char *site_name(fbm_census *c, const fbd_site *s, bool with_line)
{
    char name[512], buf[1024];
    fbn_display(s->site, name, sizeof name);
    if ((with_line || s->python) && s->file && s->line > 0)
        snprintf(buf, sizeof buf, "%s (%s:%ld)", name, fbn_base(s->file), s->line);
    else
        snprintf(buf, sizeof buf, "%s", name);
    if (strlen(buf) + 1 >= sizeof buf)
        fbx_utf8_truncate(buf, strlen(buf) - 1);
    return keep(c, buf);
}

/* A new row at the end of t, named name; its accumulator (parts) is r. */
static fbm_row *push_row(table *t, const char *name, fbd_kind kind, row_acc *r)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        fbm_row *rows = realloc(t->rows, cap * sizeof *rows);
        if (!rows)
            return NULL;
        t->rows = rows;
        t->cap = cap;
    }
    if (!name)
        return NULL;
    fbm_row *row = &t->rows[t->n++];
    memset(row, 0, sizeof *row);
    row->key = name;
    row->kind = kind;
    row->has_bytes = true;
    row->rank = -1;
    row->priv = r;
    return row;
}

/* The row for key (keylen bytes), created with name when new. */
static fbm_row *acc_row(table *t, const void *key, size_t keylen, const char *name,
                        fbd_kind kind)
{
    row_acc *r;
    HASH_FIND(hh, t->map, key, keylen, r);
    if (r)
        return &t->rows[r->index];
    if (!name || !(r = calloc(1, sizeof *r + keylen)))
        return NULL;
    memcpy(r->key, key, keylen);
    r->keylen = keylen;
    r->index = t->n;
    fbm_row *row = push_row(t, name, kind, r);
    if (!row) {
        free(r);
        return NULL;
    }
    HASH_ADD_KEYPTR(hh, t->map, r->key, keylen, r);
    return row;
}

/* A stack row: found through its interned key (stack_row), so no accumulator. */
static fbm_row *new_row(table *t, const char *name, fbd_kind kind)
{
    return push_row(t, name, kind, NULL);
}

static int acc_part(fbm_row *row, const char *name, const char *raw, const char *file,
                    long line, uint64_t count, uint64_t bytes, uint64_t ns)
{
    row_acc *r = row->priv;
    part_acc *p;
    HASH_FIND_STR(r->parts, name, p);
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p)
            return -1;
        p->name = name;
        p->part = (fbm_part){.name = name, .raw = raw, .file = file, .line = line};
        HASH_ADD_KEYPTR(hh, r->parts, p->name, strlen(p->name), p);
    }
    p->part.count = sat_add(p->part.count, count);
    p->part.bytes = sat_add(p->part.bytes, bytes);
    p->part.ns = sat_add(p->part.ns, ns);
    return 0;
}

static void acc_add(fbm_row *r, uint64_t count, uint64_t bytes, uint64_t max_bytes,
                    uint64_t ns, uint64_t max_ns)
{
    r->count = sat_add(r->count, count);
    r->bytes = sat_add(r->bytes, bytes);
    r->ns = sat_add(r->ns, ns);
    if (max_bytes > r->max_bytes)
        r->max_bytes = max_bytes;
    if (max_ns > r->max_ns)
        r->max_ns = max_ns;
}

static fbm_row *named_row(fbm_census *c, table *t, const char *name, fbd_kind kind)
{
    return acc_row(t, name, strlen(name), keep(c, name), kind);
}

static int build_ops(fbm_census *c, table *t, const fbd_dump *d, fbd_kind kind, fbm_by by)
{
    size_t n;
    const fbd_op *ops = fbd_ops(d, kind, &n);
    char key[512];
    for (size_t i = 0; i < n; i++) {
        const fbd_op *o = &ops[i];
        if (by == FBM_BY_OP) {
            fbm_row *r = named_row(c, t, o->op, kind);
            if (!r)
                return -1;
            r->op = r->key;
            acc_add(r, o->count, o->bytes, o->max_bytes, o->ns, o->max_ns);
            for (size_t s = 0; s < o->nsites; s++) {
                const fbd_site *si = &o->sites[s];
                const char *name = site_name(c, si, false);
                if (!name || acc_part(r, name, keep(c, si->site), keep(c, si->file), si->line,
                                      si->count, si->bytes, si->ns))
                    return -1;
            }
        } else if (by == FBM_BY_SITE) {
            for (size_t s = 0; s < o->nsites; s++) {
                const fbd_site *si = &o->sites[s];
                const char *name = site_name(c, si, true);
                fbm_row *r = name ? named_row(c, t, name, kind) : NULL;
                if (!r)
                    return -1;
                if (!r->site) {
                    r->site = keep(c, si->site);
                    r->file = keep(c, si->file);
                    r->line = si->line;
                    r->python = si->python;
                }
                acc_add(r, si->count, si->bytes, si->max_bytes, si->ns, si->max_ns);
                const char *op = keep(c, o->op);
                if (!op || acc_part(r, op, op, NULL, 0, si->count, si->bytes, si->ns))
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
                fbm_row *r = named_row(c, t, key, kind);
                if (!r)
                    return -1;
                r->op = keep(c, o->op);
                r->has_bytes = false;
                acc_add(r, sh->count, 0, 0, 0, 0);
            }
        }
    }
    return 0;
}

/* The name of a census in process rows: "lenet[4242]", with the host when the census
 * spans hosts; two censuses that would read alike (pid namespaces, exec) get their id. */
static const char *process_name(fbm_census *c, const fbd_dump *d, bool hosts)
{
    const fbd_process *p = fbd_proc(d);
    char buf[600];
    snprintf(buf, sizeof buf, "%s%s%s[%" PRId64 "]", hosts ? p->host : "", hosts ? ":" : "",
             fbn_base(p->exe), p->pid);
    size_t same = 0;
    for (size_t i = 0; i < c->ndumps; i++) {
        const fbd_process *q = fbd_proc(c->order[i]);
        same += q->pid == p->pid && !strcmp(fbn_base(q->exe), fbn_base(p->exe)) &&
                (!hosts || !strcmp(q->host, p->host));
    }
    if (same > 1) {
        size_t l = strlen(buf);
        if (p->id)
            snprintf(buf + l, sizeof buf - l, " %.8s", p->id);
        else
            snprintf(buf + l, sizeof buf - l, " seq %" PRIu64, fbd_seq(d));
    }
    return keep(c, buf);
}

/* Rank, host and process rows: each kept dump's ops, summed under the dump's name. */
static int build_procs(fbm_census *c, table *t, const fbd_dump *d, fbd_kind kind, fbm_by by)
{
    const fbd_process *p = fbd_proc(d);
    bool hosts = false;
    for (size_t i = 1; i < c->ndumps; i++)
        hosts |= strcmp(fbd_host(c->order[i]), fbd_host(c->order[0])) != 0;
    char name[64];
    const char *key;
    if (by == FBM_BY_RANK) {
        if (p->rank >= 0)
            snprintf(name, sizeof name, "%ld", p->rank);
        else
            snprintf(name, sizeof name, "-");
        key = keep(c, name);
    } else if (by == FBM_BY_HOST) {
        key = keep(c, *p->host ? p->host : "-");
    } else {
        key = process_name(c, d, hosts);
    }
    fbm_row *r = key ? named_row(c, t, key, kind) : NULL;
    if (!r)
        return -1;
    r->rank = p->rank;
    r->host = p->host;
    if (by == FBM_BY_PROCESS)
        r->dump = d;
    size_t n;
    const fbd_op *ops = fbd_ops(d, kind, &n);
    for (size_t i = 0; i < n; i++) {
        acc_add(r, ops[i].count, ops[i].bytes, ops[i].max_bytes, ops[i].ns, ops[i].max_ns);
        const char *op = keep(c, ops[i].op);
        if (!op || acc_part(r, op, op, NULL, 0, ops[i].count, ops[i].bytes, ops[i].ns))
            return -1;
    }
    return 0;
}

/* What a stack's interned key carries after it: the build that last gave it a row, and
 * the row (a key made in an earlier build, since freed, has an older generation). */
typedef struct {
    uint64_t gen;
    size_t row;
} stack_row;

/* Stack rows merge across processes by their frame names, since addresses differ between
 * runs: the identity is kind, op, site and the interned labels, as pointers. */
static int build_stacks(fbm_census *c, table *t, const fbd_dump *d, fbd_kind kind)
{
    size_t n;
    const fbd_stack *st = fbd_stacks(d, &n);
    const void *key[FBM_MAX_FRAMES + 3];
    char name[1200];
    for (size_t i = 0; i < n; i++) {
        if (st[i].kind != kind)
            continue;
        size_t keep_n = st[i].nframes < FBM_MAX_FRAMES ? st[i].nframes : FBM_MAX_FRAMES;
        const char *op = census_str(c, st[i].op), *site = census_str(c, st[i].site);
        if (!op || !site)
            return -1;
        key[0] = (void *)(uintptr_t)kind;
        key[1] = op;
        key[2] = site;
        for (size_t f = 0; f < keep_n; f++)
            if (!(key[3 + f] = label_of(c, st[i].frames[keep_n - 1 - f])))
                return -1;
        size_t keylen = (3 + keep_n) * sizeof key[0];
        /* The interned key stands for the stack and carries its row in this build: one probe
         * finds it, with no chain of full-key compares and no second map. */
        stack_row *sr = fbp_intern_extra(c->pool, key, keylen, sizeof *sr);
        if (!sr)
            return -1;
        sr = (stack_row *)((unsigned char *)sr + keylen);
        if (sr->gen == t->gen) {
            fbm_row *r = &t->rows[sr->row];
            acc_add(r, st[i].count, st[i].bytes, st[i].max_bytes, st[i].ns, st[i].max_ns);
            continue;
        }
        char sname[600];
        snprintf(name, sizeof name, "%s @ %s", op, fbn_display(site, sname, sizeof sname));
        fbm_row *r = new_row(t, keep(c, name), kind);
        if (!r)
            return -1;
        sr->gen = t->gen;
        sr->row = t->n - 1;
        acc_add(r, st[i].count, st[i].bytes, st[i].max_bytes, st[i].ns, st[i].max_ns);
        r->op = op;
        r->site = site;
        r->nframes = keep_n;
        const char **labels = fbp_alloc(c->pool, (keep_n + 1) * sizeof *labels);
        const fbd_frame **frames = fbp_alloc(c->pool, (keep_n + 1) * sizeof *frames);
        if (!labels || !frames)
            return -1;
        for (size_t f = 0; f < keep_n; f++) {
            labels[f] = key[3 + f];
            frames[f] = st[i].frames[keep_n - 1 - f];
        }
        r->labels = labels;
        r->frames = frames;
    }
    return 0;
}

static fbm_sort g_sort;

static uint64_t sort_key(const fbm_row *r, int which)
{
    /* The chosen key first, then the others in a fixed order. */
    static const int order[3][3] = {{0, 1, 2}, {1, 0, 2}, {2, 0, 1}};
    int k = order[g_sort][which];
    return k == 0 ? r->bytes : k == 1 ? r->count : r->ns;
}

static int cmp_row(const void *pa, const void *pb)
{
    const fbm_row *a = pa, *b = pb;
    for (int i = 0; i < 3; i++) {
        uint64_t ka = sort_key(a, i), kb = sort_key(b, i);
        if (ka != kb)
            return ka < kb ? 1 : -1;
    }
    int s = strcmp(a->key, b->key);
    if (s || a->nframes == 0 || b->nframes == 0)
        return s;
    /* Stack rows with one name: by their frames, so the order never depends on the hash. */
    for (size_t i = 0; i < a->nframes && i < b->nframes; i++)
        if ((s = strcmp(a->labels[i], b->labels[i])))
            return s;
    return a->nframes < b->nframes ? -1 : a->nframes > b->nframes;
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
    t->gen = ++c->builds;
    for (size_t i = 0; i < c->ndumps; i++) {
        int rc = by == FBM_BY_STACK ? build_stacks(c, t, c->order[i], kind)
                 : by >= FBM_BY_RANK ? build_procs(c, t, c->order[i], kind, by)
                                     : build_ops(c, t, c->order[i], kind, by);
        if (rc)
            return -1;
    }
    for (size_t i = 0; i < t->n; i++) {
        row_acc *r = t->rows[i].priv;
        if (!r)
            continue;
        size_t np = HASH_COUNT(r->parts), j = 0;
        if (!np)
            continue;
        fbm_part *parts = calloc(np, sizeof *parts);
        if (!parts)
            return -1;
        part_acc *p, *ptmp;
        HASH_ITER(hh, r->parts, p, ptmp) {
            parts[j++] = p->part;
            HASH_DEL(r->parts, p);
            free(p);
        }
        qsort(parts, np, sizeof *parts, cmp_part);
        t->rows[i].parts = parts;
        t->rows[i].nparts = np;
    }
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
    if (!t->sorted_ok || t->sorted != sort) {
        g_sort = sort;
        if (t->n)
            qsort(t->rows, t->n, sizeof *t->rows, cmp_row);
        for (size_t i = 0; i < t->n; i++)
            if (t->rows[i].priv)
                ((row_acc *)t->rows[i].priv)->index = i;
        t->sorted = sort;
        t->sorted_ok = true;
    }
    *n = t->n;
    return t->rows;
}

const fbm_row *fbm_census_find(fbm_census *c, fbd_kind kind, fbm_by by, const char *key)
{
    size_t n;
    table *t = &c->tables[kind][by];
    if (by == FBM_BY_STACK)
        return NULL;
    if (!t->built && !fbm_census_rows(c, kind, by, FBM_SORT_BYTES, &n))
        return NULL;
    row_acc *r;
    HASH_FIND(hh, t->map, key, strlen(key), r);
    return r ? &t->rows[r->index] : NULL;
}

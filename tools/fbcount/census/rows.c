/* rows.c - the tables of a census: sums per op, site, stack, shape, rank, host, process
 * and backend, for each kind (fallbacks, host-resident ops, transfers).
 *
 * Rows accumulate in a growing array with a uthash index from the row's identity (a byte
 * string: interned pointers for stack rows, the backend and name for the others) to its
 * place; a row's parts use a second map while accumulating. Names for people (demangled
 * symbols, frame labels) are interned in the census's pool, once per distinct frame.
 */
#include "attrib.h"
#include "census.h"
#include "fold.h"
#include "grow.h"
#include "names.h"
#include "text.h"
#include "units.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_table(table *t)
{
    row_acc *r, *tmp;
    HASH_ITER(hh, t->map, r, tmp)
    {
        HASH_DEL(t->map, r);
        part_acc *p, *ptmp;
        HASH_ITER(hh, r->parts, p, ptmp)
        {
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

void fbm_free_tables(fbm_census *c)
{
    for (int k = 0; k < FBD_NKINDS; k++)
        for (int b = 0; b < FBM_NBY; b++)
            free_table(&c->tables[k][b]);
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
        w = snprintf(buf, len, "%s+0x%" PRIx64, fbr_base_name(f->module), f->offset);
    } else if (f->has_ip) {
        w = snprintf(buf, len, "0x%" PRIx64, f->ip);
    } else {
        w = snprintf(buf, len, "??");
    }
    /* Python frames always name their line: the function alone says little in a script. */
    if (w >= 0 && (size_t)w < len && f->file && (f->python || mode == FBM_FRAMES_LINE)) {
        if (f->line > 0)
            snprintf(buf + w, len - (size_t)w, " (%s:%ld)", fbr_base_name(f->file), f->line);
        else
            snprintf(buf + w, len - (size_t)w, " (%s)", fbr_base_name(f->file));
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
 * fix. Every view names sites so (rules/attrib.h's fbr_site_text), op rows' site lists too. */
static const char *site_name(fbm_census *c, const fbd_site *si)
{
    char name[512], buf[1024];
    fbn_display(si->site, name, sizeof name);
    fbr_site site = {si->origin, si->node, si->forward, name, si->file, si->line, si->inlined_in};
    fbr_site_text(&site, buf, sizeof buf);
    if (strlen(buf) + 1 >= sizeof buf)
        fbx_utf8_truncate(buf, strlen(buf) - 1);
    return keep(c, buf);
}

/* An op as a part of a site, rank, host or process row: its name, and its backend where the
 * census holds several ("aten::gelu.out [torch]"). */
static const char *op_part_name(fbm_census *c, const fbd_op *o, bool multi)
{
    if (!multi)
        return keep(c, o->op);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s [%s]", o->op, o->backend);
    if (strlen(buf) + 1 >= sizeof buf)
        fbx_utf8_truncate(buf, strlen(buf) - 1);
    return keep(c, buf);
}

/* A row's identity: its backend and key, as bytes ("vkt\x1fvkt_dot"; the key alone where
 * rows have no backend). Returns the length, or 0 when it does not fit. */
static size_t ident(char *buf, size_t len, const char *backend, const char *key)
{
    int n = backend ? snprintf(buf, len, "%s\x1f%s", backend, key) : snprintf(buf, len, "%s", key);
    return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

/* A new row at the end of t, named name; its accumulator (parts) is r. */
static fbm_row *push_row(table *t, const char *name, fbd_kind kind, row_acc *r)
{
    if (!fbr_grow(&t->rows, &t->cap, t->n, sizeof *t->rows, 16))
        return NULL;
    if (!name)
        return NULL;
    fbm_row *row = &t->rows[t->n++];
    memset(row, 0, sizeof *row);
    row->key = name;
    row->kind = kind;
    row->has_bytes = true;
    row->has_time = true;
    row->rank = -1;
    row->priv = r;
    return row;
}

/* The row of backend and name in t, created when new. */
static fbm_row *named_row(fbm_census *c, table *t, const char *backend, const char *name,
                          fbd_kind kind)
{
    char key[2200];
    size_t keylen = ident(key, sizeof key, backend, name);
    row_acc *r;
    HASH_FIND(hh, t->map, key, keylen, r);
    if (r)
        return &t->rows[r->index];
    if (!keylen || !(r = calloc(1, sizeof *r + keylen)))
        return NULL;
    memcpy(r->key, key, keylen);
    r->keylen = keylen;
    r->index = t->n;
    fbm_row *row = push_row(t, keep(c, name), kind, r);
    if (!row) {
        free(r);
        return NULL;
    }
    row->backend = backend ? census_str(c, backend) : NULL;
    HASH_ADD_KEYPTR(hh, t->map, r->key, keylen, r);
    return row;
}

/* A stack row: found through its interned key (stack_row), so no accumulator. */
static fbm_row *new_row(table *t, const char *name, fbd_kind kind)
{
    return push_row(t, name, kind, NULL);
}

/* Adds to the part of row named p->name (made from p when new). */
static int acc_part(fbm_row *row, const fbm_part *p)
{
    row_acc *r = row->priv;
    part_acc *a;
    if (!p->name)
        return -1;
    HASH_FIND_STR(r->parts, p->name, a);
    if (!a) {
        if (!(a = calloc(1, sizeof *a)))
            return -1;
        a->name = p->name;
        a->part = *p;
        a->part.count = a->part.bytes = a->part.ns = a->part.unknown = 0;
        HASH_ADD_KEYPTR(hh, r->parts, a->name, strlen(a->name), a);
    }
    a->part.count = fbm_sat_add(a->part.count, p->count);
    a->part.bytes = fbm_sat_add(a->part.bytes, p->bytes);
    a->part.ns = fbm_sat_add(a->part.ns, p->ns);
    a->part.unknown = fbm_sat_add(a->part.unknown, p->unknown);
    return 0;
}

static void acc_add(fbm_row *r, uint64_t count, uint64_t bytes, uint64_t max_bytes, uint64_t ns,
                    uint64_t max_ns, bool bytes_known)
{
    r->count = fbm_sat_add(r->count, count);
    r->bytes = fbm_sat_add(r->bytes, bytes);
    r->ns = fbm_sat_add(r->ns, ns);
    if (!bytes_known)
        r->unknown = fbm_sat_add(r->unknown, count);
    if (max_bytes > r->max_bytes)
        r->max_bytes = max_bytes;
    if (max_ns > r->max_ns)
        r->max_ns = max_ns;
}

static void acc_op(fbm_row *r, const fbd_op *o)
{
    acc_add(r, o->count, o->bytes, o->max_bytes, o->ns, o->max_ns, o->bytes_known);
    r->split_timed |= o->split_timed;
}

/* The op as a part of a row (site, rank, host, process, backend rows). */
static int acc_op_part(fbm_census *c, fbm_row *r, const fbd_op *o, uint64_t count, uint64_t bytes,
                       uint64_t ns, bool multi)
{
    fbm_part p = {.name = op_part_name(c, o, multi),
                  .raw = keep(c, o->op),
                  .backend = census_str(c, o->backend),
                  .count = count,
                  .bytes = bytes,
                  .ns = ns,
                  .unknown = o->bytes_known ? 0 : count};
    return acc_part(r, &p);
}

static int build_by_op(fbm_census *c, table *t, const fbd_op *o, fbd_kind kind)
{
    fbm_row *r = named_row(c, t, o->backend, o->op, kind);
    if (!r)
        return -1;
    r->op = r->key;
    acc_op(r, o);
    for (size_t s = 0; s < o->nsites; s++) {
        const fbd_site *si = &o->sites[s];
        fbm_part p = {.name = site_name(c, si),
                      .raw = keep(c, si->site),
                      .file = keep(c, si->file),
                      .line = si->line,
                      .python = si->python,
                      .count = si->count,
                      .bytes = si->bytes,
                      .ns = si->ns,
                      .unknown = o->bytes_known ? 0 : si->count};
        if (acc_part(r, &p))
            return -1;
    }
    return 0;
}

static int build_by_site(fbm_census *c, table *t, const fbd_op *o, fbd_kind kind, bool multi)
{
    for (size_t s = 0; s < o->nsites; s++) {
        const fbd_site *si = &o->sites[s];
        const char *name = site_name(c, si);
        fbm_row *r = name ? named_row(c, t, NULL, name, kind) : NULL;
        if (!r)
            return -1;
        if (!r->site) {
            r->site = keep(c, si->site);
            r->file = keep(c, si->file);
            r->line = si->line;
            r->python = si->python;
        }
        acc_add(r, si->count, si->bytes, si->max_bytes, si->ns, si->max_ns, o->bytes_known);
        r->split_timed |= o->split_timed;
        if (acc_op_part(c, r, o, si->count, si->bytes, si->ns, multi))
            return -1;
    }
    return 0;
}

/* Shape rows: the dump counts each result shape; its bytes are the shape's (elements times
 * the dtype's size), exact; its time is known where the op had that one shape only. */
static int build_by_shape(fbm_census *c, table *t, const fbd_op *o, fbd_kind kind)
{
    char key[512];
    for (size_t s = 0; s < o->nshapes; s++) {
        const fbd_shape *sh = &o->shapes[s];
        int w = snprintf(key, sizeof key, "%s %s[", o->op, sh->dtype);
        uint64_t elems = 1;
        for (size_t k = 0; k < sh->ndims && w > 0 && (size_t)w < sizeof key; k++) {
            w += snprintf(key + w, sizeof key - w, "%s%" PRId64, k ? "x" : "", sh->dims[k]);
            elems = (uint64_t)sh->dims[k] && elems > FBM_SAT_MAX / (uint64_t)sh->dims[k]
                        ? FBM_SAT_MAX
                        : elems * (uint64_t)sh->dims[k];
        }
        if (w > 0 && (size_t)w < sizeof key - 1)
            snprintf(key + w, sizeof key - w, "]");
        fbm_row *r = named_row(c, t, o->backend, key, kind);
        if (!r)
            return -1;
        r->op = keep(c, o->op);
        uint64_t size = fbr_dtype_size(sh->dtype),
                 one = elems && size > FBM_SAT_MAX / elems ? FBM_SAT_MAX : elems * size;
        bool alone = o->nshapes == 1;
        r->has_bytes &= o->bytes_known && (size || alone || sh->has_bytes);
        r->has_time &= alone;
        r->split_timed |= o->split_timed;
        /* The calls' bytes as the op row adds them (every tensor of each call), where the
         * dump keeps them per shape; older dumps: the shape's own size per call. */
        uint64_t bytes = alone                                  ? o->bytes
                         : sh->has_bytes                        ? sh->bytes
                         : one && sh->count > FBM_SAT_MAX / one ? FBM_SAT_MAX
                                                                : one * sh->count;
        acc_add(r, sh->count, bytes, alone ? o->max_bytes : one, alone ? o->ns : 0,
                alone ? o->max_ns : 0, o->bytes_known);
    }
    return 0;
}

/* Backend rows: each backend's ops, summed under its name. */
static int build_by_backend(fbm_census *c, table *t, const fbd_op *o, fbd_kind kind)
{
    fbm_row *r = named_row(c, t, NULL, o->backend, kind);
    if (!r)
        return -1;
    r->backend = census_str(c, o->backend);
    acc_op(r, o);
    return acc_op_part(c, r, o, o->count, o->bytes, o->ns, false);
}

static int build_ops(fbm_census *c, table *t, const fbd_dump *d, fbd_kind kind, fbm_by by,
                     bool multi)
{
    size_t n;
    const fbd_op *ops = fbd_ops(d, kind, &n);
    for (size_t i = 0; i < n; i++) {
        const fbd_op *o = &ops[i];
        if (!fbm_census_keeps_backend(c, o->backend))
            continue;
        int rc = by == FBM_BY_OP      ? build_by_op(c, t, o, kind)
                 : by == FBM_BY_SITE  ? build_by_site(c, t, o, kind, multi)
                 : by == FBM_BY_SHAPE ? build_by_shape(c, t, o, kind)
                                      : build_by_backend(c, t, o, kind);
        if (rc)
            return -1;
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
             fbr_base_name(p->exe), p->pid);
    size_t same = 0;
    for (size_t i = 0; i < c->ndumps; i++) {
        const fbd_process *q = fbd_proc(c->order[i]);
        same += q->pid == p->pid && !strcmp(fbr_base_name(q->exe), fbr_base_name(p->exe)) &&
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
static int build_procs(fbm_census *c, table *t, const fbd_dump *d, fbd_kind kind, fbm_by by,
                       bool multi)
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
    fbm_row *r = key ? named_row(c, t, NULL, key, kind) : NULL;
    if (!r)
        return -1;
    r->rank = p->rank;
    r->host = p->host;
    if (by == FBM_BY_PROCESS)
        r->dump = d;
    size_t n;
    const fbd_op *ops = fbd_ops(d, kind, &n);
    for (size_t i = 0; i < n; i++) {
        if (!fbm_census_keeps_backend(c, ops[i].backend))
            continue;
        acc_op(r, &ops[i]);
        if (acc_op_part(c, r, &ops[i], ops[i].count, ops[i].bytes, ops[i].ns, multi))
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

/* A new stack row for st, whose frame labels (outermost first) are labels[0..n) and whose
 * site is at file:line. */
static fbm_row *new_stack_row(fbm_census *c, table *t, const fbd_dump *d, const fbd_stack *st,
                              const void *const *labels, size_t n, const char *file, long line)
{
    char name[1200], sname[600], where[1024];
    fbn_display(st->site, sname, sizeof sname);
    fbr_site site = {st->origin, st->node, st->forward, sname, file, line, st->site_inlined_in};
    fbr_site_text(&site, where, sizeof where);
    snprintf(name, sizeof name, "%s @ %s", st->op, where);
    fbm_row *r = new_row(t, keep(c, name), st->kind);
    const char **lab = fbp_alloc(c->pool, (n + 1) * sizeof *lab);
    const fbd_frame **frames = fbp_alloc(c->pool, (n + 1) * sizeof *frames);
    unsigned char *roles = fbp_alloc(c->pool, st->nframes + 1), *out = fbp_alloc(c->pool, n + 1);
    if (!r || !lab || !frames || !roles || !out)
        return NULL;
    r->op = census_str(c, st->op);
    r->site = census_str(c, st->site);
    r->backend = census_str(c, st->backend);
    r->file = keep(c, file);
    r->line = line;
    fbm_frame_roles(d, st, roles);
    for (size_t f = 0; f < n; f++) {
        lab[f] = labels[f];
        frames[f] = st->frames[n - 1 - f];
        out[f] = roles[n - 1 - f];
    }
    r->labels = lab;
    r->frames = frames;
    r->roles = out;
    r->nframes = n;
    return r;
}

/* Stack rows merge across processes by their frame names, since addresses differ between
 * runs: the identity is kind, backend, op, site, the site's line and the interned labels, as
 * pointers. */
static int build_stacks(fbm_census *c, table *t, const fbd_dump *d, fbd_kind kind)
{
    size_t n;
    const fbd_stack *st = fbd_stacks(d, &n);
    /* kind, op, site, backend, the site's file and line, origin, inlined_in, node, forward */
    enum { K = 10 };
    const void *key[FBM_MAX_FRAMES + K];
    for (size_t i = 0; i < n; i++) {
        if (st[i].kind != kind || !fbm_census_keeps_backend(c, st[i].backend))
            continue;
        size_t keep_n = st[i].nframes < FBM_MAX_FRAMES ? st[i].nframes : FBM_MAX_FRAMES;
        const char *file;
        long line;
        /* Calls of one op from two lines of a function are two rows, named by their lines. */
        fbm_stack_site(d, &st[i], &file, &line);
        key[0] = (void *)(uintptr_t)kind;
        key[1] = census_str(c, st[i].op);
        key[2] = census_str(c, st[i].site);
        key[3] = census_str(c, st[i].backend);
        key[4] = file ? census_str(c, file) : NULL;
        key[5] = (void *)(uintptr_t)line;
        key[6] = st[i].origin ? census_str(c, st[i].origin) : NULL;
        key[7] = st[i].site_inlined_in ? census_str(c, st[i].site_inlined_in) : NULL;
        key[8] = st[i].node ? census_str(c, st[i].node) : NULL;
        key[9] = st[i].forward ? census_str(c, st[i].forward) : NULL;
        if (!key[1] || !key[2] || !key[3] || (file && !key[4]) || (st[i].origin && !key[6]) ||
            (st[i].site_inlined_in && !key[7]) || (st[i].node && !key[8]) ||
            (st[i].forward && !key[9]))
            return -1;
        for (size_t f = 0; f < keep_n; f++)
            if (!(key[K + f] = label_of(c, st[i].frames[keep_n - 1 - f])))
                return -1;
        size_t keylen = (K + keep_n) * sizeof key[0];
        /* The interned key stands for the stack and carries its row in this build: one probe
         * finds it, with no chain of full-key compares and no second map. */
        stack_row *sr = fbp_intern_extra(c->pool, key, keylen, sizeof *sr);
        if (!sr)
            return -1;
        sr = (stack_row *)((unsigned char *)sr + keylen);
        fbm_row *r = sr->gen == t->gen
                         ? &t->rows[sr->row]
                         : new_stack_row(c, t, d, &st[i], key + K, keep_n, file, line);
        if (!r)
            return -1;
        sr->gen = t->gen;
        sr->row = (size_t)(r - t->rows);
        acc_add(r, st[i].count, st[i].bytes, st[i].max_bytes, st[i].ns, st[i].max_ns,
                st[i].bytes_known);
        r->split_timed |= st[i].split_timed;
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

static int cmp_opt_str(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
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
    if (!s)
        s = cmp_opt_str(a->backend, b->backend);
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

/* Moves each row's accumulated parts into its sorted parts array. */
static int finish_parts(table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        row_acc *r = t->rows[i].priv;
        size_t np = r ? HASH_COUNT(r->parts) : 0, j = 0;
        if (!np)
            continue;
        fbm_part *parts = calloc(np, sizeof *parts);
        if (!parts)
            return -1;
        part_acc *p, *ptmp;
        HASH_ITER(hh, r->parts, p, ptmp)
        {
            parts[j++] = p->part;
            HASH_DEL(r->parts, p);
            free(p);
        }
        qsort(parts, np, sizeof *parts, cmp_part);
        t->rows[i].parts = parts;
        t->rows[i].nparts = np;
    }
    return 0;
}

static int build_table(fbm_census *c, table *t, fbd_kind kind, fbm_by by)
{
    size_t nb;
    fbm_census_backends(c, &nb);
    bool multi = nb > 1;
    t->gen = ++c->builds;
    for (size_t i = 0; i < c->ndumps; i++) {
        const fbd_dump *d = c->order[i];
        int rc = by == FBM_BY_STACK ? build_stacks(c, t, d, kind)
                 : by == FBM_BY_RANK || by == FBM_BY_HOST || by == FBM_BY_PROCESS
                     ? build_procs(c, t, d, kind, by, multi)
                     : build_ops(c, t, d, kind, by, multi);
        if (rc)
            return -1;
    }
    if (finish_parts(t))
        return -1;
    t->built = true;
    return 0;
}

const fbm_row *fbm_census_rows(fbm_census *c, fbd_kind kind, fbm_by by, fbm_sort sort, size_t *n)
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

const fbm_row *fbm_census_find(fbm_census *c, fbd_kind kind, fbm_by by, const char *backend,
                               const char *key)
{
    size_t n;
    table *t = &c->tables[kind][by];
    if (by == FBM_BY_STACK)
        return NULL;
    if (!t->built && !fbm_census_rows(c, kind, by, FBM_SORT_BYTES, &n))
        return NULL;
    char id[2200];
    /* Only op and shape rows have their backend in their identity (named_row's callers). */
    size_t idlen =
        ident(id, sizeof id, by == FBM_BY_OP || by == FBM_BY_SHAPE ? backend : NULL, key);
    row_acc *r;
    HASH_FIND(hh, t->map, id, idlen, r);
    return r ? &t->rows[r->index] : NULL;
}

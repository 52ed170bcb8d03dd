/* report.c - a census symbolized and attributed: stacks with their op and site, ops with
 * their sites and shapes, sorted by bytes then count. Dumps, the exit summary and the
 * in-process API all read censuses through this. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dump.h"
#include "fields.h"
#include "opname.h"
#include "units.h"

/* A row's key: its backend's row name and its op, "vkt\0vkt_dot". */
typedef struct {
    fbc_rop rop;
    size_t len;
    char key[];
} keyed_rop;

static const char *row_name(const fbc_bmod *b)
{
    return b ? b->row->name : FBR_BACKEND_DEFAULT;
}

static fbc_rop *op_for(fbc_report *r, fbc_kind k, const fbc_bmod *b, const char *name)
{
    const char *row = row_name(b);
    size_t a = strlen(row), n = strlen(name), len = a + 1 + n;
    char stack_key[512], *key = len < sizeof stack_key ? stack_key : malloc(len + 1);
    if (!key)
        return NULL;
    memcpy(key, row, a + 1);
    memcpy(key + a + 1, name, n + 1);
    fbc_rop *o;
    HASH_FIND(hh, r->ophash[k], key, len, o);
    if (!o) {
        keyed_rop *kr = calloc(1, sizeof *kr + len + 1);
        if (kr) {
            memcpy(kr->key, key, len + 1);
            kr->len = len;
            o = &kr->rop;
            o->op = name;
            o->backend = b;
            HASH_ADD_KEYPTR(hh, r->ophash[k], kr->key, len, o);
        }
    }
    if (key != stack_key)
        free(key);
    return o;
}

static void add_site(fbc_rop *o, const fbc_attrib *a, const fbc_rstack *s)
{
    for (size_t i = 0; i < o->nsites; i++)
        if (o->sites[i].origin == a->origin && o->sites[i].inlined_in == a->site_inlined_in &&
            o->sites[i].node == a->node && o->sites[i].forward == a->forward &&
            fbr_same_site(o->sites[i].site, o->sites[i].file, o->sites[i].line, a->site,
                          a->site_file, a->site_line)) {
            fbc_rsite *g = &o->sites[i];
            g->count += s->count;
            g->bytes += s->bytes;
            g->ns += s->ns;
            g->max_bytes = s->max_bytes > g->max_bytes ? s->max_bytes : g->max_bytes;
            g->max_ns = s->max_ns > g->max_ns ? s->max_ns : g->max_ns;
            return;
        }
    fbc_rsite *g = realloc(o->sites, (o->nsites + 1) * sizeof *g);
    if (!g)
        return;
    o->sites = g;
    g[o->nsites++] =
        (fbc_rsite){a->site,   a->site_file,       a->site_module, a->site_line, a->site_python,
                    s->count,  s->bytes,           s->ns,          s->max_bytes, s->max_ns,
                    a->origin, a->site_inlined_in, a->node,        a->forward};
}

/* Shapes are one when their backend reads them alike: two modules of a row may not. */
static void add_shape(fbc_rop *o, const fbc_shape *s, const fbc_bmod *b)
{
    for (size_t i = 0; i < o->nshapes; i++) {
        fbc_shape *t = &o->shapes[i].s;
        if (o->shapes[i].backend == b && t->dtype == s->dtype && t->rank == s->rank &&
            !memcmp(t->dims, s->dims, (size_t)s->rank * sizeof *s->dims)) {
            t->count += s->count;
            t->bytes += s->bytes;
            return;
        }
    }
    fbc_rshape *g = realloc(o->shapes, (o->nshapes + 1) * sizeof *g);
    if (!g)
        return;
    o->shapes = g;
    g[o->nshapes++] = (fbc_rshape){*s, b};
}

static int by_weight(const void *a, const void *b)
{
    const fbc_rop *x = *(fbc_rop *const *)a, *y = *(fbc_rop *const *)b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->op, y->op);
}

static int site_weight(const void *a, const void *b)
{
    const fbc_rsite *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->site, y->site);
}

static void read_counters(const fbc_bmod *b, fbc_counters *c)
{
    c->has = fbc_bmod_counters(b, &c->native, &c->fallback, &c->host);
}

static void read_backend(fbc_report *r)
{
    for (size_t i = 0; i < fbc_bmod_count() && i < FBC_MAX_BMODS; i++) {
        fbc_counters *c = &r->counters[i];
        read_counters(fbc_bmod_at(i), c);
        if (!c->has)
            continue;
        r->native += c->native;
        r->fallback += c->fallback;
        r->host += c->host;
        r->has_backend = true;
    }
}

/* A stack already copied into the report, found by its frames (the same stack recorded by
 * two threads sits in two shards). */
typedef struct {
    UT_hash_handle hh;
    size_t idx;
} seen_stack;

typedef struct {
    seen_stack *hash, *nodes;
    size_t cap; /* room in nodes and in the report's stacks */
} merger;

static void merger_free(merger *m)
{
    HASH_CLEAR(hh, m->hash);
    free(m->nodes);
}

/* Copies t's stacks into r, adding a stack seen before onto its first copy. The caller holds
 * whatever lock guards t for the whole build, so r->stacks, sized from the tables' counts,
 * has room for every stack of every table. */
static void copy_table(fbc_report *r, const fbc_table *t, merger *m, bool locked)
{
    for (const fbc_entry *e = __atomic_load_n(&t->head, __ATOMIC_ACQUIRE); e;
         e = __atomic_load_n(&e->next, __ATOMIC_ACQUIRE)) {
        size_t klen = fbc_key_len(e->nframes, e->npy);
        unsigned hv = fbc_hash_words(&e->kind, klen);
        seen_stack *f = NULL;
        HASH_FIND_BYHASHVALUE(hh, m->hash, &e->kind, klen, hv, f);
        if (!f && r->nstacks == m->cap)
            break; /* a table that grew while read without its lock: the rest is newer */
        fbc_rstack *s = f ? &r->stacks[f->idx] : &r->stacks[r->nstacks];
        if (!f) {
            seen_stack *node = &m->nodes[r->nstacks];
            node->idx = r->nstacks++;
            HASH_ADD_KEYPTR_BYHASHVALUE(hh, m->hash, &e->kind, klen, hv, node);
            s->e = e;
            s->born = e->born;
        }
        s->born = e->born < s->born ? e->born : s->born;
        /* Without the lock (a shard a signal left locked) the counters are read atomically,
         * as the crash dump reads them, and the shapes, reallocated in place, are left. */
        uint64_t mb = __atomic_load_n(&e->max_bytes, __ATOMIC_RELAXED);
        uint64_t mn = __atomic_load_n(&e->max_ns, __ATOMIC_RELAXED);
        s->count += __atomic_load_n(&e->count, __ATOMIC_RELAXED);
        s->bytes += __atomic_load_n(&e->bytes, __ATOMIC_RELAXED);
        s->ns += __atomic_load_n(&e->ns, __ATOMIC_RELAXED);
        s->max_bytes = mb > s->max_bytes ? mb : s->max_bytes;
        s->max_ns = mn > s->max_ns ? mn : s->max_ns;
        if (locked && e->nshapes) {
            fbc_shape *g = realloc(s->shapes, (s->nshapes + e->nshapes) * sizeof *g);
            if (g) {
                memcpy(g + s->nshapes, e->shapes, e->nshapes * sizeof *g);
                s->shapes = g;
                s->nshapes += e->nshapes;
            }
        }
    }
}

static fbc_report *report_new(size_t nstacks, merger *m)
{
    fbc_report *r = calloc(1, sizeof *r);
    *m = (merger){.cap = nstacks};
    if (r && (r->stacks = calloc(nstacks + 1, sizeof *r->stacks)) &&
        (m->nodes = calloc(nstacks + 1, sizeof *m->nodes)))
        return r;
    if (r)
        free(r->stacks);
    free(r);
    return NULL;
}

static fbc_report *attribute(fbc_report *r);

fbc_report *fbc_report_build(const fbc_table *t)
{
    merger m;
    fbc_report *r = report_new(t->n, &m);
    if (!r)
        return NULL;
    copy_table(r, t, &m, true);
    merger_free(&m);
    return attribute(r);
}

/* Takes s's lock, or gives up after 50 ms when not patient. */
static bool lock_shard(fbc_shard *s, bool patient)
{
    if (patient) {
        pthread_mutex_lock(&s->lock);
        return true;
    }
    for (int i = 0; i < 50; i++) {
        if (pthread_mutex_trylock(&s->lock) == 0)
            return true;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return false;
}

fbc_report *fbc_report_build_process(bool patient)
{
    /* Every shard is held while it is copied, so the report is one instant of the census; the
     * copy is short, and a recording thread only ever holds its own shard's lock. */
    fbc_shard *head = fbc_shards_first(); /* shards are only ever added in front of it */
    size_t n = 0, nshards = 0;
    for (fbc_shard *s = head; s; s = s->next)
        nshards++;
    bool *held = calloc(nshards + 1, sizeof *held);
    if (!held)
        return NULL;
    size_t i = 0;
    for (fbc_shard *s = head; s; s = s->next, i++) {
        held[i] = lock_shard(s, patient);
        /* Unlocked, the count is only an upper bound of what the copy will see: entries are
         * published before they are counted in n, so read n after walking. */
        n += __atomic_load_n(&s->table.n, __ATOMIC_ACQUIRE);
    }
    merger m;
    fbc_report *r = report_new(n + 64, &m);
    i = 0;
    for (fbc_shard *s = head; s && r; s = s->next, i++)
        copy_table(r, &s->table, &m, held[i]);
    i = 0;
    for (fbc_shard *s = head; s; s = s->next, i++)
        if (held[i])
            pthread_mutex_unlock(&s->lock);
    free(held);
    if (!r)
        return NULL;
    merger_free(&m);
    return attribute(r);
}

static fbc_report *attribute(fbc_report *r)
{
    read_backend(r);
    /* Frame names are kept by the symbolizer, once per address; a report keeps none of its
     * own (a copy per frame of every stack was most of a snapshot's memory traffic). */
    fbc_frame_info infos[FBC_MAX_DEPTH];
    r->first = -1;
    pthread_mutex_lock(&fbc_sym_lock);
    for (size_t i = 0; i < r->nstacks; i++) {
        fbc_rstack *s = &r->stacks[i];
        fbc_kind k = (fbc_kind)s->e->kind;
        if (k == FBC_FALLBACK && (r->first < 0 || s->born < r->stacks[r->first].born))
            r->first = (long)i;
        fbc_attribute(s->e, infos, &s->a);
        r->total[k] += s->count;
        r->bytes[k] += s->bytes;
        r->ns[k] += s->ns;
        r->max[k] = s->max_bytes > r->max[k] ? s->max_bytes : r->max[k];
        fbc_rop *o = op_for(r, k, s->a.backend, s->a.op);
        if (!o)
            continue;
        o->count += s->count;
        o->bytes += s->bytes;
        o->ns += s->ns;
        o->max_bytes = s->max_bytes > o->max_bytes ? s->max_bytes : o->max_bytes;
        o->max_ns = s->max_ns > o->max_ns ? s->max_ns : o->max_ns;
        add_site(o, &s->a, s);
        for (size_t j = 0; j < s->nshapes; j++)
            add_shape(o, &s->shapes[j], s->a.backend);
    }
    pthread_mutex_unlock(&fbc_sym_lock);
    for (int k = 0; k < FBC_KINDS; k++) {
        r->nops[k] = HASH_COUNT(r->ophash[k]);
        r->ops[k] = calloc(r->nops[k] + 1, sizeof *r->ops[k]);
        if (!r->ops[k]) {
            r->nops[k] = 0;
            continue;
        }
        size_t n = 0;
        for (fbc_rop *o = r->ophash[k]; o; o = o->hh.next) {
            r->ops[k][n++] = o;
            qsort(o->sites, o->nsites, sizeof *o->sites, site_weight);
        }
        qsort(r->ops[k], n, sizeof *r->ops[k], by_weight);
    }
    return r;
}

void fbc_report_free(fbc_report *r)
{
    if (!r)
        return;
    for (int k = 0; k < FBC_KINDS; k++) {
        fbc_rop *o, *tmp;
        HASH_ITER(hh, r->ophash[k], o, tmp)
        {
            HASH_DEL(r->ophash[k], o);
            free(o->sites);
            free(o->shapes);
            free((keyed_rop *)o); /* the row is the first member */
        }
        free(r->ops[k]);
    }
    for (size_t i = 0; i < r->nstacks; i++)
        free(r->stacks[i].shapes);
    free(r->stacks);
    free(r);
}

/* A row's op prefixes (rules/opname.h's short names): its backend's, where ops are named by
 * prefix; none (the whole name only) otherwise. */
static const fbr_names *prefixes_of(const fbc_bmod *b, fbr_names *buf)
{
    const fbr_backend *row = b ? b->row : NULL;
    buf->n = 0;
    buf->storage = NULL;
    if (!row)
        return &fbr_default_prefixes;
    for (int i = 0; row->oprule == FBR_OPRULE_PREFIX && i < row->op.n && i < FBR_PATTERNS_MAX; i++)
        buf->name[buf->n++] = row->op.s[i];
    return buf;
}

uint64_t fbc_report_op(const fbc_report *r, fbc_kind k, const char *op, bool bytes)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < r->nops[k]; i++) {
        const fbc_rop *o = r->ops[k][i];
        fbr_names buf;
        if (fbr_op_named(op, o->op, prefixes_of(o->backend, &buf)))
            sum += bytes ? o->bytes : o->count;
    }
    return sum;
}

bool fbc_report_sizes(const fbc_bmod *b)
{
    return !b || b->sizes;
}

void fbc_site_text(const fbc_rsite *s, char *out, size_t cap)
{
    const char *name = fbc_demangle(s->site);
    fbr_site site = {fbc_origin_name((uint32_t)s->origin),
                     s->node,
                     s->forward,
                     name,
                     s->file,
                     s->line,
                     s->inlined_in};
    fbr_site_text(&site, out, cap);
    if (name != s->site)
        free((void *)name);
}

void fbc_report_text(const fbc_report *r, FILE *out, const char *indent, int top)
{
    static const char *const heading[FBC_KINDS] = {
        [FBC_HOST] = "host-resident ops (computed on the host because their input was):",
        [FBC_TRANSFER] = "transfers between devices:",
        [FBC_SPLIT] = "host splits (each timed as a whole; its nodes listed):",
    };
    for (int k = 0; k < FBC_KINDS; k++) {
        if (k != FBC_FALLBACK && !r->nops[k])
            continue;
        if (heading[k])
            fprintf(out, "%s%s\n", indent, heading[k]);
        for (size_t i = 0; i < r->nops[k] && (top <= 0 || (int)i < top); i++) {
            const fbc_rop *o = r->ops[k][i];
            char b[32], site[512];
            if (fbc_report_sizes(o->backend))
                fbr_bytes(o->bytes, b, sizeof b);
            else
                snprintf(b, sizeof b, "?");
            fbc_site_text(&o->sites[0], site, sizeof site);
            fprintf(out, "%s  %-24s %8" PRIu64 " %11s  at %s", indent, o->op, o->count, b,
                    o->nsites ? site : "(unknown)");
            if (o->nsites > 1)
                fprintf(out, " and %zu more site%s", o->nsites - 1, o->nsites > 2 ? "s" : "");
            fputc('\n', out);
            for (size_t j = 1; j < o->nsites && j < 4 && top <= 0; j++) {
                fbc_site_text(&o->sites[j], site, sizeof site);
                fprintf(out, "%s  %-24s %8" PRIu64 "              at %s\n", indent, "",
                        o->sites[j].count, site);
            }
        }
        if (top > 0 && (int)r->nops[k] > top)
            fprintf(out, "%s  ... and %zu more ops\n", indent, r->nops[k] - (size_t)top);
    }
}

static const char *dtype_name(const fbc_bmod *b, int dtype, char *buf, size_t cap)
{
    const char *n = b ? fbc_bmod_dtype_name(b, dtype) : NULL;
    if (n)
        return n;
    snprintf(buf, cap, "dtype%d", dtype);
    return buf;
}

static void json_shapes(fbc_writer *w, const fbc_rop *o)
{
    fbc_w_str(w, "," FBR_KEY(FBR_SHAPES) "[");
    for (size_t j = 0; j < o->nshapes; j++) {
        char buf[32];
        const fbc_shape *sh = &o->shapes[j].s;
        fbc_w_str(w, j ? ",{" FBR_KEY(FBR_DTYPE) : "{" FBR_KEY(FBR_DTYPE));
        fbc_w_json(w, dtype_name(o->shapes[j].backend, sh->dtype, buf, sizeof buf));
        fbc_w_str(w, "," FBR_KEY(FBR_SHAPE) "[");
        for (int d = 0; d < sh->rank; d++) {
            if (d)
                fbc_w_raw(w, ",", 1);
            fbc_w_i64(w, sh->dims[d]);
        }
        fbc_w_num(w, "]," FBR_KEY(FBR_COUNT), sh->count);
        fbc_w_num(w, "," FBR_KEY(FBR_BYTES), sh->bytes);
        fbc_w_raw(w, "}", 1);
    }
    fbc_w_raw(w, "]", 1);
}

bool fbc_report_split_timed(const fbc_bmod *b, fbc_kind k)
{
    for (int i = 0; (k == FBC_FALLBACK || k == FBC_HOST) && b && b->row && i < b->row->nexits; i++)
        if (b->row->exit[i].kind == FBR_EXIT_GRAPH)
            return true;
    return false;
}

void fbc_site_fields(fbc_writer *w, const char *file, int line, const char *inlined_in, bool python,
                     int origin, const char *node, const char *forward)
{
    if (file) {
        fbc_w_str(w, "," FBR_KEY(FBR_FILE));
        fbc_w_json(w, file);
        if (line > 0)
            fbc_w_num(w, "," FBR_KEY(FBR_LINE), (uint64_t)line);
    }
    if (inlined_in) {
        fbc_w_str(w, "," FBR_KEY(FBR_INLINED_IN));
        fbc_w_json(w, inlined_in);
    }
    if (python)
        fbc_w_str(w, "," FBR_KEY(FBR_PYTHON) "true");
    if (origin) {
        fbc_w_str(w, "," FBR_KEY(FBR_ORIGIN));
        fbc_w_json(w, fbc_origin_name((uint32_t)origin));
    }
    if (node) {
        fbc_w_str(w, "," FBR_KEY(FBR_NODE));
        fbc_w_json(w, node);
    }
    if (forward) {
        fbc_w_str(w, "," FBR_KEY(FBR_FORWARD));
        fbc_w_json(w, forward);
    }
}

static void json_ops(fbc_writer *w, const fbc_report *r, fbc_kind k, bool shapes)
{
    static const char *const list[FBC_KINDS] = {
        [FBC_FALLBACK] = "," FBR_KEY(FBR_OPS) "[",
        [FBC_HOST] = "," FBR_KEY(FBR_HOST_OPS) "[",
        [FBC_TRANSFER] = "," FBR_KEY(FBR_TRANSFERS) "[",
        [FBC_SPLIT] = "," FBR_KEY(FBR_SPLITS) "[",
    };
    fbc_w_str(w, list[k]);
    for (size_t i = 0; i < r->nops[k]; i++) {
        const fbc_rop *o = r->ops[k][i];
        fbc_w_str(w, i ? ",{" FBR_KEY(FBR_OP) : "{" FBR_KEY(FBR_OP));
        fbc_w_json(w, o->op);
        fbc_w_str(w, "," FBR_KEY(FBR_BACKEND_NAME));
        fbc_w_json(w, row_name(o->backend));
        if (!fbc_report_sizes(o->backend))
            fbc_w_str(w, "," FBR_KEY(FBR_BYTES_KNOWN) "false");
        if (fbc_report_split_timed(o->backend, k))
            fbc_w_str(w, "," FBR_KEY(FBR_TIMED) "\"" FBR_TIMED_SPLIT "\"");
        fbc_w_num(w, "," FBR_KEY(FBR_COUNT), o->count);
        fbc_w_num(w, "," FBR_KEY(FBR_BYTES), o->bytes);
        fbc_w_num(w, "," FBR_KEY(FBR_MAX_BYTES), o->max_bytes);
        fbc_w_num(w, "," FBR_KEY(FBR_NS), o->ns);
        fbc_w_num(w, "," FBR_KEY(FBR_MAX_NS), o->max_ns);
        if (shapes)
            json_shapes(w, o);
        fbc_w_str(w, "," FBR_KEY(FBR_SITES) "[");
        for (size_t j = 0; j < o->nsites; j++) {
            const fbc_rsite *s = &o->sites[j];
            fbc_w_str(w, j ? ",{" FBR_KEY(FBR_SITE) : "{" FBR_KEY(FBR_SITE));
            fbc_w_json(w, s->site);
            fbc_site_fields(w, s->file, s->line, s->inlined_in, s->python, s->origin, s->node,
                            s->forward);
            if (s->module) {
                fbc_w_str(w, "," FBR_KEY(FBR_MODULE));
                fbc_w_json(w, s->module);
            }
            fbc_w_num(w, "," FBR_KEY(FBR_COUNT), s->count);
            fbc_w_num(w, "," FBR_KEY(FBR_BYTES), s->bytes);
            fbc_w_num(w, "," FBR_KEY(FBR_NS), s->ns);
            fbc_w_num(w, "," FBR_KEY(FBR_MAX_BYTES), s->max_bytes);
            fbc_w_num(w, "," FBR_KEY(FBR_MAX_NS), s->max_ns);
            fbc_w_raw(w, "}", 1);
        }
        fbc_w_str(w, "]}");
    }
    fbc_w_raw(w, "]", 1);
}

void fbc_report_json(fbc_writer *w, const fbc_report *r, bool shapes)
{
    fbc_w_str(w, FBR_KEY(FBR_TOTAL) "{" FBR_KEY(FBR_FALLBACKS));
    fbc_w_u64(w, r->total[FBC_FALLBACK]);
    fbc_w_num(w, "," FBR_KEY(FBR_BYTES), r->bytes[FBC_FALLBACK]);
    fbc_w_num(w, "," FBR_KEY(FBR_MAX_BYTES), r->max[FBC_FALLBACK]);
    fbc_w_num(w, "," FBR_KEY(FBR_NS), r->ns[FBC_FALLBACK]);
    fbc_w_num(w, "," FBR_KEY(FBR_HOST_OPS), r->total[FBC_HOST]);
    fbc_w_num(w, "," FBR_KEY(FBR_HOST_BYTES), r->bytes[FBC_HOST]);
    fbc_w_num(w, "," FBR_KEY(FBR_HOST_NS), r->ns[FBC_HOST]);
    fbc_w_num(w, "," FBR_KEY(FBR_TRANSFERS), r->total[FBC_TRANSFER]);
    fbc_w_num(w, "," FBR_KEY(FBR_TRANSFER_BYTES), r->bytes[FBC_TRANSFER]);
    fbc_w_num(w, "," FBR_KEY(FBR_TRANSFER_NS), r->ns[FBC_TRANSFER]);
    fbc_w_num(w, "," FBR_KEY(FBR_SPLITS), r->total[FBC_SPLIT]);
    fbc_w_num(w, "," FBR_KEY(FBR_SPLIT_BYTES), r->bytes[FBC_SPLIT]);
    fbc_w_num(w, "," FBR_KEY(FBR_SPLIT_NS), r->ns[FBC_SPLIT]);
    fbc_w_num(w, "," FBR_KEY(FBR_STACKS), r->nstacks);
    fbc_w_raw(w, "}", 1);
    if (r->first >= 0) {
        /* The first fallback's op and site: the line a reader goes to first. */
        const fbc_attrib *a = &r->stacks[r->first].a;
        fbc_w_str(w, "," FBR_KEY(FBR_FIRST) "{" FBR_KEY(FBR_OP));
        fbc_w_json(w, a->op);
        fbc_w_str(w, "," FBR_KEY(FBR_SITE));
        fbc_w_json(w, a->site);
        fbc_site_fields(w, a->site_file, a->site_line, a->site_inlined_in, a->site_python,
                        a->origin, a->node, a->forward);
        fbc_w_raw(w, "}", 1);
    }
    for (int k = 0; k < FBC_KINDS; k++)
        json_ops(w, r, (fbc_kind)k, shapes);
}

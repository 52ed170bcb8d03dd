/* report.c - a census symbolized and attributed: stacks with their op and site, ops with
 * their sites and shapes, sorted by bytes then count. Dumps, the exit summary and the
 * in-process API all read censuses through this. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static fbc_rop *op_for(fbc_report *r, fbc_kind k, const char *name)
{
    fbc_rop *o;
    HASH_FIND_STR(r->ophash[k], name, o);
    if (o)
        return o;
    o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->op = name;
    HASH_ADD_KEYPTR(hh, r->ophash[k], o->op, strlen(o->op), o);
    return o;
}

static void add_site(fbc_rop *o, const fbc_attrib *a, uint64_t count, uint64_t bytes)
{
    for (size_t i = 0; i < o->nsites; i++)
        if (!strcmp(o->sites[i].site, a->site) && o->sites[i].line == a->site_line &&
            (o->sites[i].file == a->site_file ||
             (o->sites[i].file && a->site_file && !strcmp(o->sites[i].file, a->site_file)))) {
            o->sites[i].count += count;
            o->sites[i].bytes += bytes;
            return;
        }
    fbc_rsite *g = realloc(o->sites, (o->nsites + 1) * sizeof *g);
    if (!g)
        return;
    o->sites = g;
    g[o->nsites++] = (fbc_rsite){a->site, a->site_file, a->site_module, a->site_line, count, bytes};
}

static void add_shape(fbc_rop *o, const fbc_shape *s)
{
    for (size_t i = 0; i < o->nshapes; i++)
        if (o->shapes[i].dtype == s->dtype && o->shapes[i].rank == s->rank &&
            !memcmp(o->shapes[i].dims, s->dims, (size_t)s->rank * sizeof *s->dims)) {
            o->shapes[i].count += s->count;
            return;
        }
    fbc_shape *g = realloc(o->shapes, (o->nshapes + 1) * sizeof *g);
    if (!g)
        return;
    o->shapes = g;
    g[o->nshapes++] = *s;
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

static void read_backend(fbc_report *r)
{
    if (!fbc_vkt_get()->stats)
        return;
    size_t n = fbc_vkt_get()->stats(NULL, 0);
    fbc_stats_entry *e = calloc(n + 1, sizeof *e);
    if (!e)
        return;
    n = fbc_vkt_get()->stats(e, n);
    for (size_t i = 0; i < n; i++) {
        r->native += e[i].native;
        r->fallback += e[i].fallback;
        r->host += e[i].host;
    }
    free(e);
    r->has_backend = true;
}

/* A stack already copied into the report, found by its frames (the same stack recorded by
 * two threads sits in two shards). */
typedef struct {
    UT_hash_handle hh;
    size_t idx;
} seen_stack;

typedef struct {
    seen_stack *hash, *nodes;
} merger;

static void merger_free(merger *m)
{
    HASH_CLEAR(hh, m->hash);
    free(m->nodes);
}

/* Copies t's stacks into r, adding a stack seen before onto its first copy. The caller holds
 * whatever lock guards t for the whole build, so r->stacks, sized from the tables' counts,
 * has room for every stack of every table. */
static void copy_table(fbc_report *r, const fbc_table *t, merger *m)
{
    for (const fbc_entry *e = t->head; e; e = e->next) {
        size_t klen = 2 * sizeof(uint32_t) + e->nframes * sizeof(uintptr_t);
        unsigned hv = fbc_hash_words(&e->kind, klen);
        seen_stack *f = NULL;
        HASH_FIND_BYHASHVALUE(hh, m->hash, &e->kind, klen, hv, f);
        fbc_rstack *s = f ? &r->stacks[f->idx] : &r->stacks[r->nstacks];
        if (!f) {
            seen_stack *node = &m->nodes[r->nstacks];
            node->idx = r->nstacks++;
            HASH_ADD_KEYPTR_BYHASHVALUE(hh, m->hash, &e->kind, klen, hv, node);
            s->e = e;
        }
        s->count += e->count;
        s->bytes += e->bytes;
        s->max_bytes = e->max_bytes > s->max_bytes ? e->max_bytes : s->max_bytes;
        if (e->nshapes) {
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
    *m = (merger){0};
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
    copy_table(r, t, &m);
    merger_free(&m);
    return attribute(r);
}

fbc_report *fbc_report_build_process(void)
{
    /* Every shard is held while it is copied, so the report is one instant of the census; the
     * copy is short, and a recording thread only ever holds its own shard's lock. */
    fbc_shard *head = fbc_shards_first(); /* shards are only ever added in front of it */
    size_t n = 0;
    for (fbc_shard *s = head; s; s = s->next) {
        pthread_mutex_lock(&s->lock);
        n += s->table.n;
    }
    merger m;
    fbc_report *r = report_new(n, &m);
    for (fbc_shard *s = head; s && r; s = s->next)
        copy_table(r, &s->table, &m);
    for (fbc_shard *s = head; s; s = s->next)
        pthread_mutex_unlock(&s->lock);
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
    pthread_mutex_lock(&fbc_sym_lock);
    for (size_t i = 0; i < r->nstacks; i++) {
        fbc_rstack *s = &r->stacks[i];
        fbc_kind k = (fbc_kind)s->e->kind;
        unsigned n = s->e->nframes < FBC_MAX_DEPTH ? s->e->nframes : FBC_MAX_DEPTH;
        fbc_attribute(s->e->frames, n, infos, &s->a);
        r->total[k] += s->count;
        r->bytes[k] += s->bytes;
        r->max[k] = s->max_bytes > r->max[k] ? s->max_bytes : r->max[k];
        fbc_rop *o = op_for(r, k, s->a.op);
        if (!o)
            continue;
        o->count += s->count;
        o->bytes += s->bytes;
        o->max_bytes = s->max_bytes > o->max_bytes ? s->max_bytes : o->max_bytes;
        add_site(o, &s->a, s->count, s->bytes);
        for (size_t j = 0; j < s->nshapes; j++)
            add_shape(o, &s->shapes[j]);
    }
    pthread_mutex_unlock(&fbc_sym_lock);
    for (int k = 0; k < 2; k++) {
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
    for (int k = 0; k < 2; k++) {
        fbc_rop *o, *tmp;
        HASH_ITER(hh, r->ophash[k], o, tmp) {
            HASH_DEL(r->ophash[k], o);
            free(o->sites);
            free(o->shapes);
            free(o);
        }
        free(r->ops[k]);
    }
    for (size_t i = 0; i < r->nstacks; i++)
        free(r->stacks[i].shapes);
    free(r->stacks);
    free(r);
}

uint64_t fbc_report_total(const fbc_report *r, fbc_kind k, bool bytes)
{
    return bytes ? r->bytes[k] : r->total[k];
}

uint64_t fbc_report_op(const fbc_report *r, fbc_kind k, const char *op, bool bytes)
{
    fbc_rop *o;
    HASH_FIND_STR(r->ophash[k], op, o);
    return !o ? 0 : bytes ? o->bytes : o->count;
}

void fbc_fmt_bytes(uint64_t b, char *out, size_t cap)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(out, cap, "%" PRIu64 " B", b);
    else
        snprintf(out, cap, "%.1f %s", v, unit[u]);
}

static void site_text(const fbc_rsite *s, char *out, size_t cap)
{
    if (s->file && s->line > 0) {
        const char *slash = strrchr(s->file, '/');
        snprintf(out, cap, "%s (%s:%d)", s->site, slash ? slash + 1 : s->file, s->line);
    } else {
        snprintf(out, cap, "%s", s->site);
    }
}

void fbc_report_text(const fbc_report *r, FILE *out, const char *indent, int top)
{
    for (int k = 0; k < 2; k++) {
        if (k == FBC_HOST && !r->nops[k])
            continue;
        if (k == FBC_HOST)
            fprintf(out, "%shost-resident ops (computed on the host because their input was):\n",
                    indent);
        for (size_t i = 0; i < r->nops[k] && (top <= 0 || (int)i < top); i++) {
            const fbc_rop *o = r->ops[k][i];
            char b[32], site[512];
            fbc_fmt_bytes(o->bytes, b, sizeof b);
            site_text(&o->sites[0], site, sizeof site);
            fprintf(out, "%s  %-24s %8" PRIu64 " %11s  at %s", indent, o->op, o->count, b,
                    o->nsites ? site : "(unknown)");
            if (o->nsites > 1)
                fprintf(out, " and %zu more site%s", o->nsites - 1, o->nsites > 2 ? "s" : "");
            fputc('\n', out);
            for (size_t j = 1; j < o->nsites && j < 4 && top <= 0; j++) {
                site_text(&o->sites[j], site, sizeof site);
                fprintf(out, "%s  %-24s %8" PRIu64 "              at %s\n", indent, "", o->sites[j].count,
                        site);
            }
        }
        if (top > 0 && (int)r->nops[k] > top)
            fprintf(out, "%s  ... and %zu more ops\n", indent, r->nops[k] - (size_t)top);
    }
}

/* pprof.c - see pprof.h.
 *
 * The profile is streamed: each sample is packed by protobuf-c as a Profile holding that one
 * sample, and these pieces are compressed as they come. Serialized messages of one type
 * concatenate into their merge (repeated fields append), so the pieces and a last Profile
 * with the tables (strings, functions, locations, mappings) read as one profile. Memory thus
 * follows the distinct frames and names, not the number of stacks.
 */
#include "pprof.h"

#include "attrib.h"
#include "grow.h"
#include "names.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uthash.h>
#include <zlib.h>

#include "fold.h"
#include "output.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__ValueType pb_value_type;

/* Three sample types per kind (fallbacks, host-resident ops, transfers, host splits): count,
 * bytes, time. */
enum {
    V_FALLBACKS,
    V_BYTES,
    V_TIME,
    V_HOST_OPS,
    V_HOST_BYTES,
    V_HOST_TIME,
    V_TRANSFERS,
    V_TRANSFER_BYTES,
    V_TRANSFER_TIME,
    V_SPLITS,
    V_SPLIT_BYTES,
    V_SPLIT_TIME,
    NVALUES
};
/* Inlined frames deeper than this are kept as frames of their own location. */
enum { MAX_INLINE = 64, MAX_LABELS = 8 };

/* A growable array of fixed-size items. */
typedef struct {
    void *v;
    size_t n, cap, size;
} vec;

static void *vec_push(vec *a)
{
    if (!fbr_grow(&a->v, &a->cap, a->n, a->size, 64))
        return NULL;
    return (char *)a->v + a->size * a->n++;
}

/* An interning table entry: a byte key and the id it got. */
typedef struct {
    UT_hash_handle hh;
    uint64_t id;
    size_t klen;
    unsigned char key[];
} entry;

typedef struct {
    entry *map;
} table;

static entry *table_find(table *t, const void *key, size_t klen)
{
    entry *e;
    HASH_FIND(hh, t->map, key, klen, e);
    return e;
}

static entry *table_add(table *t, const void *key, size_t klen, uint64_t id)
{
    entry *e = malloc(sizeof *e + klen);
    if (!e)
        return NULL;
    e->id = id;
    e->klen = klen;
    memcpy(e->key, key, klen);
    HASH_ADD(hh, t->map, key, klen, e);
    return e;
}

static void table_free(table *t)
{
    entry *e, *tmp;
    HASH_ITER(hh, t->map, e, tmp)
    {
        HASH_DEL(t->map, e);
        free(e);
    }
}

/* A key built of strings and numbers, each string with its length so that ("ab","c") and
 * ("a","bc") differ. */
typedef struct {
    unsigned char *b;
    size_t n, cap;
    bool oom;
} keybuf;

static void key_bytes(keybuf *k, const void *p, size_t n)
{
    if (k->n + n > k->cap) {
        size_t cap = (k->n + n) * 2 + 64;
        unsigned char *b = realloc(k->b, cap);
        if (!b) {
            k->oom = true;
            return;
        }
        k->b = b;
        k->cap = cap;
    }
    memcpy(k->b + k->n, p, n);
    k->n += n;
}

static void key_u64(keybuf *k, uint64_t v)
{
    key_bytes(k, &v, sizeof v);
}

static void key_str(keybuf *k, const char *s)
{
    uint64_t n = s ? strlen(s) + 1 : 0; /* NULL and "" differ */
    key_u64(k, n);
    if (n)
        key_bytes(k, s, n - 1);
}

/* One distinct native frame's resolution, and the location it forms on its own. */
typedef struct {
    uint64_t mapping;  /* 0: none */
    uint64_t offset;   /* within the mapping's module, or the raw address without one */
    uint64_t function; /* 0: not symbolized */
    int64_t line;
    bool python, inlined;
    uint64_t location; /* 0 until it is used as a location of its own */
} frame_rec;

typedef struct {
    uint64_t path, build_id; /* string indices */
    uint64_t size;           /* bytes spanned: the module's size, or past its last offset */
    bool all_symbolized, any_file, any_line, any_inline;
} mapping_rec;

typedef struct {
    uint64_t mapping, offset;
    size_t first_line, nlines; /* into the line list */
} location_rec;

typedef struct {
    ProtobufCBuffer base; /* protobuf-c appends packed bytes here */
    z_stream z;
    FILE *f;
    bool failed;
    unsigned char out[1 << 16];
} gz_sink;

typedef struct {
    gz_sink *sink;
    table strings, functions, frames, mappings, locations, labels;
    table by_addr;          /* interned frame records of the dumps -> frame record index */
    vec strs;               /* char *: the string table */
    vec funcs;              /* uint64_t[3]: name, system name, file */
    vec frecs;              /* frame_rec */
    vec maps;               /* mapping_rec */
    vec locs;               /* location_rec */
    vec lines;              /* uint64_t[2]: function, line */
    vec labs;               /* pb_label * */
    keybuf key, fkey, lkey; /* keys of mappings, frames and inline groups */
    bool oom, any_time, any_untimed, any_split_timed;
    int64_t earliest_ns;
    uint64_t exe; /* string index of the first dump's executable: its mapping goes first */
} builder;

static uint64_t str_id(builder *b, const char *s)
{
    if (!s || !*s)
        return 0;
    size_t n = strlen(s);
    entry *e = table_find(&b->strings, s, n);
    if (e)
        return e->id;
    char **slot = vec_push(&b->strs);
    char *copy = slot ? strdup(s) : NULL;
    if (!copy || !table_add(&b->strings, s, n, b->strs.n - 1)) {
        if (slot) {
            b->strs.n--;
            free(copy);
        }
        b->oom = true;
        return 0;
    }
    *slot = copy;
    return b->strs.n - 1;
}

/* A native function's system name is its symbol, which go tool pprof demangles for display.
 * A Python function has none: pprof would take "<module>" for a C++ template and strip it. */
static uint64_t function_id(builder *b, const char *name, const char *file, bool python)
{
    uint64_t k[3] = {str_id(b, name), python ? 0 : str_id(b, name), str_id(b, file)};
    entry *e = table_find(&b->functions, k, sizeof k);
    if (e)
        return e->id;
    uint64_t *f = vec_push(&b->funcs);
    if (!f || !table_add(&b->functions, k, sizeof k, b->funcs.n)) {
        b->oom = true;
        return 0;
    }
    memcpy(f, k, sizeof k);
    return b->funcs.n; /* ids start at 1 */
}

static uint64_t mapping_id(builder *b, const char *path, const char *build_id)
{
    b->key.n = 0;
    key_str(&b->key, path);
    key_str(&b->key, build_id);
    if (b->key.oom) {
        b->oom = true;
        return 0;
    }
    entry *e = table_find(&b->mappings, b->key.b, b->key.n);
    if (e)
        return e->id;
    mapping_rec *m = vec_push(&b->maps);
    if (!m || !table_add(&b->mappings, b->key.b, b->key.n, b->maps.n)) {
        b->oom = true;
        return 0;
    }
    *m = (mapping_rec){str_id(b, path), str_id(b, build_id), 0, true, false, false, false};
    return b->maps.n;
}

/* The module record of a frame's module in this dump, for its build id and size. */
static const fbd_module *find_module(const fbd_module *mods, size_t n, const char *path)
{
    for (size_t i = 0; path && i < n; i++)
        if (!strcmp(mods[i].path, path))
            return &mods[i];
    return NULL;
}

#define NO_FRAME SIZE_MAX

static frame_rec *frec(builder *b, size_t i)
{
    return &((frame_rec *)b->frecs.v)[i];
}

/* The index of frame f's record, made on first sight; NO_FRAME when out of memory. Records are
 * named by index: the array moves as it grows. */
static size_t frame_of(builder *b, const fbd_frame *f, bool python, bool inlined,
                       const fbd_module *mods, size_t nmods)
{
    const fbd_module *m = python ? NULL : find_module(mods, nmods, f->module);
    uint64_t offset = f->has_offset ? f->offset : f->has_ip ? f->ip : 0;
    keybuf *k = &b->fkey;
    k->n = 0;
    key_u64(k, (uint64_t)python | (uint64_t)inlined << 1);
    key_str(k, python ? NULL : f->module);
    key_str(k, m ? m->build_id : NULL);
    key_u64(k, python ? 0 : offset);
    key_str(k, f->symbol);
    key_str(k, f->file);
    key_u64(k, (uint64_t)f->line);
    if (k->oom) {
        b->oom = true;
        return NO_FRAME;
    }
    entry *e = table_find(&b->frames, k->b, k->n);
    if (e)
        return e->id;
    frame_rec r = {0};
    r.python = python;
    r.inlined = inlined;
    r.line = f->line > 0 ? f->line : 0;
    if (!python && f->module)
        r.mapping = mapping_id(b, f->module, m ? m->build_id : NULL);
    if (!python)
        r.offset = offset;
    if (f->symbol)
        r.function = function_id(b, f->symbol, f->file, python);
    if (r.mapping) {
        mapping_rec *mr = &((mapping_rec *)b->maps.v)[r.mapping - 1];
        uint64_t span = m && m->size > offset ? m->size : offset + 1;
        if (span > mr->size)
            mr->size = span;
        mr->all_symbolized &= r.function != 0;
        mr->any_file |= f->file != NULL;
        mr->any_line |= r.line > 0;
        mr->any_inline |= inlined;
    }
    frame_rec *slot = vec_push(&b->frecs);
    if (!slot || !table_add(&b->frames, k->b, k->n, b->frecs.n - 1)) {
        b->oom = true;
        return NO_FRAME;
    }
    *slot = r;
    return b->frecs.n - 1;
}

/* The location of frames fr[0..n) (record indices): an outer frame and the frames inlined
 * into it (innermost first), or one Python or native frame. */
static uint64_t location_of(builder *b, const size_t *fr, size_t n)
{
    if (n == 1 && frec(b, fr[0])->location)
        return frec(b, fr[0])->location;
    keybuf *k = &b->lkey;
    if (n > 1) {
        k->n = 0;
        for (size_t i = 0; i < n; i++)
            key_u64(k, fr[i]);
        if (k->oom) {
            b->oom = true;
            return 0;
        }
        entry *e = table_find(&b->locations, k->b, k->n);
        if (e)
            return e->id;
    }
    location_rec *l = vec_push(&b->locs);
    if (!l) {
        b->oom = true;
        return 0;
    }
    uint64_t id = b->locs.n;
    const frame_rec *outer = frec(b, fr[n - 1]);
    *l = (location_rec){outer->mapping, outer->offset, b->lines.n, 0};
    for (size_t i = 0; i < n; i++) {
        if (!frec(b, fr[i])->function)
            continue;
        uint64_t *ln = vec_push(&b->lines);
        if (!ln) {
            b->oom = true;
            return 0;
        }
        ln[0] = frec(b, fr[i])->function;
        ln[1] = (uint64_t)frec(b, fr[i])->line;
        l->nlines++;
    }
    if (n == 1)
        frec(b, fr[0])->location = id;
    else if (!table_add(&b->locations, k->b, k->n, id))
        b->oom = true;
    return id;
}

/* Labels are strings, numbers too: go tool pprof drops a numeric label whose value is 0
 * (rank 0), and Pyroscope and Parca read string labels only. */
static pb_label *label_of(builder *b, const char *key, const char *str)
{
    uint64_t k[2] = {str_id(b, key), str_id(b, str)};
    entry *e = table_find(&b->labels, k, sizeof k);
    if (e)
        return ((pb_label **)b->labs.v)[e->id];
    pb_label **slot = vec_push(&b->labs);
    pb_label *l = slot ? malloc(sizeof *l) : NULL;
    if (!l || !table_add(&b->labels, k, sizeof k, b->labs.n - 1)) {
        if (slot)
            b->labs.n--;
        free(l);
        b->oom = true;
        return NULL;
    }
    perftools__profiles__label__init(l);
    l->key = (int64_t)k[0];
    l->str = (int64_t)k[1];
    *slot = l;
    return l;
}

static pb_label *num_label_of(builder *b, const char *key, int64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%lld", (long long)v);
    return label_of(b, key, text);
}

/* ---- the compressed output ------------------------------------------------------------ */

static void sink_drain(gz_sink *s, int flush)
{
    do {
        s->z.next_out = s->out;
        s->z.avail_out = sizeof s->out;
        int r = deflate(&s->z, flush);
        if (r == Z_STREAM_ERROR) {
            s->failed = true;
            return;
        }
        size_t have = sizeof s->out - s->z.avail_out;
        if (fwrite(s->out, 1, have, s->f) != have) {
            s->failed = true;
            return;
        }
    } while (s->z.avail_out == 0);
}

static void sink_append(ProtobufCBuffer *buf, size_t len, const uint8_t *data)
{
    gz_sink *s = (gz_sink *)buf;
    if (s->failed)
        return;
    s->z.next_in = (Bytef *)data;
    s->z.avail_in = (uInt)len;
    sink_drain(s, Z_NO_FLUSH);
}

/* ---- one sample per stack ------------------------------------------------------------- */

static int64_t parse_time(const char *iso)
{
    struct tm tm = {0};
    const char *end = iso ? strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!end)
        return 0;
    time_t t = timegm(&tm);
    return t > 0 ? (int64_t)t * 1000000000 : 0;
}

/* A stack's site as the report names it: "forward (model.py:7)" where a frame of it has the
 * line, so a profile's site label points at the line to fix. */
static const char *site_label(const fbd_dump *d, const fbd_stack *st, char *buf, size_t len)
{
    const char *file;
    long line;
    char name[600];
    fbm_stack_site(d, st, &file, &line);
    fbn_display(st->site, name, sizeof name);
    fbr_site site = {st->origin, st->node, st->forward, name, file, line, st->site_inlined_in};
    return fbr_site_text(&site, buf, len);
}

/* A stack's locations, outermost last, into ids: each frame's record, an inlined frame in
 * one location with the frame it was inlined into. Returns false when out of memory. */
static bool stack_locations(builder *b, const fbd_stack *st, const fbd_module *mods, size_t nmods,
                            vec *ids)
{
    size_t group[MAX_INLINE], ng = 0;
    ids->n = 0;
    for (size_t k = 0; k < st->nframes && !b->oom; k++) {
        /* The reader interns a dump's frames: a frame met again is the same record, found
         * by its address before its contents are keyed and hashed. */
        const fbd_frame *f = st->frames[k];
        entry *seen = table_find(&b->by_addr, &f, sizeof f);
        size_t r =
            seen ? seen->id : frame_of(b, f, f->python, f->inlined && !f->python, mods, nmods);
        if (!seen && r != NO_FRAME && !table_add(&b->by_addr, &f, sizeof f, r))
            b->oom = true;
        if (r == NO_FRAME)
            break;
        group[ng++] = r;
        /* An inlined frame waits for the frame it was inlined into. */
        if (frec(b, r)->inlined && ng < MAX_INLINE && k + 1 < st->nframes)
            continue;
        uint64_t *slot = vec_push(ids);
        if (!slot) {
            b->oom = true;
            break;
        }
        *slot = location_of(b, group, ng);
        ng = 0;
    }
    return !b->oom;
}

/* One sample: the stack's locations, its labels, its three values in its kind's types. */
static void put_sample(builder *b, const fbd_stack *st, const vec *ids, pb_label **labels,
                       size_t nl)
{
    int64_t v[NVALUES] = {0};
    static const int bases[FBD_NKINDS] = {[FBD_FALLBACK] = V_FALLBACKS,
                                          [FBD_HOST] = V_HOST_OPS,
                                          [FBD_TRANSFER] = V_TRANSFERS,
                                          [FBD_SPLIT] = V_SPLITS};
    int base = bases[st->kind];
    v[base] = (int64_t)st->count;
    v[base + 1] = (int64_t)st->bytes;
    v[base + 2] = (int64_t)st->ns;
    pb_sample s;
    perftools__profiles__sample__init(&s);
    s.n_location_id = ids->n;
    s.location_id = ids->v;
    s.n_value = NVALUES;
    s.value = v;
    s.n_label = nl;
    s.label = labels;
    pb_sample *one = &s;
    pb_profile p;
    perftools__profiles__profile__init(&p);
    p.n_sample = 1;
    p.sample = &one;
    perftools__profiles__profile__pack_to_buffer(&p, &b->sink->base);
}

/* The labels of a dump's process: pid, rank, host, exe. Returns how many. */
static size_t process_labels(builder *b, const fbd_dump *d, pb_label **proc)
{
    size_t n = 0;
    long rank = fbd_proc(d)->rank;
    proc[n++] = num_label_of(b, "pid", fbd_pid(d));
    if (rank >= 0)
        proc[n++] = num_label_of(b, "rank", rank);
    if (*fbd_host(d))
        proc[n++] = label_of(b, "host", fbd_host(d));
    if (fbd_exe(d) && *fbd_exe(d))
        proc[n++] = label_of(b, "exe", fbr_base_name(fbd_exe(d)));
    return n;
}

static void add_dump(builder *b, fbm_census *c, fbd_dump *d)
{
    size_t nstacks, nmods;
    const fbd_stack *st = fbd_stacks(d, &nstacks);
    const fbd_module *mods = fbd_modules(d, &nmods);
    bool timed = fbd_has_time(d);
    if (!b->exe)
        b->exe = str_id(b, fbd_exe(d));
    b->any_time |= timed;
    b->any_untimed |= !timed;
    int64_t t = parse_time(fbd_time(d));
    if (t && (!b->earliest_ns || t < b->earliest_ns))
        b->earliest_ns = t;
    pb_label *labels[MAX_LABELS];
    size_t nproc = process_labels(b, d, labels + 3); /* at most 4 */
    vec ids = {.size = sizeof(uint64_t)};
    for (size_t i = 0; i < nstacks && !b->oom && !b->sink->failed; i++) {
        if (!fbm_census_keeps_backend(c, st[i].backend))
            continue;
        char site[1200];
        labels[0] = label_of(b, "op", st[i].op);
        labels[1] = label_of(b, "site", site_label(d, &st[i], site, sizeof site));
        labels[2] = label_of(b, "backend", st[i].backend);
        /* a node of ggml's: no time of its own, its split's (split_time) */
        labels[3 + nproc] = st[i].split_timed ? label_of(b, "timed", "split") : NULL;
        b->any_split_timed |= st[i].split_timed;
        if (stack_locations(b, &st[i], mods, nmods, &ids) && !b->oom)
            put_sample(b, &st[i], &ids, labels, 3 + nproc + (labels[3 + nproc] != NULL));
    }
    free(ids.v);
}

/* ---- the tables, after the samples -------------------------------------------------- */

/* The profile's tables as protobuf-c records, made from the builder's at the end. */
typedef struct {
    pb_mapping *maps, **mapp;
    pb_function *funcs, **funcp;
    pb_location *locs, **locp;
    pb_line *lines, **linep;
    uint64_t *bases, *ids; /* each mapping's synthetic base and its new id */
} tables;

static void tables_free(tables *t)
{
    free(t->maps);
    free(t->mapp);
    free(t->funcs);
    free(t->funcp);
    free(t->locs);
    free(t->locp);
    free(t->lines);
    free(t->linep);
    free(t->bases);
    free(t->ids);
}

static int tables_alloc(tables *t, const builder *b)
{
    size_t nm = b->maps.n ? b->maps.n : 1, nf = b->funcs.n ? b->funcs.n : 1;
    size_t nl = b->locs.n ? b->locs.n : 1, nli = b->lines.n ? b->lines.n : 1;
    *t = (tables){calloc(nm, sizeof *t->maps),   calloc(nm, sizeof *t->mapp),
                  calloc(nf, sizeof *t->funcs),  calloc(nf, sizeof *t->funcp),
                  calloc(nl, sizeof *t->locs),   calloc(nl, sizeof *t->locp),
                  calloc(nli, sizeof *t->lines), calloc(nli, sizeof *t->linep),
                  calloc(nm, sizeof *t->bases),  calloc(nm, sizeof *t->ids)};
    return t->maps && t->mapp && t->funcs && t->funcp && t->locs && t->locp && t->lines &&
                   t->linep && t->bases && t->ids
               ? 0
               : -1;
}

/* Mappings side by side from 4 MiB up, page-aligned with a gap, so no two overlap; the
 * executable's first, which pprof takes for the program. */
static void make_mappings(tables *t, const builder *b)
{
    size_t nm = b->maps.n, first = 0;
    for (size_t i = 0; i < nm; i++)
        if (b->exe && ((mapping_rec *)b->maps.v)[i].path == b->exe) {
            first = i;
            break;
        }
    uint64_t next = 0x400000;
    for (size_t i = 0; i < nm; i++) {
        size_t src = i == 0 ? first : i <= first ? i - 1 : i; /* mapping id src + 1 */
        const mapping_rec *r = &((mapping_rec *)b->maps.v)[src];
        pb_mapping *m = &t->maps[i];
        perftools__profiles__mapping__init(m);
        m->id = i + 1;
        t->ids[src] = i + 1;
        t->bases[src] = next;
        m->memory_start = next;
        m->memory_limit = next + (r->size ? r->size : 1);
        m->filename = (int64_t)r->path;
        m->build_id = (int64_t)r->build_id;
        m->has_functions = r->all_symbolized;
        m->has_filenames = r->any_file;
        m->has_line_numbers = r->any_line;
        m->has_inline_frames = r->any_inline;
        next = (m->memory_limit + 0x1fff) & ~(uint64_t)0xfff;
        t->mapp[i] = m;
    }
}

static void make_functions_and_locations(tables *t, const builder *b)
{
    for (size_t i = 0; i < b->funcs.n; i++) {
        const uint64_t *f = &((uint64_t *)b->funcs.v)[3 * i];
        perftools__profiles__function__init(&t->funcs[i]);
        t->funcs[i].id = i + 1;
        t->funcs[i].name = (int64_t)f[0];
        t->funcs[i].system_name = (int64_t)f[1];
        t->funcs[i].filename = (int64_t)f[2];
        t->funcp[i] = &t->funcs[i];
    }
    for (size_t i = 0; i < b->lines.n; i++) {
        const uint64_t *l = &((uint64_t *)b->lines.v)[2 * i];
        perftools__profiles__line__init(&t->lines[i]);
        t->lines[i].function_id = l[0];
        t->lines[i].line = (int64_t)l[1];
        t->linep[i] = &t->lines[i];
    }
    for (size_t i = 0; i < b->locs.n; i++) {
        const location_rec *r = &((location_rec *)b->locs.v)[i];
        pb_location *l = &t->locs[i];
        perftools__profiles__location__init(l);
        l->id = i + 1;
        l->mapping_id = r->mapping ? t->ids[r->mapping - 1] : 0;
        l->address = r->mapping ? t->bases[r->mapping - 1] + r->offset : r->offset;
        l->n_line = r->nlines;
        l->line = r->nlines ? &t->linep[r->first_line] : NULL;
        t->locp[i] = l;
    }
}

/* The last piece of the profile: sample types, comments and the tables. */
static int finish(builder *b, const fbm_summary *sum)
{
    static const char *const types[NVALUES][2] = {
        {"fallbacks", "count"}, {"bytes", "bytes"},          {"time", "nanoseconds"},
        {"host_ops", "count"},  {"host_bytes", "bytes"},     {"host_time", "nanoseconds"},
        {"transfers", "count"}, {"transfer_bytes", "bytes"}, {"transfer_time", "nanoseconds"},
        {"splits", "count"},    {"split_bytes", "bytes"},    {"split_time", "nanoseconds"}};
    pb_value_type vt[NVALUES], *vtp[NVALUES];
    for (int i = 0; i < NVALUES; i++) {
        perftools__profiles__value_type__init(&vt[i]);
        vt[i].type = (int64_t)str_id(b, types[i][0]);
        vt[i].unit = (int64_t)str_id(b, types[i][1]);
        vtp[i] = &vt[i];
    }
    char c1[160], c2[240];
    snprintf(c1, sizeof c1, "fbcount: %zu dump%s from %zu process%s", sum->dumps,
             sum->dumps == 1 ? "" : "s", sum->processes, sum->processes == 1 ? "" : "es");
    snprintf(c2, sizeof c2, "times: %s",
             !b->any_time     ? "not measured by these shims (time values are 0)"
             : b->any_untimed ? "measured in some dumps only (0 in the others)"
                              : "measured");
    if (b->any_split_timed)
        snprintf(c2 + strlen(c2), sizeof c2 - strlen(c2),
                 "; samples labelled timed=split "
                 "(ggml's nodes) have none of their own: their splits' is split_time");
    int64_t comments[2] = {(int64_t)str_id(b, c1), (int64_t)str_id(b, c2)};
    tables t;
    /* b->oom: the comments or types above may have failed to intern */
    int rc = tables_alloc(&t, b) != 0 || b->oom ? -1 : 0;
    if (rc == 0) {
        make_mappings(&t, b);
        make_functions_and_locations(&t, b);
        pb_profile p;
        perftools__profiles__profile__init(&p);
        p.n_sample_type = NVALUES;
        p.sample_type = vtp;
        p.n_mapping = b->maps.n;
        p.mapping = t.mapp;
        p.n_location = b->locs.n;
        p.location = t.locp;
        p.n_function = b->funcs.n;
        p.function = t.funcp;
        p.n_comment = 2;
        p.comment = comments;
        p.default_sample_type = vt[V_FALLBACKS].type;
        p.time_nanos = b->earliest_ns;
        p.n_string_table = b->strs.n;
        p.string_table = b->strs.v;
        perftools__profiles__profile__pack_to_buffer(&p, &b->sink->base);
    }
    tables_free(&t);
    return rc;
}

static void builder_free(builder *b)
{
    table_free(&b->strings);
    table_free(&b->functions);
    table_free(&b->frames);
    table_free(&b->mappings);
    table_free(&b->locations);
    table_free(&b->labels);
    table_free(&b->by_addr);
    for (size_t i = 0; i < b->strs.n; i++)
        free(((char **)b->strs.v)[i]);
    for (size_t i = 0; i < b->labs.n; i++)
        free(((pb_label **)b->labs.v)[i]);
    free(b->strs.v);
    free(b->funcs.v);
    free(b->frecs.v);
    free(b->maps.v);
    free(b->locs.v);
    free(b->lines.v);
    free(b->labs.v);
    free(b->key.b);
    free(b->fkey.b);
    free(b->lkey.b);
}

int fbpp_write_file(FILE *out, fbm_census *c, const fbt_opts *o)
{
    (void)o;
    gz_sink *s = calloc(1, sizeof *s);
    builder *b = calloc(1, sizeof *b);
    /* Level 1: the profile is mostly small integers; level 6 gains a few percent and takes
     * several times as long on a census of a million stacks. */
    if (!s || !b || deflateInit2(&s->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(s);
        free(b);
        return -1;
    }
    s->base.append = sink_append;
    s->f = out;
    b->sink = s;
    b->strs.size = sizeof(char *);
    b->funcs.size = 3 * sizeof(uint64_t);
    b->frecs.size = sizeof(frame_rec);
    b->maps.size = sizeof(mapping_rec);
    b->locs.size = sizeof(location_rec);
    b->lines.size = 2 * sizeof(uint64_t);
    b->labs.size = sizeof(pb_label *);
    char **empty = vec_push(&b->strs); /* the string table starts with "" */
    if (!empty || !(*empty = strdup("")))
        b->oom = true;

    size_t n = fbm_census_ndumps(c);
    for (size_t i = 0; i < n && !b->oom && !s->failed; i++)
        add_dump(b, c, fbm_census_dump(c, i));
    fbm_summary sum = fbm_census_summary(c);
    if (!b->oom && !s->failed && finish(b, &sum) != 0)
        b->oom = true;
    if (!b->oom && !s->failed) {
        s->z.next_in = NULL;
        s->z.avail_in = 0;
        sink_drain(s, Z_FINISH);
    }
    int rc = b->oom || s->failed || ferror(out) ? -1 : 0;
    deflateEnd(&s->z);
    builder_free(b);
    free(b);
    free(s);
    return rc;
}

fbpp_status fbpp_write(fbm_census *c, const char *path, char *err, size_t errlen)
{
    if ((!path || !strcmp(path, "-")) && isatty(STDOUT_FILENO)) {
        snprintf(err, errlen,
                 "a pprof profile is binary: not written to a terminal "
                 "(give -o FILE, or redirect standard output)");
        return FBPP_ETTY;
    }
    fbo_file o;
    if (fbo_open(&o, path, err, errlen) != 0)
        return FBPP_EWRITE;
    fbt_opts opts = {.by = FBM_BY_STACK};
    int rc = fbpp_write_file(o.f, c, &opts);
    bool nomem = rc && !ferror(o.f);
    if (fbo_close(&o, rc == 0, err, errlen) == 0)
        return FBPP_OK;
    if (nomem)
        snprintf(err, errlen, "%s: out of memory", path ? path : "standard output");
    return nomem ? FBPP_ENOMEM : FBPP_EWRITE;
}

/* dump.c - load and validate one fbcount/1 dump with jansson, streaming the stacks.
 *
 * A small scanner walks the top-level object and the stacks array; jansson parses and the
 * validator checks each top-level value and each stack on its own, so a dump of a million
 * stacks never exists as one JSON tree. Stack strings and frames are interned in the
 * dump's pool; the other rows point into the kept top-level document. Validation errors
 * carry a JSON path ("ops[2].count") because jansson keeps no line numbers for values.
 */
#include "grow.h"
#include "dump.h"

#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrib.h"   /* rules/: the default op prefix */
#include "decimal.h"  /* rules/: fbr_fmt_u64 */
#include "fields.h"   /* rules/: the field names the shim writes */
#include "readfile.h" /* rules/: regular files only, never blocking, capped */
#include "signals.h"
#include "pool.h"

struct fbd_dump {
    char *path;
    json_t *root; /* the top level without "stacks" */
    fbp_pool *pool;

    const char *reason, *time, *signal_name, *timing, *attached_at;
    fbd_process proc;
    uint64_t seq;
    int signal;
    bool symbolized, has_time;
    fbd_total total;
    fbd_counters backend;
    fbd_backend *backends;
    size_t nbackends;
    const char **prefixes, **cfg_backends, **py_backends;
    size_t nprefixes, ncfg_backends, npy_backends;
    fbd_op *ops[FBD_NKINDS];
    size_t nops[FBD_NKINDS];
    fbd_stack *stacks;
    size_t nstacks, capstacks;
    bool seen_stacks, seen_table, tagged; /* tagged: some frames are frame_table indices */
    fbd_module *modules;
    size_t nmodules;
};

static const char *default_prefixes[] = {FBR_DEFAULT_OP_PREFIX}; /* rules/attrib.h */
static const char *default_py_backends[] = {FBR_DEFAULT_PY_BACKEND};

/* Duplicate keys are rejected so a dump cannot say two things about one field. */
#define FBD_JSON_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)

/* Validation context: the JSON path being checked and the first error met. */
typedef struct {
    fbd_dump *d;
    char path[256];
    char *err;
    size_t errlen;
    bool failed;
    bool nomem;              /* the failure is an allocation's */
    const fbd_frame **table; /* frame_table's frames, interned as it streams by */
    size_t ntable, captable;
    /* Inline frames read by their text (split_stack): the stack at hand's frames, the memo of
     * frames met before, and the stack object without its frames, for jansson. */
    struct frame_text *slices;
    size_t nslices, capslices;
    struct memo_slot *memo;
    char *rest;
    size_t caprest;
    bool split;    /* the stack at hand came split: its frames are in slices */
    bool no_split; /* its frames are frame_table indices: stacks go to jansson whole */
} vctx;

static void fail(vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(vctx *c, const char *fmt, ...)
{
    if (c->failed)
        return;
    c->failed = true;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s: %s%s%s", c->d->path, c->path, c->path[0] ? ": " : "", msg);
}

static void oom(vctx *c)
{
    if (!c->failed)
        c->nomem = true;
    fail(c, "out of memory");
}

static void *alloc(vctx *c, size_t n, size_t size)
{
    if (c->failed)
        return NULL;
    if (n && size > SIZE_MAX / n) {
        oom(c);
        return NULL;
    }
    void *p = fbp_alloc(c->d->pool, n * size);
    if (!p)
        oom(c);
    return p;
}

static const char *intern(vctx *c, const char *s)
{
    if (!s || c->failed)
        return s;
    const char *r = fbp_str(c->d->pool, s, strlen(s));
    if (!r)
        oom(c);
    return r;
}

/* Push a path component; returns the old length so pop() can restore it. */
static size_t push(vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static size_t push(vctx *c, const char *fmt, ...)
{
    size_t old = strlen(c->path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->path + old, sizeof c->path - old, fmt, ap);
    va_end(ap);
    return old;
}

/* push(c, "%s[%zu]", name, i) without printf: it runs for every stack and frame of a
 * million-stack dump, where vsnprintf cost 3% of `report --by stack`. */
static size_t push_at(vctx *c, const char *name, size_t i)
{
    size_t old = strlen(c->path), n = strlen(name), room = sizeof c->path - old;
    char digits[20];
    size_t nd = fbr_fmt_u64(digits, i);
    if (n + nd + 3 > room) /* as vsnprintf would cut it: cut it */
        return push(c, "%s[%.*s]", name, (int)nd, digits);
    char *w = c->path + old;
    memcpy(w, name, n);
    w[n] = '[';
    memcpy(w + n + 1, digits, nd);
    w[n + 1 + nd] = ']';
    w[n + 2 + nd] = '\0';
    return old;
}

static void pop(vctx *c, size_t old)
{
    c->path[old] = '\0';
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* Fetch obj.key; a missing required key is an error, a missing optional one is NULL. */
static json_t *field(vctx *c, json_t *obj, const char *key, bool required)
{
    json_t *v = json_object_get(obj, key);
    if (!v && required) {
        size_t o = push(c, c->path[0] ? ".%s" : "%s", key);
        fail(c, "required field is missing");
        pop(c, o);
    }
    return v;
}

static const char *get_str(vctx *c, json_t *obj, const char *key, bool required)
{
    json_t *v = field(c, obj, key, required);
    if (!v || (!required && json_is_null(v)))
        return NULL;
    if (!json_is_string(v)) {
        size_t o = push(c, c->path[0] ? ".%s" : "%s", key);
        fail(c, "expected a string, got %s", type_name(v));
        pop(c, o);
        return NULL;
    }
    return json_string_value(v);
}

static bool get_bool_or(vctx *c, json_t *obj, const char *key, bool dflt)
{
    json_t *v = field(c, obj, key, false);
    if (!v || json_is_null(v))
        return dflt;
    if (!json_is_boolean(v)) {
        size_t o = push(c, c->path[0] ? ".%s" : "%s", key);
        fail(c, "expected a boolean, got %s", type_name(v));
        pop(c, o);
        return false;
    }
    return json_is_true(v);
}

static bool get_bool(vctx *c, json_t *obj, const char *key)
{
    return get_bool_or(c, obj, key, false);
}

static uint64_t get_count(vctx *c, json_t *obj, const char *key, bool required)
{
    json_t *v = field(c, obj, key, required);
    if (!v || (!required && json_is_null(v)))
        return 0;
    if (json_is_integer(v) && json_integer_value(v) >= 0 &&
        (uint64_t)json_integer_value(v) <= FBD_MAX_COUNT)
        return (uint64_t)json_integer_value(v);
    size_t o = push(c, c->path[0] ? ".%s" : "%s", key);
    if (!json_is_integer(v))
        fail(c, "expected a non-negative integer, got %s", type_name(v));
    else if (json_integer_value(v) < 0)
        fail(c, "negative value %lld", (long long)json_integer_value(v));
    else
        fail(c, "value %lld exceeds 2^53", (long long)json_integer_value(v));
    pop(c, o);
    return 0;
}

static uint64_t get_hex(vctx *c, json_t *obj, const char *key, bool *has)
{
    *has = false;
    const char *s = get_str(c, obj, key, false);
    if (!s)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 16);
    if (strncmp(s, "0x", 2) != 0 || end == s + 2 || *end || errno) {
        size_t o = push(c, ".%s", key);
        fail(c, "expected a hex string like \"0x1f30\"");
        pop(c, o);
        return 0;
    }
    *has = true;
    return v;
}

static json_t *get_array(vctx *c, json_t *obj, const char *key, bool required)
{
    json_t *v = field(c, obj, key, required);
    if (!v || (!required && json_is_null(v)))
        return NULL;
    if (!json_is_array(v)) {
        size_t o = push(c, c->path[0] ? ".%s" : "%s", key);
        fail(c, "expected an array, got %s", type_name(v));
        pop(c, o);
        return NULL;
    }
    return v;
}

static json_t *get_object(vctx *c, json_t *obj, const char *key, bool required)
{
    json_t *v = field(c, obj, key, required);
    if (!v || (!required && json_is_null(v)))
        return NULL;
    if (!json_is_object(v)) {
        size_t o = push(c, c->path[0] ? ".%s" : "%s", key);
        fail(c, "expected an object, got %s", type_name(v));
        pop(c, o);
        return NULL;
    }
    return v;
}

/* Each array element must be an object. */
static bool element(vctx *c, json_t *arr, size_t i, const char *key, json_t **out)
{
    *out = json_array_get(arr, i);
    if (!json_is_object(*out)) {
        size_t o = push_at(c, key, i);
        fail(c, "expected an object, got %s", type_name(*out));
        pop(c, o);
        return false;
    }
    return true;
}

static void read_sites(vctx *c, json_t *arr, fbd_op *op)
{
    op->nsites = arr ? json_array_size(arr) : 0;
    fbd_site *s = alloc(c, op->nsites, sizeof *s);
    op->sites = s;
    for (size_t i = 0; i < op->nsites && !c->failed; i++) {
        json_t *e;
        if (!element(c, arr, i, "." FBR_SITES, &e))
            return;
        size_t o = push_at(c, "." FBR_SITES, i);
        s[i].site = get_str(c, e, FBR_SITE, true);
        s[i].file = get_str(c, e, FBR_FILE, false);
        s[i].module = get_str(c, e, FBR_MODULE, false);
        s[i].line = (long)get_count(c, e, FBR_LINE, false);
        s[i].python = get_bool(c, e, FBR_PYTHON);
        s[i].origin = get_str(c, e, FBR_ORIGIN, false);
        s[i].inlined_in = get_str(c, e, FBR_INLINED_IN, false);
        s[i].node = get_str(c, e, FBR_NODE, false);
        s[i].forward = get_str(c, e, FBR_FORWARD, false);
        s[i].count = get_count(c, e, FBR_COUNT, true);
        s[i].bytes = get_count(c, e, FBR_BYTES, false);
        s[i].ns = get_count(c, e, FBR_NS, false);
        s[i].max_bytes = get_count(c, e, FBR_MAX_BYTES, false);
        s[i].max_ns = get_count(c, e, FBR_MAX_NS, false);
        pop(c, o);
    }
}

static void read_shapes(vctx *c, json_t *arr, fbd_op *op)
{
    op->nshapes = arr ? json_array_size(arr) : 0;
    fbd_shape *s = alloc(c, op->nshapes, sizeof *s);
    op->shapes = s;
    for (size_t i = 0; i < op->nshapes && !c->failed; i++) {
        json_t *e;
        if (!element(c, arr, i, "." FBR_SHAPES, &e))
            return;
        size_t o = push(c, "." FBR_SHAPES "[%zu]", i);
        s[i].dtype = get_str(c, e, FBR_DTYPE, true);
        s[i].count = get_count(c, e, FBR_COUNT, true);
        s[i].has_bytes = json_object_get(e, FBR_BYTES) != NULL;
        s[i].bytes = get_count(c, e, FBR_BYTES, false);
        json_t *dims = get_array(c, e, FBR_SHAPE, true);
        s[i].ndims = dims ? json_array_size(dims) : 0;
        int64_t *dv = alloc(c, s[i].ndims, sizeof *dv);
        s[i].dims = dv;
        for (size_t k = 0; k < s[i].ndims && !c->failed; k++) {
            json_t *x = json_array_get(dims, k);
            if (!json_is_integer(x) || json_integer_value(x) < 0) {
                size_t o2 = push(c, "." FBR_SHAPE "[%zu]", k);
                fail(c, "expected a non-negative integer, got %s", type_name(x));
                pop(c, o2);
            } else {
                dv[k] = json_integer_value(x);
            }
        }
        pop(c, o);
    }
}

static void read_ops(vctx *c, json_t *root, const char *key, fbd_kind kind, bool required)
{
    json_t *arr = get_array(c, root, key, required);
    size_t n = arr ? json_array_size(arr) : 0;
    fbd_op *ops = alloc(c, n, sizeof *ops);
    c->d->ops[kind] = ops;
    c->d->nops[kind] = ops ? n : 0;
    for (size_t i = 0; i < n && !c->failed; i++) {
        json_t *e;
        if (!element(c, arr, i, key, &e))
            return;
        size_t o = push_at(c, key, i);
        ops[i].op = get_str(c, e, FBR_OP, true);
        ops[i].backend = get_str(c, e, FBR_BACKEND, false);
        if (!ops[i].backend)
            ops[i].backend = FBR_BACKEND_DEFAULT;
        ops[i].count = get_count(c, e, FBR_COUNT, true);
        ops[i].bytes = get_count(c, e, FBR_BYTES, true);
        ops[i].max_bytes = get_count(c, e, FBR_MAX_BYTES, false);
        ops[i].ns = get_count(c, e, FBR_NS, false);
        ops[i].max_ns = get_count(c, e, FBR_MAX_NS, false);
        ops[i].bytes_known = get_bool_or(c, e, FBR_BYTES_KNOWN, true);
        const char *timed = get_str(c, e, FBR_TIMED, false);
        ops[i].split_timed = timed && !strcmp(timed, FBR_TIMED_SPLIT);
        if (!ops[i].bytes_known)
            c->d->total.unknown[kind] += ops[i].count;
        read_shapes(c, get_array(c, e, FBR_SHAPES, false), &ops[i]);
        read_sites(c, get_array(c, e, FBR_SITES, false), &ops[i]);
        pop(c, o);
    }
}

/* The stacks of a backend whose rows say it times splits, not nodes (ggml), carry no time of
 * their own either: the rows say it once per backend, the stacks take it from them. */
static void mark_split_timed(fbd_dump *d)
{
    const char *timed[16];
    size_t n = 0;
    for (int k = FBD_FALLBACK; k <= FBD_HOST; k++)
        for (size_t j = 0; j < d->nops[k]; j++) {
            size_t t = 0;
            while (t < n && strcmp(timed[t], d->ops[k][j].backend))
                t++;
            if (d->ops[k][j].split_timed && t == n && n < 16)
                timed[n++] = d->ops[k][j].backend;
        }
    for (size_t i = 0; n && i < d->nstacks; i++) {
        fbd_stack *st = &d->stacks[i];
        for (size_t t = 0; t < n && (st->kind == FBD_FALLBACK || st->kind == FBD_HOST); t++)
            st->split_timed |= !strcmp(timed[t], st->backend);
    }
}

/* One frame object, validated and interned; NULL on error. */
static const fbd_frame *intern_frame(vctx *c, json_t *e)
{
    fbd_frame fr;
    memset(&fr, 0, sizeof fr); /* padding too: frames are interned bytewise */
    fr.symbol = intern(c, get_str(c, e, FBR_SYMBOL, false));
    fr.module = intern(c, get_str(c, e, FBR_MODULE, false));
    fr.file = intern(c, get_str(c, e, FBR_FILE, false));
    fr.line = (long)get_count(c, e, FBR_LINE, false);
    fr.ip = get_hex(c, e, FBR_IP, &fr.has_ip);
    fr.offset = get_hex(c, e, FBR_OFFSET, &fr.has_offset);
    fr.inlined = get_bool(c, e, FBR_INLINED);
    fr.python = get_bool(c, e, FBR_PYTHON);
    if (c->failed)
        return NULL;
    const fbd_frame *f = fbp_intern(c->d->pool, &fr, sizeof fr);
    if (!f)
        oom(c);
    return f;
}

/* A frame given as an index into "frame_table", which the shim writes after the stacks:
 * kept as an odd tagged value until the table has been read (resolve_frames). */
#define TAGGED(k) ((const fbd_frame *)(uintptr_t)(((uintptr_t)(k) << 1) | 1))
#define IS_TAGGED(p) (((uintptr_t)(p)) & 1)
#define TAG_INDEX(p) ((size_t)((uintptr_t)(p) >> 1))

/* A stack's frames are objects, or indices into the dump's "frame_table" (each distinct
 * frame written once). */
static void read_frames(vctx *c, json_t *arr, fbd_stack *st)
{
    st->nframes = json_array_size(arr);
    const fbd_frame **f = alloc(c, st->nframes, sizeof *f);
    st->frames = f;
    for (size_t i = 0; i < st->nframes && !c->failed; i++) {
        json_t *e = json_array_get(arr, i);
        size_t o = push_at(c, "." FBR_FRAMES, i);
        if (json_is_integer(e)) {
            json_int_t k = json_integer_value(e);
            if (k < 0 || (uint64_t)k > FBD_MAX_COUNT)
                fail(c, "frame index %lld is out of range", (long long)k);
            f[i] = TAGGED(k);
            c->d->tagged = true;
        } else if (!json_is_object(e)) {
            fail(c, "expected an object or a frame_table index, got %s", type_name(e));
        } else {
            f[i] = intern_frame(c, e);
        }
        pop(c, o);
    }
}

/* One element of "frame_table", parsed on its own: interned, in index order. */
static void read_table_frame(vctx *c, json_t *e, size_t i)
{
    size_t o = push_at(c, FBR_FRAME_TABLE, i);
    if (!json_is_object(e)) {
        fail(c, "expected an object, got %s", type_name(e));
    } else if (!fbr_grow(&c->table, &c->captable, c->ntable, sizeof *c->table, 256)) {
        oom(c);
    }
    const fbd_frame *f = c->failed ? NULL : intern_frame(c, e);
    if (f)
        c->table[c->ntable++] = f;
    pop(c, o);
}

/* Replaces frame_table indices with the frames they name, once the table is read. */
static void resolve_frames(vctx *c)
{
    fbd_dump *d = c->d;
    size_t n = c->ntable;
    for (size_t s = 0; s < d->nstacks && !c->failed; s++) {
        const fbd_frame **f = (const fbd_frame **)d->stacks[s].frames;
        for (size_t i = 0; i < d->stacks[s].nframes && !c->failed; i++) {
            if (!IS_TAGGED(f[i]))
                continue;
            if (TAG_INDEX(f[i]) >= n) {
                size_t o = push(c, FBR_STACKS "[%zu]." FBR_FRAMES "[%zu]", s, i);
                fail(c, "frame %zu is not in frame_table (%zu entries)", TAG_INDEX(f[i]), n);
                pop(c, o);
                return;
            }
            f[i] = c->table[TAG_INDEX(f[i])];
        }
    }
}

/* --- inline frames, each distinct text read once ---------------------------------------- */
/* Crash dumps, and dumps without frame_table, spell every frame out in every stack, and most
 * are the same few: the backend's frames and main. jansson's parse of those objects was 57% of
 * reading such a dump (perf, `report --by stack`, 200,000 stacks). So the scanner splits a
 * stack object (split_stack): its frame elements are kept as text and looked up here by their
 * exact bytes, in a direct-mapped memo of 2^16 slots (1.5 MiB: the few frames every stack
 * shares stay in it, and frames met once evict each other); a text not in the memo is read
 * by plain_frame when it is plain, and by jansson and intern_frame otherwise. */
#define MEMO_BITS 16

struct frame_text {
    const char *p; /* in the file's buffer, alive while it loads */
    size_t n;
    int line;
    const fbd_frame *f; /* the memo's frame for this text, or NULL and: */
    json_t *v;          /* jansson's parse of it (split_stack parses before anything is checked) */
};

struct memo_slot {
    const char *p;
    size_t n;
    const fbd_frame *f;
};

static size_t memo_hash(const char *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ n, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, p + i, n - i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
    return (size_t)(h ^ (h >> 29)) & (((size_t)1 << MEMO_BITS) - 1);
}

/* The frames of a split stack: the memo's frame where the same bytes were read before, else
 * the parse split_stack made, validated and interned like any frame object (and remembered). */
static void read_frame_texts(vctx *c, fbd_stack *st)
{
    st->nframes = c->nslices;
    const fbd_frame **f = alloc(c, st->nframes, sizeof *f);
    st->frames = f;
    for (size_t i = 0; i < st->nframes; i++) {
        struct frame_text *t = &c->slices[i];
        if (t->f) {
            if (f)
                f[i] = t->f;
            continue;
        }
        if (!c->failed && f) {
            size_t o = push_at(c, "." FBR_FRAMES, i);
            f[i] = intern_frame(c, t->v);
            if (f[i])
                c->memo[memo_hash(t->p, t->n)] = (struct memo_slot){t->p, t->n, f[i]};
            pop(c, o);
        }
        json_decref(t->v);
        t->v = NULL;
    }
}

/* One element of "stacks", already parsed on its own (without its frames when split). */
static void read_stack(vctx *c, json_t *e, size_t i)
{
    fbd_dump *d = c->d;
    size_t o = push_at(c, FBR_STACKS, i);
    if (!json_is_object(e)) {
        fail(c, "expected an object, got %s", type_name(e));
        pop(c, o);
        return;
    }
    if (!fbr_grow(&d->stacks, &d->capstacks, d->nstacks, sizeof *d->stacks, 64)) {
        oom(c);
        pop(c, o);
        return;
    }
    fbd_stack *st = &d->stacks[d->nstacks];
    memset(st, 0, sizeof *st);
    const char *kind = get_str(c, e, FBR_KIND, false);
    st->kind = !kind || !strcmp(kind, FBR_KIND_FALLBACK) ? FBD_FALLBACK
               : !strcmp(kind, FBR_KIND_HOST)            ? FBD_HOST
               : !strcmp(kind, FBR_KIND_TRANSFER)        ? FBD_TRANSFER
               : !strcmp(kind, FBR_KIND_SPLIT)           ? FBD_SPLIT
                                                         : FBD_NKINDS;
    if (st->kind == FBD_NKINDS)
        fail(c,
             "kind: expected \"fallback\", \"host_op\", \"transfer\" or \"split\", got "
             "\"%.40s\"",
             kind);
    st->op = intern(c, get_str(c, e, FBR_OP, false));
    st->site = intern(c, get_str(c, e, FBR_SITE, false));
    st->site_file = intern(c, get_str(c, e, FBR_FILE, false));
    st->site_line = (long)get_count(c, e, FBR_LINE, false);
    st->site_python = get_bool(c, e, FBR_PYTHON);
    st->origin = intern(c, get_str(c, e, FBR_ORIGIN, false));
    st->site_inlined_in = intern(c, get_str(c, e, FBR_INLINED_IN, false));
    st->node = intern(c, get_str(c, e, FBR_NODE, false));
    st->forward = intern(c, get_str(c, e, FBR_FORWARD, false));
    st->backend = intern(c, get_str(c, e, FBR_BACKEND, false));
    if (!st->backend)
        st->backend = FBR_BACKEND_DEFAULT;
    st->bytes_known = get_bool_or(c, e, FBR_BYTES_KNOWN, true);
    if (!st->op)
        st->op = "(unknown)";
    if (!st->site)
        st->site = "(unknown)";
    st->count = get_count(c, e, FBR_COUNT, true);
    st->bytes = get_count(c, e, FBR_BYTES, false);
    st->max_bytes = get_count(c, e, FBR_MAX_BYTES, false);
    st->ns = get_count(c, e, FBR_NS, false);
    st->max_ns = get_count(c, e, FBR_MAX_NS, false);
    if (c->split) {
        read_frame_texts(c, st);
    } else {
        json_t *frames = get_array(c, e, FBR_FRAMES, true);
        if (frames)
            read_frames(c, frames, st);
    }
    pop(c, o);
    if (!c->failed)
        d->nstacks++;
}

/* An optional top-level array of objects: each element checked to be one and handed to
 * each() at its JSON path, into a new array of n records of size bytes. */
static void *read_objects(vctx *c, json_t *root, const char *key, size_t size, size_t *n,
                          void (*each)(vctx *, json_t *, void *))
{
    json_t *arr = get_array(c, root, key, false);
    size_t len = arr ? json_array_size(arr) : 0;
    char *out = alloc(c, len, size);
    *n = out ? len : 0;
    for (size_t i = 0; out && i < len && !c->failed; i++) {
        json_t *e;
        if (!element(c, arr, i, key, &e))
            break;
        size_t o = push_at(c, key, i);
        each(c, e, out + i * size);
        pop(c, o);
    }
    return out;
}

static void read_module(vctx *c, json_t *e, void *rec)
{
    fbd_module *m = rec;
    bool has;
    m->path = get_str(c, e, FBR_PATH, true);
    m->build_id = get_str(c, e, FBR_BUILD_ID, false);
    m->base = get_hex(c, e, FBR_BASE, &has);
    m->size = get_count(c, e, FBR_SIZE, false);
}

static void read_process(vctx *c, json_t *root)
{
    fbd_process *p = &c->d->proc;
    p->rank = -1;
    json_t *o = get_object(c, root, FBR_PROCESS, true);
    if (!o)
        return;
    size_t old = push(c, FBR_PROCESS);
    p->pid = (int64_t)get_count(c, o, FBR_PID, true);
    p->exe = get_str(c, o, FBR_EXE, true);
    p->host = get_str(c, o, FBR_HOST, false);
    p->id = get_str(c, o, FBR_ID, false);
    p->parent_id = get_str(c, o, FBR_PARENT_ID, false);
    p->start_time = get_str(c, o, FBR_START_TIME, false);
    if (field(c, o, FBR_RANK, false) && !json_is_null(json_object_get(o, FBR_RANK)))
        p->rank = (long)(get_count(c, o, FBR_RANK, false) & 0x7fffffff);
    json_t *el = field(c, o, FBR_ELAPSED_NS, false);
    if (el && !json_is_null(el)) {
        p->elapsed_ns = get_count(c, o, FBR_ELAPSED_NS, false);
        p->has_elapsed = true;
    }
    get_count(c, o, FBR_PPID, false);
    json_t *argv = get_array(c, o, FBR_ARGV, false);
    json_t *a0 = argv ? json_array_get(argv, 0) : NULL;
    p->argv0 = json_is_string(a0) ? json_string_value(a0) : NULL;
    pop(c, old);
    if (!p->host)
        p->host = "";
}

static void read_total(vctx *c, json_t *root)
{
    fbd_dump *d = c->d;
    json_t *t = get_object(c, root, FBR_TOTAL, true);
    if (!t)
        return;
    size_t o = push(c, FBR_TOTAL);
    d->total.fallbacks = get_count(c, t, FBR_FALLBACKS, true);
    d->total.bytes = get_count(c, t, FBR_BYTES, true);
    d->total.host_ops = get_count(c, t, FBR_HOST_OPS, true);
    d->total.max_bytes = get_count(c, t, FBR_MAX_BYTES, false);
    d->total.host_bytes = get_count(c, t, FBR_HOST_BYTES, false);
    json_t *ns = field(c, t, FBR_NS, false);
    d->has_time = ns && !json_is_null(ns);
    d->total.ns = get_count(c, t, FBR_NS, false);
    d->total.host_ns = get_count(c, t, FBR_HOST_NS, false);
    d->total.transfers = get_count(c, t, FBR_TRANSFERS, false);
    d->total.transfer_bytes = get_count(c, t, FBR_TRANSFER_BYTES, false);
    d->total.transfer_ns = get_count(c, t, FBR_TRANSFER_NS, false);
    d->total.splits = get_count(c, t, FBR_SPLITS, false);
    d->total.split_bytes = get_count(c, t, FBR_SPLIT_BYTES, false);
    d->total.split_ns = get_count(c, t, FBR_SPLIT_NS, false);
    get_count(c, t, FBR_STACKS, false);
    pop(c, o);
}

static void read_counters(vctx *c, json_t *obj, const char *key, fbd_counters *out)
{
    json_t *b = get_object(c, obj, key, false);
    if (!b)
        return;
    size_t o = push(c, c->path[0] ? ".%s" : "%s", key);
    out->present = true;
    out->native = get_count(c, b, FBR_NATIVE, true);
    out->fallback = get_count(c, b, FBR_FALLBACK, true);
    out->host = get_count(c, b, FBR_HOSTCOUNT, true);
    pop(c, o);
}

/* An array of strings at obj.key (absent or null: *n = 0); its strings stay in the tree. */
static const char **read_names(vctx *c, json_t *obj, const char *key, size_t *n)
{
    json_t *arr = get_array(c, obj, key, false);
    *n = arr ? json_array_size(arr) : 0;
    const char **names = *n ? alloc(c, *n, sizeof *names) : NULL;
    for (size_t i = 0; names && i < *n && !c->failed; i++) {
        json_t *s = json_array_get(arr, i);
        if (!json_is_string(s)) {
            size_t o = push(c, c->path[0] ? ".%s[%zu]" : "%s[%zu]", key, i);
            fail(c, "expected a string, got %s", type_name(s));
            pop(c, o);
        } else {
            names[i] = json_string_value(s);
        }
    }
    if (!names)
        *n = 0;
    return names;
}

static void read_config(vctx *c, json_t *root)
{
    fbd_dump *d = c->d;
    json_t *cfg = get_object(c, root, FBR_CONFIG, false);
    if (cfg) {
        size_t o = push(c, FBR_CONFIG);
        d->timing = get_str(c, cfg, FBR_TIMING, false);
        d->prefixes = read_names(c, cfg, FBR_OP_PREFIX, &d->nprefixes);
        d->py_backends = read_names(c, cfg, FBR_PY_BACKEND, &d->npy_backends);
        d->cfg_backends = read_names(c, cfg, FBR_BACKENDS, &d->ncfg_backends);
        pop(c, o);
    }
    if (!d->nprefixes) {
        d->prefixes = default_prefixes;
        d->nprefixes = 1;
    }
    if (!d->npy_backends) {
        d->py_backends = default_py_backends;
        d->npy_backends = 1;
    }
}

/* backends[]: one object per backend the process used. */
static void read_backend(vctx *c, json_t *e, void *rec)
{
    fbd_backend *b = rec;
    b->name = get_str(c, e, FBR_NAME, true);
    b->source = get_str(c, e, FBR_SOURCE, false);
    b->descriptor = get_str(c, e, FBR_DESCRIPTOR, false);
    get_str(c, e, FBR_READER, false);
    b->modules = read_names(c, e, FBR_MODULES, &b->nmodules);
    read_counters(c, e, FBR_COUNTERS, &b->counters);
}

static void read_header(vctx *c, json_t *root)
{
    fbd_dump *d = c->d;
    const char *schema = get_str(c, root, FBR_SCHEMA, true);
    if (schema && strcmp(schema, FBR_SCHEMA_V1)) {
        size_t o = push(c, FBR_SCHEMA);
        fail(c, "unsupported schema \"%.40s\" (this reader knows fbcount/1)", schema);
        pop(c, o);
    }
    d->reason = get_str(c, root, FBR_REASON, true);
    d->seq = get_count(c, root, FBR_SEQ, true);
    d->time = get_str(c, root, FBR_TIME, false);
    if (!d->time)
        d->time = "";
    d->attached_at = get_str(c, root, FBR_ATTACHED_AT, false);
    read_process(c, root);
    d->signal = (int)(get_count(c, root, FBR_SIGNAL, false) & 0xff);
    d->signal_name = get_str(c, root, FBR_SIGNAL_NAME, false);
    json_t *sym = field(c, root, FBR_SYMBOLIZED, false);
    d->symbolized = true;
    if (sym && !json_is_boolean(sym))
        fail(c, "symbolized: expected a boolean, got %s", type_name(sym));
    else if (sym)
        d->symbolized = json_is_true(sym);
    read_total(c, root);
    read_counters(c, root, FBR_BACKEND, &d->backend);
    read_config(c, root);
}

/* --- the scanner: top-level keys and the stacks array ------------------------------------ */

typedef struct {
    const char *b;
    size_t len, pos;
    int line;
} scan;

static bool json_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static void skip_space(scan *s)
{
    while (s->pos < s->len && json_space(s->b[s->pos])) {
        if (s->b[s->pos] == '\n')
            s->line++;
        s->pos++;
    }
}

static void truncated(vctx *c, const scan *s)
{
    if (c->failed)
        return;
    c->failed = true;
    snprintf(c->err, c->errlen,
             "%s: line %d: truncated dump (the file ends inside the "
             "top-level object); the writer probably died while writing it",
             c->d->path, s->line);
}

static void syntax(vctx *c, const scan *s, const char *what)
{
    if (c->failed)
        return;
    c->failed = true;
    snprintf(c->err, c->errlen, "%s: line %d: not valid JSON: %s", c->d->path, s->line, what);
}

/* Finds the end of the value at s->pos without parsing it (jansson parses the slice
 * afterwards): strings, brackets and the end of a scalar. Leaves s->pos at the end.
 * false on a value that runs into the end of the file, or that nests too deeply. */
static bool skip_value_within(vctx *c, scan *s, size_t max_depth)
{
    size_t depth = 0, i = s->pos;
    const char *b = s->b;
    while (i < s->len) {
        char ch = b[i];
        if (ch == '"') {
            for (i++; i < s->len && b[i] != '"'; i++) {
                if (b[i] == '\\')
                    i++;
                else if (b[i] == '\n')
                    s->line++;
            }
            if (i >= s->len) {
                i = s->len; /* a backslash as the last byte stepped past the end */
                break;
            }
            i++;
            if (depth == 0) {
                s->pos = i;
                return true;
            }
            continue;
        }
        if (ch == '{' || ch == '[') {
            if (++depth > max_depth) {
                c->failed = true;
                snprintf(c->err, c->errlen,
                         "%s: line %d: nested too deeply (more than %d "
                         "levels)",
                         c->d->path, s->line, JSON_PARSER_MAX_DEPTH);
                return false;
            }
        } else if (ch == '}' || ch == ']') {
            if (depth == 0)
                break; /* the end of a scalar, at its container's closing bracket */
            if (--depth == 0) {
                s->pos = i + 1;
                return true;
            }
        } else if (depth == 0 && (ch == ',' || ch == ':' || json_space(ch))) {
            break;
        }
        if (ch == '\n')
            s->line++;
        i++;
    }
    if (i >= s->len && depth > 0) {
        truncated(c, s);
        return false;
    }
    s->pos = i;
    return true;
}

static bool skip_value(vctx *c, scan *s)
{
    return skip_value_within(c, s, JSON_PARSER_MAX_DEPTH);
}

/* Parses the value at s->pos with jansson; NULL (with the error set) when it is not JSON. */
static json_t *parse_value(vctx *c, scan *s)
{
    size_t start = s->pos;
    int line = s->line;
    if (start >= s->len) {
        truncated(c, s);
        return NULL;
    }
    if (!skip_value(c, s))
        return NULL;
    if (s->pos == start) {
        syntax(c, s, "a value was expected");
        return NULL;
    }
    json_error_t e;
    json_t *v = json_loadb(s->b + start, s->pos - start, FBD_JSON_FLAGS, &e);
    if (!v && !c->failed) {
        c->failed = true;
        int at = line + (e.line > 0 ? e.line - 1 : 0);
        if (json_error_code(&e) == json_error_out_of_memory) {
            c->nomem = true;
            snprintf(c->err, c->errlen, "%s: out of memory while parsing", c->d->path);
        } else if (json_error_code(&e) == json_error_stack_overflow)
            snprintf(c->err, c->errlen, "%s: line %d: nested too deeply (more than %d levels)",
                     c->d->path, at, JSON_PARSER_MAX_DEPTH);
        else if (json_error_code(&e) == json_error_premature_end_of_input && s->pos == s->len)
            snprintf(c->err, c->errlen,
                     "%s: line %d: truncated dump (%s); the writer probably "
                     "died while writing it",
                     c->d->path, at, e.text);
        else
            snprintf(c->err, c->errlen, "%s: line %d: not valid JSON: %s", c->d->path, at, e.text);
    }
    return v;
}

/* Expects ch (after blanks); the file ending first is a truncated dump. */
static bool expect_char(vctx *c, scan *s, char ch, const char *what)
{
    skip_space(s);
    if (s->pos >= s->len) {
        truncated(c, s);
        return false;
    }
    if (s->b[s->pos] != ch) {
        syntax(c, s, what);
        return false;
    }
    s->pos++;
    return true;
}

static bool rest_put(vctx *c, size_t *n, const char *p, size_t len)
{
    if (*n + len + 1 > c->caprest) {
        size_t cap = c->caprest ? c->caprest : 1024;
        while (cap < *n + len + 1)
            cap *= 2;
        char *r = realloc(c->rest, cap);
        if (!r) {
            oom(c);
            return false;
        }
        c->rest = r;
        c->caprest = cap;
    }
    memcpy(c->rest + *n, p, len);
    *n += len;
    return true;
}

/* The elements of a stack's "frames" array at s->pos ('['), kept as text in c->slices.
 * false when an element is not an object (frame_table indices: the stack is read whole, and
 * so are the stacks after it) or the array is not well formed (jansson then says why). */
static bool split_frames(vctx *c, scan *s)
{
    s->pos++;
    skip_space(s);
    if (s->pos < s->len && s->b[s->pos] == ']') {
        s->pos++;
        return true;
    }
    for (;;) {
        skip_space(s);
        size_t e = s->pos;
        if (e >= s->len || s->b[e] != '{') {
            c->no_split = e < s->len && (s->b[e] == '-' || (s->b[e] >= '0' && s->b[e] <= '9'));
            return false;
        }
        int line = s->line;
        /* Within the whole stack a frame's object sits two levels down (the stack, frames). */
        if (!skip_value_within(c, s, JSON_PARSER_MAX_DEPTH - 2))
            return false;
        if (!fbr_grow(&c->slices, &c->capslices, c->nslices, sizeof *c->slices, 64)) {
            oom(c);
            return false;
        }
        c->slices[c->nslices++] = (struct frame_text){s->b + e, s->pos - e, line, NULL, NULL};
        skip_space(s);
        if (s->pos >= s->len)
            return false;
        char ch = s->b[s->pos++];
        if (ch == ']')
            return true;
        if (ch != ',')
            return false;
    }
}

/* A frame text the memo lacks, read without jansson where it is plain: a flat object of the
 * members a frame has, each once, strings of printable ASCII without escapes, lines as plain
 * integers, ip and offset as up to 16 hex digits. That is every frame the shim writes; jansson
 * parsing them was a fifth of `fbcount symbolize` on a crash dump of 100,000 distinct ops.
 * Any other text returns false (c->failed set only when memory ran out) and goes to jansson
 * and intern_frame, which accept the same values and say what is wrong with the rest. */
static const char *const frame_keys[] = {FBR_SYMBOL, FBR_MODULE, FBR_FILE,    FBR_LINE,
                                         FBR_IP,     FBR_OFFSET, FBR_INLINED, FBR_PYTHON};
enum { F_SYMBOL, F_MODULE, F_FILE, F_LINE, F_IP, F_OFFSET, F_INLINED, F_PYTHON, F_N };

static const char *blanks(const char *p, const char *end)
{
    while (p < end && json_space(*p))
        p++;
    return p;
}

/* The string at p, its bytes at *s (*len of them) when plain; just past it, or NULL. */
static const char *plain_string(const char *p, const char *end, const char **s, size_t *len)
{
    if (p >= end || *p != '"')
        return NULL;
    const char *q = ++p;
    while (q < end && *q != '"') {
        if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e || *q == '\\')
            return NULL;
        q++;
    }
    if (q >= end)
        return NULL;
    *s = p;
    *len = (size_t)(q - p);
    return q + 1;
}

static bool literal(const char **p, const char *end, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(end - *p) < n || memcmp(*p, word, n))
        return false;
    *p += n;
    return true;
}

/* One member's value at *p into fr; false when it is not plain. */
static bool plain_value(vctx *c, int f, const char **pp, const char *end, fbd_frame *fr)
{
    const char *p = *pp, *s;
    size_t n;
    if (literal(pp, end, "null")) /* as absent: every member of a frame is optional */
        return true;
    if (f == F_INLINED || f == F_PYTHON) {
        bool *to = f == F_INLINED ? &fr->inlined : &fr->python;
        return (*to = literal(pp, end, "true")) || literal(pp, end, "false");
    }
    if (f == F_LINE) {
        uint64_t v = 0;
        const char *q = p;
        for (; q < end && *q >= '0' && *q <= '9' && q - p < 16; q++)
            v = v * 10 + (uint64_t)(*q - '0');
        if (q == p || (*p == '0' && q - p > 1) || v > FBD_MAX_COUNT ||
            (q < end && ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E')))
            return false;
        fr->line = (long)v;
        *pp = q;
        return true;
    }
    if (!(p = plain_string(p, end, &s, &n)))
        return false;
    *pp = p;
    if (f == F_IP || f == F_OFFSET) {
        uint64_t v = 0;
        if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x')
            return false;
        for (size_t i = 2; i < n; i++) {
            int d = s[i] >= '0' && s[i] <= '9'   ? s[i] - '0'
                    : s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10
                    : s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 10
                                                 : -1;
            if (d < 0)
                return false;
            v = v << 4 | (uint64_t)d;
        }
        *(f == F_IP ? &fr->ip : &fr->offset) = v;
        *(f == F_IP ? &fr->has_ip : &fr->has_offset) = true;
        return true;
    }
    const char *in = fbp_str(c->d->pool, s, n);
    if (!in)
        oom(c);
    *(f == F_SYMBOL ? &fr->symbol : f == F_MODULE ? &fr->module : &fr->file) = in;
    return in != NULL;
}

static bool plain_frame(vctx *c, const char *p, size_t n, fbd_frame *fr)
{
    const char *end = p + n;
    unsigned seen = 0;
    memset(fr, 0, sizeof *fr); /* padding too: frames are interned bytewise */
    p = blanks(p + 1, end);
    if (p < end && *p == '}')
        return blanks(p + 1, end) == end;
    for (;;) {
        const char *k;
        size_t kn;
        int f = 0;
        if (!(p = plain_string(p, end, &k, &kn)))
            return false;
        while (f < F_N && (strlen(frame_keys[f]) != kn || memcmp(frame_keys[f], k, kn)))
            f++;
        if (f == F_N || (seen & 1u << f))
            return false; /* another member, or a duplicate: jansson's to read or refuse */
        seen |= 1u << f;
        p = blanks(p, end);
        if (p >= end || *p != ':')
            return false;
        p = blanks(p + 1, end);
        if (!plain_value(c, f, &p, end, fr))
            return false;
        p = blanks(p, end);
        if (p < end && *p == ',') {
            p = blanks(p + 1, end);
            continue;
        }
        return p < end && *p == '}' && blanks(p + 1, end) == end;
    }
}

/* Drops the parses of c->slices[0, upto). */
static void drop_parses(vctx *c, size_t upto)
{
    for (size_t j = 0; j < upto; j++) {
        json_decref(c->slices[j].v);
        c->slices[j].v = NULL;
    }
}

/* Every frame text of c->slices the memo lacks, parsed before anything of its stack is
 * checked: 1 when all are read; 0 when one is not JSON (the stack goes to jansson whole, whose
 * error it is to name); -1 on memory (c->failed). On 0 and -1 the parses made are dropped. */
static int parse_frame_texts(vctx *c)
{
    for (size_t i = 0; i < c->nslices; i++) {
        struct frame_text *t = &c->slices[i];
        const struct memo_slot *m = &c->memo[memo_hash(t->p, t->n)];
        t->f = m->f && m->n == t->n && !memcmp(m->p, t->p, t->n) ? m->f : NULL;
        fbd_frame fr;
        if (!t->f && plain_frame(c, t->p, t->n, &fr)) {
            if (!(t->f = fbp_intern(c->d->pool, &fr, sizeof fr)))
                oom(c);
            else
                c->memo[memo_hash(t->p, t->n)] = (struct memo_slot){t->p, t->n, t->f};
        }
        if (c->failed) {
            drop_parses(c, i);
            return -1;
        }
        t->v = t->f ? NULL : json_loadb(t->p, t->n, FBD_JSON_FLAGS, NULL);
        if (!t->f && !t->v) {
            drop_parses(c, i);
            return 0;
        }
    }
    return 1;
}

/* A stack object at s->pos ('{') split at the text level: its "frames" elements into
 * c->slices (read by read_frame_texts), the other members parsed by jansson as an object of
 * their own. NULL with c->split false and s->pos back at the start when the stack is to be
 * read whole instead: frames that are indices, no frames array, or text that is not well
 * formed (jansson's parse of the whole then names the error). NULL with c->failed on an error
 * the scanner itself reports (truncation, nesting, memory). */
static json_t *split_stack(vctx *c, scan *s)
{
    size_t start = s->pos, n = 0;
    int line = s->line;
    c->nslices = 0;
    c->split = false;
    if (!c->memo && !(c->memo = calloc((size_t)1 << MEMO_BITS, sizeof *c->memo))) {
        oom(c);
        return NULL;
    }
    bool frames = false;
    s->pos++;
    for (bool first = true;; first = false) {
        skip_space(s);
        if (s->pos < s->len && s->b[s->pos] == '}') {
            s->pos++;
            break;
        }
        if (!first) {
            if (s->pos >= s->len || s->b[s->pos] != ',')
                goto whole;
            s->pos++;
            skip_space(s);
        }
        size_t k = s->pos;
        if (k >= s->len || s->b[k] != '"' || !skip_value(c, s))
            goto whole;
        size_t kend = s->pos;
        skip_space(s);
        if (s->pos >= s->len || s->b[s->pos] != ':')
            goto whole;
        s->pos++;
        skip_space(s);
        if (kend - k == sizeof FBR_FRAMES + 1 &&
            !memcmp(s->b + k + 1, FBR_FRAMES, sizeof FBR_FRAMES - 1) && s->pos < s->len &&
            s->b[s->pos] == '[') {
            if (frames || !split_frames(c, s))
                goto whole;
            frames = true;
            continue;
        }
        size_t v = s->pos;
        if (!skip_value(c, s) || s->pos == v)
            goto whole;
        if (!rest_put(c, &n, n ? "," : "{", 1) || !rest_put(c, &n, s->b + k, kend - k) ||
            !rest_put(c, &n, ":", 1) || !rest_put(c, &n, s->b + v, s->pos - v))
            return NULL;
    }
    if (!frames || !rest_put(c, &n, n ? "}" : "{}", n ? 1 : 2))
        goto whole;
    json_t *rest = json_loadb(c->rest, n, FBD_JSON_FLAGS, NULL);
    if (!rest)
        goto whole;
    if (json_object_get(rest, FBR_FRAMES)) { /* spelled with escapes: jansson names the duplicate */
        json_decref(rest);
        goto whole;
    }
    int parsed = parse_frame_texts(c);
    if (parsed <= 0) {
        json_decref(rest);
        if (parsed < 0)
            return NULL;
        goto whole;
    }
    c->split = true;
    return rest;
whole:
    if (c->failed)
        return NULL;
    s->pos = start;
    s->line = line;
    return NULL;
}

/* Streams the array `key` element by element, each parsed on its own and given to each():
 * a million stacks, or frames, never stand in memory as one JSON tree. */
static void stream_array(vctx *c, scan *s, const char *key, void (*each)(vctx *, json_t *, size_t))
{
    skip_space(s);
    if (s->pos < s->len && s->b[s->pos] != '[') {
        json_t *v = parse_value(c, s);
        if (v)
            fail(c, "%s: expected an array, got %s", key, type_name(v));
        json_decref(v);
        return;
    }
    if (!expect_char(c, s, '[', "'[' expected"))
        return;
    skip_space(s);
    if (s->pos < s->len && s->b[s->pos] == ']') {
        s->pos++;
        return;
    }
    bool stacks = each == read_stack;
    for (size_t i = 0; !c->failed; i++) {
        skip_space(s);
        json_t *e = NULL;
        c->split = false;
        if (stacks && !c->no_split && s->pos < s->len && s->b[s->pos] == '{')
            e = split_stack(c, s);
        if (!e && !c->failed)
            e = parse_value(c, s);
        if (!e)
            return;
        each(c, e, i);
        json_decref(e);
        for (size_t j = 0; c->split && j < c->nslices; j++) { /* what a failed stack left unread */
            json_decref(c->slices[j].v);
            c->slices[j].v = NULL;
        }
        skip_space(s);
        if (s->pos >= s->len) {
            truncated(c, s);
            return;
        }
        char ch = s->b[s->pos++];
        if (ch == ']')
            return;
        if (ch != ',') {
            s->pos--;
            char what[64];
            snprintf(what, sizeof what, "',' or ']' expected in %s", key);
            syntax(c, s, what);
            return;
        }
    }
}

/* Walks the top-level object: each value but "stacks" and "frame_table" is parsed whole and
 * kept in d->root; those two are streamed element by element. */
static void scan_top(vctx *c, const char *buf, size_t len)
{
    fbd_dump *d = c->d;
    scan s = {buf, len, 0, 1};
    skip_space(&s);
    if (s.pos < len && buf[s.pos] != '{') {
        json_t *v = parse_value(c, &s);
        if (v)
            fail(c, "not a dump: the top level is %s, expected an object", type_name(v));
        json_decref(v);
        return;
    }
    if (!expect_char(c, &s, '{', "'{' expected"))
        return;
    if (!(d->root = json_object())) {
        oom(c);
        return;
    }
    for (bool first = true; !c->failed; first = false) {
        skip_space(&s);
        if (s.pos >= len) {
            truncated(c, &s);
            return;
        }
        if (buf[s.pos] == '}') {
            s.pos++;
            skip_space(&s);
            if (s.pos < len)
                syntax(c, &s, "end of file expected after the top-level object");
            return;
        }
        if (!first && !expect_char(c, &s, ',', "',' or '}' expected"))
            return;
        skip_space(&s);
        if (s.pos < len && buf[s.pos] != '"') {
            syntax(c, &s, "string or '}' expected");
            return;
        }
        json_t *k = parse_value(c, &s);
        if (!k)
            return;
        if (!json_is_string(k)) {
            json_decref(k);
            syntax(c, &s, "string or '}' expected");
            return;
        }
        char key[128];
        snprintf(key, sizeof key, "%s", json_string_value(k));
        bool dup = json_object_get(d->root, key) != NULL ||
                   (!strcmp(key, FBR_STACKS) && d->seen_stacks) ||
                   (!strcmp(key, FBR_FRAME_TABLE) && d->seen_table);
        json_decref(k);
        if (dup) {
            syntax(c, &s, "duplicate object key");
            return;
        }
        if (!expect_char(c, &s, ':', "':' expected"))
            return;
        skip_space(&s);
        if (!strcmp(key, FBR_STACKS)) {
            d->seen_stacks = true;
            stream_array(c, &s, FBR_STACKS, read_stack);
            continue;
        }
        if (!strcmp(key, FBR_FRAME_TABLE)) {
            d->seen_table = true;
            stream_array(c, &s, FBR_FRAME_TABLE, read_table_frame);
            continue;
        }
        json_t *v = parse_value(c, &s);
        if (!v)
            return;
        if (json_object_set_new(d->root, key, v) != 0)
            oom(c);
    }
}

static fbd_dump *new_dump(const char *name, fbd_status *st, char *err, size_t errlen)
{
    fbd_dump *d = calloc(1, sizeof *d);
    if (d) {
        d->path = strdup(name);
        d->pool = fbp_new();
    }
    if (!d || !d->path || !d->pool) {
        if (d) {
            free(d->path);
            fbp_free(d->pool);
        }
        free(d);
        *st = FBD_ENOMEM;
        snprintf(err, errlen, "%s: out of memory", name);
        return NULL;
    }
    return d;
}

fbd_dump *fbd_load_buffer(const char *buf, size_t len, const char *name, fbd_status *st, char *err,
                          size_t errlen)
{
    fbd_dump *d = new_dump(name, st, err, errlen);
    if (!d)
        return NULL;
    *st = FBD_EINVALID;
    if (len == 0) {
        snprintf(err, errlen, "%s: empty file, not a dump", name);
        fbd_free(d);
        return NULL;
    }
    if (len > FBD_MAX_FILE_BYTES) {
        snprintf(err, errlen, "%s: %zu bytes is larger than the %zu MiB a dump may have", name, len,
                 FBD_MAX_FILE_BYTES >> 20);
        fbd_free(d);
        return NULL;
    }
    vctx c = {.d = d, .err = err, .errlen = errlen};
    scan_top(&c, buf, len);
    if (!c.failed) {
        json_t *root = d->root;
        read_header(&c, root);
        read_ops(&c, root, FBR_OPS, FBD_FALLBACK, true);
        read_ops(&c, root, FBR_HOST_OPS, FBD_HOST, true);
        read_ops(&c, root, FBR_TRANSFERS, FBD_TRANSFER, false);
        read_ops(&c, root, FBR_SPLITS, FBD_SPLIT, false);
        if (!c.failed) /* a row read halfway has no backend yet */
            mark_split_timed(d);
        d->backends =
            read_objects(&c, root, FBR_BACKENDS, sizeof *d->backends, &d->nbackends, read_backend);
        if (!d->seen_stacks)
            field(&c, root, FBR_STACKS, true);
        if (d->tagged)
            resolve_frames(&c);
        d->modules =
            read_objects(&c, root, FBR_MODULES, sizeof *d->modules, &d->nmodules, read_module);
    }
    free(c.table);
    free(c.slices);
    free(c.memo);
    free(c.rest);
    if (c.failed) {
        *st = c.nomem ? FBD_ENOMEM : FBD_EINVALID;
        fbd_free(d);
        return NULL;
    }
    *st = FBD_OK;
    return d;
}

fbd_dump *fbd_load_file(const char *path, fbd_status *st, char *err, size_t errlen)
{
    size_t len = 0;
    char *buf = fbr_read_file(path, FBD_MAX_FILE_BYTES, &len);
    if (!buf) {
        int e = errno;
        char why[128];
        /* Too large is a property of the content, like an invalid dump, not a failed read. */
        *st = e == EFBIG ? FBD_EINVALID : e == ENOMEM ? FBD_ENOMEM : FBD_EREAD;
        if (e == ENOENT || e == EACCES || e == ELOOP || e == ENOTDIR)
            snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
        else if (e == EFBIG)
            snprintf(err, errlen, "%s: larger than the %zu MiB a dump may have", path,
                     FBD_MAX_FILE_BYTES >> 20);
        else
            snprintf(err, errlen, "%s: %s", path,
                     fbr_read_error(e, FBD_MAX_FILE_BYTES, why, sizeof why));
        return NULL;
    }
    fbd_dump *d = fbd_load_buffer(buf, len, path, st, err, errlen);
    free(buf);
    return d;
}

void fbd_free(fbd_dump *d)
{
    if (!d)
        return;
    json_decref(d->root);
    fbp_free(d->pool);
    free(d->stacks);
    free(d->path);
    free(d);
}

const char *fbd_path(const fbd_dump *d)
{
    return d->path;
}
const char *fbd_reason(const fbd_dump *d)
{
    return d->reason;
}
const char *fbd_exe(const fbd_dump *d)
{
    return d->proc.exe;
}
const char *fbd_host(const fbd_dump *d)
{
    return d->proc.host;
}
const char *fbd_time(const fbd_dump *d)
{
    return d->time;
}
const char *fbd_attached_at(const fbd_dump *d)
{
    return d->attached_at;
}
int64_t fbd_pid(const fbd_dump *d)
{
    return d->proc.pid;
}
uint64_t fbd_seq(const fbd_dump *d)
{
    return d->seq;
}
const fbd_process *fbd_proc(const fbd_dump *d)
{
    return &d->proc;
}
int fbd_signal(const fbd_dump *d)
{
    return d->signal;
}
bool fbd_symbolized(const fbd_dump *d)
{
    return d->symbolized;
}
fbd_total fbd_totals(const fbd_dump *d)
{
    return d->total;
}
fbd_counters fbd_backend_stats(const fbd_dump *d)
{
    return d->backend;
}
bool fbd_has_time(const fbd_dump *d)
{
    return d->has_time;
}
const char *fbd_timing(const fbd_dump *d)
{
    return d->timing;
}
json_t *fbd_json(fbd_dump *d)
{
    return d->root;
}

const char *fbd_signal_name(const fbd_dump *d)
{
    if (d->signal_name)
        return d->signal_name;
    return d->signal ? fbr_signal_name(d->signal) : "";
}

const char *const *fbd_op_prefixes(const fbd_dump *d, size_t *n)
{
    *n = d->nprefixes;
    return d->prefixes;
}

const char *const *fbd_py_backends(const fbd_dump *d, size_t *n)
{
    *n = d->npy_backends;
    return d->py_backends;
}

const fbd_backend *fbd_backends(const fbd_dump *d, size_t *n)
{
    *n = d->nbackends;
    return d->backends;
}

const fbd_op *fbd_ops(const fbd_dump *d, fbd_kind kind, size_t *n)
{
    *n = d->nops[kind];
    return d->ops[kind];
}

const fbd_stack *fbd_stacks(const fbd_dump *d, size_t *n)
{
    *n = d->nstacks;
    return d->stacks;
}

const fbd_module *fbd_modules(const fbd_dump *d, size_t *n)
{
    *n = d->nmodules;
    return d->modules;
}

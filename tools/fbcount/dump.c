/* dump.c - load and validate one fbcount/1 dump with jansson.
 *
 * Strings point into the jansson document, which the dump keeps alive; arrays of rows are
 * allocated once per array and recorded so fbd_free() can release them. Validation errors
 * carry a JSON path ("ops[2].count") because jansson keeps no line numbers for values.
 */
#include "dump.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

struct fbd_dump {
    char *path;
    json_t *root;
    void **allocs;
    size_t nallocs, capallocs;

    const char *reason, *exe, *host, *time;
    int64_t pid;
    uint64_t seq;
    int signal;
    bool symbolized;
    fbd_total total;
    fbd_backend backend;
    const char **prefixes;
    size_t nprefixes;
    fbd_op *ops[2];
    size_t nops[2];
    fbd_stack *stacks;
    size_t nstacks;
    fbd_module *modules;
    size_t nmodules;
};

static const char *default_prefixes[] = {"vkt_"};

/* Validation context: the JSON path being checked and the first error met. */
typedef struct {
    fbd_dump *d;
    char path[256];
    char *err;
    size_t errlen;
    bool failed;
} vctx;

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

static void *alloc(vctx *c, size_t n, size_t size)
{
    if (c->failed)
        return NULL;
    if (n == 0)
        n = 1;
    fbd_dump *d = c->d;
    if (d->nallocs == d->capallocs) {
        size_t cap = d->capallocs ? d->capallocs * 2 : 16;
        void **p = realloc(d->allocs, cap * sizeof *p);
        if (!p) {
            fail(c, "out of memory");
            return NULL;
        }
        d->allocs = p;
        d->capallocs = cap;
    }
    void *p = calloc(n, size);
    if (!p) {
        fail(c, "out of memory");
        return NULL;
    }
    d->allocs[d->nallocs++] = p;
    return p;
}

/* Push a path component; returns the old length so pop() can restore it. */
static size_t push(vctx *c, const char *fmt, ...)
{
    size_t old = strlen(c->path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->path + old, sizeof c->path - old, fmt, ap);
    va_end(ap);
    return old;
}

static void pop(vctx *c, size_t old) { c->path[old] = '\0'; }

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

static uint64_t get_count(vctx *c, json_t *obj, const char *key, bool required)
{
    json_t *v = field(c, obj, key, required);
    if (!v || (!required && json_is_null(v)))
        return 0;
    size_t o = push(c, c->path[0] ? ".%s" : "%s", key);
    uint64_t r = 0;
    if (!json_is_integer(v))
        fail(c, "expected a non-negative integer, got %s", type_name(v));
    else if (json_integer_value(v) < 0)
        fail(c, "negative value %lld", (long long)json_integer_value(v));
    else if ((uint64_t)json_integer_value(v) > FBD_MAX_COUNT)
        fail(c, "value %lld exceeds 2^53", (long long)json_integer_value(v));
    else
        r = (uint64_t)json_integer_value(v);
    pop(c, o);
    return r;
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

/* Each array element must be an object; the callback fills one row. */
static bool element(vctx *c, json_t *arr, size_t i, const char *key, json_t **out)
{
    *out = json_array_get(arr, i);
    if (!json_is_object(*out)) {
        size_t o = push(c, "%s[%zu]", key, i);
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
        if (!element(c, arr, i, ".sites", &e))
            return;
        size_t o = push(c, ".sites[%zu]", i);
        s[i].site = get_str(c, e, "site", true);
        s[i].file = get_str(c, e, "file", false);
        s[i].module = get_str(c, e, "module", false);
        s[i].line = (long)get_count(c, e, "line", false);
        s[i].count = get_count(c, e, "count", true);
        s[i].bytes = get_count(c, e, "bytes", false);
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
        if (!element(c, arr, i, ".shapes", &e))
            return;
        size_t o = push(c, ".shapes[%zu]", i);
        s[i].dtype = get_str(c, e, "dtype", true);
        s[i].count = get_count(c, e, "count", true);
        json_t *dims = get_array(c, e, "shape", true);
        s[i].ndims = dims ? json_array_size(dims) : 0;
        int64_t *dv = alloc(c, s[i].ndims, sizeof *dv);
        s[i].dims = dv;
        for (size_t k = 0; k < s[i].ndims && !c->failed; k++) {
            json_t *x = json_array_get(dims, k);
            if (!json_is_integer(x) || json_integer_value(x) < 0) {
                size_t o2 = push(c, ".shape[%zu]", k);
                fail(c, "expected a non-negative integer, got %s", type_name(x));
                pop(c, o2);
            } else {
                dv[k] = json_integer_value(x);
            }
        }
        pop(c, o);
    }
}

static void read_ops(vctx *c, json_t *root, const char *key, fbd_kind kind)
{
    json_t *arr = get_array(c, root, key, true);
    size_t n = arr ? json_array_size(arr) : 0;
    fbd_op *ops = alloc(c, n, sizeof *ops);
    c->d->ops[kind] = ops;
    c->d->nops[kind] = n;
    for (size_t i = 0; i < n && !c->failed; i++) {
        json_t *e;
        if (!element(c, arr, i, key, &e))
            return;
        size_t o = push(c, "%s[%zu]", key, i);
        ops[i].op = get_str(c, e, "op", true);
        ops[i].count = get_count(c, e, "count", true);
        ops[i].bytes = get_count(c, e, "bytes", true);
        ops[i].max_bytes = get_count(c, e, "max_bytes", false);
        read_shapes(c, get_array(c, e, "shapes", false), &ops[i]);
        read_sites(c, get_array(c, e, "sites", false), &ops[i]);
        pop(c, o);
    }
}

/* A stack's frames are objects, or indices into the dump's "frame_table" (each distinct frame
 * written once): an index is read as the object it names. */
static void read_frames(vctx *c, json_t *arr, fbd_stack *st, json_t *table)
{
    st->nframes = json_array_size(arr);
    fbd_frame *f = alloc(c, st->nframes, sizeof *f);
    st->frames = f;
    for (size_t i = 0; i < st->nframes && !c->failed; i++) {
        json_t *e = json_array_get(arr, i);
        size_t o = push(c, ".frames[%zu]", i);
        if (json_is_integer(e)) {
            json_int_t k = json_integer_value(e);
            if (!table || k < 0 || (size_t)k >= json_array_size(table)) {
                fail(c, "frame %lld is not in frame_table (%zu entries)", (long long)k,
                     table ? json_array_size(table) : 0);
                return;
            }
            e = json_array_get(table, (size_t)k);
        }
        if (!json_is_object(e)) {
            fail(c, "expected an object or a frame_table index, got %s", type_name(e));
            return;
        }
        f[i].symbol = get_str(c, e, "symbol", false);
        f[i].module = get_str(c, e, "module", false);
        f[i].file = get_str(c, e, "file", false);
        f[i].line = (long)get_count(c, e, "line", false);
        f[i].ip = get_hex(c, e, "ip", &f[i].has_ip);
        f[i].offset = get_hex(c, e, "offset", &f[i].has_offset);
        pop(c, o);
    }
}

static void read_stacks(vctx *c, json_t *root)
{
    json_t *table = get_array(c, root, "frame_table", false);
    json_t *arr = get_array(c, root, "stacks", true);
    size_t n = arr ? json_array_size(arr) : 0;
    fbd_stack *st = alloc(c, n, sizeof *st);
    c->d->stacks = st;
    c->d->nstacks = n;
    for (size_t i = 0; i < n && !c->failed; i++) {
        json_t *e;
        if (!element(c, arr, i, "stacks", &e))
            return;
        size_t o = push(c, "stacks[%zu]", i);
        const char *kind = get_str(c, e, "kind", false);
        if (kind && strcmp(kind, "fallback") && strcmp(kind, "host_op"))
            fail(c, "kind: expected \"fallback\" or \"host_op\", got \"%.40s\"", kind);
        st[i].kind = kind && !strcmp(kind, "host_op") ? FBD_HOST : FBD_FALLBACK;
        st[i].op = get_str(c, e, "op", false);
        st[i].site = get_str(c, e, "site", false);
        if (!st[i].op)
            st[i].op = "(unknown)";
        if (!st[i].site)
            st[i].site = "(unknown)";
        st[i].count = get_count(c, e, "count", true);
        st[i].bytes = get_count(c, e, "bytes", false);
        st[i].max_bytes = get_count(c, e, "max_bytes", false);
        json_t *frames = get_array(c, e, "frames", true);
        if (frames)
            read_frames(c, frames, &st[i], table);
        pop(c, o);
    }
}

static void read_modules(vctx *c, json_t *root)
{
    json_t *arr = get_array(c, root, "modules", false);
    size_t n = arr ? json_array_size(arr) : 0;
    fbd_module *m = alloc(c, n, sizeof *m);
    c->d->modules = m;
    c->d->nmodules = n;
    for (size_t i = 0; i < n && !c->failed; i++) {
        json_t *e;
        if (!element(c, arr, i, "modules", &e))
            return;
        size_t o = push(c, "modules[%zu]", i);
        bool has;
        m[i].path = get_str(c, e, "path", true);
        m[i].build_id = get_str(c, e, "build_id", false);
        m[i].base = get_hex(c, e, "base", &has);
        m[i].size = get_count(c, e, "size", false);
        pop(c, o);
    }
}

static void read_header(vctx *c, json_t *root)
{
    fbd_dump *d = c->d;
    const char *schema = get_str(c, root, "schema", true);
    if (schema && strcmp(schema, "fbcount/1")) {
        size_t o = push(c, "schema");
        fail(c, "unsupported schema \"%.40s\" (this reader knows fbcount/1)", schema);
        pop(c, o);
    }
    d->reason = get_str(c, root, "reason", true);
    d->seq = get_count(c, root, "seq", true);
    d->time = get_str(c, root, "time", false);
    if (!d->time)
        d->time = "";
    json_t *p = get_object(c, root, "process", true);
    if (p) {
        size_t o = push(c, "process");
        d->pid = (int64_t)get_count(c, p, "pid", true);
        d->exe = get_str(c, p, "exe", true);
        d->host = get_str(c, p, "host", false);
        get_count(c, p, "ppid", false);
        get_array(c, p, "argv", false);
        pop(c, o);
    }
    if (!d->host)
        d->host = "";
    d->signal = (int)(get_count(c, root, "signal", false) & 0xff);
    json_t *sym = field(c, root, "symbolized", false);
    d->symbolized = true;
    if (sym && !json_is_boolean(sym))
        fail(c, "symbolized: expected a boolean, got %s", type_name(sym));
    else if (sym)
        d->symbolized = json_is_true(sym);

    json_t *t = get_object(c, root, "total", true);
    if (t) {
        size_t o = push(c, "total");
        d->total.fallbacks = get_count(c, t, "fallbacks", true);
        d->total.bytes = get_count(c, t, "bytes", true);
        d->total.host_ops = get_count(c, t, "host_ops", true);
        d->total.max_bytes = get_count(c, t, "max_bytes", false);
        d->total.host_bytes = get_count(c, t, "host_bytes", false);
        get_count(c, t, "stacks", false);
        pop(c, o);
    }
    json_t *b = get_object(c, root, "backend", false);
    if (b) {
        size_t o = push(c, "backend");
        d->backend.present = true;
        d->backend.native = get_count(c, b, "native", true);
        d->backend.fallback = get_count(c, b, "fallback", true);
        d->backend.host = get_count(c, b, "host", true);
        pop(c, o);
    }
    json_t *cfg = get_object(c, root, "config", false);
    json_t *pre = cfg ? json_object_get(cfg, "op_prefix") : NULL;
    if (pre && !json_is_array(pre))
        fail(c, "config.op_prefix: expected an array, got %s", type_name(pre));
    size_t np = pre && json_is_array(pre) ? json_array_size(pre) : 0;
    if (np) {
        d->prefixes = alloc(c, np, sizeof *d->prefixes);
        for (size_t i = 0; i < np && !c->failed; i++) {
            json_t *s = json_array_get(pre, i);
            if (!json_is_string(s))
                fail(c, "config.op_prefix[%zu]: expected a string, got %s", i, type_name(s));
            else
                d->prefixes[i] = json_string_value(s);
        }
        d->nprefixes = np;
    } else {
        d->prefixes = default_prefixes;
        d->nprefixes = 1;
    }
}

static fbd_dump *finish(fbd_dump *d, json_t *root, json_error_t *jerr, fbd_status *st,
                        char *err, size_t errlen)
{
    if (!root) {
        *st = FBD_EINVALID;
        if (json_error_code(jerr) == json_error_premature_end_of_input)
            snprintf(err, errlen, "%s: line %d: truncated dump (%s); the writer probably died "
                     "while writing it", d->path, jerr->line, jerr->text);
        else if (json_error_code(jerr) == json_error_stack_overflow)
            snprintf(err, errlen, "%s: line %d: nested too deeply (more than %d levels)",
                     d->path, jerr->line, JSON_PARSER_MAX_DEPTH);
        else if (json_error_code(jerr) == json_error_out_of_memory)
            snprintf(err, errlen, "%s: out of memory while parsing", d->path);
        else
            snprintf(err, errlen, "%s: line %d: not valid JSON: %s", d->path, jerr->line,
                     jerr->text);
        fbd_free(d);
        return NULL;
    }
    d->root = root;
    vctx c = {.d = d, .err = err, .errlen = errlen};
    if (!json_is_object(root)) {
        fail(&c, "not a dump: the top level is %s, expected an object", type_name(root));
    } else {
        read_header(&c, root);
        read_ops(&c, root, "ops", FBD_FALLBACK);
        read_ops(&c, root, "host_ops", FBD_HOST);
        read_stacks(&c, root);
        read_modules(&c, root);
    }
    if (c.failed) {
        *st = FBD_EINVALID;
        fbd_free(d);
        return NULL;
    }
    *st = FBD_OK;
    return d;
}

static fbd_dump *new_dump(const char *name, fbd_status *st, char *err, size_t errlen)
{
    fbd_dump *d = calloc(1, sizeof *d);
    if (d)
        d->path = strdup(name);
    if (!d || !d->path) {
        free(d);
        *st = FBD_EREAD;
        snprintf(err, errlen, "%s: out of memory", name);
        return NULL;
    }
    return d;
}

/* Duplicate keys are rejected so a dump cannot say two things about one field. */
#define FBD_JSON_FLAGS (JSON_REJECT_DUPLICATES)

fbd_dump *fbd_load_buffer(const char *buf, size_t len, const char *name, fbd_status *st,
                          char *err, size_t errlen)
{
    fbd_dump *d = new_dump(name, st, err, errlen);
    if (!d)
        return NULL;
    if (len == 0) {
        *st = FBD_EINVALID;
        snprintf(err, errlen, "%s: empty file, not a dump", name);
        fbd_free(d);
        return NULL;
    }
    if (len > FBD_MAX_FILE_BYTES) {
        *st = FBD_EINVALID;
        snprintf(err, errlen, "%s: %zu bytes is larger than the %zu MiB a dump may have", name,
                 len, FBD_MAX_FILE_BYTES >> 20);
        fbd_free(d);
        return NULL;
    }
    json_error_t jerr;
    json_t *root = json_loadb(buf, len, FBD_JSON_FLAGS, &jerr);
    return finish(d, root, &jerr, st, err, errlen);
}

fbd_dump *fbd_load_file(const char *path, fbd_status *st, char *err, size_t errlen)
{
    /* O_NONBLOCK so that a FIFO given by mistake is refused, not waited on. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0) {
        *st = FBD_EREAD;
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        *st = FBD_EREAD;
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        *st = FBD_EREAD;
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    fbd_dump *d = NULL;
    if (sb.st_size == 0 || (uint64_t)sb.st_size > FBD_MAX_FILE_BYTES) {
        char dummy = 0;
        /* Reuse the buffer path's size checks and messages. */
        d = fbd_load_buffer(&dummy, sb.st_size == 0 ? 0 : FBD_MAX_FILE_BYTES + 1, path, st,
                            err, errlen);
        fclose(f);
        return d;
    }
    d = new_dump(path, st, err, errlen);
    if (!d) {
        fclose(f);
        return NULL;
    }
    json_error_t jerr;
    json_t *root = json_loadf(f, FBD_JSON_FLAGS, &jerr);
    int rerr = ferror(f);
    fclose(f);
    if (!root && rerr) {
        *st = FBD_EREAD;
        snprintf(err, errlen, "%s: read error", path);
        fbd_free(d);
        return NULL;
    }
    return finish(d, root, &jerr, st, err, errlen);
}

void fbd_free(fbd_dump *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nallocs; i++)
        free(d->allocs[i]);
    free(d->allocs);
    json_decref(d->root);
    free(d->path);
    free(d);
}

const char *fbd_path(const fbd_dump *d) { return d->path; }
const char *fbd_reason(const fbd_dump *d) { return d->reason; }
const char *fbd_exe(const fbd_dump *d) { return d->exe; }
const char *fbd_host(const fbd_dump *d) { return d->host; }
const char *fbd_time(const fbd_dump *d) { return d->time; }
int64_t fbd_pid(const fbd_dump *d) { return d->pid; }
uint64_t fbd_seq(const fbd_dump *d) { return d->seq; }
int fbd_signal(const fbd_dump *d) { return d->signal; }
bool fbd_symbolized(const fbd_dump *d) { return d->symbolized; }
fbd_total fbd_totals(const fbd_dump *d) { return d->total; }
fbd_backend fbd_backend_stats(const fbd_dump *d) { return d->backend; }
json_t *fbd_json(fbd_dump *d) { return d->root; }

const char *const *fbd_op_prefixes(const fbd_dump *d, size_t *n)
{
    *n = d->nprefixes;
    return d->prefixes;
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

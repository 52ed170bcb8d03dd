/* metrics.c - see metrics.h. */
#include "attrib.h"
#include "metrics.h"
#include "decimal.h"

#include <stdlib.h>
#include <string.h>

/* Output goes through a small buffer so the caller's write function sees a few large
 * pieces rather than one call per label. */
typedef struct {
    char buf[4096];
    size_t len;
    int err;
    fbr_metrics_write_fn write;
    void *ctx;
} out_t;

static void flush(out_t *o)
{
    if (o->len && !o->err)
        o->err = o->write(o->ctx, o->buf, o->len);
    o->len = 0;
}

static void put(out_t *o, const char *s, size_t n)
{
    while (n && !o->err) {
        if (o->len == sizeof o->buf)
            flush(o);
        size_t k = sizeof o->buf - o->len;
        if (k > n)
            k = n;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        s += k;
        n -= k;
    }
}

static void puts_(out_t *o, const char *s)
{
    put(o, s, strlen(s));
}

static void put_u64(out_t *o, uint64_t v)
{
    char d[20];
    put(o, d, fbr_fmt_u64(d, v));
}

static void put_i64(out_t *o, int64_t v)
{
    if (v < 0) {
        put(o, "-", 1);
        put_u64(o, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(o, (uint64_t)v);
    }
}

/* Nanoseconds as exact decimal seconds ("0.412", "3"): no rounding through a double. */
static void put_seconds(out_t *o, uint64_t ns)
{
    put_u64(o, ns / 1000000000u);
    uint64_t frac = ns % 1000000000u;
    if (!frac)
        return;
    char d[10] = ".";
    for (int i = 9; i >= 1; i--) {
        d[i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    size_t n = 10;
    while (d[n - 1] == '0')
        n--;
    put(o, d, n);
}

/* A ratio of two counts with six decimals, rounded. */
static void put_ratio(out_t *o, uint64_t num, uint64_t den)
{
    uint64_t micro = (uint64_t)((double)num / (double)den * 1e6 + 0.5);
    if (micro > 1000000)
        micro = 1000000;
    put_u64(o, micro / 1000000);
    char d[8] = ".";
    uint64_t f = micro % 1000000;
    for (int i = 6; i >= 1; i--) {
        d[i] = (char)('0' + f % 10);
        f /= 10;
    }
    put(o, d, 7);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the bytes there are not one:
 * overlong forms, surrogates and code points past U+10FFFF are refused as the format does. */
static size_t utf8_seq(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned cp, min;
    if ((c & 0xE0) == 0xC0) {
        n = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

static void put_label_value(out_t *o, const char *v)
{
    const unsigned char *s = (const unsigned char *)v;
    while (*s) {
        if (*s == '\\') {
            put(o, "\\\\", 2);
            s++;
        } else if (*s == '"') {
            put(o, "\\\"", 2);
            s++;
        } else if (*s == '\n') {
            put(o, "\\n", 2);
            s++;
        } else {
            size_t n = utf8_seq(s);
            if (n) {
                put(o, (const char *)s, n);
                s += n;
            } else {
                put(o, "\xEF\xBF\xBD", 3);
                s++;
            }
        }
    }
}

static void put_label(out_t *o, bool *first, const char *name, const char *value)
{
    put(o, *first ? "{" : ",", 1);
    *first = false;
    puts_(o, name);
    put(o, "=\"", 2);
    put_label_value(o, value);
    put(o, "\"", 1);
}

static void put_num_label(out_t *o, bool *first, const char *name, int64_t v)
{
    put(o, *first ? "{" : ",", 1);
    *first = false;
    puts_(o, name);
    put(o, "=\"", 2);
    put_i64(o, v);
    put(o, "\"", 1);
}

static bool has(const char *s)
{
    return s && *s;
}

static void put_proc_labels(out_t *o, bool *first, const fbr_metrics_proc *p)
{
    put_num_label(o, first, "pid", p->pid);
    if (p->rank >= 0)
        put_num_label(o, first, "rank", p->rank);
    if (has(p->host))
        put_label(o, first, "host", p->host);
    if (has(p->exe))
        put_label(o, first, "exe", fbr_base_name(p->exe));
}

/* Comparisons on the label values a row or process is written with, so that rows that would
 * print the same series are next to each other once sorted. */
static int cmp_str(const char *a, const char *b)
{
    if (!has(a) || !has(b))
        return has(a) - has(b);
    return strcmp(a, b);
}

static int cmp_num(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int cmp_proc(const fbr_metrics_proc *a, const fbr_metrics_proc *b)
{
    int r = cmp_num(a->pid, b->pid);
    if (!r)
        r = cmp_num(a->rank < 0 ? -1 : a->rank, b->rank < 0 ? -1 : b->rank);
    if (!r)
        r = cmp_str(a->host, b->host);
    if (!r)
        r = cmp_str(has(a->exe) ? fbr_base_name(a->exe) : NULL,
                    has(b->exe) ? fbr_base_name(b->exe) : NULL);
    return r;
}

/* The rows as one formatting sees them: each with its process and its origin. */
typedef struct {
    const fbr_metrics_proc *procs;
    const fbr_metrics_row *rows;
    const fbr_metrics_origin *origins; /* NULL: libvkt's rows, sizes known */
} view;

/* qsort has no context argument; one formatting runs at a time per thread. */
static _Thread_local view sorting;

static const char *op_name(const fbr_metrics_row *r)
{
    return r->op ? r->op : "(unknown)";
}

/* A row without a backend is libvkt's, the one backend of shims that named none. */
static const char *backend_name(const char *b)
{
    return b ? b : "vkt";
}

static const char *row_backend(const view *v, size_t i)
{
    return backend_name(v->origins ? v->origins[i].backend : NULL);
}

static bool row_sized(const view *v, size_t i)
{
    return !v->origins || !v->origins[i].bytes_unknown;
}

static bool row_own_time(const view *v, size_t i)
{
    return !v->origins || !v->origins[i].split_timed;
}

static int cmp_rows(const view *v, size_t ia, size_t ib)
{
    const fbr_metrics_row *a = &v->rows[ia], *b = &v->rows[ib];
    const fbr_metrics_proc *procs = v->procs;
    int r = cmp_num(a->kind, b->kind);
    if (!r)
        r = strcmp(row_backend(v, ia), row_backend(v, ib));
    if (!r)
        r = strcmp(op_name(a), op_name(b));
    if (!r)
        r = cmp_str(a->site, b->site);
    if (!r)
        r = cmp_str(a->file, b->file);
    if (!r)
        r = cmp_num(a->line > 0 ? a->line : 0, b->line > 0 ? b->line : 0);
    if (!r)
        r = cmp_proc(&procs[a->proc], &procs[b->proc]);
    return r;
}

static int cmp_row_idx(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    int r = cmp_rows(&sorting, a, b);
    return r ? r : cmp_num((int64_t)a, (int64_t)b);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

typedef enum { F_COUNT, F_BYTES, F_SECONDS } field_t;

static const struct {
    fbr_metrics_kind kind;
    field_t field;
    const char *name, *help;
} families[] = {
    {FBR_METRICS_FALLBACK, F_COUNT, "fbcount_fallbacks_total",
     "Fallbacks (host_result calls): ops that left the GPU."},
    {FBR_METRICS_FALLBACK, F_BYTES, "fbcount_fallback_bytes_total",
     "Bytes of the results that fallbacks computed on the host."},
    {FBR_METRICS_FALLBACK, F_SECONDS, "fbcount_fallback_seconds_total",
     "Wall time of fallbacks (what it covers: the dump's config.timing)."},
    {FBR_METRICS_HOST, F_COUNT, "fbcount_host_ops_total",
     "Host-resident ops: downstream work on tensors a fallback left on the host."},
    {FBR_METRICS_HOST, F_BYTES, "fbcount_host_op_bytes_total",
     "Bytes of the results of host-resident ops."},
    {FBR_METRICS_HOST, F_SECONDS, "fbcount_host_op_seconds_total",
     "Wall time of host-resident ops."},
    {FBR_METRICS_TRANSFER, F_COUNT, "fbcount_transfers_total",
     "Copies of tensors between devices (a backend's transfers)."},
    {FBR_METRICS_TRANSFER, F_BYTES, "fbcount_transfer_bytes_total",
     "Bytes that crossed between devices."},
    {FBR_METRICS_TRANSFER, F_SECONDS, "fbcount_transfer_seconds_total",
     "Wall time of transfers between devices."},
    {FBR_METRICS_SPLIT, F_COUNT, "fbcount_splits_total",
     "Host splits of a scheduler's graph (ggml's CPU splits), named by their nodes."},
    {FBR_METRICS_SPLIT, F_BYTES, "fbcount_split_bytes_total",
     "Bytes the nodes of host splits wrote."},
    {FBR_METRICS_SPLIT, F_SECONDS, "fbcount_split_seconds_total",
     "Wall time of host splits, measured per split: ggml times a split, never its nodes."},
};

static void put_header(out_t *o, const char *name, const char *help, const char *type)
{
    puts_(o, "# HELP ");
    puts_(o, name);
    put(o, " ", 1);
    puts_(o, help);
    puts_(o, "\n# TYPE ");
    puts_(o, name);
    put(o, " ", 1);
    puts_(o, type);
    put(o, "\n", 1);
}

/* One family of op rows: the rows of its kind in sorted order, equal series added up. */
static void put_family(out_t *o, int f, const view *w, const size_t *idx, size_t nrows)
{
    const fbr_metrics_proc *procs = w->procs;
    bool header = false;
    for (size_t i = 0; i < nrows && !o->err;) {
        const fbr_metrics_row *r = &w->rows[idx[i]];
        const char *backend = row_backend(w, idx[i]);
        size_t j = i;
        uint64_t v = 0;
        bool timed = false, sized = false;
        for (; j < nrows && !cmp_rows(w, idx[i], idx[j]); j++) {
            const fbr_metrics_row *q = &w->rows[idx[j]];
            bool known = row_sized(w, idx[j]);
            bool own = procs[q->proc].has_time && row_own_time(w, idx[j]);
            timed |= own;
            sized |= known;
            if (families[f].field == F_COUNT)
                v = add_sat(v, q->count);
            else if (families[f].field == F_BYTES && known)
                v = add_sat(v, q->bytes);
            else if (families[f].field == F_SECONDS && own)
                v = add_sat(v, q->ns);
        }
        i = j;
        if (r->kind != families[f].kind || (families[f].field == F_SECONDS && !timed) ||
            (families[f].field == F_BYTES && !sized))
            continue;
        if (!header) {
            put_header(o, families[f].name, families[f].help, "counter");
            header = true;
        }
        bool first = true;
        puts_(o, families[f].name);
        put_label(o, &first, "backend", backend);
        put_label(o, &first, "op", op_name(r));
        if (has(r->site))
            put_label(o, &first, "site", r->site);
        if (has(r->file))
            put_label(o, &first, "file", r->file);
        if (r->line > 0)
            put_num_label(o, &first, "line", r->line);
        put_proc_labels(o, &first, &procs[r->proc]);
        put(o, "} ", 2);
        if (families[f].field == F_SECONDS)
            put_seconds(o, v);
        else
            put_u64(o, v);
        put(o, "\n", 1);
    }
}

/* One backend's counters in one process: what put_backend sorts and adds up. */
typedef struct {
    const fbr_metrics_proc *proc;
    const char *name;
    uint64_t v[3]; /* native, fallback, host */
} counters_at;

static int cmp_counters(const void *x, const void *y)
{
    const counters_at *a = x, *b = y;
    int r = cmp_proc(a->proc, b->proc);
    return r ? r : strcmp(a->name, b->name);
}

/* Every backend's counters of every process, sorted by labels: each process's backends[],
 * or libvkt's counters where it lists none. NULL when out of memory. */
static counters_at *collect_counters(const fbr_metrics_proc *procs, size_t nprocs, size_t *n)
{
    size_t cap = 0;
    for (size_t i = 0; i < nprocs; i++)
        cap += procs[i].nbackends ? procs[i].nbackends : procs[i].has_backend;
    counters_at *c = malloc((cap ? cap : 1) * sizeof *c);
    *n = 0;
    for (size_t i = 0; c && i < nprocs; i++) {
        const fbr_metrics_proc *p = &procs[i];
        for (size_t k = 0; k < p->nbackends; k++)
            c[(*n)++] = (counters_at){
                p,
                backend_name(p->backends[k].name),
                {p->backends[k].native, p->backends[k].fallback, p->backends[k].host_ops}};
        if (!p->nbackends && p->has_backend)
            c[(*n)++] = (counters_at){p, "vkt", {p->native, p->fallback, p->host_ops}};
    }
    if (c && *n)
        qsort(c, *n, sizeof *c, cmp_counters);
    return c;
}

/* The backends' own counters and their native shares, one series per process label set and
 * backend. */
static void put_backend(out_t *o, const counters_at *c, size_t n)
{
    static const char *paths[] = {"native", "fallback", "host"};
    for (int pass = 0; pass < 2 && !o->err; pass++) {
        bool header = false;
        for (size_t i = 0; i < n && !o->err;) {
            uint64_t v[3] = {0, 0, 0};
            size_t j = i;
            for (; j < n && !cmp_counters(&c[i], &c[j]); j++)
                for (int k = 0; k < 3; k++)
                    v[k] = add_sat(v[k], c[j].v[k]);
            const counters_at *at = &c[i];
            i = j;
            uint64_t total = add_sat(add_sat(v[0], v[1]), v[2]);
            if (pass == 1 && total == 0)
                continue;
            if (!header) {
                if (pass == 0)
                    put_header(o, "fbcount_backend_ops_total",
                               "Ops the backend ran, by path: native, fallback, host-resident.",
                               "counter");
                else
                    put_header(o, "fbcount_native_share",
                               "Share of the backend's ops that ran natively (0 to 1).", "gauge");
                header = true;
            }
            for (int k = 0; k < (pass == 0 ? 3 : 1); k++) {
                bool first = true;
                puts_(o, pass == 0 ? "fbcount_backend_ops_total" : "fbcount_native_share");
                put_label(o, &first, "backend", at->name);
                put_proc_labels(o, &first, at->proc);
                if (pass == 0) {
                    put_label(o, &first, "path", paths[k]);
                    put(o, "} ", 2);
                    put_u64(o, v[k]);
                } else {
                    put(o, "} ", 2);
                    put_ratio(o, v[0], total);
                }
                put(o, "\n", 1);
            }
        }
    }
}

int fbr_metrics_format(const fbr_metrics_proc *procs, size_t nprocs, const fbr_metrics_row *rows,
                       size_t nrows, fbr_metrics_write_fn write, void *ctx)
{
    return fbr_metrics_format_from(procs, nprocs, rows, NULL, nrows, write, ctx);
}

int fbr_metrics_format_from(const fbr_metrics_proc *procs, size_t nprocs,
                            const fbr_metrics_row *rows, const fbr_metrics_origin *origins,
                            size_t nrows, fbr_metrics_write_fn write, void *ctx)
{
    for (size_t i = 0; i < nrows; i++)
        if (rows[i].proc >= nprocs)
            return -2;
    size_t *ridx = malloc((nrows ? nrows : 1) * sizeof *ridx), ncounters;
    counters_at *counters = collect_counters(procs, nprocs, &ncounters);
    out_t *o = malloc(sizeof *o);
    if (!ridx || !counters || !o) {
        free(ridx);
        free(counters);
        free(o);
        return -1;
    }
    for (size_t i = 0; i < nrows; i++)
        ridx[i] = i;
    view w = {procs, rows, origins};
    sorting = w;
    qsort(ridx, nrows, sizeof *ridx, cmp_row_idx);
    sorting = (view){NULL, NULL, NULL};

    o->len = 0;
    o->err = 0;
    o->write = write;
    o->ctx = ctx;
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        put_family(o, (int)f, &w, ridx, nrows);
    put_backend(o, counters, ncounters);
    puts_(o, "# EOF\n");
    flush(o);
    int err = o->err;
    free(o);
    free(ridx);
    free(counters);
    return err;
}

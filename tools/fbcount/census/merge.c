/* merge.c - merge dumps: the latest state per census, filters, totals and backends. The
 * tables of rows (per op, site, stack, ...) are rows.c's.
 */
#include "grow.h"
#include "attrib.h"
#include "merge.h"
#include "contract.h"
#include "fields.h"
#include "census.h"
#include "names.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

void fbm_census_free(fbm_census *c)
{
    if (!c)
        return;
    proc_entry *p, *tmp;
    HASH_ITER(hh, c->procs, p, tmp)
    {
        HASH_DEL(c->procs, p);
        free(p->key);
        free(p);
    }
    for (size_t i = 0; i < c->ndumps; i++)
        fbd_free(c->order[i]);
    free(c->order);
    fbm_free_tables(c);
    fbp_map_free(c->labels);
    fbp_map_free(c->interned);
    for (int w = 0; w < W_N; w++) {
        for (size_t i = 0; i < c->nwhere[w]; i++)
            free(c->where[w][i]);
        free(c->where[w]);
        free(c->hit[w]);
        for (size_t i = 0; i < c->nseen[w]; i++)
            free(c->seen[w][i]);
        free(c->seen[w]);
    }
    free(c->backends);
    for (size_t i = 0; i < c->nskipped; i++)
        free(c->skipped[i]);
    free(c->skipped);
    fbp_free(c->pool);
    free(c);
}

void fbm_census_set_namer(fbm_census *c, fbm_namer namer)
{
    c->namer = namer;
}

void fbm_census_set_lenient(fbm_census *c, bool lenient)
{
    c->lenient = lenient;
}

const char *const *fbm_census_skipped(const fbm_census *c, size_t *n)
{
    *n = c->nskipped;
    return (const char *const *)c->skipped;
}

/* A dump that could not be read, on a lenient census: kept as its message. false when out
 * of memory. */
static bool skip(fbm_census *c, const char *err)
{
    char **more = realloc(c->skipped, (c->nskipped + 1) * sizeof *more);
    if (!more)
        return false;
    c->skipped = more;
    return (c->skipped[c->nskipped] = strdup(err)) != NULL && ++c->nskipped;
}

static const char *const where_names[W_N] = {"rank", "pid", "host", "exe", "backend"};

const char *fbm_where_help(void)
{
    static char text[128];
    if (!text[0])
        for (int w = 0; w < W_N; w++)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s",
                     w == 0         ? ""
                     : w + 1 == W_N ? " or "
                                    : ", ",
                     where_names[w]);
    return text;
}

int fbm_census_where(fbm_census *c, const char *field, const char *value)
{
    int w = 0;
    while (w < W_N && strcmp(field, where_names[w]))
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
        return -2;
    c->where[w] = n;
    bool *h = realloc(c->hit[w], (c->nwhere[w] + 1) * sizeof *h);
    if (!h)
        return -2;
    c->hit[w] = h;
    h[c->nwhere[w]] = false;
    if (!(n[c->nwhere[w]] = strdup(value)))
        return -2;
    c->nwhere[w]++;
    return 0;
}

#define SEEN_MAX 32

/* Keeps value among those field w had in the dumps read, for a filter's message. */
static void saw(fbm_census *c, int w, const char *value)
{
    if (!value || !*value || c->nseen[w] == SEEN_MAX)
        return;
    for (size_t i = 0; i < c->nseen[w]; i++)
        if (!strcmp(c->seen[w][i], value))
            return;
    char **n = realloc(c->seen[w], (c->nseen[w] + 1) * sizeof *n);
    if (n && (n[c->nseen[w]] = strdup(value)))
        c->seen[w] = n, c->nseen[w]++;
    else if (n)
        c->seen[w] = n;
}

/* Whether the process of dump d is value of field w (below backend); the field's values d
 * has are noted. exe= is the program as `run` announces it (argv[0]'s last part), its
 * executable's path, or that path's last part. */
static bool is(fbm_census *c, const fbd_dump *d, int w, const char *v)
{
    const fbd_process *p = fbd_proc(d);
    char num[24];
    switch (w) {
    case W_RANK:
        snprintf(num, sizeof num, "%ld", p->rank);
        saw(c, w, p->rank >= 0 ? num : NULL);
        return p->rank >= 0 && p->rank == strtol(v, NULL, 10);
    case W_PID:
        snprintf(num, sizeof num, "%" PRId64, p->pid);
        saw(c, w, num);
        return p->pid == strtoll(v, NULL, 10);
    case W_HOST: saw(c, w, p->host); return !strcmp(p->host, v);
    default:
        saw(c, w, p->argv0 ? fbr_base_name(p->argv0) : NULL);
        saw(c, w, fbr_base_name(p->exe));
        return !strcmp(p->exe, v) || !strcmp(fbr_base_name(p->exe), v) ||
               (p->argv0 && (!strcmp(p->argv0, v) || !strcmp(fbr_base_name(p->argv0), v)));
    }
}

/* The backend values d has, and which of --where backend= it matches. */
static void backends_of(fbm_census *c, const fbd_dump *d)
{
    size_t n;
    const fbd_backend *b = fbd_backends(d, &n);
    for (size_t k = 0; k <= n; k++) {
        const char *name = k < n ? b[k].name : n ? NULL : FBR_BACKEND_DEFAULT;
        if (!name)
            continue;
        saw(c, W_BACKEND, name);
        for (size_t i = 0; i < c->nwhere[W_BACKEND]; i++)
            c->hit[W_BACKEND][i] |= !strcmp(c->where[W_BACKEND][i], name);
    }
}

/* Appends the values field w had to out, "(exe there: a, b)". */
static void put_seen(const fbm_census *c, int w, char *out, size_t cap)
{
    size_t len = strlen(out);
    snprintf(out + len, cap - len, " (%s there: ", where_names[w]);
    for (size_t i = 0; i < c->nseen[w]; i++) {
        len = strlen(out);
        snprintf(out + len, cap - len, "%s%s", i ? ", " : "", c->seen[w][i]);
    }
    len = strlen(out);
    snprintf(out + len, cap - len, "%s)", c->nseen[w] ? "" : "none");
}

bool fbm_census_unmatched(const fbm_census *c, char *msg, size_t cap)
{
    msg[0] = '\0';
    for (int w = 0; w < W_N; w++)
        for (size_t i = 0; i < c->nwhere[w]; i++)
            if (!c->hit[w][i]) {
                snprintf(msg, cap, "--where %s=%s selects no %s", where_names[w], c->where[w][i],
                         w == W_BACKEND ? "backend" : "dump");
                put_seen(c, w, msg, cap);
                return true;
            }
    if (c->ndumps == 0 && c->filtered) {
        snprintf(msg, cap,
                 "--where selects no dump: none of the %zu read matches every field "
                 "given",
                 c->filtered);
        return true;
    }
    return false;
}

void fbm_census_set_frames(fbm_census *c, fbm_frames mode)
{
    if (c->frames == mode)
        return;
    c->frames = mode;
    fbm_free_tables(c);
    fbp_map_free(c->labels);
    c->labels = fbp_map_new();
}

/* Whether d passes the process filters (every field given, any of its values); every value
 * is tried, so that one that matches no dump at all is known. */
static bool matches(fbm_census *c, const fbd_dump *d)
{
    bool all = true;
    backends_of(c, d);
    for (int w = 0; w < W_BACKEND; w++) {
        bool any = !c->nwhere[w];
        for (size_t i = 0; i < c->nwhere[w]; i++)
            if (is(c, d, w, c->where[w][i]))
                any = c->hit[w][i] = true;
        all &= any;
    }
    return all;
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
    fbm_free_tables(c);
    free(c->backends);
    c->backends = NULL;
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
    if (!fbr_grow(&c->order, &c->cap, c->ndumps, sizeof *c->order, 8)) {
        free(key);
        fbd_free(d);
        return -1;
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

/* Loads one dump; in a folder (in_dir) of a lenient census, one that cannot be read is
 * skipped instead (a dump named on its own is always read or refused). */
static fbd_status load_one(fbm_census *c, const char *path, bool in_dir, char *err, size_t errlen)
{
    fbd_status st;
    fbd_dump *d = fbd_load_file(path, &st, err, errlen);
    if (!d && st != FBD_ENOMEM && c->lenient && in_dir)
        return skip(c, err) ? FBD_OK : FBD_ENOMEM;
    if (!d)
        return st;
    if (!fbd_symbolized(d) && c->namer)
        d = c->namer(d, path);
    if (fbm_census_add(c, d) != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return FBD_ENOMEM;
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
        if (!fbr_is_dump_name(e->d_name) ||
            (e->d_type != DT_REG && e->d_type != DT_UNKNOWN && e->d_type != DT_LNK))
            continue;
        if (!fbr_grow(&names, &cap, n, sizeof *names, 16)) {
            st = FBD_ENOMEM;
            break;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(len))) {
            st = FBD_ENOMEM;
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
            st = load_one(c, names[i], true, err, errlen);
        free(names[i]);
    }
    free(names);
    return st;
}

fbd_status fbm_census_load(fbm_census *c, char *const *paths, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        fbd_status st;
        if (stat(paths[i], &sb) != 0) {
            snprintf(err, errlen, "%s: cannot open: %s", paths[i], strerror(errno));
            return FBD_EREAD;
        }
        st = S_ISDIR(sb.st_mode) ? load_dir(c, paths[i], err, errlen)
                                 : load_one(c, paths[i], false, err, errlen);
        if (st != FBD_OK)
            return st;
    }
    return FBD_OK;
}

size_t fbm_census_ndumps(const fbm_census *c)
{
    return c->ndumps;
}
fbd_dump *fbm_census_dump(const fbm_census *c, size_t i)
{
    return c->order[i];
}

/* Each count is at most 2^53, so a sum wraps only over a thousand dumps; it saturates
 * instead, where JSON's signed 64-bit integers end. */
uint64_t fbm_sat_add(uint64_t a, uint64_t b)
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

bool fbm_census_keeps_backend(const fbm_census *c, const char *backend)
{
    for (size_t i = 0; i < c->nwhere[W_BACKEND]; i++)
        if (!strcmp(c->where[W_BACKEND][i], backend))
            return true;
    return c->nwhere[W_BACKEND] == 0;
}

/* The count, bytes and time fields of one kind in a total. */
static uint64_t *total_of(fbd_total *t, fbd_kind kind, int which)
{
    uint64_t *f[FBD_NKINDS][3] = {{&t->fallbacks, &t->bytes, &t->ns},
                                  {&t->host_ops, &t->host_bytes, &t->host_ns},
                                  {&t->transfers, &t->transfer_bytes, &t->transfer_ns},
                                  {&t->splits, &t->split_bytes, &t->split_ns}};
    return f[kind][which];
}

/* A dump's totals over the backends kept: its own totals when every backend is, else the
 * sums of its kept rows. */
static fbd_total kept_total(const fbm_census *c, const fbd_dump *d)
{
    if (!c->nwhere[W_BACKEND])
        return fbd_totals(d);
    fbd_total t = {0};
    for (int k = 0; k < FBD_NKINDS; k++) {
        size_t n;
        const fbd_op *ops = fbd_ops(d, (fbd_kind)k, &n);
        for (size_t i = 0; i < n; i++) {
            if (!fbm_census_keeps_backend(c, ops[i].backend))
                continue;
            uint64_t add[3] = {ops[i].count, ops[i].bytes, ops[i].ns};
            for (int w = 0; w < 3; w++)
                *total_of(&t, (fbd_kind)k, w) = fbm_sat_add(*total_of(&t, (fbd_kind)k, w), add[w]);
            if (!ops[i].bytes_known)
                t.unknown[k] = fbm_sat_add(t.unknown[k], ops[i].count);
            if (k == FBD_FALLBACK && ops[i].max_bytes > t.max_bytes)
                t.max_bytes = ops[i].max_bytes;
        }
    }
    return t;
}

static void add_total(fbd_total *s, fbd_total t)
{
    for (int k = 0; k < FBD_NKINDS; k++) {
        for (int w = 0; w < 3; w++)
            *total_of(s, (fbd_kind)k, w) =
                fbm_sat_add(*total_of(s, (fbd_kind)k, w), *total_of(&t, (fbd_kind)k, w));
        s->unknown[k] = fbm_sat_add(s->unknown[k], t.unknown[k]);
    }
    if (t.max_bytes > s->max_bytes)
        s->max_bytes = t.max_bytes;
}

static void add_counters(fbd_counters *s, fbd_counters b)
{
    if (!b.present)
        return;
    s->present = true;
    s->native = fbm_sat_add(s->native, b.native);
    s->fallback = fbm_sat_add(s->fallback, b.fallback);
    s->host = fbm_sat_add(s->host, b.host);
}

fbm_summary fbm_census_summary(const fbm_census *c)
{
    fbm_summary s = {.dumps = c->ndumps,
                     .processes = c->ndumps,
                     .superseded = c->added - c->ndumps - c->filtered,
                     .filtered = c->filtered,
                     .backend_filter = c->nwhere[W_BACKEND] > 0};
    for (size_t i = 0; i < c->ndumps; i++) {
        const fbd_dump *d = c->order[i];
        add_total(&s.total, kept_total(c, d));
        if (fbm_census_keeps_backend(c, FBR_BACKEND_DEFAULT))
            add_counters(&s.backend, fbd_backend_stats(d));
        const char *r = fbd_reason(d);
        s.crashed += !strcmp(r, "crash");
        s.signalled += !strcmp(r, "signal");
        s.checkpoints += !strcmp(r, "checkpoint");
        s.snapshots += !strcmp(r, "snapshot");
        s.timed += fbd_has_time(d);
        if (fbd_proc(d)->has_elapsed) {
            s.elapsed_ns = fbm_sat_add(s.elapsed_ns, fbd_proc(d)->elapsed_ns);
            s.with_elapsed++;
        }
    }
    for (int k = 0; k < FBD_NKINDS; k++)
        for (int w = 0; w < 2; w++)
            s.saturated |= *total_of(&s.total, (fbd_kind)k, w) == FBM_SAT_MAX;
    return s;
}

fbd_counters fbm_census_counters(fbm_census *c, const char *backend)
{
    fbd_counters sum = {0};
    for (size_t i = 0; i < c->ndumps && fbm_census_keeps_backend(c, backend); i++) {
        size_t n;
        const fbd_backend *b = fbd_backends(c->order[i], &n);
        bool listed = false;
        for (size_t k = 0; k < n; k++)
            if (!strcmp(b[k].name, backend) && b[k].counters.present) {
                add_counters(&sum, b[k].counters);
                listed = true;
            }
        if (!listed && !strcmp(backend, FBR_BACKEND_DEFAULT))
            add_counters(&sum, fbd_backend_stats(c->order[i]));
    }
    return sum;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds name to the census's backend list unless it is there. */
static void seen_backend(fbm_census *c, const char *name, size_t *cap)
{
    for (size_t i = 0; i < c->nbackends; i++)
        if (!strcmp(c->backends[i], name))
            return;
    if (!fbm_census_keeps_backend(c, name))
        return;
    if (!fbr_grow(&c->backends, cap, c->nbackends, sizeof *c->backends, 8))
        return;
    c->backends[c->nbackends++] = name;
}

const char *const *fbm_census_backends(fbm_census *c, size_t *n)
{
    if (!c->backends) {
        size_t cap = 0;
        c->nbackends = 0;
        for (size_t i = 0; i < c->ndumps; i++) {
            const fbd_dump *d = c->order[i];
            size_t m;
            for (int k = 0; k < FBD_NKINDS; k++) {
                const fbd_op *ops = fbd_ops(d, (fbd_kind)k, &m);
                for (size_t j = 0; j < m; j++)
                    seen_backend(c, ops[j].backend, &cap);
            }
            const fbd_stack *st = fbd_stacks(d, &m);
            for (size_t j = 0; j < m; j++)
                seen_backend(c, st[j].backend, &cap);
            const fbd_backend *b = fbd_backends(d, &m);
            for (size_t j = 0; j < m; j++)
                seen_backend(c, b[j].name, &cap);
        }
        if (c->nbackends)
            qsort(c->backends, c->nbackends, sizeof *c->backends, cmp_name);
    }
    *n = c->nbackends;
    return c->backends;
}

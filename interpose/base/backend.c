/* backend.c - the backend rows in force (rules/backend.h: built in, from FBCOUNT_BACKEND's
 * files, and FBCOUNT_EXIT's declared exits), and the backends of this process: each row bound
 * to the module that defines its exits, with that module's own accessors. Rows and modules
 * live in static tables, published append-only, so a dump (and a crash dump) reads them
 * without a lock and a process that never uses a backend gets no allocation from them. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "fields.h"
#include "readfile.h"

static fbr_backend rows[FBR_BACKENDS_MAX];
static size_t nrows;

static fbc_bmod bmods[FBC_MAX_BMODS];
static size_t nbmods; /* published with release; entries below it never change */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* A row's place: replacing the row of its name (a descriptor replaces the built-in row of
 * its name: rules' fbr_row_in_force, by which the command reads the dump), or the next free
 * one. */
static fbr_backend *slot(const char *name)
{
    for (size_t i = 0; i < nrows; i++)
        if (!strcmp(rows[i].name, name))
            return &rows[i];
    return nrows < FBR_BACKENDS_MAX ? &rows[nrows++] : NULL;
}

static void names_into(const fbr_names *from, fbr_patterns *to)
{
    to->n = 0;
    for (int i = 0; i < from->n && to->n < FBR_PATTERNS_MAX; i++)
        snprintf(to->s[to->n++], FBR_PATTERN_LEN, "%s", from->name[i]);
}

static void load_file(const char *path)
{
    size_t len;
    char *text = fbr_read_file(path, FBR_DESCRIPTOR_MAX, &len), err[320];
    if (!text) {
        char why[128];
        fbc_warn("FBCOUNT_BACKEND: %.600s: %s; left out", path,
                 fbr_read_error(errno, FBR_DESCRIPTOR_MAX, why, sizeof why));
        return;
    }
    fbr_backend b;
    int rc = fbr_backend_parse(text, len, FBR_FROM_FILE, &b, err, sizeof err);
    free(text);
    fbr_backend *to = rc ? NULL : slot(b.name);
    if (rc)
        fbc_warn("FBCOUNT_BACKEND: %.600s: %s; left out", path, err);
    else if (!to)
        fbc_warn("FBCOUNT_BACKEND: %.600s: more than %d backends; left out", path,
                 FBR_BACKENDS_MAX);
    else
        *to = b;
    /* Under fbcount run the command said so once, for the whole job. */
    char why[FBR_SYMBOL_LEN + 160];
    int unused = to && !fbc_cfg.run_log[0] ? fbr_backend_unused(&b, why, sizeof why) : 0;
    if (unused)
        fbc_warn("FBCOUNT_BACKEND: %.600s: %s%s", path, why,
                 unused > 1 ? " (and more directives like it)" : "");
}

static void declare(const char *spec)
{
    fbr_backend b;
    char err[320];
    if (fbr_backend_declare(spec, &b, err, sizeof err)) {
        fbc_warn("FBCOUNT_EXIT: %s; left out", err);
        return;
    }
    fbr_backend *to = slot(b.name);
    if (!to)
        fbc_warn("FBCOUNT_EXIT: %.600s: more than %d backends; left out", spec, FBR_BACKENDS_MAX);
    else if (to->name[0] && to->source == FBR_FROM_DECLARED && to->nexits < FBR_EXITS_MAX)
        to->exit[to->nexits++] = b.exit[0]; /* another exit of the same library */
    else
        *to = b;
}

/* Calls each(item) for each item of list split at any of seps (list is copied). */
static void each_of(const char *list, const char *seps, void (*each)(const char *))
{
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *save = NULL, *s = strtok_r(copy, seps, &save); s; s = strtok_r(NULL, seps, &save))
        each(s);
}

static pthread_once_t rows_once = PTHREAD_ONCE_INIT;
static bool rows_read; /* atomic */

static void load_rows(void)
{
    nrows = 0;
    for (size_t i = 0; i < fbr_backend_builtin_count() && nrows < FBR_BACKENDS_MAX; i++) {
        const fbr_backend *b = fbr_backend_builtin(i);
        if (b)
            rows[nrows++] = *b;
    }
    /* The two older variables speak of libvkt's row. */
    fbr_backend *vkt = slot(FBR_BACKEND_DEFAULT);
    if (vkt && vkt->name[0] && fbc_cfg.prefixes_set) {
        vkt->oprule = FBR_OPRULE_PREFIX;
        names_into(&fbc_cfg.prefixes, &vkt->op);
    }
    if (vkt && vkt->name[0] && fbc_cfg.py_backend_set)
        names_into(&fbc_cfg.py_backend, &vkt->python);
    each_of(fbc_cfg.backend_files, (const char[]){FBR_BACKEND_SEP, '\0'}, load_file);
    each_of(fbc_cfg.exits, (const char[]){FBR_EXIT_SEP, ' ', '\t', '\0'}, declare);
    __atomic_store_n(&rows_read, true, __ATOMIC_RELEASE);
}

static void no_rows_yet(void)
{
}

/* The rows are read at their first use, not at load: parsing the built-in descriptors
 * touches pages that a process which never uses a backend would pay for at every exec. */
static void rows_ready(void)
{
    pthread_once(&rows_once, load_rows);
}

void fbc_backends_load(void)
{
    pthread_once(&rows_once, no_rows_yet);
    load_rows();
}

bool fbc_backends_read(void)
{
    return __atomic_load_n(&rows_read, __ATOMIC_ACQUIRE);
}

size_t fbc_rows_count(void)
{
    rows_ready();
    return nrows;
}

const fbr_backend *fbc_row_at(size_t i)
{
    rows_ready();
    return i < nrows ? &rows[i] : NULL;
}

long fbc_row_for(const char *symbol, const char *path, unsigned *exit)
{
    rows_ready();
    long first = -1;
    unsigned first_exit = 0;
    /* Later rows first: a descriptor file or a declared exit overrides a built-in row. */
    for (size_t i = nrows; i-- > 0;)
        for (int k = 0; k < rows[i].nexits; k++) {
            if (strcmp(rows[i].exit[k].symbol, symbol))
                continue;
            if (path && fbr_backend_library(&rows[i], path)) {
                *exit = (unsigned)k;
                return (long)i;
            }
            if (first < 0) {
                first = (long)i;
                first_exit = (unsigned)k;
            }
        }
    *exit = first_exit;
    return first;
}

/* The module's accessors, looked up at their first use, not when it is bound: a backend is
 * bound from inside the loader too (a library's constructor calling dlsym while the backend's
 * own dependencies are not yet initialized), where asking the loader for the module would
 * run their constructors out of order. The handle is kept: the backend stays mapped. */
static fbc_bmod *accessors_of(const fbc_bmod *cb)
{
    fbc_bmod *b = (fbc_bmod *)cb; /* a once of its own: readers see a constant table */
    if (__atomic_load_n(&b->acc_state, __ATOMIC_ACQUIRE) == 2)
        return b;
    int expect = 0;
    if (__atomic_compare_exchange_n(&b->acc_state, &expect, 1, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        /* The defining module's own (and its dependencies'), never the process's: another
         * backend's function of the same name must not read this one's tensors. A row that
         * names none opens nothing: dlopen of a library loaded as another's dependency maps
         * its whole dependency graph by name (libtorch_cpu's: 5 ms of a torch process). */
        bool any = false;
        for (int a = 0; a < FBR_ACC_COUNT; a++)
            any = any || b->row->accessor[a][0];
        void *h = any ? dlopen(b->path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
        for (int a = 0; h && a < FBR_ACC_COUNT; a++)
            if (b->row->accessor[a][0])
                b->acc[a] = dlsym(h, b->row->accessor[a]);
        __atomic_store_n(&b->acc_state, 2, __ATOMIC_RELEASE);
    }
    while (__atomic_load_n(&b->acc_state, __ATOMIC_ACQUIRE) != 2)
        sched_yield();
    return b;
}

fbc_bmod *fbc_bmod_bind(long row, const void *fn)
{
    Dl_info di;
    if (row < 0 || (size_t)row >= nrows || !dladdr(fn, &di) || !di.dli_fname)
        return NULL;
    uintptr_t base = (uintptr_t)di.dli_fbase;
    pthread_mutex_lock(&lock);
    fbc_bmod *b = NULL;
    for (size_t i = 0; i < nbmods && !b; i++)
        if (bmods[i].row == &rows[row] && bmods[i].base == base)
            b = &bmods[i];
    if (!b && nbmods < FBC_MAX_BMODS) {
        b = &bmods[nbmods];
        memset(b, 0, sizeof *b);
        b->row = &rows[row];
        b->index = (unsigned)nbmods;
        b->base = base;
        snprintf(b->path, sizeof b->path, "%s", di.dli_fname);
        __atomic_store_n(&nbmods, nbmods + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return b;
}

size_t fbc_bmod_count(void)
{
    return __atomic_load_n(&nbmods, __ATOMIC_ACQUIRE);
}

const fbc_bmod *fbc_bmod_at(size_t i)
{
    return i < fbc_bmod_count() ? &bmods[i] : NULL;
}

bool fbc_backend_seen(void)
{
    return fbc_bmod_count() > 0;
}

typedef struct {
    uintptr_t self; /* the shim's own load base: its definitions are no backend */
    bool found;
} scan;

/* The module's own definitions of the rows' exits (its hash table: no loader call, nothing
 * left for dlerror, nothing run in a process that is finishing). */
static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    scan *sc = data;
    if (!info->dlpi_name || !info->dlpi_name[0] || info->dlpi_addr == sc->self)
        return 0;
    for (size_t r = 0; r < nrows; r++)
        for (int k = 0; k < rows[r].nexits; k++) {
            void *f = fbc_module_definition(info, rows[r].exit[k].symbol);
            unsigned e;
            if (f && fbc_bmod_bind(fbc_row_for(rows[r].exit[k].symbol, info->dlpi_name, &e), f))
                sc->found = true;
        }
    return 0;
}

bool fbc_backend_loaded(void)
{
    if (fbc_backend_seen())
        return true;
    extern const ElfW(Ehdr) __ehdr_start; /* this library's first byte: its load base */
    rows_ready();
    scan sc = {(uintptr_t)&__ehdr_start, false};
    dl_iterate_phdr(visit, &sc);
    return sc.found;
}

/* ---- the accessors ------------------------------------------------------------------ */

typedef int (*int_of_tensor)(const void *);
typedef const int64_t *(*dims_of_tensor)(const void *);
typedef const char *(*name_of_dtype)(int);
typedef size_t (*stats_fn)(fbc_stats_entry *, size_t);
typedef uint64_t (*clock_fn)(void);

/* A looked-up accessor as its function type. */
#define ACC(b, id, type, name)                                                                     \
    type name;                                                                                     \
    memcpy(&name, &accessors_of(b)->acc[id], sizeof name)

bool fbc_bmod_shape(const fbc_bmod *b, const void *t, int *rank, const int64_t **dims, int *dtype)
{
    ACC(b, FBR_ACC_RANK, int_of_tensor, rank_fn);
    ACC(b, FBR_ACC_SHAPE, dims_of_tensor, shape_fn);
    ACC(b, FBR_ACC_DTYPE, int_of_tensor, dtype_fn);
    if (!t || !rank_fn || !shape_fn || !dtype_fn)
        return false;
    *rank = rank_fn(t);
    *dims = shape_fn(t);
    *dtype = dtype_fn(t);
    return true;
}

const char *fbc_bmod_dtype_name(const fbc_bmod *b, int dtype)
{
    if (b->dtype_name)
        return b->dtype_name(dtype);
    ACC(b, FBR_ACC_DTYPE_NAME, name_of_dtype, fn);
    return fn ? fn(dtype) : NULL;
}

size_t fbc_bmod_stats(const fbc_bmod *b, fbc_stats_entry *entries, size_t cap)
{
    ACC(b, FBR_ACC_STATS, stats_fn, fn);
    return fn ? fn(entries, cap) : 0;
}

uint64_t fbc_bmod_started(const fbc_bmod *b)
{
    ACC(b, FBR_ACC_STARTED, clock_fn, fn);
    return fn ? fn() : 0;
}

bool fbc_bmod_timed(const fbc_bmod *b)
{
    /* Not looked up here: a crash dump's head asks, from a signal handler. An event, or the
     * counters a dump reads first, has looked them up. */
    return __atomic_load_n(&b->acc_state, __ATOMIC_ACQUIRE) == 2 && b->acc[FBR_ACC_STARTED];
}

bool fbc_bmod_has_stats(const fbc_bmod *b)
{
    return accessors_of(b)->acc[FBR_ACC_STATS] != NULL;
}

void fbc_backends_fork(int phase)
{
    fbc_mutex_fork(&lock, phase);
}

/* The counters as the backend keeps them, since its start. */
static bool raw_counters(const fbc_bmod *b, uint64_t *native, uint64_t *fallback, uint64_t *host)
{
    *native = *fallback = *host = 0;
    if (!fbc_bmod_has_stats(b))
        return false;
    size_t n = fbc_bmod_stats(b, NULL, 0);
    fbc_stats_entry *e = calloc(n + 1, sizeof *e);
    if (!e)
        return false;
    n = fbc_bmod_stats(b, e, n);
    for (size_t i = 0; i < n; i++) {
        *native += e[i].native;
        *fallback += e[i].fallback;
        *host += e[i].host;
    }
    free(e);
    return true;
}

static uint64_t since(uint64_t now, uint64_t base)
{
    return now > base ? now - base : 0;
}

bool fbc_bmod_counters(const fbc_bmod *b, uint64_t *native, uint64_t *fallback, uint64_t *host)
{
    if (!raw_counters(b, native, fallback, host))
        return false;
    *native = since(*native, __atomic_load_n(&b->base_native, __ATOMIC_RELAXED));
    *fallback = since(*fallback, __atomic_load_n(&b->base_fallback, __ATOMIC_RELAXED)) +
                __atomic_load_n(&b->refused, __ATOMIC_RELAXED);
    *host = since(*host, __atomic_load_n(&b->base_host, __ATOMIC_RELAXED));
    return true;
}

void fbc_bmod_unrun(const fbc_bmod *b)
{
    if (b)
        __atomic_add_fetch(&bmods[b->index].refused, 1, __ATOMIC_RELAXED);
}

void fbc_backends_window(void)
{
    for (size_t i = 0; i < fbc_bmod_count(); i++) {
        fbc_bmod *b = &bmods[i];
        uint64_t n, f, h;
        if (!raw_counters(b, &n, &f, &h))
            continue;
        __atomic_store_n(&b->base_native, n, __ATOMIC_RELAXED);
        __atomic_store_n(&b->base_fallback, f, __ATOMIC_RELAXED);
        __atomic_store_n(&b->base_host, h, __ATOMIC_RELAXED);
        __atomic_store_n(&b->refused, 0, __ATOMIC_RELAXED);
    }
}

uint64_t fbc_backends_work(void)
{
    uint64_t sum = 0, native, fallback, host;
    for (size_t i = 0; i < fbc_bmod_count(); i++)
        if (raw_counters(fbc_bmod_at(i), &native, &fallback, &host))
            sum += native + fallback + host;
    return sum;
}

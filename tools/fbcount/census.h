/* census.h - merging dumps into one census.
 *
 * A census holds dumps of several processes and runs. A process that wrote several dumps
 * (snapshots, then its exit dump) is counted once, from its latest dump, because every
 * dump of a process is cumulative. Aggregated views are built on first request.
 */
#ifndef FBCOUNT_CENSUS_H
#define FBCOUNT_CENSUS_H

#include "dump.h"

typedef struct fbc_census fbc_census;

typedef enum { FBC_BY_OP, FBC_BY_SITE, FBC_BY_STACK, FBC_BY_SHAPE } fbc_by;
typedef enum { FBC_SORT_BYTES, FBC_SORT_COUNT } fbc_sort;

/* One part of a row: a site of an op row, an op of a site row. */
typedef struct {
    const char *name;
    uint64_t count, bytes;
} fbc_part;

/* Stack rows keep at most this many frames, the innermost ones (the op and its callers
 * matter most), so a hostile dump cannot make the flame graph recurse without bound. */
#define FBC_MAX_FRAMES 512

/* One line of a table. has_bytes is false where the dump format carries counts only
 * (shapes). frames (stack rows only) run outermost first. */
typedef struct {
    const char *key;
    fbd_kind kind;
    uint64_t count, bytes, max_bytes;
    bool has_bytes;
    fbc_part *parts;
    size_t nparts;
    const char **frames;
    size_t nframes;
} fbc_row;

typedef struct {
    size_t dumps, processes, superseded; /* superseded: older dumps of a kept process */
    fbd_total total;
    fbd_backend backend; /* present when any dump had "backend"; sums over those */
    size_t crashed;      /* dumps with reason "crash" */
} fbc_summary;

fbc_census *fbc_census_new(void);
void fbc_census_free(fbc_census *c);

/* Adds d, taking ownership. When c already holds a dump of the same process (host, pid,
 * exe), the one with the higher seq is kept and the other freed. Returns 0 or -1 (OOM). */
int fbc_census_add(fbc_census *c, fbd_dump *d);

/* Loads each path: a dump file, or a directory meaning every *.json in it (not hidden,
 * not recursive). Stops at the first bad file, returns its status and message. */
fbd_status fbc_census_load(fbc_census *c, char *const *paths, size_t n, char *err,
                           size_t errlen);

fbc_summary fbc_census_summary(const fbc_census *c);

/* Kept dumps, for tools that work per dump. */
size_t fbc_census_ndumps(const fbc_census *c);
fbd_dump *fbc_census_dump(const fbc_census *c, size_t i);

/* The rows of one table, sorted descending by the chosen key (ties by the other, then
 * by name). NULL with *n == 0 when empty or out of memory. */
const fbc_row *fbc_census_rows(fbc_census *c, fbd_kind kind, fbc_by by, fbc_sort sort,
                               size_t *n);

/* The row with this key, or NULL. */
const fbc_row *fbc_census_find(fbc_census *c, fbd_kind kind, fbc_by by, const char *key);

/* The name a frame gets in tables and flame graphs: symbol, else module+offset. */
void fbc_frame_label(const fbd_frame *f, char *buf, size_t len);

#endif

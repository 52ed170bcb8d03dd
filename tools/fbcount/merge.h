/* merge.h - merging dumps into one census.
 *
 * A census holds dumps of several processes and runs. A process that wrote several dumps
 * (snapshots, then its exit dump) is counted once, from its latest dump, because every
 * dump of a process is cumulative. Aggregated views are built on first request.
 */
#ifndef FBCOUNT_MERGE_H
#define FBCOUNT_MERGE_H

#include "dump.h"

typedef struct fbm_census fbm_census;

typedef enum { FBM_BY_OP, FBM_BY_SITE, FBM_BY_STACK, FBM_BY_SHAPE } fbm_by;
typedef enum { FBM_SORT_BYTES, FBM_SORT_COUNT } fbm_sort;

/* One part of a row: a site of an op row, an op of a site row. */
typedef struct {
    const char *name;
    uint64_t count, bytes;
} fbm_part;

/* Stack rows keep at most this many frames, the innermost ones (the op and its callers
 * matter most), so a hostile dump cannot make the flame graph recurse without bound. */
#define FBM_MAX_FRAMES 512

/* One line of a table. has_bytes is false where the dump format carries counts only
 * (shapes). frames (stack rows only) run outermost first. */
typedef struct {
    const char *key;
    fbd_kind kind;
    uint64_t count, bytes, max_bytes;
    bool has_bytes;
    fbm_part *parts;
    size_t nparts;
    const char **frames;
    size_t nframes;
} fbm_row;

typedef struct {
    size_t dumps, processes, superseded; /* superseded: older dumps of a kept process */
    fbd_total total;
    fbd_backend backend; /* present when any dump had "backend"; sums over those */
    size_t crashed;      /* dumps with reason "crash" */
} fbm_summary;

fbm_census *fbm_census_new(void);
void fbm_census_free(fbm_census *c);

/* Adds d, taking ownership. When c already holds a dump of the same process (host, pid,
 * exe), the one with the higher seq is kept and the other freed. Returns 0 or -1 (OOM). */
int fbm_census_add(fbm_census *c, fbd_dump *d);

/* Loads each path: a dump file, or a directory meaning every *.json in it (not hidden,
 * not recursive). Stops at the first bad file, returns its status and message. */
fbd_status fbm_census_load(fbm_census *c, char *const *paths, size_t n, char *err,
                           size_t errlen);

fbm_summary fbm_census_summary(const fbm_census *c);

/* Kept dumps, for tools that work per dump. */
size_t fbm_census_ndumps(const fbm_census *c);
fbd_dump *fbm_census_dump(const fbm_census *c, size_t i);

/* The rows of one table, sorted descending by the chosen key (ties by the other, then
 * by name). NULL with *n == 0 when empty or out of memory. */
const fbm_row *fbm_census_rows(fbm_census *c, fbd_kind kind, fbm_by by, fbm_sort sort,
                               size_t *n);

/* The row with this key, or NULL. */
const fbm_row *fbm_census_find(fbm_census *c, fbd_kind kind, fbm_by by, const char *key);

/* The name a frame gets in tables and flame graphs: symbol, else module+offset. */
void fbm_frame_label(const fbd_frame *f, char *buf, size_t len);

#endif

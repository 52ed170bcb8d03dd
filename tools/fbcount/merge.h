/* merge.h - merging dumps into one census.
 *
 * A census holds dumps of several processes and runs. Successive dumps of one process
 * image (checkpoints, snapshots, then its signal or exit dump: the same process.id, or in
 * older dumps the same host, pid and executable) are states of one census: the latest
 * (highest seq) is counted once, never added to the others. Aggregated views are built on
 * first request. Sums over dumps saturate at FBM_SAT_MAX instead of wrapping.
 */
#ifndef FBCOUNT_MERGE_H
#define FBCOUNT_MERGE_H

#include "dump.h"

typedef struct fbm_census fbm_census;

typedef enum {
    FBM_BY_OP, FBM_BY_SITE, FBM_BY_STACK, FBM_BY_SHAPE, FBM_BY_RANK, FBM_BY_HOST,
    FBM_BY_PROCESS, FBM_NBY
} fbm_by;
typedef enum { FBM_SORT_BYTES, FBM_SORT_COUNT, FBM_SORT_TIME } fbm_sort;
/* How a frame is named: by its function, or by function and call line, so that five
 * calls from one function on five lines are five frames. */
typedef enum { FBM_FRAMES_FUNC, FBM_FRAMES_LINE } fbm_frames;

/* Sums saturate here: the largest value a JSON reader with 64-bit signed integers takes. */
#define FBM_SAT_MAX ((uint64_t)INT64_MAX)

/* One part of a row: a site of an op row, an op of a site, rank, host or process row.
 * name is for people (demangled, with file:line where known); raw is the dump's name. */
typedef struct {
    const char *name, *raw, *file;
    long line;
    uint64_t count, bytes, ns;
} fbm_part;

/* Stack rows keep at most this many frames, the innermost ones (the op and its callers
 * matter most), so a hostile dump cannot make the flame graph recurse without bound. */
#define FBM_MAX_FRAMES 512

/* One line of a table. key is the row's name for people; the other fields name what the
 * row groups in the dump's terms. has_bytes is false where the dump format carries counts
 * only (shapes). */
typedef struct {
    const char *key;
    fbd_kind kind;
    uint64_t count, bytes, max_bytes, ns, max_ns;
    bool has_bytes;
    fbm_part *parts;
    size_t nparts;
    const char *op;                /* op and stack rows */
    const char *site, *file;       /* site and stack rows: the raw site; site rows: file */
    long line;                     /* site rows, 0 when unknown */
    bool python;                   /* site rows: a Python site */
    const char **labels;           /* stack rows: frame names, outermost first (pool strings) */
    const fbd_frame *const *frames; /* stack rows: the frames, outermost first */
    size_t nframes;
    const fbd_dump *dump;          /* process rows: the census's kept dump */
    const char *host;              /* host and process rows */
    long rank;                     /* rank and process rows, -1 when none */
    void *priv;
} fbm_row;

typedef struct {
    size_t dumps, processes, superseded; /* superseded: older states of a kept census */
    size_t filtered;                     /* dumps left out by a filter (fbm_census_where) */
    fbd_total total;
    fbd_backend backend;  /* present when any dump had "backend"; sums over those */
    size_t crashed;       /* kept dumps with reason "crash" */
    size_t signalled;     /* kept dumps with reason "signal": the process died by it */
    size_t checkpoints;   /* kept dumps with reason "checkpoint": killed without a final dump */
    size_t snapshots;     /* kept dumps with reason "snapshot": still running when taken */
    size_t timed;         /* kept dumps that carry times */
    uint64_t elapsed_ns;  /* sum of process.elapsed_ns over the dumps that have it */
    size_t with_elapsed;
    bool saturated;       /* a total reached FBM_SAT_MAX */
} fbm_summary;

fbm_census *fbm_census_new(void);
void fbm_census_free(fbm_census *c);

/* Keeps only dumps whose field matches value: rank, pid, host, or exe (the path or its
 * base name). Several values of one field match any of them; different fields must all
 * match. Call before adding dumps. Returns 0, or -1 for an unknown field or a bad number. */
int fbm_census_where(fbm_census *c, const char *field, const char *value);

/* How frames are named in stack rows (default FBM_FRAMES_FUNC); drops built tables. */
void fbm_census_set_frames(fbm_census *c, fbm_frames mode);

/* Adds d, taking ownership. When c already holds a state of the same census, the one with
 * the higher seq is kept and the other freed. Returns 0 or -1 (OOM). */
int fbm_census_add(fbm_census *c, fbd_dump *d);

/* Loads each path: a dump file, or a directory meaning every *.json in it (not hidden,
 * not recursive). Stops at the first bad file, returns its status and message. */
fbd_status fbm_census_load(fbm_census *c, char *const *paths, size_t n, char *err,
                           size_t errlen);

fbm_summary fbm_census_summary(const fbm_census *c);

/* Kept dumps, one per census, for tools that work per dump. */
size_t fbm_census_ndumps(const fbm_census *c);
fbd_dump *fbm_census_dump(const fbm_census *c, size_t i);

/* The rows of one table, sorted descending by the chosen key (ties by the others, then
 * by name). NULL with *n == 0 when empty or out of memory. */
const fbm_row *fbm_census_rows(fbm_census *c, fbd_kind kind, fbm_by by, fbm_sort sort,
                               size_t *n);

/* The row with this key, or NULL (not for stack rows, whose keys repeat). */
const fbm_row *fbm_census_find(fbm_census *c, fbd_kind kind, fbm_by by, const char *key);

/* The name a frame gets in tables and flame graphs: the demangled symbol, else
 * module+offset, else the address; Python frames and line mode add " (file:line)". */
void fbm_frame_label(const fbd_frame *f, fbm_frames mode, char *buf, size_t len);

/* Whether any kept dump carries times. */
bool fbm_census_has_time(const fbm_census *c);

#endif

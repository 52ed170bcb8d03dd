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
    FBM_BY_OP,
    FBM_BY_SITE,
    FBM_BY_STACK,
    FBM_BY_SHAPE,
    FBM_BY_RANK,
    FBM_BY_HOST,
    FBM_BY_PROCESS,
    FBM_BY_BACKEND,
    FBM_NBY
} fbm_by;
typedef enum { FBM_SORT_BYTES, FBM_SORT_COUNT, FBM_SORT_TIME } fbm_sort;
/* How a frame is named: by its function, or by function and call line, so that five
 * calls from one function on five lines are five frames. */
typedef enum { FBM_FRAMES_FUNC, FBM_FRAMES_LINE } fbm_frames;

/* Sums saturate here: the largest value a JSON reader with 64-bit signed integers takes. */
#define FBM_SAT_MAX ((uint64_t)INT64_MAX)

/* One part of a row: a site of an op row, an op of a site, rank, host, process or backend
 * row. name is for people (demangled, with file:line where known; an op with its backend
 * where the census has several); raw is the dump's name. unknown: calls whose bytes the
 * backend could not read (bytes counts the others). */
typedef struct {
    const char *name, *raw, *file, *backend;
    long line;
    bool python;
    uint64_t count, bytes, ns, unknown;
} fbm_part;

/* Stack rows keep at most this many frames, the innermost ones (the op and its callers
 * matter most), so a hostile dump cannot make the flame graph recurse without bound. */
#define FBM_MAX_FRAMES 512

/* One line of a table. key is the row's name for people; the other fields name what the
 * row groups in the dump's terms. Rows of op, stack and shape tables belong to one backend
 * (backend), and a row's identity is its backend and key. has_bytes is false where the
 * bytes are not known at all; unknown counts the calls whose bytes the backend could not
 * read (bytes then sums the others). */
typedef struct {
    const char *key, *backend; /* backend NULL in site, rank, host and process rows */
    fbd_kind kind;
    uint64_t count, bytes, max_bytes, ns, max_ns, unknown;
    bool has_bytes, has_time;
    bool split_timed; /* some of its calls have no time of their own: their split's (ggml) */
    fbm_part *parts;
    size_t nparts;
    const char *op;                 /* op and stack rows */
    const char *site, *file;        /* site and stack rows: the raw site; site rows: file */
    long line;                      /* site rows, 0 when unknown */
    bool python;                    /* site rows: a Python site */
    const char **labels;            /* stack rows: frame names, outermost first (pool strings) */
    const fbd_frame *const *frames; /* stack rows: the frames, outermost first */
    const unsigned char *roles; /* stack rows: each frame's fbm_role (fold.h), outermost first */
    size_t nframes;
    const fbd_dump *dump; /* process rows: the census's kept dump */
    const char *host;     /* host and process rows */
    long rank;            /* rank and process rows, -1 when none */
    void *priv;
} fbm_row;

typedef struct {
    size_t dumps, processes, superseded; /* superseded: older states of a kept census */
    size_t filtered;                     /* dumps left out by a filter (fbm_census_where) */
    bool backend_filter;                 /* rows of some backends left out (--where backend=) */
    fbd_total total;                     /* of the backends --where keeps */
    fbd_counters backend; /* libvkt's: present when any dump had "backend"; sums over those */
    size_t crashed;       /* kept dumps with reason "crash" */
    size_t signalled;     /* kept dumps with reason "signal": the process died by it */
    size_t checkpoints;   /* kept dumps with reason "checkpoint": killed without a final dump */
    size_t snapshots;     /* kept dumps with reason "snapshot": still running when taken */
    size_t timed;         /* kept dumps that carry times */
    uint64_t elapsed_ns;  /* sum of process.elapsed_ns over the dumps that have it */
    size_t with_elapsed;
    bool saturated; /* a total reached FBM_SAT_MAX */
} fbm_summary;

fbm_census *fbm_census_new(void);
void fbm_census_free(fbm_census *c);

/* Keeps only dumps whose field matches value: rank, pid, host, or exe (the path or its
 * base name). Several values of one field match any of them; different fields must all
 * match. Call before adding dumps. Returns 0, -1 for an unknown field or a bad number, -2
 * when out of memory. */
int fbm_census_where(fbm_census *c, const char *field, const char *value);

/* Whether a filter selects nothing, once the dumps are added: a value of a field that no
 * dump (or no backend) matched, or fields that together leave no dump. msg then says which,
 * with the values the field had ("--where exe=python3 selects no dump (exe there: python3.11,
 * lenet)"). A filter that selects nothing is a typo, never a census of zero. */
bool fbm_census_unmatched(const fbm_census *c, char *msg, size_t cap);

/* The fields --where takes, for messages and help: "rank, pid, host, exe or backend". A
 * backend filter keeps the rows, stacks and counters of those backends in every dump. exe
 * is the program as `run` announces it (argv[0]'s last part), or its executable's path or
 * that path's last part. */
const char *fbm_where_help(void);

/* Whether rows of this backend are kept (no backend filter, or one that names it). */
bool fbm_census_keeps_backend(const fbm_census *c, const char *backend);

/* The backends of the kept rows, stacks and backends[] entries, sorted by name. */
const char *const *fbm_census_backends(fbm_census *c, size_t *n);

/* The counters of one backend summed over the kept dumps: backends[] entries of that name,
 * and for "vkt" the top-level "backend" of dumps without one. */
fbd_counters fbm_census_counters(fbm_census *c, const char *backend);

/* How frames are named in stack rows (default FBM_FRAMES_FUNC); drops built tables. */
void fbm_census_set_frames(fbm_census *c, fbm_frames mode);

/* Adds d, taking ownership. When c already holds a state of the same census, the one with
 * the higher seq is kept and the other freed. Returns 0 or -1 (OOM). */
int fbm_census_add(fbm_census *c, fbd_dump *d);

/* Names the frames of a raw census as it is loaded (a crash dump, or an exit dump of a
 * process killed before it named them): returns the named dump, taking d over, or d itself
 * where it cannot (the modules are not here). */
typedef fbd_dump *(*fbm_namer)(fbd_dump *d, const char *path);
void fbm_census_set_namer(fbm_census *c, fbm_namer namer);

/* Whether a dump in a folder that cannot be read is skipped, its message kept
 * (fbm_census_skipped), or stops the load (the default: a gate never passes data it did not
 * read). A dump named on its own is read or refused either way. */
void fbm_census_set_lenient(fbm_census *c, bool lenient);
/* The messages of the dumps skipped so far ("path: why"), in the order met. */
const char *const *fbm_census_skipped(const fbm_census *c, size_t *n);

/* Loads each path: a dump file, or a directory meaning every *.json in it (not hidden,
 * not recursive). Stops at the first bad file, returns its status and message, unless the
 * census is lenient. */
fbd_status fbm_census_load(fbm_census *c, char *const *paths, size_t n, char *err, size_t errlen);

fbm_summary fbm_census_summary(const fbm_census *c);

/* Kept dumps, one per census, for tools that work per dump. */
size_t fbm_census_ndumps(const fbm_census *c);
fbd_dump *fbm_census_dump(const fbm_census *c, size_t i);

/* The rows of one table, sorted descending by the chosen key (ties by the others, then
 * by name). NULL with *n == 0 when empty or out of memory. */
const fbm_row *fbm_census_rows(fbm_census *c, fbd_kind kind, fbm_by by, fbm_sort sort, size_t *n);

/* The row of this backend and key (the backend counts in op and shape tables only), or NULL
 * (not for stack rows, whose keys repeat). */
const fbm_row *fbm_census_find(fbm_census *c, fbd_kind kind, fbm_by by, const char *backend,
                               const char *key);

/* The name a frame gets in tables and flame graphs: the demangled symbol, else
 * module+offset, else the address; Python frames and line mode add " (file:line)". */
void fbm_frame_label(const fbd_frame *f, fbm_frames mode, char *buf, size_t len);

/* Whether any kept dump carries times. */
bool fbm_census_has_time(const fbm_census *c);

#endif

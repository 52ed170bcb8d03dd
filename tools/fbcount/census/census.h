/* census.h - the merger's state, shared by its two halves: merge.c keeps the censuses
 * (which dumps count, filters, totals) and rows.c builds their tables. Private to them.
 */
#ifndef FBCOUNT_CENSUS_H
#define FBCOUNT_CENSUS_H

#include <uthash.h>

#include "merge.h"
#include "pool.h"

typedef struct proc_entry {
    char *key; /* process.id, else host \x1f pid \x1f exe */
    fbd_dump *dump;
    UT_hash_handle hh;
} proc_entry;

typedef struct part_acc {
    const char *name;
    fbm_part part;
    UT_hash_handle hh;
} part_acc;

typedef struct row_acc {
    UT_hash_handle hh;
    size_t index;
    part_acc *parts;
    size_t keylen;
    unsigned char key[];
} row_acc;

typedef struct {
    bool built;
    fbm_row *rows;
    size_t n, cap;
    row_acc *map;
    uint64_t gen;    /* by stack: marks the rows this build found (stack_row) */
    fbm_sort sorted; /* the order rows are in, valid when sorted_ok */
    bool sorted_ok;
} table;

/* --where fields: those of a process, and the backend (a filter on rows, not dumps). */
enum { W_RANK, W_PID, W_HOST, W_EXE, W_BACKEND, W_N };

struct fbm_census {
    proc_entry *procs;
    fbd_dump **order; /* kept dumps in insertion order */
    size_t ndumps, cap, added, filtered;
    char **where[W_N];
    size_t nwhere[W_N];
    bool *hit[W_N];   /* each --where value: some dump (or backend) matched it */
    char **seen[W_N]; /* the values each field had in the dumps read (the first 32) */
    size_t nseen[W_N];
    fbm_frames frames;
    fbp_pool *pool;
    fbp_map *labels;   /* frame -> its label */
    fbp_map *interned; /* a dump's string -> the census's copy */
    table tables[FBD_NKINDS][FBM_NBY];
    uint64_t builds;       /* tables built so far: each build's generation */
    const char **backends; /* fbm_census_backends, NULL until asked */
    size_t nbackends;
    fbm_namer namer; /* names a raw census as it is loaded, or NULL */
    bool lenient;    /* a dump that cannot be read is skipped (listed in skipped) */
    char **skipped;  /* why each skipped dump was (its message) */
    size_t nskipped;
};

/* Sums saturate at FBM_SAT_MAX instead of wrapping. */
uint64_t fbm_sat_add(uint64_t a, uint64_t b);

/* Frees the built tables (rows.c), which point into dumps an added dump may replace. */
void fbm_free_tables(fbm_census *c);

#endif

/* table.h - the census as a table: text for people, JSON for programs.
 *
 * Text tables fit the terminal's width when the output is one (a name that does not fit
 * ends in "..."), and never cut anything otherwise; --raw gives one space-separated line
 * per row with exact numbers, for scripts. Every name is escaped (text.h).
 */
#ifndef FBCOUNT_TABLE_H
#define FBCOUNT_TABLE_H

#include <stdbool.h>
#include <stdio.h>

#include "choice.h"
#include "merge.h"

/* How a report is made: the options every writer of `report` reads (cmd_report.c). */
typedef struct {
    fbm_by by;
    fbm_sort sort;
    size_t top; /* 0: every row */
    bool raw;   /* one line per row, fields separated by one space, exact numbers */
    bool noheadings;
    size_t width;    /* columns to fit in; 0: no limit */
    fbm_sort weight; /* flame graphs: what a frame's width measures (count by default) */
    bool user_only;  /* flame graphs: the user's frames and the op only */
    size_t depth;    /* --by stack: user frames shown per row; 0: every one */
} fbt_opts;

/* The option values, as tables (choice.h): groupings (--by), orders (--sort), measures of a
 * flame graph's width (--weight) and how frames are named (--frames). */
extern const fbx_choice fbt_bys[];
extern const size_t fbt_nbys;
extern const fbx_choice fbt_sorts[];
extern const size_t fbt_nsorts;
extern const fbx_choice fbt_weights[];
extern const size_t fbt_nweights;
extern const fbx_choice fbt_frame_modes[];
extern const size_t fbt_nframe_modes;

/* The width tables fit in when writing to out: the terminal's when out is one (COLUMNS
 * overrides it), else 0 (no limit). */
size_t fbt_term_width(FILE *out);

/* One column of a table: a heading, right-aligned (numbers) or not, and whether it may be
 * cut to fit (names and lists; at most two such columns). */
typedef struct {
    const char *title;
    bool right, flex;
} fbt_col;

/* Fills the cells of row i: cells[k] is a buffer of FBT_CELL bytes for column k. */
#define FBT_CELL 8192
typedef void (*fbt_cells_fn)(void *ctx, size_t i, char **cells);

/* Prints nrows rows of ncols columns (at most 8), each line indented by two spaces, the
 * heading first unless noheadings, fitted to width. Cells are escaped here. */
void fbt_print(FILE *out, const fbt_opts *o, const fbt_col *cols, int ncols, size_t nrows,
               fbt_cells_fn fn, void *ctx);

/* Prints the summary header, the fallback table and the host-resident table. */
void fbt_print_census(FILE *out, fbm_census *c, const fbt_opts *o);

/* report --format text: fbt_print_census. Returns 0, or -1 when out failed. */
int fbt_write_text(FILE *out, fbm_census *c, const fbt_opts *o);

/* fbt_print_census with default options (fitted to out's terminal); top == 0 means every
 * row. */
void fbt_text(FILE *out, fbm_census *c, fbm_by by, fbm_sort sort, size_t top);

/* Prints the summary lines only (what report prints above its tables). */
void fbt_summary(FILE *out, fbm_census *c);

/* Bytes as a table shows them: "4.0 KiB" (raw: "4096"), "4.0 KiB+?" when some of the count
 * calls had bytes their backend could not read (unknown of them), "?" when all had. */
const char *fbt_bytes(uint64_t bytes, uint64_t unknown, uint64_t count, bool raw, char *buf,
                      size_t len);

/* Name of a grouping, as used on the command line ("op", "site", ...). */
const char *fbt_by_name(fbm_by by);

#endif

/* pprof.h - a census as a pprof profile: gzip-compressed profile.proto, the format of
 * `go tool pprof`, Pyroscope, Parca and Grafana.
 *
 * One sample per stack of each kept dump (the latest state of each census; the backends
 * --where keeps), innermost location first. Sample types, in this order (fallbacks is the
 * default):
 *   fallbacks/count  bytes/bytes  time/nanoseconds                        fallback stacks
 *   host_ops/count   host_bytes/bytes  host_time/nanoseconds              host-resident stacks
 *   transfers/count  transfer_bytes/bytes  transfer_time/nanoseconds      transfer stacks
 * Each kind is kept in types of its own rather than behind a label, so that
 * `-sample_index=fallbacks` totals fallbacks alone and equals the report's count; a sample
 * carries zeros in the types of the other kinds. Times are zero for dumps of shims that did
 * not measure them; a comment in the profile says which. Bytes a backend could not read
 * are 0.
 * Labels, all strings (pprof drops a numeric label of value 0, and Pyroscope and Parca read
 * string labels only): op, site (with file:line where a frame has it, as the report names
 * it), backend, pid, rank (where the dump has one), host, exe (base name). Locations keep
 * module and offset: each
 * module (path and build id) is one mapping placed in a synthetic address space, so that
 * the stacks of many processes, each loaded at its own address, merge. Inlined frames are
 * lines of their caller's location; Python frames are locations without a mapping whose
 * function names the script's file.
 */
#ifndef FBCOUNT_PPROF_H
#define FBCOUNT_PPROF_H

#include <stddef.h>

#include <stdio.h>

#include "table.h"

typedef enum {
    FBPP_OK = 0,
    FBPP_ETTY = 1,   /* refused: standard output is a terminal */
    FBPP_EWRITE = 2, /* the file could not be created or written */
    FBPP_ENOMEM = 3,
} fbpp_status;

/* report --format pprof: writes c to out, gzip-compressed. Returns 0, or -1 when memory ran
 * out or out failed (ferror(out) tells which). */
int fbpp_write_file(FILE *out, fbm_census *c, const fbt_opts *o);

/* Writes c to path through the command's output files (output.h: a temporary renamed into
 * place; a device, FIFO or directory refused). NULL or "-" means standard output, refused
 * with FBPP_ETTY when it is a terminal. On failure writes one line into err and returns the
 * status; nothing is left at path then. For tools that drive the writer alone. */
fbpp_status fbpp_write(fbm_census *c, const char *path, char *err, size_t errlen);

#endif

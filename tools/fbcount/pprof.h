/* pprof.h - a census as a pprof profile: gzip-compressed profile.proto, the format of
 * `go tool pprof`, Pyroscope, Parca and Grafana.
 *
 * One sample per stack of each kept dump (the latest state of each census), innermost
 * location first. Sample types, in this order (fallbacks is the default):
 *   fallbacks/count  bytes/bytes  time/nanoseconds          fallback stacks
 *   host_ops/count   host_bytes/bytes  host_time/nanoseconds  host-resident stacks
 * Host-resident work is kept in types of its own rather than behind a label, so that
 * `-sample_index=fallbacks` totals fallbacks alone and equals the report's count; a sample
 * carries zeros in the three types of the other kind. Times are zero for dumps of shims
 * that did not measure them; a comment in the profile says which.
 * Labels, all strings (pprof drops a numeric label of value 0, and Pyroscope and Parca read
 * string labels only): op, site, pid, rank (where the dump has one), host, exe (base name). Locations keep module and offset: each
 * module (path and build id) is one mapping placed in a synthetic address space, so that
 * the stacks of many processes, each loaded at its own address, merge. Inlined frames are
 * lines of their caller's location; Python frames are locations without a mapping whose
 * function names the script's file.
 */
#ifndef FBCOUNT_PPROF_H
#define FBCOUNT_PPROF_H

#include <stddef.h>

#include "merge.h"

typedef enum {
    FBPP_OK = 0,
    FBPP_ETTY = 1,   /* refused: standard output is a terminal */
    FBPP_EWRITE = 2, /* the file could not be created or written */
    FBPP_ENOMEM = 3,
} fbpp_status;

/* Writes c to path, atomically: a temporary file in the same directory renamed into place,
 * never following a symbolic link at path. NULL or "-" means standard output, refused with
 * FBPP_ETTY when it is a terminal. On failure writes one line into err and returns the
 * status; nothing is left at path then. */
fbpp_status fbpp_write(fbm_census *c, const char *path, char *err, size_t errlen);

/* Writes c to an open descriptor (not closed); name is used in messages. */
fbpp_status fbpp_write_fd(fbm_census *c, int fd, const char *name, char *err, size_t errlen);

#endif

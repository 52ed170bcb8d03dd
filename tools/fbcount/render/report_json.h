/* report_json.h - the census as JSON (fbcount-report/1, interpose/dump-format.md): the
 * report's own format, and the pieces diff, check and run reuse (frames, names, totals).
 */
#ifndef FBCOUNT_REPORT_JSON_H
#define FBCOUNT_REPORT_JSON_H

#include <stdio.h>

#include <jansson.h>

#include "table.h"

/* The census as one JSON object (new reference; NULL when out of memory). */
json_t *fbt_json(fbm_census *c, const fbt_opts *o);

/* report --format json: the same JSON written to out row by row, never holding all rows as
 * one tree (a report by stack of a million stacks). Returns 0, or -1 when out of memory or
 * out failed (ferror(out) tells which). */
int fbt_json_write(FILE *out, fbm_census *c, const fbt_opts *o);

/* A frame as JSON: the dump's fields, plus "demangled" where the symbol is a C++ name. */
json_t *fbt_frame_json(const fbd_frame *f);

/* Adds "demangled" to obj when name is a C++ name. */
void fbt_add_demangled(json_t *obj, const char *name);

/* A site as JSON members of obj: "site" (the dump's name), "demangled", "file", "line",
 * "python" where known. */
void fbt_site_json(json_t *obj, const char *site, const char *file, long line, bool python);

/* The totals of a summary as an object: fallbacks, bytes, max_bytes, host_ops, host_bytes,
 * transfers, transfer_bytes; ns, host_ns, transfer_ns when timed; bytes_unknown by kind
 * where a backend could not read sizes. */
json_t *fbt_total_json(const fbm_summary *s);

#endif

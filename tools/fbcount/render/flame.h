/* flame.h - the census as flame graphs: collapsed stacks and a self-contained SVG. */
#ifndef FBCOUNT_FLAME_H
#define FBCOUNT_FLAME_H

#include <stdbool.h>
#include <stdio.h>

#include "table.h"

/* Writes one "outer;...;inner weight" line per merged stack (fallbacks and host-resident
 * ops), the collapsed format of flamegraph.pl, speedscope and inferno, weighted by o->weight
 * (count, bytes or time in ns); o->user_only keeps the user's frames and the op. Returns 0,
 * or -1 when memory ran out or out failed (ferror(out) tells which). */
int fbf_folded(FILE *out, fbm_census *c, const fbt_opts *o);

/* Writes an interactive flame graph: hover shows frame, op, count, bytes and time; click
 * zooms. Inline CSS and script only, so it opens offline. Same options and result as
 * fbf_folded. */
int fbf_svg(FILE *out, fbm_census *c, const fbt_opts *o);

#endif

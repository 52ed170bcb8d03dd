/* flame.h - the census as flame graphs: collapsed stacks and a self-contained SVG. */
#ifndef FBCOUNT_FLAME_H
#define FBCOUNT_FLAME_H

#include <stdbool.h>
#include <stdio.h>

#include "merge.h"

/* Writes one "outer;...;inner weight" line per merged stack (fallbacks and host-resident
 * ops), the collapsed format of flamegraph.pl, speedscope and inferno. Weight is the
 * count, or bytes when by_bytes. Returns 0 or -1 when out of memory. */
int fbf_folded(FILE *out, fbm_census *c, bool by_bytes);

/* Writes an interactive flame graph: hover shows frame, op, count and bytes; click zooms.
 * Inline CSS and script only, so it opens offline. Returns 0 or -1. */
int fbf_svg(FILE *out, fbm_census *c, bool by_bytes);

#endif

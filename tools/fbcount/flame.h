/* flame.h - the census as flame graphs: collapsed stacks and a self-contained SVG. */
#ifndef FBCOUNT_FLAME_H
#define FBCOUNT_FLAME_H

#include <stdbool.h>
#include <stdio.h>

#include "merge.h"

/* What a frame's width (and a folded line's weight) measures. */
typedef enum { FBF_COUNT, FBF_BYTES, FBF_TIME } fbf_weight;

/* Writes one "outer;...;inner weight" line per merged stack (fallbacks and host-resident
 * ops), the collapsed format of flamegraph.pl, speedscope and inferno, weighted by count,
 * bytes or time (ns). Returns 0 or -1 when out of memory. */
int fbf_folded(FILE *out, fbm_census *c, fbf_weight weight);

/* Writes an interactive flame graph: hover shows frame, op, count, bytes and time; click
 * zooms.
 * Inline CSS and script only, so it opens offline. Returns 0 or -1. */
int fbf_svg(FILE *out, fbm_census *c, fbf_weight weight);

#endif

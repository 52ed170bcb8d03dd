/* metrics_report.h - a merged census as Prometheus/OpenMetrics text, through the formatter
 * the shim uses too (rules/metrics.h), for `fbcount report --format openmetrics`. */
#ifndef FBCOUNT_METRICS_REPORT_H
#define FBCOUNT_METRICS_REPORT_H

#include <stdio.h>

#include "table.h"

/* report --format openmetrics: the metrics of every kept dump of c (one set of series per
 * census: op and site rows with the process's labels, and libvkt's counters where the dump
 * has them) to out. Returns 0, or -1 when out of memory or when writing failed (ferror(out)
 * tells which). */
int fbom_write(FILE *out, fbm_census *c, const fbt_opts *o);

#endif

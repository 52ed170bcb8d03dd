/* table.h - the census as a table: text for people, JSON for programs. */
#ifndef FBCOUNT_TABLE_H
#define FBCOUNT_TABLE_H

#include <stdio.h>

#include <jansson.h>

#include "merge.h"

/* Prints the summary header, the fallback table and the host-resident table; top == 0
 * means every row. */
void fbt_text(FILE *out, fbm_census *c, fbm_by by, fbm_sort sort, size_t top);

/* The same content as a JSON object (new reference; NULL when out of memory). */
json_t *fbt_json(fbm_census *c, fbm_by by, fbm_sort sort, size_t top);

/* Name of a grouping, as used on the command line ("op", "site", ...). */
const char *fbt_by_name(fbm_by by);

#endif

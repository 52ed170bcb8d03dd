/* allow.h - the allow file: ops whose fallbacks are expected.
 *
 * Same format the shim reads from FBCOUNT_ALLOW: one op per line, a reason after '#',
 * blank lines and whole-line comments ignored, surrounding blanks trimmed.
 */
#ifndef FBCOUNT_ALLOW_H
#define FBCOUNT_ALLOW_H

#include <stdbool.h>
#include <stddef.h>

typedef struct fba_list fba_list;

/* Reads path. NULL on failure, with one line naming the file (and line) in err. */
fba_list *fba_load(const char *path, char *err, size_t errlen);

/* An empty list: nothing is allowed. */
fba_list *fba_empty(void);

bool fba_allows(const fba_list *l, const char *op);

/* The reason written after '#' for op, or "" when none or not listed. */
const char *fba_reason(const fba_list *l, const char *op);

void fba_free(fba_list *l);

#endif

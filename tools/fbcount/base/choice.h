/* choice.h - an option's values as a table: the parser looks a value up in it, the --help
 * text lists it, and an unknown value is an error that names every valid one. The man page
 * is checked against --help (tests/cmd/docs_test.py), so a value added to a table cannot
 * go undocumented.
 */
#ifndef FBCOUNT_CHOICE_H
#define FBCOUNT_CHOICE_H

#include <stddef.h>

typedef struct {
    const char *name;
    int value;
} fbx_choice;

#define FBX_NCHOICES(table) (sizeof(table) / sizeof *(table))

/* The value of the entry named val. Otherwise prints "fbcount: CMD: OPT: unknown value 'val'
 * (one of a, b, c)" and returns -1. */
int fbx_choose(const char *cmd, const char *opt, const char *val, const fbx_choice *list, size_t n);

/* The names of the list joined by sep ("op|site|stack") into buf; returns buf. */
const char *fbx_choices(const fbx_choice *list, size_t n, const char *sep, char *buf, size_t len);

/* The name of the entry whose value is value, or NULL. */
const char *fbx_choice_name(const fbx_choice *list, size_t n, int value);

#endif

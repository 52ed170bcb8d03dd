/* allow.c - parse the allow file into a small table. */
#include "allow.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

typedef struct entry {
    char *op, *reason;
    UT_hash_handle hh;
} entry;

struct fba_list {
    entry *map;
};

fba_list *fba_empty(void) { return calloc(1, sizeof(fba_list)); }

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

fba_list *fba_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open allow file: %s", path, strerror(errno));
        return NULL;
    }
    err[0] = '\0';
    fba_list *l = fba_empty();
    char *line = NULL;
    size_t cap = 0;
    long no = 0;
    while (l && getline(&line, &cap, f) >= 0) {
        no++;
        char *hash = strchr(line, '#');
        char *reason = "";
        if (hash) {
            *hash = '\0';
            reason = trim(hash + 1);
        }
        char *op = trim(line);
        if (!*op)
            continue;
        if (strpbrk(op, " \t")) {
            snprintf(err, errlen, "%s: line %ld: expected one op name, got \"%.60s\"", path, no,
                     op);
            fba_free(l);
            l = NULL;
            break;
        }
        entry *e;
        HASH_FIND_STR(l->map, op, e);
        if (e)
            continue;
        e = calloc(1, sizeof *e);
        if (!e || !(e->op = strdup(op)) || !(e->reason = strdup(reason))) {
            if (e)
                free(e->op);
            free(e);
            snprintf(err, errlen, "%s: out of memory", path);
            fba_free(l);
            l = NULL;
            break;
        }
        HASH_ADD_KEYPTR(hh, l->map, e->op, strlen(e->op), e);
    }
    free(line);
    fclose(f);
    if (!l && !err[0])
        snprintf(err, errlen, "%s: out of memory", path);
    return l;
}

bool fba_allows(const fba_list *l, const char *op)
{
    entry *e;
    HASH_FIND_STR(l->map, op, e);
    return e != NULL;
}

const char *fba_reason(const fba_list *l, const char *op)
{
    entry *e;
    HASH_FIND_STR(l->map, op, e);
    return e ? e->reason : "";
}

void fba_free(fba_list *l)
{
    if (!l)
        return;
    entry *e, *tmp;
    HASH_ITER(hh, l->map, e, tmp) {
        HASH_DEL(l->map, e);
        free(e->op);
        free(e->reason);
        free(e);
    }
    free(l);
}

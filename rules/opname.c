/* opname.c - see opname.h. */
#include "opname.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const fbr_names fbr_default_prefixes = {1, {FBR_DEFAULT_OP_PREFIX}, NULL};

const char *fbr_op_short(const char *op, const fbr_names *prefixes)
{
    if (!op)
        return op;
    for (int i = 0; prefixes && i < prefixes->n; i++) {
        size_t len = strlen(prefixes->name[i]);
        if (!strncmp(op, prefixes->name[i], len) && op[len])
            return op + len;
    }
    return op;
}

bool fbr_op_named(const char *name, const char *op, const fbr_names *prefixes)
{
    if (!name || !op)
        return false;
    return !strcmp(name, op) || !strcmp(name, fbr_op_short(op, prefixes)) ||
           !strcmp(fbr_op_short(name, prefixes), op);
}

bool fbr_op_known(const char *name, const char *const *known, size_t n, const fbr_names *prefixes)
{
    for (size_t i = 0; i < n; i++)
        if (fbr_op_named(name, known[i], prefixes))
            return true;
    return false;
}

/* Edit distance with adjacent transpositions ("dto" is one edit from "dot"), case ignored;
 * names longer than 255 bytes are never close. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 255 || lb > 255)
        return (size_t)-1;
    size_t rows[3][256], *two = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        int ca = tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= lb; j++) {
            int cb = tolower((unsigned char)b[j - 1]);
            size_t best = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && two[j - 2] + 1 < best)
                best = two[j - 2] + 1;
            cur[j] = best;
        }
        size_t *t = two;
        two = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

size_t fbr_op_closest(const char *name, const char *const *known, size_t n,
                      const fbr_names *prefixes, const char **out, size_t max)
{
    if (!name || max == 0)
        return 0;
    size_t dist[16];
    if (max > 16)
        max = 16;
    size_t got = 0;
    const char *want = fbr_op_short(name, prefixes);
    for (size_t i = 0; i < n; i++) {
        const char *k = fbr_op_short(known[i], prefixes);
        size_t lk = strlen(k), lw = strlen(want);
        size_t limit = (lk > lw ? lk : lw) / 3;
        size_t d = distance(want, k);
        if (d > (limit ? limit : 1))
            continue;
        bool dup = false;
        for (size_t j = 0; j < got && !dup; j++)
            dup = !strcmp(out[j], known[i]);
        if (dup)
            continue;
        /* Insert in order of distance, then name; drop the farthest when full. */
        size_t at = got;
        while (at > 0 &&
               (dist[at - 1] > d || (dist[at - 1] == d && strcmp(out[at - 1], known[i]) > 0)))
            at--;
        if (at == max)
            continue;
        size_t last = got < max ? got : max - 1;
        for (size_t j = last; j > at; j--) {
            out[j] = out[j - 1];
            dist[j] = dist[j - 1];
        }
        out[at] = known[i];
        dist[at] = d;
        if (got < max)
            got++;
    }
    return got;
}

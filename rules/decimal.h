/* decimal.h - an unsigned integer in decimal, without printf: the shim's signal-safe writer,
 * the metrics text and the reader's JSON paths (a million of them) all need it. */
#ifndef FBR_DECIMAL_H
#define FBR_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* Writes v's digits to out (room for 20, no NUL) and returns how many. Async-signal-safe. */
static inline size_t fbr_fmt_u64(char *out, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

#endif

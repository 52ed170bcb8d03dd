/* grow.c - see grow.h. */
#include "grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool fbr_grow(void *items, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : first;
    if (c <= *cap || c > SIZE_MAX / size)
        return false;
    void *old, *p;
    memcpy(&old, items, sizeof old); /* items is a T **: its pointer read as void * */
    if (!(p = realloc(old, c * size)))
        return false;
    memcpy(items, &p, sizeof p);
    *cap = c;
    return true;
}

/* grow.h - the one way an array of the shim and the command grows. */
#ifndef FBR_GROW_H
#define FBR_GROW_H

#include <stdbool.h>
#include <stddef.h>

/* Room for item n of the array *items (a T ** passed as void *) of *cap items of size bytes:
 * when n == *cap the array is reallocated to twice *cap (first when empty). false when out of
 * memory or past SIZE_MAX, with the array and *cap unchanged. */
bool fbr_grow(void *items, size_t *cap, size_t n, size_t size, size_t first);

#endif

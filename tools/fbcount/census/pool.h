/* pool.h - memory for many small, long-lived things: an arena, and interning of strings and
 * fixed-size records so that equal values share one copy (and compare by pointer).
 *
 * A census of a million distinct stacks repeats the same module paths, symbols and frames
 * over and over; interning them keeps the reader within a few times the file's size.
 */
#ifndef FBCOUNT_POOL_H
#define FBCOUNT_POOL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct fbp_pool fbp_pool;

/* A new, empty pool; NULL when out of memory. */
fbp_pool *fbp_new(void);

/* Frees the pool and everything allocated or interned in it. */
void fbp_free(fbp_pool *p);

/* size bytes aligned for any scalar, zeroed, alive until fbp_free; NULL when out of memory. */
void *fbp_alloc(fbp_pool *p, size_t size);

/* fbp_alloc without the zeroing, for a caller that writes every byte it reads (the command's
 * JSON trees: clearing them was a sixth of `symbolize`'s time). */
void *fbp_alloc_raw(fbp_pool *p, size_t size);

/* Whether ptr lies in memory the pool allocated (a walk over its blocks, a few dozen for
 * hundreds of MiB): for a free function shared with values malloc made. */
bool fbp_owns(const fbp_pool *p, const void *ptr);

/* The pool's copy of the len bytes at s followed by a NUL: the same pointer for equal
 * strings. NULL when out of memory. */
const char *fbp_str(fbp_pool *p, const char *s, size_t len);

/* The length of a string that fbp_str returned, read from the pool rather than counted. */
size_t fbp_strlen(const char *s);

/* The pool's copy of a record of len bytes (compared bytewise, so zero its padding): the
 * same pointer for equal records. NULL when out of memory. */
const void *fbp_intern(fbp_pool *p, const void *rec, size_t len);

/* fbp_intern with `extra` bytes after the record, zeroed when the record is new and the
 * caller's to keep a value in (comparisons never read them); at offset len, so keep len a
 * multiple of 8 for a value that needs alignment. NULL when out of memory. */
void *fbp_intern_extra(fbp_pool *p, const void *rec, size_t len, size_t extra);

/* A map from pointers to pointers, open-addressed (a million distinct frames are looked
 * up by address while a census is merged). */
typedef struct fbp_map fbp_map;

fbp_map *fbp_map_new(void);
void fbp_map_free(fbp_map *m);

/* The value slot for key (NULL when new, for the caller to fill); NULL when out of
 * memory. key must not be NULL. */
void **fbp_map_at(fbp_map *m, const void *key);

#endif

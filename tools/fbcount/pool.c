/* pool.c - an arena of large blocks plus a uthash set over the interned values.
 *
 * Interned values are stored inline after their hash entry, so interning costs one arena
 * allocation and no malloc per value.
 */
#include "pool.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#define BLOCK ((size_t)1 << 20)

typedef struct block {
    struct block *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
} block;

typedef struct entry {
    UT_hash_handle hh;
    size_t len;
    alignas(max_align_t) unsigned char value[];
} entry;

struct fbp_pool {
    block *head;
    entry *set;
    size_t bytes;
};

fbp_pool *fbp_new(void) { return calloc(1, sizeof(fbp_pool)); }

void fbp_free(fbp_pool *p)
{
    if (!p)
        return;
    HASH_CLEAR(hh, p->set);
    for (block *b = p->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(p);
}

void *fbp_alloc(fbp_pool *p, size_t size)
{
    const size_t a = alignof(max_align_t);
    size = (size + a - 1) & ~(a - 1);
    if (size == 0)
        size = a;
    block *b = p->head;
    if (!b || b->cap - b->used < size) {
        /* Oversized requests get a block of their own, behind the current one so the
         * current block's free space is not lost. */
        size_t cap = size > BLOCK / 4 ? size : BLOCK;
        block *nb = malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->used = 0;
        nb->cap = cap;
        p->bytes += sizeof *nb + cap;
        if (b && cap != BLOCK) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            p->head = nb;
        }
        b = nb;
    }
    void *r = b->data + b->used;
    b->used += size;
    memset(r, 0, size);
    return r;
}

static const void *intern(fbp_pool *p, const void *rec, size_t len, size_t extra)
{
    entry *e;
    HASH_FIND(hh, p->set, rec, len, e);
    if (e)
        return e->value;
    e = fbp_alloc(p, sizeof *e + len + extra);
    if (!e)
        return NULL;
    memcpy(e->value, rec, len);
    e->len = len;
    HASH_ADD_KEYPTR(hh, p->set, e->value, len, e);
    return e->value;
}

const char *fbp_str(fbp_pool *p, const char *s, size_t len)
{
    /* The NUL is not part of the key; fbp_alloc zeroed the byte after it. */
    return intern(p, s, len, 1);
}

const void *fbp_intern(fbp_pool *p, const void *rec, size_t len)
{
    return intern(p, rec, len, 0);
}

size_t fbp_bytes(const fbp_pool *p)
{
    return p->bytes + HASH_OVERHEAD(hh, p->set);
}

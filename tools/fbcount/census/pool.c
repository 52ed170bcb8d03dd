/* pool.c - an arena of large blocks plus an open-addressing set over the interned values.
 *
 * The set is a flat array of (hash, value) slots probed linearly, not uthash: interning a
 * million distinct frames is bound by cache misses, and a slot that carries its hash is
 * compared without touching the value, and rehashed on growth without touching it either.
 * The sets grow at three quarters full: at half, a million-stack census held 64 MiB more of
 * slots (8.1x its file instead of 7.6x) for no measurable speed.
 */
#include "pool.h"

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Blocks start at 1 MiB and double every fourth block up to 8 MiB: a small dump keeps a
 * small pool, a census of a million stacks (hundreds of MiB) takes few blocks. */
#define BLOCK ((size_t)1 << 20)
#define BLOCK_MAX_SHIFT 3

typedef struct block {
    struct block *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
} block;

/* An interned value: its length, then its bytes (and a NUL for strings). */
typedef struct {
    size_t len;
    alignas(max_align_t) unsigned char value[];
} entry;

typedef struct {
    uint64_t hash; /* 0: empty */
    entry *e;
} slot;

struct fbp_pool {
    block *head;
    slot *slots;
    size_t nslots, nitems, nblocks;
};

/* Arrays of 4 MiB and more are mapped on their own and advised onto 2 MiB transparent huge
 * pages (Debian's THP mode is "madvise"). A million-stack dump touches hundreds of MiB once,
 * and on a VM every 4 KiB fault is a hypervisor exit: `report --by stack` on a million stacks
 * took 82K faults instead of 334K and 10.5 s instead of 12.3. Mapped, not malloc'd, so that
 * freeing returns them at once: from glibc's heap, aligned blocks left 80 MiB more resident. */
#define LARGE_FROM ((size_t)4 << 20)

static void *large_alloc(size_t size)
{
    if (size < LARGE_FROM)
        return malloc(size);
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE); /* advice: failing changes nothing */
#endif
    return p;
}

/* Mapped memory is zero already: calloc's contract for both kinds. */
static void *large_zalloc(size_t size)
{
    return size < LARGE_FROM ? calloc(1, size) : large_alloc(size);
}

static void large_free(void *p, size_t size)
{
    if (!p)
        return;
    if (size < LARGE_FROM)
        free(p);
    else
        munmap(p, size);
}

fbp_pool *fbp_new(void)
{
    return calloc(1, sizeof(fbp_pool));
}

void fbp_free(fbp_pool *p)
{
    if (!p)
        return;
    for (block *b = p->head, *n; b; b = n) {
        n = b->next;
        large_free(b, sizeof *b + b->cap);
    }
    large_free(p->slots, p->nslots * sizeof *p->slots);
    free(p);
}

static void *raw_alloc(fbp_pool *p, size_t size)
{
    const size_t a = alignof(max_align_t);
    size = (size + a - 1) & ~(a - 1);
    if (size == 0)
        size = a;
    block *b = p->head;
    if (!b || b->cap - b->used < size) {
        /* Oversized requests get a block of their own, behind the current one so the
         * current block's free space is not lost. */
        size_t step = p->nblocks / 4 > BLOCK_MAX_SHIFT ? BLOCK_MAX_SHIFT : p->nblocks / 4;
        bool oversized = size > BLOCK / 4;
        size_t cap = oversized ? size : (BLOCK << step) - sizeof(block);
        block *nb = large_alloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->used = 0;
        nb->cap = cap;
        p->nblocks += !oversized;
        if (b && oversized) {
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
    return r;
}

void *fbp_alloc_raw(fbp_pool *p, size_t size)
{
    return raw_alloc(p, size);
}

bool fbp_owns(const fbp_pool *p, const void *ptr)
{
    const unsigned char *u = ptr;
    for (const block *b = p->head; b; b = b->next)
        if (u >= b->data && u < b->data + b->cap)
            return true;
    return false;
}

void *fbp_alloc(fbp_pool *p, size_t size)
{
    void *r = raw_alloc(p, size);
    if (r)
        memset(r, 0, size);
    return r;
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* FNV-1a over 8-byte words, then the bytes left, and a final mix; never 0, which marks an
 * empty slot. */
static uint64_t hash_of(const unsigned char *s, size_t len)
{
    uint64_t h = 14695981039346656037ull ^ len, w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 1099511628211ull;
    }
    for (; i < len; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    h = mix(h);
    return h ? h : 1;
}

static int grow(fbp_pool *p)
{
    size_t n = p->nslots ? p->nslots * 2 : 1024;
    if (n > SIZE_MAX / sizeof(slot))
        return -1;
    slot *s = large_zalloc(n * sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < p->nslots; i++) {
        if (!p->slots[i].hash)
            continue;
        size_t j = p->slots[i].hash & (n - 1);
        while (s[j].hash)
            j = (j + 1) & (n - 1);
        s[j] = p->slots[i];
    }
    large_free(p->slots, p->nslots * sizeof *p->slots);
    p->slots = s;
    p->nslots = n;
    return 0;
}

static const void *intern(fbp_pool *p, const void *rec, size_t len, size_t extra)
{
    if ((p->nitems + 1) * 4 > p->nslots * 3 && grow(p) != 0)
        return NULL;
    uint64_t h = hash_of(rec, len);
    size_t i = h & (p->nslots - 1);
    for (; p->slots[i].hash; i = (i + 1) & (p->nslots - 1))
        if (p->slots[i].hash == h && p->slots[i].e->len == len &&
            !memcmp(p->slots[i].e->value, rec, len))
            return p->slots[i].e->value;
    entry *e = raw_alloc(p, sizeof *e + len + extra);
    if (!e)
        return NULL;
    e->len = len;
    memcpy(e->value, rec, len);
    if (extra)
        memset(e->value + len, 0, extra);
    p->slots[i] = (slot){h, e};
    p->nitems++;
    return e->value;
}

const char *fbp_str(fbp_pool *p, const char *s, size_t len)
{
    /* The NUL is not part of the key. */
    return intern(p, s, len, 1);
}

size_t fbp_strlen(const char *s)
{
    const entry *e = (const entry *)(const void *)(s - offsetof(entry, value));
    return e->len;
}

const void *fbp_intern(fbp_pool *p, const void *rec, size_t len)
{
    return intern(p, rec, len, 0);
}

void *fbp_intern_extra(fbp_pool *p, const void *rec, size_t len, size_t extra)
{
    return (void *)intern(p, rec, len, extra);
}

struct fbp_map {
    const void **keys;
    void **values;
    size_t n, used;
};

fbp_map *fbp_map_new(void)
{
    return calloc(1, sizeof(fbp_map));
}

void fbp_map_free(fbp_map *m)
{
    if (!m)
        return;
    large_free(m->keys, m->n * sizeof *m->keys);
    large_free(m->values, m->n * sizeof *m->values);
    free(m);
}

static size_t map_find(const void *const *keys, size_t n, const void *key)
{
    size_t i = mix((uint64_t)(uintptr_t)key) & (n - 1);
    while (keys[i] && keys[i] != key)
        i = (i + 1) & (n - 1);
    return i;
}

void **fbp_map_at(fbp_map *m, const void *key)
{
    if ((m->used + 1) * 4 > m->n * 3) {
        size_t n = m->n ? m->n * 2 : 1024;
        if (n > SIZE_MAX / sizeof(void *))
            return NULL;
        const void **k = large_zalloc(n * sizeof *k);
        void **v = large_alloc(n * sizeof *v); /* a value is set when its key is (below) */
        if (!k || !v) {
            large_free(k, n * sizeof *k);
            large_free(v, n * sizeof *v);
            return NULL;
        }
        for (size_t i = 0; i < m->n; i++)
            if (m->keys[i]) {
                size_t j = map_find(k, n, m->keys[i]);
                k[j] = m->keys[i];
                v[j] = m->values[i];
            }
        large_free(m->keys, m->n * sizeof *m->keys);
        large_free(m->values, m->n * sizeof *m->values);
        m->keys = k;
        m->values = v;
        m->n = n;
    }
    size_t i = map_find(m->keys, m->n, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->values[i] = NULL;
        m->used++;
    }
    return &m->values[i];
}

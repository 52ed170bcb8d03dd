/* stacks.c - stacks deduplicated by hash (uthash), each with its count, total and largest
 * bytes and time, and the result shapes seen. Entries are also chained in insertion order
 * and never change their frames, so a crash handler can walk them without the lock. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = fbc_hash_words((keyptr), (keylen)))

#include "record.h"

_Static_assert(offsetof(fbc_entry, frames) == offsetof(fbc_entry, kind) + 16, "entry key layout");
_Static_assert(offsetof(fbc_event, frames) == offsetof(fbc_event, kind) + 16, "event key layout");
_Static_assert(offsetof(fbc_entry, kind) % 8 == 0, "entry key alignment");

size_t fbc_key_len(uint32_t nframes, uint32_t npy)
{
    return 4 * sizeof(uint32_t) + (size_t)(nframes + npy) * sizeof(uintptr_t);
}

static void add_shape(fbc_entry *e, const fbc_shape *s)
{
    for (unsigned i = 0; i < e->nshapes; i++) {
        fbc_shape *o = &e->shapes[i];
        if (o->dtype == s->dtype && o->rank == s->rank &&
            !memcmp(o->dims, s->dims, (size_t)s->rank * sizeof *s->dims)) {
            o->count++;
            return;
        }
    }
    if (e->nshapes == FBC_MAX_SHAPES)
        return;
    fbc_shape *grown = realloc(e->shapes, (e->nshapes + 1) * sizeof *grown);
    if (!grown)
        return;
    grown[e->nshapes] = *s;
    grown[e->nshapes].count = 1;
    /* The crash dump never reads shapes, so growing them in place is safe. */
    e->shapes = grown;
    e->nshapes++;
}

fbc_entry *fbc_table_add(fbc_table *t, const fbc_event *ev, bool *fresh)
{
    fbc_entry *e = NULL;
    size_t klen = fbc_key_len(ev->nframes, ev->npy), nwords = ev->nframes + ev->npy;
    HASH_FIND(hh, t->hash, &ev->kind, klen, e);
    *fresh = false;
    if (!e) {
        e = calloc(1, sizeof *e + nwords * sizeof(uintptr_t));
        if (!e)
            return NULL;
        e->kind = ev->kind;
        e->nframes = ev->nframes;
        e->npy = ev->npy;
        memcpy(e->frames, ev->frames, nwords * sizeof(uintptr_t));
        HASH_ADD_KEYPTR(hh, t->hash, &e->kind, klen, e);
        if (t->tail)
            __atomic_store_n(&t->tail->next, e, __ATOMIC_RELEASE);
        else
            __atomic_store_n(&t->head, e, __ATOMIC_RELEASE);
        t->tail = e;
        t->n++;
        *fresh = true;
    }
    /* Plain stores under the caller's lock; relaxed atomics so a crash dump may read them. */
    __atomic_store_n(&e->count, e->count + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&e->bytes, e->bytes + ev->nbytes, __ATOMIC_RELAXED);
    if (ev->nbytes > e->max_bytes)
        __atomic_store_n(&e->max_bytes, (uint64_t)ev->nbytes, __ATOMIC_RELAXED);
    __atomic_store_n(&e->ns, e->ns + ev->ns, __ATOMIC_RELAXED);
    if (ev->ns > e->max_ns)
        __atomic_store_n(&e->max_ns, ev->ns, __ATOMIC_RELAXED);
    if (ev->has_shape)
        add_shape(e, &ev->shape);
    return e;
}

void fbc_table_clear(fbc_table *t)
{
    fbc_entry *e, *tmp;
    HASH_ITER(hh, t->hash, e, tmp) {
        HASH_DEL(t->hash, e);
        free(e->shapes);
        free(e);
    }
    t->head = t->tail = NULL;
    t->n = 0;
}

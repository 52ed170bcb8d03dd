/* stacks.c - stacks deduplicated by hash (uthash), each with its count, total and largest
 * bytes and time, and the result shapes seen. Entries are also chained in insertion order
 * and never change their frames, so a crash handler can walk them without the lock. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = fbc_hash_words((keyptr), (keylen)))

#include "fields.h"
#include "record.h"

_Static_assert(offsetof(fbc_entry, frames) == offsetof(fbc_entry, kind) + 32, "entry key layout");
_Static_assert(offsetof(fbc_event, frames) == offsetof(fbc_event, kind) + 32, "event key layout");
_Static_assert(offsetof(fbc_entry, origin) == offsetof(fbc_entry, kind) + 24, "entry key layout");
_Static_assert(offsetof(fbc_event, origin) == offsetof(fbc_event, kind) + 24, "event key layout");
_Static_assert(offsetof(fbc_entry, op) == offsetof(fbc_entry, kind) + 16, "entry key layout");
_Static_assert(offsetof(fbc_event, op) == offsetof(fbc_event, kind) + 16, "event key layout");
_Static_assert(offsetof(fbc_entry, kind) % 8 == 0, "entry key alignment");

size_t fbc_key_len(uint32_t nframes, uint32_t npy)
{
    return 4 * sizeof(uint32_t) + (size_t)(2 + nframes + npy) * sizeof(uintptr_t);
}

static void add_shape(fbc_entry *e, const fbc_shape *s, size_t nbytes)
{
    for (unsigned i = 0; i < e->nshapes; i++) {
        fbc_shape *o = &e->shapes[i];
        if (o->dtype == s->dtype && o->rank == s->rank &&
            !memcmp(o->dims, s->dims, (size_t)s->rank * sizeof *s->dims)) {
            o->count++;
            o->bytes += nbytes;
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
    grown[e->nshapes].bytes = nbytes;
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
        e->backend = ev->backend;
        e->op = ev->op;
        e->origin = ev->origin;
        static uint64_t births;
        e->born = __atomic_add_fetch(&births, 1, __ATOMIC_RELAXED);
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
    /* max_bytes is the largest single tensor, never a call's tensors added up. */
    size_t big = ev->largest ? ev->largest : ev->nbytes;
    if (big > e->max_bytes)
        __atomic_store_n(&e->max_bytes, (uint64_t)big, __ATOMIC_RELAXED);
    fbc_entry_time(e, ev->ns);
    if (ev->has_shape)
        add_shape(e, &ev->shape, ev->nbytes);
    return e;
}

fbc_entry *fbc_table_find(fbc_table *t, const fbc_event *ev)
{
    fbc_entry *e = NULL;
    HASH_FIND(hh, t->hash, &ev->kind, fbc_key_len(ev->nframes, ev->npy), e);
    return e;
}

void fbc_entry_time(fbc_entry *e, uint64_t ns)
{
    __atomic_store_n(&e->ns, e->ns + ns, __ATOMIC_RELAXED);
    if (ns > e->max_ns)
        __atomic_store_n(&e->max_ns, ns, __ATOMIC_RELAXED);
}

void fbc_table_clear(fbc_table *t)
{
    fbc_entry *e, *tmp;
    HASH_ITER(hh, t->hash, e, tmp)
    {
        HASH_DEL(t->hash, e);
        free(e->shapes);
        free(e);
    }
    t->head = t->tail = NULL;
    t->n = 0;
}

const char *fbc_kind_name(fbc_kind k)
{
    static const char *const names[FBC_KINDS] = {[FBC_FALLBACK] = FBR_KIND_FALLBACK,
                                                 [FBC_HOST] = FBR_KIND_HOST,
                                                 [FBC_TRANSFER] = FBR_KIND_TRANSFER,
                                                 [FBC_SPLIT] = FBR_KIND_SPLIT};
    return (unsigned)k < FBC_KINDS ? names[k] : FBR_KIND_FALLBACK;
}

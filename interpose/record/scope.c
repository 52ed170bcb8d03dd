/* scope.c - the in-process censuses: scopes a thread opens around its own code (they nest, and
 * an event counts in every scope open on its thread), and at most one scope over the whole
 * process. A thread's scopes are touched only by that thread; the process-wide one by every
 * recording thread, under its lock. */
#include <stdlib.h>

#include "record.h"

static fbc_scope *all_scope;
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;

fbc_scope *fbc_scope_push(void)
{
    fbc_scope *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->up = fbc_t.scope;
    fbc_t.scope = s;
    return s;
}

fbc_scope *fbc_scope_pop(void)
{
    fbc_scope *s = fbc_t.scope;
    if (!s)
        return NULL;
    fbc_t.scope = s->up;
    s->up = NULL;
    return s;
}

fbc_scope *fbc_scope_open_all(void)
{
    fbc_scope *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->all_threads = true;
    pthread_mutex_lock(&all_lock);
    bool taken = all_scope != NULL;
    if (!taken)
        __atomic_store_n(&all_scope, s, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&all_lock);
    if (taken) {
        free(s);
        return NULL;
    }
    return s;
}

fbc_scope *fbc_scope_close_all(void)
{
    pthread_mutex_lock(&all_lock);
    fbc_scope *s = all_scope;
    __atomic_store_n(&all_scope, NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&all_lock);
    return s;
}

bool fbc_scope_any_all(void)
{
    return __atomic_load_n(&all_scope, __ATOMIC_RELAXED) != NULL;
}

void fbc_scope_free(fbc_scope *s)
{
    if (!s)
        return;
    fbc_table_clear(&s->table);
    free(s);
}

static void add(fbc_scope *s, const fbc_event *ev)
{
    bool fresh;
    fbc_table_add(&s->table, ev, &fresh);
    s->total[ev->kind]++;
    s->bytes[ev->kind] += ev->nbytes;
    s->ns[ev->kind] += ev->ns;
}

void fbc_scope_add(const fbc_event *ev)
{
    for (fbc_scope *s = fbc_t.scope; s; s = s->up)
        add(s, ev);
    if (!__atomic_load_n(&all_scope, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&all_lock);
    if (all_scope)
        add(all_scope, ev);
    pthread_mutex_unlock(&all_lock);
}

static void add_time(fbc_scope *s, const fbc_event *ev, uint64_t ns)
{
    fbc_entry *e = fbc_table_find(&s->table, ev);
    if (e)
        fbc_entry_time(e, ns);
    s->ns[ev->kind] += ns;
}

void fbc_scope_time(const fbc_event *ev, uint64_t ns)
{
    for (fbc_scope *s = fbc_t.scope; s; s = s->up)
        add_time(s, ev, ns);
    if (!__atomic_load_n(&all_scope, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&all_lock);
    if (all_scope)
        add_time(all_scope, ev, ns);
    pthread_mutex_unlock(&all_lock);
}

void fbc_scope_fork(int phase)
{
    fbc_mutex_fork(&all_lock, phase);
}

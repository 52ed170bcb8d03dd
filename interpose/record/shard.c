/* shard.c - the process census as one table per recording thread. A single shared table
 * made every event of every thread take one lock and write one counter: with 4 threads on
 * 2 cores an event cost 1.1 us instead of 160 ns. A thread now counts into its own shard
 * under a lock only dumps contend for; a dump merges the shards.
 *
 * Shards are never freed. A thread that exits hands its shard back with its counts in it,
 * and the next thread that records takes it over: counts are sums, so it does not matter
 * which thread's events sit in which shard, and the number of shards stays at the number of
 * threads that ever recorded at the same time. The list only grows at its head and entries
 * never move, so the crash handler walks it without a lock. */
#include <stdlib.h>

#include "record.h"

pthread_mutex_t fbc_global_lock = PTHREAD_MUTEX_INITIALIZER;

static fbc_shard *shards;  /* newest first */
unsigned fbc_shards_epoch; /* bumped when a fork child drops the parent's entries */
static pthread_key_t release_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void release(void *p)
{
    fbc_shard *s = p;
    if (fbc_t.shard == s)
        fbc_t.shard = NULL;
    __atomic_store_n(&s->in_use, 0, __ATOMIC_RELEASE);
}

static void make_key(void)
{
    if (pthread_key_create(&release_key, release) != 0)
        release_key = (pthread_key_t)-1; /* shards then stay with their threads */
}

fbc_shard *fbc_shard_claim(void)
{
    pthread_once(&key_once, make_key);
    fbc_shard *s;
    for (s = __atomic_load_n(&shards, __ATOMIC_ACQUIRE); s; s = s->next) {
        int free_ = 0;
        if (__atomic_load_n(&s->in_use, __ATOMIC_RELAXED) == 0 &&
            __atomic_compare_exchange_n(&s->in_use, &free_, 1, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            break;
    }
    if (!s) {
        /* Its own cache lines: neighbouring shards written by other threads must not share one. */
        s = aligned_alloc(64, (sizeof *s + 63) / 64 * 64);
        if (!s)
            return NULL;
        *s = (fbc_shard){.in_use = 1};
        pthread_mutex_init(&s->lock, NULL);
        /* Under the process lock so fork's prepare handler sees a stable list to lock. */
        pthread_mutex_lock(&fbc_global_lock);
        s->next = shards;
        __atomic_store_n(&shards, s, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&fbc_global_lock);
    }
    if (release_key != (pthread_key_t)-1)
        pthread_setspecific(release_key, s);
    fbc_t.shard = s;
    return s;
}

fbc_shard *fbc_shards_first(void)
{
    return __atomic_load_n(&shards, __ATOMIC_ACQUIRE);
}

uint64_t fbc_shards_events(void)
{
    uint64_t n = 0;
    for (fbc_shard *s = fbc_shards_first(); s; s = s->next)
        for (const fbc_entry *e = __atomic_load_n(&s->table.head, __ATOMIC_ACQUIRE); e;
             e = __atomic_load_n(&e->next, __ATOMIC_ACQUIRE))
            n += __atomic_load_n(&e->count, __ATOMIC_RELAXED);
    return n;
}

void fbc_shards_fork(int phase)
{
    for (fbc_shard *s = fbc_shards_first(); s; s = s->next) {
        if (phase == 0) {
            pthread_mutex_lock(&s->lock);
        } else if (phase == 1) {
            pthread_mutex_unlock(&s->lock);
        } else {
            /* The child's only thread keeps its shard, emptied; the others' threads are gone. */
            fbc_table_clear(&s->table);
            __atomic_add_fetch(&fbc_shards_epoch, 1, __ATOMIC_RELAXED);
            pthread_mutex_unlock(&s->lock);
            if (s != fbc_t.shard)
                __atomic_store_n(&s->in_use, 0, __ATOMIC_RELAXED);
        }
    }
}

void fbc_shards_abandon(void)
{
    /* Their memory is the parent's counts, copied: unreachable now, and freeing it could
     * take a malloc lock another parent thread held at the fork. */
    __atomic_store_n(&shards, NULL, __ATOMIC_RELEASE);
    __atomic_add_fetch(&fbc_shards_epoch, 1, __ATOMIC_RELAXED);
    fbc_t.shard = NULL;
    pthread_mutex_init(&fbc_global_lock, NULL);
}

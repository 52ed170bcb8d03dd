/* requests.c - what signal handlers and other threads ask of the dumper thread, and how they
 * wake it: counters and flags handlers write with atomics, work posted in order, and a
 * semaphore, whose sem_post is the one waking call POSIX allows in a signal handler. No pipe: a
 * daemon that closes every descriptor can neither cut the dumper off nor have its own file written
 * into by a handler. */
#include <errno.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "triggers.h"

/* Work posted to run on the dumper thread without the poster waiting, in posting order. Here,
 * below the dumper and the final dump, which both drain it. */
typedef struct posted {
    struct posted *next;
    void (*fn)(void *);
    void *arg;
} posted;
static pthread_mutex_t posts_lock = PTHREAD_MUTEX_INITIALIZER;
static posted *posts, **posts_end = &posts; /* under posts_lock */
/* Drains taken from the list and still running (under posts_lock): the final dump waits for
 * them, or a message formed but not yet written would end with the process. */
static int in_flight;
static pthread_cond_t flight_done = PTHREAD_COND_INITIALIZER;

unsigned fbc_req_snapshot;
int fbc_req_terminate;
int fbc_terminate_done;

static sem_t wake;
static int open_; /* the dumper is starting or running (atomic) */

bool fbc_req_open(void)
{
    int no = 0;
    if (!__atomic_compare_exchange_n(&open_, &no, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return false;
    sem_init(&wake, 0, 0);
    return true;
}

void fbc_req_close(void)
{
    __atomic_store_n(&open_, 0, __ATOMIC_RELEASE);
}

void fbc_dumper_wake(void)
{
    if (__atomic_load_n(&open_, __ATOMIC_ACQUIRE))
        sem_post(&wake);
}

bool fbc_dumper_running(void)
{
    return __atomic_load_n(&open_, __ATOMIC_ACQUIRE) != 0;
}

void fbc_req_wait(const struct timespec *until)
{
    while (sem_clockwait(&wake, CLOCK_MONOTONIC, until) != 0 && errno == EINTR)
        ;
}

void fbc_req_after_fork(void)
{
    __atomic_store_n(&open_, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&fbc_req_terminate, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&fbc_terminate_done, 0, __ATOMIC_RELEASE);
    pthread_mutex_init(&posts_lock, NULL);
    pthread_cond_init(&flight_done, NULL);
    posts = NULL; /* the parent's: its thread prints them */
    posts_end = &posts;
    in_flight = 0;
}

bool fbc_dumper_post(void (*fn)(void *), void *arg)
{
    posted *p = fbc_dumper_running() ? malloc(sizeof *p) : NULL;
    if (!p)
        return false;
    *p = (posted){NULL, fn, arg};
    pthread_mutex_lock(&posts_lock);
    *posts_end = p;
    posts_end = &p->next;
    pthread_mutex_unlock(&posts_lock);
    fbc_dumper_wake();
    return true;
}

void fbc_dumper_drain(void (*before)(void))
{
    pthread_mutex_lock(&posts_lock);
    posted *p = posts;
    posts = NULL;
    posts_end = &posts;
    bool taken = p != NULL;
    in_flight += taken;
    pthread_mutex_unlock(&posts_lock);
    if (taken && before)
        before();
    while (p) {
        posted *next = p->next;
        p->fn(p->arg);
        free(p);
        p = next;
    }
    if (taken) {
        pthread_mutex_lock(&posts_lock);
        in_flight--;
        pthread_cond_broadcast(&flight_done);
        pthread_mutex_unlock(&posts_lock);
    }
}

void fbc_dumper_finish(void)
{
    fbc_dumper_drain(NULL);
    /* Bounded: a job waiting on what the exiting thread holds must not hang the exit. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    pthread_mutex_lock(&posts_lock);
    while (in_flight > 0 && pthread_cond_timedwait(&flight_done, &posts_lock, &until) == 0)
        ;
    pthread_mutex_unlock(&posts_lock);
}

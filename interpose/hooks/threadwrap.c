/* threadwrap.c - pthread_create, interposed to remember the stack that started each thread
 * (record/origin.c): a fallback on a thread with no frame of the user's own (a worker whose
 * frames are all the runtime's and the backend's) is sited at the line that started it.
 * Only threads started by a thread that records, once the census is armed (a thread that has
 * not fallen back yet decides here: a worker started before the program's first fallback is
 * the usual case), and not the shim's own; one raw stack walk per thread start, named only if
 * a fallback carries it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hooks.h"

#ifndef FBC_NO_THREAD_WRAPPER

typedef struct {
    void *(*start)(void *);
    void *arg;
    const fbc_origin *origin;
} started;

static void *trampoline(void *p)
{
    started s = *(started *)p;
    free(p);
    fbc_origin_thread(s.origin);
    return s.start(s.arg);
}

FBC_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*start)(void *),
                              void *arg)
{
    uintptr_t lo, hi, ra = (uintptr_t)__builtin_return_address(0);
    fbc_modmap_self(&lo, &hi);
    bool own = ra >= lo && ra < hi;
    if (fbc_t.state == FBC_T_UNSET && !fbc_t.busy && !own && fbc_armed())
        fbc_thread_decide();
    if (fbc_t.state != FBC_T_ON || fbc_t.busy || own)
        return fbc_thread_create(t, attr, start, arg);
    started *s = malloc(sizeof *s);
    if (!s)
        return fbc_thread_create(t, attr, start, arg);
    fbc_t.busy = 1;
    *s = (started){start, arg, fbc_origin_take(FBC_ORIGIN_THREAD)};
    fbc_t.busy = 0;
    int rc = fbc_thread_create(t, attr, trampoline, s);
    if (rc)
        free(s);
    return rc;
}
#endif

/* gil_helper.c - C calls for test_pyframes.py: one that holds a mutex across a fallback (called
 * through ctypes.CDLL, the GIL released) and one that waits for that mutex (called through
 * ctypes.PyDLL, the GIL held all the while). A shim that took the GIL to read the falling-back
 * thread's Python stack would wait for it forever. */
#include <pthread.h>
#include <time.h>

#include "fakevkt.h"

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static int holding;
static fake_tensor t = {0, 1, {4}};

/* Takes the mutex, lets the other thread block on it, then falls back and lets go. */
int hold_and_fall_back(void)
{
    pthread_mutex_lock(&held);
    __atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
    nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
    int rc = vkt_dot(&t, 16);
    pthread_mutex_unlock(&held);
    return rc;
}

int is_holding(void)
{
    return __atomic_load_n(&holding, __ATOMIC_ACQUIRE);
}

/* Blocks on the mutex (its caller keeps the GIL). */
void wait_for_it(void)
{
    pthread_mutex_lock(&held);
    pthread_mutex_unlock(&held);
}

/* crash.c - a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) whose action is the
 * default: the emergency dump (dump/emergency.c), then the default action, so the process
 * dies exactly as without the shim. A signal the program handles itself (a handler that
 * recovers with siglongjmp, a crash reporter) is left to it untouched: its handler gets the
 * real fault, and the census is written by the program's own exit path.
 *
 * Only one thread writes the emergency dump; a second thread that faults meanwhile waits for
 * it (a bounded while) instead of ending the process under it. The handler runs on an
 * alternate stack where the thread has one, and the shim gives one to the threads that
 * record and to the first thread, so a stack overflow still writes the census. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "triggers.h"

static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static int state; /* 0 none, 1 writing, 2 written */

#define ALTSTACK (64 * 1024)

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    int none = 0;
    if (__atomic_compare_exchange_n(&state, &none, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        if (!fbc_final_done())
            fbc_dump_emergency(sig);
        __atomic_store_n(&state, 2, __ATOMIC_RELEASE);
    } else {
        for (int i = 0; i < 5000 && __atomic_load_n(&state, __ATOMIC_ACQUIRE) == 1; i++)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    /* The default again: a fault re-executes and dies by it, abort() raises once more. */
    fbc_sig_die(sig);
}

void fbc_crash_install(void)
{
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
        fbc_sig_take(fatal[i], on_fatal, false);
    fbc_crash_altstack();
}

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* At thread exit: the stack is switched off before it is freed (a handler cannot be on it,
 * since this runs on the thread's own stack). */
static void release(void *mem)
{
    stack_t cur, off = {.ss_flags = SS_DISABLE};
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == mem)
        sigaltstack(&off, NULL);
    free(mem);
}

static void make_key(void)
{
    if (pthread_key_create(&key, release) != 0)
        key = (pthread_key_t)-1;
}

void fbc_crash_altstack(void)
{
    stack_t old;
    if (sigaltstack(NULL, &old) != 0 || !(old.ss_flags & SS_DISABLE))
        return; /* the thread has one (the program's): it is used */
    pthread_once(&key_once, make_key);
    void *mem = malloc(ALTSTACK);
    if (!mem)
        return;
    stack_t ss = {.ss_sp = mem, .ss_size = ALTSTACK, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        free(mem);
        return;
    }
    if (key != (pthread_key_t)-1)
        pthread_setspecific(key, mem); /* the first thread's lives as long as the process */
}

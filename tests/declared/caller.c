/* caller.c - libcaller.so: a module that imports odd_ints, for the tests to dlopen later
 * (RTLD_LOCAL); built again as libcallernow.so (CALLER_RUN caller_run_now, full RELRO and
 * -z now) to load with a program. */
#include "odd.h"

#ifndef CALLER_RUN
#define CALLER_RUN caller_run
#endif

long CALLER_RUN(long n);

long CALLER_RUN(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += odd_ints(i); /* CALLER-SITE */
    return s;
}

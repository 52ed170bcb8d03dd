/* odd.c - liboddlib.so: see odd.h. */
#include <stdarg.h>
#include <time.h>

#include "odd.h"

static long calls;

#define CALLED() __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED)

long odd_calls(void)
{
    return __atomic_load_n(&calls, __ATOMIC_RELAXED);
}

double odd_mixed(long i1, long i2, long i3, long i4, long i5, long i6, long i7, long i8, double d1,
                 double d2, double d3, double d4, double d5, double d6, double d7, double d8)
{
    CALLED();
    return (double)(i1 + 2 * i2 + 3 * i3 + 4 * i4 + 5 * i5 + 6 * i6 + 7 * i7 + 8 * i8) + d1 * 0.5 +
           d2 * 0.25 + d3 * 0.125 + d4 * 2 + d5 * 4 + d6 * 8 + d7 * 16 + d8 * 32;
}

odd_pair_t odd_pair(long a, long b)
{
    CALLED();
    return (odd_pair_t){a * 3, b - 7};
}

odd_dpair_t odd_dpair(double x, double y)
{
    CALLED();
    return (odd_dpair_t){x * 1.5, y / 4};
}

odd_big_t odd_big(odd_big_t in, long k, double scale)
{
    CALLED();
    for (int i = 0; i < 6; i++)
        in.v[i] = (long)((double)(in.v[i] * k) * scale);
    return in;
}

double odd_sum(int n, ...)
{
    CALLED();
    va_list ap;
    va_start(ap, n);
    double s = 0;
    for (int i = 0; i < n; i++) {
        s += va_arg(ap, int);
        s += va_arg(ap, double);
    }
    va_end(ap);
    return s;
}

void odd_jump(jmp_buf *env, int value)
{
    CALLED();
    longjmp(*env, value);
}

long odd_ints(long x)
{
    CALLED();
    return x * 2 + 1;
}

long odd_many(long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8,
              long a9, long a10, long a11, long a12, long a13, long a14, long a15, long a16,
              long a17, long a18, long a19, long a20, long a21, long a22, long a23, long a24,
              long a25, long a26, long a27, long a28, long a29, long a30, long a31, long a32,
              long a33, long a34, long a35)
{
    CALLED();
    long a[36] = {a0,  a1,  a2,  a3,  a4,  a5,  a6,  a7,  a8,  a9,  a10, a11,
                  a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23,
                  a24, a25, a26, a27, a28, a29, a30, a31, a32, a33, a34, a35};
    long s = 0;
    for (int k = 0; k < 36; k++)
        s += a[k] * (k + 1);
    return s;
}

long odd_huge(odd_huge_t in, long extra)
{
    CALLED();
    long s = extra;
    for (int k = 0; k < 64; k++)
        s += in.v[k] * (k + 1);
    return s;
}

void odd_sleep(long us)
{
    CALLED();
    struct timespec t = {us / 1000000, us % 1000000 * 1000};
    while (nanosleep(&t, &t))
        ;
}

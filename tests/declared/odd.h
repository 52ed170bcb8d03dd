/* odd.h - the declared exits of the tests: functions of every awkward shape the x86-64 SysV
 * convention has, in liboddlib.so (odd.c) and liboddthrow.so (oddthrow.cc). Each counts its
 * calls (odd_calls), so a test sees that every call reached the original. */
#ifndef ODD_H
#define ODD_H

#include <setjmp.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    long a, b;
} odd_pair_t; /* returned in rax:rdx */
typedef struct {
    double x, y;
} odd_dpair_t; /* returned in xmm0:xmm1 */
typedef struct {
    long v[6];
} odd_big_t; /* passed on the stack, returned through memory */

long odd_calls(void);
/* 8 integer arguments (two on the stack) and 8 float ones. */
double odd_mixed(long i1, long i2, long i3, long i4, long i5, long i6, long i7, long i8, double d1,
                 double d2, double d3, double d4, double d5, double d6, double d7, double d8);
odd_pair_t odd_pair(long a, long b);
odd_dpair_t odd_dpair(double x, double y);
odd_big_t odd_big(odd_big_t in, long k, double scale);
/* n pairs of (int, double) */
double odd_sum(int n, ...);
void odd_jump(jmp_buf *env, int value) __attribute__((noreturn));
long odd_ints(long x);
/* Throws std::runtime_error("odd_throw N") (liboddthrow.so). */
void odd_throw(int n);

#ifdef __cplusplus
}
#endif

#endif

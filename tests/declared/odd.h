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
typedef struct {
    long v[64];
} odd_huge_t; /* 512 bytes on the stack: all a counted call's entry copies */

long odd_calls(void);
/* 8 integer arguments (two on the stack) and 8 float ones. */
double odd_mixed(long i1, long i2, long i3, long i4, long i5, long i6, long i7, long i8, double d1,
                 double d2, double d3, double d4, double d5, double d6, double d7, double d8);
odd_pair_t odd_pair(long a, long b);
odd_dpair_t odd_dpair(double x, double y);
odd_big_t odd_big(odd_big_t in, long k, double scale);
/* 6 integer arguments in registers, 30 on the stack: the sum of a_k * (k + 1). */
long odd_many(long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8,
              long a9, long a10, long a11, long a12, long a13, long a14, long a15, long a16,
              long a17, long a18, long a19, long a20, long a21, long a22, long a23, long a24,
              long a25, long a26, long a27, long a28, long a29, long a30, long a31, long a32,
              long a33, long a34, long a35);
/* The sum of in.v[k] * (k + 1), plus extra. */
long odd_huge(odd_huge_t in, long extra);
/* Sleeps us microseconds. */
void odd_sleep(long us);
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

/* chain.c - call chains for the capture's memo (test_capture.c), in a module of their own so
 * that the test's module stands for the shim's and these frames are the program's. Built
 * with -fomit-frame-pointer: the frame-pointer walk declines them and the memo is asked. */
#include "chain.h"

__attribute__((noinline)) static int common(int depth, int (*leaf)(void *), void *arg)
{
    volatile int keep[4] = {depth, depth + 1, depth + 2, depth + 3};
    int r = depth > 0 ? common(depth - 1, leaf, arg) : leaf(arg);
    return r + keep[0] - keep[0];
}

__attribute__((noinline)) int chain_a(int depth, int (*leaf)(void *), void *arg)
{
    volatile int keep[4] = {1, 2, 3, 4};
    int r = common(depth, leaf, arg);
    return r + keep[1] - keep[1];
}

__attribute__((noinline)) int chain_b(int depth, int (*leaf)(void *), void *arg)
{
    volatile int keep[4] = {5, 6, 7, 8};
    int r = common(depth, leaf, arg);
    return r + keep[2] - keep[2];
}

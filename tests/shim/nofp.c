/* nofp.c - frames without a frame pointer (built with -fomit-frame-pointer), between frames
 * that have one: the capture's fast path must decline them, never walk through them. */
#include "nofp.h"

/* Enough live values across the call that rbp is wanted as a general register. */
__attribute__((noinline)) int nofp_call(int depth, int (*leaf)(void *), void *arg)
{
    volatile int v[8] = {depth, depth * 3, depth * 5, depth * 7, 1, 2, 3, 4};
    int a = v[0], b = v[1], c = v[2], d = v[3], e = v[4], f = v[5], g = v[6], h = v[7];
    int r = depth > 0 ? nofp_call(depth - 1, leaf, arg) : leaf(arg);
    return r + (a ^ b) + (c ^ d) + (e ^ f) + (g ^ h) - ((a ^ b) + (c ^ d) + (e ^ f) + (g ^ h));
}

/* Few live values: rbp is left alone, so a frame-pointer chain silently skips these frames. */
__attribute__((noinline)) int nofp_plain(int depth, int (*leaf)(void *), void *arg)
{
    int r = depth > 0 ? nofp_plain(depth - 1, leaf, arg) : leaf(arg);
    return r + 1;
}

#version 450
#extension GL_GOOGLE_include_directive : require
// sum, product, reduce_max, reduce_min (TC: the accumulator, TO: the output)
// and, with -DBOOL, all/any (TC = uint 0/1, TO = u8) over any axis set.
// Floats follow the reference: max/min propagate NaN and order -0 below +0;
// any nonzero value, NaN included, is true.
#include "common.glsl"
#include "epilogue.glsl"
#include "floatbits.glsl"

#define ACC TC
layout(std430, binding = 0) readonly buffer A { TA a[]; };
layout(std430, binding = 0) readonly buffer A4 { TA4 a4[]; };
layout(std430, binding = 1) writeonly buffer O { TO o[]; };

#include "reduce.glsl"

#if defined(IS_FLOAT) && !defined(BOOL)
bool neg_(TC x)
{
#ifdef IS_F64
    return (unpackDouble2x32(x).y >> 31) != 0u;
#else
    return (floatBitsToUint(x) >> 31) != 0u;
#endif
}
TC inf_(bool neg)
{
#ifdef IS_F64
    return packDouble2x32(uvec2(0u, neg ? 0xfff00000u : 0x7ff00000u));
#else
    return uintBitsToFloat(neg ? 0xff800000u : 0x7f800000u);
#endif
}
#ifdef IS_F64
TC max_(TC x, TC y) { return isnan(x) ? x : isnan(y) ? y : x == y ? (neg_(x) ? y : x) : x > y ? x : y; }
TC min_(TC x, TC y) { return isnan(x) ? x : isnan(y) ? y : x == y ? (neg_(x) ? x : y) : x < y ? x : y; }
#else
// On the bits: a driver that flushes subnormals would call 1e-40 and 0 equal.
TC max_(TC x, TC y) { return fb_nan(x) ? x : fb_nan(y) ? y : fb_eq(x, y) ? (neg_(x) ? y : x) : fb_lt(y, x) ? x : y; }
TC min_(TC x, TC y) { return fb_nan(x) ? x : fb_nan(y) ? y : fb_eq(x, y) ? (neg_(x) ? x : y) : fb_lt(x, y) ? x : y; }
#endif
#endif

ACC acc_ident()
{
#ifdef BOOL
    return OP == RED_ALL ? 1u : 0u;
#else
    if (OP == RED_SUM)
        return TC(0);
    if (OP == RED_PRODUCT)
        return TC(1);
#if defined(IS_FLOAT)
    return inf_(OP == RED_MAX);
#elif defined(IS_U8) && !defined(WIDEN)
    return OP == RED_MAX ? 0u : 255u;
#else
    return OP == RED_MAX ? int(0x80000000u) : 0x7fffffff;
#endif
#endif
}

ACC acc_from(TA x, uint k)
{
#ifdef BOOL
#if defined(IS_FLOAT) && !defined(IS_F64)
    return fb_true(x) ? 1u : 0u;
#elif defined(IS_FLOAT)
    return isnan(x) || x != TA(0) ? 1u : 0u;
#else
    return x != TA(0) ? 1u : 0u;
#endif
#elif defined(IS_U8)
    return TC(uint(x));
#else
    return TC(x);
#endif
}

// A PRO variant's input may be a fused program (pro_run) over other buffers,
// computed where the input would be read, in the same order.
ACC acc_load(uint off, uint k)
{
#ifdef PRO
    if (pro_NSTEPS != 0)
        return acc_from(TA(pro_run(off, 0.0)), k);
#endif
    return acc_from(a[off], k);
}

TA4 acc_load4(uint i)
{
#ifdef PRO
    // a loop, not four calls: each call inlines the program's every possible
    // op, which a driver compiles before it folds them away
    if (pro_NSTEPS != 0) {
        TA4 v;
        for (uint c = 0; c < 4; c++)
            v[c] = pro_run(4 * i + c, 0.0);
        return v;
    }
#endif
    return a4[i];
}

// Sums and products are `precise`: a prologue's product must not be fused
// into the sum that takes it (one rounding where the ops one by one make two).
ACC acc_comb(ACC x, ACC y)
{
#ifdef BOOL
    return OP == RED_ALL ? x & y : x | y;
#else
    precise ACC r;
    if (OP == RED_SUM) {
        r = x + y;
        return r;
    }
    if (OP == RED_PRODUCT) {
        r = x * y;
        return r;
    }
#ifdef IS_FLOAT
    return OP == RED_MAX ? max_(x, y) : min_(x, y);
#else
    return OP == RED_MAX ? max(x, y) : min(x, y);
#endif
#endif
}

// An EPI variant's epilogue runs only in the last pass (one part per output),
// so i is the result's index. ROWS: the program is the op that reads the
// result broadcast over its rows (a row's maximum subtracted from the row):
// output i then stores the program over row i of the input (contiguous rows,
// the host checked), with its result standing for v.
#ifdef EPI
layout(constant_id = 7) const uint ROWS = 0;
#endif
void acc_store(uint i, ACC v)
{
#ifdef EPI
    // one call of ep_store: each inlines the program's every possible op
    uint n = ROWS != 0 ? pc.nred : 1u, e0 = ROWS != 0 ? i * pc.nred : i;
    for (uint e = e0; e < e0 + n; e++)
        o[e] = TO(ep_store(e, v));
#else
    o[i] = TO(v);
#endif
}

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

ACC acc_load(uint off, uint k)
{
    return acc_from(a[off], k);
}

ACC acc_comb(ACC x, ACC y)
{
#ifdef BOOL
    return OP == RED_ALL ? x & y : x | y;
#else
    if (OP == RED_SUM)
        return x + y;
    if (OP == RED_PRODUCT)
        return x * y;
#ifdef IS_FLOAT
    return OP == RED_MAX ? max_(x, y) : min_(x, y);
#else
    return OP == RED_MAX ? max(x, y) : min(x, y);
#endif
#endif
}

// An EPI variant runs only as the last pass (one part per output), so i is
// the result's index.
void acc_store(uint i, ACC v)
{
    o[i] = TO(ep_store(i, v));
}

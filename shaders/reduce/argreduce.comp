#version 450
#extension GL_GOOGLE_include_directive : require
// argmax / argmin over a reduced index set as (value, index) pairs. The
// reference's rules (Nx's): a slice that holds a NaN gives its first NaN, for
// both ops; equal values keep the smaller index, so the first extremum wins
// whatever order the tree combines in.
// Index EMPTY marks a chunk that saw no element: it loses to everything and
// is written as 0 when the whole reduction is empty.
#include "common.glsl"
#include "floatbits.glsl"

#define ARG_MAX 0u
#define EMPTY 0xffffffffu
struct Pair {
    TC v;
    uint i;
};
#define ACC Pair
layout(std430, binding = 0) readonly buffer A { TA a[]; };
layout(std430, binding = 0) readonly buffer A4 { TA4 a4[]; };

TA4 acc_load4(uint i)
{
    return a4[i];
}
layout(std430, binding = 1) readonly buffer AI { int ai[]; };
layout(std430, binding = 2) writeonly buffer OI { int oi[]; };
layout(std430, binding = 3) writeonly buffer OV { TA ov[]; };

#include "reduce.glsl"

ACC acc_ident()
{
    return Pair(TC(0), EMPTY);
}

ACC acc_from(TA x, uint k)
{
#ifdef IS_U8
    return Pair(TC(uint(x)), k);
#else
    return Pair(TC(x), k);
#endif
}

ACC acc_load(uint off, uint k)
{
    ACC p = acc_from(a[off], k);
    if ((PAIRS & 1u) != 0u)
        p.i = uint(ai[off]);
    return p;
}

bool is_nan_(TC x)
{
#if defined(IS_FLOAT) && !defined(IS_F64)
    return fb_nan(x);
#elif defined(IS_FLOAT)
    return isnan(x);
#else
    return false;
#endif
}

// x strictly above y, for values that are not NaN.
bool above(TC x, TC y)
{
#if defined(IS_FLOAT) && !defined(IS_F64)
    return fb_lt(y, x); // on the bits: subnormals stay ordered
#else
    return x > y;
#endif
}

ACC acc_comb(ACC x, ACC y)
{
    if (x.i == EMPTY)
        return y;
    if (y.i == EMPTY)
        return x;
    bool xn = is_nan_(x.v), yn = is_nan_(y.v);
    if (xn || yn)
        return xn && (!yn || x.i < y.i) ? x : y;
    bool xw = OP == ARG_MAX ? above(x.v, y.v) : above(y.v, x.v);
    bool yw = OP == ARG_MAX ? above(y.v, x.v) : above(x.v, y.v);
    return xw || (!yw && x.i < y.i) ? x : y;
}

void acc_store(uint i, ACC v)
{
    if ((PAIRS & 2u) != 0u) {
        oi[i] = int(v.i);
        ov[i] = TA(v.v);
    } else {
        oi[i] = v.i == EMPTY ? 0 : int(v.i);
    }
}

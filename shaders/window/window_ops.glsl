// window_ops.glsl — what the window kernels compute, shared by the general
// ones (reduce.comp, argsel.comp, scatter.comp) and the pooling ones
// (pool.comp): the reductions' identity and fold, and the scatters'
// selection rule. Needs the spec constant OP (reductions: 0 sum, 1 product,
// 2 max, 3 min; scatters: 0 max, 1 min) and the dtype defines.
#ifndef WINDOW_OPS_GLSL
#define WINDOW_OPS_GLSL

// Floats: max/min propagate NaN and order -0 below +0, as the reference does.
#ifdef IS_FLOAT
bool neg_(TC v)
{
#ifdef IS_F64
    return (unpackDouble2x32(v).y >> 31) != 0u;
#else
    return (floatBitsToUint(v) >> 31) != 0u;
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
TC max_(TC a, TC b) { return isnan(a) ? a : isnan(b) ? b : a == b ? (neg_(a) ? b : a) : a > b ? a : b; }
TC min_(TC a, TC b) { return isnan(a) ? a : isnan(b) ? b : a == b ? (neg_(a) ? a : b) : a < b ? a : b; }
#else
TC max_(TC a, TC b) { return max(a, b); }
TC min_(TC a, TC b) { return min(a, b); }
#endif

TC ident()
{
    if (OP == 0u)
        return TC(0);
    if (OP == 1u)
        return TC(1);
#if defined(IS_FLOAT)
    return inf_(OP == 2u);
#elif defined(IS_U8)
    return OP == 2u ? 0u : 255u;
#else
    return OP == 2u ? int(0x80000000u) : 0x7fffffff;
#endif
}

TC comb(TC a, TC b)
{
    if (OP == 0u)
        return a + b;
    if (OP == 1u)
        return a * b;
    return OP == 2u ? max_(a, b) : min_(a, b);
}

// Whether a scatter's window takes v over its best so far b (none yet: the
// first element): its first NaN if it holds one, else its first extremum in
// row-major window order.
bool takes(bool none, TC b, TC v)
{
#ifdef IS_FLOAT
    return none || (!isnan(b) && (isnan(v) || (OP == 0u ? v > b : v < b)));
#else
    return none || (OP == 0u ? v > b : v < b);
#endif
}
#endif

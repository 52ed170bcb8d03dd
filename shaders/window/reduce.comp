#version 450
#extension GL_GOOGLE_include_directive : require
// window_sum, window_product, window_max, window_min: one invocation per
// output element folds its window's slice into the accumulator; padding is
// the identity. Floats: max/min propagate NaN and order -0 below +0, as the
// reference does.
#define WIN_PARAMS 1
#include "window.glsl"

layout(std430, binding = 0) readonly buffer X { TA x[]; };
layout(std430, binding = 2) buffer O { TA o[]; };
layout(constant_id = 0) const uint OP = 0; // 0 sum, 1 product, 2 max, 3 min

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

void main()
{
    load_geometry();
    GRID_LOOP(i, pc.n) {
        int base[MAXR], kd[MAXR];
        uint r = i, k = pc.k0;
        AXES(d) {
            uint od = uint(g_out[d]);
            base[d] = int(r % od) * g_str[d] - g_lo[d];
            r /= od;
            kd[d] = 0;
            if (pc.k0 != 0u) {
                kd[d] = int(k % uint(g_win[d]));
                k /= uint(g_win[d]);
            }
        }
        TC acc = pc.first != 0u ? ident() : TC(o[i]);
        for (uint k = pc.k0; k < pc.k1; k++) {
            int off = 0;
            bool ok = true;
            AXES_UP(d) {
                int pos = base[d] + kd[d] * g_dil[d];
                ok = ok && pos >= 0 && pos < g_in[d];
                off += pos * g_ist[d];
            }
            if (ok)
                acc = comb(acc, TC(x[off]));
            AXES(d) {
                if (++kd[d] < g_win[d])
                    break;
                kd[d] = 0;
            }
        }
        o[i] = TA(acc);
    }
}

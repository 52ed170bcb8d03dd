#version 450
#extension GL_GOOGLE_include_directive : require
// as_type between any two dtypes, with C's rules made explicit where GLSL
// leaves them undefined: floats to integers truncate and saturate, NaN -> 0,
// integers to u8 keep the low byte.
#include "elementwise.glsl"

layout(local_size_x = LOCAL) in;
layout(std430, binding = 0) readonly buffer A { TA a[]; };
layout(std430, binding = 1) writeonly buffer O { TO o[]; };

#if defined(FROM_F32) && defined(TO_F64)
// Widening on the bits, exact everywhere: a driver may flush subnormal f32
// inputs of a float conversion (the H200's does) and rewrite NaN payloads.
// NaNs keep their payload and come out quiet, as on the host.
double widen(float x)
{
    uint b = floatBitsToUint(x), s = b & 0x80000000u, e = (b >> 23) & 0xffu, m = b & 0x7fffffu;
    uint hi = s, lo = 0u;
    if (e == 0xffu) {
        hi |= 0x7ff00000u | (m >> 3) | (m != 0u ? 0x80000u : 0u);
        lo = m << 29;
    } else if (e != 0u) {
        hi |= ((e + 896u) << 20) | (m >> 3);
        lo = m << 29;
    } else if (m != 0u) { // m 2^-149 = 1.f 2^(p-149), p the top bit of m
        int p = findMSB(m);
        uint f = (m << uint(23 - p)) & 0x7fffffu;
        hi |= (uint(p + 874) << 20) | (f >> 3);
        lo = f << 29;
    }
    return packDouble2x32(uvec2(lo, hi));
}
#endif

void main()
{
    GRID_LOOP(i, pc.p.n)
    {
        TA x = a[i];
#if defined(FROM_FLOAT) && defined(TO_S32)
        o[i] = isnan(x) ? 0 : x >= TA(2147483647.0) ? 2147483647 : x <= TA(-2147483648.0) ? (-2147483647 - 1) : int(x);
#elif defined(FROM_FLOAT) && defined(TO_U8)
        o[i] = uint8_t(isnan(x) ? 0u : x >= TA(255.0) ? 255u : x <= TA(0.0) ? 0u : uint(x));
#elif defined(TO_U8)
        o[i] = uint8_t(uint(x) & 0xffu);
#elif defined(FROM_U8)
        o[i] = TO(uint(x));
#elif defined(FROM_F32) && defined(TO_F64)
        o[i] = widen(x);
#else
        o[i] = TO(x);
#endif
    }
}

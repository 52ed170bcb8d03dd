#version 450
#extension GL_GOOGLE_include_directive : require
// as_type between any two dtypes, with C's rules made explicit where GLSL
// leaves them undefined: floats to integers truncate and saturate, NaN -> 0,
// integers to u8 keep the low byte.
#include "elementwise.glsl"

layout(local_size_x = LOCAL) in;
layout(std430, binding = 0) readonly buffer A { TA a[]; };
layout(std430, binding = 1) writeonly buffer O { TO o[]; };

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
#else
        o[i] = TO(x);
#endif
    }
}

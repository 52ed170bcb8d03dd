#version 450
#extension GL_GOOGLE_include_directive : require
// select(pred, on_true, on_false) and clip(x, lo, hi), all three inputs
// broadcast to the output through strides. pred is u8 (the op layer converts
// other predicate dtypes first).
#include "elementwise.glsl"

layout(local_size_x = LOCAL) in;
#if defined(SELECT)
layout(std430, binding = 0) readonly buffer P { uint8_t a[]; };
#else
layout(std430, binding = 0) readonly buffer P { TA a[]; };
#endif
layout(std430, binding = 1) readonly buffer B { TA b[]; };
layout(std430, binding = 2) readonly buffer D { TA c[]; };
layout(std430, binding = 3) writeonly buffer O { TO o[]; };

void main()
{
    GRID_LOOP(i, pc.p.n)
    {
        TC y = TC(b[in_offset(i, 1)]), z = TC(c[in_offset(i, 2)]);
#if defined(SELECT)
        TC r = uint(a[in_offset(i, 0)]) != 0u ? y : z;
#elif defined(IS_FLOAT)
        TC r = fmin_(fmax_(TC(a[in_offset(i, 0)]), y), z);
#else
        TC r = min(max(TC(a[in_offset(i, 0)]), y), z);
#endif
#if defined(IS_U8)
        o[i] = uint8_t(r & 0xffu);
#else
        o[i] = TO(r);
#endif
    }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Unary elementwise ops on one dtype; the op is specialization constant 0.
// Output is TO: the input's type, or u8 for predicates (is_nan, is_infinity,
// logical_not). f64 has the ops GLSL defines for doubles and the rest of
// cmath64.glsl; the support matrix says which ones still fall back.
#include "elementwise.glsl"
#include "cmath.glsl"
#include "cmath64.glsl"

layout(local_size_x = LOCAL) in;
layout(std430, binding = 0) readonly buffer A { TA a[]; };
layout(std430, binding = 1) writeonly buffer O { TO o[]; };
#if defined(VEC4)
// Contiguous f32 results stream as vec4: four elements a thread, loaded and
// stored 16 bytes at a time (measured on an H200: exp over 256M elements went
// from 2.9 TB/s as scalars to the memory's pace).
layout(std430, binding = 0) readonly buffer A4 { vec4 a4[]; };
layout(std430, binding = 1) writeonly buffer O4 { vec4 o4[]; };
#endif

#include "unary_ops.glsl"

#if defined(PRED)
bool apply(TC x)
{
    switch (OP) {
#if defined(IS_FLOAT)
    case UN_is_nan: return isnan(x);
    case UN_is_infinity: return isinf(x);
#else
    case UN_is_nan: return false;
    case UN_is_infinity: return false;
#endif
#if defined(IS_FLOAT) && !defined(IS_F64)
    default: return !fb_true(x); // logical_not
#else
    default: return x == TC(0); // logical_not
#endif
    }
}
#else
TC apply(TC x)
{
    return un_apply(OP, x);
}
#endif

void main()
{
#if defined(VEC4)
    uint n4 = pc.p.n / 4u;
    GRID_LOOP(i, n4)
    {
        vec4 x = a4[i];
        o4[i] = vec4(apply(x.x), apply(x.y), apply(x.z), apply(x.w));
    }
    uint t = n4 * 4u + gl_GlobalInvocationID.x;
    if (t < pc.p.n)
        o[t] = apply(a[t]);
#else
    GRID_LOOP(i, pc.p.n)
    {
        TC x = TC(a[i]);
#if defined(PRED)
        o[i] = uint8_t(apply(x) ? 1u : 0u);
#elif defined(IS_U8)
        o[i] = uint8_t(apply(x) & 0xffu);
#else
        o[i] = TO(apply(x));
#endif
    }
#endif
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Binary elementwise ops with broadcasting through per-input strides; the op
// is specialization constant 0. PRED variants write u8 (comparisons, logic).
// The VEC4 variant streams contiguous f32 add/subtract/multiply/divide as vec4.
#include "elementwise.glsl"
#include "cmath.glsl"
#include "cmath64.glsl"

layout(local_size_x = LOCAL) in;
layout(std430, binding = 0) readonly buffer A { TA a[]; };
layout(std430, binding = 1) readonly buffer B { TA b[]; };
layout(std430, binding = 2) writeonly buffer O { TO o[]; };
#if defined(VEC4)
layout(std430, binding = 0) readonly buffer A4 { vec4 a4[]; };
layout(std430, binding = 1) readonly buffer B4 { vec4 b4[]; };
layout(std430, binding = 2) writeonly buffer O4 { vec4 o4[]; };
#endif

#include "binary_ops.glsl"

#if defined(PRED) && defined(IS_FLOAT) && !defined(IS_F64)
bool apply(float x, float y)
{
    switch (OP) {
    case BIN_equal: return fb_eq(x, y);
    case BIN_not_equal: return !fb_eq(x, y);
    case BIN_less: return fb_lt(x, y);
    case BIN_less_equal: return fb_lt(x, y) || fb_eq(x, y);
    case BIN_greater: return fb_lt(y, x);
    case BIN_greater_equal: return fb_lt(y, x) || fb_eq(x, y);
    case BIN_logical_and: return fb_true(x) && fb_true(y);
    case BIN_logical_or: return fb_true(x) || fb_true(y);
    default: return fb_true(x) != fb_true(y); // logical_xor
    }
}
#elif defined(PRED)
bool apply(TC x, TC y)
{
    switch (OP) {
    case BIN_equal: return x == y;
    case BIN_not_equal: return x != y;
    case BIN_less: return x < y;
    case BIN_less_equal: return x <= y;
    case BIN_greater: return x > y;
    case BIN_greater_equal: return x >= y;
    case BIN_logical_and: return x != TC(0) && y != TC(0);
    case BIN_logical_or: return x != TC(0) || y != TC(0);
    default: return (x != TC(0)) != (y != TC(0)); // logical_xor
    }
}
#else
TC apply(TC x, TC y)
{
    return bin_apply(OP, x, y);
}
#endif

void main()
{
#if defined(VEC4)
    uint n4 = pc.p.n / 4u;
    GRID_LOOP(i, n4)
    {
        vec4 x = a4[i], y = b4[i];
        o4[i] = OP == BIN_add        ? x + y
                : OP == BIN_subtract ? x - y
                : OP == BIN_multiply ? x * y
                                     : vec4(fdiv_(x.x, y.x), fdiv_(x.y, y.y), fdiv_(x.z, y.z), fdiv_(x.w, y.w));
    }
    uint t = n4 * 4u + gl_GlobalInvocationID.x;
    if (t < pc.p.n)
        o[t] = apply(a[t], b[t]);
#else
    GRID_LOOP(i, pc.p.n)
    {
        TC x = TC(a[in_offset(i, 0)]), y = TC(b[in_offset(i, 1)]);
#if defined(PRED)
        o[i] = uint8_t(apply(x, y) ? 1u : 0u);
#elif defined(IS_U8)
        o[i] = uint8_t(apply(x, y) & 0xffu);
#else
        o[i] = TO(apply(x, y));
#endif
    }
#endif
}

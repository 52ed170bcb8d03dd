// fused.glsl — one step of an f32 elementwise program that a graph fused
// (backend/fuse.c), shared by ew_fused.comp and every kernel's epilogue
// (epilogue.glsl): each step computes exactly what its op's own kernel
// computes, with the same functions, and its result is `precise`, so an add
// fed by a multiply stays two roundings, as when the product went through
// memory. Needs elementwise.glsl (with EW_FUSED), cmath.glsl, unary_ops.glsl
// and binary_ops.glsl for f32 (IS_FLOAT, TC = float) included first.
#ifndef FUSED_GLSL
#define FUSED_GLSL

// The fields of a step packed by FU_STEP (layouts.h).
uint fu_kind(uint st) { return st & 3u; }
uint fu_a(uint st) { return (st >> 10) & 0xfu; }
uint fu_b(uint st) { return (st >> 14) & 0xfu; }

float fu_apply(uint st, float x, float y)
{
    uint kind = fu_kind(st), op = (st >> 2) & 0xffu;
    precise float v;
    if (kind == FU_UNARY)
        v = un_apply(op, x);
    else if (kind == FU_BINARY && op == BIN_add)
        v = x + y;
    else if (kind == FU_BINARY && op == BIN_subtract)
        v = x - y;
    else if (kind == FU_BINARY && op == BIN_multiply)
        v = x * y;
    else if (kind == FU_BINARY)
        v = bin_apply(op, x, y);
    else
        v = x;
    return v;
}
#endif

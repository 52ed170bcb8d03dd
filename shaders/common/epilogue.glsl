// epilogue.glsl — an f32 elementwise program that a graph fused onto the
// results of the kernel that includes this (backend/fuse.c): where the kernel
// would store value v as element i of its result, it stores ep_store(i, v),
// the program run with operand EP_SELF standing for v. Input k of the
// program is binding EP_BIND + k, read at (i / div) % mod, as ew_fused.comp
// reads its inputs; an in-place update reads what it writes at i only. The
// program and the inputs' indexing are specialization constants (constant_id
// EP_SPEC...), so each fused graph gets straight-line code. Without -DEPI the
// kernel is unchanged: ep_store(i, v) is v.
//
// The including kernel computes in f32 and includes common.glsl first; its
// own bindings are below EP_BIND and its specialization constants below
// EP_SPEC (layouts.h).
#ifndef EPILOGUE_GLSL
#define EPILOGUE_GLSL
#ifdef EPI
#ifndef IS_FLOAT
#define IS_FLOAT
#endif
#define EW_FUSED
#include "elementwise.glsl"
#include "../elementwise/cmath.glsl"
#include "../elementwise/unary_ops.glsl"
#include "../elementwise/binary_ops.glsl"
#include "fused.glsl"

layout(constant_id = EP_SPEC) const uint EP_NSTEPS = 1;
layout(constant_id = EP_SPEC + 1) const uint EP_S0 = 0;
layout(constant_id = EP_SPEC + 2) const uint EP_S1 = 0;
layout(constant_id = EP_SPEC + 3) const uint EP_S2 = 0;
layout(constant_id = EP_SPEC + 4) const uint EP_S3 = 0;
layout(constant_id = EP_SPEC + 5) const uint EP_S4 = 0;
layout(constant_id = EP_SPEC + 6) const uint EP_S5 = 0;
layout(constant_id = EP_SPEC + 7) const uint EP_S6 = 0;
layout(constant_id = EP_SPEC + 8) const uint EP_DIV0 = 1;
layout(constant_id = EP_SPEC + 9) const uint EP_MOD0 = 1;
layout(constant_id = EP_SPEC + 10) const uint EP_DIV1 = 1;
layout(constant_id = EP_SPEC + 11) const uint EP_MOD1 = 1;
layout(constant_id = EP_SPEC + 12) const uint EP_DIV2 = 1;
layout(constant_id = EP_SPEC + 13) const uint EP_MOD2 = 1;

layout(std430, binding = EP_BIND) readonly buffer EP0 { float ep_in0[]; };
layout(std430, binding = EP_BIND + 1) readonly buffer EP1 { float ep_in1[]; };
layout(std430, binding = EP_BIND + 2) readonly buffer EP2 { float ep_in2[]; };

uint ep_step(uint s)
{
    return s == 0 ? EP_S0 : s == 1 ? EP_S1 : s == 2 ? EP_S2 : s == 3 ? EP_S3 : s == 4 ? EP_S4 : s == 5 ? EP_S5 : EP_S6;
}

float ep_input(uint k, uint i)
{
    if (k == 0)
        return ep_in0[(i / EP_DIV0) % EP_MOD0];
    if (k == 1)
        return ep_in1[(i / EP_DIV1) % EP_MOD1];
    return ep_in2[(i / EP_DIV2) % EP_MOD2];
}

float ep_store(uint i, float v)
{
    precise float r[FU_MAX_STEPS];
    [[unroll]] for (uint s = 0; s < FU_MAX_STEPS; s++) {
        if (s >= EP_NSTEPS)
            break;
        // (no array passes through a call: a driver may keep it in memory)
        uint st = ep_step(s), a = fu_a(st), b = fu_b(st);
        float x = a >= FU_REG ? r[a - FU_REG] : a == EP_SELF ? v : ep_input(a, i);
        float y = fu_kind(st) != FU_BINARY ? 0.0 : b >= FU_REG ? r[b - FU_REG] : b == EP_SELF ? v : ep_input(b, i);
        r[s] = fu_apply(st, x, y);
    }
    return r[EP_NSTEPS - 1];
}
#else
#define ep_store(i, v) (v)
#endif
#endif

#version 450
#extension GL_GOOGLE_include_directive : require
// f32 elementwise ops that a graph fused into one dispatch (backend/fuse.c):
// a program of up to FU_MAX_STEPS unary, binary or copy steps over up to
// FU_MAX_IN inputs, one specialization constant per step, so the driver
// folds it into straight-line code. Each step is fused.glsl's: exactly what
// its op's own kernel computes. Input k is read at (i / div[k]) % mod[k] (a bias along
// some axes, a scalar, or the whole tensor); the output may also be an input
// (an in-place update), read and written at the same index.
#define EW_FUSED
#include "elementwise.glsl"
#include "cmath.glsl"
#include "unary_ops.glsl"
#include "binary_ops.glsl"
#include "fused.glsl"

layout(local_size_x = LOCAL) in;
layout(constant_id = 0) const uint NSTEPS = 1;
layout(constant_id = 1) const uint S0 = 0;
layout(constant_id = 2) const uint S1 = 0;
layout(constant_id = 3) const uint S2 = 0;
layout(constant_id = 4) const uint S3 = 0;
layout(constant_id = 5) const uint S4 = 0;
layout(constant_id = 6) const uint S5 = 0;
layout(constant_id = 7) const uint S6 = 0;
layout(push_constant) uniform FP { FU_PUSH_FIELDS } fp;

layout(std430, binding = 0) readonly buffer I0 { float in0[]; };
layout(std430, binding = 1) readonly buffer I1 { float in1[]; };
layout(std430, binding = 2) readonly buffer I2 { float in2[]; };
layout(std430, binding = 3) readonly buffer I3 { float in3[]; };
layout(std430, binding = 4) readonly buffer I4 { float in4[]; };
layout(std430, binding = 5) readonly buffer I5 { float in5[]; };
layout(std430, binding = 6) readonly buffer I6 { float in6[]; };
layout(std430, binding = 7) buffer O { float o[]; };

uint step_of(uint s)
{
    return s == 0 ? S0 : s == 1 ? S1 : s == 2 ? S2 : s == 3 ? S3 : s == 4 ? S4 : s == 5 ? S5 : S6;
}

float input_at(uint k, uint i)
{
    uint j = (i / fp.div[k]) % fp.mod[k];
    switch (k) {
    case 0: return in0[j];
    case 1: return in1[j];
    case 2: return in2[j];
    case 3: return in3[j];
    case 4: return in4[j];
    case 5: return in5[j];
    default: return in6[j];
    }
}

void main()
{
    GRID_LOOP(i, fp.n) {
        precise float r[FU_MAX_STEPS];
        [[unroll]] for (uint s = 0; s < FU_MAX_STEPS; s++) {
            if (s >= NSTEPS)
                break;
            uint st = step_of(s), a = fu_a(st), b = fu_b(st);
            float x = a >= FU_REG ? r[a - FU_REG] : input_at(a, i);
            float y = fu_kind(st) == FU_BINARY ? (b >= FU_REG ? r[b - FU_REG] : input_at(b, i)) : 0.0;
            r[s] = fu_apply(st, x, y);
        }
        o[i] = r[NSTEPS - 1];
    }
}

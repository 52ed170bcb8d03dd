#version 450
#extension GL_GOOGLE_include_directive : require
// Gathers an operand of a contraction into contiguous memory in the axis order
// dot.c asks for (batch, contracting, free): a strided copy for operands whose
// axis groups do not collapse to one stride each. TE is the element type by
// size only (uint8_t, uint, uvec2), so one variant serves f32 and s32.
#include "common.glsl"

layout(local_size_x = LOCAL) in;
layout(std430, binding = 0) readonly buffer X { TE x[]; };
layout(std430, binding = 1) writeonly buffer Y { TE y[]; };

layout(push_constant) uniform P { DOT_PACK_PUSH_FIELDS } p;

void main()
{
    GRID_LOOP(i, p.n) {
        uint r = i, src = 0;
        for (int d = int(p.rank) - 1; d >= 0; d--) {
            uint c = r % p.shape[d];
            r /= p.shape[d];
            src += c * p.stride[d];
        }
        y[i] = x[src];
    }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Adds conv2d.comp's partial sums of each output, parts in order, and writes
// the sum where the result's strides put it.
#include "common.glsl"

layout(local_size_x = LOCAL) in;
layout(push_constant) uniform P { C2S_PUSH_FIELDS } p;
layout(std430, binding = 0) readonly buffer S { float part[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

void main()
{
    GRID_LOOP(i, p.cnt) {
        float s = 0.0;
        for (uint q = 0; q < p.parts; q++)
            s += part[q * p.cnt + i];
        uint t = i;
        int ox = int(t % p.ow);
        t /= p.ow;
        int oy = int(t % p.oh);
        t /= p.oh;
        int o = int(t % p.o);
        int nb = int(t / p.o);
        y[nb * p.ys[0] + o * p.ys[1] + oy * p.ys[2] + ox * p.ys[3]] = s;
    }
}

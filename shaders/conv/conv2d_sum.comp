#version 450
#extension GL_GOOGLE_include_directive : require
// Adds the conv2d kernels' partial sums of each output and writes the sum
// where the result's strides put it. Four running sums (parts q, q + 4, ...)
// keep four loads in flight; they meet in a fixed order, so the result does
// not depend on timing. EPI variants store through a fused epilogue.
#include "common.glsl"
#include "epilogue.glsl"

layout(local_size_x = LOCAL) in;
layout(push_constant) uniform P { C2S_PUSH_FIELDS } p;
layout(std430, binding = 0) readonly buffer S { float part[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

void main()
{
    GRID_LOOP(i, p.cnt) {
        float s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        uint q = 0;
        for (; q + 4 <= p.parts; q += 4) {
            s0 += part[q * p.cnt + i];
            s1 += part[(q + 1) * p.cnt + i];
            s2 += part[(q + 2) * p.cnt + i];
            s3 += part[(q + 3) * p.cnt + i];
        }
        for (; q < p.parts; q++)
            s0 += part[q * p.cnt + i];
        float s = (s0 + s1) + (s2 + s3);
        uint t = i;
        int ox = int(t % p.ow);
        t /= p.ow;
        int oy = int(t % p.oh);
        t /= p.oh;
        int o = int(t % p.o);
        int nb = int(t / p.o);
        uint yi = uint(nb * p.ys[0] + o * p.ys[1] + oy * p.ys[2] + ox * p.ys[3]);
        y[yi] = ep_store(yi, s);
    }
}

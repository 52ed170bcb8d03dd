#version 450
#extension GL_GOOGLE_include_directive : require
// Adds conv2d_kgrad's partial sums (a few thousand outputs at most, hundreds
// of parts each) and writes each sum where the result's strides put it. One
// invocation per output, as in conv2d_sum.comp, would leave a large device
// idle and walk the parts one after another; here a workgroup takes KG_SUM_W
// outputs, and LOCAL / KG_SUM_W lanes each add every lanes-th part of one
// (four running sums keep four loads in flight; a warp reads whole 32-byte
// sectors). The lanes' sums meet in a shared-memory tree: a fixed order, so
// the result does not depend on timing. EPI variants store through a fused
// epilogue (epilogue.glsl).
#include "common.glsl"
#include "epilogue.glsl"

#define LANES (LOCAL / KG_SUM_W)

layout(local_size_x = LOCAL) in;
layout(push_constant) uniform P { C2S_PUSH_FIELDS } p;
layout(std430, binding = 0) readonly buffer S { float part[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

shared float red[LOCAL];

void main()
{
    const uint lid = gl_LocalInvocationID.x, col = lid % KG_SUM_W, lane = lid / KG_SUM_W;
    for (uint base = gl_WorkGroupID.x * KG_SUM_W; base < p.cnt; base += gl_NumWorkGroups.x * KG_SUM_W) {
        uint i = base + col;
        float s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        if (i < p.cnt) {
            uint q = lane;
            for (; q + 3 * LANES < p.parts; q += 4 * LANES) {
                s0 += part[q * p.cnt + i];
                s1 += part[(q + LANES) * p.cnt + i];
                s2 += part[(q + 2 * LANES) * p.cnt + i];
                s3 += part[(q + 3 * LANES) * p.cnt + i];
            }
            for (; q < p.parts; q += LANES)
                s0 += part[q * p.cnt + i];
        }
        red[lid] = (s0 + s1) + (s2 + s3);
        barrier();
        for (uint h = LANES / 2; h > 0; h >>= 1) {
            if (lane < h)
                red[lid] += red[lid + h * KG_SUM_W];
            barrier();
        }
        // Only lane 0 reads its own slot from here on, and the next round
        // writes each invocation's own slot, so no barrier is needed.
        if (lane == 0 && i < p.cnt) {
            uint t = i;
            int ox = int(t % p.ow);
            t /= p.ow;
            int oy = int(t % p.oh);
            t /= p.oh;
            int o = int(t % p.o);
            int nb = int(t / p.o);
            uint yi = uint(nb * p.ys[0] + o * p.ys[1] + oy * p.ys[2] + ox * p.ys[3]);
            y[yi] = ep_store(yi, red[lid]);
        }
    }
}

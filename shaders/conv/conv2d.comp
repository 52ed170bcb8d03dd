#version 450
#extension GL_GOOGLE_include_directive : require
// 2-d f32 conv without dilations or groups, the shape of a CNN's layers and
// of both their gradients. An invocation computes OB output features at one
// output position, so each input element it loads feeds OB products, over its
// part of the reduction (cper input features by uper kernel rows): one part
// writes the result, several write partial sums that conv2d_sum.comp adds in
// a fixed order (the kernel gradient: few outputs, each a sum over the batch
// and the whole image). Consecutive invocations take consecutive output
// columns, so their input loads coalesce and their kernel loads coincide.
// Geometry travels in push constants (no parameter upload); the kernel's size
// in specialization constants where it is small, so its taps unroll.
#include "common.glsl"

layout(local_size_x = LOCAL) in;
layout(constant_id = 0) const int OB = 1;
layout(constant_id = 1) const int KH_S = 0; // 0: p.kh at run time
layout(constant_id = 2) const int KW_S = 0;

layout(push_constant) uniform P { C2_PUSH_FIELDS } p;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer K { float kw[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

void main()
{
    uint cnt = p.n * p.nob * p.oh * p.ow, total = cnt * p.parts;
    int KH = KH_S > 0 ? KH_S : int(p.kh), KW = KW_S > 0 ? KW_S : int(p.kw);
    int ih = int(p.ih), iw = int(p.iw);
    GRID_LOOP(i, total) {
        uint t = i;
        int ox = int(t % p.ow);
        t /= p.ow;
        int oy = int(t % p.oh);
        t /= p.oh;
        int ob = int(t % p.nob);
        t /= p.nob;
        int nb = int(t % p.n);
        uint part = t / p.n;
        uint c0 = (part / p.parts_u) * p.cper, c1 = min(p.c, c0 + p.cper);
        int u0 = int((part % p.parts_u) * p.uper), u1 = min(KH, u0 + int(p.uper));
        int o0 = ob * OB;
        int kbase[OB];
        float acc[OB];
        [[unroll]] for (int j = 0; j < OB; j++) {
            kbase[j] = min(o0 + j, int(p.o) - 1) * p.ks[0];
            acc[j] = 0.0;
        }
        int iy0 = oy * p.sh - p.ph, ix0 = ox * p.sw - p.pw;
        for (uint c = c0; c < c1; c++) {
            int xc = nb * p.xs[0] + int(c) * p.xs[1], kc = int(c) * p.ks[1];
            for (int u = u0; u < u1; u++) {
                int iy = iy0 + u;
                if (iy < 0 || iy >= ih)
                    continue;
                int xr = xc + iy * p.xs[2], kr = kc + u * p.ks[2];
                for (int v = 0; v < KW; v++) {
                    int ix = ix0 + v;
                    // The load stays in range either way; the tap counts only inside.
                    float xv = x[xr + clamp(ix, 0, iw - 1) * p.xs[3]];
                    xv = (ix >= 0 && ix < iw) ? xv : 0.0;
                    int kv = kr + v * p.ks[3];
                    [[unroll]] for (int j = 0; j < OB; j++)
                        acc[j] += xv * kw[kbase[j] + kv];
                }
            }
        }
        [[unroll]] for (int j = 0; j < OB; j++) {
            int o = o0 + j;
            if (o >= int(p.o))
                break;
            if (p.parts == 1)
                y[nb * p.ys[0] + o * p.ys[1] + oy * p.ys[2] + ox * p.ys[3]] = acc[j];
            else
                y[part * (p.n * p.o * p.oh * p.ow) + ((uint(nb) * p.o + uint(o)) * p.oh + uint(oy)) * p.ow + uint(ox)] =
                    acc[j];
        }
    }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// 2-d f32 conv without dilations or groups, through shared memory: a
// workgroup computes a tile of output positions of one batch element for a
// block of output features. Each round stages cb input features' input tiles
// and the matching kernel slices, then every invocation accumulates OB
// features at its position from shared memory. Parts of the reduction (input
// features by kernel rows) go to separate workgroups when the outputs are too
// few to fill the device (kernel gradients); conv2d_sum.comp adds them up.
// EPI variants store through a fused epilogue (epilogue.glsl).
#include "common.glsl"
#include "epilogue.glsl"

layout(local_size_x = LOCAL) in;
layout(constant_id = 0) const int OB = 1;
layout(constant_id = 1) const int KH_S = 0; // 0: the kernel rows of the part, at run time
layout(constant_id = 2) const int KW_S = 0; // 0: p.kw at run time
// Output columns per invocation (with KW_S and a column stride of 1): each
// input row segment loaded feeds PT x KW_S x OB products, each kernel weight
// PT, where one position per invocation would load a weight per product.
layout(constant_id = 3) const int PT = 1;

layout(push_constant) uniform P { C2T_PUSH_FIELDS } p;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer K { float kw[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

shared float xs[C2T_XS];
shared float ks[C2T_KS];

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint tiles_w = (p.ow + p.tw - 1) / p.tw, tiles = tiles_w * ((p.oh + p.th - 1) / p.th);
    const uint feats = p.g * uint(OB), ogrid = (p.o + feats - 1) / feats;
    const uint parts = ((p.c + p.cper - 1) / p.cper) * p.parts_u, cnt = p.n * p.o * p.oh * p.ow;
    const uint nwg = p.n * tiles * ogrid * parts;
    const uint cols = p.tw / uint(PT), ngrp = p.th * cols; // invocations per feature group
    const uint pt = lid % ngrp, og = lid / ngrp;
    const int KW = KW_S > 0 ? KW_S : int(p.kw);
    for (uint wg = gl_WorkGroupID.x; wg < nwg; wg += gl_NumWorkGroups.x) {
        uint t = wg;
        uint tile = t % tiles;
        t /= tiles;
        uint ob = t % ogrid;
        t /= ogrid;
        uint nb = t % p.n, part = t / p.n;
        uint c0 = (part / p.parts_u) * p.cper, c1 = min(p.c, c0 + p.cper);
        int u0 = int((part % p.parts_u) * p.uper), u1 = min(int(p.kh), u0 + int(p.uper));
        int nu = u1 - u0;
        int KH = KH_S > 0 ? KH_S : nu;
        int ty0 = int(tile / tiles_w * p.th), tx0 = int(tile % tiles_w * p.tw);
        // The input tile: rows and columns the tile's taps reach.
        int tih = (int(p.th) - 1) * p.sh + nu, tiw = (int(p.tw) - 1) * p.sw + int(p.kw);
        int iy0 = ty0 * p.sh - p.ph + u0, ix0 = tx0 * p.sw - p.pw;
        int ry = int(pt / cols), rx = int(pt % cols) * PT; // the first position within the tile
        int oy = ty0 + ry, ox = tx0 + rx;
        bool busy = og < p.g;
        uint f0 = ob * feats; // the workgroup's first output feature
        float acc[PT * OB];
        [[unroll]] for (int j = 0; j < PT * OB; j++)
            acc[j] = 0.0;
        for (uint cc0 = c0; cc0 < c1; cc0 += p.cb) {
            uint ncb = min(p.cb, c1 - cc0);
            uint plane = uint(tih * tiw), kslice = uint(nu * int(p.kw));
            for (uint e = lid; e < ncb * plane; e += LOCAL) {
                uint ci = e / plane, r = e % plane;
                int iy = iy0 + int(r) / tiw, ix = ix0 + int(r) % tiw;
                bool in_ = iy >= 0 && iy < int(p.ih) && ix >= 0 && ix < int(p.iw);
                xs[e] = in_ ? x[int(nb) * p.xs[0] + int(cc0 + ci) * p.xs[1] + iy * p.xs[2] + ix * p.xs[3]] : 0.0;
            }
            for (uint e = lid; e < feats * ncb * kslice; e += LOCAL) {
                uint f = e / (ncb * kslice), r = e % (ncb * kslice);
                uint ci = r / kslice, r2 = r % kslice;
                int u = u0 + int(r2 / p.kw), v = int(r2 % p.kw);
                int o = int(min(f0 + f, p.o - 1));
                ks[e] = kw[o * p.ks[0] + int(cc0 + ci) * p.ks[1] + u * p.ks[2] + v * p.ks[3]];
            }
            barrier();
            if (busy) {
                int xr0 = ry * p.sh * tiw + rx * p.sw, fstride = int(ncb * kslice);
                for (uint ci = 0; ci < ncb; ci++) {
                    int xb = int(ci * plane) + xr0, kb = int((og * uint(OB) * ncb + ci) * kslice);
                    if (KW_S > 0) {
                        // PT + KW_S - 1 inputs of the row serve PT columns (stride 1)
                        for (int u = 0; u < KH; u++) {
                            float xrow[PT + KW_S];
                            [[unroll]] for (int t = 0; t < PT + KW_S - 1; t++)
                                xrow[t] = xs[xb + u * tiw + t];
                            [[unroll]] for (int v = 0; v < KW_S; v++) {
                                float wv[OB];
                                [[unroll]] for (int j = 0; j < OB; j++)
                                    wv[j] = ks[kb + j * fstride + u * KW_S + v];
                                [[unroll]] for (int q = 0; q < PT; q++)
                                    [[unroll]] for (int j = 0; j < OB; j++)
                                        acc[q * OB + j] += xrow[q + v] * wv[j];
                            }
                        }
                    } else {
                        for (int u = 0; u < KH; u++) {
                            for (int v = 0; v < KW; v++) {
                                float xv = xs[xb + u * tiw + v];
                                [[unroll]] for (int j = 0; j < OB; j++)
                                    acc[j] += xv * ks[kb + j * fstride + u * int(p.kw) + v];
                            }
                        }
                    }
                }
            }
            barrier();
        }
        [[unroll]] for (int q = 0; q < PT; q++) {
            if (!busy || oy >= int(p.oh) || ox + q >= int(p.ow))
                break;
            [[unroll]] for (int j = 0; j < OB; j++) {
                uint o = f0 + og * uint(OB) + uint(j);
                if (o >= p.o)
                    break;
                if (parts == 1) {
                    uint yi = uint(int(nb) * p.ys[0] + int(o) * p.ys[1] + oy * p.ys[2] + (ox + q) * p.ys[3]);
                    y[yi] = ep_store(yi, acc[q * OB + j]);
                }
                else
                    y[part * cnt + ((nb * p.o + o) * p.oh + uint(oy)) * p.ow + uint(ox + q)] = acc[q * OB + j];
            }
        }
    }
}

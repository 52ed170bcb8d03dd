#version 450
#extension GL_GOOGLE_include_directive : require
// 2-d f32 conv with strides 1 and no dilations or groups, for few outputs
// over a long reduction: a conv's kernel gradient, whose reduction runs over
// the batch and the output's positions. An implicit GEMM whose K is that
// reduction: each workgroup takes a chunk of it (upc units of cb input
// features by rb kernel rows), stages each unit's input band and kernel band
// in shared memory once, and every invocation accumulates a register tile of
// OB output features by QB output columns of one output row: each input value
// it reads serves OB x QB products (a window slides along the row, one new
// value per step), each kernel value QB. The tiles of all outputs take
// `tiles` invocations; the workgroup's other invocations form more such
// groups (lanes) that share out the unit's kernel rows, cut into segments of
// js columns. At the end the lanes' sums of each output meet in shared memory
// in lane order, and the workgroup writes its partial sum of every output
// (conv2d_kgrad_sum.comp adds the chunks' up), or the result itself when the
// reduction is one chunk. Nothing depends on timing or the subgroup size.
#include "common.glsl"
#include "epilogue.glsl"

layout(local_size_x = LOCAL) in;
layout(constant_id = 0) const int OB = 1;
layout(constant_id = 1) const int QB = 1;

layout(push_constant) uniform P { KG_PUSH_FIELDS } p;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer K { float kw[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

shared float sm[KG_SM];

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint nob = (p.o + OB - 1) / OB, nqb = (p.ow + QB - 1) / QB, tiles = p.n * p.oh * nob * nqb;
    // Staged input rows reach every column of the last column block's tile,
    // spare columns included, so the window never leaves its row.
    const uint xw = p.kw + nqb * uint(QB) - 1, xr = p.rb + p.oh - 1;
    // One feature's kernel band, odd so that the features of a warp's
    // invocations (OB apart) fall in different banks.
    const uint gplane = (p.rb * p.kw) | 1u, gbase = p.cb * p.n * xr * xw;
    const uint nbands = (p.kh + p.rb - 1) / p.rb, units = (p.c + p.cb - 1) / p.cb * nbands;
    const uint parts = (units + p.upc - 1) / p.upc, nseg = (p.kw + p.js - 1) / p.js;
    const uint tile = lid % tiles, lane = lid / tiles;
    uint t = tile;
    const uint qb = t % nqb;
    t /= nqb;
    const uint ob = t % nob;
    t /= nob;
    const uint oy = t % p.oh, nb = t / p.oh;
    // The last feature block's spare features read the last feature.
    int gofs[OB];
    [[unroll]] for (int f = 0; f < OB; f++)
        gofs[f] = int(min(ob * uint(OB) + uint(f), p.o - 1) * gplane);
    float acc[OB * QB];
    [[unroll]] for (int a = 0; a < OB * QB; a++)
        acc[a] = 0.0;
    const uint u1 = min(units, (gl_WorkGroupID.x + 1) * p.upc);
    for (uint u = gl_WorkGroupID.x * p.upc; u < u1; u++) {
        uint c0 = u / nbands * p.cb, i0 = u % nbands * p.rb;
        uint ncb = min(p.cb, p.c - c0), nrb = min(p.rb, p.kh - i0), nxr = nrb + p.oh - 1;
        // Input rows i0 - ph ... of each feature and batch element, from
        // column -pw; zeros outside the input. A round loads KG_STAGE values
        // per invocation before it stores any, so it waits on memory once.
        const uint nx = ncb * p.n * nxr * xw, ng = ncb * p.o * nrb * p.kw;
        for (uint e0 = lid; e0 < nx; e0 += KG_STAGE * LOCAL) {
            float v[KG_STAGE];
            uint at[KG_STAGE];
            [[unroll]] for (int s = 0; s < KG_STAGE; s++) {
                uint e = e0 + uint(s) * LOCAL;
                v[s] = 0.0;
                at[s] = 0;
                if (e < nx) {
                    uint col = e % xw, r = e / xw;
                    uint row = r % nxr, bc = r / nxr;
                    int iy = int(i0 + row) - p.ph, ix = int(col) - p.pw;
                    if (iy >= 0 && iy < int(p.ih) && ix >= 0 && ix < int(p.iw))
                        v[s] = x[int(bc % p.n) * p.xs[0] + int(c0 + bc / p.n) * p.xs[1] + iy * p.xs[2] + ix * p.xs[3]];
                    at[s] = (bc * xr + row) * xw + col;
                }
            }
            [[unroll]] for (int s = 0; s < KG_STAGE; s++)
                if (e0 + uint(s) * LOCAL < nx)
                    sm[at[s]] = v[s];
        }
        // Kernel rows i0 ... of each feature and output feature, alike.
        for (uint e0 = lid; e0 < ng; e0 += KG_STAGE * LOCAL) {
            float v[KG_STAGE];
            uint at[KG_STAGE];
            [[unroll]] for (int s = 0; s < KG_STAGE; s++) {
                uint e = e0 + uint(s) * LOCAL;
                v[s] = 0.0;
                at[s] = 0;
                if (e < ng) {
                    uint col = e % p.kw, r = e / p.kw;
                    uint row = r % nrb, fc = r / nrb;
                    v[s] = kw[int(fc % p.o) * p.ks[0] + int(c0 + fc / p.o) * p.ks[1] + int(i0 + row) * p.ks[2] +
                              int(col) * p.ks[3]];
                    at[s] = gbase + fc * gplane + row * p.kw + col;
                }
            }
            [[unroll]] for (int s = 0; s < KG_STAGE; s++)
                if (e0 + uint(s) * LOCAL < ng)
                    sm[at[s]] = v[s];
        }
        barrier();
        if (lane < p.lanes) {
            for (uint it = lane; it < ncb * nrb * nseg; it += p.lanes) {
                uint seg = it % nseg, row = it / nseg;
                uint r = row % nrb, ci = row / nrb;
                int j0 = int(seg * p.js), j1 = min(int(p.kw), j0 + int(p.js));
                int xb = int(((ci * p.n + nb) * xr + r + oy) * xw + qb * uint(QB));
                int gb = int(gbase + ci * p.o * gplane + r * p.kw);
                // win[k] holds the input under column qb * QB + k at step j.
                float win[QB];
                [[unroll]] for (int k = 1; k < QB; k++)
                    win[k] = sm[xb + j0 + k - 1];
                for (int j = j0; j < j1; j++) {
                    [[unroll]] for (int k = 0; k + 1 < QB; k++)
                        win[k] = win[k + 1];
                    win[QB - 1] = sm[xb + j + QB - 1];
                    [[unroll]] for (int f = 0; f < OB; f++) {
                        float g = sm[gb + gofs[f] + j];
                        [[unroll]] for (int k = 0; k < QB; k++)
                            acc[f * QB + k] += win[k] * g;
                    }
                }
            }
        }
        barrier();
    }
    if (lane < p.lanes)
        [[unroll]] for (int a = 0; a < OB * QB; a++)
            sm[a * LOCAL + lid] = acc[a];
    barrier();
    const uint cnt = p.n * p.o * p.oh * p.ow;
    for (uint e = lid; e < cnt; e += LOCAL) {
        uint q = e % p.ow, r = e / p.ow;
        uint py = r % p.oh;
        r /= p.oh;
        uint f = r % p.o, b = r / p.o;
        uint tl = ((b * p.oh + py) * nob + f / OB) * nqb + q / QB, a = f % OB * QB + q % QB;
        // four running sums: four loads in flight where there are dozens of lanes
        uint at = a * LOCAL + tl, l = 0;
        float s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (; l + 4 <= p.lanes; l += 4) {
            s0 += sm[at + l * tiles];
            s1 += sm[at + (l + 1) * tiles];
            s2 += sm[at + (l + 2) * tiles];
            s3 += sm[at + (l + 3) * tiles];
        }
        for (; l < p.lanes; l++)
            s0 += sm[at + l * tiles];
        float s = (s0 + s1) + (s2 + s3);
        if (parts == 1) {
            uint yi = uint(int(b) * p.ys[0] + int(f) * p.ys[1] + int(py) * p.ys[2] + int(q) * p.ys[3]);
            y[yi] = ep_store(yi, s);
        } else
            y[gl_WorkGroupID.x * cnt + e] = s;
    }
}

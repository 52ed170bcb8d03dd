#version 450
#extension GL_GOOGLE_include_directive : require
// dot's tiled kernel. Batched GEMM: C[q][m][n] = sum_k A[q][m][k] * B[q][k][n],
// C contiguous.
// A and B are read through one stride per index (batch, row/column, k), so any
// contraction whose axis groups collapse runs without a copy; dot.c packs the
// others first. Tiles of BM x BK and BK x BN are staged in shared memory,
// double-buffered (global loads of the next tile overlap the math on this
// one); each thread owns RM x RN blocks of 4 x 4 outputs, read from shared
// memory as 4-vectors. Defines per variant: TS storage type, TC / V4 compute
// scalar and vector, BM, BN, BK, RM, RN; PAD, one 4-vector of padding per
// shared row, so the transposed stores of a k-contiguous operand spread over
// the banks; VEC (f32), 16-byte global loads along an operand's contiguous
// index where dot.c says they are aligned (a_vec, b_vec).
// A long K arrives in several dispatches (dot.c explains why): a_off/b_off
// start each one at its slice of K, and `accumulate` adds to what the earlier
// ones wrote. EPI variants store through a fused epilogue (epilogue.glsl).
#include "common.glsl"
#include "epilogue.glsl"

#define TX (BN / (4 * RN))
#define TY (BM / (4 * RM))
#define NT (TX * TY)
#define LA (BM * BK / NT)
#define LB (BN * BK / NT)
#ifndef PAD
#define PAD 0
#endif
#ifdef VEC
#define LA4 (BM * BK / 4 / NT)
#define LB4 (BN * BK / 4 / NT)
#endif

layout(local_size_x = NT) in;
layout(std430, binding = 0) readonly buffer A { TS a[]; };
layout(std430, binding = 1) readonly buffer B { TS b[]; };
layout(std430, binding = 2) buffer O { TS o[]; };
#ifdef VEC
layout(std430, binding = 0) readonly buffer A4 { vec4 a4[]; };
layout(std430, binding = 1) readonly buffer B4 { vec4 b4[]; };
#endif

layout(push_constant) uniform P { DOT_PUSH_FIELDS } p;

shared V4 As[2][BK][BM / 4 + PAD];
shared V4 Bs[2][BK][BN / 4 + PAD];

#ifdef VEC
// Tile t of A and B as 4-vectors along each operand's contiguous index (the
// host checked that every 4-vector is aligned and wholly in or out of range).
void fetch4(uint tid, uint abase, uint bbase, uint m0, uint n0, uint k0, inout V4 va[LA4], inout V4 vb[LB4])
{
    [[unroll]] for (int i = 0; i < LA4; i++) {
        uint u = tid + uint(i) * NT;
        uint mm = p.a_mfast != 0 ? (u % (BM / 4)) * 4 : u / (BK / 4);
        uint kk = p.a_mfast != 0 ? u / (BM / 4) : (u % (BK / 4)) * 4;
        uint m = m0 + mm, k = k0 + kk;
        va[i] = (m < p.M && k < p.K) ? a4[(abase + m * p.a_sm + k * p.a_sk) / 4] : V4(0);
    }
    [[unroll]] for (int i = 0; i < LB4; i++) {
        uint u = tid + uint(i) * NT;
        uint nn = p.b_nfast != 0 ? (u % (BN / 4)) * 4 : u / (BK / 4);
        uint kk = p.b_nfast != 0 ? u / (BN / 4) : (u % (BK / 4)) * 4;
        uint n = n0 + nn, k = k0 + kk;
        vb[i] = (n < p.N && k < p.K) ? b4[(bbase + k * p.b_sk + n * p.b_sn) / 4] : V4(0);
    }
}

void stage4(uint tid, uint buf, V4 va[LA4], V4 vb[LB4])
{
    [[unroll]] for (int i = 0; i < LA4; i++) {
        uint u = tid + uint(i) * NT;
        if (p.a_mfast != 0) {
            As[buf][u / (BM / 4)][u % (BM / 4)] = va[i];
        } else {
            uint kk = (u % (BK / 4)) * 4, mm = u / (BK / 4);
            [[unroll]] for (int j = 0; j < 4; j++)
                As[buf][kk + uint(j)][mm >> 2][mm & 3u] = va[i][j];
        }
    }
    [[unroll]] for (int i = 0; i < LB4; i++) {
        uint u = tid + uint(i) * NT;
        if (p.b_nfast != 0) {
            Bs[buf][u / (BN / 4)][u % (BN / 4)] = vb[i];
        } else {
            uint kk = (u % (BK / 4)) * 4, nn = u / (BK / 4);
            [[unroll]] for (int j = 0; j < 4; j++)
                Bs[buf][kk + uint(j)][nn >> 2][nn & 3u] = vb[i][j];
        }
    }
}
#endif

void main()
{
    const uint tid = gl_LocalInvocationIndex;
    const uint tx = tid % TX, ty = tid / TX;
    const uint ntk = (p.K + BK - 1) / BK;
    for (uint q = gl_WorkGroupID.z; q < p.Q; q += gl_NumWorkGroups.z)
    for (uint tm = gl_WorkGroupID.y; tm < p.tiles_m; tm += gl_NumWorkGroups.y)
    for (uint tn = gl_WorkGroupID.x; tn < p.tiles_n; tn += gl_NumWorkGroups.x) {
        const uint m0 = tm * BM, n0 = tn * BN;
        const uint abase = p.a_off + q * p.a_sq, bbase = p.b_off + q * p.b_sq;
        V4 acc[RM * 4][RN];
        [[unroll]] for (int i = 0; i < RM * 4; i++)
            [[unroll]] for (int j = 0; j < RN; j++)
                acc[i][j] = V4(0);
        TC ra[LA], rb[LB];
#ifdef VEC
        V4 va[LA4], vb[LB4];
        const bool vec = p.a_vec != 0 && p.b_vec != 0;
#else
        const bool vec = false;
#endif
        uint buf = 0;
        for (uint t = 0; t <= ntk; t++) {
            // Fetch tile t into registers (the next one to stage).
#ifdef VEC
            if (vec && t < ntk)
                fetch4(tid, abase, bbase, m0, n0, t * BK, va, vb);
#endif
            if (!vec && t < ntk) {
                const uint k0 = t * BK;
                [[unroll]] for (int i = 0; i < LA; i++) {
                    uint e = tid + uint(i) * NT;
                    uint mm = p.a_mfast != 0 ? e % BM : e / BK;
                    uint kk = p.a_mfast != 0 ? e / BM : e % BK;
                    uint m = m0 + mm, k = k0 + kk;
                    ra[i] = (m < p.M && k < p.K) ? TC(a[abase + m * p.a_sm + k * p.a_sk]) : TC(0);
                }
                [[unroll]] for (int i = 0; i < LB; i++) {
                    uint e = tid + uint(i) * NT;
                    uint nn = p.b_nfast != 0 ? e % BN : e / BK;
                    uint kk = p.b_nfast != 0 ? e / BN : e % BK;
                    uint n = n0 + nn, k = k0 + kk;
                    rb[i] = (n < p.N && k < p.K) ? TC(b[bbase + k * p.b_sk + n * p.b_sn]) : TC(0);
                }
            }
            // Multiply the staged tile t-1 while those loads are in flight.
            if (t > 0) {
                [[unroll]] for (int kk = 0; kk < BK; kk++) {
                    V4 av[RM], bv[RN];
                    [[unroll]] for (int c = 0; c < RM; c++)
                        av[c] = As[buf][kk][c * TY + ty];
                    [[unroll]] for (int d = 0; d < RN; d++)
                        bv[d] = Bs[buf][kk][d * TX + tx];
                    [[unroll]] for (int c = 0; c < RM; c++)
                        [[unroll]] for (int i = 0; i < 4; i++)
                            [[unroll]] for (int d = 0; d < RN; d++)
                                acc[c * 4 + i][d] += av[c][i] * bv[d];
                }
                buf ^= 1u;
            }
            // Stage tile t into the other buffer: the last reads of that buffer
            // happened before the previous iteration's barrier.
#ifdef VEC
            if (vec && t < ntk)
                stage4(tid, buf, va, vb);
#endif
            if (!vec && t < ntk) {
                [[unroll]] for (int i = 0; i < LA; i++) {
                    uint e = tid + uint(i) * NT;
                    uint mm = p.a_mfast != 0 ? e % BM : e / BK;
                    uint kk = p.a_mfast != 0 ? e / BM : e % BK;
                    As[buf][kk][mm >> 2][mm & 3u] = ra[i];
                }
                [[unroll]] for (int i = 0; i < LB; i++) {
                    uint e = tid + uint(i) * NT;
                    uint nn = p.b_nfast != 0 ? e % BN : e / BK;
                    uint kk = p.b_nfast != 0 ? e / BN : e % BK;
                    Bs[buf][kk][nn >> 2][nn & 3u] = rb[i];
                }
            }
            barrier();
        }
        const uint obase = q * p.M * p.N;
        [[unroll]] for (int c = 0; c < RM; c++)
            [[unroll]] for (int i = 0; i < 4; i++) {
                uint m = m0 + uint(c) * (BM / RM) + ty * 4u + uint(i);
                if (m >= p.M)
                    continue;
                [[unroll]] for (int d = 0; d < RN; d++)
                    [[unroll]] for (int j = 0; j < 4; j++) {
                        uint n = n0 + uint(d) * (BN / RN) + tx * 4u + uint(j);
                        if (n < p.N) {
                            TC v = acc[c * 4 + i][d][j];
                            uint oi = obase + m * p.N + n;
                            o[oi] = TS(ep_store(oi, p.accumulate != 0 ? TC(o[oi]) + v : v));
                        }
                    }
            }
    }
}

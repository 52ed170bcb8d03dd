#version 450
#extension GL_GOOGLE_include_directive : require
// Batched GEMM: C[q][m][n] = sum_k A[q][m][k] * B[q][k][n], C contiguous.
// A and B are read through one stride per index (batch, row/column, k), so any
// contraction whose axis groups collapse runs without a copy; dot.c packs the
// others first. Tiles of BM x BK and BK x BN are staged in shared memory,
// double-buffered (global loads of the next tile overlap the math on this
// one); each thread owns RM x RN blocks of 4 x 4 outputs, read from shared
// memory as 4-vectors. Defines per variant: TS storage type, TC / V4 compute
// scalar and vector, BM, BN, BK, RM, RN.
// A long K arrives in several dispatches (dot.c explains why): a_off/b_off
// start each one at its slice of K, and `accumulate` adds to what the earlier
// ones wrote.
#include "common.glsl"

#define TX (BN / (4 * RN))
#define TY (BM / (4 * RM))
#define NT (TX * TY)
#define LA (BM * BK / NT)
#define LB (BN * BK / NT)

layout(local_size_x = NT) in;
layout(std430, binding = 0) readonly buffer A { TS a[]; };
layout(std430, binding = 1) readonly buffer B { TS b[]; };
layout(std430, binding = 2) buffer O { TS o[]; };

layout(push_constant) uniform P { DOT_PUSH_FIELDS } p;

shared V4 As[2][BK][BM / 4];
shared V4 Bs[2][BK][BN / 4];

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
        uint buf = 0;
        for (uint t = 0; t <= ntk; t++) {
            // Fetch tile t into registers (the next one to stage).
            if (t < ntk) {
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
            if (t < ntk) {
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
                            o[obase + m * p.N + n] = TS(p.accumulate != 0 ? TC(o[obase + m * p.N + n]) + v : v);
                        }
                    }
            }
    }
}

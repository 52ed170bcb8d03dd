#version 450
#extension GL_GOOGLE_include_directive : require
// dot's kernel for small products on a GPU (a CNN's dense layers and their
// gradients: tens of thousands of outputs or fewer): 16 x 16 output tiles,
// one output per thread, so even a 64 x 120 product spreads over 32
// workgroups where the 64 x 64 tile would give 2. Tiles of 16 x BK of A and
// BK x 16 of B pass through shared memory. Same push constants and strided
// operands as gemm.comp, K slices and epilogues included.
#include "common.glsl"
#include "epilogue.glsl"

#define T 16
#define BK 32

layout(local_size_x = T * T) in;
layout(std430, binding = 0) readonly buffer A { TS a[]; };
layout(std430, binding = 1) readonly buffer B { TS b[]; };
layout(std430, binding = 2) buffer O { TS o[]; };

layout(push_constant) uniform P { DOT_PUSH_FIELDS } p;

// One padding column keeps a column's reads on distinct banks.
shared TC As[BK][T + 1];
shared TC Bs[BK][T + 1];

// Element i (0, 1) of this thread's share of tile k0 of A and of B, into
// registers ra##i, rb##i; then into shared memory. Macros, not functions: an
// array passed to a function may end up in memory on some drivers.
#define FETCH(i, k0)                                                                                   \
    {                                                                                                  \
        uint e = tid + i * T * T;                                                                      \
        uint mm = p.a_mfast != 0 ? e % T : e / BK, ka = p.a_mfast != 0 ? e / T : e % BK;              \
        uint m = m0 + mm, k = (k0) + ka;                                                               \
        ra##i = (m < p.M && k < p.K) ? TC(a[abase + m * p.a_sm + k * p.a_sk]) : TC(0);                 \
        uint nn = p.b_nfast != 0 ? e % T : e / BK, kb = p.b_nfast != 0 ? e / T : e % BK;              \
        uint n = n0 + nn;                                                                              \
        k = (k0) + kb;                                                                                 \
        rb##i = (n < p.N && k < p.K) ? TC(b[bbase + k * p.b_sk + n * p.b_sn]) : TC(0);                 \
    }
#define STAGE(i)                                                                                       \
    {                                                                                                  \
        uint e = tid + i * T * T;                                                                      \
        As[p.a_mfast != 0 ? e / T : e % BK][p.a_mfast != 0 ? e % T : e / BK] = ra##i;                  \
        Bs[p.b_nfast != 0 ? e / T : e % BK][p.b_nfast != 0 ? e % T : e / BK] = rb##i;                  \
    }

void main()
{
    const uint tid = gl_LocalInvocationIndex;
    const uint tx = tid % T, ty = tid / T;
    for (uint q = gl_WorkGroupID.z; q < p.Q; q += gl_NumWorkGroups.z)
    for (uint tm = gl_WorkGroupID.y; tm < p.tiles_m; tm += gl_NumWorkGroups.y)
    for (uint tn = gl_WorkGroupID.x; tn < p.tiles_n; tn += gl_NumWorkGroups.x) {
        const uint m0 = tm * T, n0 = tn * T;
        const uint abase = p.a_off + q * p.a_sq, bbase = p.b_off + q * p.b_sq;
        TC acc = TC(0);
        // Each thread stages two elements of each tile, walking the operand's
        // contiguous index first so the loads coalesce; the next chunk's
        // loads are in flight while this one multiplies.
        TC ra0, ra1, rb0, rb1;
        FETCH(0, 0u);
        FETCH(1, 0u);
        for (uint k0 = 0; k0 < p.K; k0 += BK) {
            STAGE(0);
            STAGE(1);
            barrier();
            if (k0 + BK < p.K) {
                FETCH(0, k0 + BK);
                FETCH(1, k0 + BK);
            }
            [[unroll]] for (uint kk = 0; kk < BK; kk++)
                acc += As[kk][ty] * Bs[kk][tx];
            barrier();
        }
        uint m = m0 + ty, n = n0 + tx;
        if (m < p.M && n < p.N) {
            uint oi = q * p.M * p.N + m * p.N + n;
            o[oi] = TS(ep_store(oi, p.accumulate != 0 ? TC(o[oi]) + acc : acc));
        }
    }
}

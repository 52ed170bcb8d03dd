#version 450
#extension GL_GOOGLE_include_directive : require
// Batched GEMM with one thread per output and no shared memory, for thin
// products (matrix-vector, vector-vector, few rows or columns) where a 64-wide
// tile would idle most of its threads. Same push constants and strided
// operands as gemm.comp (epilogues too); a grid-stride loop covers any Q * M * N.
#include "common.glsl"
#include "epilogue.glsl"

layout(local_size_x = LOCAL) in;
layout(std430, binding = 0) readonly buffer A { TS a[]; };
layout(std430, binding = 1) readonly buffer B { TS b[]; };
layout(std430, binding = 2) buffer O { TS o[]; };

layout(push_constant) uniform P { DOT_PUSH_FIELDS } p;

void main()
{
    GRID_LOOP(i, p.Q * p.M * p.N) {
        uint n = i % p.N, r = i / p.N;
        uint m = r % p.M, q = r / p.M;
        uint ia = p.a_off + q * p.a_sq + m * p.a_sm, ib = p.b_off + q * p.b_sq + n * p.b_sn;
        TC acc = TC(0);
        for (uint k = 0; k < p.K; k++, ia += p.a_sk, ib += p.b_sk)
            acc += TC(a[ia]) * TC(b[ib]);
        o[i] = TS(ep_store(i, p.accumulate != 0 ? TC(o[i]) + acc : acc));
    }
}

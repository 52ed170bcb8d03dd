#version 450
#extension GL_GOOGLE_include_directive : require
// Nx.gather: output element i is slab element f of index tuple t; the tuple's
// k indices (clamped into range) pick the slab's origin in x along the
// indexed axes, and f walks x's remaining nf axes. k + nf is x's rank, so one
// array holds the indexed dims [0, k) and then the free ones [k, k + nf).
#include "common.glsl"
#include "divide.glsl"

layout(local_size_x = LOCAL) in;
layout(push_constant) uniform PC { GATHER_PUSH_FIELDS } pc;
layout(std430, binding = 0) readonly buffer A { TE a[]; };
layout(std430, binding = 1) readonly buffer I { int idx[]; };
layout(std430, binding = 2) writeonly buffer O { TE o[]; };

void main()
{
    GRID_LOOP(i, pc.n)
    {
        if (pc.empty != 0) {
            o[i] = TE(0);
            continue;
        }
        uint t = fastdiv(i, pc.slab_magic, pc.slab_shift), f = i - t * pc.slab, off = 0;
        [[unroll]] for (uint j = 0; j < MAXR; j++) {
            if (j >= pc.k)
                break;
            int v = clamp(idx[t * pc.k + j], 0, int(pc.dims[j]) - 1);
            off += uint(v) * pc.strides[j];
        }
        [[unroll]] for (int d = MAXR - 1; d >= 1; d--) {
            if (d >= int(pc.nf))
                continue;
            uint q = fastdiv(f, pc.magic[d], divshift(pc.shifts, d));
            off += (f - q * pc.dims[pc.k + d]) * pc.strides[pc.k + d];
            f = q;
        }
        if (pc.nf > 0)
            off += f * pc.strides[pc.k];
        o[i] = a[off];
    }
}

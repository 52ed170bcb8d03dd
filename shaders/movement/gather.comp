#version 450
#extension GL_GOOGLE_include_directive : require
// Nx.gather: output element i is slab element f of index tuple t; the tuple's
// k indices (clamped into range) pick the slab's origin in x along the
// indexed axes, and f walks x's remaining axes.
#include "common.glsl"

layout(local_size_x = LOCAL) in;
layout(push_constant) uniform PC {
    uint n, k, nf, slab;
    uint empty; // an indexed axis has size 0: the result is zeros
    uint ndim[MAXR];
    uint istr[MAXR];
    uint fshape[MAXR];
    uint fst[MAXR];
} pc;
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
        uint t = i / pc.slab, f = i % pc.slab, off = 0;
        [[unroll]] for (uint j = 0; j < MAXR; j++) {
            if (j >= pc.k)
                break;
            int v = clamp(idx[t * pc.k + j], 0, int(pc.ndim[j]) - 1);
            off += uint(v) * pc.istr[j];
        }
        [[unroll]] for (int d = MAXR - 1; d >= 0; d--) {
            if (d >= int(pc.nf))
                continue;
            off += (f % pc.fshape[d]) * pc.fst[d];
            f /= pc.fshape[d];
        }
        o[i] = a[off];
    }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// The strided copy behind transpose, broadcast, slice, reverse and each slab
// of concatenate: iteration index -> coordinates -> a signed offset into the
// source and one into the destination. Strides of 0 broadcast, negative ones
// reverse; the host collapses contiguous dims first so most calls have rank 1-2.
#include "common.glsl"

layout(local_size_x = LOCAL) in;
layout(push_constant) uniform PC {
    uint n, rank;
    int ibase, obase;
    uint shape[MAXR];
    int ist[MAXR];
    int ost[MAXR];
} pc;
layout(std430, binding = 0) readonly buffer A { TE a[]; };
layout(std430, binding = 1) writeonly buffer O { TE o[]; };

void main()
{
    GRID_LOOP(i, pc.n)
    {
        uint r = i;
        int si = pc.ibase, so = pc.obase;
        [[unroll]] for (int d = MAXR - 1; d >= 0; d--) {
            if (d >= int(pc.rank))
                continue;
            uint c = r % pc.shape[d];
            r /= pc.shape[d];
            si += int(c) * pc.ist[d];
            so += int(c) * pc.ost[d];
        }
        o[so] = a[si];
    }
}

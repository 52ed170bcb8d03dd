#version 450
#extension GL_GOOGLE_include_directive : require
// The strided copy behind transpose, broadcast, slice, reverse and each slab
// of concatenate: iteration index -> coordinates -> a signed offset into the
// source and one into the destination. Strides of 0 broadcast, negative ones
// reverse; the host collapses contiguous dims first so most calls have rank 1-2.
#include "common.glsl"
#include "divide.glsl"

layout(local_size_x = LOCAL) in;
layout(push_constant) uniform PC { MV_PUSH_FIELDS } pc;
layout(std430, binding = 0) readonly buffer A { TE a[]; };
layout(std430, binding = 1) writeonly buffer O { TE o[]; };

void main()
{
    GRID_LOOP(i, pc.n)
    {
        uint r = i;
        int si = pc.ibase, so = pc.obase;
        // The outermost coordinate is what remains: no division for it.
        [[unroll]] for (int d = MAXR - 1; d >= 1; d--) {
            if (d >= int(pc.rank))
                continue;
            uint q = fastdiv(r, pc.magic[d], divshift(pc.shifts, d));
            uint c = r - q * pc.shape[d];
            r = q;
            si += int(c) * pc.ist[d];
            so += int(c) * pc.ost[d];
        }
        if (pc.rank > 0) {
            si += int(r) * pc.ist[0];
            so += int(r) * pc.ost[0];
        }
        o[so] = a[si];
    }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Nx.pad in one pass: each output element finds the input element that lands
// on it (x index q of an axis sits at lo + q * step, step = interior + 1) or
// takes the pad value, so every output element is written exactly once and
// negative lo/hi trimming needs no special case. Without interior padding
// (step 1 everywhere, the common case) the push constants have room for the
// dividers of the output shape; with it, plain division.
#include "common.glsl"
#include "divide.glsl"

layout(local_size_x = LOCAL) in;
layout(push_constant) uniform PC { PAD_PUSH_FIELDS } pc;
layout(std430, binding = 0) readonly buffer A { TE a[]; };
layout(std430, binding = 1) readonly buffer V { TE v[]; };
layout(std430, binding = 2) writeonly buffer O { TE o[]; };

void main()
{
    GRID_LOOP(i, pc.n)
    {
        uint r = i, off = 0, mul = 1;
        bool inside = true;
        [[unroll]] for (int d = MAXR - 1; d >= 0; d--) {
            if (d >= int(pc.rank))
                continue;
#ifdef INTERIOR
            uint c = r % pc.shape[d];
            r /= pc.shape[d];
            int p = int(c) - pc.lo[d];
            uint q = uint(max(p, 0)) / pc.step_or_magic[d];
            inside = inside && p >= 0 && q * pc.step_or_magic[d] == uint(p) && q < pc.xdim[d];
#else
            uint c = r;
            if (d > 0) {
                uint qd = fastdiv(r, pc.step_or_magic[d], divshift(pc.shifts, d));
                c = r - qd * pc.shape[d];
                r = qd;
            }
            int p = int(c) - pc.lo[d];
            uint q = uint(p);
            inside = inside && p >= 0 && q < pc.xdim[d];
#endif
            off += q * mul;
            mul *= pc.xdim[d];
        }
        // A branch, not a select: off is meaningless (maybe out of range) outside.
        if (inside)
            o[i] = a[off];
        else
            o[i] = v[0];
    }
}

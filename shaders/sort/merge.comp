#version 450
#extension GL_GOOGLE_include_directive : require
// sort and argsort, later steps: one merge pass of sorted runs of width w into runs of 2w, per row: each
// element finds its place by a binary search in the other run (its rank there
// under the stable order) plus its rank in its own. The last pass writes the
// result (values copied bit for bit, or the indices).
#include "common.glsl"
#include "order.glsl"

layout(local_size_x = LOCAL) in;
layout(std430, binding = 0) readonly buffer X { TS x[]; };
layout(std430, binding = 0) readonly buffer XR { TE xr[]; };
layout(std430, binding = 1) readonly buffer I { uint ix[]; };
layout(std430, binding = 2) writeonly buffer J { uint jx[]; };
layout(std430, binding = 3) writeonly buffer OV { TE ov[]; };
layout(std430, binding = 3) writeonly buffer OI { int oi[]; };

layout(push_constant) uniform P { SORT_PUSH_FIELDS } p;

void main()
{
    const bool desc = p.desc != 0;
    GRID_LOOP(t, p.rows * p.n) {
        uint row = t / p.n, k = t % p.n;
        uint base = (row / p.inner) * p.n * p.inner + row % p.inner;
        uint start = (k / (2 * p.w)) * (2 * p.w);
        bool left = k - start < p.w;
        uint mine = left ? start : start + p.w;
        uint other = left ? start + p.w : start;
        uint olen = left ? min(p.w, p.n - min(p.n, start + p.w)) : p.w;
        uint me = ix[row * p.n + k];
        TC key = TC(x[base + me * p.inner]);
        uint lo = 0, hi = olen;
        while (lo < hi) {
            uint mid = (lo + hi) >> 1;
            uint oi_ = ix[row * p.n + other + mid];
            if (sort_before(TC(x[base + oi_ * p.inner]), oi_, key, me, desc))
                lo = mid + 1;
            else
                hi = mid;
        }
        uint pos = start + (k - mine) + lo;
        if (p.final_ != 0) {
            if (p.arg != 0)
                oi[base + pos * p.inner] = int(me);
            else
                ov[base + pos * p.inner] = xr[base + me * p.inner];
        } else {
            jx[row * p.n + pos] = me;
        }
    }
}

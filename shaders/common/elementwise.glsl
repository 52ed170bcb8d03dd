// Helpers for the elementwise shaders: NaN-aware min/max, IEEE-careful pow,
// and the special functions GLSL lacks, with documented error bounds
// (tests/vkt/tolerances.md).
#include "common.glsl"

layout(constant_id = 0) const uint OP = 0;
layout(push_constant) uniform PC { Strided p; } pc;

uint in_offset(uint i, uint which)
{
    if (pc.p.contig != 0)
        return i;
    uint off = 0;
    [[unroll]] for (int d = MAXR - 1; d >= 0; d--) {
        if (d >= int(pc.p.rank))
            continue;
        uint c = i % pc.p.shape[d];
        i /= pc.p.shape[d];
        off += c * (which == 0 ? pc.p.sa[d] : which == 1 ? pc.p.sb[d] : pc.p.sc[d]);
    }
    return off;
}

#if defined(IS_FLOAT)
bool isnan_(TC x) { return isnan(x); }
TC fmin_(TC a, TC b) { return isnan(a) || isnan(b) ? a + b : min(a, b); }
TC fmax_(TC a, TC b) { return isnan(a) || isnan(b) ? a + b : max(a, b); }
TC round_away(TC x)
{
    TC t = trunc(x);
    return abs(x - t) >= TC(0.5) ? t + sign(x) : t;
}
#endif

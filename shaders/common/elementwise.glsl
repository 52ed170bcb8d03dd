// Helpers for the elementwise shaders: NaN-aware min/max, IEEE-careful pow,
// and the special functions GLSL lacks, with documented error bounds
// (tests/vkt/tolerances.md).
#include "common.glsl"
#include "floatbits.glsl"

// The fused kernel has its own specialization constants and push constants.
#if !defined(EW_FUSED)
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
#endif

#if defined(IS_FLOAT) && !defined(IS_F64)
bool isnan_(float x) { return fb_nan(x); }
// x / y, with |y| >= 2^126 scaled down first: drivers may divide as x * (1/y),
// and where 1/y is subnormal a flushing one makes it 0 (the H200 gave
// inf / FLT_MAX = NaN and 1e30 / FLT_MAX = 0). Scaling by 2^-2 is exact, and an
// x it pushes below FLT_MIN has a quotient far below it too.
float fdiv_(float x, float y)
{
    uint m = fb_mag(y);
    return m >= 0x7e800000u && m < 0x7f800000u ? (x * 0.25) / (y * 0.25) : x / y;
}
// NaN first; equal values (±0) give -0 for min and +0 for max, as the host does.
float fmin_(float a, float b)
{
    if (fb_nan(a) || fb_nan(b)) return fb_nan(a) ? a : b;
    if (fb_eq(a, b)) return (floatBitsToUint(a) & 0x80000000u) != 0u ? a : b;
    return fb_lt(a, b) ? a : b;
}
float fmax_(float a, float b)
{
    if (fb_nan(a) || fb_nan(b)) return fb_nan(a) ? a : b;
    if (fb_eq(a, b)) return (floatBitsToUint(a) & 0x80000000u) != 0u ? b : a;
    return fb_lt(a, b) ? b : a;
}
#elif defined(IS_FLOAT)
bool isnan_(TC x) { return isnan(x); }
TC fmin_(TC a, TC b) { return isnan(a) || isnan(b) ? a + b : min(a, b); }
TC fmax_(TC a, TC b) { return isnan(a) || isnan(b) ? a + b : max(a, b); }
#endif
#if defined(IS_FLOAT)
TC round_away(TC x)
{
    TC t = trunc(x);
    return abs(x - t) >= TC(0.5) ? t + sign(x) : t;
}
#endif

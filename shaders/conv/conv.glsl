// conv.glsl — the conv family's parameter block and output decoding, shared by
// its kernels. Geometry travels in a small storage buffer, not push constants:
// three strided layouts plus seven numbers per spatial dim exceed the 128-byte
// push limit. Spatial dims are padded to four at the front (size 1, stride 0),
// so one loop nest serves ranks 3 to 6.
#include "common.glsl"

// The parameter block's offsets (CV_*) are in layouts.h.

layout(std430, binding = 0) readonly buffer X { TA x[]; };
layout(std430, binding = 1) readonly buffer K { TA kw[]; };
layout(std430, binding = 2) readonly buffer P { int p[]; };
layout(std430, binding = 3) writeonly buffer Y { TA y[]; };

#define SPP(d, f) p[CV_SP + CV_SPW * (d) + (f)]

// One canonical output element: where it is written and where its input
// window and kernel slice start.
struct cv_out {
    int opos[4];
    int yoff, xbase, kbase;
};

cv_out cv_decode(uint i)
{
    cv_out o;
    uint rest = i;
    o.yoff = 0;
    [[unroll]] for (int d = 3; d >= 0; d--) {
        uint s = uint(SPP(d, CV_OSZ));
        int q = int(rest % s);
        rest /= s;
        o.opos[d] = q;
        o.yoff += q * SPP(d, CV_YST);
    }
    int f = int(rest % uint(p[CV_O]));
    int nb = int(rest / uint(p[CV_O]));
    o.yoff += nb * p[CV_YS_N] + f * p[CV_YS_C];
    int fg = f / p[CV_PER_FG], bg = f / p[CV_PER_BG];
    o.xbase = (bg * p[CV_BATCH_BG] + nb) * p[CV_XS_N] + fg * p[CV_CG] * p[CV_XS_C];
    o.kbase = f * p[CV_KS_O];
    return o;
}

// The taps of one spatial dim that land on input elements rather than on
// padding or dilation holes: k = kb, kb + ks, ... < ke, reading input index
// q, q + qs, ... Found once per output, so the loops that follow divide nothing.
struct cv_win {
    int kb, ke, ks, q, qs, n;
};

cv_win cv_window(int d, int opos)
{
    cv_win w;
    int rd = SPP(d, CV_RD), ld = SPP(d, CV_LD), ksz = SPP(d, CV_KSZ), isz = SPP(d, CV_ISZ);
    int base = opos * SPP(d, CV_STR) - SPP(d, CV_LO);
    int last = (isz - 1) * ld - base; // the largest k * rd that stays inside
    w.ks = SPP(d, CV_KSTEP);
    w.qs = rd * w.ks / ld;
    w.kb = base >= 0 ? 0 : (-base + rd - 1) / rd;
    w.ke = (isz <= 0 || last < 0) ? 0 : min(ksz, last / rd + 1);
    // Align to the first tap on a non-hole: taps repeat their alignment every
    // ks, so if none of the first ks aligns (gcd(rd, ld) does not divide
    // base), no tap of this output reads the input at all.
    int k = w.kb;
    bool found = false;
    for (int t = 0; t < w.ks && k < w.ke; t++, k++) {
        if ((base + k * rd) % ld == 0) {
            found = true;
            break;
        }
    }
    w.kb = k;
    w.q = (base + k * rd) / ld;
    w.n = found ? (w.ke - w.kb + w.ks - 1) / w.ks : 0;
    return w;
}

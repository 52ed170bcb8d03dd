#version 450
#extension GL_GOOGLE_include_directive : require
// conv, one invocation per output element: loops over the kernel window
// (skipping padding and dilation holes a whole row at a time) and the input
// features of its group. Any layout: every access goes through strides.
#include "conv.glsl"

layout(local_size_x = LOCAL) in;

void main()
{
    uint n = uint(p[CV_N]);
    int ksz[4], st[4], lo[4], ld[4], rd[4], isz[4], xst[4], kst[4];
    [[unroll]] for (int d = 0; d < 4; d++) {
        ksz[d] = SPP(d, CV_KSZ);
        st[d] = SPP(d, CV_STR);
        lo[d] = SPP(d, CV_LO);
        ld[d] = SPP(d, CV_LD);
        rd[d] = SPP(d, CV_RD);
        isz[d] = SPP(d, CV_ISZ);
        xst[d] = SPP(d, CV_XST);
        kst[d] = SPP(d, CV_KST);
    }
    int cg = p[CV_CG], xs_c = p[CV_XS_C], ks_i = p[CV_KS_I];
    GRID_LOOP(i, n) {
        cv_out o = cv_decode(i);
        TC acc = TC(0);
        for (int k0 = 0; k0 < ksz[0]; k0++) {
            int q0 = o.opos[0] * st[0] - lo[0] + k0 * rd[0];
            if (q0 < 0 || q0 % ld[0] != 0) continue;
            q0 /= ld[0];
            if (q0 >= isz[0]) break;
            for (int k1 = 0; k1 < ksz[1]; k1++) {
                int q1 = o.opos[1] * st[1] - lo[1] + k1 * rd[1];
                if (q1 < 0 || q1 % ld[1] != 0) continue;
                q1 /= ld[1];
                if (q1 >= isz[1]) break;
                for (int k2 = 0; k2 < ksz[2]; k2++) {
                    int q2 = o.opos[2] * st[2] - lo[2] + k2 * rd[2];
                    if (q2 < 0 || q2 % ld[2] != 0) continue;
                    q2 /= ld[2];
                    if (q2 >= isz[2]) break;
                    int xo2 = o.xbase + q0 * xst[0] + q1 * xst[1] + q2 * xst[2];
                    int ko2 = o.kbase + k0 * kst[0] + k1 * kst[1] + k2 * kst[2];
                    for (int k3 = 0; k3 < ksz[3]; k3++) {
                        int q3 = o.opos[3] * st[3] - lo[3] + k3 * rd[3];
                        if (q3 < 0 || q3 % ld[3] != 0) continue;
                        q3 /= ld[3];
                        if (q3 >= isz[3]) break;
                        int xo = xo2 + q3 * xst[3], ko = ko2 + k3 * kst[3];
                        for (int c = 0; c < cg; c++)
                            acc += TC(x[xo + c * xs_c]) * TC(kw[ko + c * ks_i]);
                    }
                }
            }
        }
        y[o.yoff] = TA(acc);
    }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// conv, one invocation per output element: loops over the taps of the kernel
// window that hit the input (found per dim up front) and the input features of
// its group. Any layout: every access goes through strides.
#include "conv.glsl"

layout(local_size_x = LOCAL) in;

void main()
{
    uint n = uint(p[CV_N]);
    int xst[4], kst[4];
    [[unroll]] for (int d = 0; d < 4; d++) {
        xst[d] = SPP(d, CV_XST);
        kst[d] = SPP(d, CV_KST);
    }
    int cg = p[CV_CG], xs_c = p[CV_XS_C], ks_i = p[CV_KS_I];
    GRID_LOOP(i, n) {
        cv_out o = cv_decode(i);
        cv_win w0 = cv_window(0, o.opos[0]), w1 = cv_window(1, o.opos[1]);
        cv_win w2 = cv_window(2, o.opos[2]), w3 = cv_window(3, o.opos[3]);
        TC acc = TC(0);
        int x0 = o.xbase + w0.q * xst[0], k0 = o.kbase + w0.kb * kst[0];
        for (int t0 = 0; t0 < w0.n; t0++, x0 += w0.qs * xst[0], k0 += w0.ks * kst[0]) {
            int x1 = x0 + w1.q * xst[1], k1 = k0 + w1.kb * kst[1];
            for (int t1 = 0; t1 < w1.n; t1++, x1 += w1.qs * xst[1], k1 += w1.ks * kst[1]) {
                int x2 = x1 + w2.q * xst[2], k2 = k1 + w2.kb * kst[2];
                for (int t2 = 0; t2 < w2.n; t2++, x2 += w2.qs * xst[2], k2 += w2.ks * kst[2]) {
                    int x3 = x2 + w3.q * xst[3], k3 = k2 + w3.kb * kst[3];
                    for (int t3 = 0; t3 < w3.n; t3++, x3 += w3.qs * xst[3], k3 += w3.ks * kst[3]) {
                        for (int c = 0; c < cg; c++)
                            acc += TC(x[x3 + c * xs_c]) * TC(kw[k3 + c * ks_i]);
                    }
                }
            }
        }
        y[o.yoff] = TA(acc);
    }
}

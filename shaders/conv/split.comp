#version 450
#extension GL_GOOGLE_include_directive : require
// conv, one workgroup per output element: for few outputs with long
// reductions (the kernel gradient, whose reduction runs over the batch and the
// output's spatial extent) one invocation per output would leave most of the
// device idle. Invocations share out (input feature, outer taps) pairs and
// each walks the innermost taps itself; partial sums meet in a shared-memory
// tree, which does not depend on the subgroup size and sums in a fixed order.
#include "conv.glsl"

layout(local_size_x = LOCAL) in;
shared TC red[LOCAL];

void main()
{
    uint n = uint(p[CV_N]), lid = gl_LocalInvocationID.x;
    int xst[4], kst[4];
    [[unroll]] for (int d = 0; d < 4; d++) {
        xst[d] = SPP(d, CV_XST);
        kst[d] = SPP(d, CV_KST);
    }
    int cg = p[CV_CG], xs_c = p[CV_XS_C], ks_i = p[CV_KS_I];
    for (uint wg = gl_WorkGroupID.x; wg < n; wg += gl_NumWorkGroups.x) {
        cv_out o = cv_decode(wg);
        cv_win w0 = cv_window(0, o.opos[0]), w1 = cv_window(1, o.opos[1]);
        cv_win w2 = cv_window(2, o.opos[2]), w3 = cv_window(3, o.opos[3]);
        uint n12 = uint(w1.n * w2.n), n012 = uint(w0.n) * n12;
        uint items = uint(cg) * n012;
        TC acc = TC(0);
        for (uint j = lid; j < items; j += LOCAL) {
            uint c = j / n012, r = j % n012;
            int t0 = int(r / n12), t12 = int(r % n12);
            int t1 = t12 / w2.n, t2 = t12 % w2.n;
            int xo = o.xbase + int(c) * xs_c + (w0.q + t0 * w0.qs) * xst[0] + (w1.q + t1 * w1.qs) * xst[1] +
                     (w2.q + t2 * w2.qs) * xst[2] + w3.q * xst[3];
            int ko = o.kbase + int(c) * ks_i + (w0.kb + t0 * w0.ks) * kst[0] + (w1.kb + t1 * w1.ks) * kst[1] +
                     (w2.kb + t2 * w2.ks) * kst[2] + w3.kb * kst[3];
            for (int t3 = 0; t3 < w3.n; t3++, xo += w3.qs * xst[3], ko += w3.ks * kst[3])
                acc += TC(x[xo]) * TC(kw[ko]);
        }
        red[lid] = acc;
        barrier();
        for (uint s = LOCAL / 2; s > 0; s >>= 1) {
            if (lid < s)
                red[lid] += red[lid + s];
            barrier();
        }
        if (lid == 0)
            y[o.yoff] = TA(red[0]);
        barrier();
    }
}

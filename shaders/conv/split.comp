#version 450
#extension GL_GOOGLE_include_directive : require
// conv, one workgroup per output element: for few outputs with long
// reductions (the kernel gradient, whose reduction runs over the batch and the
// output's spatial extent) one invocation per output would leave most of the
// device idle. Partial sums meet in a shared-memory tree, which does not depend
// on the subgroup size and sums in a fixed order.
#include "conv.glsl"

layout(local_size_x = LOCAL) in;
shared TC red[LOCAL];

void main()
{
    uint n = uint(p[CV_N]), lid = gl_LocalInvocationID.x;
    uint ksp = uint(p[CV_KSP]), r_end = uint(p[CV_R]);
    int xs_c = p[CV_XS_C], ks_i = p[CV_KS_I];
    for (uint w = gl_WorkGroupID.x; w < n; w += gl_NumWorkGroups.x) {
        cv_out o = cv_decode(w);
        TC acc = TC(0);
        for (uint r = lid; r < r_end; r += LOCAL) {
            int c = int(r / ksp);
            uint rest = r % ksp;
            int xo = o.xbase + c * xs_c, ko = o.kbase + c * ks_i;
            bool inside = true;
            [[unroll]] for (int d = 3; d >= 0; d--) {
                uint ks = uint(SPP(d, CV_KSZ));
                int kp = int(rest % ks);
                rest /= ks;
                int q = o.opos[d] * SPP(d, CV_STR) - SPP(d, CV_LO) + kp * SPP(d, CV_RD);
                int l = SPP(d, CV_LD);
                inside = inside && q >= 0 && q % l == 0 && q / l < SPP(d, CV_ISZ);
                xo += (q / l) * SPP(d, CV_XST);
                ko += kp * SPP(d, CV_KST);
            }
            if (inside)
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

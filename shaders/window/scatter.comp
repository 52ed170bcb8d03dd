#version 450
#extension GL_GOOGLE_include_directive : require
// window_scatter_max and window_scatter_min, second pass (a gather: no atomics, deterministic):
// one invocation per input element walks the windows that can cover it, in
// row-major window order, and adds the source value of each window that
// selected it onto the init value.
#define WIN_PARAMS 3
#include "window.glsl"

layout(std430, binding = 0) readonly buffer S { int sel[]; };
layout(std430, binding = 1) readonly buffer Src { TO src[]; };
layout(std430, binding = 2) readonly buffer Init { TO init[]; };
layout(std430, binding = 4) buffer O { TO o[]; };

void main()
{
    load_geometry();
    GRID_LOOP(i, pc.n) {
        int omin[MAXR], omax[MAXR], jd[MAXR];
        bool any = true;
        uint r = i, k = pc.k0;
        AXES(d) {
            uint id = uint(g_in[d]);
            int t = int(r % id) + g_lo[d], s = g_str[d], lowest = t - g_win[d] + 1;
            r /= id;
            // Windows o with o*s - lo <= pos <= o*s - lo + win - 1, within [0, out).
            omin[d] = lowest <= 0 ? 0 : (lowest + s - 1) / s;
            omax[d] = t < 0 ? -1 : min(t / s, g_out[d] - 1);
            any = any && omin[d] <= omax[d];
            jd[d] = 0;
            if (pc.k0 != 0u) {
                jd[d] = int(k % uint(g_nb[d]));
                k /= uint(g_nb[d]);
            }
        }
        TC acc = pc.first != 0u ? TC(init[0]) : TC(o[i]);
        if (any) {
            for (uint k = pc.k0; k < pc.k1; k++) {
                int off = 0;
                bool ok = true;
                AXES_UP(d) {
                    int od = omin[d] + jd[d];
                    ok = ok && od <= omax[d];
                    off += od * g_sst[d];
                }
                if (ok && sel[off] == int(i))
                    acc += TC(src[off]);
                AXES(d) {
                    if (++jd[d] < g_nb[d])
                        break;
                    jd[d] = 0;
                }
            }
        }
        o[i] = TO(acc);
    }
}

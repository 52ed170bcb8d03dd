#version 450
#extension GL_GOOGLE_include_directive : require
// window_scatter_max and window_scatter_min, first pass: one invocation per
// window finds the input element it selects: the window's first NaN if it
// holds one (the element window_max gives there), else its first extremum in
// row-major window order; padding is never selected; -1 when the window holds
// only padding. The best value so far is kept for the next slice.
#define WIN_PARAMS 1
#include "window.glsl"

layout(std430, binding = 0) readonly buffer X { TA x[]; };
layout(std430, binding = 2) buffer S { int sel[]; };
layout(std430, binding = 3) buffer B { TA best[]; };
layout(constant_id = 0) const uint OP = 0; // 0 max, 1 min
#include "window_ops.glsl"

void main()
{
    load_geometry();
    GRID_LOOP(i, pc.n) {
        int base[MAXR], kd[MAXR];
        uint r = i, k = pc.k0;
        AXES(d) {
            uint od = uint(g_out[d]);
            base[d] = int(r % od) * g_str[d] - g_lo[d];
            r /= od;
            kd[d] = 0;
            if (pc.k0 != 0u) {
                kd[d] = int(k % uint(g_win[d]));
                k /= uint(g_win[d]);
            }
        }
        int s = pc.first != 0u ? -1 : sel[i];
        TC b = pc.first != 0u ? TC(0) : TC(best[i]);
        for (uint k = pc.k0; k < pc.k1; k++) {
            int off = 0;
            bool ok = true;
            AXES_UP(d) {
                int pos = base[d] + kd[d];
                ok = ok && pos >= 0 && pos < g_in[d];
                off += pos * g_ist[d];
            }
            if (ok) {
                TC v = TC(x[off]);
                if (takes(s < 0, b, v)) {
                    s = off;
                    b = v;
                }
            }
            AXES(d) {
                if (++kd[d] < g_win[d])
                    break;
                kd[d] = 0;
            }
        }
        sel[i] = s;
        best[i] = TA(b);
    }
}

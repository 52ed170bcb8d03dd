#version 450
#extension GL_GOOGLE_include_directive : require
// window_sum, window_product, window_max, window_min: one invocation per
// output element folds its window's slice into the accumulator; padding is
// the identity. Floats: max/min propagate NaN and order -0 below +0, as the
// reference does.
#define WIN_PARAMS 1
#include "window.glsl"

layout(std430, binding = 0) readonly buffer X { TA x[]; };
layout(std430, binding = 2) buffer O { TA o[]; };
layout(constant_id = 0) const uint OP = 0; // 0 sum, 1 product, 2 max, 3 min

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
        TC acc = pc.first != 0u ? ident() : TC(o[i]);
        for (uint k = pc.k0; k < pc.k1; k++) {
            int off = 0;
            bool ok = true;
            AXES_UP(d) {
                int pos = base[d] + kd[d] * g_dil[d];
                ok = ok && pos >= 0 && pos < g_in[d];
                off += pos * g_ist[d];
            }
            if (ok)
                acc = comb(acc, TC(x[off]));
            AXES(d) {
                if (++kd[d] < g_win[d])
                    break;
                kd[d] = 0;
            }
        }
        o[i] = TA(acc);
    }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// window_scatter_max and window_scatter_min, second pass (a gather: no atomics, deterministic):
// one invocation per input element walks the windows that can cover it, in
// row-major window order, and adds the source value of each window that
// selected it onto the init value. FUSED: one pass, for small windows (a
// pooling layer's gradient): each invocation finds the selection of every
// window that covers its element itself, as argsel.comp does, instead of
// reading it from the first pass (one dispatch and one barrier fewer).
#define WIN_PARAMS 3
#include "window.glsl"

#ifdef FUSED
layout(std430, binding = 0) readonly buffer X { TA x[]; };
layout(constant_id = 0) const uint OP = 0; // 0 max, 1 min
#include "window_ops.glsl"

// The input element window `base` selects (argsel.comp's rule), -1 for none.
int select_in(int base[MAXR])
{
    int kd[MAXR], s = -1;
    TC b = TC(0);
    AXES(d) kd[d] = 0;
    for (;;) {
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
        bool done = true;
        AXES(d) {
            if (++kd[d] < g_win[d]) {
                done = false;
                break;
            }
            kd[d] = 0;
        }
        if (done)
            return s;
    }
}
#else
layout(std430, binding = 0) readonly buffer S { int sel[]; };
#endif
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
#ifdef FUSED
                if (ok) {
                    int base[MAXR];
                    AXES(d) base[d] = (omin[d] + jd[d]) * g_str[d] - g_lo[d];
                    if (select_in(base) == int(i))
                        acc += TC(src[off]);
                }
#else
                if (ok && sel[off] == int(i))
                    acc += TC(src[off]);
#endif
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

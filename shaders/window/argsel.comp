#version 450
#extension GL_GOOGLE_include_directive : require
// window_scatter_max/min, first pass: one invocation per window finds the
// input element it selects (XLA select-and-scatter with >= / <=: the first
// valid position is kept until a later one fails the comparison, so the first
// extremum in row-major window order wins; padding is never selected; -1 when
// the window holds only padding). The best value so far is kept for the next
// slice.
#define WIN_PARAMS 1
#include "window.glsl"

layout(std430, binding = 0) readonly buffer X { TA x[]; };
layout(std430, binding = 2) buffer S { int sel[]; };
layout(std430, binding = 3) buffer B { TA best[]; };
layout(constant_id = 0) const uint OP = 0; // 0 max, 1 min

void main()
{
    int in_[MAXR], win[MAXR], ist[MAXR];
    [[unroll]] for (int d = 0; d < MAXR; d++) {
        in_[d] = P(d, W_IN);
        win[d] = P(d, W_WIN);
        ist[d] = P(d, W_IST);
    }
    GRID_LOOP(i, pc.n) {
        int base[MAXR], kd[MAXR];
        uint r = i, k = pc.k0;
        [[unroll]] for (int d = MAXR - 1; d >= 0; d--) {
            uint od = uint(P(d, W_OUT));
            base[d] = int(r % od) * P(d, W_STR) - P(d, W_LO);
            r /= od;
            kd[d] = int(k % uint(win[d]));
            k /= uint(win[d]);
        }
        int s = pc.first != 0u ? -1 : sel[i];
        TC b = pc.first != 0u ? TC(0) : TC(best[i]);
        for (uint k = pc.k0; k < pc.k1; k++) {
            int off = 0;
            bool ok = true;
            [[unroll]] for (int d = 0; d < MAXR; d++) {
                int pos = base[d] + kd[d];
                ok = ok && pos >= 0 && pos < in_[d];
                off += pos * ist[d];
            }
            if (ok) {
                TC v = TC(x[off]);
                if (s < 0 || !(OP == 0u ? b >= v : b <= v)) {
                    s = off;
                    b = v;
                }
            }
            [[unroll]] for (int d = MAXR - 1; d >= 0; d--) {
                if (++kd[d] < win[d])
                    break;
                kd[d] = 0;
            }
        }
        sel[i] = s;
        best[i] = TA(b);
    }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Pooling: the window ops whose windows tile the last two axes without
// overlap (strides equal to the window there, no padding or dilation, and
// window 1 on every other axis): x seen as [planes, h, w], kh x kw windows,
// an oh x ow grid of them. The geometry travels in push constants, so there
// is no parameter buffer to upload and no loop over axes; each window's
// elements are folded, or searched, in row-major order as the general kernels
// do (window_ops.glsl), so the results are the same bits.
//   default: window_sum/product/max/min, one invocation per output.
//   SCATTER: window_scatter_max/min, one invocation per input element: the
//            element's window (if any) selects it or not, so the result is
//            init, or init plus the window's source value. EPI variants store
//            through a fused epilogue (epilogue.glsl).
#include "common.glsl"
#include "epilogue.glsl"

layout(local_size_x = LOCAL) in;
layout(constant_id = 0) const uint OP = 0; // as window_ops.glsl says
layout(push_constant) uniform PP { POOL_PUSH_FIELDS } pp;
#include "window_ops.glsl"

layout(std430, binding = 0) readonly buffer X { TA x[]; };
#ifdef SCATTER
layout(std430, binding = 1) readonly buffer Src { TO src[]; };
layout(std430, binding = 2) readonly buffer Init { TO init[]; };
layout(std430, binding = 3) writeonly buffer O { TO o[]; };
#else
layout(std430, binding = 1) writeonly buffer O { TA o[]; };
#endif

void main()
{
#ifdef SCATTER
    GRID_LOOP(i, pp.n) {
        uint xw = i % pp.w, t = i / pp.w, yh = t % pp.h, plane = t / pp.h;
        uint oy = yh / pp.kh, ox = xw / pp.kw;
        TC acc = TC(init[0]);
        if (oy < pp.oh && ox < pp.ow) {
            uint base = (plane * pp.h + oy * pp.kh) * pp.w + ox * pp.kw;
            int s = -1;
            TC b = TC(0);
            for (uint u = 0; u < pp.kh; u++)
                for (uint v = 0; v < pp.kw; v++) {
                    uint off = base + u * pp.w + v;
                    TC val = TC(x[off]);
                    if (takes(s < 0, b, val)) {
                        s = int(off);
                        b = val;
                    }
                }
            if (s == int(i))
                acc += TC(src[(plane * pp.oh + oy) * pp.ow + ox]);
        }
        o[i] = TO(ep_store(i, acc));
    }
#else
    GRID_LOOP(i, pp.n) {
        uint ox = i % pp.ow, t = i / pp.ow, oy = t % pp.oh, plane = t / pp.oh;
        uint base = (plane * pp.h + oy * pp.kh) * pp.w + ox * pp.kw;
        TC acc = ident();
        for (uint u = 0; u < pp.kh; u++)
            for (uint v = 0; v < pp.kw; v++)
                acc = comb(acc, TC(x[base + u * pp.w + v]));
        o[i] = TA(acc);
    }
#endif
}

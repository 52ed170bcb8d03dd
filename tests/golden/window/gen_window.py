#!/usr/bin/python3
"""Golden data for the window ops, computed with PyTorch (CPU).

Run by hand, not in CI:  /usr/bin/python3 tests/golden/window/gen_window.py
(Debian: apt-get install -y python3-torch). Writes window_golden.h next to this
script: one static case per 2-d pooling over an NCHW f32 input, which
tests/vkt/test_window.c includes directly.

Each case records x, torch.nn.functional.max_pool2d(x) (torch pads with -inf,
as vkt_window_max pads with the identity), the window sums (F.unfold over the
zero-padded input, summed over the window: avg_pool2d times the window size,
with dilation), and, for undilated windows, the gradient of
sum(max_pool2d(x) * g) by torch.autograd: what vkt_window_scatter_max(x, g, 0)
must give. Inputs are random normal, so ties (where torch also keeps the first
maximum) have probability zero; the script asserts none occur.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cwrap  # noqa: E402  (tests/golden: wraps what is written at 100 columns)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.manual_seed(20240612)

CASES = []


def add(name, shape, window, strides, padding, dilation):
    x = torch.randn(*shape).to(torch.float32)
    xr = x.clone().requires_grad_(True)
    y = F.max_pool2d(xr, window, stride=strides, padding=padding, dilation=dilation)
    g = torch.randn(*y.shape).to(torch.float32)
    (y.double() * g.double()).sum().backward()
    cols = F.unfold(x.double(), window, dilation=dilation, padding=padding, stride=strides)
    n, c = shape[0], shape[1]
    cols = cols.view(n, c, window[0] * window[1], -1)
    s = cols.sum(2).view(*y.shape)
    # No ties among the values of any window (so any first-max rule agrees).
    vals = x.flatten()
    assert vals.unique().numel() == vals.numel(), name
    dx = xr.grad if dilation == (1, 1) else None
    CASES.append((name, x, g, y.detach(), s.float(), dx, window, strides, padding, dilation))


def c_floats(name, t):
    vals = t.to(torch.float32).flatten().tolist() if t is not None else []
    assert all(math.isfinite(v) for v in vals), name
    lits = []
    for v in vals:
        s = "%.9g" % v  # 9 significant digits round-trip an f32 exactly
        lits.append(s + ("f" if any(ch in s for ch in ".e") else ".0f"))
    body = ",\n    ".join(",".join(lits[i:i + 8]) for i in range(0, len(lits), 8))
    return "static const float %s[%d] = {%s};\n" % (name, max(len(vals), 1), body or "0.0f")


def c_ints(vals):
    return "{" + ", ".join(str(int(v)) for v in vals) + "}"


def write(path):
    out = ["/* window_golden.h — window op golden cases written by gen_window.py (PyTorch %s). */\n"
           % torch.__version__,
           "#include <stddef.h>\n#include <stdint.h>\n\n",
           "typedef struct window_golden {\n    const char *name;\n    int64_t xshape[4], yshape[4];\n"
           "    int64_t window[2], strides[2], padding[2], dilation[2];\n"
           "    const float *x, *g, *max, *sum, *dx; /* dx NULL for dilated windows */\n} window_golden;\n\n"]
    rows = []
    for i, (name, x, g, y, s, dx, w, st, p, d) in enumerate(CASES):
        out.append(c_floats("wg%d_x" % i, x) + c_floats("wg%d_g" % i, g) + c_floats("wg%d_max" % i, y) +
                   c_floats("wg%d_sum" % i, s) + (c_floats("wg%d_dx" % i, dx) if dx is not None else ""))
        rows.append("    {\"%s\", %s, %s, %s, %s, %s, %s, wg%d_x, wg%d_g, wg%d_max, wg%d_sum, %s},\n" % (
            name, c_ints(x.shape), c_ints(y.shape), c_ints(w), c_ints(st), c_ints(p), c_ints(d),
            i, i, i, i, ("wg%d_dx" % i) if dx is not None else "NULL"))
    out.append("\nstatic const window_golden window_goldens[] = {\n" + "".join(rows) + "};\n")
    with open(path, "w") as f:
        f.write(cwrap.wrap("".join(out)))


def main():
    add("lenet_pool_2x2_s2", (2, 3, 12, 12), (2, 2), (2, 2), (0, 0), (1, 1))
    add("overlap_3x3_s1_pad1", (2, 2, 7, 9), (3, 3), (1, 1), (1, 1), (1, 1))
    add("overlap_3x3_s2_pad1", (1, 3, 9, 8), (3, 3), (2, 2), (1, 1), (1, 1))
    add("rect_3x2_s2x1_pad1x0", (2, 2, 8, 7), (3, 2), (2, 1), (1, 0), (1, 1))
    add("odd_2x2_s2_ceilless", (1, 2, 7, 9), (2, 2), (2, 2), (0, 0), (1, 1))
    add("dilated_2x3_d2", (1, 2, 9, 10), (2, 3), (1, 2), (1, 1), (2, 2))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "window_golden.h")
    write(path)
    print("%d cases, %d bytes -> %s" % (len(CASES), os.path.getsize(path), path))


if __name__ == "__main__":
    main()

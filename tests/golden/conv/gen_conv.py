#!/usr/bin/python3
"""Golden data for vkt_conv, computed with PyTorch (CPU).

Run by hand, not in CI:  /usr/bin/python3 tests/golden/conv/gen_conv.py
(Debian: apt-get install -y python3-torch). Writes conv_golden.h next to this
script: one static case per conv call, with its options, its f32 inputs and the
expected result, which tests/vkt/test_conv.c includes directly.

Forward cases run torch's conv on the canonical layout after applying the vkt
options that torch lacks (input dilation, asymmetric or negative padding,
batch groups, permutations) by hand. The gradient cases are the independent
check of those semantics: torch.autograd computes d input and d kernel of a
plain forward conv, and the case records the vkt_conv call (permutations,
dilations, groups, padding) that must reproduce autograd's result.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cwrap  # noqa: E402  (tests/golden: wraps what is written at 100 columns)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.manual_seed(20240611)
DT = torch.float64  # expected values computed in double from f32 inputs


def rnd(*shape):
    return torch.randn(*shape).to(torch.float32).to(DT)


def inverse(perm):
    inv = [0] * len(perm)
    for i, a in enumerate(perm):
        inv[a] = i
    return inv


def dilate(x, dil):
    """Inserts dil-1 zeros between the spatial elements of canonical x."""
    nsp = x.dim() - 2
    if all(d == 1 for d in dil):
        return x
    shape = list(x.shape[:2]) + [0 if s == 0 else (s - 1) * d + 1 for s, d in zip(x.shape[2:], dil)]
    out = torch.zeros(shape, dtype=x.dtype)
    idx = [slice(None), slice(None)] + [slice(None, None, d) for d in dil]
    out[tuple(idx)] = x
    assert len(dil) == nsp
    return out


def vkt_conv(x, k, o):
    """The vkt_conv semantics (vkt.h) on top of torch's canonical conv."""
    nsp = x.dim() - 2
    if o.get("input_permutation"):
        x = x.permute(*o["input_permutation"])
    if o.get("kernel_permutation"):
        k = k.permute(*o["kernel_permutation"])
    x = dilate(x, o["input_dilation"])
    pad = []
    for d in reversed(range(nsp)):
        pad += [o["padding_lo"][d], o["padding_hi"][d]]
    x = F.pad(x, pad)
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nsp]
    G, B = o["feature_group_size"], o["batch_group_size"]
    kw = dict(stride=o["strides"], dilation=o["kernel_dilation"], groups=G)
    if B == 1:
        y = conv(x, k, **kw)
    else:
        xs = x.chunk(B, 0)
        ks = k.chunk(B, 0)
        y = torch.cat([conv(a, b, **kw) for a, b in zip(xs, ks)], 1)
    if o.get("output_permutation"):
        y = y.permute(*inverse(o["output_permutation"]))
    return y.contiguous()


def opts(nsp, **kw):
    o = dict(strides=[1] * nsp, padding_lo=[0] * nsp, padding_hi=[0] * nsp, input_dilation=[1] * nsp,
             kernel_dilation=[1] * nsp, feature_group_size=1, batch_group_size=1)
    o.update(kw)
    return o


CASES = []


def add(name, x, k, o, expected=None):
    y = vkt_conv(x, k, o)
    if expected is not None:
        err = (y - expected).abs().max().item() if y.numel() else 0.0
        assert y.shape == expected.shape and err < 1e-9, (name, y.shape, expected.shape, err)
        y = expected
    CASES.append((name, x, k, o, y))


def forward_cases():
    add("1d_stride_pad", rnd(2, 3, 10), rnd(4, 3, 3), opts(1, strides=[2], padding_lo=[1], padding_hi=[2]))
    add("2d_basic", rnd(2, 3, 8, 7), rnd(5, 3, 3, 3), opts(2))
    add("2d_stride_negpad_kdil", rnd(2, 3, 9, 8), rnd(4, 3, 3, 2),
        opts(2, strides=[2, 3], padding_lo=[2, 1], padding_hi=[0, -1], kernel_dilation=[2, 1]))
    add("2d_input_dilation", rnd(1, 2, 5, 4), rnd(3, 2, 2, 3),
        opts(2, input_dilation=[2, 3], padding_lo=[1, 0], padding_hi=[1, 2], strides=[1, 2]))
    add("2d_feature_groups", rnd(2, 6, 6, 6), rnd(9, 2, 3, 3), opts(2, feature_group_size=3))
    add("2d_depthwise", rnd(2, 4, 5, 5), rnd(8, 1, 3, 3),
        opts(2, feature_group_size=4, padding_lo=[1, 1], padding_hi=[1, 1]))
    add("2d_batch_groups", rnd(4, 3, 5, 5), rnd(6, 3, 2, 2), opts(2, batch_group_size=2))
    # NHWC input, HWIO kernel, NHWC output.
    add("2d_nhwc_hwio", rnd(2, 6, 5, 3), rnd(3, 3, 3, 4),
        opts(2, input_permutation=[0, 3, 1, 2], kernel_permutation=[3, 2, 0, 1],
             output_permutation=[0, 3, 1, 2], padding_lo=[1, 0], padding_hi=[0, 1]))
    # A permutation that is not its own inverse, on every operand.
    add("2d_cyclic_perms", rnd(5, 2, 3, 4), rnd(3, 2, 3, 2),
        opts(2, input_permutation=[1, 2, 0, 3], kernel_permutation=[2, 0, 3, 1],
             output_permutation=[3, 1, 0, 2], strides=[1, 2]))
    add("3d_pad", rnd(1, 2, 4, 5, 3), rnd(3, 2, 2, 2, 2), opts(3, padding_lo=[1, 0, 1], padding_hi=[1, 1, 0]))


def grad_cases(tag, N, C, M, spatial, ksize, G, stride, lo, hi, kdil):
    """d input and d kernel of y = conv(pad(x), k) by autograd, as vkt_conv calls."""
    nsp = len(spatial)
    x = rnd(N, C, *spatial).requires_grad_()
    k = rnd(M, C // G, *ksize).requires_grad_()
    fwd = opts(nsp, strides=stride, padding_lo=lo, padding_hi=hi, kernel_dilation=kdil, feature_group_size=G)
    y = vkt_conv(x, k, fwd)
    g = rnd(*y.shape)
    (y * g).sum().backward()
    dx, dk = x.grad.detach(), k.grad.detach()
    x, k = x.detach(), k.detach()
    add(tag + "_fwd", x, k, fwd)

    def dil(n, d):
        return 0 if n == 0 else (n - 1) * d + 1

    swap = [1, 0] + list(range(2, nsp + 2))
    # d kernel: batch and features of x and g trade places; the forward stride
    # becomes the kernel dilation and feature groups become batch groups.
    pad_hi = [dil(y.shape[2 + d], stride[d]) - spatial[d] + dil(ksize[d], kdil[d]) - lo[d] - 1 for d in range(nsp)]
    add(tag + "_dkernel", x, g,
        opts(nsp, input_permutation=swap, kernel_permutation=swap, output_permutation=swap, strides=kdil,
             padding_lo=lo, padding_hi=pad_hi, kernel_dilation=stride, batch_group_size=G), expected=dk)
    # d input: g against the reversed kernel with in/out features swapped; the
    # forward stride becomes the input dilation.
    kr = k.flip(list(range(2, nsp + 2)))
    if G > 1:
        kr = kr.reshape(G, M // G, C // G, *ksize).transpose(0, 1).reshape(M // G, C, *ksize)
    lo2 = [dil(ksize[d], kdil[d]) - lo[d] - 1 for d in range(nsp)]
    hi2 = [spatial[d] + dil(ksize[d], kdil[d]) - 1 - dil(y.shape[2 + d], stride[d]) - lo2[d] for d in range(nsp)]
    add(tag + "_dinput", g, kr.contiguous(),
        opts(nsp, kernel_permutation=swap, padding_lo=lo2, padding_hi=hi2, input_dilation=stride,
             kernel_dilation=kdil, feature_group_size=G), expected=dx)


def c_floats(name, t):
    vals = t.to(torch.float32).flatten().tolist()
    assert all(math.isfinite(v) for v in vals), name
    lits = []
    for v in vals:
        s = "%.9g" % v  # 9 significant digits round-trip an f32 exactly
        lits.append(s + ("f" if any(ch in s for ch in ".e") else ".0f"))
    body = ",\n    ".join(",".join(lits[i:i + 8]) for i in range(0, len(lits), 8))
    # A zero-length array is not C; a one-element placeholder is never read.
    return "static const float %s[%d] = {%s};\n" % (name, max(len(vals), 1), body or "0.0f")


def c_ints(vals):
    return "{" + ", ".join(str(int(v)) for v in vals) + "}"


def write(path):
    out = ["/* conv_golden.h — vkt_conv golden cases written by gen_conv.py (PyTorch %s). */\n" % torch.__version__,
           "#include <stdint.h>\n#include <stdbool.h>\n\n",
           "typedef struct conv_golden {\n    const char *name;\n    int rank;\n"
           "    int64_t xshape[6], kshape[6], yshape[6];\n    int64_t strides[4], padding_lo[4], padding_hi[4];\n"
           "    int64_t input_dilation[4], kernel_dilation[4], feature_group_size, batch_group_size;\n"
           "    bool has_perm[3];\n    int perm[3][6];\n    const float *x, *k, *y;\n} conv_golden;\n\n"]
    rows = []
    for i, (name, x, k, o, y) in enumerate(CASES):
        out.append(c_floats("cg%d_x" % i, x) + c_floats("cg%d_k" % i, k) + c_floats("cg%d_y" % i, y))
        perms = [o.get(p) for p in ("input_permutation", "kernel_permutation", "output_permutation")]
        rows.append("    {\"%s\", %d, %s, %s, %s, %s, %s, %s, %s, %s, %d, %d, "
                    "{%s}, {%s}, cg%d_x, cg%d_k, cg%d_y},\n" % (
                        name, x.dim(), c_ints(x.shape), c_ints(k.shape), c_ints(y.shape), c_ints(o["strides"]),
                        c_ints(o["padding_lo"]), c_ints(o["padding_hi"]), c_ints(o["input_dilation"]),
                        c_ints(o["kernel_dilation"]), o["feature_group_size"], o["batch_group_size"],
                        ", ".join("true" if p else "false" for p in perms),
                        ", ".join(c_ints(p or [0]) for p in perms), i, i, i))
    out.append("\nstatic const conv_golden conv_goldens[] = {\n" + "".join(rows) + "};\n")
    with open(path, "w") as f:
        f.write(cwrap.wrap("".join(out)))


def main():
    forward_cases()
    grad_cases("g2d_stride_pad", 2, 3, 4, [7, 6], [3, 2], 1, [2, 1], [1, 0], [1, 2], [1, 2])
    grad_cases("g2d_groups", 2, 4, 6, [6, 5], [3, 3], 2, [1, 2], [1, 1], [0, 1], [1, 1])
    grad_cases("g1d_dil_stride", 3, 2, 3, [13], [3], 1, [3], [2], [0], [2])
    grad_cases("g2d_lenet", 4, 6, 16, [12, 12], [5, 5], 1, [1, 1], [0, 0], [0, 0], [1, 1])
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_golden.h")
    write(path)
    print("%d cases, %d bytes -> %s" % (len(CASES), os.path.getsize(path), path))


if __name__ == "__main__":
    main()

"""Every op of the vkt package against numpy on random data, over f32, f64, s32 and u8, and
its error cases. libvkt's own suites hold the kernels to the host reference ulp by ulp;
here the question is whether each wrapper passes its arguments and defaults right, so
math ops get a tolerance of a few tens of ulp and everything else compares exactly."""
import ctypes
import itertools
import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import DTYPES, NP, native_disabled, path_of, random

import vkt
from vkt import _vkt

PROMOTE = {d: i for i, d in enumerate(("u8", "s32", "f32", "f64"))}


def wider(a, b):
    return a if PROMOTE[a] >= PROMOTE[b] else b


def check(got, want, dtype, rtol=0.0, atol=0.0):
    """got (a vkt tensor) holds want, has dtype, and want's shape."""
    assert isinstance(got, vkt.Tensor)
    assert got.dtype == dtype
    g = got.numpy()
    assert g.shape == np.shape(want)
    if rtol or atol:
        np.testing.assert_allclose(g, np.asarray(want, np.float64), rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(g, np.asarray(want).astype(NP[dtype]))


# ---- unary ------------------------------------------------------------------------------

def _round_away(x):
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def _bits(x, dtype):
    return 32 if dtype == "s32" else 8


def _clz(x, dtype):
    n = _bits(x, dtype)
    u = x.astype(np.int64) & ((1 << n) - 1)
    return np.array([n - int(v).bit_length() for v in u.ravel()], np.int64).reshape(x.shape)


def _popcount(x, dtype):
    n = _bits(x, dtype)
    u = x.astype(np.int64) & ((1 << n) - 1)
    return np.array([bin(int(v)).count("1") for v in u.ravel()], np.int64).reshape(x.shape)


# op: (reference on float64 values, float domain (lo, hi))
MATH = {
    "exp": (np.exp, (-5, 5)), "expm1": (np.expm1, (-5, 5)), "log": (np.log, (0.01, 100)),
    "log1p": (np.log1p, (-0.9, 10)), "sqrt": (np.sqrt, (0, 100)), "rsqrt": (lambda x: 1 / np.sqrt(x), (0.01, 100)),
    "cbrt": (np.cbrt, (-100, 100)), "sin": (np.sin, (-10, 10)), "cos": (np.cos, (-10, 10)),
    "tan": (np.tan, (-1.5, 1.5)), "asin": (np.arcsin, (-1, 1)), "acos": (np.arccos, (-1, 1)),
    "atan": (np.arctan, (-10, 10)), "sinh": (np.sinh, (-5, 5)), "cosh": (np.cosh, (-5, 5)),
    "tanh": (np.tanh, (-5, 5)), "asinh": (np.arcsinh, (-10, 10)), "acosh": (np.arccosh, (1, 10)),
    "atanh": (np.arctanh, (-0.95, 0.95)), "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-10, 10)),
    "erf": (np.vectorize(math.erf), (-3, 3)), "erfc": (np.vectorize(math.erfc), (-3, 3)),
}
# Integer inputs of math ops are converted to f32 first; keep them inside the domain.
INT_DOMAIN = {"log": (1, 50), "rsqrt": (1, 50), "sqrt": (0, 50), "asin": (-1, 2), "acos": (-1, 2),
              "acosh": (1, 10), "atanh": (0, 1), "log1p": (0, 50), "exp": (0, 10), "expm1": (0, 10),
              "sinh": (0, 10), "cosh": (0, 10), "tan": (-1, 2)}
EXACT_UNARY = {
    "negate": lambda x, d: -x,
    "abs": lambda x, d: np.abs(x),
    "sign": lambda x, d: np.sign(x),
    "floor": lambda x, d: np.floor(x) if d in ("f32", "f64") else x,
    "ceil": lambda x, d: np.ceil(x) if d in ("f32", "f64") else x,
    "round": lambda x, d: _round_away(x) if d in ("f32", "f64") else x,
    "is_nan": lambda x, d: np.isnan(x.astype(np.float64)),
    "is_infinity": lambda x, d: np.isinf(x.astype(np.float64)),
    "logical_not": lambda x, d: x == 0,
    "bitwise_not": lambda x, d: np.invert(x),
    "count_leading_zeros": _clz,
    "population_count": _popcount,
}
BOOL_RESULT = {"is_nan", "is_infinity", "logical_not"}


# The functions of vkt.h that are not ops, and what stands for each in the package.
API = {
    "last_error": "Error.message", "status_name": "Error.status_name", "ctx_create": "Context",
    "ctx_destroy": "Context.close", "ctx_device_name": "Context.device_name",
    "ctx_max_tensor_bytes": "Context.max_tensor_bytes", "ctx_flushes_subnormals": "Context.flushes_subnormals",
    "sync": "Context.sync", "ctx_last_gpu_ns": "Context.last_gpu_ns",
    "ctx_set_native_disable": "Context.set_native_disable", "ctx_set_fallback_result": "Context.set_fallback_result",
    "ctx_set_profiling": "Context.set_profiling", "profile_read": "Context.profile", "graph_begin": "Context.record",
    "graph_end": "Graph.end", "graph_launch": "Graph.launch", "graph_dispatches": "Graph.dispatches",
    "graph_levels": "Graph.levels",
    "graph_free": "Graph.free", "dtype_size": "numpy_dtype", "dtype_name": "dtype_name",
    "tensor_from_host": "Context.tensor", "zeros": "Context.zeros", "full": "Context.full", "iota": "Context.iota",
    "tensor_read": "Tensor.numpy", "tensor_write": "Tensor.write", "tensor_move": "Tensor.move",
    "tensor_free": "Tensor", "tensor_dtype": "Tensor.dtype", "tensor_rank": "Tensor.ndim",
    "tensor_shape": "Tensor.shape", "tensor_numel": "Tensor.size", "tensor_nbytes": "Tensor.nbytes",
    "tensor_residency": "Tensor.residency", "stats": "stats", "stats_reset": "stats_reset", "op_count": "op_names",
    "op_name": "op_names", "op_support": "op_support",
}


def _header():
    with open(path_of("VKT_H")) as f:
        return f.read()


def _macro(header, name):
    """The body of vkt.h's #define NAME(X), continuation lines joined."""
    m = re.search(r"^#define " + name + r"\(X\)((?:[^\n]*\\\n)*[^\n]*)", header, re.M)
    assert m, f"vkt.h has no #define {name}(X)"
    return m.group(1).replace("\\\n", " ")


def _declared(header):
    """The functions of vkt.h without their prefix, the X-lists' ops included."""
    declared = set(re.findall(r"VKT_API [\w\s*]*?\bvkt_(\w+)\(", header))
    for macro in ("VKT_UNARY_OPS", "VKT_BINARY_OPS", "VKT_REDUCE_OPS", "VKT_WINDOW_OPS"):
        declared |= set(re.findall(r"X\((\w+)[,)]", _macro(header, macro)))
    return declared


def test_every_function_of_vkt_h_has_a_wrapper():
    declared = _declared(_header())
    assert {"graph_launch", "assign", "tensor_write", "ctx_set_profiling", "profile_read", "negate"} <= declared
    declared.discard("fallback_started_ns")  # for the census shim, which charges a fallback from it
    missing = sorted(op for op in declared - set(API) if not callable(getattr(vkt, op, None)))
    assert not missing, f"ops of vkt.h without a vkt.<op>: {missing}"
    roots = {"Error": vkt.Error("message", vkt.EINVAL)}  # its fields are set per instance
    for fn, path in API.items():
        assert fn in declared, f"vkt_{fn} is no longer in vkt.h"
        obj, *attrs = path.split(".")
        target = roots.get(obj, getattr(vkt, obj, None))
        for a in attrs:
            target = getattr(target, a, None)
        assert target is not None, f"vkt_{fn}: vkt.{path} is missing"
    assert set(op for op in vkt.op_names()) <= declared, "the support matrix names ops vkt.h does not declare"
    assert "assign" in vkt.op_names()


def test_the_extension_binds_vkt_h_and_its_constants():
    """vkt._vkt calls libvkt through a table filled by name at load (it is not linked, so that
    libfbcount can load first): every function of vkt.h is in it, with the type vkt.h gives it
    (the compiler checked), but the exits the census wraps and the clock it reads; and the
    package's status codes, dtypes and limits are vkt.h's, with libvkt's names for them."""
    header = _header()
    declared = {"vkt_" + f for f in _declared(header)} | {"host_result", "host_resident_op"}
    not_bound = {"host_result", "host_resident_op", "vkt_fallback_started_ns"}
    assert set(_vkt.bound()) == declared - not_bound and len(_vkt.bound()) == len(set(_vkt.bound()))
    lib = ctypes.CDLL(vkt.library_path())  # libvkt's own answers, asked around the package
    lib.vkt_status_name.restype = lib.vkt_dtype_name.restype = ctypes.c_char_p
    statuses = [(n, int(v)) for n, v in re.findall(r"X\((\w+),\s*(-?\d+)\)", _macro(header, "VKT_STATUSES"))]
    assert list(vkt.STATUSES) == statuses and ("VKT_EGRAPH", -9) in statuses
    for name, code in statuses:
        assert lib.vkt_status_name(code).decode() == name
        assert getattr(vkt, name[4:]) == code and vkt.Error("x", code).status_name == name
    assert vkt.Error("x", -1000).status_name == "-1000"
    assert f"#define VKT_MAX_RANK {_vkt.MAX_RANK}" in header and f"#define VKT_ALL_AXES ({_vkt.ALL_AXES})" in header
    enum = re.search(r"typedef enum vkt_dtype \{(.*?)\}", header).group(1)
    assert re.findall(r"VKT_(\w+) = (\d+)", enum) == [(d.upper(), str(i)) for i, d in enumerate(_vkt.DTYPES)]
    assert [lib.vkt_dtype_name(i).decode() for i in range(len(_vkt.DTYPES))] == list(_vkt.DTYPES)
    assert _vkt.UNARY_OPS == tuple(re.findall(r"X\((\w+),", _macro(header, "VKT_UNARY_OPS")))
    assert _vkt.BINARY_OPS == tuple(re.findall(r"X\((\w+),", _macro(header, "VKT_BINARY_OPS")))


def _support(op, dtype):
    return vkt.op_support(op, dtype)[0]


def _expect_undefined(op, fn):
    with pytest.raises(vkt.Error) as e:
        fn()
    assert e.value.status_name == "VKT_EDTYPE", e.value
    assert op in str(e.value)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(MATH))
def test_math_unary(ctx, rng, op, dtype):
    ref, (lo, hi) = MATH[op]
    if dtype in ("f32", "f64"):
        x = random(rng, dtype, (3, 17), lo, hi)
    else:
        ilo, ihi = INT_DOMAIN.get(op, (-20, 20))
        x = random(rng, dtype, (3, 17), max(ilo, 0) if dtype == "u8" else ilo, ihi)
    if _support(op, dtype) == "undefined":
        return _expect_undefined(op, lambda: getattr(vkt, op)(ctx.tensor(x)))
    out = "f64" if dtype == "f64" else "f32"
    want = ref(x.astype(NP[out]).astype(np.float64))
    tol = (1e-12, 1e-12) if out == "f64" else (4e-6, 1e-6)
    check(getattr(vkt, op)(ctx.tensor(x)), want, out, *tol)


@pytest.mark.parametrize("dtype", ("f32", "f64"))
def test_erf_inv(ctx, rng, dtype):
    y = random(rng, dtype, (50,), -0.99, 0.99)
    got = vkt.erf_inv(ctx.tensor(y))
    assert got.dtype == dtype
    back = np.vectorize(math.erf)(got.numpy().astype(np.float64))
    np.testing.assert_allclose(back, y, rtol=1e-5 if dtype == "f32" else 1e-12, atol=1e-7)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(EXACT_UNARY))
def test_exact_unary(ctx, rng, op, dtype):
    x = random(rng, dtype, (4, 9), -100, 100) if dtype != "u8" else random(rng, dtype, (4, 9))
    if dtype in ("f32", "f64") and op in ("is_nan", "is_infinity"):
        x.ravel()[:3] = [np.nan, np.inf, -np.inf]
    if dtype in ("f32", "f64") and op == "round":
        x.ravel()[:4] = [0.5, -0.5, 2.5, -3.5]
    if _support(op, dtype) == "undefined":
        return _expect_undefined(op, lambda: getattr(vkt, op)(ctx.tensor(x)))
    want = EXACT_UNARY[op](x, dtype)
    out = "u8" if op in BOOL_RESULT else dtype
    check(getattr(vkt, op)(ctx.tensor(x)), want, out)


def test_unary_on_rank0_and_empty(ctx):
    check(vkt.exp(ctx.tensor(np.float32(1))), np.float32(np.e), "f32", 1e-6)
    e = vkt.negate(ctx.tensor(np.zeros((0, 3), np.float32)))
    assert e.shape == (0, 3) and e.numpy().shape == (0, 3)


# ---- binary --------------------------------------------------------------------------------

def _quotient(a, b):
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return np.where((a < 0) != (b < 0), -q, q)


BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
    "min": np.minimum, "max": np.maximum, "remainder": np.fmod, "quotient": _quotient,
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
    "logical_and": lambda a, b: (a != 0) & (b != 0), "logical_or": lambda a, b: (a != 0) | (b != 0),
    "logical_xor": lambda a, b: (a != 0) ^ (b != 0),
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "left_shift": np.left_shift, "right_shift": np.right_shift,
}
BOOL_BINARY = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
               "logical_or", "logical_xor"}


def _operands(rng, op, da, db, shape_a=(3, 1, 5), shape_b=(4, 5)):
    a = random(rng, da, shape_a)
    b = random(rng, db, shape_b)
    if op in ("remainder", "quotient", "divide"):
        b = np.where(b == 0, 1, b).astype(b.dtype)  # no division by zero
    if op in ("left_shift", "right_shift"):
        b = random(rng, db, shape_b, 0, 8)
    if op == "pow":
        if da in ("f32", "f64"):
            a = random(rng, da, shape_a, 0.1, 4)
        else:
            a = random(rng, da, shape_a, 0, 6) if da == "u8" else random(rng, da, shape_a, -6, 6)
        b = random(rng, db, shape_b, -2, 3) if db in ("f32", "f64") else random(rng, db, shape_b, 0, 4)
    if op in BOOL_BINARY or op in ("min", "max"):
        b[..., :2] = a.reshape(-1)[:2].astype(b.dtype)  # some ties
    return a, b


PAIRS = [(d, d) for d in DTYPES] + [("u8", "s32"), ("s32", "f32"), ("f32", "f64"), ("u8", "f64")]


@pytest.mark.parametrize("da,db", PAIRS)
@pytest.mark.parametrize("op", sorted(BINARY) + ["divide", "pow", "atan2"])
def test_binary(ctx, rng, op, da, db):
    a, b = _operands(rng, op, da, db)
    fn = getattr(vkt, op)
    out = wider(da, db)
    if _support(op, out) == "undefined":
        return _expect_undefined(op, lambda: fn(ctx.tensor(a), ctx.tensor(b)))
    if op in ("divide", "atan2"):
        out = "f32" if out in ("u8", "s32") else out
        f = np.divide if op == "divide" else np.arctan2
        want = f(a.astype(NP[out]).astype(np.float64), b.astype(NP[out]).astype(np.float64))
        tol = (1e-14, 0) if out == "f64" else (2e-6, 1e-7)
        return check(fn(ctx.tensor(a), ctx.tensor(b)), want, out, *tol)
    wa, wb = a.astype(NP[out]), b.astype(NP[out])
    if op == "pow":
        tol = (0, 0) if out in ("u8", "s32") else ((1e-13, 0) if out == "f64" else (1e-5, 1e-6))
        with np.errstate(divide="ignore", invalid="ignore"):
            want = np.power(wa, wb)  # 0 ** -x is inf and (-x) ** 0.5 NaN, in both
        return check(fn(ctx.tensor(a), ctx.tensor(b)), want, out, *tol)
    with np.errstate(over="ignore"):
        want = BINARY[op](wa, wb)
    check(fn(ctx.tensor(a), ctx.tensor(b)), want, "u8" if op in BOOL_BINARY else out)


OPERATORS = [
    ("+", lambda a, b: a + b, "add"), ("-", lambda a, b: a - b, "subtract"), ("*", lambda a, b: a * b, "multiply"),
    ("/", lambda a, b: a / b, "divide"), ("**", lambda a, b: a ** b, "pow"), ("==", lambda a, b: a == b, "equal"),
    ("!=", lambda a, b: a != b, "not_equal"), ("<", lambda a, b: a < b, "less"), ("<=", lambda a, b: a <= b,
                                                                                  "less_equal"),
    (">", lambda a, b: a > b, "greater"), (">=", lambda a, b: a >= b, "greater_equal"),
]


@pytest.mark.parametrize("sym,apply,op", OPERATORS, ids=[o[0] for o in OPERATORS])
def test_operators_match_their_ops(ctx, rng, sym, apply, op):
    a = random(rng, "f32", (2, 3), 0.5, 2)
    b = random(rng, "f32", (3,), 0.5, 2)
    ta, tb = ctx.tensor(a), ctx.tensor(b)
    got = apply(ta, tb)
    want = getattr(vkt, op)(ta, tb)
    assert isinstance(got, vkt.Tensor) and got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # A numpy array or a number on either side takes the tensor's path too.
    np.testing.assert_array_equal(apply(ta, b).numpy(), want.numpy())
    np.testing.assert_array_equal(apply(a, tb).numpy(), want.numpy())
    np.testing.assert_array_equal(apply(ta, 1.5).numpy(), getattr(vkt, op)(ta, ctx.tensor(np.float32(1.5))).numpy())


def test_unary_and_bitwise_operators(ctx, rng):
    x = random(rng, "s32", (5,))
    y = random(rng, "s32", (5,), 0, 5)
    t, u = ctx.tensor(x), ctx.tensor(y)
    check(-t, -x, "s32")
    check(+t, x, "s32")
    check(abs(t), np.abs(x), "s32")
    check(~t, ~x, "s32")
    check(t & u, x & y, "s32")
    check(t | u, x | y, "s32")
    check(t ^ u, x ^ y, "s32")
    check(t << u, x << y, "s32")
    check(t >> u, x >> y, "s32")
    check(3 & u, 3 & y, "s32")
    check(1 << u, 1 << y, "s32")


@pytest.mark.parametrize("dtype,scalar,want", [
    ("s32", 2, "s32"), ("u8", 2, "u8"), ("u8", 300, "s32"), ("u8", -1, "s32"), ("s32", 0.5, "f32"),
    ("f64", 2, "f64"), ("f64", 0.5, "f64"), ("f32", 0.5, "f32"), ("u8", True, "u8"), ("s32", np.float64(0.5), "f32"),
    ("f32", np.int64(3), "f32"),
])
def test_python_numbers_take_the_tensor_type(ctx, dtype, scalar, want):
    t = ctx.tensor(np.array([1, 2, 3], NP[dtype]))
    got = t + scalar
    assert got.dtype == want
    np.testing.assert_allclose(got.numpy(), np.array([1, 2, 3]) + float(scalar))
    assert (scalar - t).dtype == want


def test_number_out_of_every_integer_range(ctx):
    t = ctx.tensor(np.array([1], np.int32))
    with pytest.raises(vkt.Error, match="does not fit"):
        t + 2**40


# ---- select, clip, as_type -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_select(ctx, rng, dtype):
    p = random(rng, "u8", (3, 4), 0, 2)
    a = random(rng, dtype, (3, 4))
    b = random(rng, dtype, (4,))
    check(vkt.select(ctx.tensor(p), ctx.tensor(a), ctx.tensor(b)), np.where(p != 0, a, b), dtype)
    # pred of another dtype, a number as a branch
    check(vkt.select(ctx.tensor(a), 1, ctx.tensor(b)), np.where(a != 0, np.array(1, NP[dtype]), b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_clip(ctx, rng, dtype):
    x = random(rng, dtype, (3, 5))
    lo, hi = (-1, 2) if dtype in ("f32", "f64") else ((10, 200) if dtype == "u8" else (-10, 20))
    check(vkt.clip(ctx.tensor(x), lo, hi), np.clip(x, lo, hi), dtype)
    los = random(rng, dtype, (5,))
    his = np.maximum(los, random(rng, dtype, (5,)))
    check(vkt.clip(ctx.tensor(x), ctx.tensor(los), ctx.tensor(his)), np.minimum(np.maximum(x, los), his), dtype)


@pytest.mark.parametrize("src,dst", list(itertools.product(DTYPES, DTYPES)))
def test_as_type(ctx, rng, src, dst):
    x = random(rng, src, (2, 7), -100, 100) if src != "u8" else random(rng, src, (2, 7))
    want = x.astype(np.float64)
    if dst in ("s32", "u8") and src in ("f32", "f64"):
        want = np.trunc(want)  # floats truncate toward zero and saturate
        if dst == "u8":
            want = np.clip(want, 0, 255)
    if dst == "u8" and src == "s32":
        want = want.astype(np.int64) & 0xFF  # integers keep their low byte
    check(vkt.as_type(ctx.tensor(x), dst), want, dst)
    assert ctx.tensor(x).astype(np.dtype(NP[dst])).dtype == dst


# ---- reductions ----------------------------------------------------------------------------

REDUCE = {"sum": np.sum, "product": np.prod, "reduce_max": np.max, "reduce_min": np.min, "all": np.all,
          "any": np.any}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(REDUCE))
@pytest.mark.parametrize("axes,keep", [(None, False), (1, False), ([0, 2], True), (-1, True), ([], False)])
def test_reduce(ctx, rng, op, dtype, axes, keep):
    if op == "product":
        x = random(rng, dtype, (2, 3, 4), 0.6, 1.4) if dtype in ("f32", "f64") else random(rng, dtype, (2, 3, 4), 0, 3)
    else:
        x = random(rng, dtype, (2, 3, 4))
    if op in ("all", "any"):
        x[0] = 0
    np_axes = tuple(axes) if isinstance(axes, list) else axes
    want = REDUCE[op](x.astype(np.float64), axis=np_axes, keepdims=keep)
    out = {"sum": "s32", "product": "s32", "all": "u8", "any": "u8"}.get(op, dtype)
    if dtype in ("f32", "f64") and op in ("sum", "product"):
        out = dtype
    if out == "s32" and op == "product":
        want = want.astype(np.int64).astype(np.int32)  # wraps like C
    tol = (1e-5, 1e-5) if out == "f32" and op in ("sum", "product") else (0, 0)
    if out == "f64" and op in ("sum", "product"):
        tol = (1e-12, 1e-12)
    check(getattr(vkt, op)(ctx.tensor(x), axes=axes, keep_axes=keep), want, out, *tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("axis,keep", [(None, False), (0, False), (1, True), (-1, False)])
def test_argmax_argmin(ctx, rng, op, dtype, axis, keep):
    x = random(rng, dtype, (4, 6), 0, 5)  # small range: ties, where the first index must win
    want = getattr(np, op)(x, axis=axis, keepdims=keep) if axis is not None else getattr(np, op)(x)
    check(getattr(vkt, op)(ctx.tensor(x), axis=axis, keep_axis=keep), want, "s32")


@pytest.mark.parametrize("path", ["native", "fallback"])
@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_argmin_give_the_first_nan(ctx, op, dtype, path):
    # Nx (and numpy, and torch): a slice that holds a NaN gives the index of its first NaN.
    nan, inf = np.nan, np.inf
    x = np.array([[2, nan, 4, nan], [1, 3, 0, 2], [nan, 5, -inf, inf], [inf, -inf, 7, nan]], NP[dtype])
    t = ctx.tensor(x)
    fell = vkt.stats().get(op, (0, 0, 0))[1]
    with native_disabled(ctx, op if path == "fallback" else ""):
        assert getattr(vkt, op)(ctx.tensor(np.array([2, nan, 4], NP[dtype]))).item() == 1
        check(getattr(vkt, op)(t), getattr(np, op)(x), "s32")
        check(getattr(vkt, op)(t, axis=1), getattr(np, op)(x, axis=1), "s32")
        check(getattr(vkt, op)(t, axis=0, keep_axis=True), getattr(np, op)(x, axis=0, keepdims=True), "s32")
    if path == "fallback":  # the host reference's rule, not the shader's
        assert vkt.stats()[op][1] == fell + 4
    assert getattr(np, op)(x, axis=1).tolist() == ([1, 1, 0, 3] if op == "argmax" else [1, 2, 0, 3])


# ---- data movement ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_transpose_broadcast(ctx, rng, dtype):
    x = random(rng, dtype, (2, 3, 4))
    t = ctx.tensor(x)
    check(vkt.reshape(t, (4, 6)), x.reshape(4, 6), dtype)
    check(vkt.reshape(t, (-1, 3)), x.reshape(-1, 3), dtype)
    check(t.reshape(24), x.reshape(24), dtype)
    check(t.reshape(2, 12), x.reshape(2, 12), dtype)
    check(vkt.transpose(t), x.T, dtype)  # Nx: reverses the axes by default
    check(vkt.transpose(t, [1, 0, 2]), x.transpose(1, 0, 2), dtype)
    check(t.T, x.T, dtype)
    y = random(rng, dtype, (3, 1))
    check(vkt.broadcast(ctx.tensor(y), (2, 3, 4)), np.broadcast_to(y, (2, 3, 4)), dtype)
    z = random(rng, dtype, (3,))
    check(vkt.broadcast(ctx.tensor(z), (3, 2), axes=[0]), np.broadcast_to(z[:, None], (3, 2)), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_slice(ctx, rng, dtype):
    x = random(rng, dtype, (6, 7))
    t = ctx.tensor(x)
    check(vkt.slice(t, [1, 2], [3, 4]), x[1:4, 2:6], dtype)
    check(vkt.slice(t, [0, 1], [6, 6], strides=[2, 3]), x[0:6:2, 1:7:3], dtype)
    # Nx clamps the start so the window fits: start 5 with length 3 starts at 3.
    check(vkt.slice(t, [5, 0], [3, 7]), x[3:6, :], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_indexing(ctx, rng, dtype):
    x = random(rng, dtype, (4, 5, 6))
    t = ctx.tensor(x)
    for key in [1, -1, (1, 2), (slice(1, 3),), (slice(None), slice(1, 5, 2)), (Ellipsis, 3), (2, Ellipsis, slice(0, 4)),
                (slice(None, None, 3), 0, slice(2, None))]:
        check(t[key], x[key], dtype)
    assert t[...] is t
    with pytest.raises(IndexError):
        t[4]
    with pytest.raises(vkt.Error, match="steps"):
        t[::-1]
    assert [r.numpy().tolist() for r in t] == [r.tolist() for r in x]
    assert len(t) == 4


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad(ctx, rng, dtype):
    x = random(rng, dtype, (3, 4))
    t = ctx.tensor(x)
    want = np.pad(x, ((1, 2), (0, 1)), constant_values=7)
    check(vkt.pad(t, 7, [(1, 2), (0, 1)]), want, dtype)
    # interior padding, and negative padding that trims
    inter = np.full((5, 7), 9, x.dtype)
    inter[::2, ::2] = x
    check(vkt.pad(t, 9, [(0, 0, 1), (0, 0, 1)]), inter, dtype)
    check(vkt.pad(t, 0, [(-1, 0), (0, -2)]), x[1:, :-2], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reverse_concatenate(ctx, rng, dtype):
    x = random(rng, dtype, (3, 4))
    t = ctx.tensor(x)
    check(vkt.reverse(t), x[::-1, ::-1], dtype)  # Nx: every axis by default
    check(vkt.reverse(t, [1]), x[:, ::-1], dtype)
    y = random(rng, dtype, (2, 4))
    check(vkt.concatenate([t, ctx.tensor(y)]), np.concatenate([x, y]), dtype)  # axis 0 by default
    z = random(rng, "f64", (3, 2))
    check(vkt.concatenate([t, ctx.tensor(z)], axis=1), np.concatenate([x.astype(np.float64), z], 1), "f64")


def _gather_ref(x, idx, axes):
    k = idx.shape[-1]
    axes = list(range(k)) if axes is None else axes
    xt = np.transpose(x, axes + [a for a in range(x.ndim) if a not in axes])
    parts = tuple(np.clip(idx[..., j], 0, x.shape[axes[j]] - 1) for j in range(k))
    return xt[parts]


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather(ctx, rng, dtype):
    x = random(rng, dtype, (4, 5, 3))
    idx = rng.integers(-1, 6, (2, 3, 2), dtype=np.int32)  # some out of range: they clamp
    t = ctx.tensor(x)
    check(vkt.gather(t, ctx.tensor(idx)), _gather_ref(x, idx, None), dtype)
    check(vkt.gather(t, ctx.tensor(idx), axes=[2, 0]), _gather_ref(x, idx, [2, 0]), dtype)
    check(vkt.gather(t, idx[..., :1]), _gather_ref(x, idx[..., :1], None), dtype)


# ---- dot, matmul, sort ----------------------------------------------------------------------

def _tol(dtype):
    return {"f32": (1e-5, 1e-5), "f64": (1e-12, 1e-12)}.get(dtype, (0, 0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)),
                                   ((2, 3, 4), (4, 5)), ((2, 3), (4, 3, 5)), ((), (3, 2)), ((3,), ())])
def test_dot_is_nx_dot2(ctx, rng, dtype, sa, sb):
    a = random(rng, dtype, sa, 0, 4)
    b = random(rng, dtype, sb, 0, 4)
    want = np.dot(a.astype(np.float64), b.astype(np.float64))
    if dtype == "u8":
        want = want.astype(np.int64) & 0xFF
    check(vkt.dot(ctx.tensor(a), ctx.tensor(b)), want, dtype, *_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_dot_with_axes(ctx, rng, dtype):
    a = random(rng, dtype, (2, 3, 4), 0, 3)
    b = random(rng, dtype, (4, 2, 5), 0, 3)
    af, bf = a.astype(np.float64), b.astype(np.float64)
    # Nx.dot/4: a's axis 2 with b's axis 0; a's free axes, then b's
    check(vkt.dot(ctx.tensor(a), [2], ctx.tensor(b), [0]), np.tensordot(af, bf, ([2], [0])), dtype, *_tol(dtype))
    check(vkt.dot(ctx.tensor(a), [2, 0], ctx.tensor(b), [0, 1]), np.tensordot(af, bf, ([2, 0], [0, 1])), dtype,
          *_tol(dtype))
    # Nx.dot/6: batch a's axis 0 with b's axis 1; batch axes first
    check(vkt.dot(ctx.tensor(a), [2], [0], ctx.tensor(b), [0], [1]), np.einsum("bik,kbj->bij", af, bf), dtype,
          *_tol(dtype))


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (4, 5)),
                                   ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((6, 3, 4), (6, 4, 2))])
def test_matmul_operator(ctx, rng, sa, sb):
    a = random(rng, "f32", sa)
    b = random(rng, "f32", sb)
    check(ctx.tensor(a) @ ctx.tensor(b), np.matmul(a.astype(np.float64), b.astype(np.float64)), "f32", 1e-5, 1e-5)
    check(a @ ctx.tensor(b), np.matmul(a.astype(np.float64), b.astype(np.float64)), "f32", 1e-5, 1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("direction", ["asc", "desc"])
def test_sort_argsort(ctx, rng, dtype, axis, direction):
    x = random(rng, dtype, (5, 6), 0, 4)  # many ties: stability shows
    key = x.astype(np.float64) * (1 if direction == "asc" else -1)
    idx = np.argsort(key, axis=axis, kind="stable")
    check(vkt.argsort(ctx.tensor(x), axis=axis, direction=direction), idx, "s32")
    check(vkt.sort(ctx.tensor(x), axis=axis, direction=direction), np.take_along_axis(x, idx, axis), dtype)


def test_sort_defaults_to_axis_0_ascending(ctx, rng):
    x = random(rng, "f32", (4, 3))
    check(vkt.sort(ctx.tensor(x)), np.sort(x, axis=0), "f32")
    check(vkt.argsort(ctx.tensor(x)), np.argsort(x, axis=0, kind="stable"), "s32")


# ---- conv and windows ------------------------------------------------------------------------

def _dilate(a, axes, d):
    for ax, f in zip(axes, d):
        if f > 1:
            shape = list(a.shape)
            shape[ax] = (shape[ax] - 1) * f + 1
            out = np.zeros(shape, a.dtype)
            idx = [slice(None)] * a.ndim
            idx[ax] = slice(None, None, f)
            out[tuple(idx)] = a
            a = out
    return a


def _pad_axes(a, lo, hi, value=0.0):
    """Pads (or trims, when negative) the trailing len(lo) axes."""
    lead = a.ndim - len(lo)
    pairs = list(zip(lo, hi))
    a = np.pad(a, [(0, 0)] * lead + [(max(b, 0), max(e, 0)) for b, e in pairs], constant_values=value)
    idx = [slice(None)] * lead + [slice(max(-b, 0), a.shape[lead + i] - max(-e, 0)) for i, (b, e) in enumerate(pairs)]
    return a[tuple(idx)]


def conv_ref(x, k, strides, lo, hi, idil, kdil, fg=1, bg=1, iperm=None, kperm=None, operm=None):
    """Nx.conv / XLA ConvGeneralDilated in float64, the plain way."""
    x = x.astype(np.float64) if iperm is None else np.transpose(x, iperm).astype(np.float64)
    k = k.astype(np.float64) if kperm is None else np.transpose(k, kperm).astype(np.float64)
    n = x.ndim - 2
    sp = list(range(2, 2 + n))
    x = _pad_axes(_dilate(x, sp, idil), lo, hi)
    k = _dilate(k, sp, kdil)
    N, C = x.shape[:2]
    O, Cg = k.shape[:2]
    out_sp = [(x.shape[2 + d] - k.shape[2 + d]) // strides[d] + 1 for d in range(n)]
    out = np.zeros([N // bg, O] + out_sp)
    for f in range(O):
        g, b = f // (O // fg), f // (O // bg)
        xs = x[b * (N // bg):(b + 1) * (N // bg), g * Cg:(g + 1) * Cg]
        for pos in np.ndindex(*out_sp):
            win = tuple(slice(p * s, p * s + k.shape[2 + d]) for d, (p, s) in enumerate(zip(pos, strides)))
            out[(slice(None), f) + pos] = np.tensordot(xs[(slice(None), slice(None)) + win], k[f],
                                                       axes=(list(range(1, 2 + n)), list(range(0, 1 + n))))
    return out if operm is None else np.transpose(out, np.argsort(operm))


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv_defaults(ctx, rng, dtype):
    x = random(rng, dtype, (2, 3, 7, 6), 0, 3)
    k = random(rng, dtype, (4, 3, 3, 2), 0, 3)
    want = conv_ref(x, k, [1, 1], [0, 0], [0, 0], [1, 1], [1, 1])
    out = "f64" if dtype == "f64" else "f32"  # Nx.conv gives floats for integer inputs
    check(vkt.conv(ctx.tensor(x), ctx.tensor(k)), want, out, *_tol(out))


@pytest.mark.parametrize("case", [
    dict(strides=2, padding="same"),
    dict(strides=[1, 2], padding=[(1, 0), (2, -1)], input_dilation=[2, 1], kernel_dilation=[1, 2]),
    dict(padding="same", kernel_dilation=2),
    dict(feature_group_size=2),
    dict(batch_group_size=2),
    dict(input_permutation=[0, 3, 1, 2], kernel_permutation=[2, 3, 0, 1], output_permutation=[0, 3, 1, 2]),
    dict(input_permutation=[1, 0, 2, 3], kernel_permutation=[1, 0, 2, 3], output_permutation=[1, 0, 2, 3]),
], ids=["same-stride", "padding-dilations", "same-dilated", "feature-groups", "batch-groups", "nhwc", "grad"])
def test_conv_options(ctx, rng, case):
    xs, ks = (4, 4, 7, 6), (6, 4, 3, 2)
    if case.get("feature_group_size") == 2:
        ks = (6, 2, 3, 2)
    if case.get("batch_group_size") == 2:
        ks = (6, 4, 3, 2)
    if case.get("input_permutation") == [0, 3, 1, 2]:
        xs, ks = (4, 7, 6, 4), (3, 2, 6, 4)  # NHWC input, HWOI kernel
    if case.get("input_permutation") == [1, 0, 2, 3]:
        xs, ks = (4, 4, 7, 6), (4, 6, 3, 2)  # the kernel gradient: batch and features swapped
    x = random(rng, "f32", xs)
    k = random(rng, "f32", ks)
    n = 2
    strides = case.get("strides", 1)
    strides = [strides] * n if isinstance(strides, int) else strides
    idil = case.get("input_dilation", [1] * n)
    kdil = case.get("kernel_dilation", 1)
    kdil = [kdil] * n if isinstance(kdil, int) else kdil
    kperm = case.get("kernel_permutation")
    kc = k if kperm is None else np.transpose(k, kperm)
    pad = case.get("padding", "valid")
    if pad == "same":
        tot = [(kc.shape[2 + d] - 1) * kdil[d] for d in range(n)]  # Nx: the dilated kernel size - 1
        lo, hi = [t // 2 for t in tot], [t - t // 2 for t in tot]
    elif pad == "valid":
        lo, hi = [0] * n, [0] * n
    else:
        lo, hi = [p[0] for p in pad], [p[1] for p in pad]
    want = conv_ref(x, k, strides, lo, hi, idil, kdil, case.get("feature_group_size", 1),
                    case.get("batch_group_size", 1), case.get("input_permutation"), kperm,
                    case.get("output_permutation"))
    check(vkt.conv(ctx.tensor(x), ctx.tensor(k), **case), want, "f32", 1e-5, 1e-5)


def _window_ref(x, win, strides, lo, hi, dil, op):
    ident = {"sum": 0, "product": 1, "max": -np.inf, "min": np.inf}[op]
    red = {"sum": np.sum, "product": np.prod, "max": np.max, "min": np.min}[op]
    xp = _pad_axes(x.astype(np.float64), lo, hi, ident)
    wd = [(w - 1) * d + 1 for w, d in zip(win, dil)]
    out_sp = [(xp.shape[i] - wd[i]) // strides[i] + 1 for i in range(x.ndim)]
    out = np.zeros(out_sp)
    for pos in np.ndindex(*out_sp):
        sl = tuple(slice(p * s, p * s + w, d) for p, s, w, d in zip(pos, strides, wd, dil))
        out[pos] = red(xp[sl])
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["sum", "product", "max", "min"])
def test_window_ops(ctx, rng, op, dtype):
    x = random(rng, dtype, (2, 5, 6), 0, 3) if op != "product" or dtype in ("f32", "f64") else \
        random(rng, dtype, (2, 5, 6), 0, 2)
    fn = getattr(vkt, "window_" + op)
    t = ctx.tensor(x)
    cast = (lambda w: w.astype(np.int64) & 0xFF) if dtype == "u8" and op in ("sum", "product") else (lambda w: w)
    check(fn(t, (1, 2, 3)), cast(_window_ref(x, [1, 2, 3], [1, 1, 1], [0] * 3, [0] * 3, [1] * 3, op)), dtype,
          *_tol(dtype))
    want = _window_ref(x, [1, 2, 2], [1, 2, 2], [0] * 3, [0] * 3, [1] * 3, op)
    check(fn(t, (1, 2, 2), strides=(1, 2, 2)), cast(want), dtype, *_tol(dtype))
    if dtype in ("f32", "f64"):
        # 'same' pads by the dilated window - 1 (Nx), with the reduction's identity
        got = fn(t, (1, 3, 2), padding="same", window_dilations=(1, 2, 1))
        check(got, _window_ref(x, [1, 3, 2], [1, 1, 1], [0, 2, 0], [0, 2, 1], [1, 2, 1], op), dtype, *_tol(dtype))
        got = fn(t, (2, 2, 2), strides=2, padding=[(0, 0), (1, 0), (0, 1)])
        check(got, _window_ref(x, [2, 2, 2], [2, 2, 2], [0, 1, 0], [0, 0, 1], [1, 1, 1], op), dtype, *_tol(dtype))


def _scatter_ref(x, src, init, win, strides, lo, hi, op):
    xp = _pad_axes(x.astype(np.float64), lo, hi, -np.inf if op == "max" else np.inf)
    out = np.full(xp.shape, float(init))
    pick = np.argmax if op == "max" else np.argmin
    for pos in np.ndindex(*src.shape):
        start = [p * s for p, s in zip(pos, strides)]
        sl = tuple(slice(b, b + w) for b, w in zip(start, win))
        off = np.unravel_index(pick(xp[sl]), win)
        out[tuple(b + o for b, o in zip(start, off))] += src[pos]
    inner = tuple(slice(max(b, 0), out.shape[i] - max(e, 0)) for i, (b, e) in enumerate(zip(lo, hi)))
    return out[inner]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["max", "min"])
def test_window_scatter(ctx, rng, op, dtype):
    x = random(rng, dtype, (2, 4, 6), 0, 20)
    fn = getattr(vkt, "window_scatter_" + op)
    src = random(rng, dtype, (2, 2, 3), 0, 5)
    check(fn(ctx.tensor(x), ctx.tensor(src), 1, (1, 2, 2), strides=(1, 2, 2)),
          _scatter_ref(x, src, 1, [1, 2, 2], [1, 2, 2], [0] * 3, [0] * 3, op), dtype, *_tol(dtype))
    src2 = random(rng, dtype, (2, 4, 6), 0, 5)
    check(fn(ctx.tensor(x), ctx.tensor(src2), 0, (1, 3, 3), padding="same"),
          _scatter_ref(x, src2, 0, [1, 3, 3], [1, 1, 1], [0, 1, 1], [0, 1, 1], op), dtype, *_tol(dtype))


@pytest.mark.parametrize("path", ["native", "fallback"])
@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("op", ["max", "min"])
def test_window_scatter_goes_to_the_first_nan(ctx, rng, op, dtype, path):
    # A window that holds a NaN sends its source to its first NaN, where window_max/min give NaN.
    nan = np.nan
    x = np.array([[[1, nan, 3, 2, nan, nan, 5, 7], [nan, 0, 9, nan, 4, 4, -1, 8]]], NP[dtype])
    src = random(rng, dtype, (1, 1, 4), 1, 5)
    name = "window_scatter_" + op
    fell = vkt.stats().get(name, (0, 0, 0))[1]
    with native_disabled(ctx, name if path == "fallback" else ""):
        got = getattr(vkt, name)(ctx.tensor(x), ctx.tensor(src), 0, (1, 2, 2), strides=(1, 2, 2))
    assert vkt.stats()[name][1] == fell + (path == "fallback")
    want = _scatter_ref(x, src, 0, [1, 2, 2], [1, 2, 2], [0] * 3, [0] * 3, op)
    check(got, want, dtype, *_tol(dtype))
    # Windows 0, 1 and 2 hold their first NaNs at (0, 1), (1, 3) and (0, 4); window 3 has none.
    hit = np.flatnonzero(got.numpy()[0].ravel())
    assert hit.tolist() == [1, 4, 11, 15 if op == "max" else 14]
    pooled = getattr(vkt, "window_" + op)(ctx.tensor(x), (1, 2, 2), strides=(1, 2, 2)).numpy()
    assert np.isnan(pooled).ravel().tolist() == [True, True, True, False]


# ---- errors ----------------------------------------------------------------------------------

def test_errors_carry_libvkt_message(ctx):
    a = ctx.tensor(np.ones((2, 3), np.float32))
    b = ctx.tensor(np.ones((4,), np.float32))
    with pytest.raises(vkt.Error) as e:
        vkt.add(a, b)
    assert e.value.status_name == "VKT_ESHAPE" and e.value.status == -2
    assert "vkt_add" in e.value.message and "broadcast" in e.value.message
    with pytest.raises(vkt.Error) as e:
        vkt.sum(a, axes=5)
    assert e.value.status_name == "VKT_EAXIS" and "vkt_sum" in str(e.value)
    with pytest.raises(vkt.Error) as e:
        vkt.dot(a, a)
    assert e.value.status_name == "VKT_ESHAPE" and "vkt_dot" in str(e.value)
    with pytest.raises(vkt.Error, match="VKT_EDTYPE|bitwise") as e:
        vkt.bitwise_and(a, a)
    assert e.value.status_name == "VKT_EDTYPE"
    with pytest.raises(vkt.Error):
        vkt.reshape(a, (4, 2))
    with pytest.raises(vkt.Error):
        vkt.transpose(a, [0, 0])
    with pytest.raises(vkt.Error):
        vkt.conv(a, a)


def test_bad_python_arguments_raise_vkt_error(ctx):
    a = ctx.tensor(np.ones((2, 3), np.float32))
    bad = [lambda: vkt.sum(a, axes="x"), lambda: vkt.sort(a, direction="up"), lambda: vkt.dot(a),
           lambda: vkt.dot(a, [1], a), lambda: vkt.exp(np.ones(3)), lambda: vkt.pad(a, 0, [(1, 1)]),
           lambda: vkt.conv(a, a, padding="full"), lambda: vkt.as_type(a, "f16"), lambda: vkt.concatenate([]),
           lambda: vkt.reshape(a, (5, -1)), lambda: a + "text", lambda: vkt.slice(a, [0], [1]),
           lambda: vkt.window_sum(a, (1, 2, 3)), lambda: bool(a), lambda: a.item()]
    for fn in bad:
        with pytest.raises(vkt.Error):
            fn()


def test_cached_options_keep_each_calls_arguments(ctx, rng):
    """conv, the window ops and dot build their option structs once per argument list: a call
    after another with other arguments gets its own, and 1.0 where an int belongs is still refused
    after the int made a cached struct (numpy's ints still work, uncached)."""
    x = random(rng, "f32", (2, 3, 7, 6))
    k = random(rng, "f32", (4, 3, 3, 2))
    tx, tk = ctx.tensor(x), ctx.tensor(k)
    for pad in ([(1, 1), (0, 2)], [(0, 0), (1, 1)], [(1, 1), (0, 2)]):
        want = conv_ref(x, k, [1, 2], [p[0] for p in pad], [p[1] for p in pad], [1, 1], [1, 1])
        check(vkt.conv(tx, tk, strides=[1, 2], padding=pad), want, "f32", *_tol("f32"))
    with pytest.raises(vkt.Error, match="integers"):
        vkt.conv(tx, tk, strides=[1.0, 2])
    want = conv_ref(x, k, [2, 1], [0, 0], [0, 0], [1, 1], [1, 1])
    check(vkt.conv(tx, tk, strides=[np.int64(2), 1]), want, "f32", *_tol("f32"))
    for win in ((1, 1, 2, 2), (1, 1, 3, 1), (1, 1, 2, 2)):
        want = _window_ref(x, list(win), list(win), [0] * 4, [0] * 4, [1] * 4, "max")
        check(vkt.window_max(tx, win, strides=win), want, "f32")
    with pytest.raises(vkt.Error, match="integers"):
        vkt.window_max(tx, (1, 1, 2, 2), strides=(1, 1, 2.0, 2))
    a, b = random(rng, "f32", (3, 5)), random(rng, "f32", (3, 4))
    check(vkt.dot(ctx.tensor(a), [0], ctx.tensor(b), [0]), a.T.astype(np.float64) @ b, "f32", *_tol("f32"))
    c = random(rng, "f32", (5, 4))
    check(vkt.dot(ctx.tensor(a), [1], ctx.tensor(c), [0]), a.astype(np.float64) @ c, "f32", *_tol("f32"))
    with pytest.raises(vkt.Error, match="integers"):
        vkt.dot(ctx.tensor(a), [1.0], ctx.tensor(c), [0])


def test_ops_under_a_forced_fallback_match(ctx, rng):
    a = random(rng, "f32", (5, 4))
    b = random(rng, "f32", (4, 3))
    native = vkt.dot(ctx.tensor(a), ctx.tensor(b)).numpy()
    with native_disabled(ctx, "dot"):
        before = vkt.stats().get("dot", (0, 0, 0))[1]
        fell = vkt.dot(ctx.tensor(a), ctx.tensor(b)).numpy()
        assert vkt.stats()["dot"][1] == before + 1
    # The host reference accumulates in another order than the kernel: equal within rounding.
    np.testing.assert_allclose(native, fell, rtol=1e-5, atol=1e-6)


CENSUS = """
import json
import numpy as np
import vkt      # before fbcount: libvkt loads at the first use, after libfbcount
import fbcount
ctx = vkt.Context()
ctx.set_native_disable("multiply,sum,dot")
a = ctx.tensor(np.ones((2, 2), np.float32))
with fbcount.count() as c:
    vkt.multiply(a, a)  # site: function
    a * a  # site: operator
    a.sum(axes=0)  # site: method
    a @ a  # site: python
print(json.dumps(sorted((s.op, s.where, s.count) for s in c.sites)))
"""


def test_fallbacks_are_attributed_to_the_calling_line(tmp_path):
    """A fallback is the caller's line whichever way it reaches libvkt: an op function (C), an
    operator (the type's C slot), a tensor method (C), or a Python op of the package (@, whose
    frames inside vkt are the backend's): the extension's frames are the backend's too."""
    prog = tmp_path / "prog.py"
    prog.write_text(CENSUS)
    lines = {tag: n for n, text in enumerate(CENSUS.splitlines(), 1) if "# site: " in text
             for tag in [text.rsplit("# site: ", 1)[1]]}
    p = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})
    assert p.returncode == 0, p.stderr
    got = [tuple(s) for s in json.loads(p.stdout.strip().splitlines()[-1])]
    assert got == sorted([("vkt_multiply", f"prog.py:{lines['function']}", 1),
                          ("vkt_multiply", f"prog.py:{lines['operator']}", 1),
                          ("vkt_sum", f"prog.py:{lines['method']}", 1),
                          ("vkt_dot", f"prog.py:{lines['python']}", 1)]), p.stdout

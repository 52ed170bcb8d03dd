"""The ops of vkt.h as Python functions, named without the prefix, with Nx's defaults.

Each is the extension's (vkt._vkt) C function, called directly; written here are only
the few that are Python on top of them: matmul (numpy's rules for @), index (the []
operator) and op_support. This module gives Tensor those two operators, so that
_tensor.py never imports it.

Operands may be tensors, numpy arrays, nested lists or numbers, as long as one
of them is a tensor (it names the context). A Python number takes the type of
the tensor it meets when that type can hold it (1 + an s32 tensor is s32, 0.5 +
an f64 tensor is f64, 0.5 + an s32 tensor is f32), as Nx does.
"""
import builtins
import operator

from . import _vkt
from ._tensor import _CODE, Context, Tensor, dtype_name
from ._vkt import Error

_OPS = (list(_vkt.UNARY_OPS) + list(_vkt.BINARY_OPS) + [
    "sum", "product", "reduce_max", "reduce_min", "all", "any", "window_sum", "window_product", "window_max",
    "window_min", "select", "clip", "as_type", "argmax", "argmin", "reshape", "transpose", "broadcast", "slice",
    "pad", "reverse", "concatenate", "assign", "gather", "dot", "sort", "argsort", "conv", "window_scatter_max",
    "window_scatter_min", "stats", "stats_reset", "op_names"])
globals().update({name: getattr(_vkt, name) for name in _OPS})


def _tensors(a, b):
    """a and b as tensors of the context of the first tensor among them."""
    t = a if isinstance(a, Tensor) else b
    if not isinstance(t, Tensor):
        raise Error("needs at least one vkt.Tensor among its operands (make one with ctx.tensor)")
    ctx = t.context
    return (a if isinstance(a, Tensor) else ctx.tensor(a)), (b if isinstance(b, Tensor) else ctx.tensor(b))


def matmul(a, b):
    """The @ operator: numpy.matmul's rules on vkt_dot (vectors are promoted, batch axes broadcast)."""
    a, b = _tensors(a, b)
    ra, rb = a.ndim, b.ndim
    if ra == 0 or rb == 0:
        raise Error("matmul: operands must not be scalars (use *)", _vkt.ESHAPE)
    if ra == 1 or rb == 1 or (ra == 2 and rb == 2):
        return _vkt.dot(a, b) if rb <= 2 else _vkt.dot(a, [ra - 1], b, [rb - 2])
    # Batched: broadcast the leading axes to one shape, then dot over them.
    sa, sb = a.shape[:-2], b.shape[:-2]
    n = builtins.max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    batch = []
    for x, y in zip(sa, sb):
        if x != y and x != 1 and y != 1:
            raise Error(f"matmul: batch shapes {a.shape[:-2]} and {b.shape[:-2]} do not broadcast", _vkt.ESHAPE)
        batch.append(builtins.max(x, y))
    batch = tuple(batch)
    if a.shape[:-2] != batch:
        a = _vkt.broadcast(a, batch + a.shape[-2:])
    if b.shape[:-2] != batch:
        b = _vkt.broadcast(b, batch + b.shape[-2:])
    axes = list(range(n))
    return _vkt.dot(a, [n + 1], axes, b, [n], axes)


def index(x, key):
    """x[key] for integers, slices with positive steps and Ellipsis (the [] operator)."""
    shape = x.shape
    if not isinstance(key, tuple):
        key = (key,)
    if builtins.sum(k is Ellipsis for k in key) > 1:
        raise Error("an index can hold one Ellipsis only")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (builtins.slice(None),) * (len(shape) - len(key) + 1) + key[i + 1:]
    if len(key) > len(shape):
        raise Error(f"too many indices ({len(key)}) for a tensor of rank {len(shape)}", _vkt.EAXIS)
    key = key + (builtins.slice(None),) * (len(shape) - len(key))
    start, lengths, strides, out_shape = [], [], [], []
    for ax, (k, d) in enumerate(zip(key, shape)):
        if isinstance(k, builtins.slice):
            b, e, s = k.indices(d)
            if s <= 0:
                raise Error("negative or zero steps are not supported; use vkt.reverse", _vkt.EINVAL)
            n = builtins.max(0, (e - b + s - 1) // s)
            start.append(b if n else 0)
            lengths.append((n - 1) * s + 1 if n else 0)
            strides.append(s)
            out_shape.append(n)
        else:
            try:
                i = operator.index(k)
            except TypeError:
                raise Error(f"unsupported index {k!r}: integers, slices and ... only") from None
            if not -d <= i < d:
                raise IndexError(f"index {i} is out of range for axis {ax} of size {d}")
            start.append(i % d)
            lengths.append(1)
            strides.append(1)
    if builtins.all(isinstance(k, builtins.slice) and k == builtins.slice(None) for k in key):
        return x
    part = _vkt.slice(x, start, lengths, strides)
    return part if list(part.shape) == out_shape else _vkt.reshape(part, out_shape)


def op_support(op, dtype):
    """How op runs for inputs of dtype: ('native' | 'fallback' | 'undefined', the gate's reason)."""
    names = _vkt.op_names()
    if op not in names:
        raise Error(f"no op {op!r} in the support matrix")
    support, reason = _vkt._op_support(names.index(op), _CODE[dtype_name(dtype)])
    return ("native", "fallback", "undefined")[support], reason


def _rmatmul(self, o):
    return matmul(o, self)


Tensor.__getitem__ = index
Tensor.__matmul__ = matmul
Tensor.__rmatmul__ = _rmatmul

__all__ = _OPS + ["matmul", "op_support", "Context", "Tensor"]

"""The ops of vkt.h as Python functions, named without the prefix, with Nx's defaults.

Operands may be tensors, numpy arrays, nested lists or numbers, as long as one
of them is a tensor (it names the context). A Python number takes the type of
the tensor it meets when that type can hold it (1 + an s32 tensor is s32, 0.5 +
an f64 tensor is f64, 0.5 + an s32 tensor is f32), as Nx does.
"""
import builtins
import ctypes
import numbers
import operator

from . import _lib
from ._lib import F as _F
from ._lib import Error
from ._tensor import _CODE, Context, Tensor, dtype_name

_FLOATS = ("f32", "f64")


def _ctx_of(*xs):
    for x in xs:
        if isinstance(x, Tensor):
            return x._ctx
    raise Error("needs at least one vkt.Tensor among its operands (make one with ctx.tensor)")


def _scalar_dtype(x, like):
    """The dtype a Python number takes next to a tensor of dtype like (or alone)."""
    if isinstance(x, (bool, numbers.Integral)) or (hasattr(x, "dtype") and x.dtype.kind in "biu"):
        v = int(x)
        if like in _FLOATS:
            return like
        if like == "u8" and 0 <= v <= 255:
            return "u8"
        if -2**31 <= v < 2**31:
            return "s32"
        raise Error(f"{v} does not fit any integer dtype of vkt (s32, u8)", _lib.EDTYPE)
    return like if like in _FLOATS else "f32"


def _operand(x, ctx, like=None):
    """x as a tensor of ctx: tensors pass through, numbers follow like's type."""
    if isinstance(x, Tensor):
        if x._ctx is not ctx:
            raise Error("tensors from different contexts mixed in one op", _lib.ECTX)
        return x
    if isinstance(x, (numbers.Number, bool)) and not isinstance(x, complex):
        return ctx.full((), x, _scalar_dtype(x, like))
    if hasattr(x, "dtype") and getattr(x, "shape", None) == () and x.dtype.kind in "biuf":
        return ctx.full((), x, _scalar_dtype(x, like))  # numpy scalars are numbers too
    return ctx.tensor(x)


def _like(*xs):
    for x in xs:
        if isinstance(x, Tensor):
            return x.dtype
    return None


def _pair(a, b):
    """(ctx, a, b) for a binary op's operands, numbers taking the tensor's type."""
    if type(a) is Tensor and type(b) is Tensor and a._ctx is b._ctx:
        return a._ctx, a, b
    ctx = _ctx_of(a, b)
    like = _like(a, b)
    return ctx, _operand(a, ctx, like), _operand(b, ctx, like)


# C arrays of axes and shapes, by value: libvkt only reads them, so one array serves every
# call that passes the same ints (a model passes the same few again and again).
_ARRAYS = {}


def _ints(values, what, ctype=ctypes.c_int):
    """(C array, count) of the ints in values (None stays None, for NULL)."""
    if values is None:
        return None, 0
    if type(values) is not tuple:
        values = (values,) if isinstance(values, numbers.Integral) else tuple(values)
    # Only exact ints make a key: 1.0 equals 1 as a key, and must still be refused.
    exact = True
    for v in values:
        if type(v) is not int:
            exact = False
            break
    key = (ctype, values)
    arr = _ARRAYS.get(key) if exact else None
    if arr is None:
        try:
            vals = [operator.index(v) for v in values]
        except TypeError:
            raise Error(f"{what} must be integers, got {values!r}") from None
        arr = (ctype * builtins.max(len(vals), 1))(*vals)
        if exact and len(_ARRAYS) < 4096:
            _ARRAYS[key] = arr
    return arr, len(values)


def _i64(values, what):
    return _ints(values, what, ctypes.c_int64)


# Option structs of conv and the window ops, by their Python arguments: a model passes the same
# few again and again, and building one takes longer than the op's own call (libvkt only reads
# them). Only exact ints, strings, None and tuples or lists of them make a key, so that 1.0 and
# numpy's ints still meet the checks of the slow path.
_OPTS = {}


def _opts_key(*args):
    """A key for _OPTS, or None when an argument is of a kind that is not cached: exact ints,
    strings and None, and tuples or lists of ints or of tuples or lists of ints (the padding
    pairs). Written flat, not recursive: it runs on every call of the op."""
    key = []
    for v in args:
        t = type(v)
        if t is list or t is tuple:
            inner = []
            for e in v:
                te = type(e)
                if te is int:
                    inner.append(e)
                elif te is list or te is tuple:
                    for z in e:
                        if type(z) is not int:
                            return None
                    inner.append(tuple(e))
                else:
                    return None
            key.append(tuple(inner))
        elif t is int or t is str or v is None:
            key.append(v)
        else:
            return None
    return tuple(key)


def _opts_cached(key, build):
    """build()'s result, made once per key (a None key: every time)."""
    if key is None:
        return build()
    v = _OPTS.get(key)
    if v is None:
        v = build()
        if len(_OPTS) < 4096:
            _OPTS[key] = v
    return v


def _per_axis(value, n, what, default):
    """An int or a list of n ints (one per axis) as a list."""
    if value is None:
        return [default] * n
    if isinstance(value, numbers.Integral):
        return [operator.index(value)] * n
    vals = list(value)
    if len(vals) != n:
        raise Error(f"{what} needs {n} values (one per axis), got {len(vals)}", _lib.ESHAPE)
    try:
        return [operator.index(v) for v in vals]
    except TypeError:
        raise Error(f"{what} must be integers, got {value!r}") from None


def _axes_list(axes, what="axes"):
    if axes is None:
        return None
    if isinstance(axes, numbers.Integral):
        return [operator.index(axes)]
    try:
        return [operator.index(a) for a in axes]
    except TypeError:
        raise Error(f"{what} must be integers, got {axes!r}") from None


# ---- elementwise ---------------------------------------------------------------------

def _named(op, name, doc):
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _unary(name):
    fn_name = "vkt_" + name

    def op(x):
        if type(x) is not Tensor:
            _ctx_of(x)  # raises: only a tensor names the context
        return x._ctx._call(_F[fn_name], x._h)

    return _named(op, name, f"Elementwise {name} (vkt_{name}, Nx.{name}).")


def _binary(name):
    fn_name = "vkt_" + name

    def op(a, b):
        if type(a) is Tensor and type(b) is Tensor and a._ctx is b._ctx:
            return a._ctx._call(_F[fn_name], a._h, b._h)  # the common case, kept short
        ctx = _ctx_of(a, b)
        like = _like(a, b)
        a = _operand(a, ctx, like)
        b = _operand(b, ctx, like)
        return ctx._call(_F[fn_name], a._h, b._h)

    return _named(op, name, f"Elementwise {name} with broadcasting (vkt_{name}, Nx.{name}).")


_ELEMENTWISE = {name: _unary(name) for name in _lib.UNARY_OPS}
_ELEMENTWISE.update({name: _binary(name) for name in _lib.BINARY_OPS})
globals().update(_ELEMENTWISE)


def select(pred, on_true, on_false):
    """pred ? on_true : on_false elementwise, broadcast together (Nx.select)."""
    ctx = _ctx_of(pred, on_true, on_false)
    like = _like(on_true, on_false)
    pred = _operand(pred, ctx, "u8")
    on_true = _operand(on_true, ctx, like)
    on_false = _operand(on_false, ctx, like)
    return ctx._call(_F["vkt_select"], pred._handle(), on_true._handle(), on_false._handle())


def clip(x, min, max):  # noqa: A002 - Nx.clip's names
    """min(max(x, min), max) elementwise; keeps x's dtype (Nx.clip)."""
    ctx = _ctx_of(x, min, max)
    like = _like(x, min, max)
    x = _operand(x, ctx, like)
    lo = _operand(min, ctx, x.dtype)
    hi = _operand(max, ctx, x.dtype)
    return ctx._call(_F["vkt_clip"], x._handle(), lo._handle(), hi._handle())


def as_type(x, dtype):
    """x converted to dtype (Nx.as_type: floats to integers truncate and saturate)."""
    ctx = _ctx_of(x)
    return ctx._call(_F["vkt_as_type"], x._handle(), _CODE[dtype_name(dtype)])


# ---- reductions --------------------------------------------------------------------

def _reduce(name):
    fn_name = "vkt_" + name

    def op(x, axes=None, keep_axes=False):
        ctx = _ctx_of(x)
        arr, n = _ints(axes, "axes")
        return ctx._call(_F[fn_name], x._h, arr, n, bool(keep_axes))

    return _named(op, name, (f"{name} over axes (all axes when None; an int or a list), keeping them as size 1 "
                  f"with keep_axes (vkt_{name}, Nx.{name})."))


sum = _reduce("sum")  # noqa: A001 - Nx's names
product = _reduce("product")
reduce_max = _reduce("reduce_max")
reduce_min = _reduce("reduce_min")
all = _reduce("all")  # noqa: A001
any = _reduce("any")  # noqa: A001


def _arg(name):
    fn_name = "vkt_" + name

    def op(x, axis=None, keep_axis=False):
        ctx = _ctx_of(x)
        x = _operand(x, ctx)
        ax = _lib.ALL_AXES if axis is None else operator.index(axis)
        return ctx._call(_F[fn_name], x._handle(), ax, bool(keep_axis))

    return _named(op, name, (f"Index (s32) of the first {name[3:]}imum along axis, or over the flattened tensor "
                  f"when axis is None (vkt_{name}, Nx.{name})."))


argmax = _arg("argmax")
argmin = _arg("argmin")


# ---- data movement ---------------------------------------------------------------------

def reshape(x, shape):
    """x with a new shape of the same size (a view); one dimension may be -1 (inferred)."""
    ctx = _ctx_of(x)
    if type(shape) is not tuple:
        shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if -1 in shape:
        dims = [operator.index(d) for d in shape]
        rest = 1
        for d in dims:
            rest *= d if d != -1 else 1
        if dims.count(-1) > 1 or rest == 0 or x.size % rest:
            raise Error(f"cannot reshape {x.shape} to {shape}", _lib.ESHAPE)
        dims[dims.index(-1)] = x.size // rest
        shape = tuple(dims)
    arr, n = _i64(shape, "shape")
    return ctx._call(_F["vkt_reshape"], x._h, arr, n)


def transpose(x, axes=None):
    """Output axis i is x's axis axes[i]; None reverses the axes (Nx.transpose)."""
    ctx = _ctx_of(x)
    axes = _axes_list(axes)
    if axes is not None and len(axes) != x._rank():
        raise Error(f"transpose: {len(axes)} axes given for rank {x._rank()}", _lib.EAXIS)
    arr, _ = _ints(axes, "axes")
    return ctx._call(_F["vkt_transpose"], x._handle(), arr)


def broadcast(x, shape, axes=None):
    """x broadcast to shape; x's axis i goes to axes[i] (None: aligned right) (Nx.broadcast)."""
    ctx = _ctx_of(x)
    x = _operand(x, ctx)
    sarr, rank = _i64(shape, "shape")
    axes = _axes_list(axes)
    if axes is not None and len(axes) != x._rank():
        raise Error(f"broadcast: {len(axes)} axes given for rank {x._rank()}", _lib.EAXIS)
    aarr, _ = _ints(axes, "axes")
    return ctx._call(_F["vkt_broadcast"], x._handle(), sarr, rank, aarr)


def slice(x, start_indices, lengths, strides=1):  # noqa: A001 - Nx's name
    """x[start : start + length : stride] per axis; starts clamp so the window fits (Nx.slice)."""
    ctx = _ctx_of(x)
    rank = x._rank()
    start = _per_axis(start_indices, rank, "start_indices", 0)
    lens = _per_axis(lengths, rank, "lengths", 0)
    st = _per_axis(strides, rank, "strides", 1)
    return ctx._call(_F["vkt_slice"], x._handle(), _i64(start, "")[0], _i64(lens, "")[0], _i64(st, "")[0])


def pad(x, value, config):
    """x padded per axis by config's (lo, hi) or (lo, hi, interior), with value (Nx.pad)."""
    ctx = _ctx_of(x)
    rank = x._rank()
    config = list(config)
    if len(config) != rank:
        raise Error(f"pad: {len(config)} axis configurations for rank {rank}", _lib.ESHAPE)
    lo, hi, interior = [], [], []
    for c in config:
        c = tuple(c)
        if len(c) not in (2, 3):
            raise Error(f"pad: each axis takes (lo, hi) or (lo, hi, interior), got {c!r}")
        lo.append(c[0])
        hi.append(c[1])
        interior.append(c[2] if len(c) == 3 else 0)
    v = _operand(value, ctx, x.dtype)
    return ctx._call(_F["vkt_pad"], x._handle(), v._handle(), _i64(lo, "lo")[0], _i64(hi, "hi")[0],
                     _i64(interior, "interior")[0])


def reverse(x, axes=None):
    """x reversed along axes (every axis when None) (Nx.reverse)."""
    ctx = _ctx_of(x)
    axes = list(range(x._rank())) if axes is None else _axes_list(axes)
    arr, n = _ints(axes, "axes")
    return ctx._call(_F["vkt_reverse"], x._handle(), arr, n)


def concatenate(tensors, axis=0):
    """The tensors joined along axis; dtypes promote (Nx.concatenate)."""
    tensors = list(tensors)
    if not tensors:
        raise Error("concatenate needs at least one tensor")
    ctx = _ctx_of(*tensors)
    like = _like(*tensors)
    ts = [_operand(t, ctx, like) for t in tensors]
    arr = (ctypes.c_void_p * len(ts))(*[t._handle() for t in ts])
    return ctx._call(_F["vkt_concatenate"], arr, len(ts), operator.index(axis))


def assign(dst, src):
    """Copies src's elements into the existing tensor dst, in place, and returns dst: the one op
    that changes a tensor, so a recorded step can update its state (an SGD step's weights) on
    every launch. src must have dst's shape and dtype; host data converts to dst's dtype, and a
    number fills dst. Runs like any op: natively, through the fallback, or on the host."""
    if type(dst) is not Tensor:
        raise Error(f"assign: dst must be a vkt.Tensor (the tensor written), got {type(dst).__name__}")
    ctx = dst._ctx
    if isinstance(src, Tensor):
        if src._ctx is not ctx:
            raise Error("tensors from different contexts mixed in one op", _lib.ECTX)
    elif isinstance(src, (numbers.Number, bool)) and not isinstance(src, complex):
        src = ctx.full(dst.shape, src, dst.dtype)
    else:
        src = ctx.tensor(src, dst.dtype)
    ctx._run(_F["vkt_assign"], dst._handle(), src._handle())
    return dst


def gather(x, indices, axes=None):
    """Nx.gather: indices' last axis indexes x along axes (the first k when None)."""
    ctx = _ctx_of(x, indices)
    x = _operand(x, ctx)
    idx = _operand(indices, ctx, "s32")
    axes = _axes_list(axes)
    if axes is not None and (not idx.shape or len(axes) != idx.shape[-1]):
        raise Error(f"gather: {len(axes)} axes for indices of shape {idx.shape}", _lib.EAXIS)
    arr, _ = _ints(axes, "axes")
    return ctx._call(_F["vkt_gather"], x._handle(), idx._handle(), arr)


# ---- contraction and sorting ---------------------------------------------------------------

def _dot(a, ca, ba, b, cb, bb):
    ctx, a, b = _pair(a, b)
    key = _opts_key("dot", ca, ba, cb, bb)
    ca, ba, cb, bb, nc, nb = _opts_cached(key, lambda: _dot_axes(ca, ba, cb, bb))
    return ctx._call(_F["vkt_dot"], a._h, ca, ba, b._h, cb, bb, nc, nb)


def _dot_axes(ca, ba, cb, bb):
    """vkt_dot's axis arrays and counts (contracting, batch) from Nx.dot's axis lists."""
    (ca, nca), (ba, nba), (cb, ncb), (bb, nbb) = (_ints(() if v is None else v, "dot axes") for v in (ca, ba, cb, bb))
    if nca != ncb or nba != nbb:
        raise Error(f"dot: {nca} and {ncb} contracting axes, {nba} and {nbb} batch axes: "
                    "each side needs as many as the other", _lib.EAXIS)
    return ca, ba, cb, bb, nca, nba


def dot(a, *args):
    """Nx.dot: dot(a, b), dot(a, contract_a, b, contract_b) or
    dot(a, contract_a, batch_a, b, contract_b, batch_b).

    dot(a, b) multiplies when either is a scalar, and otherwise contracts a's last
    axis with b's only axis (b of rank 1) or its second to last; the result holds
    a's free axes, then b's (numpy.dot). With axes, the result holds the batch axes,
    then a's free axes, then b's."""
    if len(args) == 1:
        ctx, a, b = _pair(a, args[0])
        ra, rb = a._rank(), b._rank()
        if ra == 0 or rb == 0:
            return _ELEMENTWISE["multiply"](a, b)
        return _dot(a, [ra - 1], [], b, [0 if rb == 1 else rb - 2], [])
    if len(args) == 3:
        return _dot(a, args[0], [], args[1], args[2], [])
    if len(args) == 5:
        return _dot(a, args[0], args[1], args[2], args[3], args[4])
    raise Error(f"dot takes 2, 4 or 6 arguments (Nx.dot/2, /4, /6), got {len(args) + 1}")


def matmul(a, b):
    """The @ operator: numpy.matmul's rules on vkt_dot (vectors are promoted, batch axes broadcast)."""
    ctx, a, b = _pair(a, b)
    ra, rb = a._rank(), b._rank()
    if ra == 0 or rb == 0:
        raise Error("matmul: operands must not be scalars (use *)", _lib.ESHAPE)
    if ra == 1 or rb == 1 or (ra == 2 and rb == 2):
        return dot(a, b) if rb <= 2 else _dot(a, [ra - 1], [], b, [rb - 2], [])
    # Batched: broadcast the leading axes to one shape, then dot over them.
    sa, sb = a.shape[:-2], b.shape[:-2]
    n = builtins.max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    batch = []
    for x, y in zip(sa, sb):
        if x != y and x != 1 and y != 1:
            raise Error(f"matmul: batch shapes {a.shape[:-2]} and {b.shape[:-2]} do not broadcast", _lib.ESHAPE)
        batch.append(builtins.max(x, y))
    batch = tuple(batch)
    if a.shape[:-2] != batch:
        a = broadcast(a, batch + a.shape[-2:])
    if b.shape[:-2] != batch:
        b = broadcast(b, batch + b.shape[-2:])
    axes = list(range(n))
    return _dot(a, [n + 1], axes, b, [n], axes)


def _direction(direction):
    if direction not in ("asc", "desc"):
        raise Error(f"direction must be 'asc' or 'desc', got {direction!r}")
    return direction == "desc"


def sort(x, axis=0, direction="asc"):
    """x sorted along axis, stably; NaN last ascending, first descending (Nx.sort)."""
    ctx = _ctx_of(x)
    return ctx._call(_F["vkt_sort"], _operand(x, ctx)._handle(), operator.index(axis), _direction(direction))


def argsort(x, axis=0, direction="asc"):
    """The stable indices (s32) that sort x along axis (Nx.argsort)."""
    ctx = _ctx_of(x)
    return ctx._call(_F["vkt_argsort"], _operand(x, ctx)._handle(), operator.index(axis),
                     _direction(direction))


# ---- convolution and windows -------------------------------------------------------------

def _padding(padding, n, sizes, what):
    """Nx's padding: 'valid', 'same' (sizes: each axis' dilated window) or (lo, hi) pairs."""
    if isinstance(padding, str):
        if padding == "valid":
            return [0] * n, [0] * n
        if padding == "same":
            total = [builtins.max(k - 1, 0) for k in sizes]
            return [t // 2 for t in total], [t - t // 2 for t in total]
        raise Error(f"{what}: padding must be 'valid', 'same' or a list of (lo, hi), got {padding!r}")
    config = list(padding)
    if len(config) != n or builtins.any(len(tuple(c)) != 2 for c in config):
        raise Error(f"{what}: padding needs {n} (lo, hi) pairs, got {padding!r}", _lib.ESHAPE)
    return [operator.index(c[0]) for c in config], [operator.index(c[1]) for c in config]


def _perm(opts, field, perm, rank, what):
    if perm is None:
        return False
    vals = _axes_list(perm, what)
    if len(vals) != rank:
        raise Error(f"conv: {what} needs {rank} axes, got {len(vals)}", _lib.EAXIS)
    getattr(opts, field)[:rank] = vals
    return True


def conv(input, kernel, strides=1, padding="valid", input_dilation=1, kernel_dilation=1,  # noqa: A002
         feature_group_size=1, batch_group_size=1, input_permutation=None, kernel_permutation=None,
         output_permutation=None):
    """Nx.conv: an N-d cross-correlation of input [batch, features, spatial...] with kernel
    [out_features, in_features / groups, spatial...], with Nx's options and defaults."""
    ctx, x, k = _pair(input, kernel)
    rank = x._rank()
    if rank < 3 or rank > _lib.MAX_RANK or k._rank() != rank:
        raise Error(f"conv: input and kernel need one rank from 3 to {_lib.MAX_RANK}, got shapes "
                    f"{x.shape} and {k.shape}", _lib.ESHAPE)
    args = (strides, padding, input_dilation, kernel_dilation, feature_group_size, batch_group_size,
            input_permutation, kernel_permutation, output_permutation)
    # 'same' padding depends on the kernel's shape: built every time
    key = None if padding == "same" else _opts_key("conv", rank, *args)
    ref = _opts_cached(key, lambda: _conv_opts(rank, k, *args))
    return ctx._call(_F["vkt_conv"], x._handle(), k._handle(), ref)


def _conv_opts(rank, k, strides, padding, input_dilation, kernel_dilation, feature_group_size,
               batch_group_size, input_permutation, kernel_permutation, output_permutation):
    """A reference to conv's vkt_conv_opts (the struct kept alive by it)."""
    n = rank - 2
    o = _lib.ConvOpts()
    o.strides[:n] = _per_axis(strides, n, "strides", 1)
    o.input_dilation[:n] = _per_axis(input_dilation, n, "input_dilation", 1)
    o.kernel_dilation[:n] = kdil = _per_axis(kernel_dilation, n, "kernel_dilation", 1)
    o.feature_group_size = operator.index(feature_group_size)
    o.batch_group_size = operator.index(batch_group_size)
    o.has_input_permutation = _perm(o, "input_permutation", input_permutation, rank, "input_permutation")
    o.has_kernel_permutation = _perm(o, "kernel_permutation", kernel_permutation, rank, "kernel_permutation")
    o.has_output_permutation = _perm(o, "output_permutation", output_permutation, rank, "output_permutation")
    sizes = []
    if padding == "same":
        kperm = list(o.kernel_permutation[:rank]) if o.has_kernel_permutation else list(range(rank))
        if builtins.any(not 0 <= a < rank for a in kperm):
            raise Error(f"conv: kernel_permutation {kperm} is out of range for rank {rank}", _lib.EAXIS)
        kspatial = [k.shape[a] for a in kperm[2:]]
        sizes = [(s - 1) * d + 1 for s, d in zip(kspatial, kdil)]
    lo, hi = _padding(padding, n, sizes, "conv")
    o.padding_lo[:n] = lo
    o.padding_hi[:n] = hi
    return ctypes.byref(o)


def _window_opts(x, window, strides, padding, dilations, what):
    """(window array, reference to vkt_window_opts) for x's rank, from the cache."""
    rank = x._rank()
    key = _opts_key("window", rank, window, strides, padding, dilations, what)
    return _opts_cached(key, lambda: _window_opts_built(rank, window, strides, padding, dilations, what))


def _window_opts_built(rank, window, strides, padding, dilations, what):
    win = _per_axis(window, rank, "window_dimensions", 1)
    o = _lib.WindowOpts()
    o.strides[:rank] = _per_axis(strides, rank, "strides", 1)
    o.window_dilations[:rank] = dil = _per_axis(dilations, rank, "window_dilations", 1)
    lo, hi = _padding(padding, rank, [(w - 1) * d + 1 for w, d in zip(win, dil)], what)
    o.padding_lo[:rank] = lo
    o.padding_hi[:rank] = hi
    return _i64(win, "window_dimensions")[0], ctypes.byref(o)


def _window(name):
    fn_name = "vkt_" + name

    def op(x, window_dimensions, strides=1, padding="valid", window_dilations=1):
        ctx = _ctx_of(x)
        x = _operand(x, ctx)
        win, o = _window_opts(x, window_dimensions, strides, padding, window_dilations, name)
        return ctx._call(_F[fn_name], x._handle(), win, o)

    return _named(op, name, (f"Nx.{name}: reduces every window of shape window_dimensions (strides 1, 'valid' "
                  f"padding and dilations 1 by default; padding takes the reduction's identity)."))


window_sum = _window("window_sum")
window_product = _window("window_product")
window_max = _window("window_max")
window_min = _window("window_min")


def _scatter(name):
    fn_name = "vkt_" + name

    def op(x, source, init_value, window_dimensions, strides=1, padding="valid"):
        ctx = _ctx_of(x, source)
        x = _operand(x, ctx)
        src = _operand(source, ctx, x.dtype)
        init = _operand(init_value, ctx, x.dtype)
        win, o = _window_opts(x, window_dimensions, strides, padding, 1, name)
        return ctx._call(_F[fn_name], x._handle(), src._handle(), init._handle(), win, o)

    return _named(op, name, (f"Nx.{name}: adds each window's source value at its first {name[15:]}imum, into a "
                  "tensor of x's shape that starts from init_value."))


window_scatter_max = _scatter("window_scatter_max")
window_scatter_min = _scatter("window_scatter_min")


# ---- indexing -----------------------------------------------------------------------------

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
        raise Error(f"too many indices ({len(key)}) for a tensor of rank {len(shape)}", _lib.EAXIS)
    key = key + (builtins.slice(None),) * (len(shape) - len(key))
    start, lengths, strides, out_shape = [], [], [], []
    for ax, (k, d) in enumerate(zip(key, shape)):
        if isinstance(k, builtins.slice):
            b, e, s = k.indices(d)
            if s <= 0:
                raise Error("negative or zero steps are not supported; use vkt.reverse", _lib.EINVAL)
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
    part = slice(x, start, lengths, strides)
    return part if list(part.shape) == out_shape else reshape(part, out_shape)


def stats():
    """libvkt's per-op counters since the last reset: {op: (native, fallback, host)}."""
    lib = _lib.lib()
    n = lib.vkt_stats(None, 0)
    entries = (_lib.StatsEntry * builtins.max(n, 1))()
    n = builtins.min(lib.vkt_stats(entries, n), n)
    return {e.op.decode(): (e.native, e.fallback, e.host) for e in entries[:n]}


def stats_reset():
    """Zeroes libvkt's per-op counters."""
    _F["vkt_stats_reset"]()


def op_names():
    """The public ops of the support matrix, without the prefix."""
    lib = _lib.lib()
    return [lib.vkt_op_name(i).decode() for i in range(lib.vkt_op_count())]


def op_support(op, dtype):
    """How op runs for inputs of dtype: ('native' | 'fallback' | 'undefined', the gate's reason)."""
    names = op_names()
    if op not in names:
        raise Error(f"no op {op!r} in the support matrix")
    reason = ctypes.c_char_p()
    s = _F["vkt_op_support"](names.index(op), _CODE[dtype_name(dtype)], ctypes.byref(reason))
    return ("native", "fallback", "undefined")[s], (reason.value or b"").decode()


__all__ = (list(_lib.UNARY_OPS) + list(_lib.BINARY_OPS) + list(_lib.REDUCE_OPS) + list(_lib.WINDOW_OPS) + [
    "select", "clip", "as_type", "argmax", "argmin", "reshape", "transpose", "broadcast", "slice", "pad",
    "reverse", "concatenate", "assign", "gather", "dot", "matmul", "sort", "argsort", "conv", "window_scatter_max",
    "window_scatter_min", "stats", "stats_reset", "op_names", "op_support", "Context", "Tensor"])

"""Contexts and tensors: the extension's types (vkt._vkt) with numpy's side added here.

The C types hold the handles: a tensor's vkt_tensor is freed with its object, a
tensor keeps its context alive, and closing a context frees every graph and tensor
still alive on it, after which they refuse to be used (vkt.Error) instead of
touching freed memory. A context is not thread-safe in C, so every call on it holds
the context's lock; a tensor that Python collects while another thread holds it is
freed by the next call that does.

A graph binds the tensors its recording used: each launch reads and writes their
storage. libvkt refuses to launch a graph after one of them was freed, so the context
keeps them until the graph goes: a bound tensor that Python collects while a graph
holds it is freed with the last such graph.
"""
import atexit
import collections
import numbers

import numpy as np

from . import _lib, _vkt
from ._vkt import Error

_NP_OF = {"f32": np.dtype(np.float32), "f64": np.dtype(np.float64), "s32": np.dtype(np.int32),
          "u8": np.dtype(np.uint8)}
_NAME_OF_NP = {v: k for k, v in _NP_OF.items()}
_CODE = {name: i for i, name in enumerate(_vkt.DTYPES)}
_S32_MIN, _S32_MAX = -2**31, 2**31 - 1

ProfileEntry = collections.namedtuple("ProfileEntry", "op kernel gpu_ns")
ProfileEntry.__doc__ = """One dispatch's GPU time (Context.profile): op is the public op whose native path
recorded it, without the prefix (None for libvkt's own work), kernel the shader's name, gpu_ns its
time in nanoseconds from Vulkan timestamps."""


def dtype_name(dtype):
    """The vkt dtype name ('f32', 'f64', 's32', 'u8') of a name or numpy dtype-like."""
    if isinstance(dtype, str) and dtype in _CODE:
        return dtype
    try:
        nd = np.dtype(dtype)
    except TypeError:
        raise Error(f"not a dtype: {dtype!r} (expected one of f32, f64, s32, u8)") from None
    name = _NAME_OF_NP.get(nd)
    if name is None:
        raise Error(f"dtype {nd} has no vkt equivalent (f32, f64, s32, u8)", _vkt.EDTYPE)
    return name


def numpy_dtype(dtype):
    """The numpy dtype of a vkt dtype name or dtype-like."""
    return _NP_OF[dtype_name(dtype)]


def _c(arr, dtype=None):
    # Not np.ascontiguousarray: it makes rank-0 arrays rank 1.
    return np.asarray(arr, dtype=dtype, order="C")


def _host_array(data, dtype):
    """data as a C-contiguous numpy array of a vkt dtype."""
    if dtype is not None:
        nd = numpy_dtype(dtype)
        try:
            return _c(np.asarray(data).astype(nd, copy=False))
        except (TypeError, ValueError) as e:
            raise Error(f"cannot convert {type(data).__name__} to {dtype_name(dtype)}: {e}") from None
    explicit = isinstance(data, (np.ndarray, np.generic))
    try:
        arr = np.asarray(data)
    except (TypeError, ValueError) as e:
        raise Error(f"cannot make a tensor of {type(data).__name__}: {e}") from None
    kind = arr.dtype.kind
    if arr.dtype in _NAME_OF_NP and (explicit or kind not in "fi"):
        return _c(arr)
    if kind == "b":
        return _c(arr, np.uint8)
    if kind == "f" and (not explicit or arr.dtype.itemsize < 4):
        # Python floats give f32, Nx's default float type; float16 widens losslessly.
        return _c(arr, np.float32)
    if kind in "iu":
        # Other integer types narrow to s32 when every value fits, else refuse.
        if arr.size and (arr.min() < _S32_MIN or arr.max() > _S32_MAX):
            raise Error(f"{arr.dtype} values out of the s32 range; pass dtype='f64' or narrow them first",
                        _vkt.EDTYPE)
        return _c(arr, np.int32)
    raise Error(f"numpy dtype {arr.dtype} has no vkt equivalent (f32, f64, s32, u8)", _vkt.EDTYPE)


def _operand(x, ctx, dtype):
    """What an op makes of an operand that is neither a tensor nor a Python int or float (the
    extension handles those): numbers and numpy scalars come back as int or float, and take
    the type of the tensor they meet; other data becomes a tensor of ctx (of dtype, if given)."""
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, numbers.Real):
        return float(x)
    if getattr(x, "shape", None) == () and getattr(getattr(x, "dtype", None), "kind", "") in ("b", "i", "u", "f"):
        return x.item()  # numpy's 0-d arrays and bools are numbers too
    return ctx.tensor(x, dtype)


class Context(_vkt.Context):
    """A libvkt context: one Vulkan device and its compute queue.

    device selects a device by index or by a case-insensitive substring of its
    name; None uses $VKT_DEVICE, else the best device. Use it as a context
    manager, or call close(); it is closed at interpreter exit otherwise.
    """

    __slots__ = ()

    def set_native_disable(self, ops):
        """Forces the named ops (names without the prefix, 'all', or '' for none) down the
        fallback path; ops is a comma-separated string or a sequence of names."""
        names = [n.strip() for n in (ops.split(",") if isinstance(ops, str) else ops)]
        # libvkt ignores names it does not know; a typo would silently force nothing.
        known = set(_vkt.op_names()) | {"all", ""}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise Error(f"no op named {', '.join(map(repr, unknown))} (names without the vkt_ prefix, or 'all')")
        self._set_native_disable(",".join(n for n in names if n))

    def profile(self):
        """The dispatches timed since the last call, oldest first, as ProfileEntry(op, kernel,
        gpu_ns) tuples; they leave the profile (vkt_profile_read)."""
        return [ProfileEntry(*e) for e in self._profile()]

    def tensor(self, data, dtype=None):
        """A new device tensor holding a copy of data (a numpy array, a nested list or a number).

        Without dtype, numpy's f32, f64, int32 and uint8 keep their type, bools give u8,
        other integers s32 (when they fit), Python floats f32 (Nx's default)."""
        if isinstance(data, Tensor):
            if data.context is self and dtype is not None and dtype_name(dtype) != data.dtype:
                return data.astype(dtype)  # a new tensor already
            if data.context is self and data.residency == "device":
                # A copy, not data itself: write and assign change tensors in place.
                return _vkt.assign(self.zeros(data.shape, data.dtype), data)
            data = data.numpy()
        arr = _host_array(data, dtype)
        return self._from_host(_CODE[_NAME_OF_NP[arr.dtype]], arr.shape, arr if arr.size else None)

    @property
    def _pins(self):
        """{handle: graphs that bind it} (the package's tests read it)."""
        return {h: n for h, n in self._live.items() if n}

    def __repr__(self):
        if self.closed:
            return "<vkt.Context closed>"
        return f"<vkt.Context {self.device_name!r}>"


class Tensor(_vkt.Tensor):
    """A tensor on a vkt Context. Made by Context.tensor/zeros/full/iota and by the ops, which
    never change their operands; only Tensor.write and vkt.assign change a tensor in place (the
    inputs and state of a recorded step). Operators follow numpy's broadcasting and Nx's type
    rules, and Python numbers take the other operand's type where it can hold them (Nx)."""

    __slots__ = ()
    __array_ufunc__ = None  # numpy defers to Tensor's reflected operators

    def write(self, data):
        """Replaces the tensor's elements with data (a numpy array, nested list or number of the
        tensor's shape), in place: every view of its storage and every graph bound to it sees
        them. Numbers convert to a float tensor's dtype, integers to an integer tensor's when
        they fit; floats into an integer tensor are refused. Not while recording."""
        if isinstance(data, Tensor):
            raise Error("write takes host data; vkt.assign(dst, src) copies a tensor into another")
        want = _NP_OF[self.dtype]
        try:
            arr = np.asarray(data)
        except (TypeError, ValueError) as e:
            raise Error(f"write: cannot convert {type(data).__name__} to an array: {e}") from None
        if arr.shape != self.shape:
            raise Error(f"write: data of shape {arr.shape} into a tensor of shape {self.shape}", _vkt.ESHAPE)
        if arr.dtype != want:
            if arr.dtype.kind not in ("biuf" if want.kind == "f" else "biu"):
                raise Error(f"write: {arr.dtype} data into a tensor of {self.dtype}; convert it first", _vkt.EDTYPE)
            if want.kind != "f" and arr.dtype.kind in "iu" and arr.size:
                info = np.iinfo(want)
                if arr.min() < info.min or arr.max() > info.max:
                    raise Error(f"write: {arr.dtype} values out of the {self.dtype} range", _vkt.EDTYPE)
            arr = arr.astype(want)
        self._write_from(_c(arr))

    def numpy(self):
        """A numpy copy of the tensor (a sync point)."""
        out = np.empty(self.shape, _NP_OF[self.dtype])
        self._read_into(out)
        return out

    def __array__(self, dtype=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        if self.size != 1:
            raise Error(f"item() needs a tensor of one element, this one has shape {self.shape}", _vkt.ESHAPE)
        return self.numpy().reshape(()).item()

    def __bool__(self):
        if self.size != 1:
            raise Error(f"the truth value of a tensor of shape {self.shape} is ambiguous; use vkt.all or vkt.any",
                        _vkt.ESHAPE)
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a rank-0 tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a rank-0 tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        if self.context.closed:
            return "<vkt.Tensor (context closed)>"
        if self.context.recording:  # values would need a read, which a recording refuses
            return f"<vkt.Tensor shape={self.shape} dtype={self.dtype} (recording)>"
        body = np.array2string(self.numpy(), separator=", ", prefix="vkt.Tensor(")
        return f"vkt.Tensor({body}, dtype={self.dtype})"


Context.__module__ = Tensor.__module__ = "vkt"
_vkt._setup(tensor=Tensor, operand=_operand, dtype_name=dtype_name, load=_lib.lib)
# Before the interpreter tears modules down, while libvkt is whole.
atexit.register(_vkt.close_all)

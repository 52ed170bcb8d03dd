"""Contexts, tensors and recorded steps: handles to libvkt objects whose lifetime follows Python's.

A tensor keeps its context alive; closing a context frees every graph and
tensor still alive on it, after which they refuse to be used (vkt.Error)
instead of touching freed memory. A context is not thread-safe in C, so every
call on it holds the context's lock. A tensor or graph that Python collects is
queued and freed by the next call that holds the lock (at the latest by close):
its __del__ may run on any thread, and this keeps the lock out of it.

A graph binds the tensors its recording used: each launch reads and writes
their storage. libvkt refuses to launch a graph after one of them was freed, so
the context keeps them until the graph goes: a bound tensor that Python
collects while a graph holds it is freed with the last such graph.
"""
import atexit
import collections
import ctypes
import numbers
import operator
import threading
import weakref

import numpy as np

from . import _lib
from ._lib import Error

_NP_OF = {"f32": np.dtype(np.float32), "f64": np.dtype(np.float64), "s32": np.dtype(np.int32),
          "u8": np.dtype(np.uint8)}
_NAME_OF_NP = {v: k for k, v in _NP_OF.items()}
_CODE = {name: i for i, name in enumerate(_lib.DTYPES)}
_RESIDENCY = ("device", "host")
_S32_MIN, _S32_MAX = -2**31, 2**31 - 1

_open_contexts = weakref.WeakSet()
_new = object.__new__

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
        raise Error(f"dtype {nd} has no vkt equivalent (f32, f64, s32, u8)", _lib.EDTYPE)
    return name


def numpy_dtype(dtype):
    """The numpy dtype of a vkt dtype name or dtype-like."""
    return _NP_OF[dtype_name(dtype)]


def _shape_array(shape, what="shape"):
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    try:
        dims = [operator.index(d) for d in shape]
    except TypeError:
        raise Error(f"{what} must be a sequence of integers, got {shape!r}") from None
    return dims, (ctypes.c_int64 * max(len(dims), 1))(*dims)


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
                        _lib.EDTYPE)
        return _c(arr, np.int32)
    raise Error(f"numpy dtype {arr.dtype} has no vkt equivalent (f32, f64, s32, u8)", _lib.EDTYPE)


class Context:
    """A libvkt context: one Vulkan device and its compute queue.

    device selects a device by index or by a case-insensitive substring of its
    name; None uses $VKT_DEVICE, else the best device. Use it as a context
    manager, or call close(); it is closed at interpreter exit otherwise.
    """

    __slots__ = ("_h", "_lock", "_live", "_pending", "_out", "_outref", "_graphs", "_pins", "_kept",
                 "_pending_graphs", "_rec", "_touched", "_profiling", "__weakref__")

    def __init__(self, device=None):
        self._h = None
        self._lock = threading.RLock()
        self._live = set()     # handles of the tensors made here and not freed yet
        self._pending = []     # handles whose tensors Python collected, to free under the lock
        self._graphs = {}      # handle of each graph not freed yet -> the tensor handles it binds
        self._pins = {}        # tensor handle -> how many of those graphs bind it
        self._kept = set()     # bound handles whose tensors Python collected: freed with their last graph
        self._pending_graphs = []  # handles of graphs Python collected, to free under the lock
        self._rec = None       # the Graph being recorded
        self._touched = None   # while recording: the tensor handles its calls used
        self._profiling = False
        self._out = ctypes.c_void_p()
        self._outref = ctypes.byref(self._out)
        if device is not None and (isinstance(device, bool) or not isinstance(device, (str, numbers.Integral))):
            raise Error(f"device must be an index or a name, got {device!r}")
        lib = _lib.lib()
        h = ctypes.c_void_p()
        with self._lock:
            status = lib.vkt_ctx_create(None if device is None else str(device).encode(), ctypes.byref(h))
            if status:
                raise _lib.error(status, lib)
        self._h = h.value
        _open_contexts.add(self)

    def _handle(self):
        h = self._h
        if h is None:
            raise Error("the context is closed", _lib.ECTX)
        return h

    def close(self):
        """Ends a recording under way, frees every graph and tensor still alive on this context,
        then the context."""
        with self._lock:
            h = self._h
            if h is None:
                return
            lib = _lib.lib()
            if self._rec is not None:
                out = ctypes.c_void_p()
                lib.vkt_graph_end(h, ctypes.byref(out))
                lib.vkt_graph_free(out.value)
                self._rec._state = "closed"
                self._rec = self._touched = None
            for g in self._graphs:
                lib.vkt_graph_free(g)
            for t in self._live:
                lib.vkt_tensor_free(t)
            self._graphs.clear()
            self._pins.clear()
            self._kept.clear()
            self._pending_graphs.clear()
            self._live.clear()
            self._pending.clear()
            self._h = None
            lib.vkt_ctx_destroy(h)
        _open_contexts.discard(self)

    def _drain(self):
        """Frees the graphs and tensors Python collected (the lock held); a tensor that a graph
        binds is kept until that graph goes."""
        pending_graphs = self._pending_graphs
        while pending_graphs:
            self._free_graph(pending_graphs.pop())
        free, live, pending, pins = _lib.F["vkt_tensor_free"], self._live, self._pending, self._pins
        while pending:
            h = pending.pop()
            if h in live:
                if h in pins:
                    self._kept.add(h)
                else:
                    live.remove(h)
                    free(h)

    def _free_graph(self, g):
        """Frees graph g and the collected tensors that only it still bound (the lock held)."""
        bound = self._graphs.pop(g, None)
        if bound is None:
            return
        _lib.F["vkt_graph_free"](g)
        pins, kept = self._pins, self._kept
        for h in bound:
            n = pins[h] - 1
            if n:
                pins[h] = n
                continue
            del pins[h]
            if h in kept:
                kept.remove(h)
                self._live.remove(h)
                _lib.F["vkt_tensor_free"](h)

    def _touch(self, args, h=None):
        """Notes the tensor handles among a recorded call's arguments (and its result h): the
        graph will bind them."""
        live, touched = self._live, self._touched
        if h is not None:
            touched.add(h)
        for a in args:
            if type(a) is int:
                if a in live:
                    touched.add(a)
            elif isinstance(a, ctypes.Array) and a._type_ is ctypes.c_void_p:
                touched.update(v for v in a if v in live)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing to report to at collection
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def closed(self):
        return self._h is None

    def _call(self, fn, *args):
        """Runs one libvkt call that makes a tensor (its last argument, added here). The
        hot path of every op: keep it short."""
        with self._lock:
            if self._h is None:
                raise Error("the context is closed", _lib.ECTX)
            if self._pending or self._pending_graphs:
                self._drain()
            out = self._out
            out.value = None
            status = fn(*args, self._outref)
            if status:
                raise _lib.error(status)
            h = out.value
            if h is None:
                raise Error("libvkt returned no tensor", _lib.EINVAL)
            self._live.add(h)
            if self._touched is not None:
                self._touch(args, h)
        t = _new(Tensor)
        t._h = h
        t._ctx = self
        t._shape = t._dtype = None
        return t

    def _status(self, fn, *args):
        with self._lock:
            status = fn(self._handle(), *args)
            if self._pending or self._pending_graphs:
                self._drain()
            if status < 0:
                raise _lib.error(status)
            return status

    def _run(self, fn, *args):
        """Runs one libvkt call on tensors that makes none (vkt_assign)."""
        with self._lock:
            if self._h is None:
                raise Error("the context is closed", _lib.ECTX)
            if self._pending or self._pending_graphs:
                self._drain()
            status = fn(*args)
            if status:
                raise _lib.error(status)
            if self._touched is not None:
                self._touch(args)

    @property
    def device_name(self):
        with self._lock:
            return _lib.lib().vkt_ctx_device_name(self._handle()).decode("utf-8", "replace")

    @property
    def max_tensor_bytes(self):
        """The largest tensor in bytes a native kernel can bind; larger ones fall back."""
        with self._lock:
            return _lib.lib().vkt_ctx_max_tensor_bytes(self._handle())

    @property
    def last_gpu_ns(self):
        """GPU time of the last submission in ns, or None without timestamps."""
        with self._lock:
            ns = _lib.lib().vkt_ctx_last_gpu_ns(self._handle())
        return None if ns < 0 else ns

    def flushes_subnormals(self):
        """True when the device's f32 arithmetic flushes subnormals to zero."""
        return bool(self._status(_lib.lib().vkt_ctx_flushes_subnormals))

    def sync(self):
        """Submits recorded work and waits for it."""
        self._status(_lib.lib().vkt_sync)

    def set_native_disable(self, ops):
        """Forces the named ops (names without the prefix, 'all', or '' for none) down the
        fallback path; ops is a comma-separated string or a sequence of names."""
        names = [n.strip() for n in (ops.split(",") if isinstance(ops, str) else ops)]
        # libvkt ignores names it does not know; a typo would silently force nothing.
        known = set(_ops.op_names()) | {"all", ""}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise Error(f"no op named {', '.join(map(repr, unknown))} (names without the vkt_ prefix, or 'all')")
        self._status(_lib.lib().vkt_ctx_set_native_disable, ",".join(n for n in names if n).encode())

    def set_fallback_result(self, where):
        """Where fallback results go: 'device' (uploaded, the default) or 'host'."""
        if where not in _RESIDENCY:
            raise Error(f"fallback result must be 'device' or 'host', got {where!r}")
        self._status(_lib.lib().vkt_ctx_set_fallback_result, _RESIDENCY.index(where))

    def set_profiling(self, on=True):
        """Times every dispatch (Vulkan timestamps, each dispatch alone behind a barrier) while on;
        Context.profile() returns the times. A graph times its dispatches when recorded while on,
        and adds them to the profile at launches while on. A no-op where the queue has no
        timestamps (last_gpu_ns is then None)."""
        if not isinstance(on, (bool, numbers.Integral)):
            raise Error(f"set_profiling takes True or False, got {on!r}")
        self._status(_lib.lib().vkt_ctx_set_profiling, bool(on))
        self._profiling = bool(on)

    @property
    def profiling(self):
        """Whether set_profiling turned per-dispatch timing on."""
        return self._profiling

    def profile(self):
        """The dispatches timed since the last call, oldest first, as ProfileEntry(op, kernel,
        gpu_ns) tuples; they leave the profile (vkt_profile_read)."""
        read = _lib.lib().vkt_profile_read
        with self._lock:
            h = self._handle()
            n = read(h, None, 0)
            entries = (_lib.CProfileEntry * max(n, 1))()
            n = min(read(h, entries, n), n)
            return [ProfileEntry(e.op.decode() if e.op else None, e.kernel.decode() if e.kernel else None,
                                 e.gpu_ns) for e in entries[:n]]

    def record(self):
        """Begins recording a graph: the ops called on this context until the recording ends run
        once per launch instead of now. Use it as `with ctx.record() as g: ...`, then g.launch().

        Only native device work records: an op that would fall back or run on the host, a read to
        the host (numpy(), item(), printing values), a write, a move or a sync raises vkt.Error
        (VKT_EGRAPH, naming the op), and a with block that raises makes no graph (nor does a
        recording in which an op failed). Tensors used or made by the recording are bound to the
        graph: new inputs go into them with Tensor.write, state the step updates with vkt.assign,
        and results are read from them after a launch. One recording at a time per context; ops
        that other threads call on the context meanwhile are recorded too."""
        lib = _lib.lib()
        with self._lock:
            h = self._handle()
            if self._pending or self._pending_graphs:
                self._drain()
            status = lib.vkt_graph_begin(h)
            if status:
                raise _lib.error(status)
            g = _new(Graph)
            g._h = None
            g._ctx = self
            g._state = "recording"
            self._rec = g
            self._touched = set()
        return g

    @property
    def recording(self):
        """Whether a graph is being recorded on this context."""
        return self._rec is not None

    def tensor(self, data, dtype=None):
        """A new device tensor holding a copy of data (a numpy array, a nested list or a number).

        Without dtype, numpy's f32, f64, int32 and uint8 keep their type, bools give u8,
        other integers s32 (when they fit), Python floats f32 (Nx's default)."""
        if isinstance(data, Tensor):
            if data._ctx is self and dtype is not None and dtype_name(dtype) != data.dtype:
                return data.astype(dtype)  # a new tensor already
            if data._ctx is self and data.residency == "device":
                # A copy, not data itself: write and assign change tensors in place.
                return _ops.assign(self.zeros(data.shape, data.dtype), data)
            data = data.numpy()
        arr = _host_array(data, dtype)
        dims, shape = _shape_array(arr.shape)
        lib = _lib.lib()
        return self._call(lib.vkt_tensor_from_host, self._handle(), _CODE[_NAME_OF_NP[arr.dtype]], shape,
                          len(dims), arr.ctypes.data_as(ctypes.c_void_p) if arr.size else None)

    def zeros(self, shape, dtype="f32"):
        """A new tensor of zeros."""
        dims, arr = _shape_array(shape)
        return self._call(_lib.lib().vkt_zeros, self._handle(), _CODE[dtype_name(dtype)], arr, len(dims))

    def full(self, shape, value, dtype="f32"):
        """A new tensor filled with value converted to dtype."""
        dims, arr = _shape_array(shape)
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise Error(f"fill value must be a number, got {value!r}") from None
        return self._call(_lib.lib().vkt_full, self._handle(), _CODE[dtype_name(dtype)], arr, len(dims), value)

    def iota(self, shape, dtype="s32", axis=None):
        """A new tensor counting up along axis, or over the flattened tensor (Nx.iota)."""
        dims, arr = _shape_array(shape)
        ax = _lib.ALL_AXES if axis is None else operator.index(axis)
        return self._call(_lib.lib().vkt_iota, self._handle(), _CODE[dtype_name(dtype)], arr, len(dims), ax)

    def __repr__(self):
        if self._h is None:
            return "<vkt.Context closed>"
        return f"<vkt.Context {self.device_name!r}>"


class Tensor:
    """A tensor on a vkt Context. Made by Context.tensor/zeros/full/iota and by the ops, which
    never change their operands; only Tensor.write and vkt.assign change a tensor in place (the
    inputs and state of a recorded step). Operators follow numpy's broadcasting and Nx's type
    rules, and Python numbers take the other operand's type where it can hold them (Nx)."""

    __slots__ = ("_h", "_ctx", "_shape", "_dtype")
    __array_ufunc__ = None  # numpy defers to Tensor's reflected operators

    def __init__(self, *args, **kwargs):
        raise TypeError("tensors are made by a Context (ctx.tensor, ctx.zeros, ...) or by ops")

    @classmethod
    def _wrap(cls, ctx, h):
        t = object.__new__(cls)
        t._h = h
        t._ctx = ctx
        t._shape = None
        t._dtype = None
        return t

    def __del__(self):
        try:
            h = self._h
        except AttributeError:  # never made: Tensor() refused
            return
        if h is not None:
            self._ctx._pending.append(h)  # atomic; the context frees it under its lock

    def _handle(self):
        if self._h is None or self._ctx._h is None:
            raise Error("the tensor's context is closed", _lib.ECTX)
        return self._h

    @property
    def context(self):
        return self._ctx

    @property
    def shape(self):
        s = self._shape
        if s is None:
            lib = _lib.lib()
            with self._ctx._lock:
                h = self._handle()
                rank = lib.vkt_tensor_rank(h)
                p = lib.vkt_tensor_shape(h)
                s = self._shape = tuple(p[i] for i in range(rank))
        return s

    @property
    def dtype(self):
        """'f32', 'f64', 's32' or 'u8'."""
        d = self._dtype
        if d is None:
            with self._ctx._lock:
                d = self._dtype = _lib.DTYPES[_lib.lib().vkt_tensor_dtype(self._handle())]
        return d

    def _rank(self):
        s = self._shape
        if s is not None:
            return len(s)
        with self._ctx._lock:
            return _lib.F["vkt_tensor_rank"](self._handle())

    @property
    def ndim(self):
        return self._rank()

    rank = ndim

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self):
        return self.size * _NP_OF[self.dtype].itemsize

    @property
    def residency(self):
        """'device' or 'host'."""
        with self._ctx._lock:
            return _RESIDENCY[_lib.lib().vkt_tensor_residency(self._handle())]

    def move(self, where):
        """Moves the tensor's storage to 'device' or 'host' (views share it)."""
        if where not in _RESIDENCY:
            raise Error(f"residency must be 'device' or 'host', got {where!r}")
        with self._ctx._lock:
            # A launch would still read and write the device memory the move gives up.
            if self._h in self._ctx._pins and where != self.residency:
                raise Error("move: a recorded graph binds this tensor, and its launches use the tensor's device "
                            "memory; free the graph first", _lib.EGRAPH)
            status = _lib.lib().vkt_tensor_move(self._handle(), _RESIDENCY.index(where))
            if status:
                raise _lib.error(status)
        return self

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
            raise Error(f"write: data of shape {arr.shape} into a tensor of shape {self.shape}", _lib.ESHAPE)
        if arr.dtype != want:
            if arr.dtype.kind not in ("biuf" if want.kind == "f" else "biu"):
                raise Error(f"write: {arr.dtype} data into a tensor of {self.dtype}; convert it first", _lib.EDTYPE)
            if want.kind != "f" and arr.dtype.kind in "iu" and arr.size:
                info = np.iinfo(want)
                if arr.min() < info.min or arr.max() > info.max:
                    raise Error(f"write: {arr.dtype} values out of the {self.dtype} range", _lib.EDTYPE)
            arr = arr.astype(want)
        arr = _c(arr)
        with self._ctx._lock:
            status = _lib.F["vkt_tensor_write"](self._handle(), arr.ctypes.data_as(ctypes.c_void_p), arr.nbytes)
            if status:
                raise _lib.error(status)

    def numpy(self):
        """A numpy copy of the tensor (a sync point)."""
        out = np.empty(self.shape, _NP_OF[self.dtype])
        with self._ctx._lock:
            status = _lib.lib().vkt_tensor_read(self._handle(), out.ctypes.data_as(ctypes.c_void_p), out.nbytes)
            if status:
                raise _lib.error(status)
        return out

    def __array__(self, dtype=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        if self.size != 1:
            raise Error(f"item() needs a tensor of one element, this one has shape {self.shape}", _lib.ESHAPE)
        return self.numpy().reshape(()).item()

    def __bool__(self):
        if self.size != 1:
            raise Error(f"the truth value of a tensor of shape {self.shape} is ambiguous; use vkt.all or vkt.any",
                        _lib.ESHAPE)
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
        if self._h is None or self._ctx._h is None:
            return "<vkt.Tensor (context closed)>"
        if self._ctx._rec is not None:  # values would need a read, which a recording refuses
            return f"<vkt.Tensor shape={self.shape} dtype={self.dtype} (recording)>"
        body = np.array2string(self.numpy(), separator=", ", prefix="vkt.Tensor(")
        return f"vkt.Tensor({body}, dtype={self.dtype})"

    # Methods and operators are thin: everything goes through the op functions.
    def reshape(self, *shape):
        return _ops.reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape)

    def transpose(self, axes=None):
        return _ops.transpose(self, axes)

    @property
    def T(self):
        return _ops.transpose(self)

    def astype(self, dtype):
        return _ops.as_type(self, dtype)

    def sum(self, axes=None, keep_axes=False):
        return _ops.sum(self, axes, keep_axes)

    def __getitem__(self, index):
        return _ops.index(self, index)

    def __add__(self, o):
        return _ops.add(self, o)

    def __radd__(self, o):
        return _ops.add(o, self)

    def __sub__(self, o):
        return _ops.subtract(self, o)

    def __rsub__(self, o):
        return _ops.subtract(o, self)

    def __mul__(self, o):
        return _ops.multiply(self, o)

    def __rmul__(self, o):
        return _ops.multiply(o, self)

    def __truediv__(self, o):
        return _ops.divide(self, o)

    def __rtruediv__(self, o):
        return _ops.divide(o, self)

    def __pow__(self, o):
        return _ops.pow(self, o)

    def __rpow__(self, o):
        return _ops.pow(o, self)

    def __matmul__(self, o):
        return _ops.matmul(self, o)

    def __rmatmul__(self, o):
        return _ops.matmul(o, self)

    def __neg__(self):
        return _ops.negate(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.abs(self)

    def __invert__(self):
        return _ops.bitwise_not(self)

    def __and__(self, o):
        return _ops.bitwise_and(self, o)

    def __rand__(self, o):
        return _ops.bitwise_and(o, self)

    def __or__(self, o):
        return _ops.bitwise_or(self, o)

    def __ror__(self, o):
        return _ops.bitwise_or(o, self)

    def __xor__(self, o):
        return _ops.bitwise_xor(self, o)

    def __rxor__(self, o):
        return _ops.bitwise_xor(o, self)

    def __lshift__(self, o):
        return _ops.left_shift(self, o)

    def __rlshift__(self, o):
        return _ops.left_shift(o, self)

    def __rshift__(self, o):
        return _ops.right_shift(self, o)

    def __rrshift__(self, o):
        return _ops.right_shift(o, self)

    def __eq__(self, o):
        return _ops.equal(self, o)

    def __ne__(self, o):
        return _ops.not_equal(self, o)

    def __lt__(self, o):
        return _ops.less(self, o)

    def __le__(self, o):
        return _ops.less_equal(self, o)

    def __gt__(self, o):
        return _ops.greater(self, o)

    def __ge__(self, o):
        return _ops.greater_equal(self, o)

    __hash__ = None


class Graph:
    """A recorded step (vkt_graph): ops recorded once by Context.record and replayed by launch()
    with one submission, the Vulkan counterpart of a CUDA graph.

        x = ctx.zeros((batch, 784))
        with ctx.record() as g:
            loss = step(x, labels)       # recorded, not run: no values yet
        for batch in data:
            x.write(batch)               # new inputs go into the bound tensors
            g.launch()                   # one submission; a sync point
            print(loss.item())

    The graph keeps the tensors it binds (its inputs, its results, the state it updates with
    vkt.assign) until it is freed: with the object, by free(), or when its context closes.
    Misuse raises vkt.Error with status VKT_EGRAPH."""

    __slots__ = ("_h", "_ctx", "_state", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("graphs are made by Context.record()")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._state == "recording":
            # A block that raised did not record all of its work: no graph comes of it, and the
            # block's own exception says why.
            self._end(keep=exc_type is None)
        return False

    def end(self):
        """Ends the recording (the with block does it). Raises vkt.Error when a call failed during
        the recording: the graph would lack that call's work, so there is none."""
        self._end(keep=True)

    def _end(self, keep):
        ctx = self._ctx
        lib = _lib.lib()
        with ctx._lock:
            if ctx._rec is not self:
                raise Error(f"the graph is {self._describe()}, not being recorded", _lib.EGRAPH)
            h = ctx._handle()
            # Tensors collected during the recording go now: the graph keeps their memory.
            if ctx._pending or ctx._pending_graphs:
                ctx._drain()
            out = ctypes.c_void_p()
            status = lib.vkt_graph_end(h, ctypes.byref(out))
            touched, ctx._touched, ctx._rec = ctx._touched, None, None
            if not keep:
                lib.vkt_graph_free(out.value)
                self._state = "failed"
                return
            if status:
                self._state = "failed"
                raise _lib.error(status, lib)
            bound = tuple(touched & ctx._live)
            pins = ctx._pins
            for t in bound:
                pins[t] = pins.get(t, 0) + 1
            ctx._graphs[out.value] = bound
            self._h = out.value
            self._state = "ready"

    def _describe(self):
        if self._ctx._h is None:
            return "closed with its context"
        return {"recording": "still being recorded", "failed": "a failed recording",
                "freed": "freed", "ready": "recorded", "closed": "closed with its context"}[self._state]

    def _ready(self):
        """The graph's handle (the context's lock held), or the Error saying why there is none."""
        if self._ctx._h is None:
            raise Error("the graph's context is closed", _lib.ECTX)
        if self._state != "ready" or self._h not in self._ctx._graphs:
            what = self._describe()
            hint = "; leave its with block first" if self._state == "recording" else ""
            raise Error(f"the graph is {what}{hint}", _lib.EGRAPH)
        return self._h

    def launch(self):
        """Runs the recorded ops once, in one submission, and waits for them (a sync point)."""
        ctx = self._ctx
        with ctx._lock:
            h = self._ready()
            if ctx._pending or ctx._pending_graphs:
                ctx._drain()
            status = _lib.F["vkt_graph_launch"](h)
            if status:
                raise _lib.error(status)

    @property
    def dispatches(self):
        """How many dispatches a launch replays."""
        with self._ctx._lock:
            return _lib.F["vkt_graph_dispatches"](self._ready())

    @property
    def levels(self):
        """How many dependency levels a launch runs its dispatches in: one barrier between
        levels, so this is the longest chain of commands that each need the one before."""
        with self._ctx._lock:
            return _lib.F["vkt_graph_levels"](self._ready())

    @property
    def context(self):
        return self._ctx

    @property
    def freed(self):
        """Whether the graph is gone or never came to be: freed, its context closed, or its
        recording failed. False while it is being recorded."""
        if self._state == "recording":
            return False
        return self._state != "ready" or self._ctx._h is None or self._h not in self._ctx._graphs

    def free(self):
        """Frees the graph now, and the tensors only it still kept; a second free is a no-op."""
        ctx = self._ctx
        with ctx._lock:
            if self._state == "recording":
                raise Error("the graph is still being recorded; end it first", _lib.EGRAPH)
            if self._state == "ready" and ctx._h is not None:
                ctx._free_graph(self._h)
            if self._state == "ready":
                self._state = "freed"

    def __del__(self):
        try:
            state, ctx = self._state, self._ctx
        except AttributeError:  # never made: Graph() refused
            return
        if state == "ready" and ctx._h is not None:
            ctx._pending_graphs.append(self._h)  # atomic; the context frees it under its lock

    def __repr__(self):
        if self._state == "ready" and not self.freed:
            return f"<vkt.Graph {self.dispatches} dispatches>"
        return f"<vkt.Graph {self._describe()}>"


@atexit.register
def _close_all():
    # Before the interpreter tears modules down, while libvkt is whole.
    for ctx in list(_open_contexts):
        ctx.close()


from . import _ops  # noqa: E402 - the op functions use Tensor and Context

"""Loading libvkt and declaring its C functions (ctypes, ABI mode).

The library is found, in order: $VKT_LIBRARY; the path meson recorded in
_libpath.py (absolute in the build tree, relative to this package once
installed); the system loader's libvkt.so.0. It is loaded at the first use,
not at import, and after libfbcount when the fbcount package has been imported
(in either order): ctypes binds a library's calls when it loads it, so the
census library must be there first to see libvkt's fallbacks.
"""
import ctypes
import sys
import threading

DTYPES = ("f32", "f64", "s32", "u8")
# vkt.h's VKT_STATUSES(X), in its order (test_abi.py holds the two to each other and to the
# library's vkt_status_name). A table here, not a call: errors are raised before the library loads.
STATUSES = (("VKT_OK", 0), ("VKT_EINVAL", -1), ("VKT_ESHAPE", -2), ("VKT_EAXIS", -3), ("VKT_EDTYPE", -4),
            ("VKT_ENOMEM", -5), ("VKT_ENODEV", -6), ("VKT_EDEVICE", -7), ("VKT_ECTX", -8), ("VKT_EGRAPH", -9))
STATUS_NAMES = {code: name for name, code in STATUSES}
OK, EINVAL, ESHAPE, EAXIS, EDTYPE, ENOMEM, ENODEV, EDEVICE, ECTX, EGRAPH = (code for _, code in STATUSES)
MAX_RANK = 6
MAX_SPATIAL = MAX_RANK - 2
ALL_AXES = -1000

# The op lists of vkt.h (VKT_UNARY_OPS, VKT_BINARY_OPS), in its order.
UNARY_OPS = (
    "negate abs sign floor ceil round exp expm1 log log1p sqrt rsqrt cbrt sin cos tan asin acos atan "
    "sinh cosh tanh asinh acosh atanh sigmoid erf erfc erf_inv is_nan is_infinity logical_not "
    "bitwise_not count_leading_zeros population_count").split()
BINARY_OPS = (
    "add subtract multiply divide pow min max remainder atan2 quotient equal not_equal less "
    "less_equal greater greater_equal logical_and logical_or logical_xor bitwise_and bitwise_or "
    "bitwise_xor left_shift right_shift").split()
REDUCE_OPS = ("sum", "product", "reduce_max", "reduce_min", "all", "any")
WINDOW_OPS = ("window_sum", "window_product", "window_max", "window_min")


class Error(Exception):
    """A libvkt call failed, or its arguments were refused before the call.

    `message` is libvkt's own message (vkt_last_error) or the argument check's,
    `status` the vkt_status code (negative int) and `status_name` its name.
    """

    def __init__(self, message, status=EINVAL):
        super().__init__(message)
        self.message = message
        self.status = status
        self.status_name = STATUS_NAMES.get(status, str(status))


class ConvOpts(ctypes.Structure):
    """vkt_conv_opts."""
    _fields_ = [("strides", ctypes.c_int64 * MAX_SPATIAL),
                ("padding_lo", ctypes.c_int64 * MAX_SPATIAL),
                ("padding_hi", ctypes.c_int64 * MAX_SPATIAL),
                ("input_dilation", ctypes.c_int64 * MAX_SPATIAL),
                ("kernel_dilation", ctypes.c_int64 * MAX_SPATIAL),
                ("feature_group_size", ctypes.c_int64),
                ("batch_group_size", ctypes.c_int64),
                ("has_input_permutation", ctypes.c_bool),
                ("has_kernel_permutation", ctypes.c_bool),
                ("has_output_permutation", ctypes.c_bool),
                ("input_permutation", ctypes.c_int * MAX_RANK),
                ("kernel_permutation", ctypes.c_int * MAX_RANK),
                ("output_permutation", ctypes.c_int * MAX_RANK)]


class WindowOpts(ctypes.Structure):
    """vkt_window_opts."""
    _fields_ = [("strides", ctypes.c_int64 * MAX_RANK),
                ("padding_lo", ctypes.c_int64 * MAX_RANK),
                ("padding_hi", ctypes.c_int64 * MAX_RANK),
                ("window_dilations", ctypes.c_int64 * MAX_RANK)]


class StatsEntry(ctypes.Structure):
    """vkt_stats_entry."""
    _fields_ = [("op", ctypes.c_char_p), ("native", ctypes.c_uint64),
                ("fallback", ctypes.c_uint64), ("host", ctypes.c_uint64)]


class CProfileEntry(ctypes.Structure):
    """vkt_profile_entry (vkt.ProfileEntry is its Python form)."""
    _fields_ = [("op", ctypes.c_char_p), ("kernel", ctypes.c_char_p), ("gpu_ns", ctypes.c_double)]


_P = ctypes.c_void_p
_OUT = ctypes.POINTER(ctypes.c_void_p)
_I64P = ctypes.POINTER(ctypes.c_int64)
_IP = ctypes.POINTER(ctypes.c_int)
_INT = ctypes.c_int
_BOOL = ctypes.c_bool

_SIGNATURES = {
    "vkt_last_error": (ctypes.c_char_p, []),
    "vkt_status_name": (ctypes.c_char_p, [_INT]),
    "vkt_ctx_create": (_INT, [ctypes.c_char_p, _OUT]),
    "vkt_ctx_destroy": (None, [_P]),
    "vkt_ctx_device_name": (ctypes.c_char_p, [_P]),
    "vkt_ctx_max_tensor_bytes": (ctypes.c_uint64, [_P]),
    "vkt_ctx_flushes_subnormals": (_INT, [_P]),
    "vkt_sync": (_INT, [_P]),
    "vkt_ctx_last_gpu_ns": (ctypes.c_double, [_P]),
    "vkt_ctx_set_native_disable": (_INT, [_P, ctypes.c_char_p]),
    "vkt_ctx_set_fallback_result": (_INT, [_P, _INT]),
    "vkt_ctx_set_profiling": (_INT, [_P, _BOOL]),
    "vkt_profile_read": (ctypes.c_size_t, [_P, ctypes.POINTER(CProfileEntry), ctypes.c_size_t]),
    "vkt_graph_begin": (_INT, [_P]),
    "vkt_graph_end": (_INT, [_P, _OUT]),
    "vkt_graph_launch": (_INT, [_P]),
    "vkt_graph_dispatches": (ctypes.c_size_t, [_P]),
    "vkt_graph_levels": (ctypes.c_size_t, [_P]),
    "vkt_graph_free": (None, [_P]),
    "vkt_dtype_size": (ctypes.c_size_t, [_INT]),
    "vkt_dtype_name": (ctypes.c_char_p, [_INT]),
    "vkt_tensor_from_host": (_INT, [_P, _INT, _I64P, _INT, _P, _OUT]),
    "vkt_zeros": (_INT, [_P, _INT, _I64P, _INT, _OUT]),
    "vkt_full": (_INT, [_P, _INT, _I64P, _INT, ctypes.c_double, _OUT]),
    "vkt_iota": (_INT, [_P, _INT, _I64P, _INT, _INT, _OUT]),
    "vkt_tensor_read": (_INT, [_P, _P, ctypes.c_size_t]),
    "vkt_tensor_write": (_INT, [_P, _P, ctypes.c_size_t]),
    "vkt_tensor_move": (_INT, [_P, _INT]),
    "vkt_tensor_free": (None, [_P]),
    "vkt_tensor_dtype": (_INT, [_P]),
    "vkt_tensor_rank": (_INT, [_P]),
    "vkt_tensor_shape": (_I64P, [_P]),
    "vkt_tensor_numel": (ctypes.c_size_t, [_P]),
    "vkt_tensor_nbytes": (ctypes.c_size_t, [_P]),
    "vkt_tensor_residency": (_INT, [_P]),
    "vkt_stats": (ctypes.c_size_t, [ctypes.POINTER(StatsEntry), ctypes.c_size_t]),
    "vkt_stats_reset": (None, []),
    "vkt_op_count": (ctypes.c_size_t, []),
    "vkt_op_name": (ctypes.c_char_p, [ctypes.c_size_t]),
    "vkt_op_support": (_INT, [ctypes.c_size_t, _INT, ctypes.POINTER(ctypes.c_char_p)]),
    "vkt_select": (_INT, [_P, _P, _P, _OUT]),
    "vkt_clip": (_INT, [_P, _P, _P, _OUT]),
    "vkt_as_type": (_INT, [_P, _INT, _OUT]),
    "vkt_argmax": (_INT, [_P, _INT, _BOOL, _OUT]),
    "vkt_argmin": (_INT, [_P, _INT, _BOOL, _OUT]),
    "vkt_reshape": (_INT, [_P, _I64P, _INT, _OUT]),
    "vkt_transpose": (_INT, [_P, _IP, _OUT]),
    "vkt_broadcast": (_INT, [_P, _I64P, _INT, _IP, _OUT]),
    "vkt_slice": (_INT, [_P, _I64P, _I64P, _I64P, _OUT]),
    "vkt_pad": (_INT, [_P, _P, _I64P, _I64P, _I64P, _OUT]),
    "vkt_reverse": (_INT, [_P, _IP, _INT, _OUT]),
    "vkt_concatenate": (_INT, [ctypes.POINTER(ctypes.c_void_p), _INT, _INT, _OUT]),
    "vkt_assign": (_INT, [_P, _P]),
    "vkt_gather": (_INT, [_P, _P, _IP, _OUT]),
    "vkt_dot": (_INT, [_P, _IP, _IP, _P, _IP, _IP, _INT, _INT, _OUT]),
    "vkt_sort": (_INT, [_P, _INT, _BOOL, _OUT]),
    "vkt_argsort": (_INT, [_P, _INT, _BOOL, _OUT]),
    "vkt_conv": (_INT, [_P, _P, ctypes.POINTER(ConvOpts), _OUT]),
    "vkt_window_scatter_max": (_INT, [_P, _P, _P, _I64P, ctypes.POINTER(WindowOpts), _OUT]),
    "vkt_window_scatter_min": (_INT, [_P, _P, _P, _I64P, ctypes.POINTER(WindowOpts), _OUT]),
}
for _name in UNARY_OPS:
    _SIGNATURES["vkt_" + _name] = (_INT, [_P, _OUT])
for _name in BINARY_OPS:
    _SIGNATURES["vkt_" + _name] = (_INT, [_P, _P, _OUT])
for _name in REDUCE_OPS:
    _SIGNATURES["vkt_" + _name] = (_INT, [_P, _IP, _INT, _BOOL, _OUT])
for _name in WINDOW_OPS:
    _SIGNATURES["vkt_" + _name] = (_INT, [_P, _I64P, ctypes.POINTER(WindowOpts), _OUT])

_lock = threading.Lock()
_lib = None
_path = None
# The declared functions by name, filled when the library loads: an op has a tensor, hence a
# context, hence a loaded library, so op wrappers look their function up here directly.
F = {}


def _load():
    # With the fbcount package imported, libfbcount goes first: ctypes binds a library's calls
    # when it loads it, and libvkt's fallbacks must reach the census's host_result.
    fb = sys.modules.get("fbcount")
    if fb is not None:
        try:
            fb._lib.lib()
        except Exception:  # noqa: BLE001 - fbcount reports its own failure when it is used
            pass
    from . import _libpath
    try:
        lib, path = _libpath.load("VKT_LIBRARY", "libvkt.so.0")
    except OSError as e:
        raise Error(f"libvkt not found: {e}") from None
    for name, (res, args) in _SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise Error(f"{path} has no {name}: not the libvkt this package was built for") from None
        fn.restype = res
        fn.argtypes = args
        F[name] = fn
    return lib, path


def lib():
    """The loaded libvkt (loaded at the first call)."""
    global _lib, _path
    if _lib is None:
        with _lock:
            if _lib is None:
                _lib, _path = _load()
    return _lib


def library_path():
    """Path of the libvkt this package uses (loads it)."""
    lib()
    return _path


def error(status, lib_=None):
    """The Error for a failed call's status, with vkt_last_error's message."""
    msg = (lib_ or lib()).vkt_last_error()
    msg = msg.decode("utf-8", "replace") if msg else ""
    return Error(msg or STATUS_NAMES.get(status, f"status {status}"), status)

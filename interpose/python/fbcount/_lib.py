"""Loading libfbcount and declaring its in-process API (fbcount.h) through ctypes.

A libfbcount already in the process (preloaded by `fbcount run` or LD_PRELOAD, or
linked into the program) is the one used. Otherwise it is loaded, RTLD_GLOBAL so
that a backend loaded afterwards calls its host_result, from $FBCOUNT_LIBRARY,
the path meson recorded in _libpath.py, or the system loader's libfbcount.so.
"""
import ctypes
import os
import threading


class Error(Exception):
    """The census cannot be taken as asked (no libfbcount, a scope misused, ...)."""


_P = ctypes.c_void_p
_U64 = ctypes.c_uint64
_SIGNATURES = {
    "fbcount_scope_begin": (None, []),
    "fbcount_scope_end": (_P, []),
    "fbcount_census_total": (_U64, [_P]),
    "fbcount_census_bytes": (_U64, [_P]),
    "fbcount_census_host_total": (_U64, [_P]),
    "fbcount_census_op_count": (_U64, [_P, ctypes.c_char_p]),
    "fbcount_census_op_bytes": (_U64, [_P, ctypes.c_char_p]),
    "fbcount_census_host_op_count": (_U64, [_P, ctypes.c_char_p]),
    "fbcount_census_format_buf": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_size_t]),
    "fbcount_census_free": (None, [_P]),
    "fbcount_dump": (ctypes.c_int, [ctypes.c_char_p]),
}
# Newer parts of the API: used when the library has them.
_OPTIONAL = {
    "fbcount_census_json": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_size_t]),
    "fbcount_scope_begin_all": (ctypes.c_int, []),
    "fbcount_scope_end_all": (_P, []),
}

_lock = threading.Lock()
_lib = None
_path = None
_loaded_here = False
_order_problem = None


def _declare(lib, path):
    for name, (res, args) in _SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise Error(f"{path} has no {name}: not a libfbcount with the in-process API") from None
        fn.restype, fn.argtypes = res, args
    for name, (res, args) in _OPTIONAL.items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype, fn.argtypes = res, args


def _load():
    process = ctypes.CDLL(None)
    if hasattr(process, "fbcount_scope_begin"):
        _declare(process, "the process")
        return process, "(already in the process)", False
    from . import _libpath
    try:
        lib, path = _libpath.load("FBCOUNT_LIBRARY", "libfbcount.so", ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise Error(f"libfbcount not found: {e}") from None
    _declare(lib, path)
    return lib, path, True


def lib():
    """The libfbcount in use (found and loaded at the first call)."""
    global _lib, _path, _loaded_here, _order_problem
    if _lib is None:
        with _lock:
            if _lib is None:
                lib_, _path, _loaded_here = _load()
                _order_problem = _backends_loaded_before(_path) if _loaded_here else None
                _lib = lib_
    return _lib


def library_path():
    lib()
    return _path


def has(name):
    """True when the library has the optional function name."""
    return getattr(lib(), name, None) is not None


class _PhdrInfo(ctypes.Structure):
    _fields_ = [("addr", ctypes.c_size_t), ("name", ctypes.c_char_p), ("phdr", ctypes.c_void_p),
                ("phnum", ctypes.c_uint16)]


class _DlInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p), ("sname", ctypes.c_char_p),
                ("saddr", ctypes.c_void_p)]


def _modules():
    """The loaded objects' paths, in load order (dl_iterate_phdr's order)."""
    names = []
    cb_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_PhdrInfo), ctypes.c_size_t, ctypes.c_void_p)

    def visit(info, size, data):
        names.append((info.contents.name or b"").decode("utf-8", "replace"))
        return 0

    libc = ctypes.CDLL(None)
    libc.dl_iterate_phdr.argtypes = [cb_type, ctypes.c_void_p]
    libc.dl_iterate_phdr(cb_type(visit), None)
    return names


def _defines_host_result(path):
    try:
        handle = ctypes.CDLL(path, mode=os.RTLD_NOLOAD)
        addr = ctypes.cast(handle.host_result, ctypes.c_void_p).value
    except (OSError, AttributeError):
        return False
    info = _DlInfo()
    libc = ctypes.CDLL(None)
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    if not libc.dladdr(addr, ctypes.byref(info)) or not info.fname:
        return False
    return os.path.realpath(info.fname.decode()) == os.path.realpath(path)


def _backends_loaded_before(path):
    """A backend (a library defining host_result) loaded before libfbcount binds its calls to
    its own host_result (ctypes loads libraries with RTLD_NOW), so no census would see its
    fallbacks: the message saying so, or None."""
    mine = os.path.realpath(path)
    mods = _modules()
    idx = next((i for i, m in enumerate(mods) if m and os.path.realpath(m) == mine), None)
    if idx is None:
        return None
    early = [m for m in mods[:idx] if m and _defines_host_result(m)]
    if not early:
        return None
    return (f"{', '.join(early)} was loaded before libfbcount, so its fallbacks bypass the census: "
            "import fbcount before the backend's first use (for vkt: before the first vkt.Context), "
            "or run under `fbcount run`")


def check_order():
    lib()
    if _order_problem:
        raise Error(_order_problem)

"""Loading libfbcount and declaring its in-process API (fbcount.h) through ctypes.

A libfbcount already in the process (preloaded by `fbcount run` or LD_PRELOAD, or
linked into the program) is the one used. Otherwise it is loaded, RTLD_GLOBAL so
that a backend loaded afterwards calls its exits, from $FBCOUNT_LIBRARY, the path
meson recorded in _libpath.py, or the system loader's libfbcount.so; a backend
loaded before it has its calls pointed at the shim by the shim itself.
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
    # libfbcount's rules for names and sizes (rules/opname.h, units.h), shown as it shows them.
    "fbcount_format_bytes": (ctypes.c_char_p, [_U64, ctypes.c_char_p, ctypes.c_size_t]),
    "fbcount_op_short": (ctypes.c_char_p, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                           ctypes.c_size_t]),
    "fbcount_op_named": (ctypes.c_bool, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]),
    "fbcount_op_closest": (ctypes.c_size_t, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p),
                                             ctypes.c_size_t, ctypes.c_char_p,
                                             ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]),
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
    global _lib, _path, _loaded_here
    if _lib is None:
        with _lock:
            if _lib is None:
                lib_, _path, _loaded_here = _load()
                _lib = lib_
    return _lib


def library_path():
    lib()
    return _path


def has(name):
    """True when the library has the optional function name."""
    return getattr(lib(), name, None) is not None

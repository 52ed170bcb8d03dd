"""The vkt package's ctypes declarations against vkt.h and the built library: struct layouts (as
abi-layout prints them), the status codes, dtypes and constants, and the parameters of every
function. A field at another offset or a missing argument would pass garbage to libvkt without
any error; a status the package does not know would be raised under the wrong name."""
import ctypes
import json
import re
import subprocess

import numpy as np
import pytest
from conftest import path_of

import vkt
from vkt import _lib

STRUCTS = {"vkt_conv_opts": _lib.ConvOpts, "vkt_window_opts": _lib.WindowOpts,
           "vkt_stats_entry": _lib.StatsEntry, "vkt_profile_entry": _lib.CProfileEntry}
# The fallback exit (libvkt calls it, the census shim wraps it) and the clock the shim charges a
# fallback from: no Python caller has a use for them.
NOT_BOUND = {"host_result", "host_resident_op", "vkt_fallback_started_ns"}


@pytest.fixture(scope="module")
def layout():
    return json.loads(subprocess.run([path_of("ABI_LAYOUT")], check=True, capture_output=True, text=True).stdout)


@pytest.fixture(scope="module")
def header():
    with open(path_of("VKT_H")) as f:
        return f.read()


def macro_body(header, name):
    """The text of a multi-line #define NAME(X), continuation lines joined."""
    m = re.search(r"^#define " + name + r"\(X\)((?:[^\n]*\\\n)*[^\n]*)", header, re.M)
    assert m, f"vkt.h has no #define {name}(X)"
    return m.group(1).replace("\\\n", " ")


def header_statuses(header):
    return [(n, int(v)) for n, v in re.findall(r"X\((\w+),\s*(-?\d+)\)", macro_body(header, "VKT_STATUSES"))]


@pytest.mark.parametrize("name", sorted(STRUCTS))
def test_struct_layout(layout, name):
    c = layout[name]
    py = STRUCTS[name]
    assert ctypes.sizeof(py) == c.pop("size")
    assert {f: getattr(py, f).offset for f, _ in py._fields_} == c


def test_statuses_match_the_header_and_the_library(header):
    statuses = header_statuses(header)
    assert len(statuses) >= 10 and ("VKT_OK", 0) in statuses and ("VKT_EGRAPH", -9) in statuses
    # Every name and value, in the header's order, and nothing else.
    assert list(_lib.STATUSES) == statuses
    lib = _lib.lib()
    for name, code in statuses:
        assert lib.vkt_status_name(code).decode() == name
        assert getattr(vkt, name[4:]) == code  # vkt.EGRAPH, ...
        assert vkt.Error("x", code).status_name == name
    unknown = min(code for _, code in statuses) - 1
    assert lib.vkt_status_name(unknown).decode() not in dict(statuses)


def test_constants_and_dtypes_match_the_header_and_the_library(header):
    assert f"#define VKT_MAX_RANK {_lib.MAX_RANK}" in header
    assert f"#define VKT_ALL_AXES ({_lib.ALL_AXES})" in header
    enum = re.search(r"typedef enum vkt_dtype \{(.*?)\}", header).group(1)
    assert re.findall(r"VKT_(\w+) = (\d+)", enum) == [(d.upper(), str(i)) for i, d in enumerate(_lib.DTYPES)]
    lib = _lib.lib()
    for i, d in enumerate(_lib.DTYPES):
        assert lib.vkt_dtype_name(i).decode() == d
        assert lib.vkt_dtype_size(i) == vkt.numpy_dtype(d).itemsize == np.dtype(vkt.numpy_dtype(d)).itemsize
    assert lib.vkt_dtype_name(len(_lib.DTYPES)) is None


def header_functions(header):
    """{name: number of parameters} of every function vkt.h declares, the X-macro ops included."""
    text = re.sub(r"/\*.*?\*/", "", header, flags=re.S)
    funcs = {}
    for name, params in re.findall(r"VKT_API [\w\s\*]*?\b(\w+)\(([^)]*)\);", text):
        if not name.startswith("VKT_"):
            funcs[name] = 0 if params.strip() == "void" else params.count(",") + 1
    for macro, arity in (("VKT_UNARY_OPS", 2), ("VKT_BINARY_OPS", 3)):
        for op in re.findall(r"X\((\w+)\)", macro_body(header, macro)):
            funcs["vkt_" + op] = arity
    return funcs


def test_every_function_of_vkt_h_is_declared_with_its_parameters(header):
    funcs = header_functions(header)
    assert len(funcs) > 100 and "vkt_graph_launch" in funcs and "vkt_negate" in funcs
    declared = _lib._SIGNATURES
    missing = sorted(set(funcs) - set(declared) - NOT_BOUND)
    assert not missing, f"functions of vkt.h the vkt package does not declare: {missing}"
    assert not set(declared) - set(funcs), "the package declares functions vkt.h does not have"
    wrong = {n: (len(declared[n][1]), funcs[n]) for n in declared if len(declared[n][1]) != funcs[n]}
    assert not wrong, f"argument counts (package, vkt.h) that differ: {wrong}"
    _lib.lib()
    assert set(_lib.F) == set(declared)

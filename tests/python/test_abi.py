"""The vkt package's ctypes structs against the C layout of vkt.h (abi-layout prints it): a
field at another offset would pass garbage options to libvkt without any error."""
import ctypes
import json
import subprocess

import pytest
from conftest import path_of

from vkt import _lib

STRUCTS = {"vkt_conv_opts": _lib.ConvOpts, "vkt_window_opts": _lib.WindowOpts,
           "vkt_stats_entry": _lib.StatsEntry}


@pytest.fixture(scope="module")
def layout():
    return json.loads(subprocess.run([path_of("ABI_LAYOUT")], check=True, capture_output=True, text=True).stdout)


@pytest.mark.parametrize("name", sorted(STRUCTS))
def test_struct_layout(layout, name):
    c = layout[name]
    py = STRUCTS[name]
    assert ctypes.sizeof(py) == c.pop("size")
    assert {f: getattr(py, f).offset for f, _ in py._fields_} == c


def test_constants_match_the_header():
    header = open(path_of("VKT_H")).read()
    assert f"#define VKT_MAX_RANK {_lib.MAX_RANK}" in header
    assert f"#define VKT_ALL_AXES ({_lib.ALL_AXES})" in header
    for code, name in _lib.STATUS_NAMES.items():
        assert f"{name} = {code}," in header or (code == 0 and "VKT_OK = 0" in header)
    for i, d in enumerate(_lib.DTYPES):
        assert f"VKT_{d.upper()} = {i}" in header

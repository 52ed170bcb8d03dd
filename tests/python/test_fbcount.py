"""The fbcount package over libfbcount's in-process API: exact counts and bytes of forced
fallbacks, ops and the Python lines that called them (the site is the caller's line, not a
frame inside vkt), nesting, reading inside a block, threads, dumps, and ctypes CDLL and
PyDLL callers of libvkt. Runs with libfbcount loaded by the package and again preloaded."""
import ctypes
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from conftest import native_disabled, path_of

import fbcount
import vkt

HERE = os.path.basename(__file__)


def line_of(tag):
    """The line of this file that carries the comment '# site: tag'."""
    with open(__file__) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# site: {tag}"):
                return n
    raise AssertionError(f"no line tagged {tag}")


@pytest.fixture
def mats(ctx):
    a = ctx.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    b = ctx.tensor(np.ones((4, 5), np.float32))
    return a, b


def test_counts_are_exact(ctx, mats):
    a, b = mats
    with native_disabled(ctx, "dot,sort"):
        with fbcount.count() as c:
            for _ in range(3):
                vkt.dot(a, b)
            vkt.sort(a)
            vkt.sort(b, axis=1)
            vkt.add(a, a)  # native: not counted
    assert c.total == 5
    assert c.bytes == 3 * 3 * 5 * 4 + 3 * 4 * 4 + 4 * 5 * 4
    assert c.host_total == 0
    assert c.ns > 0 and c.ops["vkt_sort"] == fbcount.OpCount(2, 48 + 80, 80)


def test_a_clean_block_counts_nothing(ctx, mats):
    a, b = mats
    with fbcount.count() as c:
        vkt.dot(a, b).numpy()
    assert (c.total, c.bytes, c.host_total) == (0, 0, 0)
    assert c.ops == {} and c.sites == []
    assert str(c).startswith("0 fallbacks (0 B left the GPU), 0 host-resident ops")


def test_ops_and_sites_name_the_calling_line(ctx, mats):
    a, b = mats
    with native_disabled(ctx, "dot,sort"):
        with fbcount.count() as c:
            for _ in range(2):
                vkt.dot(a, b)  # site: dot
            a @ b  # site: matmul
            vkt.sort(a)  # site: sort
    assert c.ops == {"vkt_dot": fbcount.OpCount(3, 3 * 60, 60), "vkt_sort": fbcount.OpCount(1, 48, 48)}
    where = {(s.op, s.where, s.count) for s in c.sites}
    assert where == {("vkt_dot", f"{HERE}:{line_of('dot')}", 2), ("vkt_dot", f"{HERE}:{line_of('matmul')}", 1),
                     ("vkt_sort", f"{HERE}:{line_of('sort')}", 1)}
    assert all(s.function == "test_ops_and_sites_name_the_calling_line" for s in c.sites)
    text = str(c)
    assert text.startswith("4 fallbacks (228 B left the GPU), 0 host-resident ops")
    assert "vkt_dot" in text and f"{HERE}:{line_of('dot')}" in text and "vkt_sort" in text


def test_host_resident_ops_are_counted(ctx, mats):
    a, b = mats
    with native_disabled(ctx, "dot"):
        ctx.set_fallback_result("host")
        try:
            with fbcount.count() as c:
                d = vkt.dot(a, b)
                vkt.exp(d)  # runs on the host: its input is there
        finally:
            ctx.set_fallback_result("device")
    assert (c.total, c.host_total) == (1, 1)
    assert c.host_ops["vkt_exp"].count == 1
    assert "host-resident" in str(c)


def test_counts_nest(ctx, mats):
    a, b = mats
    with native_disabled(ctx, "dot"):
        with fbcount.count() as outer:
            vkt.dot(a, b)
            with fbcount.count() as inner:
                vkt.dot(a, b)
                vkt.dot(a, b)
    assert (outer.total, inner.total) == (3, 2)


def test_reading_inside_the_block(ctx, mats):
    a, b = mats
    with native_disabled(ctx, "dot"):
        with fbcount.count() as c:
            vkt.dot(a, b)
            assert c.total == 1
            vkt.dot(a, b)
            assert c.total == 2 and c.ops["vkt_dot"].count == 2
            vkt.dot(a, b)
    assert c.total == 3 and c.ops["vkt_dot"] == fbcount.OpCount(3, 180, 60)
    assert sum(s.count for s in c.sites) == 3


def test_misuse_is_an_error(ctx):
    c = fbcount.count()
    with c:
        pass
    with pytest.raises(fbcount.Error):
        c.__enter__()
    outer = fbcount.count().__enter__()
    inner = fbcount.count().__enter__()
    with pytest.raises(fbcount.Error, match="innermost"):
        outer.__exit__(None, None, None)
    inner.__exit__(None, None, None)
    outer.__exit__(None, None, None)
    other = fbcount.count().__enter__()
    errors = []
    t = threading.Thread(target=lambda: errors.append(pytest.raises(fbcount.Error, other.__exit__, None, None,
                                                                    None)))
    t.start()
    t.join(30)
    assert errors
    other.__exit__(None, None, None)


def _fall_back_on_a_thread(ctx, a, b, started=None, go=None):
    def work():
        if started:
            started.set()
            go.wait(30)
        vkt.dot(a, b)
    t = threading.Thread(target=work)
    t.start()
    return t


def test_a_count_sees_its_own_thread_only(ctx, mats):
    a, b = mats
    with native_disabled(ctx, "dot"):
        with fbcount.count() as c:
            _fall_back_on_a_thread(ctx, a, b).join(30)
    assert c.total == 0


def test_all_threads(ctx, mats):
    a, b = mats
    with native_disabled(ctx, "dot"):
        with fbcount.count(all_threads=True) as c:
            threads = [_fall_back_on_a_thread(ctx, a, b) for _ in range(3)]
            for t in threads:
                t.join(30)
            vkt.dot(a, b)
    assert c.total == 4 and c.ops["vkt_dot"].count == 4


def test_all_threads_counts_nest_and_read_inside(ctx, mats):
    a, b = mats
    with native_disabled(ctx, "dot"):
        with fbcount.count(all_threads=True) as outer:
            _fall_back_on_a_thread(ctx, a, b).join(30)
            assert outer.total == 1  # read inside the block
            with fbcount.count(all_threads=True) as inner:
                _fall_back_on_a_thread(ctx, a, b).join(30)
                vkt.dot(a, b)
                assert inner.total == 2
            with pytest.raises(fbcount.Error, match="innermost"):
                with fbcount.count(all_threads=True) as third:
                    outer.__exit__(None, None, None)  # refused: third is open inside it
            vkt.dot(a, b)
    assert (outer.total, inner.total, third.total) == (4, 2, 0)


def test_repr_and_short_names(ctx, mats):
    a, b = mats
    with native_disabled(ctx, "dot"):
        with fbcount.count() as c:
            vkt.dot(a, b)
    assert repr(c) == "<fbcount.Census 1 fallback, 60 B, 0 host-resident ops>"
    assert str(c).startswith("1 fallback (60 B left the GPU), 0 host-resident ops")
    assert fbcount.op_named("dot", "vkt_dot") and fbcount.op_named("vkt_dot", "vkt_dot")
    assert fbcount.op_named("vkt_dot", "dot") and not fbcount.op_named("do", "vkt_dot")
    assert not fbcount.op_named("my_dot", "vkt_dot", prefixes=["vkt_", "my_"])
    assert fbcount.short_name("vkt_window_scatter_max") == "window_scatter_max"
    assert fbcount.short_name("vkt_") == "vkt_"


def test_names_and_sizes_are_libfbcounts():
    """The package shows sizes and matches names by libfbcount's rules, not copies of its own:
    three figures from 10 of a unit up (a copy with one decimal says "11.8 MiB"), and closest
    names by edit distance with case ignored (difflib would offer "window_scatter_max" for
    "window_max" and nothing for "DOT")."""
    assert fbcount.format_bytes(60) == "60 B"
    assert fbcount.format_bytes(4096) == "4.0 KiB"
    assert fbcount.format_bytes(12_345_678) == "12 MiB"
    known = ["vkt_dot", "vkt_sort", "vkt_window_scatter_max"]
    assert fbcount.closest("srot", known) == ["vkt_sort"]
    assert fbcount.closest("DOT", known) == ["vkt_dot"]
    assert fbcount.closest("window_max", known) == []
    assert fbcount.closest("dto", known) == ["vkt_dot"]
    assert fbcount.closest("my_sort", ["my_sort", "vkt_sort"], prefixes=["my_"]) == ["my_sort"]
    assert fbcount.short_name("my_dot", prefixes=["vkt_", "my_"]) == "dot"


def test_op_prefix_is_read_as_it_is_now(monkeypatch):
    """Without prefixes given, FBCOUNT_OP_PREFIX as the process has it at the call (libfbcount
    reads the environment the package sets)."""
    monkeypatch.setenv("FBCOUNT_OP_PREFIX", " my_ , ggml_")
    assert fbcount.short_name("ggml_mul_mat") == "mul_mat"
    assert fbcount.short_name("vkt_dot") == "vkt_dot"
    assert fbcount.op_named("dot", "my_dot")
    monkeypatch.setenv("FBCOUNT_OP_PREFIX", ",,")  # no name: the default
    assert fbcount.short_name("vkt_dot") == "dot"


def test_dump_writes_what_the_process_counted(tmp_path, ctx, mats):
    """Preloaded, the process census records: dump() writes it. Loaded by this package, it does
    not: dump() refuses to write a census of zero for what it never counted (the suite runs
    both ways; tests/census checks the counts against libvkt's own)."""
    a, b = mats
    with native_disabled(ctx, "dot"):
        vkt.dot(a, b)
    path = tmp_path / "census.json"
    if "libfbcount" not in os.environ.get("LD_PRELOAD", ""):
        with pytest.raises(fbcount.Error):
            fbcount.dump(path)
        assert not path.exists()
        return
    fbcount.dump(path)
    doc = json.loads(path.read_text())
    assert doc["schema"] == "fbcount/1" and doc["reason"] == "api"
    assert doc["process"]["pid"] == os.getpid()
    assert doc["total"]["fallbacks"] >= 1 and doc["backend"]["fallback"] >= 1
    with pytest.raises(fbcount.Error):
        fbcount.dump(tmp_path / "no-such-dir" / "x.json")


@pytest.mark.parametrize("loader", [ctypes.CDLL, ctypes.PyDLL], ids=["CDLL", "PyDLL"])
def test_ctypes_callers(ctx, loader):
    """A program calling libvkt through ctypes itself, releasing the GIL (CDLL) or holding it
    (PyDLL) during the call: counts exact, the site its own line."""
    lib = loader(vkt.library_path())
    P = ctypes.c_void_p
    lib.vkt_ctx_create.argtypes = [ctypes.c_char_p, ctypes.POINTER(P)]
    lib.vkt_ctx_set_native_disable.argtypes = [P, ctypes.c_char_p]
    lib.vkt_tensor_from_host.argtypes = [P, ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_int, P,
                                         ctypes.POINTER(P)]
    lib.vkt_sort.argtypes = [P, ctypes.c_int, ctypes.c_bool, ctypes.POINTER(P)]
    lib.vkt_tensor_free.argtypes = [P]
    lib.vkt_ctx_destroy.argtypes = [P]
    h, x, out = P(), P(), P()
    assert lib.vkt_ctx_create(None, ctypes.byref(h)) == 0
    lib.vkt_ctx_set_native_disable(h, b"sort")
    data = np.arange(8, dtype=np.float32)[::-1].copy()
    shape = (ctypes.c_int64 * 1)(8)
    assert lib.vkt_tensor_from_host(h, 0, shape, 1, data.ctypes.data, ctypes.byref(x)) == 0
    with fbcount.count() as c:
        for _ in range(2):
            assert lib.vkt_sort(x, 0, False, ctypes.byref(out)) == 0  # site: ctypes
            lib.vkt_tensor_free(out)
    lib.vkt_tensor_free(x)
    lib.vkt_ctx_destroy(h)
    assert (c.total, c.bytes) == (2, 64)
    assert [(s.op, s.where, s.count) for s in c.sites] == [("vkt_sort", f"{HERE}:{line_of('ctypes')}", 2)]


LATE = """
import numpy as np, vkt
ctx = vkt.Context()                      # libvkt loads before libfbcount
ctx.set_native_disable("dot")
a = ctx.tensor(np.ones((2, 2), np.float32))
import fbcount
try:
    with fbcount.count() as c:
        vkt.dot(a, a)
    print("counted", c.total)
except fbcount.Error as e:
    print("refused", e)
"""


@pytest.mark.parametrize("preload", [False, True], ids=["imported-late", "preloaded"])
def test_a_backend_loaded_before_the_census_is_counted(preload):
    """libfbcount loaded after libvkt points the calls libvkt already bound at itself."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    if preload:
        env["LD_PRELOAD"] = path_of("SHIM")
    p = subprocess.run([sys.executable, "-c", LATE], env=env, capture_output=True, text=True, timeout=120)
    assert p.stdout.strip() == "counted 1", p.stdout + p.stderr

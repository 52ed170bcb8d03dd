"""vkt's contexts and tensors: conversions to and from numpy, metadata, lifetime (tensors
freed with their Python objects, a closed context's tensors refused rather than touched),
errors, and use from several threads."""
import ast
import gc
import importlib.metadata
import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest
from conftest import DTYPES, NP, random

import vkt
from vkt import _vkt


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 3), (1, 2, 1, 3, 1, 2)])
def test_round_trip(ctx, rng, dtype, shape):
    x = random(rng, dtype, shape)
    t = ctx.tensor(x)
    assert t.shape == shape and t.dtype == dtype and t.ndim == len(shape)
    assert t.size == x.size and t.nbytes == x.nbytes
    y = t.numpy()
    assert y.dtype == NP[dtype] and y.shape == shape
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(np.asarray(t), x)


def test_non_contiguous_and_python_input(ctx):
    x = np.arange(24, dtype=np.float64).reshape(4, 6)[:, ::2]
    np.testing.assert_array_equal(ctx.tensor(x).numpy(), x)
    assert ctx.tensor([[1.5, 2.5]]).dtype == "f32"       # Python floats: Nx's default f32
    assert ctx.tensor([1, 2, 3]).dtype == "s32"          # Python ints: s32
    assert ctx.tensor([True, False]).dtype == "u8"       # bools: u8
    assert ctx.tensor(np.arange(3)).dtype == "s32"       # int64 that fits: s32
    assert ctx.tensor(np.ones(2, np.float16)).dtype == "f32"
    assert ctx.tensor(2.5).shape == ()
    assert ctx.tensor([1, 2], dtype="f64").dtype == "f64"
    assert ctx.tensor(np.ones(3), dtype=np.uint8).dtype == "u8"
    assert ctx.tensor(1).item() == 1 and float(ctx.tensor(2.0)) == 2.0 and int(ctx.tensor(3)) == 3
    assert ctx.tensor([[1, 2]]).tolist() == [[1, 2]]
    assert bool(ctx.tensor([1])) and not bool(ctx.tensor(0))


@pytest.mark.parametrize("bad", [np.array([1 + 2j]), np.array(["a"]), np.array([2**40]), {"a": 1},
                                 np.zeros((1,) * 7, np.float32)])
def test_bad_data_is_refused(ctx, bad):
    with pytest.raises(vkt.Error):
        ctx.tensor(bad)


def test_creation(ctx):
    np.testing.assert_array_equal(ctx.zeros((2, 3)).numpy(), np.zeros((2, 3), np.float32))
    f = ctx.full((4,), 7, "u8")
    assert f.dtype == "u8" and f.numpy().tolist() == [7] * 4
    np.testing.assert_array_equal(ctx.iota((2, 3)).numpy(), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(ctx.iota((2, 3), "f32", axis=1).numpy(), np.tile(np.arange(3.0), (2, 1)))
    assert ctx.iota(5).dtype == "s32"
    with pytest.raises(vkt.Error):
        ctx.zeros((2, -1))
    with pytest.raises(vkt.Error):
        ctx.full((2,), "x")
    with pytest.raises(vkt.Error):
        ctx.zeros((2,), "c64")
    with pytest.raises(vkt.Error):
        ctx.iota((2, 3), axis=4)


def test_tensor_of_a_tensor_is_a_copy(ctx):
    src = ctx.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    for dtype in (None, "f32"):
        dup = ctx.tensor(src, dtype)
        assert dup is not src and dup.dtype == "f32" and dup.shape == (2, 3)
        dup.write(np.zeros((2, 3), np.float32))
        np.testing.assert_array_equal(src.numpy(), np.arange(6).reshape(2, 3))
    assert ctx.tensor(src, "s32").numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    src.move("host")
    dup = ctx.tensor(src)
    assert dup.residency == "device" and dup.numpy().tolist() == src.numpy().tolist()


def test_context_properties(ctx):
    assert isinstance(ctx.device_name, str) and ctx.device_name
    assert ctx.max_tensor_bytes > 0
    flush = ctx.flushes_subnormals()
    assert isinstance(flush, bool)
    # The property says what the device's own f32 add does to a subnormal.
    tiny = np.array([2.0 ** -140, 0.0], np.float32)
    got = (ctx.tensor(tiny) + ctx.tensor(np.zeros(2, np.float32))).numpy()
    assert (got[0] == 0) == flush
    ctx.sync()
    # A queue with timestamps times its submissions and profiles dispatches; one without
    # does neither.
    ctx.set_profiling(True)
    (ctx.tensor([1.0]) + 1).numpy()
    timed, entries = ctx.last_gpu_ns, ctx.profile()
    ctx.set_profiling(False)
    assert (timed is None) == (entries == [])
    assert timed is None or timed > 0
    assert ctx.device_name in repr(ctx)
    with pytest.raises(vkt.Error):
        ctx.set_fallback_result("gpu")
    with pytest.raises(vkt.Error):
        ctx.set_native_disable("no_such_op")


def test_residency_and_fallback_result(ctx):
    a = ctx.tensor(np.ones((3, 3), np.float32))
    assert a.residency == "device"
    assert a.move("host").residency == "host"
    np.testing.assert_array_equal(a.numpy(), np.ones((3, 3)))
    a.move("device")
    ctx.set_native_disable(["dot"])
    ctx.set_fallback_result("host")
    try:
        assert vkt.dot(a, a).residency == "host"
    finally:
        ctx.set_fallback_result("device")
        ctx.set_native_disable("")
    assert vkt.dot(a, a).residency == "device"


def test_stats_and_support_matrix(ctx):
    vkt.stats_reset()
    vkt.add(ctx.tensor([1.0]), 1.0)
    assert vkt.stats()["add"][0] == 1
    assert "dot" in vkt.op_names() and "window_scatter_max" in vkt.op_names()
    assert vkt.op_support("add", "f32")[0] == "native"
    assert vkt.op_support("bitwise_and", "f32")[0] == "undefined"
    with pytest.raises(vkt.Error):
        vkt.op_support("no_such_op", "f32")


def test_device_selection():
    with vkt.Context(0) as c:
        assert c.device_name
    with pytest.raises(vkt.Error) as e:
        vkt.Context("no-such-device")
    assert e.value.status_name == "VKT_ENODEV" and e.value.message
    with pytest.raises(vkt.Error):
        vkt.Context(1.5)


def _live(c):
    """Tensors alive on c: collected ones are freed by the next call that holds the lock."""
    c.sync()
    return len(c._live)


def test_tensors_are_freed_with_their_objects():
    with vkt.Context() as c:
        a = c.tensor(np.ones(1000, np.float32))
        b = a + 1
        assert _live(c) == 2
        del b
        assert _live(c) == 1
        for _ in range(50):
            (a * 2).numpy()
        gc.collect()
        assert _live(c) == 1
        v = vkt.reshape(a, (10, 100))  # a view keeps its storage when its base goes
        del a
        np.testing.assert_array_equal(v.numpy(), np.ones((10, 100)))


def test_closing_a_context_frees_its_tensors_and_refuses_them():
    c = vkt.Context()
    a = c.tensor(np.ones(4, np.float32))
    b = a * 3
    c.close()
    assert c.closed and not c._live and "closed" in repr(c)
    for use in (lambda: a.numpy(), lambda: a + b, lambda: b.shape, lambda: c.tensor([1.0]), lambda: c.sync()):
        with pytest.raises(vkt.Error, match="closed"):
            use()
    assert "closed" in repr(a)
    c.close()      # a second close is a no-op
    a = b = None   # and the tensors go without a double free
    gc.collect()


def test_context_outlives_tensors_that_outlive_its_name():
    def make():
        c = vkt.Context()
        return c.tensor(np.arange(5, dtype=np.float32))  # the context lives on in the tensor
    t = make()
    gc.collect()
    np.testing.assert_array_equal((t + 1).numpy(), np.arange(1, 6))


def test_mixing_contexts_is_an_error(ctx):
    with vkt.Context() as other:
        a = other.tensor([1.0])
        with pytest.raises(vkt.Error) as e:
            vkt.add(a, ctx.tensor([1.0]))
        assert e.value.status_name == "VKT_ECTX"
        np.testing.assert_array_equal(ctx.tensor(a).numpy(), [1.0])  # copied across


def test_tensors_are_not_constructible_or_hashable(ctx):
    with pytest.raises(TypeError):
        vkt.Tensor()
    with pytest.raises(TypeError):
        hash(ctx.tensor([1.0]))
    with pytest.raises(TypeError):
        len(ctx.tensor(1.0))


def test_threads_share_a_context(ctx):
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    want = x @ x
    errors = []

    def work():
        try:
            t = ctx.tensor(x)
            for _ in range(20):
                np.testing.assert_allclose((t @ t).numpy(), want, rtol=1e-6)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not errors, errors
    assert not any(th.is_alive() for th in threads)


# ---- the package ----------------------------------------------------------------------------

def _python(code, env=None, cwd=None):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=env, cwd=cwd)


def test_metadata_declares_numpy():
    assert importlib.metadata.requires("vkt") == ["numpy"]
    assert importlib.metadata.version("vkt") and "vkt" in importlib.metadata.packages_distributions()


def test_import_says_what_is_missing(tmp_path):
    # numpy, under an interpreter that lacks it
    p = _python("import sys; sys.modules['numpy'] = None; import vkt")
    assert p.returncode != 0 and "vkt needs numpy" in p.stderr and sys.executable in p.stderr, p.stderr
    # the extension, in a package built for another interpreter (here: none at all)
    pkg = tmp_path / "vkt"
    pkg.mkdir()
    here = os.path.dirname(vkt.__file__)
    for f in os.listdir(here):
        if f.endswith(".py"):
            shutil.copy(os.path.join(here, f), pkg / f)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    p = _python("import vkt", env=env, cwd=tmp_path)
    assert p.returncode != 0 and "extension module does not load" in p.stderr, p.stderr
    assert sys.implementation.cache_tag in p.stderr and "holds none" in p.stderr, p.stderr


def test_the_package_is_c_on_every_op_path():
    """No op, operator or tensor method goes through ctypes: they are the extension's."""
    assert "ctypes" not in sys.modules or not any(
        m.startswith("vkt") and "ctypes" in vars(sys.modules[m]) for m in list(sys.modules))
    for name in vkt._ops._OPS:
        assert getattr(vkt, name) is getattr(_vkt, name), name
    assert type(vkt.add).__name__ == "builtin_function_or_method"
    for op in ("__add__", "__mul__", "__lt__", "reshape", "sum", "transpose", "astype", "move"):
        assert getattr(vkt.Tensor, op) is getattr(_vkt.Tensor, op), op
    assert issubclass(vkt.Tensor, _vkt.Tensor) and issubclass(vkt.Context, _vkt.Context)
    assert vkt.Graph is _vkt.Graph and vkt.Error is _vkt.Error


def test_the_package_imports_one_way():
    """Each module of the package imports only the ones before it in the order below (the
    extension, then the loader, then the types' Python side, then the Python ops, which give
    Tensor [] and @), so no module needs another to have finished importing first."""
    order = ["_vkt", "_libpath", "_lib", "_tensor", "_ops", "__init__"]
    here = os.path.dirname(vkt.__file__)
    for i, mod in enumerate(order[1:], 1):
        with open(os.path.join(here, mod + ".py")) as f:
            tree = ast.parse(f.read())
        used = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                used |= {node.module} if node.module else {a.name for a in node.names}
        assert used <= set(order[:i]), f"vkt.{mod} imports {sorted(used - set(order[:i]))}, which come after it"
    assert "_ops" not in vars(sys.modules["vkt._tensor"])

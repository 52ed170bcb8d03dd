"""Shared fixtures of the Python suites: one vkt context per session, seeded data, and the
paths meson passes in (FBCOUNT_TEST_* variables)."""
import contextlib
import os
import zlib

import numpy as np
import pytest

DTYPES = ("f32", "f64", "s32", "u8")
NP = {"f32": np.float32, "f64": np.float64, "s32": np.int32, "u8": np.uint8}


def path_of(name):
    """A path meson passed in as FBCOUNT_TEST_<NAME>; the test is an error without it."""
    p = os.environ.get("FBCOUNT_TEST_" + name)
    if not p:
        pytest.fail(f"FBCOUNT_TEST_{name} is not set: run the suite through meson test")
    return p


@pytest.fixture(scope="session")
def ctx():
    import vkt
    c = vkt.Context()
    yield c
    c.close()


@pytest.fixture
def rng(request):
    # A seed per test, stable across runs, so a failure reproduces.
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def random(rng, dtype, shape, lo=None, hi=None):
    """Random data of a vkt dtype: floats in [lo, hi) (default [-3, 3)), s32 in [-50, 50), u8 in
    [0, 255]; lo and hi bound integers too."""
    if dtype in ("f32", "f64"):
        lo = -3.0 if lo is None else lo
        hi = 3.0 if hi is None else hi
        return rng.uniform(lo, hi, shape).astype(NP[dtype])
    if dtype == "s32":
        return rng.integers(-50 if lo is None else lo, 50 if hi is None else hi, shape, dtype=np.int32)
    return rng.integers(0 if lo is None else lo, 256 if hi is None else hi, shape, dtype=np.uint8)


@contextlib.contextmanager
def native_disabled(ctx, ops):
    """Forces ops down the fallback path for the block."""
    ctx.set_native_disable(ops)
    try:
        yield
    finally:
        ctx.set_native_disable("")

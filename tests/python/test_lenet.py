"""Python LeNet (tools/lenet/lenet.py) against the C one: the same digits and initial weights
bit for bit, the same losses step by step, eager and recorded (--graph), vkt-lenet's printed
curve and profile rows, and the census of a step whose convs are forced to fall back (five
conv fallbacks a step, at lenet.py's lines)."""
import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import path_of

import fbcount
import vkt


@pytest.fixture(scope="module")
def lenet():
    spec = importlib.util.spec_from_file_location("lenet", path_of("LENET_PY"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ref(*args):
    return subprocess.run([path_of("LENET_REF"), *map(str, args)], check=True, capture_output=True,
                          timeout=120).stdout


@pytest.mark.parametrize("seed,batch", [(1, 3), (12345, 5)])
def test_digits_are_bit_exact(lenet, seed, batch):
    c = np.frombuffer(ref("digits", seed, batch), np.float32)
    images, onehot, labels = lenet.digits_batch(lenet.Rng(lenet.rng_seed(seed)), batch)
    n = batch * 28 * 28
    np.testing.assert_array_equal(images.ravel().view(np.uint32), c[:n].view(np.uint32))
    np.testing.assert_array_equal(onehot.ravel(), c[n:])
    assert onehot.argmax(1).tolist() == labels.tolist()


def test_initial_weights_are_bit_exact(lenet):
    c = np.frombuffer(ref("params", 7), np.float32)
    py = np.concatenate([p.ravel() for p in lenet.init_params(7)])
    assert py.size == c.size == 61706
    np.testing.assert_array_equal(py.view(np.uint32), c.view(np.uint32))


def test_losses_match_the_c_step(ctx, lenet):
    seed, batch, steps = 3, 8, 4
    want = [float(v) for v in ref("losses", seed, batch, steps).split()]
    model = lenet.LeNet(ctx, "tanh", seed, 0.05)
    rng = lenet.Rng(lenet.rng_seed(seed))
    got = [model.step(*lenet.digits_batch(rng, batch)[:2]) for _ in range(steps)]
    # The same ops on the same data: equal within float rounding (in practice bit for bit).
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_recorded_step_gives_the_eager_losses(ctx, lenet):
    seed, batch, steps = 5, 4, 4
    want = [float(v) for v in ref("graph-losses", seed, batch, steps).split()]

    def losses(kinds):
        model = lenet.LeNet(ctx, "tanh", seed, 0.05)
        rng = lenet.Rng(lenet.rng_seed(seed))
        out = []
        for kind in kinds:
            images, onehot, _ = lenet.digits_batch(rng, batch)
            out.append((model.step_graph if kind == "graph" else model.step)(images, onehot))
        return out, model

    eager, _ = losses(["eager"] * steps)
    graph, model = losses(["graph"] * steps)
    # The whole step is recorded (fused chains make fewer dispatches than ops), and independent
    # work shares levels.
    assert model.graph.dispatches > 20 and model.graph.levels < model.graph.dispatches
    # Recorded, the step runs the same kernels on the same data: the eager losses (in practice bit
    # for bit), and vkt-lenet's recorded ones.
    np.testing.assert_allclose(graph, eager, rtol=1e-6)
    np.testing.assert_allclose(graph, want, rtol=1e-6)
    # An eager step drops the recording (it replaces the bound parameters); the next records anew.
    mixed, model = losses(["graph", "eager", "graph", "graph"])
    np.testing.assert_allclose(mixed, eager, rtol=1e-6)
    assert model.graph is not None


def test_recorded_step_refuses_a_fallback(ctx, lenet):
    model = lenet.LeNet(ctx, "tanh", 2, 0.05)
    images, onehot, _ = lenet.digits_batch(lenet.Rng(lenet.rng_seed(2)), 2)
    ctx.set_native_disable("conv")
    try:
        with pytest.raises(vkt.Error) as e:
            model.step_graph(images, onehot)
    finally:
        ctx.set_native_disable("")
    assert e.value.status == vkt.EGRAPH and "vkt_conv" in str(e.value) and "fall back" in str(e.value)
    assert not ctx.recording and model.graph is None
    # The refused recording changed nothing: the next one trains from the initial weights.
    fresh = lenet.LeNet(ctx, "tanh", 2, 0.05)
    np.testing.assert_allclose(model.step_graph(images, onehot), fresh.step(images, onehot), rtol=1e-6)


def _losses(out):
    return re.findall(r"^step\s+(\d+)\s+loss (\S+)", out, re.M)


def _profile_rows(out):
    """{(op, kernel): calls per step} of a --profile table."""
    table = out[out.index("\nprofile: "):]
    return {(m.group(1), m.group(2)): m.group(3)
            for m in re.finditer(r"^(\S+)\s+(\S+)\s+([0-9.]+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+%$", table, re.M)}


# py_only: lenet.py's own options. Batches rendered ahead (the default) or one by one before
# each step come from the same stream, so either gives vkt-lenet's curve.
@pytest.mark.parametrize("extra,py_only", [([], []), ([], ["--render-ahead", "0"]),
                                           (["--graph", "--profile", "1"], []), (["--graph", "--fixed-batch"], [])],
                         ids=["eager", "eager-render-each-step", "graph", "graph-fixed-batch"])
def test_lenet_py_prints_vkt_lenets_curve(extra, py_only):
    args = ["--batch", "6", "--steps", "3", "--print-every", "1", "--seed", "11", "--act", "relu", *extra]
    env = dict(os.environ, VKT_NATIVE_DISABLE="")
    c = subprocess.run([path_of("VKT_LENET"), *args], capture_output=True, text=True, timeout=120, env=env)
    py = subprocess.run([sys.executable, path_of("LENET_PY"), *args, *py_only], capture_output=True, text=True,
                        timeout=120, env=env)
    assert c.returncode == py.returncode, (c.stderr, py.stderr)
    assert _losses(py.stdout) == _losses(c.stdout) and len(_losses(c.stdout)) == 3, (c.stdout, py.stdout)
    assert py.stdout.splitlines()[0] == c.stdout.splitlines()[0]  # device, batch, steps, act, lr, --graph
    if "--graph" in extra:
        assert py.stdout.splitlines()[0].endswith(", recorded step (--graph)")
    if "--profile" in extra:
        # The same dispatches, by op and kernel, as vkt-lenet's profile (the times differ).
        rows = _profile_rows(py.stdout)
        assert rows == _profile_rows(c.stdout) and len(rows) > 10, (py.stdout, c.stdout)
        assert any(op == "conv" for op, _ in rows)


def test_census_of_a_step_with_conv_on_the_host(ctx, lenet):
    model = lenet.LeNet(ctx, "tanh", 2, 0.05)
    images, onehot, _ = lenet.digits_batch(lenet.Rng(lenet.rng_seed(2)), 4)
    ctx.set_native_disable("conv")
    try:
        with fbcount.count() as c:
            model.step(images, onehot)
            model.step(images, onehot)
    finally:
        ctx.set_native_disable("")
    assert c.total == 10 and c.host_total == 0
    assert c.ops["vkt_conv"].count == 10
    src = open(path_of("LENET_PY")).read().splitlines()
    conv_lines = {f"lenet.py:{n}" for n, text in enumerate(src, 1) if "vkt.conv(" in text}
    assert len(conv_lines) == 5
    assert {s.where for s in c.sites} == conv_lines and all(s.count == 2 for s in c.sites)
    assert all(s.function == "train_step" for s in c.sites)


def test_bad_arguments(lenet, ctx):
    with pytest.raises(ValueError):
        lenet.LeNet(ctx, "sigmoid")
    with pytest.raises(ValueError):
        lenet.LeNet(ctx, "tanh", lr=0)
    for bad in (["--batch", "0"], ["--profile", "0"]):
        p = subprocess.run([sys.executable, path_of("LENET_PY"), *bad], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and bad[0] in p.stderr
    p = subprocess.run([sys.executable, path_of("LENET_PY"), "--device", "no-such-device", "--steps", "1"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "lenet.py:" in p.stderr

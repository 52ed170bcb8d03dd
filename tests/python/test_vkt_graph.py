"""Recorded steps, in-place writes and the profile from Python: Tensor.write and vkt.assign
against numpy, a recorded step replayed against the same step run eagerly, what a recording
refuses (fallbacks, host-resident inputs, reads, writes, syncs) and how misuse is reported,
the tensors a graph keeps alive, and per-dispatch times named by op and kernel."""
import gc

import numpy as np
import pytest
from conftest import DTYPES, NP, native_disabled, random

import vkt


def _live(c):
    """Tensors alive on c: collected ones are freed by the next call that holds the lock."""
    c.sync()
    return len(c._live)


# ---- Tensor.write -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (5,), (3, 4)])
def test_write_replaces_the_values(ctx, rng, dtype, shape):
    t = ctx.tensor(random(rng, dtype, shape))
    new = random(rng, dtype, shape)
    assert t.write(new) is None
    np.testing.assert_array_equal(t.numpy(), new)
    np.testing.assert_array_equal((t + t).numpy(), (new + new).astype(NP[dtype]))


def test_write_converts_like_numbers_and_reaches_views(ctx):
    f = ctx.zeros((2, 3))
    f.write(np.arange(6, dtype=np.float64).reshape(2, 3) / 4)   # f64 data into f32
    np.testing.assert_array_equal(f.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3) / 4)
    f.write([[1, 2, 3], [4, 5, 6]])                               # Python ints into f32
    assert f.numpy().tolist() == [[1, 2, 3], [4, 5, 6]]
    view = vkt.reshape(f, (6,))
    f.write(np.zeros((2, 3)))
    assert view.numpy().tolist() == [0] * 6                       # the view shares the storage
    u = ctx.zeros((3,), "u8")
    u.write([0, 255, True])
    assert u.numpy().tolist() == [0, 255, 1]
    s = ctx.zeros((2,), "s32")
    s.write(np.array([-2**31, 2**31 - 1], np.int64))
    assert s.numpy().tolist() == [-2**31, 2**31 - 1]
    r = ctx.full((), 1.0, "f64")
    r.write(2.5)
    assert r.item() == 2.5


def test_write_to_a_host_resident_tensor(ctx):
    t = ctx.zeros((4,)).move("host")
    t.write([1, 2, 3, 4])
    assert t.residency == "host" and (t * 2).numpy().tolist() == [2, 4, 6, 8]


def test_bad_writes_are_refused(ctx):
    f = ctx.zeros((2, 3))
    s = ctx.zeros((2,), "s32")
    u = ctx.zeros((2,), "u8")
    cases = [(lambda: f.write(np.zeros((3, 2))), vkt.ESHAPE, "shape"),
             (lambda: f.write(np.zeros(6)), vkt.ESHAPE, "shape"),
             (lambda: s.write([1.5, 2.0]), vkt.EDTYPE, "float64"),
             (lambda: s.write([2**31, 0]), vkt.EDTYPE, "range"),
             (lambda: u.write([-1, 0]), vkt.EDTYPE, "range"),
             (lambda: f.write(np.array([["a"] * 3] * 2)), vkt.EDTYPE, "convert"),
             (lambda: f.write(f), vkt.EINVAL, "vkt.assign")]
    for fn, status, text in cases:
        with pytest.raises(vkt.Error) as e:
            fn()
        assert e.value.status == status and text in str(e.value), e.value
    assert f.numpy().tolist() == [[0] * 3] * 2
    with vkt.Context() as other:
        t = other.zeros((2,))
    with pytest.raises(vkt.Error) as e:
        t.write([1, 2])
    assert e.value.status == vkt.ECTX


# ---- vkt.assign ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_assign_copies_into_an_existing_tensor(ctx, rng, dtype):
    dst = ctx.tensor(random(rng, dtype, (3, 5)))
    src = random(rng, dtype, (3, 5))
    src_t = ctx.tensor(src)
    before = vkt.stats().get("assign", (0, 0, 0))
    assert vkt.assign(dst, src_t) is dst
    assert vkt.stats()["assign"][0] == before[0] + 1
    np.testing.assert_array_equal(dst.numpy(), src)
    np.testing.assert_array_equal(src_t.numpy(), src)  # the source stays as it was
    vkt.assign(dst, 7)                                  # a number fills
    np.testing.assert_array_equal(dst.numpy(), np.full((3, 5), 7, NP[dtype]))
    vkt.assign(dst, src.astype(np.float64) if dtype in ("f32", "f64") else src.tolist())  # host data converts
    np.testing.assert_array_equal(dst.numpy(), src)


def test_assign_falls_back_and_runs_on_the_host_like_any_op(ctx, rng):
    src = random(rng, "f32", (4, 4))
    dst = ctx.zeros((4, 4))
    with native_disabled(ctx, "assign"):
        before = vkt.stats().get("assign", (0, 0, 0))
        vkt.assign(dst, ctx.tensor(src))
        assert vkt.stats()["assign"][1] == before[1] + 1
    np.testing.assert_array_equal(dst.numpy(), src)
    h_dst, h_src = ctx.zeros((4, 4)).move("host"), ctx.tensor(src * 2).move("host")
    before = vkt.stats()["assign"]
    vkt.assign(h_dst, h_src)
    assert vkt.stats()["assign"][2] == before[2] + 1
    np.testing.assert_array_equal(h_dst.numpy(), src * 2)


def test_bad_assigns_are_refused(ctx):
    dst = ctx.zeros((2, 3))
    cases = [(lambda: vkt.assign(dst, ctx.zeros((3, 2))), vkt.ESHAPE, "vkt_assign"),
             (lambda: vkt.assign(dst, ctx.zeros((2, 3), "f64")), None, "vkt_assign"),
             (lambda: vkt.assign(np.zeros((2, 3)), dst), vkt.EINVAL, "dst"),
             (lambda: vkt.assign(dst, "text"), None, "")]
    for fn, status, text in cases:
        with pytest.raises(vkt.Error) as e:
            fn()
        assert (status is None or e.value.status == status) and text in str(e.value), e.value
    with vkt.Context() as other:
        with pytest.raises(vkt.Error) as e:
            vkt.assign(dst, other.zeros((2, 3)))
        assert e.value.status == vkt.ECTX
    assert dst.numpy().tolist() == [[0] * 3] * 2


# ---- recorded steps -------------------------------------------------------------------------

def _sgd_step(x, y, w, lr, in_place):
    """A least-squares SGD step: (loss, new w); with in_place, w is updated by vkt.assign."""
    err = vkt.dot(x, w) - y
    loss = vkt.sum(err * err)
    new = w - vkt.dot(err, [0], x, [0]) * lr
    return loss, (vkt.assign(w, new) if in_place else new)


def test_recorded_step_replayed_three_times_equals_three_eager_steps(ctx, rng):
    xs = [random(rng, "f32", (16, 8)) for _ in range(3)]
    ys = [random(rng, "f32", (16,)) for _ in range(3)]
    w0 = random(rng, "f32", (8,), -0.5, 0.5)
    lr = ctx.full((), 0.01)

    vkt.stats_reset()
    w = ctx.tensor(w0)
    eager = []
    for x, y in zip(xs, ys):
        loss, w = _sgd_step(ctx.tensor(x), ctx.tensor(y), w, lr, in_place=False)
        eager.append((loss.item(), w.numpy()))
    eager_stats = vkt.stats()

    vkt.stats_reset()
    gx, gy, gw = ctx.zeros((16, 8)), ctx.zeros((16,)), ctx.tensor(w0)
    with ctx.record() as g:
        loss, _ = _sgd_step(gx, gy, gw, lr, in_place=True)
        assert "recording" in repr(loss)
    assert vkt.stats() == {}  # recording runs nothing
    assert g.dispatches >= 2 and f"{g.dispatches} dispatches" in repr(g)
    # The step is one chain (each op needs the one before, or an op it shares a level with).
    assert 2 <= g.levels <= g.dispatches
    for (x, y), (want_loss, want_w) in zip(zip(xs, ys), eager):
        gx.write(x)
        gy.write(y)
        g.launch()
        assert loss.item() == want_loss
        np.testing.assert_array_equal(gw.numpy(), want_w)
    # Each launch counts the recorded ops as native again: three launches, three eager steps'
    # counts (the eager steps' results are new tensors, the recorded step assigns them).
    eager_stats["assign"] = (3, 0, 0)
    assert vkt.stats() == eager_stats
    g.free()


def test_write_then_launch_uses_the_new_inputs(ctx, rng):
    x = ctx.zeros((5,))
    with ctx.record() as g:
        y = vkt.exp(x) * 2
    for _ in range(3):
        data = random(rng, "f32", (5,))
        x.write(data)
        g.launch()
        np.testing.assert_allclose(y.numpy(), np.exp(data.astype(np.float64)) * 2, rtol=1e-6)


def test_a_fallback_inside_a_recording_is_refused_naming_the_op(ctx, rng):
    a, b = ctx.tensor(random(rng, "f32", (4, 4))), ctx.tensor(random(rng, "f32", (4, 4)))
    with native_disabled(ctx, "dot"):
        with pytest.raises(vkt.Error) as e:
            with ctx.record() as g:
                c = a + b
                vkt.dot(a, c)
    assert e.value.status == vkt.EGRAPH and e.value.status_name == "VKT_EGRAPH"
    assert "vkt_dot" in e.value.message and "fall back" in e.value.message
    assert not ctx.recording and g.freed
    with pytest.raises(vkt.Error, match="failed recording") as e:
        g.launch()
    assert e.value.status == vkt.EGRAPH
    # Host-resident inputs would run on the host at every launch: refused too, naming the op.
    h = ctx.tensor(random(rng, "f32", (4,))).move("host")
    with pytest.raises(vkt.Error) as e:
        with ctx.record():
            vkt.negate(h)
    assert e.value.status == vkt.EGRAPH and "vkt_negate" in str(e.value) and "host-resident" in str(e.value)
    # Caught inside the block, a failed op still leaves the recording without a graph (libvkt's
    # vkt_graph_end reports it).
    g = ctx.record()
    with pytest.raises(vkt.Error) as e:
        vkt.bitwise_and(a, a)
    assert e.value.status == vkt.EDTYPE
    with pytest.raises(vkt.Error) as e:
        g.end()
    assert e.value.status == vkt.EDTYPE and "vkt_graph_end" in str(e.value) and g.freed
    assert (a + b).numpy().shape == (4, 4)  # the context runs eagerly again


@pytest.mark.parametrize("call", ["read", "item", "write", "sync", "move"])
def test_host_work_inside_a_recording_is_refused(ctx, call):
    x = ctx.tensor(np.arange(4, dtype=np.float32))
    act = {"read": lambda: x.numpy(), "item": lambda: vkt.sum(x).item(), "write": lambda: x.write(np.ones(4)),
           "sync": ctx.sync, "move": lambda: x.move("host")}[call]
    with pytest.raises(vkt.Error) as e:
        with ctx.record() as g:
            y = x + 1
            act()
    assert e.value.status == vkt.EGRAPH and "recording" in str(e.value)
    # The block raised, so its recording lacks work: it makes no graph.
    assert g.freed and not ctx.recording
    assert x.residency == "device" and x.numpy().tolist() == [0, 1, 2, 3]
    assert (y + 1).numpy().shape == (4,)  # the context runs eagerly again


def test_graph_misuse_is_an_error(ctx):
    x = ctx.zeros((3,))
    with ctx.record() as g:
        y = x + 1
        with pytest.raises(vkt.Error, match="already being recorded") as e:
            ctx.record()
        assert e.value.status == vkt.EGRAPH
        with pytest.raises(vkt.Error, match="still being recorded"):
            g.launch()
        with pytest.raises(vkt.Error, match="still being recorded"):
            g.free()
        assert ctx.recording and not g.freed
    g.launch()
    assert y.numpy().tolist() == [1, 1, 1]
    with pytest.raises(vkt.Error, match="not being recorded") as e:
        g.end()
    assert e.value.status == vkt.EGRAPH
    g2 = ctx.record()
    with pytest.raises(vkt.Error, match="end it first") as e:
        g.launch()  # libvkt: no launch while a recording is open
    assert e.value.status == vkt.EGRAPH
    g2.end()
    g.free()
    g.free()  # a second free is a no-op
    for use in (g.launch, lambda: g.dispatches, lambda: g.levels):
        with pytest.raises(vkt.Error, match="freed") as e:
            use()
        assert e.value.status == vkt.EGRAPH
    assert "freed" in repr(g)
    with pytest.raises(TypeError):
        vkt.Graph()


def test_a_bound_tensor_stays_on_the_device_while_its_graph_lives(ctx):
    x = ctx.tensor(np.arange(4, dtype=np.float32))
    with ctx.record() as g:
        y = x * 2
    with pytest.raises(vkt.Error, match="free the graph first") as e:
        x.move("host")
    assert e.value.status == vkt.EGRAPH and x.residency == "device"
    x.move("device")  # staying put is no move
    x.write([1, 2, 3, 4])
    g.launch()
    assert y.numpy().tolist() == [2, 4, 6, 8]
    g.free()
    assert x.move("host").residency == "host"


def test_closing_the_context_ends_recordings_and_frees_graphs():
    c = vkt.Context()
    x = c.zeros((2,))
    with c.record() as g:
        x + 1
    rec = c.record()
    x * 2
    c.close()
    assert g.freed and rec.freed and not c.recording
    for use in (g.launch, rec.end, rec.launch):
        with pytest.raises(vkt.Error) as e:
            use()
        assert e.value.status in (vkt.ECTX, vkt.EGRAPH) and "closed" in str(e.value)
    g.free()  # and nothing is freed twice
    g = rec = None
    gc.collect()


def test_a_graph_keeps_the_tensors_it_binds():
    with vkt.Context() as c:
        base = _live(c)
        x = c.tensor(np.arange(4, dtype=np.float32))
        w = c.full((4,), 2.0)
        with c.record() as g:
            out = vkt.sum(x * w)      # x * w is freed during the recording: the graph keeps its memory
            vkt.assign(w, w + 1)
        assert _live(c) == base + 3   # x, w, out: bound
        del x, w                      # the graph still reads and updates them
        gc.collect()
        for want in (12, 18, 24):     # w = 2, 3, 4 at successive launches
            g.launch()
            assert out.item() == want
        assert _live(c) == base + 3
        del g                         # with the graph go the tensors only it kept
        gc.collect()
        assert _live(c) == base + 1 and not c._pins and not c._graphs
        del out
        assert _live(c) == base


def test_tensors_bound_to_two_graphs_go_with_the_last():
    with vkt.Context() as c:
        base = _live(c)
        x = c.zeros((3,))
        with c.record() as g1:
            a = x + 1
        with c.record() as g2:
            b = x * 2
        del x, a, b
        g1.free()
        g2.launch()
        assert _live(c) == base + 2   # x and b: g2 binds them
        del g2
        gc.collect()
        assert _live(c) == base


# ---- profiling ------------------------------------------------------------------------------

def _timestamps(c):
    (c.tensor([1.0]) + 1).numpy()
    return c.last_gpu_ns is not None


def test_profile_entries_name_ops_and_kernels():
    with vkt.Context() as c:
        if not _timestamps(c):
            pytest.skip(f"{c.device_name}'s queue has no timestamps")
        assert not c.profiling and c.profile() == []
        a = c.tensor(np.ones((8, 8), np.float32))
        c.set_profiling(True)
        assert c.profiling
        (vkt.dot(a, a) + a).numpy()
        entries = c.profile()
        assert [e.op for e in entries if e.op] == ["dot", "add"]
        assert all(isinstance(e, vkt.ProfileEntry) and e.kernel and e.gpu_ns > 0 for e in entries)
        assert c.profile() == []      # read once: they leave the profile
        # A graph recorded while profiling adds one entry per dispatch at each launch.
        with c.record() as g:
            b = vkt.exp(vkt.dot(a, a)) * 3
        assert c.profile() == []      # recording runs nothing
        g.launch()
        g.launch()
        entries = c.profile()
        assert len(entries) == 2 * g.dispatches == 2
        # exp and multiply run in the product's store (an epilogue): one dispatch, named after
        # the op whose result it writes, its kernel the product's _epi variant.
        assert [e.op for e in entries] == ["multiply"] * 2
        assert entries[0].kernel.endswith("_epi"), entries[0].kernel
        c.set_profiling(False)
        (b + 1).numpy()
        g.launch()
        assert c.profile() == [] and not c.profiling
        with pytest.raises(vkt.Error):
            c.set_profiling("yes")

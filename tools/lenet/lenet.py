#!/usr/bin/env python3
"""lenet.py: LeNet-5 trained in Python on vkt, the same model, data and seed as vkt-lenet.

The synthetic digits (digits.c), the generator (rng.h) and the initialisation
(lenet.c) are ported bit for bit: the 64-bit LCG is stepped in numpy's uint64
arithmetic, Box-Muller's log and cos come from the C library as in C, and the
rendering runs in float32 in C's order of operations. The training step issues
the same libvkt ops as lenet.c's train_step, so a seed gives vkt-lenet's loss curve.
--graph records the step once (ctx.record) and replays it, as vkt-lenet --graph does:
a step is then two input writes and one launch.

usage: lenet.py [--batch N] [--steps N] [--seed N] [--lr X] [--act tanh|relu]
                [--device SEL] [--print-every N] [--warmup N] [--warm-ms MS] [--stats]
                [--graph] [--fixed-batch] [--render-ahead MIB] [--profile N]
(the options, output and exit status of vkt-lenet)
"""
import argparse
import collections
import math
import sys
import time

import numpy as np

import vkt

SIDE = 28
CLASSES = 10
_A = 6364136223846793005
_C = 1442695040888963407
_M = (1 << 64) - 1
_TAU = 6.283185307179586


def rng_seed(seed):
    """rng.h's rng_seed."""
    return (seed * 2654435761 + 1) & _M


class Rng:
    """rng.h's generator: a 64-bit LCG, drawn many values at a time by jumping ahead."""

    _jump_a = np.ones(1, np.uint64)
    _jump_c = np.zeros(1, np.uint64)

    def __init__(self, state):
        self.state = state & _M

    @classmethod
    def _jumps(cls, n):
        """(A[k], C[k]) with state_k = A[k] * state + C[k] (mod 2^64), for k = 1..n."""
        have = len(cls._jump_a) - 1
        if have < n:
            a, c = int(cls._jump_a[-1]), int(cls._jump_c[-1])
            more_a, more_c = [], []
            for _ in range(n - have):
                a, c = (a * _A) & _M, (c * _A + _C) & _M
                more_a.append(a)
                more_c.append(c)
            cls._jump_a = np.concatenate([cls._jump_a, np.array(more_a, np.uint64)])
            cls._jump_c = np.concatenate([cls._jump_c, np.array(more_c, np.uint64)])
        return cls._jump_a[1:n + 1], cls._jump_c[1:n + 1]

    def uniform(self, n):
        """n draws of rng_uniform: doubles in [0, 1)."""
        if n == 0:
            return np.zeros(0)
        a, c = self._jumps(n)
        states = a * np.uint64(self.state) + c  # wraps modulo 2^64, as in C
        self.state = int(states[-1])
        return (states >> np.uint64(11)).astype(np.float64) / 9007199254740992.0

    def normal(self, n):
        """n draws of rng_normal (Box-Muller, one value per two uniforms)."""
        uv = self.uniform(2 * n)
        u, v = uv[0::2] + 1e-12, uv[1::2]
        # The C library's log and cos, as the C program calls them; the rest is IEEE exact.
        logs = np.array([math.log(x) for x in u.tolist()])
        coss = np.array([math.cos(_TAU * x) for x in v.tolist()])
        return np.sqrt(-2 * logs) * coss


def _f(x):
    return np.float32(x)


# digits.c's stroke templates, as C's float constants.
_TEMPLATES = [[tuple(_f(v) for v in s) for s in t] for t in (
    [(0, 0, 1, 0), (1, 0, 1, 1), (1, 1, 0, 1), (0, 1, 0, 0)],
    [(.5, 0, .5, 1), (.2, .25, .5, 0)],
    [(0, 0, 1, 0), (1, 0, 1, .5), (1, .5, 0, .5), (0, .5, 0, 1), (0, 1, 1, 1)],
    [(0, 0, 1, 0), (1, 0, 1, 1), (1, 1, 0, 1), (.2, .5, 1, .5)],
    [(0, 0, 0, .55), (0, .55, 1, .55), (.75, 0, .75, 1)],
    [(1, 0, 0, 0), (0, 0, 0, .5), (0, .5, 1, .5), (1, .5, 1, 1), (1, 1, 0, 1)],
    [(1, 0, 0, 0), (0, 0, 0, 1), (0, 1, 1, 1), (1, 1, 1, .5), (1, .5, 0, .5)],
    [(0, 0, 1, 0), (1, 0, .35, 1)],
    [(0, 0, 1, 0), (1, 0, 1, 1), (1, 1, 0, 1), (0, 1, 0, 0), (0, .5, 1, .5)],
    [(1, .5, 0, .5), (0, .5, 0, 0), (0, 0, 1, 0), (1, 0, 1, 1), (1, 1, .2, 1)],
)]
_PY, _PX = (a.astype(np.float32).ravel() for a in np.mgrid[0:SIDE, 0:SIDE])
_HALF, _ZERO, _ONE = _f(.5), _f(0), _f(1)


def _render(rng, c):
    """digits.c's render: one 28x28 glyph of class c, as float32 in C's order."""
    u = rng.uniform(6)
    w, h = _f(10 + 4 * u[0]), _f(15 + 5 * u[1])
    cx, cy = _f(14 + 4 * (u[2] - .5)), _f(14 + 4 * (u[3] - .5))
    slant, thick = _f(.4 * (u[4] - .5)), _f(1.0 + 1.2 * u[5])
    d = np.full(SIDE * SIDE, _f(1e9), np.float32)
    for x0, y0, x1, y1 in _TEMPLATES[c]:
        sy0, sy1 = cy + (y0 - _HALF) * h, cy + (y1 - _HALF) * h
        sx0, sx1 = cx + (x0 - _HALF) * w + slant * (sy0 - cy), cx + (x1 - _HALF) * w + slant * (sy1 - cy)
        dx, dy = sx1 - sx0, sy1 - sy0
        len2 = dx * dx + dy * dy
        t = ((_PX - sx0) * dx + (_PY - sy0) * dy) / len2 if len2 > 0 else np.zeros_like(_PX)
        t = np.where(t < 0, _ZERO, np.where(t > 1, _ONE, t))
        ex, ey = _PX - (sx0 + t * dx), _PY - (sy0 + t * dy)
        di = np.sqrt(ex * ex + ey * ey)
        d = np.where(di < d, di, d)
    v = thick - d + _HALF
    v = np.where(v < 0, _ZERO, np.where(v > 1, _ONE, v))
    noise = (.15 * rng.normal(SIDE * SIDE)).astype(np.float32)
    return v + noise


def digits_batch(rng, batch):
    """digits.c's digits_batch: (images [batch, 28, 28] f32, onehot [batch, 10] f32, labels)."""
    images = np.empty((batch, SIDE, SIDE), np.float32)
    labels = np.empty(batch, np.int32)
    for i in range(batch):
        c = int(rng.uniform(1)[0] * CLASSES) % CLASSES
        images[i] = _render(rng, c).reshape(SIDE, SIDE)
        labels[i] = c
    onehot = (labels[:, None] == np.arange(CLASSES)).astype(np.float32)
    return images, onehot, labels


PARAM_SHAPES = [(6, 1, 5, 5), (6, 1, 1), (16, 6, 5, 5), (16, 1, 1), (400, 120), (120,), (120, 84), (84,),
                (84, 10), (10,)]
_FAN_IN = [25, 0, 150, 0, 400, 0, 120, 0, 84, 0]
_POOL = (1, 1, 2, 2)
_SWAP01 = [1, 0, 2, 3]


def init_params(seed):
    """lenet.c's lenet_create: scaled normal weights, zero biases, from seed ^ 0x5eed."""
    rng = Rng(rng_seed(seed ^ 0x5eed))
    out = []
    for shape, fan in zip(PARAM_SHAPES, _FAN_IN):
        scale = 1.0 / math.sqrt(fan) if fan > 0 else 0.0
        out.append((scale * rng.normal(int(np.prod(shape)))).astype(np.float32).reshape(shape))
    return out


class LeNet:
    """LeNet-5 on a vkt context, trained by SGD: lenet.c's model and step in Python.

    step() runs the ops of a step as it goes; step_graph() records them once, on bound input
    tensors and with the SGD update in place (vkt.assign), and replays the recording."""

    def __init__(self, ctx, act="tanh", seed=1, lr=0.05):
        if act not in ("tanh", "relu"):
            raise ValueError(f"act must be tanh or relu, got {act!r}")
        if not lr > 0:
            raise ValueError(f"the learning rate must be > 0, got {lr!r}")
        self.ctx, self.act = ctx, act
        self.params = [ctx.tensor(p) for p in init_params(seed)]
        self.lr, self.zero, self.one = (ctx.full((), v, "f32") for v in (lr, 0.0, 1.0))
        # the recorded step (step_graph): the graph, its bound inputs and loss sum
        self.graph = self.gx = self.gy = self.gtot = None

    def _activate(self, z):
        return vkt.tanh(z) if self.act == "tanh" else vkt.max(z, self.zero)

    def _activate_grad(self, g, z, a):
        if self.act == "tanh":
            return g * (self.one - a * a)
        return vkt.select(vkt.greater(z, self.zero), g, self.zero)

    def step(self, images, onehot, want_loss=True):
        """One SGD step on images [batch, 28, 28] and one-hot labels [batch, 10]; the mean
        cross-entropy (read back, a sync point) or None (the step then ends in a sync)."""
        self.forget_graph()  # the eager update replaces the tensors a recorded step is bound to
        batch = images.shape[0]
        x = self.ctx.tensor(np.ascontiguousarray(images, np.float32).reshape(batch, 1, SIDE, SIDE))
        y = self.ctx.tensor(np.ascontiguousarray(onehot, np.float32))
        tot = self.train_step(x, y, in_place=False)
        if not want_loss:
            self.ctx.sync()
            return None
        return float(-tot.numpy().reshape(()) / np.float32(batch))

    def step_graph(self, images, onehot, want_loss=True):
        """The same step from a recording: the first call, and a call with another batch size,
        records it; every call writes the inputs into the graph's bound tensors and launches it
        (one submission, a sync point). Raises vkt.Error when an op of the step would fall back
        (a graph records native work only)."""
        batch = images.shape[0]
        if self.graph is None or self.gx.shape[0] != batch:
            self._record(batch)
        self.gx.write(np.asarray(images, np.float32).reshape(batch, 1, SIDE, SIDE))
        self.gy.write(onehot)
        self.graph.launch()
        if not want_loss:
            return None
        return float(-self.gtot.numpy().reshape(()) / np.float32(batch))

    def step_graph_again(self, want_loss=True):
        """Replays the recorded step on the batch its inputs hold, writing nothing (what a CUDA
        graph on static inputs measures: vkt-lenet --fixed-batch). Raises vkt.Error when no step
        is recorded."""
        if self.graph is None:
            raise vkt.Error("step_graph_again: no step recorded", vkt.EGRAPH)
        self.graph.launch()
        if not want_loss:
            return None
        return float(-self.gtot.numpy().reshape(()) / np.float32(self.gx.shape[0]))

    def _record(self, batch):
        self.forget_graph()
        self.gx = self.ctx.zeros((batch, 1, SIDE, SIDE))
        self.gy = self.ctx.zeros((batch, CLASSES))
        with self.ctx.record() as g:
            self.gtot = self.train_step(self.gx, self.gy, in_place=True)
        self.graph = g

    def forget_graph(self):
        """Drops the recorded step; the next step_graph records it again (after turning
        profiling on, say: a graph times its dispatches when recorded so)."""
        if self.graph is not None:
            self.graph.free()
        self.graph = self.gx = self.gy = self.gtot = None

    def train_step(self, x, y, in_place):
        """The step's ops on images x [batch, 1, 28, 28] and one-hot labels y, from the forward
        pass to the SGD update (replacing the parameters, or in place as a recording must); the
        summed log-likelihood, not read back. lenet.c's train_step, op for op."""
        ctx, p, act, grad = self.ctx, self.params, self._activate, self._activate_grad
        batch = x.shape[0]
        invb = ctx.full((), 1.0 / batch, "f32")

        # forward
        z1 = vkt.conv(x, p[0], padding=[(2, 2), (2, 2)]) + p[1]
        a1 = act(z1)
        p1 = vkt.window_max(a1, _POOL, strides=_POOL)
        z2 = vkt.conv(p1, p[2]) + p[3]
        a2 = act(z2)
        p2 = vkt.window_max(a2, _POOL, strides=_POOL)
        f = vkt.reshape(p2, (batch, 400))
        z3 = vkt.dot(f, p[4]) + p[5]
        a3 = act(z3)
        z4 = vkt.dot(a3, p[6]) + p[7]
        a4 = act(z4)
        logits = vkt.dot(a4, p[8]) + p[9]
        # log-softmax, shifted by the row maximum, and the summed cross-entropy
        zc = logits - vkt.reduce_max(logits, axes=1, keep_axes=True)
        logp = zc - vkt.log(vkt.sum(vkt.exp(zc), axes=1, keep_axes=True))
        tot = vkt.sum(y * logp)

        # backward: d loss / d logits = (softmax - onehot) / batch
        g5 = (vkt.exp(logp) - y) * invb
        # dense layers: the weight gradient contracts the batch axis, then a transpose (Nx's grad of dot)
        dw5 = vkt.transpose(vkt.dot(g5, [0], a4, [0]), [1, 0])
        db5 = vkt.sum(g5, axes=0)
        g4 = grad(vkt.dot(g5, [1], p[8], [1]), z4, a4)
        dw4 = vkt.transpose(vkt.dot(g4, [0], a3, [0]), [1, 0])
        db4 = vkt.sum(g4, axes=0)
        g3 = grad(vkt.dot(g4, [1], p[6], [1]), z3, a3)
        dw3 = vkt.transpose(vkt.dot(g3, [0], f, [0]), [1, 0])
        db3 = vkt.sum(g3, axes=0)
        df = vkt.dot(g3, [1], p[4], [1])
        # second conv block: pooling gradient, then kernel and input gradients as swapped-axis convs
        dp2 = vkt.reshape(df, (batch, 16, 5, 5))
        g2 = grad(vkt.window_scatter_max(a2, dp2, self.zero, _POOL, strides=_POOL), z2, a2)
        db2 = vkt.reshape(vkt.sum(g2, axes=[0, 2, 3]), (16, 1, 1))
        dk2 = vkt.conv(p1, g2, input_permutation=_SWAP01, kernel_permutation=_SWAP01,
                       output_permutation=_SWAP01)
        dp1 = vkt.conv(g2, vkt.reverse(p[2], [2, 3]), padding=[(4, 4), (4, 4)], kernel_permutation=_SWAP01)
        # first conv block: no input gradient, x is data
        g1 = grad(vkt.window_scatter_max(a1, dp1, self.zero, _POOL, strides=_POOL), z1, a1)
        db1 = vkt.reshape(vkt.sum(g1, axes=[0, 2, 3]), (6, 1, 1))
        dk1 = vkt.conv(x, g1, padding=[(2, 2), (2, 2)], input_permutation=_SWAP01,
                       kernel_permutation=_SWAP01, output_permutation=_SWAP01)

        for i, g in enumerate((dk1, db1, dk2, db2, dw3, db3, dw4, db4, dw5, db5)):
            w = p[i] - g * self.lr
            if in_place:
                vkt.assign(p[i], w)
            else:
                p[i] = w
        return tot


def profile(ctx, model, step_fn, images, onehot, steps):
    """vkt-lenet --profile: `steps` more steps with every dispatch timed, printed by (op, kernel)."""
    ctx.set_profiling(True)
    model.forget_graph()  # a recorded step times its dispatches only if recorded so
    step_fn(images, onehot, want_loss=False)
    ctx.profile()  # the first profiled step records pipelines and the graph
    for _ in range(steps):
        step_fn(images, onehot, want_loss=False)
    entries = ctx.profile()
    rows = {}
    for e in entries:
        row = rows.setdefault((e.op or "(libvkt)", e.kernel), [0, 0.0])
        row[0] += 1
        row[1] += e.gpu_ns
    total = sum(r[1] for r in rows.values())
    print(f"profile: {steps} steps, {len(entries)} dispatches, GPU time per step by op and kernel (each dispatch "
          "alone)")
    print(f"{'op':<20} {'kernel':<22} {'calls':>9} {'us/step':>11} {'us/call':>10} {'share':>7}")
    for (op, kernel), (calls, ns) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        share = 100 * ns / total if total > 0 else 0.0
        print(f"{op:<20} {kernel:<22} {calls / steps:9.1f} {ns / 1e3 / steps:11.2f} {ns / 1e3 / calls:10.2f} "
              f"{share:6.1f}%")
    print(f"{'total':<20} {'':<22} {len(entries) / steps:9.1f} {total / 1e3 / steps:11.2f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Trains LeNet-5 on vkt on synthetic 28x28 digits and prints "
                                             "the loss (vkt-lenet in Python).")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--act", choices=("tanh", "relu"), default="tanh")
    ap.add_argument("--device", help="Vulkan device index or name substring (as VKT_DEVICE)")
    ap.add_argument("--print-every", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=1, help="first steps left out of the mean step time")
    ap.add_argument("--warm-ms", type=int, default=0,
                    help="before step 0, train untimed for MS milliseconds on the first batch, after a first "
                         "step that builds the pipelines (a GPU's clocks)")
    ap.add_argument("--stats", action="store_true", help="print how each op ran at the end")
    ap.add_argument("--graph", action="store_true", help="record the step once (ctx.record) and replay it every step")
    ap.add_argument("--fixed-batch", action="store_true",
                    help="with --graph: write the first batch once and replay on it (as vkt-lenet --fixed-batch)")
    ap.add_argument("--render-ahead", type=int, default=64, metavar="MIB",
                    help="render the coming steps' batches ahead, up to MIB MiB at a time, the first before the "
                         "warm-up (default 64; 0: each batch just before its step). Rendering in Python takes "
                         "tens of ms a batch (libm per pixel, bit for bit as C): between steps, it leaves the "
                         "GPU idle that long, and an idle GPU lowers its clocks")
    ap.add_argument("--profile", type=int, metavar="N",
                    help="after the timed steps, run N more with every dispatch timed and print the GPU time "
                         "per step by op and kernel, largest first")
    args = ap.parse_args(argv)
    if not 1 <= args.batch <= 1 << 16 or args.steps < 0 or args.print_every < 1 or args.warmup < 0 \
            or not 0 <= args.seed <= 1 << 40 or not 0 < args.lr < 100 or not 0 <= args.warm_ms <= 600000 \
            or (args.profile is not None and not 1 <= args.profile <= 1 << 20) \
            or not 0 <= args.render_ahead <= 1 << 16:
        ap.error("out of range: --batch 1..65536, --steps >= 0, --print-every >= 1, --warmup >= 0, "
                 "--seed 0..2^40, --lr in (0, 100), --warm-ms 0..600000, --profile 1..2^20, "
                 "--render-ahead 0..65536")
    try:
        ctx = vkt.Context(args.device)
        model = LeNet(ctx, args.act, args.seed, args.lr)
    except vkt.Error as e:
        print(f"lenet.py: {e}", file=sys.stderr)
        return 2

    def step_fn(images, onehot, want_loss=True):
        if args.graph and args.fixed_batch and model.graph is not None:
            return model.step_graph_again(want_loss)
        return (model.step_graph if args.graph else model.step)(images, onehot, want_loss)

    print(f"device: {ctx.device_name}, batch {args.batch}, {args.steps} steps, {args.act}, lr {args.lr:g}"
          + (", recorded step (--graph)" if args.graph else ""))
    rng = Rng(rng_seed(args.seed))
    # The batches of the coming steps, in the generator's order (the same stream as vkt-lenet's).
    # The first ones are rendered before the warm-up, which then trains on the first: a GPU idle
    # for the second that rendering takes drops its clocks, and the warm-up is there to raise them.
    ahead = collections.deque()
    per_batch = args.batch * (SIDE * SIDE + CLASSES) * 4

    def render(steps_left):
        want = 1 if args.fixed_batch else min(steps_left, (args.render_ahead << 20) // per_batch)
        ahead.extend(digits_batch(rng, args.batch)[:2] for _ in range(max(want, 1)))

    render(max(args.steps, 1))
    images, onehot = ahead[0]  # the first training batch: the warm-up's, and --profile's without steps
    if args.warm_ms > 0:
        # The clock starts after the first step, which builds the pipelines (and records the
        # graph): seconds in which the GPU idles.
        n, start = 0, time.perf_counter()
        t0 = start
        while n == 0 or (time.perf_counter() - t0) * 1e3 < args.warm_ms:
            try:
                step_fn(images, onehot, want_loss=False)
            except vkt.Error as e:
                print(f"lenet.py: warm-up step {n}: {e}", file=sys.stderr)
                return 2
            n += 1
            if n == 1:
                t0 = time.perf_counter()
        print(f"warm-up: {n} untimed steps in {(time.perf_counter() - start) * 1e3:.0f} ms")
    first = last = math.nan
    timed_ms, gpu_ms, timed = 0.0, 0.0, 0
    for step in range(args.steps):
        if not args.fixed_batch or step == 0:
            if not ahead:
                render(args.steps - step)
            images, onehot = ahead.popleft()
        show = step % args.print_every == 0 or step == args.steps - 1
        t0 = time.perf_counter()
        try:
            loss = step_fn(images, onehot, want_loss=show)
        except vkt.Error as e:
            print(f"lenet.py: step {step}: {e}", file=sys.stderr)
            return 2
        ms = (time.perf_counter() - t0) * 1e3
        if step >= args.warmup:
            timed_ms += ms
            # A step is one submission (eager) or one launch: its GPU time.
            gpu_ms += (ctx.last_gpu_ns or 0) / 1e6
            timed += 1
        if show:
            first = loss if math.isnan(first) else first
            last = loss
            print(f"step {step:5d}  loss {loss:.4f}  {ms:.2f} ms/step", flush=True)
    if timed:
        print(f"loss {first:.4f} -> {last:.4f} over {args.steps} steps; mean {timed_ms / timed:.3f} ms/step "
              f"over {timed} steps after {args.warmup} warm-up")
        # What the step costs besides the GPU's work: recording and submitting it (eager), or
        # writing the inputs and launching (--graph).
        if gpu_ms > 0:
            print(f"GPU {gpu_ms / timed:.3f} ms/step, the rest (host) {(timed_ms - gpu_ms) / timed:.3f} ms/step")
    elif args.steps:
        print(f"loss {first:.4f} -> {last:.4f} over {args.steps} steps; no step timed (all {args.steps} were "
              "warm-up)")
    if args.profile:
        try:
            profile(ctx, model, step_fn, images, onehot, args.profile)
        except vkt.Error as e:
            print(f"lenet.py: profiled step: {e}", file=sys.stderr)
            return 2
    if args.stats:
        print(f"{'op':<22} {'native':>10} {'fallback':>10} {'host':>10}")
        for op, (n, f, h) in vkt.stats().items():
            print(f"{op:<22} {n:10d} {f:10d} {h:10d}")
    ctx.close()
    return 0 if args.steps == 0 or last < first else 1


if __name__ == "__main__":
    sys.exit(main())

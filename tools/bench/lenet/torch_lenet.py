#!/usr/bin/env python3
"""torch_lenet — the LeNet-5 training step of vkt-lenet, in PyTorch.

The anchor for vkt-lenet's step time: the same architecture (conv 1->6 5x5
pad 2, tanh, max pool 2x2, conv 6->16 5x5, tanh, max pool, dense 400-120-84-10
with tanh, log-softmax cross-entropy), the same batch, plain SGD, float32, on
CUDA when available (TF32 off, so both sides do true fp32) and on the CPU
otherwise. A step is forward, backward and update, timed from start to a
synchronised end; the figure is the mean over --steps after --warmup steps, as
vkt-lenet reports it. Prints one JSON object on standard output.

--mode picks how the step runs: eager (each op launched from Python), graph
(the whole step, forward, backward and SGD update, captured once in a CUDA
graph and replayed on static inputs, as torch's documentation captures a
whole network), or compile-graph (forward and loss compiled by torch.compile,
then the whole step captured the same way). The graph modes need CUDA.

usage: torch_lenet.py --batch N [--mode eager|graph|compile-graph] [--steps N] [--warmup N] [--warm-ms MS]
                      [--device cpu|cuda] [--act tanh|relu] [--threads N]
"""
import argparse
import json
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--mode", choices=["eager", "graph", "compile-graph"], default="eager")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--warm-ms", type=int, default=0,
                    help="and untimed steps for at least this long (an idle GPU's clocks are low)")
    ap.add_argument("--device", choices=["cpu", "cuda"], default=None)
    ap.add_argument("--act", choices=["tanh", "relu"], default="tanh")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="CPU threads (default: every core, as lavapipe uses them)")
    args = ap.parse_args()
    if args.batch < 1 or args.steps < 1 or args.warmup < 0 or args.warm_ms < 0:
        ap.error("--batch and --steps must be >= 1, --warmup and --warm-ms >= 0")
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        sys.exit(f"torch_lenet: cannot import torch ({e}); pass --python a python that has it")

    dev = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if args.mode != "eager" and dev != "cuda":
        sys.exit(f"torch_lenet: --mode {args.mode} needs CUDA")
    if dev == "cuda":
        if not torch.cuda.is_available():
            sys.exit("torch_lenet: --device cuda but torch sees no CUDA device")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        name = torch.cuda.get_device_name(0)
    else:
        torch.set_num_threads(max(1, args.threads))
        name = f"cpu ({torch.get_num_threads()} threads)"
    torch.manual_seed(1)
    act = torch.tanh if args.act == "tanh" else F.relu

    def param(*shape, fan_in=None):
        t = torch.randn(*shape, device=dev) / (fan_in ** 0.5) if fan_in else torch.zeros(*shape, device=dev)
        return t.requires_grad_()

    k1, b1 = param(6, 1, 5, 5, fan_in=25), param(6)
    k2, b2 = param(16, 6, 5, 5, fan_in=150), param(16)
    w3, b3 = param(120, 400, fan_in=400), param(120)
    w4, b4 = param(84, 120, fan_in=120), param(84)
    w5, b5 = param(10, 84, fan_in=84), param(10)
    params = [k1, b1, k2, b2, w3, b3, w4, b4, w5, b5]
    opt = torch.optim.SGD(params, lr=args.lr)

    x = torch.rand(args.batch, 1, 28, 28, device=dev)
    y = torch.randint(0, 10, (args.batch,), device=dev)

    def forward(x, y):
        h = F.max_pool2d(act(F.conv2d(x, k1, b1, padding=2)), 2)
        h = F.max_pool2d(act(F.conv2d(h, k2, b2)), 2)
        h = h.reshape(args.batch, 400)
        h = act(F.linear(h, w3, b3))
        h = act(F.linear(h, w4, b4))
        return F.nll_loss(F.log_softmax(F.linear(h, w5, b5), dim=1), y)

    fwd = torch.compile(forward) if args.mode == "compile-graph" else forward

    def eager_step():
        opt.zero_grad(set_to_none=True)
        loss = fwd(x, y)
        loss.backward()
        opt.step()
        return loss

    step = eager_step
    if args.mode != "eager":
        # Warm up on a side stream (compilation, autotuning, the optimizer's
        # first step), then capture one whole step; replays reuse its memory.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                eager_step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            static_loss = fwd(x, y)
            static_loss.backward()
            opt.step()

        def step():
            graph.replay()
            return static_loss

    def sync():
        if dev == "cuda":
            torch.cuda.synchronize()

    for _ in range(args.warmup):
        step()
    sync()
    until = time.perf_counter() + args.warm_ms / 1000
    while time.perf_counter() < until:
        step()
        sync()
    total = 0.0
    for _ in range(args.steps):
        t0 = time.perf_counter()
        step()
        sync()
        total += time.perf_counter() - t0
    print(json.dumps({"source": "torch", "mode": args.mode, "torch": torch.__version__, "device": name,
                      "batch": args.batch,
                      "act": args.act, "steps": args.steps, "warmup": args.warmup, "warm_ms": args.warm_ms,
                      "ms_per_step": 1e3 * total / args.steps}))


if __name__ == "__main__":
    main()

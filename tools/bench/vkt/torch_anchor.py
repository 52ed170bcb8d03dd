#!/usr/bin/env python3
"""torch_anchor — the same rows as vkt-bench, measured with PyTorch on CUDA.

An anchor for vkt-bench's figures on the same GPU: what a mature CUDA stack
reaches for the same op, size and byte/flop count. fp32 matmul runs with TF32
off, so both sides do true fp32. Each row is the median of --reps runs timed
with CUDA events, after warm-up, on random data. Prints the table vkt-bench
prints and writes the same JSON schema (source "torch") for ratio.py.
"""
import argparse
import datetime
import json
import statistics
import sys
import time

M = 1 << 20
# (op, size label, kind, n, target, quick, full): the rows of vkt-bench.c.
CASES = [
    ("add", "1M", "add", M, None, True, True),
    ("add", "16M", "add", 16 * M, None, False, True),
    ("add", "256M", "add", 256 * M, 3900.0, False, True),
    ("exp", "1M", "exp", M, None, True, True),
    ("exp", "16M", "exp", 16 * M, None, False, True),
    ("exp", "256M", "exp", 256 * M, None, False, True),
    ("sum", "1M", "sum", M, None, True, False),
    ("sum", "16M", "sum", 16 * M, None, False, True),
    ("sum", "256M", "sum", 256 * M, 3500.0, False, True),
    ("sum_last_axis", "1024x1024", "sum_last", 1024, None, True, False),
    ("sum_last_axis", "4096x4096", "sum_last", 4096, None, False, True),
    ("transpose", "1024x1024", "transpose", 1024, None, True, False),
    ("transpose", "4096x4096", "transpose", 4096, None, False, True),
    ("dot", "256^3", "dot", 256, None, True, False),
    ("dot", "512^3", "dot", 512, None, False, True),
    ("dot", "1024^3", "dot", 1024, None, False, True),
    ("dot", "2048^3", "dot", 2048, None, False, True),
    ("dot", "4096^3", "dot", 4096, 25000.0, False, True),
]


def work(kind, n):
    """Bytes moved or flops, counted exactly as vkt-bench counts them."""
    return {
        "add": 3 * 4 * n,
        "exp": 2 * 4 * n,
        "sum": 4 * n,
        "sum_last": 4 * n * n + 4 * n,
        "transpose": 2 * 4 * n * n,
        "dot": 2 * n ** 3,
    }[kind]


def bench(torch, kind, n, reps, warmup, warm_s):
    gen = torch.Generator(device="cuda").manual_seed(1)

    def rand(*shape):
        return torch.rand(*shape, device="cuda", generator=gen, dtype=torch.float32) * 2 - 1

    if kind in ("add", "exp", "sum"):
        a = rand(n)
        b = rand(n) if kind == "add" else None
    else:
        a = rand(n, n)
        b = rand(n, n) if kind == "dot" else None
    # Each call allocates its result, as a libvkt op does.
    op = {
        "add": lambda: torch.add(a, b),
        "exp": lambda: torch.exp(a),
        "sum": lambda: torch.sum(a),
        "sum_last": lambda: torch.sum(a, dim=1),
        "transpose": lambda: a.t().contiguous(),
        "dot": lambda: torch.mm(a, b),
    }[kind]
    for _ in range(warmup):
        op()
    torch.cuda.synchronize()
    # An idle GPU needs about a second of load to raise its clocks (as in vkt-bench).
    until = time.monotonic() + warm_s
    while time.monotonic() < until:
        op()
        torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        op()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e6)  # ms -> ns
    del a, b
    torch.cuda.empty_cache()
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20, help="timed runs per row (median reported)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs before them")
    ap.add_argument("--warm-ms", type=int, default=1500,
                    help="and untimed runs for at least this long, so the GPU's clocks are up")
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--ops", help="comma-separated rows: add,exp,sum,sum_last_axis,transpose,dot")
    ap.add_argument("--json", help="also write every row as JSON")
    args = ap.parse_args()
    if args.reps < 1 or args.warmup < 0 or args.warm_ms < 0:
        ap.error("--reps must be >= 1, --warmup and --warm-ms >= 0")
    try:
        import torch
    except ImportError:
        print("torch_anchor: PyTorch is not installed", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_anchor: no CUDA device", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = "torch " + torch.cuda.get_device_name(0)
    only = set(args.ops.split(",")) if args.ops else None

    rows = []
    for op, size, kind, n, target, quick, full in CASES:
        if not (quick if args.quick else full) or (only and op not in only):
            continue
        print(f"torch_anchor: {op} {size} ...", file=sys.stderr)
        row = {"op": op, "size": size, "path": "cuda", "timing": "gpu", "unit": "GFLOP/s" if kind == "dot" else "GB/s",
               "target": target, "error": None, "time_ns": None, "wall_ns": None, "figure": None}
        try:
            t = bench(torch, kind, n, args.reps, args.warmup, args.warm_ms / 1000)
            row["time_ns"] = t
            row["figure"] = work(kind, n) / t
        except Exception as e:  # a row's failure (out of memory, say) must not end the sweep
            row["error"] = f"{type(e).__name__}: {e}".splitlines()[0]
        rows.append(row)

    print("| op | size | device | path | time | figure | target | ratio-to-target |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        t = r["time_ns"]
        ts = "-" if t is None else f"{t / 1e3:.1f} us" if t < 1e6 else f"{t / 1e6:.3f} ms"
        fig = r["error"] or f"{r['figure']:.1f} {r['unit']}"
        tgt = f">= {r['target']:.0f} {r['unit']}" if r["target"] else "-"
        ratio = f"{r['figure'] / r['target']:.2f}" if r["target"] and r["figure"] else "-"
        print(f"| {r['op']} | {r['size']} | {device} | {r['path']} | {ts} | {fig} | {tgt} | {ratio} |")

    if args.json:
        doc = {"schema": "vkt-bench/1", "source": "torch", "device": device,
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "argv": sys.argv, "reps": args.reps, "torch": torch.__version__, "tf32": False, "rows": rows}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
    return 1 if any(r["error"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

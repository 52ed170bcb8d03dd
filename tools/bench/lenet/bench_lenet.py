#!/usr/bin/env python3
"""bench_lenet — LeNet-5 step time: libvkt native (eager and recorded) and each forced fallback, next to PyTorch.

Runs build/tools/lenet/vkt-lenet once per (batch, case) — native, native with
the step recorded once and replayed (--graph) on a new batch each step, the
same on one batch written once (--graph --fixed-batch: what torch's graph
modes measure, whose static inputs no step writes), then with
VKT_NATIVE_DISABLE=conv, =dot, =dot plus VKT_FALLBACK_RESULT=host, and
=window_max,window_scatter_max — and tools/bench/lenet/torch_lenet.py with
--python at the same batch in the same call, in each of its modes: eager, the
whole step captured in a CUDA graph, and torch.compile then a CUDA graph (the
graph modes only where that python's torch sees a GPU). Each libvkt figure is
vkt-lenet's mean step time after its warm-up (steps, then --warm-ms of untimed
training so a GPU's clocks are up; torch_lenet.py warms the same way); each
case is checked with --stats to have run the way its name says (no fallback
natively, the forced op falling back otherwise). Prints a markdown table:
native rows against each torch mode, forced rows against native (the cliff);
--json FILE writes the raw figures, --results FILE the rows in the results
format of tools/bench/results/ (RESULTS.md and the README are made from those).

usage: bench_lenet.py [--build DIR] [--python PY] [--batches 64,256] [--steps N] [--warmup N]
                      [--warm-ms MS] [--repeat N] [--device SEL] [--cases LIST] [--json FILE] [--results FILE]
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "results"))
import results  # noqa: E402  (tools/bench/results/results.py: the results format)

# (case, environment, op forced down the fallback path, vkt-lenet flags)
CASES = [
    ("native", {}, None, []),
    ("native-graph", {}, None, ["--graph"]),
    ("native-graph-fixed", {}, None, ["--graph", "--fixed-batch"]),
    ("conv-fallback", {"VKT_NATIVE_DISABLE": "conv"}, "conv", []),
    ("dot-fallback", {"VKT_NATIVE_DISABLE": "dot"}, "dot", []),
    ("dot-fallback-host", {"VKT_NATIVE_DISABLE": "dot", "VKT_FALLBACK_RESULT": "host"}, "dot", []),
    ("window-fallback", {"VKT_NATIVE_DISABLE": "window_max,window_scatter_max"}, "window_max", []),
]
# torch_lenet.py's modes, each the peer of native cases.
TORCH_MODES = [("eager", "torch-eager", ("native",)),
               ("graph", "torch-cuda-graph", ("native-graph", "native-graph-fixed")),
               ("compile-graph", "torch-compile-cuda-graph", ("native-graph", "native-graph-fixed"))]
NATIVE_CASES = ("native", "native-graph", "native-graph-fixed")


def run_vkt(exe, batch, steps, warmup, warm_ms, device, env_extra, forced, flags):
    env = {k: v for k, v in os.environ.items() if k not in ("VKT_NATIVE_DISABLE", "VKT_FALLBACK_RESULT")}
    env.update(env_extra)
    cmd = [exe, "--batch", str(batch), "--steps", str(steps + warmup), "--warmup", str(warmup),
           "--print-every", str(steps + warmup), "--stats", "--warm-ms", str(warm_ms)] + flags
    if device:
        cmd += ["--device", device]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode not in (0, 1):  # 1: the loss did not fall in a handful of steps, which is fine here
        sys.exit(f"bench_lenet: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    out = p.stdout
    dev = re.search(r"^device: (.*?), batch", out, re.M)
    mean = re.search(r"mean ([0-9.]+) ms/step", out)
    if not dev or not mean:
        sys.exit(f"bench_lenet: cannot read vkt-lenet's output:\n{out}")
    stats = {}
    for m in re.finditer(r"^(\w+)\s+(\d+)\s+(\d+)\s+(\d+)$", out, re.M):
        stats[m.group(1)] = tuple(int(m.group(i)) for i in (2, 3, 4))
    warm = re.search(r"^warm-up: (\d+) untimed steps", out, re.M)
    ran = steps + warmup + (int(warm.group(1)) if warm else 0)
    # Per step: the warm-up makes the number of steps run vary.
    fallbacks = sum(v[1] for v in stats.values()) / ran
    host = sum(v[2] for v in stats.values()) / ran
    # The figure is only worth printing if the case ran as named.
    if forced is None and fallbacks + host:
        sys.exit(f"bench_lenet: the native case fell back ({fallbacks} fallbacks, {host} host ops):\n{out}")
    if forced is not None and not stats.get(forced, (0, 0, 0))[1]:
        sys.exit(f"bench_lenet: VKT_NATIVE_DISABLE did not force {forced} down the fallback path:\n{out}")
    split = re.search(r"^GPU ([0-9.]+) ms/step, the rest \(host\) ([0-9.-]+) ms/step", out, re.M)
    return {"device": dev.group(1), "ms_per_step": float(mean.group(1)), "fallbacks": fallbacks,
            "host_ops": host, "gpu_ms": float(split.group(1)) if split else None,
            "host_ms": float(split.group(2)) if split else None}


def run_torch(python, batch, steps, warmup, warm_ms, mode):
    cmd = [python, os.path.join(HERE, "torch_lenet.py"), "--batch", str(batch), "--steps", str(steps),
           "--warmup", str(warmup), "--warm-ms", str(warm_ms), "--mode", mode]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"bench_lenet: torch {mode} skipped: {p.stderr.strip()[-2000:]}", file=sys.stderr)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="meson build directory (default: build)")
    ap.add_argument("--python", default="python3", help="a python with torch, for the anchor (default: python3)")
    ap.add_argument("--batches", default="64,256")
    ap.add_argument("--steps", type=int, default=5, help="timed steps per case (default 5)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed steps first (default 2)")
    ap.add_argument("--warm-ms", type=int, default=1500,
                    help="and untimed steps for at least this long first: an idle GPU's clocks are low "
                         "until it has had about a second of load (default 1500)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each case this many times and keep the fastest (for shared, noisy machines)")
    ap.add_argument("--device", help="libvkt device (as VKT_DEVICE)")
    ap.add_argument("--cases", help="comma-separated cases to run (default: all): "
                    + ",".join(c[0] for c in CASES) + "; torch runs where a native case does")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--results", help="also write the rows in the results format (tools/bench/results/)")
    args = ap.parse_args()
    try:
        batches = [int(b) for b in args.batches.split(",")]
    except ValueError:
        ap.error(f"--batches expects comma-separated integers, got '{args.batches}'")
    if args.steps < 1 or args.repeat < 1 or args.warmup < 0 or args.warm_ms < 0 or any(b < 1 for b in batches):
        ap.error("--steps, --repeat and every batch must be >= 1, --warmup and --warm-ms >= 0")
    cases = CASES
    if args.cases:
        cases = [c for c in CASES if c[0] in args.cases.split(",")]
        unknown = set(args.cases.split(",")) - {c[0] for c in CASES}
        if unknown or not cases:
            ap.error(f"--cases: unknown {', '.join(sorted(unknown)) or 'empty list'}; the cases are "
                     + ", ".join(c[0] for c in CASES))
    exe = os.path.join(args.build, "tools", "lenet", "vkt-lenet")
    if not os.access(exe, os.X_OK):
        sys.exit(f"bench_lenet: {exe} not found; build it first: ninja -C {args.build}")

    rows, torch_rows, vkt_dev, torch_dev = [], [], None, None
    for b in batches:
        torch_ms = {}
        for mode, peer, peer_of in TORCH_MODES:
            if not any(c[0] in peer_of for c in cases):
                continue
            t = None
            for _ in range(args.repeat):
                tr = run_torch(args.python, b, args.steps, args.warmup, args.warm_ms, mode)
                if tr and (not t or tr["ms_per_step"] < t["ms_per_step"]):
                    t = tr
            if t:
                torch_dev = f"{t['device']}, torch {t['torch']}"
                torch_ms[peer] = t["ms_per_step"]
                torch_rows.append({"batch": b, "mode": mode, "ms_per_step": t["ms_per_step"]})
                print(f"  batch {b:4d}  torch {mode:26s} {t['ms_per_step']:10.3f} ms/step", file=sys.stderr, flush=True)
        native = None
        for name, env, forced, flags in cases:
            r = min((run_vkt(exe, b, args.steps, args.warmup, args.warm_ms, args.device, env, forced, flags)
                     for _ in range(args.repeat)),
                    key=lambda x: x["ms_per_step"])
            vkt_dev = r["device"]
            native = native or r["ms_per_step"]
            r.update(batch=b, case=name, torch_ms=dict(torch_ms), slowdown=r["ms_per_step"] / native)
            rows.append(r)
            print(f"  batch {b:4d}  {name:32s} {r['ms_per_step']:10.3f} ms/step", file=sys.stderr, flush=True)

    out_rows = result_rows(rows)
    print(f"libvkt device: {vkt_dev}")
    print(f"torch device:  {torch_dev or 'not run'}")
    print(f"mean step time over {args.steps} steps after {args.warmup} warm-up steps and {args.warm_ms} ms of "
          f"untimed steps, fastest of {args.repeat} run(s) per case; LeNet-5, tanh, fp32\n")
    print("| batch | case | fallbacks/step | libvkt ms/step | peer | peer ms/step | libvkt/peer |")
    print("|---|---|---|---|---|---|---|")
    for r in out_rows:
        pv = f"{r['peer_value']:.3f}" if r.get("peer_value") else "-"
        ratio = f"{r['value'] / r['peer_value']:.2f}" if r.get("peer_value") else "-"
        print(f"| {r['size']} | {r['case']} | {r.get('fallbacks', 0):.0f} | {r['value']:.3f} | {r.get('peer', '-')} "
              f"| {pv} | {ratio} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"schema": "lenet-bench/1", "vkt_device": vkt_dev, "torch_device": torch_dev,
                       "steps": args.steps, "warmup": args.warmup, "warm_ms": args.warm_ms, "repeat": args.repeat,
                       "rows": rows, "torch": torch_rows}, f, indent=1)
    if args.results:
        results.write(args.results, device=vkt_dev, peer_device=torch_dev, rows=out_rows,
                      command="python3 tools/bench/lenet/bench_lenet.py " + " ".join(sys.argv[1:]),
                      date=datetime.date.today().isoformat())


def result_rows(rows):
    """The measured cases as results rows: native cases against each torch mode
    they are the counterpart of, forced fallbacks against native (the cliff)."""
    out = []
    native = {r["batch"]: r["ms_per_step"] for r in rows if r["case"] == "native"}
    for r in rows:
        base = {"bench": "lenet", "case": r["case"], "size": str(r["batch"]), "value": round(r["ms_per_step"], 4),
                "unit": "ms", "fallbacks": r["fallbacks"], "host_ops": r["host_ops"]}
        if r.get("gpu_ms") is not None:
            base.update(gpu_ms=round(r["gpu_ms"], 4), host_ms=round(r["host_ms"], 4))
        peers = [(peer, r["torch_ms"].get(peer)) for _, peer, cases in TORCH_MODES if r["case"] in cases]
        if r["case"] not in NATIVE_CASES:
            peers = [("native", native.get(r["batch"]))]
        for peer, value in peers:
            row = dict(base, peer=peer)
            if value:
                row["peer_value"] = round(value, 4)
            out.append(row)
    return out


if __name__ == "__main__":
    main()

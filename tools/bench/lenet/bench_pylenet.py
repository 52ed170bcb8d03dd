#!/usr/bin/env python3
"""bench_pylenet: the Python LeNet-5 step (tools/lenet/lenet.py on the vkt package) against
the C step (vkt-lenet), natively, at each batch size, run eagerly and recorded (--graph).

Both programs train the same model on the same data with the same ops; each figure is the
program's own mean step time (forward, backward, SGD update, ending in one submission and a
wait; with --graph, two input writes and one launch of the step recorded once; with --graph
--fixed-batch, one launch on the batch written first, as a CUDA graph on static inputs) over --steps
steps after --warmup steps and --warm-ms of untimed training, the fastest of --repeat runs, C
and Python alternating. --stats of both runs is read back: the script refuses a row where
either fell back or where Python issued other ops than C. The Python layer's cost is the
difference, per step and per op. Where the machine is noisy (a shared CPU running lavapipe)
that difference drowns; so a third run times the Python step from the inside: every call into
the package's C (the op functions, the operators, the uploads, reads, writes, syncs and
launches: vkt._vkt, which calls libvkt) is timed, and what the step spends outside them (less
the timers' own cost) is the Python layer's time: lenet.py's own code and the interpreter,
tensors' destructors (which free their handles) included. Prints a markdown table; --json FILE writes the
rows, --results FILE the rows in the results format of tools/bench/results/.

Needs a build directory (vkt-lenet, libvkt and the build tree's vkt package) and a python
with numpy; nothing else. On a GPU machine, raise --warm-ms so the clocks are up.

usage: bench_pylenet.py [--build DIR] [--python PY] [--batches 64,256] [--steps N]
                        [--warmup N] [--warm-ms MS] [--repeat N] [--modes eager,graph,graph-fixed]
                        [--device SEL] [--json FILE] [--results FILE] [--commit REV]
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LENET_PY = os.path.join(HERE, "..", "..", "lenet", "lenet.py")
sys.path.insert(0, os.path.join(HERE, "..", "results"))
import results  # noqa: E402  (tools/bench/results/results.py: the results format)

# The step modes: their flag for both programs, and the prefix of their fields in a row.
MODES = {"eager": ([], ""), "graph": (["--graph"], "graph_"),
         "graph-fixed": (["--graph", "--fixed-batch"], "graph_fixed_")}
# How each mode is named in the table and in results rows.
LABEL = {"eager": "eager", "graph": "--graph", "graph-fixed": "--graph --fixed-batch"}
CASE = {"eager": "", "graph": "-graph", "graph-fixed": "-graph-fixed"}


def run(cmd, env, what):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode not in (0, 1):  # 1: the loss did not fall in a handful of steps, which is fine here
        sys.exit(f"bench_pylenet: {what}: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    out = p.stdout
    dev = re.search(r"^device: (.*?), batch", out, re.M)
    mean = re.search(r"mean ([0-9.]+) ms/step", out)
    if not dev or not mean:
        sys.exit(f"bench_pylenet: cannot read {what}'s output:\n{out}\n{p.stderr}")
    stats = {m.group(1): tuple(int(m.group(i)) for i in (2, 3, 4))
             for m in re.finditer(r"^(\w+)\s+(\d+)\s+(\d+)\s+(\d+)$", out, re.M)}
    warm = re.search(r"^warm-up: (\d+) untimed steps", out, re.M)
    ran = int(re.search(r"batch \d+, (\d+) steps", out).group(1)) + (int(warm.group(1)) if warm else 0)
    # Where the queue has timestamps: the step's GPU time, and the rest (the host's share).
    gpu = re.search(r"^GPU ([0-9.]+) ms/step, the rest \(host\) ([0-9.-]+) ms/step", out, re.M)
    return {"device": dev.group(1), "ms": float(mean.group(1)), "stats": stats, "steps_run": ran,
            "gpu_ms": float(gpu.group(1)) if gpu else None, "host_ms": float(gpu.group(2)) if gpu else None}


SPLIT = r"""
import importlib.util, json, sys, time
import vkt
from vkt import _vkt
batch, steps, warmup = (int(v) for v in sys.argv[1:4])
device, path, mode = sys.argv[4] or None, sys.argv[5], sys.argv[6]
spec = importlib.util.spec_from_file_location("lenet", path)
lenet = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lenet)
ctx = vkt.Context(device)
model = lenet.LeNet(ctx, "tanh", 1, 0.05)
step = model.step if mode == "eager" else model.step_graph
images, onehot, _ = lenet.digits_batch(lenet.Rng(lenet.rng_seed(1)), batch)
for _ in range(max(warmup, 1)):  # the first step_graph records the step
    step(images, onehot, want_loss=False)
if mode == "graph-fixed":
    step = lambda images, onehot, want_loss: model.step_graph_again(want_loss)
spent = [0.0, 0]
def timed(fn):
    def call(*a, **k):
        t0 = time.perf_counter()
        r = fn(*a, **k)
        spent[0] += time.perf_counter() - t0
        spent[1] += 1
        return r
    return call
# Every way into the C: the op functions, Tensor's operators and its C methods, Context's,
# and the recorded graph's launch (a C type: its object is wrapped instead).
for name in vkt.__all__:
    fn = getattr(vkt, name)
    if getattr(_vkt, name, None) is fn and callable(fn) and not isinstance(fn, type):
        setattr(vkt, name, timed(fn))
for cls, names in ((vkt.Tensor, ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                                 "__truediv__", "__rtruediv__", "__neg__", "__pow__", "_read_into",
                                 "_write_from", "reshape", "transpose", "astype", "sum", "move")),
                   (vkt.Context, ("_from_host", "zeros", "full", "iota", "sync"))):
    for name in names:
        setattr(cls, name, timed(getattr(cls, name)))
class TimedGraph:
    def __init__(self, g):
        self.g, self.launch = g, timed(g.launch)
    def __getattr__(self, name):
        return getattr(self.g, name)
if model.graph is not None:
    model.graph = TimedGraph(model.graph)
nop = timed(lambda *a: 0)
t0 = time.perf_counter()
for _ in range(100000):
    nop()
per_call = (time.perf_counter() - t0) / 100000
spent[:] = [0.0, 0]
t0 = time.perf_counter()
for _ in range(steps):
    step(images, onehot, want_loss=False)
total = (time.perf_counter() - t0) / steps
calls = spent[1] / steps
in_c = spent[0] / steps
print(json.dumps({"step_ms": total * 1e3, "in_c_ms": in_c * 1e3, "calls": calls,
                  "python_ms": (total - in_c - calls * per_call) * 1e3}))
"""


def split(python, batch, steps, warmup, device, mode, env):
    """The Python step timed from the inside: ms outside the package's C calls per step, and calls per
    step."""
    p = subprocess.run([python, "-c", SPLIT, str(batch), str(steps), str(warmup), device or "", LENET_PY, mode],
                       env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench_pylenet: the timed Python step failed ({p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout)


def per_step(r):
    """{op: calls per step} of a run, and whether anything left the GPU."""
    ops = {op: sum(v) / r["steps_run"] for op, v in r["stats"].items()}
    fell = sum(v[1] + v[2] for v in r["stats"].values())
    return ops, fell


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="meson build directory (default: build)")
    ap.add_argument("--python", default=sys.executable, help="the python for lenet.py (default: this one)")
    ap.add_argument("--batches", default="64,256")
    ap.add_argument("--steps", type=int, default=5, help="timed steps per run (default 5)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed steps first (default 2)")
    ap.add_argument("--warm-ms", type=int, default=0,
                    help="and untimed training for at least this long first (default 0; ~1500 on a GPU)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per program and batch; the fastest counts")
    ap.add_argument("--modes", default="eager,graph",
                    help="the steps to time: eager (recorded each step), graph (recorded once, replayed on each "
                         "new batch: --graph), graph-fixed (replayed on one batch: --graph --fixed-batch)")
    ap.add_argument("--device", help="libvkt device (as VKT_DEVICE)")
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--results", help="also write the rows in the results format (tools/bench/results/)")
    ap.add_argument("--commit", help="the commit measured, for the results (default: this checkout's HEAD)")
    args = ap.parse_args()
    try:
        batches = [int(b) for b in args.batches.split(",")]
    except ValueError:
        ap.error(f"--batches expects comma-separated integers, got '{args.batches}'")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in MODES for m in modes) or len(set(modes)) != len(modes):
        ap.error(f"--modes expects some of eager, graph, graph-fixed, comma-separated, got '{args.modes}'")
    if args.steps < 1 or args.repeat < 1 or args.warmup < 0 or args.warm_ms < 0 or any(b < 1 for b in batches):
        ap.error("--steps, --repeat and every batch must be >= 1, --warmup and --warm-ms >= 0")
    exe = os.path.join(args.build, "tools", "lenet", "vkt-lenet")
    pkg = os.path.join(args.build, "backend", "python")
    if not os.access(exe, os.X_OK) or not os.path.exists(os.path.join(pkg, "vkt", "_libpath.py")):
        sys.exit(f"bench_pylenet: {exe} or {pkg}/vkt not found; build first: ninja -C {args.build}")

    env = {k: v for k, v in os.environ.items() if k not in ("VKT_NATIVE_DISABLE", "VKT_FALLBACK_RESULT")}
    env["PYTHONPATH"] = os.path.abspath(pkg) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    rows, device = [], None
    for b in batches:
        common = ["--batch", str(b), "--steps", str(args.steps + args.warmup), "--warmup", str(args.warmup),
                  "--print-every", str(args.steps + args.warmup), "--stats", "--warm-ms", str(args.warm_ms)]
        if args.device:
            common += ["--device", args.device]
        best = {}
        for _ in range(args.repeat):
            for mode in modes:
                for name, cmd in (("C", [exe]), ("Python", [args.python, LENET_PY])):
                    r = run(cmd + common + MODES[mode][0], env, f"{name} ({mode})")
                    if (name, mode) not in best or r["ms"] < best[name, mode]["ms"]:
                        best[name, mode] = r
        row = {"batch": b}
        for mode in modes:
            device = measure(row, b, mode, best["C", mode], best["Python", mode], args, env)
        rows.append(row)
        done = [f"{mode}: C {best['C', mode]['ms']:.3f}  Python {best['Python', mode]['ms']:.3f} ms/step"
                for mode in modes]
        print(f"  batch {b:4d}  " + "  ".join(done), file=sys.stderr, flush=True)

    print(f"device: {device}")
    print(f"python: {args.python}")
    print(f"mean step time over {args.steps} steps after {args.warmup} warm-up steps and {args.warm_ms} ms of "
          f"untimed steps, fastest of {args.repeat} runs each; LeNet-5, tanh, fp32, no fallback; --graph: the "
          "step recorded once and replayed\n")
    print_table(rows, modes)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"schema": "pylenet-bench/3", "device": device, "python": args.python, "modes": modes,
                       "steps": args.steps, "warmup": args.warmup, "warm_ms": args.warm_ms,
                       "repeat": args.repeat, "rows": rows}, f, indent=1)
    if args.results:
        results.write(args.results, device=device, rows=result_rows(rows, modes),
                      command="python3 tools/bench/lenet/bench_pylenet.py " + " ".join(sys.argv[1:]),
                      date=datetime.date.today().isoformat(), commit=args.commit)


def measure(row, batch, mode, c, py, args, env):
    """Adds one mode's figures to row (its fields prefixed as MODES says); returns the device."""
    (c_ops, c_fell), (py_ops, py_fell) = per_step(c), per_step(py)
    if c_fell or py_fell:
        sys.exit(f"bench_pylenet: batch {batch} ({mode}): a native run fell back (C {c_fell}, Python {py_fell} "
                 "events)")
    if c_ops != py_ops:
        sys.exit(f"bench_pylenet: batch {batch} ({mode}): Python issued other ops than C per step:\n  C {c_ops}\n  "
                 f"Python {py_ops}")
    ops = sum(c_ops.values())
    added = py["ms"] - c["ms"]
    inside = min((split(args.python, batch, args.steps, args.warmup, args.device, mode, env)
                  for _ in range(args.repeat)), key=lambda x: x["python_ms"])
    pre = MODES[mode][1]
    row.update({pre + k: v for k, v in {
        "c_ms_per_step": c["ms"], "py_ms_per_step": py["ms"], "py_added_ms": added,
        "py_added_pct": 100 * added / c["ms"], "ops_per_step": ops, "py_added_us_per_op": 1000 * added / ops,
        "c_gpu_ms": c["gpu_ms"], "c_host_ms": c["host_ms"], "py_gpu_ms": py["gpu_ms"], "py_host_ms": py["host_ms"],
        "py_outside_c_ms": inside["python_ms"], "py_outside_c_pct_of_c": 100 * inside["python_ms"] / c["ms"],
        "c_calls_per_step": inside["calls"]}.items()})
    return c["device"]


def print_table(rows, modes):
    """One line per batch and mode: the C step beside the Python step, then the Python layer's share."""
    print("| batch | step | C ms/step | Python ms/step | difference | host ms/step, C / Python | "
          "Python outside its C calls, ms/step (% of C step) | C calls/step |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        for mode in modes:
            p = MODES[mode][1]
            host = "-" if r[p + "c_host_ms"] is None or r[p + "py_host_ms"] is None else \
                f"{r[p + 'c_host_ms']:.3f} / {r[p + 'py_host_ms']:.3f}"
            print(f"| {r['batch']} | {LABEL[mode]} | {r[p + 'c_ms_per_step']:.3f} | "
                  f"{r[p + 'py_ms_per_step']:.3f} | {r[p + 'py_added_ms']:+.3f} ms ({r[p + 'py_added_pct']:+.1f}%) | "
                  f"{host} | {r[p + 'py_outside_c_ms']:.3f} ({r[p + 'py_outside_c_pct_of_c']:.1f}%) | "
                  f"{r[p + 'c_calls_per_step']:.0f} |")


def result_rows(rows, modes):
    """The Python steps as results rows, each against the C step of its mode."""
    out = []
    for r in rows:
        for mode in modes:
            p = MODES[mode][1]
            row = {"bench": "pylenet", "case": "python" + CASE[mode],
                   "size": str(r["batch"]), "value": round(r[p + "py_ms_per_step"], 4), "unit": "ms",
                   "peer": "c" + CASE[mode], "peer_value": round(r[p + "c_ms_per_step"], 4),
                   "outside_c_ms": round(r[p + "py_outside_c_ms"], 4)}
            if r[p + "py_gpu_ms"] is not None:
                row.update(gpu_ms=round(r[p + "py_gpu_ms"], 4), host_ms=round(r[p + "py_host_ms"], 4))
            out.append(row)
    return out


if __name__ == "__main__":
    main()

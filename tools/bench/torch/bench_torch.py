#!/usr/bin/env python3
"""fbcount-bench-torch: what the census costs a PyTorch process, start to end.

Two programs on the toy PrivateUse1 device (tests/torch/toydev.cc), whose ops but a few fall
back to the CPU through at::native::cpu_fallback:
  few fallbacks   tests/torch/model.py, 5 steps: a few dozen fallbacks over a dozen stacks
  transformer     tools/bench/torch/transformer.py: an embedding, an encoder layer and a head,
                  AdamW steps with their backward passes: hundreds of fallbacks, forward and
                  backward
each run ROUNDS times in each configuration, the configurations interleaved round by round:
  no shim         the program alone
  preloaded       LD_PRELOAD=libfbcount.so, the census written (the default output)
  no output       the same with FBCOUNT_OUTPUT=none
The figure is the wall time from spawn to reaping; the cost over the program alone is the
median of each round's difference from that round's own run of the program alone (paired),
with its quartiles and its least, and the child's CPU time beside it. The targets: at most
20 ms over the program alone with a few dozen fallbacks, at most 5% on the transformer.

Where a process's own time moves by more than the cost (importing torch on a shared 2-core
machine moves by +-200 ms), --profile N samples N more runs of each shim configuration with
perf (cpu-clock at 4 kHz, call graphs from DWARF) and counts the samples whose call chain
passes through libfbcount.so: the CPU time spent in the shim and in what it calls (libdw,
libunwind, the loader's work for the libraries it opens), on every thread. The median of the
runs is the shim's own CPU time. A sample is the shim's where its innermost frame of the
shim is the shim's own code and everything inside it is a helper's (libdw, libelf, libunwind,
the C library, the loader, the kernel); under the functions through which the shim hands the
program's calls on (an exit's wrapper calling the backend, dlopen, pthread_create, a thread's
start) the time is the program's.

Prints a table; --json writes the rows (tools/bench/results/, results.py's schema); a
document's tables are blocks <!-- results:torch FILE --> ... <!-- results:end -->: --doc
rewrites them from FILE's rows, --check-doc fails when they differ.

usage: bench_torch.py --shim LIBFBCOUNT --toydev LIBTOYDEV [--python PY] [--rounds N]
                      [--steps N] [--profile N] [--device TEXT] [--json FILE]
       bench_torch.py --doc MD | --check-doc MD
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "results"))
import results  # noqa: E402  (tools/bench/results/results.py: the rows' schema and writer)

TARGET_FEW_MS = 20.0
TARGET_SHARE = 0.05


def programs(a):
    tests = os.path.join(TOP, "tests", "torch")
    return [("few fallbacks", [a.python, os.path.join(tests, "model.py"), a.toydev, "5"]),
            ("transformer", [a.python, os.path.join(HERE, "transformer.py"), a.toydev, tests,
                             str(a.steps)])]


def one(argv, env):
    """Wall and CPU ms of one run (its output checked: a failing program is no figure)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench_torch: {' '.join(argv)} failed: {err[-2000:]}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


PERF_HZ = 4000
FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)$")
# What the shim calls for its own work: a sample inside these under the shim's frame is the
# shim's; inside anything else (the backend's function an exit wraps, a thread's start
# routine, the program's code) it is the program's.
HELPERS = re.compile(r"^(libdw|libelf|libz\.|liblzma|libbz2|libzstd|libunwind|libgcc_s|"
                     r"libstdc\+\+|libc\.so|libm\.so|ld-linux|libfbcount|\[kernel|\[vdso|\[unknown)")


def pass_through(shim):
    """The shim's functions that hand the program's calls on (dlopen, pthread_create, the
    exits...): what runs under them is the program's, helpers included."""
    nm = subprocess.run(["nm", "-DC", "--defined-only", shim], capture_output=True, text=True)
    names = {line.split(" ", 2)[2] for line in nm.stdout.splitlines() if line.count(" ") >= 2}
    return {n for n in names if not n.startswith("fbcount_")} | {"trampoline"}


def is_shims(frames, wrappers):
    """Whether a sample (frames innermost first, (symbol, module file name)) is the shim's own
    work: its innermost frame of the shim is no pass-through, or is where the sample fell,
    and everything inside it is a helper's."""
    for i, (sym, dso) in enumerate(frames):
        if dso == "libfbcount.so":
            if i > 0 and sym.split("+")[0] in wrappers:
                return False
            return all(HELPERS.match(d) for _, d in frames[:i])
    return False


def shim_cpu_ms(argv, env, out_dir, wrappers):
    """CPU ms of the shim's own work (is_shims) and of all samples, of one run under perf."""
    data = os.path.join(out_dir, "perf.data")
    rec = subprocess.run(["perf", "record", "-q", "-F", str(PERF_HZ), "-e", "cpu-clock", "-g",
                          "--call-graph", "dwarf,16384", "-o", data, "--"] + argv, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if rec.returncode != 0:
        sys.exit(f"bench_torch: perf record failed: {rec.stderr[-2000:]}")
    script = subprocess.run(["perf", "script", "--no-inline", "-i", data, "-F", "ip,sym,dso"],
                            capture_output=True, text=True)
    os.unlink(data)
    shim = total = 0
    for sample in script.stdout.split("\n\n"):
        frames = [(m.group(1), os.path.basename(m.group(2)))
                  for m in map(FRAME.match, sample.splitlines()) if m]
        if not frames:
            continue
        total += 1
        shim += is_shims(frames, wrappers)
    return shim * 1000 / PERF_HZ, total * 1000 / PERF_HZ


def profile(a, name, argv, confs, out_dir, base_ms):
    rows = []
    target = TARGET_FEW_MS if name == "few fallbacks" else round(TARGET_SHARE * base_ms, 2)
    wrappers = pass_through(a.shim)
    for n, env in confs[1:]:
        got = [shim_cpu_ms(argv, env, out_dir, wrappers) for _ in range(a.profile)]
        rows.append({"bench": "torch", "case": f"{name}: {n}, the shim's own CPU (sampled)",
                     "size": "", "unit": "ms", "value": round(statistics.median(g[0] for g in got), 2),
                     "peer": "all samples", "peer_value": round(statistics.median(g[1] for g in got), 2),
                     "runs": a.profile, "least": round(min(g[0] for g in got), 2),
                     "most": round(max(g[0] for g in got), 2), "target": target})
    return rows


def measure(a, name, argv, out_dir):
    base = {k: v for k, v in os.environ.items() if not k.startswith("FBCOUNT") and k != "LD_PRELOAD"}
    shim = dict(base, LD_PRELOAD=a.shim, FBCOUNT_QUIET="1",
                FBCOUNT_OUTPUT=os.path.join(out_dir, "fb.%p.json"))
    confs = [("no shim", base), ("preloaded", shim), ("no output", dict(shim, FBCOUNT_OUTPUT="none"))]
    one(argv, base)  # warm the page cache: the first run reads torch's libraries from disk
    wall = {n: [] for n, _ in confs}
    cpu = {n: [] for n, _ in confs}
    for _ in range(a.rounds):
        for n, env in confs:
            w, c = one(argv, env)
            wall[n].append(w)
            cpu[n].append(c)
        for f in os.listdir(out_dir):
            os.unlink(os.path.join(out_dir, f))
    rows = []
    for n, _ in confs:
        p = results.paired(wall[n], wall["no shim"])
        c = results.paired(cpu[n], cpu["no shim"])
        base_ms = statistics.median(wall["no shim"])
        row = {"bench": "torch", "case": f"{name}: {n}", "size": "", "unit": "ms",
               "value": round(statistics.median(wall[n]), 2), "peer": "no shim",
               "peer_value": round(base_ms, 2), "over_ms": round(p["over"], 2),
               "over_q1": round(p["q1"], 2), "over_q3": round(p["q3"], 2),
               "over_min": round(p["least"], 2), "cpu_over_ms": round(c["over"], 2)}
        if n != "no shim":
            row["target"] = TARGET_FEW_MS if name == "few fallbacks" else round(TARGET_SHARE * base_ms, 2)
        rows.append(row)
    if a.profile:
        rows += profile(a, name, argv, confs, out_dir, statistics.median(wall["no shim"]))
    return rows


def render(doc):
    paired = [r for r in doc["rows"] if "over_ms" in r]
    sampled = [r for r in doc["rows"] if "over_ms" not in r]
    out = [results.header(doc), "Medians over the rounds; the cost over the program alone is the median "
           "of paired differences (q1 to q3, and the least), the child's CPU time's beside it\n",
           "| case | wall (median) | over no shim | q1 to q3 | least | CPU over | target | over/target |",
           "|---|---|---|---|---|---|---|---|"]
    for r in paired:
        tgt = f"<= {r['target']:.1f} ms" if r.get("target") else "-"
        ratio = f"{r['over_ms'] / r['target']:.2f}" if r.get("target") else "-"
        out.append(f"| {r['case']} | {r['value']:.1f} ms | {r['over_ms']:.1f} ms | {r['over_q1']:.1f} to "
                   f"{r['over_q3']:.1f} ms | {r['over_min']:.1f} ms | {r['cpu_over_ms']:.1f} ms | {tgt} | "
                   f"{ratio} |")
    if sampled:
        out += ["", "The shim's own CPU time, sampled (perf, 4 kHz; samples in the shim's code and "
                "what it calls for itself, not in what its wrappers hand on; median of the runs, "
                "least and most)\n",
                "| case | shim CPU | least to most | all samples | runs | target | shim/target |",
                "|---|---|---|---|---|---|---|"]
        for r in sampled:
            out.append(f"| {r['case']} | {r['value']:.1f} ms | {r['least']:.1f} to {r['most']:.1f} ms | "
                       f"{r['peer_value']:.0f} ms | {r['runs']} | <= {r['target']:.1f} ms | "
                       f"{r['value'] / r['target']:.2f} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shim")
    ap.add_argument("--toydev")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--profile", type=int, default=0,
                    help="runs of each shim configuration sampled with perf (0: none)")
    results.bench_options(ap)
    a = ap.parse_args()
    code = results.doc_requested(a, "torch", render)
    if code is not None:
        return code
    if not a.shim or not a.toydev:
        ap.error("--shim and --toydev are required")
    rows = []
    with tempfile.TemporaryDirectory(prefix="fbcount-bench-torch-") as out_dir:
        for name, argv in programs(a):
            rows += measure(a, name, argv, out_dir)
    print(render({"device": a.device, "commit": "(this run)", "date": time.strftime("%Y-%m-%d"),
                  "rows": rows}))
    if a.json:
        results.write(a.json, a.device, rows, "tools/bench/torch/bench_torch.py " + " ".join(sys.argv[1:]),
                      time.strftime("%Y-%m-%d"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

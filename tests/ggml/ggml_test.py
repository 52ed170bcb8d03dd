"""ggml's CPU splits counted with no configuration: llama.cpp's prebuilt ggml with its Vulkan
backend (tools/deps/ggml.sh fetches the pinned npm package) runs a graph on lavapipe whose
WIN_PART Vulkan lacks. Under `fbcount run` the census must count WIN_PART as a fallback, the
SET_ROWS and CPY after it as host-resident work with the bytes each writes (the rows into the
cache, the elements of the strided view: not the tensors they are views of), leave out the
SCALE the graph holds but does not compute, and count every copy the scheduler's own account
(GGML_SCHED_DEBUG=2) lists, once per compute, by direction and split, at the driver's line
that called the scheduler; the program's output must not change. Exits 77, saying why, where
no Vulkan device is found.
  usage: ggml_test.py FBCOUNT DRIVER DRIVER_SOURCE GGML_SH CACHE_DIR"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "llama"))
import sched_account  # noqa: E402 (the llama tests' reader of the scheduler's account)

FBCOUNT, DRIVER, SOURCE, GGML_SH, CACHE = sys.argv[1:6]
COMPUTES = 5
failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


fetch = subprocess.run(["bash", GGML_SH, CACHE], capture_output=True, text=True, timeout=600)
if fetch.returncode != 0:
    print(f"ggml: cannot fetch the libraries:\n{fetch.stderr}")
    sys.exit(1)
bins = fetch.stdout.strip().splitlines()[-1]
env = dict(os.environ, GGML_VK_VISIBLE_DEVICES="0")
env.pop("FBCOUNT_OUTPUT", None)
plain = subprocess.run([DRIVER, bins, str(COMPUTES)], capture_output=True, text=True, env=env,
                       timeout=300)
if plain.returncode == 77:
    print(plain.stdout.strip() or "ggml: no Vulkan device")
    sys.exit(77)
expect(plain.returncode == 0, f"the driver failed on its own: {plain.stderr[-2000:]}")
expect("WIN_PART on CPU" in plain.stdout and "SET_ROWS on CPU, CPY on CPU" in plain.stdout,
       f"the scheduler did not split as the test expects: {plain.stdout}")
line = next(n for n, t in enumerate(open(SOURCE, encoding="utf-8"), 1)
            if re.search(r"/\* DRIVER-COMPUTE \*/", t))

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "dumps")
    run = subprocess.run([FBCOUNT, "run", "-o", out, "--", DRIVER, bins, str(COMPUTES)],
                         capture_output=True, text=True, env=dict(env, GGML_SCHED_DEBUG="2"),
                         timeout=300)
    expect(run.returncode == 0, f"under fbcount run: exit {run.returncode}: {run.stderr[-2000:]}")
    expect(run.stdout == plain.stdout, "the program's output changed under the census")
    dumps = glob.glob(os.path.join(out, "*.json"))
    expect(len(dumps) == 1, f"one dump: {dumps}")
    d = json.load(open(dumps[0], encoding="utf-8")) if dumps else {}

nbytes = [int(v) for v in re.search(r"bytes (\d+) (\d+) (\d+)", plain.stdout).groups()]
sizes = re.search(r"written (\d+) (\d+); views (\d+) (\d+)", plain.stdout)
written = [int(v) for v in sizes.groups()]
account = sched_account.parse_block(run.stderr.splitlines())


def rows(kind):
    return {o["op"]: o for o in d.get(kind, [])}


def site_ok(o):
    return [(os.path.basename(s.get("file", "")), s.get("line")) for s in o["sites"]] == \
        [(os.path.basename(SOURCE), line)]


ops, host, moved, splits = rows("ops"), rows("host_ops"), rows("transfers"), rows("splits")
expect(set(ops) == {"WIN_PART"}, f"fallbacks: {sorted(ops)}")
expect(set(host) == {"SET_ROWS", "CPY"},
       f"host-resident ops (no SCALE: one ran on the GPU, one is not computed): {sorted(host)}")
for name, table, size in (("WIN_PART", ops, nbytes[1]), ("SET_ROWS", host, written[0]),
                          ("CPY", host, written[1])):
    o = table.get(name)
    if not o:
        continue
    expect(o["count"] == COMPUTES and o["backend"] == "ggml", f"{name}: {o['count']} in ggml")
    expect(o["bytes"] == COMPUTES * size, f"{name}: {o['bytes']} bytes, not {COMPUTES} x {size}")
    expect(site_ok(o), f"{name}: sites {o['sites']}, not driver.c:{line}")
expect(written[0] < written[2] and written[1] < written[3],
       f"SET_ROWS and CPY write less than the tensors their results view: {written}")
want = sched_account.expected(account, "Vulkan0", {"WIN_PART"}, cache_type_size=2)
expect(set(moved) == set(want["transfers"]),
       f"copies {sorted(moved)}, the account's {sorted(want['transfers'])}")
for label, (count, lo, hi) in want["transfers"].items():
    o = moved.get(label, {"count": 0, "bytes": 0})
    expect(o["count"] == COMPUTES * count and COMPUTES * lo <= o["bytes"] <= COMPUTES * hi,
           f"{label}: {o}; the account: {count} copies of {lo}..{hi} B a compute")
expect(all(o["backend"] == "ggml" and site_ok(o) for o in moved.values()), f"transfers: {moved}")
expect(sorted(splits) == ["CPU (fallback): SET_ROWS CPY", "CPU (fallback): WIN_PART"] and
       all(o["count"] == COMPUTES and o["ns"] > 0 for o in splits.values()),
       f"host splits, timed: {splits}")
total = d.get("total", {})
expect(total.get("transfer_bytes") == sum(o["bytes"] for o in moved.values()),
       f"total.transfer_bytes: {total}")
expect([b["name"] for b in d.get("backends", [])] == ["ggml"], f"backends: {d.get('backends')}")

print(f"{len(failures)} failure(s)" if failures else "ggml: all checks passed")
sys.exit(1 if failures else 0)

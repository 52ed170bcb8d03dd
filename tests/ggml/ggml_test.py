"""ggml's CPU splits counted with no configuration: llama.cpp's prebuilt ggml with its Vulkan
backend (tools/deps/ggml.sh fetches the pinned npm package) runs a graph on lavapipe whose
WIN_PART Vulkan lacks. Under `fbcount run` the census must count WIN_PART as a fallback, the
SET_ROWS and CPY after it as host-resident work with the bytes each writes (the rows into the
cache, the elements of the strided view: not the tensors they are views of), leave out the
SCALE the graph holds but does not compute, and count every copy the scheduler's own account
(GGML_SCHED_DEBUG=2) lists, once per compute, by direction and split, at the driver's line
that called the scheduler; the program's output must not change. With --experts, a
mixture of experts the scheduler offloads to the GPU: the copies of its used experts
(ggml_backend_tensor_set_async) count, with the bytes uploaded, not the whole weight's.
Exits 77, saying why, where no Vulkan device is found.
  usage: ggml_test.py FBCOUNT DRIVER DRIVER_SOURCE GGML_SH CACHE_DIR"""

import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "llama"))
import pinned  # noqa: E402 (the llama tests' fetch of the pinned libraries, and expect)
import sched_account  # noqa: E402 (and their reader of the scheduler's account)

FBCOUNT, DRIVER, SOURCE, GGML_SH, CACHE = sys.argv[1:6]
COMPUTES = 5
expect, failures = pinned.expect, pinned.failures


def drive(bins, env, extra):
    """The driver on its own, then under `fbcount run` with the scheduler's account: its
    output, the census and the account."""
    cmd = [DRIVER, bins, str(COMPUTES)] + extra
    plain = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if plain.returncode == 77:
        print(plain.stdout.strip() or "ggml: no Vulkan device")
        sys.exit(77)
    expect(plain.returncode == 0, f"{extra}: the driver failed on its own: {plain.stderr[-2000:]}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "dumps")
        run = subprocess.run([FBCOUNT, "run", "-o", out, "--"] + cmd, capture_output=True,
                             text=True, env=dict(env, GGML_SCHED_DEBUG="2"), timeout=300)
        expect(run.returncode == 0, f"{extra}: under fbcount run: exit {run.returncode}: "
                                    f"{run.stderr[-2000:]}")
        expect(run.stdout == plain.stdout, f"{extra}: the program's output changed")
        dumps = glob.glob(os.path.join(out, "*.json"))
        expect(len(dumps) == 1, f"{extra}: one dump: {dumps}")
        d = json.load(open(dumps[0], encoding="utf-8")) if dumps else {}
    return plain.stdout, d, sched_account.parse_block(run.stderr.splitlines())


def rows(d, kind):
    return {o["op"]: o for o in d.get(kind, [])}


def site_ok(o, line):
    return [(os.path.basename(s.get("file", "")), s.get("line")) for s in o["sites"]] == \
        [(os.path.basename(SOURCE), line)]


def check_splits(stdout, d, account, line):
    expect("WIN_PART on CPU" in stdout and "SET_ROWS on CPU, CPY on CPU" in stdout,
           f"the scheduler did not split as the test expects: {stdout}")
    nbytes = [int(v) for v in re.search(r"bytes (\d+) (\d+) (\d+)", stdout).groups()]
    sizes = re.search(r"written (\d+) (\d+); views (\d+) (\d+)", stdout)
    written = [int(v) for v in sizes.groups()]
    ops, host, moved, splits = (rows(d, k) for k in ("ops", "host_ops", "transfers", "splits"))
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
        expect(site_ok(o, line), f"{name}: sites {o['sites']}, not driver.c:{line}")
    expect(written[0] < written[2] and written[1] < written[3],
           f"SET_ROWS and CPY write less than the tensors their results view: {written}")
    want = sched_account.expected(account, "Vulkan0", {"WIN_PART"}, cache_type_size=2)
    expect(set(moved) == set(want["transfers"]),
           f"copies {sorted(moved)}, the account's {sorted(want['transfers'])}")
    for label, (count, lo, hi) in want["transfers"].items():
        o = moved.get(label, {"count": 0, "bytes": 0})
        expect(o["count"] == COMPUTES * count and COMPUTES * lo <= o["bytes"] <= COMPUTES * hi,
               f"{label}: {o}; the account: {count} copies of {lo}..{hi} B a compute")
    expect(all(o["backend"] == "ggml" and site_ok(o, line) for o in moved.values()),
           f"transfers: {moved}")
    expect(sorted(splits) == ["CPU (fallback): SET_ROWS CPY", "CPU (fallback): WIN_PART"] and
           all(o["count"] == COMPUTES and o["ns"] > 0 for o in splits.values()),
           f"host splits, timed: {splits}")
    total = d.get("total", {})
    expect(total.get("transfer_bytes") == sum(o["bytes"] for o in moved.values()),
           f"total.transfer_bytes: {total}")
    expect([b["name"] for b in d.get("backends", [])] == ["ggml"], f"backends: {d.get('backends')}")


def check_experts(stdout, d, account, line):
    m = re.search(r"MUL_MAT_ID on Vulkan0; experts uploaded (\d+) of (\d+); inputs (\d+) (\d+)",
                  stdout)
    if not expect(m, f"the experts were not offloaded to the GPU: {stdout}"):
        return
    uploaded, whole, b, ids = (int(v) for v in m.groups())
    expect(uploaded < whole, f"the experts uploaded are the whole weight: {stdout}")
    want = sched_account.expected(account, "Vulkan0", set())
    moved = rows(d, "transfers")
    expect(list(want["transfers"]) == ["host -> Vulkan0 (split 0)"] and
           list(moved) == list(want["transfers"]),
           f"copies {sorted(moved)}, the account's {sorted(want['transfers'])}")
    o = moved.get("host -> Vulkan0 (split 0)", {"count": 0, "bytes": 0})
    count = want["transfers"].get("host -> Vulkan0 (split 0)", [0])[0]
    expect(o["count"] == COMPUTES * count and o["bytes"] == COMPUTES * (uploaded + b + ids),
           f"the experts' copies: {o}; {count} a compute, {uploaded} + {b} + {ids} B")
    expect(site_ok(o, line), f"the experts' copies: sites {o.get('sites')}")
    expect(not d.get("ops") and not d.get("host_ops") and not d.get("splits"),
           f"nothing ran on the host: {d.get('ops')} {d.get('host_ops')} {d.get('splits')}")


def main():
    bins, env = pinned.fetch(GGML_SH, CACHE), pinned.environment()
    if not bins:
        return 1
    line = next(n for n, t in enumerate(open(SOURCE, encoding="utf-8"), 1)
                if re.search(r"/\* DRIVER-COMPUTE \*/", t))
    check_splits(*drive(bins, env, []), line)
    check_experts(*drive(bins, env, ["--experts"]), line)
    print(f"{len(failures)} failure(s)" if failures else "ggml: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The command on censuses of several backends (hand-made dumps in DATA/backends: libvkt,
PyTorch's CPU fallback, a declared backend that cannot read sizes, and ggml with transfers
between devices): rows kept apart by backend, the BACKEND column only where backends meet,
unknown bytes never shown as 0, transfers in every view, --by backend and --where backend= in
report, diff and check, and the program's own frames first in --by stack. Dumps of the
libvkt-only format (DATA/run1) read as before.

usage: backends_test.py FBCOUNT DATA_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

FB, DATA = (os.path.abspath(a) for a in sys.argv[1:3])
MULTI, OLD = os.path.join(DATA, "backends"), os.path.join(DATA, "run1")
failures = []


def run(*args):
    p = subprocess.run([FB] + [str(a) for a in args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def js(*args):
    code, out, err = run(*args, "--format", "json") if args[0] != "check" else run(*args, "--json")
    try:
        return code, json.loads(out)
    except ValueError:
        expect(False, f"{' '.join(map(str, args))}: not JSON ({code}): {err}")
        return code, {}


# --- report: rows per backend and op, the BACKEND column, unknown bytes --------------------
code, out, err = run("report", MULTI)
expect(code == 0 and "backends: ggml, mygpu, torch, vkt" in out, "summary names the backends:\n" + out)
expect(re.search(r"OP\s+BACKEND\s+COUNT", out), "a BACKEND column where backends meet:\n" + out)
expect(re.search(r"aten::mm\s+torch\s+3\s+\?\s+\?", out) and re.search(r"aten::mm\s+mygpu\s+2\s+\?", out),
       "one op under two backends is two rows, bytes unknown as ?:\n" + out)
expect("fallbacks: 18, 28 KiB+? left the GPU" in out and "bytes of 8 of 18 unknown" in out,
       "a sum that includes unknown bytes says so:\n" + out)
expect(not re.search(r"aten::\S+\s+\S+\s+\d+\s+0 B", out), "unknown bytes are never 0 B:\n" + out)
expect("native share, vkt: 94.3% of 106 ops" in out, "each backend's share, named:\n" + out)
expect(re.search(r"Transfers between devices, by op:\n.*\n(.*\n)?\s+host -> Vulkan0\s+ggml\s+12\s+48 KiB", out),
       "a transfers table:\n" + out)
expect("transfers: 24, 96 KiB crossed between devices in 240 µs" in out, "a transfers line:\n" + out)
code, out, err = run("report", OLD)
expect(code == 0 and "BACKEND" not in out and "Transfers" not in out and "backends:" not in out,
       "a libvkt-only census reads as before:\n" + out)

code, j = js("report", MULTI)
rows = {(r["backend"], r["op"]): r for r in j.get("fallbacks", [])}
expect(set(rows) == {("ggml", "SCALE"), ("vkt", "vkt_dot"), ("torch", "aten::gelu.out"),
                     ("torch", "aten::mm"), ("mygpu", "aten::mm")}, f"JSON rows: {sorted(rows)}")
expect(rows.get(("torch", "aten::mm"), {}).get("bytes_known") is False and
       rows[("torch", "aten::mm")].get("bytes_unknown") == 3 and "bytes_known" not in rows[("vkt", "vkt_dot")],
       f"JSON unknown bytes: {rows.get(('torch', 'aten::mm'))}")
expect(j.get("total", {}).get("transfers") == 24 and j["total"]["transfer_bytes"] == 98304 and
       j["total"].get("bytes_unknown") == {"fallbacks": 8}, f"JSON totals: {j.get('total')}")
expect(sorted(t["op"] for t in j.get("transfers", [])) == ["Vulkan0 -> host", "host -> Vulkan0"],
       f"JSON transfers: {j.get('transfers')}")
names = {b["name"]: b for b in j.get("backends", [])}
expect(set(names) == {"vkt", "torch", "mygpu", "ggml"} and names["mygpu"]["source"] == "declared"
       and names["vkt"]["counters"]["native"] == 100 and names["torch"]["counters"] is None,
       f"JSON backends: {j.get('backends')}")
code, j = js("report", OLD)
expect([b["name"] for b in j.get("backends", [])] == ["vkt"] and j.get("transfers") == [] and
       all(r.get("backend") == "vkt" for r in j.get("fallbacks", [])),
       f"an old dump's rows are libvkt's: {j.get('backends')}")

# --- --by backend, --where backend= ----------------------------------------------------------
code, out, err = run("report", "--by", "backend", MULTI)
expect(code == 0 and re.search(r"torch\s+6\s+\?\s+\?\s+4\.50 ms\s+aten::gelu\.out 3, aten::mm 3", out),
       "--by backend:\n" + out)
code, j = js("report", "--where", "backend=torch", MULTI)
expect(j.get("total", {}).get("fallbacks") == 6 and j["total"].get("host_ops") == 0 and
       j["total"].get("transfers") == 0 and {r["backend"] for r in j["fallbacks"]} == {"torch"},
       f"--where backend=torch: {j.get('total')}")
code, out, err = run("report", "--where", "backend=torch", "--where", "backend=ggml", MULTI)
expect("fallbacks: 12," in out and "backends: ggml, torch (the others left out by --where)" in out,
       "two backends kept:\n" + out)
code, out, err = run("report", "--by", "stack", "--where", "backend=vkt", "--format", "folded", MULTI)
expect(out.strip().splitlines() and all("vkt_" in line for line in out.strip().splitlines()),
       "--where backend=vkt in folded stacks:\n" + out)

# --- the program's own frames first ---------------------------------------------------------
code, out, err = run("report", "--by", "stack", MULTI)
expect("forward (model.py:8) < train (train.py:41) < <module> (train.py:50)  "
       "[folded: 5 backend, 2 interpreter]" in out,
       "--by stack: torch's, the accelerator library's (inside the site) and the "
       "interpreter's frames folded:\n" + out)
expect("vkt_dot @ forward (model.py:7)" in out and "[folded: 4 backend, 3 interpreter, 1 system]" in out,
       "--by stack: the site with its line, libc folded:\n" + out)
# The row in force is the one the process read (rules: fbr_row_in_force): a descriptor of a
# built-in row's name replaces it, here naming one more module of the backend's, so a frame of
# that module outside the site is folded as the backend's, where the built-in row leaves it
# the program's.
with tempfile.TemporaryDirectory(prefix="fbcount-rows-") as tmp:
    with open(os.path.join(MULTI, "fbcount.llama-app.5200.1.json"), encoding="utf-8") as f:
        dump = json.load(f)
    st = dump["stacks"][0]
    st["frames"].insert(3, {"symbol": "helper_decode", "module": "/opt/llama/libhelper.so",
                            "offset": "0x300"})
    dump["stacks"] = [st]
    path = os.path.join(tmp, "fbcount.llama-app.5200.1.json")
    for replaced in (False, True):
        if replaced:
            dump["backends"][0]["descriptor"] = ("name ggml\nlibrary libggml-base.so*\n"
                                                 "exit ggml_backend_graph_compute_async graph "
                                                 "read=ggml-graph\nop reader\n"
                                                 "modules libggml*.so* libhelper.so*\n")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(dump, f)
        code, out, err = run("report", "--by", "stack", tmp)
        expect(code == 0 and ("helper_decode" in out) != replaced,
               f"--by stack with the {'descriptor' if replaced else 'built-in'} row in force: "
               f"helper_decode {'folded' if replaced else 'shown'}:\n{out}{err}")
code, out, err = run("report", "--by", "stack", "--depth", "1", MULTI)
expect("forward (model.py:8) < ... 2 more  [folded" in out, "--depth 1:\n" + out)
code, out, err = run("report", "--format", "folded", "--user-only", MULTI)
expect("<module> (train.py:50);train (train.py:41);forward (model.py:8);aten::gelu.out 3" in out
       and "cpu_fallback" not in out and "Py_RunMain" not in out, "--user-only folded:\n" + out)
code, j = js("report", "--by", "stack", MULTI)
frames = [r for r in j.get("fallbacks", []) if r["op"] == "aten::gelu.out"][0]["frames"]
expect([f.get("folded") for f in frames] ==
       ["backend"] * 5 + [None, None, None, "interpreter", "interpreter"],
       f"JSON frames say what is folded: {[f.get('folded') for f in frames]}")

# --- diff and check --------------------------------------------------------------------------
code, out, err = run("diff", OLD, MULTI)
expect(code == 0 and re.search(r"appeared\s+aten::mm\s+mygpu\s+0 -> 2 \(\+2\)\s+0 B -> \? \(\?\)", out)
       and "Transfers between devices:" in out and re.search(r"transfers:\s+0 -> 24 ", out),
       "diff: backends and transfers:\n" + out)
code, j = js("diff", "--by", "backend", OLD, MULTI)
expect(code == 0 and {r["backend"]: r["change"] for r in j.get("fallbacks", [])} ==
       {"ggml": "appeared", "torch": "appeared", "mygpu": "appeared", "vkt": "shrank"},
       f"diff --by backend: {j.get('fallbacks')}")
code, out, err = run("diff", "--where", "backend=vkt", "--fail-on-increase", OLD, MULTI)
expect(code == 0 and "mygpu" not in out, f"diff --where backend=vkt: {code}\n{out}{err}")
code, out, err = run("diff", "--fail-on-increase", OLD, MULTI)
expect(code == 1 and "than before: 24 -> 18 fallbacks, 8192 -> 28672 bytes" in err,
       f"diff --fail-on-increase: {code} {err}")
code, j = js("check", "--max", "100", MULTI)
expect(code == 0 and j.get("transfers", {}).get("bytes") == 98304 and j["transfers"]["gated"] is False,
       f"check: transfers shown, not gated: {j.get('transfers')}")
sites = [s for o in j.get("not_allowed", {}).get("ops", []) for s in o["sites"]]
expect(sites and all("file" in s and "line" in s for s in sites), f"check --json sites carry file:line: {sites}")
code, out, err = run("check", "--max", "100", "--max-transfer-bytes", "64K", MULTI)
expect(code == 1 and "host -> Vulkan0 [ggml]: 12 calls, 48 KiB crossed between devices" in err,
       f"check --max-transfer-bytes gates transfers: {code}\n{err}")
code, out, err = run("check", "--where", "backend=ggml", "--max", "6", MULTI)
expect(code == 0 and "6 fallbacks not allowed" in out, f"check --where backend=ggml: {code} {out}{err}")

with tempfile.TemporaryDirectory() as tmp:  # a transfer kind the reader does not know
    d = json.load(open(os.path.join(MULTI, "fbcount.llama-app.5200.1.json")))
    d["stacks"][0]["kind"] = "teleport"
    bad = os.path.join(tmp, "bad.json")
    json.dump(d, open(bad, "w"))
    code, out, err = run("report", bad)
    expect(code == 4 and "stacks[0]: kind: expected \"fallback\", \"host_op\", \"transfer\" or "
           "\"split\"" in err,
           f"an unknown kind is named: {code} {err}")

if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("all backend checks passed")

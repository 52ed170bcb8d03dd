#!/usr/bin/env python3
"""The command against hostile input and the census rules of the newer dump fields: atomic,
no-follow output files; non-regular files refused; control characters escaped; write errors;
saturated sums; census ids, signal and checkpoint dumps; times, ranks and filters; C++ names
and source lines; defaults and conventions. Hand-made dumps only (no shim needed).

usage: cli_test.py FBCOUNT DATA_DIR
"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FB, DATA = (os.path.abspath(a) for a in sys.argv[1:3])
BASE = json.load(open(os.path.join(DATA, "run1", "fbcount.lenet.4242.1.json")))
failures = []
tmp = tempfile.mkdtemp(prefix="fbcount-cli-")


def run(*args, cwd=None, stdout=None, env=None, timeout=30):
    p = subprocess.run([FB] + [str(a) for a in args], cwd=cwd, env=env, timeout=timeout,
                       stdout=stdout or subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout or "", p.stderr


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def dump(path, **over):
    d = copy.deepcopy(BASE)
    for k, v in over.items():
        if k == "process":
            d["process"].update(v)
        else:
            d[k] = v
    os.makedirs(os.path.dirname(path), exist_ok=True)
    json.dump(d, open(path, "w"))
    return d


def folder(name):
    p = os.path.join(tmp, name)
    os.makedirs(p, exist_ok=True)
    return p


one = os.path.join(folder("one"), "a.json")
dump(one)

# --- item 10: outputs are written atomically and never through a planted link ------------
victim = os.path.join(tmp, "victim.txt")
open(victim, "w").write("precious\n")
out = os.path.join(tmp, "out.svg")
os.symlink(victim, out + ".tmp")
code, _, err = run("report", "--format", "svg", "-o", out, one)
expect(code == 0 and open(victim).read() == "precious\n",
       f"report -o: planted OUT.tmp link followed ({code}: {err})")
expect(os.path.islink(out + ".tmp"), "report -o touched the planted link")
expect(open(out).read().startswith("<?xml"), "report -o wrote no svg")
symout = os.path.join(tmp, "sym.json")
os.symlink(victim, symout + ".tmp")
code, _, err = run("symbolize", "-q", "-o", symout, one)
expect(code == 0 and open(victim).read() == "precious\n",
       f"symbolize: planted OUT.tmp link followed ({code}: {err})")
expect(json.load(open(symout))["schema"] == "fbcount/1", "symbolize wrote no dump")
# a link at the target itself is replaced, its target untouched
link = os.path.join(tmp, "link.json")
os.symlink(victim, link)
code, _, err = run("report", "--format", "json", "-o", link, one)
expect(code == 0 and open(victim).read() == "precious\n" and not os.path.islink(link),
       f"report -o LINK wrote through the link ({code}: {err})")
code, _, err = run("report", "-o", "/dev/null", one)
expect(code == 9 and "not a regular file" in err, f"report -o /dev/null: {code} {err}")
expect(not [f for f in os.listdir(tmp) if ".tmp." in f], "a temporary file was left behind")

# --- item 11: only regular files, never blocking, one line otherwise ---------------------
fifo = os.path.join(tmp, "fifo")
os.mkfifo(fifo)
for args, what in ((["check", "--allow", "/dev/zero", one], "allow /dev/zero"),
                   (["check", "--allow", fifo, one], "allow FIFO"),
                   (["check", "--allow", tmp, one], "allow directory"),
                   (["report", fifo], "dump FIFO"), (["report", "/dev/zero"], "dump /dev/zero")):
    try:
        code, _, err = run(*args, timeout=10)
        expect(code == 3 and err.count("\n") == 1 and "not a regular file" in err,
               f"{what}: exit {code}: {err}")
    except subprocess.TimeoutExpired:
        expect(False, f"{what}: hangs")
big = os.path.join(tmp, "big-allow.txt")
open(big, "w").write("vkt_dot # x\n" * 200000)
code, _, err = run("check", "--allow", big, one)
expect(code == 3 and "larger than 1 MiB" in err, f"allow file over the cap: {code} {err}")
crash = copy.deepcopy(BASE)
crash.update(reason="crash", signal=11, symbolized=False)
for st in crash["stacks"]:
    for f in st["frames"]:
        f.pop("symbol", None)
        f["module"] = fifo
crash["modules"] = [{"path": fifo, "base": "0x0", "size": 1 << 30}]
cpath = os.path.join(folder("crash"), "c.json")
json.dump(crash, open(cpath, "w"))
try:
    code, _, err = run("symbolize", "-q", "-o", os.path.join(tmp, "c.sym.json"), cpath,
                       timeout=10)
    expect(code == 0 and "not a regular file" in err, f"symbolize FIFO module: {code} {err}")
except subprocess.TimeoutExpired:
    expect(False, "symbolize hangs on a FIFO named as a module")

# --- item 12: control characters never reach the terminal --------------------------------
forged = "x\nFAKE LINE: fbcount: check: ok\x1b[2J\x07\u009b31m"
hostile = copy.deepcopy(BASE)
hostile["ops"][1]["sites"][0]["site"] = forged
hostile["ops"][1]["op"] = "vkt_\x1bdot"
hostile["stacks"][1]["frames"][2]["symbol"] = forged
hpath = os.path.join(folder("hostile"), "h.json")
json.dump(hostile, open(hpath, "w"))
hallow = os.path.join(tmp, "hallow.txt")
open(hallow, "w").write("vkt_conv # ok\n")
for args in (["report", hpath], ["report", "--by", "site", hpath],
             ["report", "--by", "stack", hpath], ["report", "--raw", hpath],
             ["report", "--format", "folded", hpath], ["check", hpath],
             ["check", "--allow", hallow, hpath], ["diff", hpath, one],
             ["diff", "--by", "site", one, hpath]):
    code, o, e = run(*args)
    text = o + e
    expect(not re.search(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]", text),
           f"{' '.join(args[:-1])}: control characters reach the terminal: {text!r}")
    expect("\nFAKE LINE" not in text, f"{' '.join(args[:-1])}: forged line: {text!r}")
    expect("\\x1b" in text or "\\x0a" in text, f"{' '.join(args[:-1])}: no escape shown")

# --- item 13: a failed write is an error with its own exit code --------------------------
if os.path.exists("/dev/full"):
    for fmt in ("text", "json", "folded", "svg"):
        with open("/dev/full", "w") as full:
            code, _, err = run("report", "--format", fmt, one, stdout=full)
        expect(code == 9 and "No space left" in err, f"report --format {fmt} >/dev/full: {code} {err}")
    for args in (["diff", one, one], ["check", "--max", "100", one], ["check", "--json", one],
                 ["report", "--help"], ["symbolize", "-o", os.path.join(tmp, "s2.json"), one]):
        with open("/dev/full", "w") as full:
            code, _, err = run(*args, stdout=full)
        expect(code == 9, f"{' '.join(args[:2])} >/dev/full: exit {code}: {err}")

# --- item 14: sums saturate, never wrap or turn negative ---------------------------------
sat = folder("saturate")
for i in range(1100):
    d = copy.deepcopy(BASE)
    d["process"]["pid"] = 10000 + i
    d["total"] = {"fallbacks": 2**53, "bytes": 2**53, "host_ops": 0}
    d["ops"] = [{"op": "vkt_dot", "count": 2**53, "bytes": 2**53, "max_bytes": 2**53,
                 "sites": [{"site": "s", "count": 2**53, "bytes": 2**53}]}]
    d["host_ops"], d["stacks"] = [], [{"kind": "fallback", "op": "vkt_dot", "site": "s",
                                       "count": 2**53, "bytes": 2**53, "frames": []}]
    json.dump(d, open(os.path.join(sat, f"d{i}.json"), "w"))
code, o, err = run("report", "--format", "json", sat)
j = json.loads(o) if code == 0 else {}
vals = [j.get("total", {}).get("fallbacks"), j.get("total", {}).get("bytes"),
        j.get("fallbacks", [{}])[0].get("count"), j.get("fallbacks", [{}])[0].get("bytes")]
expect(vals == [2**63 - 1] * 4 and j.get("saturated") is True, f"saturated json sums: {vals}")
code, o, err = run("report", sat)
expect("fallbacks: 9223372036854775807," in o and "stopped there" in o,
       "saturated text total:\n" + o[:400])
code, o, err = run("report", "--format", "folded", sat)
expect(o.strip().endswith(" 9223372036854775807"), "saturated folded weight: " + o[-200:])

# --- issue 10: censuses told apart by process.id; latest state counted once --------------
ids = folder("ids")
dump(os.path.join(ids, "ns1.json"), process={"pid": 1, "id": "a" * 32})
dump(os.path.join(ids, "ns2.json"), process={"pid": 1, "id": "b" * 32})
for n, (fb, seq, reason) in enumerate(((3, 1, "checkpoint"), (5, 2, "snapshot"),
                                       (6, 3, "signal"))):
    d = dump(os.path.join(ids, f"late{n}.json"), process={"pid": 7, "id": "c" * 32},
             seq=seq, reason=reason)
for n, exe in enumerate(("/bin/one", "/bin/two", "/bin/three")):  # three images, one pid
    dump(os.path.join(ids, f"exec{n}.json"), process={"pid": 9, "exe": exe, "id": f"{n:032x}"})
code, o, err = run("report", "--format", "json", ids)
j = json.loads(o)
expect(len(j["dumps"]) == 6 and j["superseded"] == 2,
       f"census ids: {len(j['dumps'])} censuses, {j['superseded']} superseded")
expect(j["total"]["fallbacks"] == 6 * 12, f"census ids total: {j['total']['fallbacks']}")
sig = folder("signal")
dump(os.path.join(sig, "s.json"), reason="signal", signal=15, signal_name="SIGTERM")
dump(os.path.join(sig, "k.json"), reason="checkpoint", process={"pid": 5})
code, o, err = run("report", sig)
expect("1 process ended by SIGTERM" in o, "signal dump shown:\n" + o)
expect("1 process left only a checkpoint" in o, "checkpoint dump shown:\n" + o)

# frames written once in "frame_table" (after the stacks) read as the frames they name
ft = copy.deepcopy(BASE)
table = []
for st in ft["stacks"]:
    idx = []
    for f in st["frames"]:
        if f not in table:
            table.append(f)
        idx.append(table.index(f))
    st["frames"] = idx
ft["frame_table"] = table
ftp = os.path.join(folder("ftable"), "t.json")
json.dump(ft, open(ftp, "w"))
a = run("report", "--by", "stack", "--format", "json", ftp)[1]
b = run("report", "--by", "stack", "--format", "json", one)[1]
expect(json.loads(a)["fallbacks"] == json.loads(b)["fallbacks"], "frame_table stacks differ")
ft["stacks"][0]["frames"][0] = len(table)
json.dump(ft, open(ftp, "w"))
code, _, err = run("report", ftp)
expect(code == 4 and f"stacks[0].frames[0]: frame {len(table)} is not in frame_table" in err,
       f"frame_table index out of range: {code} {err}")
# the table first, as a writer may order it, reads the same; a bad entry names its index
ft["stacks"][0]["frames"][0] = 0
first = {"frame_table": list(ft.pop("frame_table"))}
first.update(ft)
json.dump(first, open(ftp, "w"))
a = run("report", "--by", "stack", "--format", "json", ftp)[1]
expect(json.loads(a)["fallbacks"] == json.loads(b)["fallbacks"], "frame_table first: stacks differ")
first["frame_table"][1] = 7
json.dump(first, open(ftp, "w"))
code, _, err = run("report", ftp)
expect(code == 4 and "frame_table[1]: expected an object, got an integer" in err,
       f"frame_table entry not an object: {code} {err}")
first["frame_table"][1] = table[1]
with open(ftp, "w") as f:
    f.write(json.dumps(first)[:-1] + ', "frame_table": []}')
code, _, err = run("report", ftp)
expect(code == 4 and "duplicate" in err, f"frame_table twice: {code} {err}")

# --- issue 12: times, ranks, hosts, filters --------------------------------------------
timed = folder("timed")
for rank in range(3):
    d = copy.deepcopy(BASE)
    d["process"].update(pid=100 + rank, rank=rank, host=f"node{rank // 2}",
                        elapsed_ns=3_400_000_000, id=f"{rank:032x}")
    d["config"]["timing"] = "fallback"
    d["total"]["ns"], d["total"]["host_ns"] = 400_000_000, 10_000_000
    d["ops"][0].update(ns=300_000_000, max_ns=100_000_000)
    d["ops"][1].update(ns=100_000_000 * (rank + 1), max_ns=50_000_000)
    for st in d["stacks"]:
        st["ns"] = 50_000_000
    json.dump(d, open(os.path.join(timed, f"r{rank}.json"), "w"))
code, o, err = run("report", timed)
expect("fallbacks cost 1.20 s of 10.2 s of the processes' wall time (12%)" in o,
       "time share:\n" + o)
expect(re.search(r"vkt_dot\s+21\s+6\.0 KiB\s+512 B\s+600 ms", o), "TIME column:\n" + o)
code, o, err = run("report", "--sort", "time", "--format", "json", timed)
expect([r["op"] for r in json.loads(o)["fallbacks"]] == ["vkt_conv", "vkt_dot"][::-1]
       if False else [r["op"] for r in json.loads(o)["fallbacks"]] == ["vkt_conv", "vkt_dot"]
       and json.loads(o)["fallbacks"][1]["ns"] == 600_000_000, "--sort time json")
code, o, err = run("report", "--by", "rank", timed)
expect(re.search(r"^\s+2\s+12\b", o, re.M) and re.search(r"^\s+0\s+12\b", o, re.M),
       "--by rank:\n" + o)
code, o, err = run("report", "--by", "host", "--format", "json", timed)
expect(sorted((r["host"], r["count"]) for r in json.loads(o)["fallbacks"]) ==
       [("node0", 24), ("node1", 12)], "--by host json: " + o[:300])
code, o, err = run("report", "--where", "rank=1", "--format", "json", timed)
j = json.loads(o)
expect(j["total"]["fallbacks"] == 12 and j["filtered"] == 2, "--where rank=1: " + o[:200])
code, o, err = run("report", "--where", "host=node0", "--where", "pid=101", timed)
expect("fallbacks: 12," in o, "--where host= and pid=:\n" + o)
code, o, err = run("report", "--where", "colour=red", timed)
expect(code == 2 and "--where" in err, "--where bad field: " + err)
code, o, err = run("report", "--by", "process", timed)
expect("lenet[100]" in o and "lenet[102]" in o, "--by process:\n" + o)
code, o, err = run("report", "--format", "folded", "--weight", "time", timed)
expect("main;train_step;conv_backward;vkt_conv;host_result 150000000" in o,
       "folded --weight time:\n" + o)
code, o, err = run("check", "--max-time", "1s", timed)
expect(code == 1 and "1.50 s (max 1.00 s)" in err, f"check --max-time over: {code} {err}")
code, o, err = run("check", "--max-time", "1.5s", "--json", timed)
j = json.loads(o) if o else {}
expect(code == 0 and j.get("ok") is True and j["not_allowed"]["ns"] == 1_500_000_000,
       f"check --max-time --json: {code} {o} {err}")
code, o, err = run("check", "--max-time", "1s", one)
expect(code == 4 and "no times" in err, f"check --max-time on untimed dumps: {code} {err}")
code, o, err = run("diff", "--sort", "time", one, timed)
expect("fallback time:" in o and re.search(r"TIME OLD -> NEW", o), "diff times:\n" + o)

# --- issue 11: C++ names demangled, source lines, inlined and Python frames -------------
cxx = copy.deepcopy(BASE)
mangled = "_ZN5model5DenseIfE7forwardEPc.isra.0"
cxx["ops"][1]["sites"][0]["site"] = mangled
st = cxx["stacks"][1]
st["site"] = mangled
st["frames"][2] = {"ip": "0x55550000b020", "symbol": mangled, "module": "/opt/app/lenet",
                   "offset": "0xb020", "file": "/src/model.cc", "line": 187}
st["frames"].insert(2, {"ip": "0x55550000b020", "symbol": "_ZN5model4gemmEv", "file":
                        "/src/gemm.h", "line": 12, "inlined": True})
st["frames"].insert(4, {"python": True, "symbol": "train", "file": "/src/train.py",
                        "line": 42})
cpp = os.path.join(folder("cxx"), "c.json")
json.dump(cxx, open(cpp, "w"))
demangled = "model::Dense<float>::forward(char*) [clone .isra.0]"
for fmt in ("text", "folded", "svg"):
    code, o, err = run("report", "--by", "stack", "--format", fmt, cpp)
    expect(demangled.replace("<", "&lt;").replace(">", "&gt;") in o if fmt == "svg"
           else demangled in o, f"{fmt}: not demangled")
    expect(mangled not in o, f"{fmt}: mangled name shown")
    expect("train (train.py:42)" in o, f"{fmt}: Python frame without file:line")
    expect("model::gemm()" in o, f"{fmt}: inlined frame missing")
code, o, err = run("report", "--by", "stack", "--format", "folded", "--frames", "line", cpp)
expect(f"{demangled} (model.cc:187);model::gemm() (gemm.h:12);vkt_dot" in o,
       "--frames line folded:\n" + o)
code, o, err = run("report", "--by", "stack", "--format", "json", cpp)
fr = [r for r in json.loads(o)["fallbacks"] if r["site"] == mangled][0]["frames"]
expect(fr[3]["symbol"] == mangled and fr[3]["demangled"] == demangled and
       fr[2].get("inlined") is True and fr[4].get("python") is True,
       f"json frames keep raw symbols: {fr}")
long_site = "s" * 120
wide = copy.deepcopy(BASE)
wide["ops"][0]["sites"][0]["site"] = long_site
wpath = os.path.join(folder("wide"), "w.json")
json.dump(wide, open(wpath, "w"))
code, o, err = run("report", "--by", "site", wpath)
expect(long_site + " (lenet.c:88)" in o, "a name is cut when output is not a tty:\n" + o)

# --- issue 16: defaults, conventions, raw tables ----------------------------------------
cwd = folder("cwd")
code, o, err = run("report", cwd=cwd)
expect(code == 2 and "no fbcount-* folder" in err, f"report with nothing here: {code} {err}")
shutil.copytree(os.path.join(DATA, "before"), os.path.join(cwd, "fbcount-100"))
shutil.copytree(os.path.join(DATA, "after"), os.path.join(cwd, "fbcount-200"))
os.utime(os.path.join(cwd, "fbcount-100"), (1, 1))
code, o, err = run("report", cwd=cwd)
expect(code == 0 and "reading fbcount-200" in err, f"report default folder: {code} {err}")
code, o, err = run("diff", cwd=cwd)
expect(code == 0 and "fbcount-100 -> fbcount-200" in err and "appeared" in o,
       f"diff default folders: {code} {err}")
code, o, err = run("check", "--max", "1000", cwd=cwd)
expect(code == 0 and "reading fbcount-200" in err, f"check default folder: {code} {err}")
for sub in ("report", "diff", "check", "symbolize"):
    a = run("help", sub)[1]
    b = run(sub, "--help")[1]
    expect(a == b and a.startswith("usage: fbcount " + sub), f"help {sub} differs from --help")
    for v in ("-V", "--version"):
        code, o, _ = run(sub, v)
        expect(code == 0 and re.match(r"fbcount \d", o), f"{sub} {v}: {code} {o}")
code, o, _ = run("-V")
expect(code == 0 and o.startswith("fbcount "), "fbcount -V")
code, o, _ = run("report", "--raw", "--no-headings", one)
expect("fallback vkt_conv 5 2048 1024 conv_backward\\x20(lenet.c:88)\\x205" in o.splitlines(),
       "report --raw:\n" + o)
code, o, _ = run("report", "--raw", one)
expect(o.splitlines()[0] == "KIND OP COUNT BYTES LARGEST SITES", "report --raw headings:\n" + o)
code, o, _ = run("report", "--no-headings", one)
expect("COUNT" not in o and "vkt_conv" in o, "report --no-headings:\n" + o)

# --- issue 24: one policy for every file the command writes, checked once per writer ------
fifo2 = os.path.join(tmp, "fifo2")
os.mkfifo(fifo2)
for fmt in ("text", "json", "folded", "svg", "pprof", "openmetrics"):
    for target, what in (("/dev/null", "a device"), (fifo2, "a FIFO"), (tmp, "a directory")):
        try:
            code, _, err = run("report", "--format", fmt, "-o", target, one, timeout=10)
        except subprocess.TimeoutExpired:
            code, err = None, "hangs"
        expect(code == 9 and "not a regular file" in err and err.count("\n") == 1,
               f"report --format {fmt} -o {what}: {code} {err}")
    out = os.path.join(tmp, "w." + fmt)
    link = out + ".tmp"
    code, _, err = run("report", "--format", fmt, "-o", out, one)
    expect(code == 0 and os.path.isfile(out) and not [f for f in os.listdir(tmp) if ".tmp." in f],
           f"report --format {fmt} -o FILE: {code} {err}")
for target in ("/dev/null", fifo2, tmp):  # symbolize -o, written by the same module
    code, _, err = run("symbolize", "-q", "-o", target, one, timeout=10)
    expect(code == 9 and "not a regular file" in err, f"symbolize -o {target}: {code} {err}")
expect(os.stat("/dev/null").st_rdev != 0, "/dev/null is still a device")

# --- issue 24: option values are tables; an unknown one lists the valid ones -------------
for args, want in ((["report", "--by", "line"], "one of op, site, stack, shape, rank, host, process, backend"),
                   (["report", "--format", "xml"], "one of text, json, folded, svg, pprof, openmetrics"),
                   (["report", "--sort", "size"], "one of bytes, count, time"),
                   (["report", "--weight", "size"], "one of count, bytes, time"),
                   (["report", "--frames", "all"], "one of func, line"),
                   (["diff", "--by", "stack"], "one of op, site, backend"),
                   (["diff", "--format", "svg"], "one of text, json"),
                   (["run", "--mode", "loud", "--", "true"], "one of count, warn, abort")):
    code, _, err = run(*args, one)
    expect(code == 2 and want in err and err.count("\n") == 1,
           f"{' '.join(args)}: the valid values: {code} {err}")
for sub in ("report", "diff", "check"):
    code, _, err = run(sub, "--where", "colour=red", one, one)
    expect(code == 2 and "rank, pid, host, exe or backend" in err, f"{sub} --where colour: {err}")

# --- issue 23: no census is an error, never a census of zero; empty run folders skipped ----
nodump = folder("nodump")
for args in (["report", nodump], ["report", "--format", "json", nodump], ["check", nodump],
             ["diff", one, nodump], ["diff", nodump, one]):
    code, o, err = run(*args)
    expect(code == 3 and "no dump in" in err and "fallbacks: 0" not in o,
           f"{' '.join(args[:-1])} of a folder without a dump: {code} {o} {err}")
cwd2 = folder("cwd2")
shutil.copytree(os.path.join(DATA, "before"), os.path.join(cwd2, "fbcount-100"))
shutil.copytree(os.path.join(DATA, "after"), os.path.join(cwd2, "fbcount-200"))
os.mkdir(os.path.join(cwd2, "fbcount-796"))  # a failed run of an older fbcount
os.utime(os.path.join(cwd2, "fbcount-100"), (1, 1))
os.utime(os.path.join(cwd2, "fbcount-200"), (2, 2))
code, o, err = run("report", cwd=cwd2)
expect(code == 0 and "skipping fbcount-796: no dump in it" in err and "reading fbcount-200" in err,
       f"report skips an empty run folder: {code} {err}")
code, o, err = run("diff", cwd=cwd2)
expect(code == 0 and "fbcount-100 -> fbcount-200" in err and "skipping fbcount-796" in err,
       f"diff skips an empty run folder: {code} {err}")
code, o, err = run("diff", "--fail-on-increase", os.path.join(DATA, "before"),
                   os.path.join(DATA, "after"))
expect(code == 1 and "more fallbacks or bytes than before" in err and "appeared" in o,
       f"diff --fail-on-increase, bytes grew: {code} {err}")
code, o, err = run("diff", "--fail-on-increase", os.path.join(DATA, "run1"),
                   os.path.join(DATA, "before"))
expect(code == 0, f"diff --fail-on-increase, fallbacks fell: {code} {err}")

# --- issue 23: file:line in every site field; a known shape's bytes and time ---------------
code, o, err = run("check", "--json", one)
sites = [s for op in json.loads(o)["not_allowed"]["ops"] for s in op["sites"]]
expect(code == 1 and any(s.get("file") == "lenet.c" and s.get("line") == 88 for s in sites),
       f"check --json sites with file and line: {sites}")
code, o, err = run("check", one)
expect("conv_backward (lenet.c:88) (5)" in err, "check names sites with their line:\n" + err)
code, o, err = run("report", "--by", "shape", timed)
expect(re.search(r"vkt_conv f32\[8x6x5x5\]\s+15\s+6\.0 KiB\s+1\.0 KiB\s+900 ms", o),
       "report --by shape: a known shape's bytes and time:\n" + o)

# --- issue 23: an allow-file entry that names no op is named, with the closest ops ----------
names = os.path.join(tmp, "names.txt")
with open(names, "w") as f:
    f.write("conv  # the short name of vkt_conv\nvkt_dott  # a typo\n")
code, o, err = run("check", "--allow", names, one)
expect("line 2: 'vkt_dott' names no op in these dumps" in err and "vkt_dot" in err.split("vkt_dott")[1],
       "check names an allow entry of no op, with the closest:\n" + err)
expect("line 1" not in err and "vkt_conv:" not in err, "a short name allows its op:\n" + err)

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("all command checks passed")

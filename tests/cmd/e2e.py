#!/usr/bin/env python3
"""End-to-end tests of the fbcount command: every subcommand on hand-made dumps, and
`run`/`snapshot` on real processes. With the shim built (<build>/interpose/libfbcount.so)
and a program that uses libvkt, `run` and `snapshot` also go through the real shim; meson
builds both before this test, so either one missing is a failure, not a skip.

usage: e2e.py FBCOUNT DATA_DIR BUILD_ROOT
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET


# --- child mode: a stand-in program for run/snapshot mechanics -----------------------
def write_dump(path_tmpl, seq, reason, count):
    d = json.load(open(os.path.join(os.environ["E2E_DATA"], "run1",
                                    "fbcount.lenet.4242.1.json")))
    d["process"]["pid"] = os.getpid()
    d["process"]["exe"] = sys.executable
    d["seq"], d["reason"] = seq, reason
    d["ops"][0]["count"] = count
    path = path_tmpl.replace("%e", "python3").replace("%p", str(os.getpid())) \
                    .replace("%n", str(seq)).replace("%h", "box")
    with open(path + ".tmp", "w") as f:
        json.dump(d, f)
    os.rename(path + ".tmp", path)


if len(sys.argv) > 1 and sys.argv[1] == "--child":
    what = sys.argv[2]
    out = os.environ["FBCOUNT_OUTPUT"]
    if what == "env":       # report the environment run gave us, write a dump, exit 3
        json.dump({k: os.environ.get(k) for k in
                   ("LD_PRELOAD", "FBCOUNT_OUTPUT", "FBCOUNT_MODE", "FBCOUNT_ALLOW",
                    "FBCOUNT_QUIET", "FBCOUNT_RUN_LOG")}, open(sys.argv[3], "w"))
        write_dump(out, 1, "exit", 5)
        if os.fork() == 0:   # a child process writes its own dump
            write_dump(out, 1, "exit", 2)
            os._exit(0)
        os.wait()
        sys.exit(3)
    if what == "kill":      # die by a signal
        os.kill(os.getpid(), signal.SIGKILL)
    if what == "serve":     # answer SIGUSR1 with a snapshot, as the shim does
        seq = [0]

        def on_usr1(sig, frame):
            seq[0] += 1
            write_dump(out, seq[0], "snapshot", 40 + seq[0])
        signal.signal(signal.SIGUSR1, on_usr1)
        open(sys.argv[3], "w").close()
        for _ in range(600):
            time.sleep(0.05)
        sys.exit(0)
    sys.exit(99)

FB, DATA, BUILD = (os.path.abspath(a) for a in sys.argv[1:4])
SELF = os.path.abspath(__file__)
os.environ["E2E_DATA"] = DATA
failures = []


def run(*args, env=None, cwd=None, timeout=60):
    p = subprocess.run([FB] + list(args), capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def expect_rc(args, rc, needle=None, stream="any", **kw):
    code, out, err = run(*args, **kw)
    text = {"out": out, "err": err}.get(stream, out + err)
    expect(code == rc, f"{' '.join(args)}: exit {code}, expected {rc}\n{out}{err}")
    if needle:
        expect(re.search(needle, text), f"{' '.join(args)}: no /{needle}/ in:\n{text}")
    return out, err


tmp = tempfile.mkdtemp(prefix="fbcount-e2e-")
run1, before, after = (os.path.join(DATA, d) for d in ("run1", "before", "after"))

# --- help and usage ----------------------------------------------------------------
for sub in ("run", "report", "diff", "check", "snapshot", "symbolize"):
    expect_rc([sub, "--help"], 0, r"usage: fbcount " + sub + r"[\s\S]*Exit codes", "out")
expect_rc(["--help"], 0, r"Exit codes")
expect_rc([], 2)
expect_rc(["frobnicate"], 2, r"unknown command")
# Without a dump, report and diff read the newest fbcount-* folder of the working directory;
# an empty one holds none.
empty = tempfile.mkdtemp(prefix="fbcount-e2e-empty-")
expect_rc(["report"], 2, r"no fbcount-\* folder", cwd=empty)
expect_rc(["report", "--by", "colour", run1], 2, r"--by: unknown value 'colour'")
expect_rc(["report", "--bogus", run1], 2, r"unknown or incomplete option")
expect_rc(["diff", run1], 2, r"fbcount-\*", cwd=empty)
os.rmdir(empty)
expect_rc(["check", "--max-bytes", "12Q", run1], 2, r"--max-bytes")
expect_rc(["snapshot", "abc"], 2)

# --- report --------------------------------------------------------------------------
out, _ = expect_rc(["report", run1], 0, r"fallbacks: 24, 8\.0 KiB left the GPU", "out")
expect(re.search(r"vkt_dot\s+14\s+4\.0 KiB\s+512 B\s+train_step \(lenet\.c:120\) 10, eval_step 4",
                 out),
       "report: vkt_dot row:\n" + out)
expect(re.search(r"Host-resident ops[^\n]*\n[^\n]*\n\s+vkt_transpose\s+6", out),
       "report: host-resident section:\n" + out)
expect("native share: 98.3%" in out, "report: native share:\n" + out)
out, _ = expect_rc(["report", "--by", "site", "--sort", "count", "--top", "1", run1], 0)
expect("conv_backward" in out and "... 2 more" in out, "report --by site --top 1:\n" + out)
out, _ = expect_rc(["report", "--by", "stack", run1], 0)
expect("conv_backward < train_step < main  [folded: 2 backend]" in out,
       "report --by stack: the program's frames first, the backend's folded:\n" + out)
out, _ = expect_rc(["report", "--by", "shape", run1], 0)
expect(re.search(r"vkt_dot f32\[16x32\]\s+14", out), "report --by shape:\n" + out)
out, _ = expect_rc(["report", os.path.join(DATA, "snapshots")], 0)
expect("2 earlier dumps" in out and "fallbacks: 36," in out,
       "report: snapshots are not double counted:\n" + out)

out, _ = expect_rc(["report", "--format", "json", run1], 0)
j = json.loads(out)
expect(j["schema"] == "fbcount-report/1" and j["total"]["fallbacks"] == 24,
       "report json totals")
expect([r["op"] for r in j["fallbacks"]] == ["vkt_dot", "vkt_conv"], "report json order")
expect({k: j["host_ops"][0]["sites"][0].get(k) for k in ("site", "count", "bytes")} ==
       {"site": "train_step", "count": 6, "bytes": 192}, "report json host sites")

out, _ = expect_rc(["report", "--format", "folded", run1], 0)
lines = sorted(out.splitlines())
expect(lines == sorted(["main;train_step;conv_backward;vkt_conv;host_result 10",
                        "main;train_step;vkt_dot;host_result 10",
                        "main;eval_step;vkt_dot;host_result 4",
                        "main;train_step;vkt_transpose;host_resident_op 6"]),
       "folded:\n" + out)
out, _ = expect_rc(["report", "--format", "folded", "--weight", "bytes", run1], 0)
expect("main;train_step;conv_backward;vkt_conv;host_result 4096" in out,
       "folded --weight bytes:\n" + out)

svg = os.path.join(tmp, "flame.svg")
expect_rc(["report", "--format", "svg", "-o", svg, run1], 0)
try:
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    frames = root.findall(f".//{ns}g[@class='f']")
    titles = [g.find(f"{ns}title").text for g in frames]
    expect(len(frames) == 13, f"svg: {len(frames)} frames, expected 13")
    expect(any(t.startswith("vkt_dot\nop: vkt_dot\ncount: 10\nbytes: 3.0 KiB") for t in titles),
           "svg: vkt_dot tooltip: " + repr(titles))
    expect(root.find(f"{ns}script") is not None, "svg: no script")
    body = open(svg).read()
    expect(not re.search(r"(href|src)\s*=|https?://(?!www\.w3\.org/2000/svg)", body),
           "svg refers to something outside itself")
except ET.ParseError as e:
    expect(False, f"svg is not well-formed XML: {e}")
# names that are hostile to XML and to byte-wise truncation
nasty = json.load(open(os.path.join(run1, "fbcount.lenet.4242.1.json")))
weird = "a<b>&\"c' ]]> \u0001\ufffe" + "\u00e9" * 300 + "\U0001F600" * 50
nasty["stacks"][0]["frames"][2]["symbol"] = weird
nasty["stacks"][0]["op"] = weird
ndir = os.path.join(tmp, "nasty")
os.mkdir(ndir)
json.dump(nasty, open(os.path.join(ndir, "n.json"), "w"))
for fmt in ("svg", "json", "folded", "text"):
    for by in ("op", "stack"):
        code, out, err = run("report", "--format", fmt, "--by", by, ndir)
        expect(code == 0, f"nasty names, {fmt} by {by}: exit {code}: {err}")
        if fmt == "svg":
            try:
                ET.fromstring(out.encode())
            except ET.ParseError as e:
                expect(False, f"nasty names break the svg: {e}")
        if fmt == "json":
            json.loads(out)
empty = os.path.join(tmp, "empty-census")
os.mkdir(empty)
for fmt in ("text", "json", "svg"):  # no dump is no census, never a census of zero
    expect_rc(["report", "--format", fmt, empty], 3, r"no dump in .*empty-census", "err")
quiet = os.path.join(tmp, "no-fallback")
os.mkdir(quiet)
d = json.load(open(os.path.join(DATA, "run1", "fbcount.lenet.4242.1.json")))
d.update(ops=[], host_ops=[], stacks=[],
         total={"fallbacks": 0, "bytes": 0, "host_ops": 0})
json.dump(d, open(os.path.join(quiet, "q.json"), "w"))
out, _ = expect_rc(["report", "--format", "svg", quiet], 0)
ET.fromstring(out)  # a census without a fallback still gives a valid picture

# --- errors: one line, the file named, a distinct code --------------------------------
expect_rc(["report", os.path.join(tmp, "nope.json")], 3,
          r"^fbcount: report: \S*nope\.json: cannot open: No such file", "err")
bad = os.path.join(tmp, "bad.json")
open(bad, "w").write('{\n  "schema": "fbcount/1",\n  "reason": "exit",\n')
_, err = expect_rc(["report", bad], 4, r"bad\.json: line 4: truncated dump", "err")
expect(err.count("\n") == 1, "error is one line: " + err)
open(bad, "w").write('{"schema": "fbcount/1", "reason": 3}')
expect_rc(["check", bad], 4, r"bad\.json: reason: expected a string, got an integer", "err")
open(bad, "w").write("")
expect_rc(["diff", bad, run1], 4, r"bad\.json: empty file", "err")

# --- diff ------------------------------------------------------------------------------
out, _ = expect_rc(["diff", before, after], 0)
expect(re.search(r"appeared\s+vkt_window_scatter_max\s+0 -> 4 \(\+4\)\s+0 B -> 8\.0 KiB", out),
       "diff: appeared:\n" + out)
expect(re.search(r"vanished\s+vkt_dot\s+7 -> 0 \(-7\)", out), "diff: vanished:\n" + out)
expect(re.search(r"shrank\s+vkt_conv\s+5 -> 2", out), "diff: shrank:\n" + out)
expect(re.search(r"Host-resident ops:\n[^\n]*\n\s+vanished\s+vkt_transpose", out),
       "diff: host section:\n" + out)
out, _ = expect_rc(["diff", "--format", "json", before, after], 0)
j = json.loads(out)
ch = {r["op"]: r["change"] for r in j["fallbacks"]}
expect(ch == {"vkt_window_scatter_max": "appeared", "vkt_dot": "vanished",
              "vkt_conv": "shrank"}, f"diff json: {ch}")
out, _ = expect_rc(["diff", before, before], 0)
expect(out.count("no change") == 2, "diff of a census with itself:\n" + out)

# --- check -----------------------------------------------------------------------------
_, err = expect_rc(["check", run1], 1, r"over the allowance: 24 fallbacks", "err")
expect("vkt_dot: 14 calls" in err and "train_step (lenet.c:120) (10)" in err,
       "check lists ops and sites:\n" + err)
allow = os.path.join(tmp, "allow.txt")
open(allow, "w").write("# expected\nvkt_dot   # no f32 dot for odd shapes yet\n")
_, err = expect_rc(["check", "--allow", allow, run1], 1, r"10 fallbacks not allowed", "err")
expect("vkt_dot" not in err, "check: allowed op listed:\n" + err)
open(allow, "a").write("vkt_conv # 5-D\n")
expect_rc(["check", "--allow", allow, run1], 0, r"check: ok")
expect_rc(["check", "--max", "24", run1], 0)
expect_rc(["check", "--max", "23", run1], 1)
expect_rc(["check", "--max-bytes", "8K", run1], 0)
expect_rc(["check", "--max-bytes", "8191", run1], 1, r"\(max 8191 B\)")
expect_rc(["check", "--allow", allow, "--host", run1], 1, r"vkt_transpose \(host-resident\)")
expect_rc(["check", "--allow", os.path.join(tmp, "none.txt"), run1], 3, r"allow file")
expect_rc(["check", after, "--max", "6"], 0)
expect_rc(["check", empty], 3, r"no dump in")


# --- symbolize: a crash dump of raw frames in two real modules ---------------------------
def sym_addr(path, name, dynamic=False):
    out = subprocess.run(["nm"] + (["-D"] if dynamic else []) + [path], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].split("@")[0] == name:
            return int(parts[0], 16)
    return None


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


fbreal = os.path.realpath(FB)
jans = None
for cand in glob.glob("/usr/lib/*/libjansson.so.4*") + glob.glob("/usr/lib/libjansson.so.4*"):
    if sym_addr(os.path.realpath(cand), "json_loads", True):
        jans = os.path.realpath(cand)
        break
a_op, a_site = sym_addr(fbreal, "fbx_report"), jans and sym_addr(jans, "json_loads", True)
if not (a_op and a_site):
    expect(False, "symbolize: nm found no fbx_report in fbcount or json_loads in jansson")
else:
    crash = json.load(open(os.path.join(run1, "fbcount.lenet.4242.1.json")))
    crash.update(reason="crash", signal=11, symbolized=False)
    crash["config"]["op_prefix"] = ["fbx_"]
    crash["ops"] = [{"op": "(unknown)", "count": 3, "bytes": 30, "max_bytes": 10,
                     "shapes": [], "sites": [{"site": "(unknown)", "count": 3, "bytes": 30}]}]
    crash["host_ops"] = []
    crash["total"] = {"fallbacks": 3, "bytes": 30, "host_ops": 0}
    crash["stacks"] = [{"kind": "fallback", "op": "(unknown)", "site": "(unknown)",
                        "count": 3, "bytes": 30, "max_bytes": 10, "frames": [
                            {"ip": hex(0x555500000000 + a_op + 4), "module": fbreal,
                             "offset": hex(a_op + 4)},
                            {"ip": hex(0x7f0000000000 + a_site + 9), "module": jans,
                             "offset": hex(a_site + 9)},
                            {"ip": "0x10", "module": "/nonexistent/lib.so", "offset": "0x10"}]}]
    crash["modules"] = [{"path": fbreal, "base": "0x555500000000", "size": 1 << 24,
                         "build_id": build_id(fbreal)},
                        {"path": jans, "base": "0x7f0000000000", "size": 1 << 24},
                        {"path": "/nonexistent/lib.so", "base": "0x0", "size": 4096}]
    cpath = os.path.join(tmp, "fbcount.app.77.3.json")
    json.dump(crash, open(cpath, "w"))
    out, err = expect_rc(["symbolize", cpath], 0, r"fbx_report\s+3\s+30 B")
    expect("2 frames resolved" in err, "symbolize: resolved count:\n" + err)
    expect("/nonexistent/lib.so: cannot open" in err, "symbolize: missing module named")
    s = json.load(open(os.path.join(tmp, "fbcount.app.77.3.sym.json")))
    fr = s["stacks"][0]["frames"]
    expect(fr[0].get("symbol") == "fbx_report" and fr[1].get("symbol") == "json_loads"
           and "symbol" not in fr[2], f"symbolize frames: {fr}")
    expect(fr[0].get("file", "").endswith("cmd_report.c") or "file" not in fr[0],
           f"symbolize file: {fr[0]}")
    expect(s["stacks"][0]["op"] == "fbx_report" and s["stacks"][0]["site"] == "json_loads",
           "symbolize re-attribution: " + json.dumps(s["stacks"][0]))
    expect([o["op"] for o in s["ops"]] == ["fbx_report"] and s["symbolized"] is True,
           f"symbolize ops: {s['ops']}")
    # the directory now holds both: the symbolized copy is the one counted
    # bad.json is still there: report names it as skipped and reads the rest; check refuses
    expect_rc(["report", tmp], 0, r"report: skipped \S*bad\.json: empty file", "err")
    expect_rc(["check", tmp], 4, r"check: \S*bad\.json: empty file", "err")
    os.remove(bad)
    out, _ = expect_rc(["report", "--format", "json", tmp], 0)
    expect([r["op"] for r in json.loads(out)["fallbacks"]] == ["fbx_report"],
           "report prefers the symbolized copy:\n" + out)
    crash["modules"][1]["build_id"] = "00ff"
    json.dump(crash, open(cpath, "w"))
    _, err = expect_rc(["symbolize", "-q", "-o", os.path.join(tmp, "x.json"), cpath], 0,
                       r"libjansson[^:]*: build id \S+ differs", "err")
    expect("1 frame resolved" in err, "symbolize: a mismatched module stays raw:\n" + err)

# --- run: mechanics with a stand-in shim and program --------------------------------------
# an installed copy (no build tree next to it) looks at the installed path
bindir = os.path.join(tmp, "inst", "bin")
os.makedirs(bindir)
shutil.copy(FB, bindir)
env = dict(os.environ)
env.pop("FBCOUNT_SHIM", None)
code, out, err = subprocess.run([os.path.join(bindir, "fbcount"), "run", "--", "true"],
                                capture_output=True, text=True, env=env,
                                cwd=tmp).returncode, "", ""
code2 = subprocess.run([os.path.join(bindir, "fbcount"), "run", "--help"], capture_output=True,
                       text=True, env=env)
m = re.search(r"installed (\S+libfbcount\.so)", code2.stdout)
expect(m is not None, "run --help names the installed shim:\n" + code2.stdout)
if m:
    expect(code == (0 if os.path.exists(m.group(1)) else 5),
           f"installed fbcount run: exit {code} with {m.group(1)}")
env = dict(os.environ, FBCOUNT_SHIM="/nonexistent/libfbcount.so")
expect_rc(["run", "--", "true"], 5, r"libfbcount\.so not found", env=env)
standin = jans  # any loadable library stands in for the shim's mechanics
if standin:
    env = dict(os.environ, FBCOUNT_SHIM=standin, LD_PRELOAD="")
    envout = os.path.join(tmp, "env.json")
    rundir = os.path.join(tmp, "rundir")
    out, err = expect_rc(["run", "--mode", "warn", "--allow", allow, "-o", rundir, "--",
                          sys.executable, SELF, "--child", "env", envout], 3,
                         r"2 dumps from 2 processes", "err", env=env)
    e = json.load(open(envout))
    expect(e["LD_PRELOAD"] == standin and e["FBCOUNT_MODE"] == "warn"
           and e["FBCOUNT_QUIET"] == "1" and e["FBCOUNT_ALLOW"] == os.path.realpath(allow)
           and e["FBCOUNT_OUTPUT"] == os.path.realpath(rundir) + "/fbcount.%e.%p.%n.json"
           and re.fullmatch(re.escape(os.path.realpath(rundir)) + r"/\.fbcount-run\.\d+\.log",
                            e["FBCOUNT_RUN_LOG"] or ""),
           f"run environment: {e}")
    expect(re.search(r"vkt_conv\s+7\b", err), "run merges parent and child:\n" + err)
    env["LD_PRELOAD"] = "/lib/nothing-first.so"
    expect_rc(["run", "-o", rundir, "--", sys.executable, SELF, "--child", "env", envout],
              3, r"2 dumps from 2 processes", "err", env=dict(env, LD_PRELOAD=""))
    cwd = tempfile.mkdtemp(prefix="fbcount-cwd-", dir=tmp)
    # run ends as the command did: killed by SIGKILL, it raises SIGKILL (137 in a shell)
    expect_rc(["run", "--", sys.executable, SELF, "--child", "kill"], -9,
              r"died by SIGKILL", "err", env=dict(env, LD_PRELOAD=""), cwd=cwd)
    expect(not glob.glob(os.path.join(cwd, "fbcount-*")),
           "run: a run that wrote no dump leaves no folder: %s" % os.listdir(cwd))
    expect_rc(["run", "--", sys.executable, SELF, "--child", "env", envout], 3,
              r"dumps in \S+/fbcount-\d+ ", "err", env=dict(env, LD_PRELOAD=""), cwd=cwd)
    expect(len(glob.glob(os.path.join(cwd, "fbcount-*"))) == 1, "run: default directory")
    expect_rc(["run", "--", "/nonexistent/prog"], 127, r"cannot execute", env=env, cwd=tmp)
    # run --json=FILE is written by the command's one output module: a device is refused
    _, err = expect_rc(["run", "--json=/dev/null", "--", sys.executable, SELF, "--child", "env",
                        envout], 3, r"/dev/null: not a regular file", "err",
                       env=dict(env, LD_PRELOAD=""), cwd=cwd)
    expect(os.stat("/dev/null").st_rdev != 0, "run --json=/dev/null left the device alone")
    expect_rc(["run", "--mode", "loud", "--", "true"], 2, env=env, cwd=tmp)

    # --- snapshot: a process that answers SIGUSR1 like the shim, but does not run it -----
    # The census signal would kill a process without the shim, so nothing is sent to one
    # (tests/run has the snapshots of real shim processes).
    sdir = os.path.join(tmp, "snap")
    os.mkdir(sdir)
    ready = os.path.join(tmp, "ready")
    p = subprocess.Popen([sys.executable, SELF, "--child", "serve", ready], cwd=sdir,
                         env=dict(os.environ, FBCOUNT_OUTPUT="fbcount.%e.%p.%n.json"))
    for _ in range(100):
        if os.path.exists(ready):
            break
        time.sleep(0.05)
    expect_rc(["snapshot", str(p.pid)], 7, r"does not run libfbcount\.so[^\n]*nothing sent",
              "err")
    expect_rc(["snapshot", "--signal", "WINCH", str(p.pid)], 7)
    expect(p.poll() is None and not os.listdir(sdir), "snapshot sent nothing to the stand-in")
    expect_rc(["snapshot", "--signal", "TERM", str(p.pid)], 2, r"not a census signal")
    p.kill()
    p.wait()
    expect_rc(["snapshot", str(p.pid)], 7, r"no such process")
else:
    expect(False, "run/snapshot mechanics: no libjansson.so.4 to stand in for the shim")

# --- run, report, diff, check, snapshot, symbolize through the real shim ---------------
shim = os.path.join(BUILD, "interpose", "libfbcount.so")
mlp = os.environ.get("FBCOUNT_E2E_WORKLOAD") or os.path.join(BUILD, "tools", "workload", "vkt-mlp")
if not os.path.exists(shim):
    expect(False, f"real-shim runs: {shim} is not built (meson builds it before this test)")
elif not os.access(mlp, os.X_OK):
    expect(False, f"real-shim runs: {mlp} (the libvkt workload) is not built")
else:
    env = dict(os.environ)
    for k in ("FBCOUNT_SHIM", "LD_PRELOAD", "VKT_NATIVE_DISABLE", "VKT_FALLBACK_RESULT"):
        env.pop(k, None)
    slow = dict(env, VKT_NATIVE_DISABLE="dot", VKT_FALLBACK_RESULT="host")
    steps = ["--steps", "2", "--batch", "16", "--every", "1"]
    rd_a, rd_b = os.path.join(tmp, "real-dot-off"), os.path.join(tmp, "real-dot-on")
    code, out, err = run("run", "-o", rd_a, "--", mlp, *steps, env=slow, timeout=240)
    expect(code == 0, f"fbcount run vkt-mlp (dot disabled): exit {code}\n{err}")
    expect(re.search(r"vkt_dot\s+[1-9]", err), "real run: vkt_dot fallbacks counted:\n" + err)
    expect(re.search(r"host-resident ops: \d+", err), "real run: host-resident line:\n" + err)
    code, out, err = run("run", "-o", rd_b, "--", mlp, *steps, env=env, timeout=240)
    expect(code == 0, f"fbcount run vkt-mlp: exit {code}\n{err}")
    out, _ = expect_rc(["diff", rd_a, rd_b], 0, r"vanished\s+vkt_dot")
    _, err = expect_rc(["check", rd_a], 1, r"vkt_dot: \d+ calls")
    svg = os.path.join(tmp, "real.svg")
    expect_rc(["report", "--format", "svg", "-o", svg, rd_a], 0)
    try:
        ET.parse(svg)
    except ET.ParseError as e:
        expect(False, f"real svg is not well-formed: {e}")
    out, _ = expect_rc(["report", "--format", "folded", rd_a], 0)
    expect(re.search(r"vkt_dot;[^\n]* \d+$", out, re.M), "real folded has vkt_dot:\n" + out)

    # snapshot of a live process, then a crash dump symbolized afterwards
    sdir = os.path.join(tmp, "real-live")
    os.mkdir(sdir)
    live_env = dict(slow, LD_PRELOAD=shim, FBCOUNT_QUIET="1",
                    FBCOUNT_OUTPUT=os.path.join(sdir, "fbcount.%e.%p.%n.json"))
    p = subprocess.Popen([mlp, "--steps", "100000", "--batch", "16", "--every", "1000"],
                         env=live_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)
    out, _ = expect_rc(["snapshot", "--timeout", "20", str(p.pid)], 0, r"vkt_dot\s+[1-9]")
    p.send_signal(signal.SIGSEGV)
    p.wait(timeout=60)
    crashes = []
    for f in glob.glob(os.path.join(sdir, "*.json")):
        try:
            if json.load(open(f)).get("reason") == "crash":
                crashes.append(f)
        except ValueError:
            pass
    # The shim writes a crash dump on SIGSEGV; none is a failure, not a skip.
    expect(crashes, f"real symbolize: the shim wrote no crash dump on SIGSEGV in {sdir}: "
           f"{os.listdir(sdir)}")
    if crashes:
        out, err = expect_rc(["symbolize", "-o", os.path.join(tmp, "sym.json"), crashes[0]], 0)
        s = json.load(open(os.path.join(tmp, "sym.json")))
        syms = {f.get("symbol") for st in s["stacks"] for f in st["frames"]}
        expect("vkt_dot" in syms or any(o["op"] == "vkt_dot" for o in s["ops"]),
               f"real symbolize: vkt_dot not found; symbols {sorted(x for x in syms if x)}")

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all end-to-end checks passed")

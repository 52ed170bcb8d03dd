#!/usr/bin/env python3
"""When a process has a census, on real programs under the real shim:
- a process SIGKILLed at points through its exit dump always leaves a census report reads (the
  raw one, named by the command, or the named one); so does every rank of an MPI job whose
  launcher ends the others when one rank fails;
- children that end by _exit, Python multiprocessing workers included, keep their census, equal
  to the backend's own count; a forked child that never used the backend writes none;
- a call of an exit from more modules than the shim's table holds still reaches its
  definition, counted;
- fbcount.dump() writes what the process counted, or refuses where it counts nothing; the native
  share counts over the census's window (an attach) and counts refused calls (error mode);
- a --where filter that selects nothing fails (exit 18) naming what it could have matched, and
  exe= matches the program as run announced it;
- every process that loaded a backend has one, a census of 0 included, whether the backend was
  linked at start or dlopen-ed later (C, Python's vkt, PyTorch's toy device, node loading
  llama.cpp's addon), and a CI gate
  (`fbcount check --max 0`) passes a clean run; `run --json`, snapshot and attach+snapshot of
  such a process work.

usage: census_test.py FBCOUNT SHIM PROG DLAPP FAKEDL CALLERS CALLER GGML_SH GGML_CACHE [TOYDEV]
The Python cases take vkt and the toy device from PYTHONPATH and the arguments; TOYDEV is left
out where the build has no libtorch.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fleet"))
from verdict import done, expect  # noqa: E402

FB, SHIM, PROG, DLAPP, FAKEDL, CALLERS, CALLER, GGML_SH, GGML_CACHE = (
    os.path.abspath(a) for a in sys.argv[1:10])
TOYDEV = os.path.abspath(sys.argv[10]) if len(sys.argv) > 10 else None
PY = "/usr/bin/python3"  # the interpreter the build's extension modules are for
# A sanitized shim exports no loader function (hooks/entries.S), and its runtime cannot start
# late in node or in an uninstrumented python3's attach: those cases are the plain build's.
SANITIZED = os.environ.get("FBCOUNT_TEST_SANITIZED") == "1"
TORCH_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch")
WORK = tempfile.mkdtemp(prefix="fbcount-census-test.")

CLEAN_VKT = """
import numpy as np, sys, vkt
with vkt.Context() as ctx:
    a = ctx.tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    b = (a + 1).numpy()
    print("ready", flush=True)
    if sys.argv[1:] == ["wait"]:
        sys.stdin.readline()
"""

CLEAN_TORCH = """
import sys
sys.path.insert(0, sys.argv[2])
import torch
import toy as toydev
toy = toydev.load(sys.argv[1])
x = torch.ones(3, 4).to(toy)
print(float((x + x).cpu().sum()), flush=True)
print("ready", flush=True)
if sys.argv[3:] == ["wait"]:
    sys.stdin.readline()
"""


def env(**kw):
    e = dict(os.environ, GGML_VK_VISIBLE_DEVICES="0")
    for k in list(e):
        if k.startswith("FBCOUNT_") or k in ("LD_PRELOAD", "VKT_NATIVE_DISABLE"):
            del e[k]
    e["FBCOUNT_SHIM"] = SHIM
    e.update(kw)
    return e


def script(name, text):
    path = os.path.join(WORK, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def fbcount(*args, timeout=120, **kw):
    return subprocess.run([FB, *args], capture_output=True, text=True, timeout=timeout,
                          env=env(**kw))


def dumps_in(d):
    out = []
    for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if n.endswith(".json"):
            with open(os.path.join(d, n), encoding="utf-8") as f:
                out.append(json.load(f))
    return out


def gated(name, cmd):
    """A clean run of cmd under fbcount run: one census of 0, which the gate passes, and the
    same through --json."""
    out = os.path.join(WORK, name)
    r = fbcount("run", "-o", out, "--", *cmd)
    expect(r.returncode == 0, f"{name}: run exits 0 ({r.returncode}): {r.stderr[-800:]}")
    ds = dumps_in(out)
    expect(len(ds) == 1 and ds[0]["reason"] == "exit" and ds[0]["total"]["fallbacks"] == 0,
           f"{name}: one exit census of 0: {[(d['reason'], d['total']) for d in ds]}")
    c = fbcount("check", "--max", "0", out)
    expect(c.returncode == 0, f"{name}: check --max 0 passes a clean run ({c.returncode}): "
           f"{c.stdout}{c.stderr}")
    j = fbcount("run", "--json", "-o", out + "-json", "--", *cmd)
    try:
        census = json.loads(j.stdout).get("census")
    except ValueError:
        census = None
    expect(j.returncode == 0 and census is not None and census["total"]["fallbacks"] == 0,
           f"{name}: run --json has the census of 0: {j.stdout[-600:]}{j.stderr[-400:]}")


def start(cmd, **kw):
    """Starts cmd (which waits for a line on its standard input once "ready") and returns
    when it is ready; finish() lets it end."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env(**kw))
    line = p.stdout.readline()
    while line and line.strip() != "ready":
        line = p.stdout.readline()
    return p


def finish(p):
    p.stdin.close()
    p.wait(timeout=60)


def snapshot_of_clean(name, cmd):
    """A clean process preloaded answers a snapshot with a census of 0."""
    out = os.path.join(WORK, name)
    os.makedirs(out)
    p = start(cmd, LD_PRELOAD=SHIM, FBCOUNT_OUTPUT=os.path.join(out, "fb.%p.%n.json"),
              FBCOUNT_QUIET="1")
    r = fbcount("snapshot", "--timeout", "20", str(p.pid))
    expect(r.returncode == 0, f"{name}: snapshot of a clean process exits 0 ({r.returncode}): "
           f"{r.stderr[-600:]}")
    finish(p)
    reasons = sorted(d["reason"] for d in dumps_in(out))
    expect(reasons == ["exit", "snapshot"], f"{name}: a snapshot and the exit census: {reasons}")


def attach_to_clean(name, cmd):
    """A clean process started without the shim: attach, then a snapshot, then its exit."""
    out = os.path.join(WORK, name)
    p = start(cmd)
    a = fbcount("attach", "-o", out, str(p.pid), timeout=120)
    expect(a.returncode == 0, f"{name}: attach exits 0 ({a.returncode}): {a.stderr[-600:]}")
    r = fbcount("snapshot", "--timeout", "20", str(p.pid))
    expect(r.returncode == 0, f"{name}: snapshot after attach exits 0 ({r.returncode}): "
           f"{r.stderr[-600:]}")
    finish(p)
    reasons = sorted(d["reason"] for d in dumps_in(out))
    expect(reasons == ["exit", "snapshot"], f"{name}: a snapshot and the exit census after "
           f"attach: {reasons}")


NODE_ADDON = """
const m = { exports: {} };
process.dlopen(m, process.argv[2]);
console.log("addon loaded");
"""


def node_addon_has_a_census():
    """node loading llama.cpp's addon (its ggml with it) and never computing: a census of 0."""
    if SANITIZED:
        print("sanitized build: node not checked (the sanitizer's runtime cannot start in it)")
        return
    fetch = subprocess.run(["bash", GGML_SH, GGML_CACHE], capture_output=True, text=True,
                           timeout=600)
    node = shutil.which("node") or shutil.which("nodejs")
    if not expect(fetch.returncode == 0 and node, f"node and the pinned ggml (tools/deps/ggml.sh): "
                  f"{fetch.stderr[-400:]}"):
        return
    addon = os.path.join(fetch.stdout.strip(), "llama-addon.node")
    gated("node-addon", [node, script("addon.js", NODE_ADDON), addon])


def every_backend_user_has_a_census():
    vkt_py = script("clean_vkt.py", CLEAN_VKT)
    gated("c-linked", [PROG, "--native", "3"])
    gated("c-dlopen", [DLAPP, FAKEDL, "0"])
    gated("python-vkt", [PY, vkt_py])
    if SANITIZED:
        print("sanitized build: snapshots and attach of dlopen-ed backends not checked (no "
              "loader entries in a sanitized shim)")
        return
    snapshot_of_clean("python-vkt-snapshot", [PY, vkt_py, "wait"])
    if shutil.which("gdb"):
        attach_to_clean("python-vkt-attach", [PY, vkt_py, "wait"])
    else:
        expect(False, "gdb is missing (tools/deps/test-core.txt): attach is not tested")
    if TOYDEV:
        torch_py = script("clean_torch.py", CLEAN_TORCH)
        gated("python-torch", [PY, torch_py, TOYDEV, TORCH_DIR])
        snapshot_of_clean("python-torch-snapshot", [PY, torch_py, TOYDEV, TORCH_DIR, "wait"])


def wait_for_file(d, pattern_end, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        names = [n for n in os.listdir(d) if n.endswith(pattern_end)]
        if names:
            return names
    return []


def killed_during_exit(out, delay):
    """census-prog with 10,000 fallbacks over 512 stacks, SIGKILLed delay seconds after its
    raw census landed. The census on disk then, and how long the raw one took."""
    os.makedirs(out)
    p = subprocess.Popen([PROG, "--fallbacks", "10000", "--stacks", "512"],
                         stdout=subprocess.PIPE, text=True,
                         env=env(LD_PRELOAD=SHIM, FBCOUNT_QUIET="1",
                                 FBCOUNT_OUTPUT=os.path.join(out, "c.%p.json")))
    line = p.stdout.readline()
    while line and line.strip() != "ending":
        line = p.stdout.readline()
    t0 = time.monotonic()
    landed = wait_for_file(out, ".json", 10)
    t1 = time.monotonic()
    while time.monotonic() - t1 < delay:
        pass
    p.kill()
    p.wait(timeout=30)
    names = [n for n in os.listdir(out) if n.endswith(".json")]
    dump = None
    if len(names) == 1:
        with open(os.path.join(out, names[0]), encoding="utf-8") as f:
            dump = json.load(f)
    return landed, dump, (t1 - t0) * 1000


def exit_leaves_a_census_at_any_instant():
    """A process SIGKILLed at any point once its exit began (after the raw census landed,
    within about a millisecond) leaves a census readable by report: the raw one (counts and
    raw frames, named by the command) or the named one."""
    kinds, took = set(), []
    for i, delay in enumerate([0, 0, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.03, 0.1]):
        out = os.path.join(WORK, f"killed-{i}")
        landed, dump, ms = killed_during_exit(out, delay)
        took.append(ms)
        expect(landed, f"killed {delay * 1000:g} ms in: no census landed within 10 s")
        ok = dump and dump["reason"] == "exit" and dump["total"]["fallbacks"] == 10000
        expect(ok, f"killed {delay * 1000:g} ms after the raw census: one readable exit census "
               f"of 10000 fallbacks: {os.listdir(out)} {dump and dump['total']}")
        if not ok:
            continue
        kinds.add("named" if dump["symbolized"] else "raw")
        r = fbcount("report", out)
        expect(r.returncode == 0 and re.search(r"vkt_dot\s+10000", r.stdout),
               f"killed {delay * 1000:g} ms in: report reads the {kinds} census and names its "
               f"op ({r.returncode}): {r.stdout[-500:]}{r.stderr[-500:]}")
    expect(kinds == {"raw", "named"}, f"the kills met both the raw and the named census: {kinds}")
    took.sort()
    print(f"raw census on disk {took[len(took) // 2]:.2f} ms after exit began (median of "
          f"{len(took)}; {took[0]:.2f} to {took[-1]:.2f})")


def mpi_job_keeps_every_rank():
    """mpirun -np 3: rank 1 exits 3 as soon as both others began their exit; the launcher then
    ends them while they write their census. Every rank keeps one."""
    mpirun = shutil.which("mpirun")
    if not expect(mpirun, "mpirun is missing (tools/deps/test-mpi.txt: openmpi-bin)"):
        return
    out, sync = os.path.join(WORK, "mpi"), os.path.join(WORK, "mpi-sync")
    os.makedirs(sync)
    r = fbcount("run", "-o", out, "--", mpirun, "-np", "3", "--oversubscribe",
                "--allow-run-as-root", PROG, "--fallbacks", "20000", "--stacks", "2048",
                "--sync", sync, "--fail-rank", "1", "--peers", "2", timeout=240,
                FBCOUNT_QUIET="1")
    expect(r.returncode != 0, f"the job failed, as rank 1 made it ({r.returncode})")
    ranks = {}
    for d in dumps_in(out):
        ranks[d["process"].get("rank")] = (d["reason"], d["total"]["fallbacks"], d["symbolized"])
    expect(sorted(ranks) == [0, 1, 2], f"a census from every rank: {ranks}\n{r.stderr[-1500:]}")
    expect(all(ranks[k][1] == 20000 for k in (0, 2) if k in ranks) and
           ranks.get(1, (0, 0))[1] == 0, f"ranks 0 and 2 counted 20000 each, rank 1 none: {ranks}")
    left = [n for n in os.listdir(out) if ".tmp." in n]
    expect(not left, f"run leaves no temporary of a dump cut short: {left}")


MP_WORKERS = """
import json, multiprocessing as mp, os, sys
import numpy as np, vkt


def work(n):
    with vkt.Context() as ctx:
        ctx.set_native_disable("dot")
        a = ctx.tensor(np.ones((4, 4), np.float32))
        for _ in range(n):
            vkt.dot(a, a).numpy()
    return os.getpid(), sum(f for _, f, _ in vkt.stats().values())


if __name__ == "__main__":
    mp.set_start_method("fork")
    pool = mp.Pool(2)
    seen = {}
    for pid, fell in pool.map(work, [3, 4, 5, 6], chunksize=1):
        seen[pid] = max(seen.get(pid, 0), fell)
    pool.close()
    pool.join()  # the workers end as they do: os._exit, no exit handler
    print(json.dumps(seen))
"""


def censuses_by_pid(out):
    return {d["process"]["pid"]: d for d in dumps_in(out)}


def every_process_that_counted_has_its_census():
    """Children that end by _exit (C) and Python multiprocessing workers (os._exit) keep their
    census, each its own counts; a forked child that never used the backend writes none; the
    run's summary counts processes one way."""
    out = os.path.join(WORK, "children")
    r = fbcount("run", "-o", out, "--", PROG, "--fallbacks", "3", "--children", "2",
                "--child-fallbacks", "5", "--child-end", "_exit")
    ds = dumps_in(out)
    counts = sorted(d["total"]["fallbacks"] for d in ds)
    expect(counts == [3, 5, 5], f"parent 3, each _exit child 5: {counts}\n{r.stderr[-600:]}")
    expect(all(d["symbolized"] for d in ds), "run named the children's raw census in its folder")
    expect(all(d["process"].get("parent_id") for d in ds if d["total"]["fallbacks"] == 5),
           "the children's census name their parent's")
    expect("3 processes watched, 3 used a backend" in r.stderr,
           f"the summary counts the children: {r.stderr[-300:]}")
    out = os.path.join(WORK, "idle-children")
    r = fbcount("run", "-o", out, "--", PROG, "--fallbacks", "3", "--children", "2")
    ds = dumps_in(out)
    expect([d["total"]["fallbacks"] for d in ds] == [3],
           f"children that never used the backend write no census: {len(ds)} dumps")
    expect("3 processes watched, 1 used a backend" in r.stderr, f"summary: {r.stderr[-300:]}")
    script_path = script("mp_workers.py", MP_WORKERS)
    out = os.path.join(WORK, "mp")
    r = fbcount("run", "-o", out, "--", PY, script_path, timeout=300)
    try:
        told = {int(k): v for k, v in json.loads(r.stdout.strip().splitlines()[-1]).items()}
    except (ValueError, IndexError):
        told = {}
    got = {pid: d["total"]["fallbacks"] for pid, d in censuses_by_pid(out).items()}
    expect(told and all(got.get(pid) == n for pid, n in told.items()) and sum(told.values()) >= 18,
           f"each worker's census equals libvkt's own count of its fallbacks: census {got}, "
           f"libvkt {told}\n{r.stderr[-800:]}")


PY_DUMP = """
import sys
import numpy as np, vkt, fbcount
with vkt.Context() as ctx:
    ctx.set_native_disable("dot")
    a = ctx.tensor(np.ones((4, 4), np.float32))
    with fbcount.count() as c:
        vkt.dot(a, a).numpy()
    vkt.dot(a, a).numpy()
    try:
        fbcount.dump(sys.argv[1])
        print("written", c.total, sum(f for _, f, _ in vkt.stats().values()))
    except fbcount.Error:
        print("refused", c.total)
"""


def one_census_one_truth():
    """fbcount.dump() writes what the process counted, or nothing where it counts nothing; the
    native share counts over the census's window (from an attach) and counts a refused call
    (FBCOUNT_MODE=error) as the fallback the census counts."""
    path = os.path.join(WORK, "api.json")
    py = script("dump.py", PY_DUMP)
    r = subprocess.run([PY, py, path], capture_output=True, text=True, timeout=120, env=env())
    expect(r.stdout.strip() == "refused 1" and not os.path.exists(path) and
           "not recording" in r.stderr,
           f"dump() where the census does not record: refused, nothing written: {r.stdout}{r.stderr}")
    r = subprocess.run([PY, py, path], capture_output=True, text=True, timeout=120,
                       env=env(FBCOUNT="1", FBCOUNT_QUIET="1", FBCOUNT_OUTPUT="none"))
    d = json.load(open(path)) if os.path.exists(path) else {}
    expect(r.stdout.strip() == "written 1 2" and d.get("total", {}).get("fallbacks") == 2 and
           (d.get("backend") or {}).get("fallback") == 2,
           f"dump() with FBCOUNT=1: the census and libvkt's counters agree on 2: {r.stdout}"
           f"{r.stderr} {d.get('total')} {d.get('backend')}")
    # attach: 5 fallbacks before, 3 after; the census and its native share count the 3
    out = os.path.join(WORK, "attach-window")
    p = start([PROG, "--native", "4", "--fallbacks", "5", "--more", "3"])
    a = fbcount("attach", "-o", out, str(p.pid), timeout=120)
    p.stdin.write("go\n")
    finish(p)
    ds = dumps_in(out)
    d = ds[0] if len(ds) == 1 else {}
    expect(a.returncode == 0 and d.get("total", {}).get("fallbacks") == 3 and
           (d.get("backend") or {}).get("fallback") == 3 and
           (d.get("backend") or {}).get("native") == 0,
           f"attach: 3 fallbacks counted, and counters from the attach: {d.get('total')} "
           f"{d.get('backend')} {a.stderr[-300:]}")
    r = fbcount("report", out)
    expect("of 3 ops ran on the GPU (0 native, 3 fallback, 0 host-resident; counted from the "
           "attach)" in r.stdout, f"report says the share's window: {r.stdout}")
    # error mode: each fallback refused, counted by the census, never run by the backend
    out = os.path.join(WORK, "error-mode")
    r = fbcount("run", "--mode", "error", "-o", out, "--", PROG, "--native", "2",
                "--fallbacks", "4")
    ds = dumps_in(out)
    d = ds[0] if len(ds) == 1 else {}
    expect(d.get("total", {}).get("fallbacks") == 4 and d.get("backend") ==
           {"native": 2, "fallback": 4, "host": 0},
           f"error mode: 4 refused calls are 4 fallbacks in both counts: {d.get('total')} "
           f"{d.get('backend')}")
    expect("33.3% of 6 ops" in r.stderr, f"error mode's native share: {r.stderr[-500:]}")


def every_call_reaches_its_definition():
    """40 modules calling the exit themselves, more than the shim's table of callers holds:
    every call still reaches the backend and returns its result, and is counted, with one
    warning."""
    copies = []
    for i in range(40):
        path = os.path.join(WORK, f"libcaller{i}.so")
        shutil.copyfile(CALLER, path)
        copies.append(path)
    out = os.path.join(WORK, "callers")
    os.makedirs(out)
    r = subprocess.run([CALLERS, *copies], capture_output=True, text=True, timeout=60,
                       env=env(LD_PRELOAD=SHIM, FBCOUNT_QUIET="1",
                               FBCOUNT_OUTPUT=os.path.join(out, "c.json")))
    expect(r.returncode == 0 and r.stdout.strip() == "calls 40 good 40",
           f"every call reached the backend and came back: {r.stdout}{r.stderr}")
    expect(r.stderr.count("more than 32 modules call host_result") == 1,
           f"one warning: {r.stderr}")
    ds = dumps_in(out)
    expect(len(ds) == 1 and ds[0]["total"]["fallbacks"] == 40,
           f"every call counted: {[d['total'] for d in ds]}")


def filters_that_select_nothing_fail():
    """On the census of a clean Python run (every_backend_user_has_a_census's): exe= matches
    the program as run announced it (python3, whose executable is python3.11); a filter that
    selects nothing fails with its own code, naming what the field had, in check, report and
    diff alike."""
    out = os.path.join(WORK, "python-vkt")
    c = fbcount("check", "--max", "0", "--where", "exe=python3", out)
    expect(c.returncode == 0 and "in 1 dump" in c.stdout,
           f"--where exe=python3 selects the python3 process: {c.returncode} {c.stdout}{c.stderr}")
    for argv, names in ((["check", "--max", "0", "--where", "exe=pyhton3", out], "exe there: "),
                        (["check", "--max", "0", "--where", "backend=vtk", out],
                         "backend there: vkt"),
                        (["report", "--where", "host=no-such-host", out], "host there: "),
                        (["diff", "--where", "rank=0", out, out], "rank there: none")):
        r = fbcount(*argv)
        expect(r.returncode == 18 and "selects no" in r.stderr and names in r.stderr,
               f"{' '.join(argv[:4])}: exit 18 naming the filter ({r.returncode}): "
               f"{r.stdout}{r.stderr}")


def run_refuses_what_it_cannot_read():
    """run --allow with a folder, or with a file that is no allow file, is refused before the
    program runs (it would have run with nothing allowed)."""
    marker = os.path.join(WORK, "ran")
    bad = script("bad.allow", "two words here\n")
    for allow, code in ((WORK, 3), (bad, 4)):
        r = fbcount("run", "--mode", "abort", "--allow", allow, "--", "/bin/sh", "-c",
                    f"touch {marker}")
        expect(r.returncode == code and not os.path.exists(marker) and "--allow" in r.stderr,
               f"run --allow {os.path.basename(allow)}: refused before running ({r.returncode}): "
               f"{r.stderr}")


def main():
    try:
        exit_leaves_a_census_at_any_instant()
        mpi_job_keeps_every_rank()
        every_process_that_counted_has_its_census()
        every_call_reaches_its_definition()
        one_census_one_truth()
        run_refuses_what_it_cannot_read()
        every_backend_user_has_a_census()
        node_addon_has_a_census()
        filters_that_select_nothing_fail()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    done("census")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""fbcount attach and detach with real programs started without the shim (issue 22):
- a C program (the test backend) and a Python program (libvkt through the vkt package) that
  fall back when told to, over a pipe: the census counts exactly the fallbacks made after the
  attach (none before), names the user's line, says attached_at; snapshot works on it;
- attaching twice takes a snapshot instead (exit 15); detach writes the census (reason
  detach) and puts the calls back: the program's later fallbacks reach the backend, uncounted,
  no dump is written again at exit, its output and exit status are those of a run never
  attached; detach again is refused (16);
- SIGTERM while attached: the default action writes the census (reason signal) and the
  program dies by it; a handler of the program's own still runs (its exit status), after the
  census was written;
- Python: SIGTERM at its default writes the census and ends it; SIGINT, which Python handles,
  writes the census and Python's KeyboardInterrupt still ends it;
- attach --exit LIB:SYMBOL: a function the shim has no definition of (the test backend's
  vkt_dot) counted, with its time, from the attach on, and put back at the detach;
- refusals that leave the process untouched: no such pid (7), a static program (14), gdb
  missing (11), a process that was never attached to detach (16), a preloaded process (15).

usage: attach_test.py FBCOUNT SHIM LOOP STATIC_LOOP [c|python|other-user|ptrace-scope]
(other-user needs root, ptrace-scope a writable /proc/sys/kernel/yama/ptrace_scope: each
exits 77 saying why where it cannot run)
gdb is required: without it the test exits 77 saying so (tools/deps/test-core.txt lists it).
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fleet"))
from verdict import done, expect  # noqa: E402

FB, SHIM, LOOP, STATIC = (os.path.abspath(a) for a in sys.argv[1:5])
SITE = next(n for n, t in enumerate(open(os.path.join(os.path.dirname(__file__), "loop.c")), 1)
            if "ATTACH-SITE" in t)

PYPROG = """\
import sys
import numpy as np
import vkt
ctx = vkt.Context()
x = ctx.tensor(np.arange(6, dtype=np.float32)[::-1].copy())
total = 0
print("pid", __import__("os").getpid(), flush=True)
for line in sys.stdin:
    cmd, arg = line.split()
    if cmd == "fall":
        for _ in range(int(arg)):
            vkt.sort(x)  # PY-SITE
            total += 1
        print("did", arg, "total", total, flush=True)
    elif cmd == "exit":
        print("bye", flush=True)
        sys.exit(int(arg))
"""


def env_without_shim():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FBCOUNT") and k != "LD_PRELOAD"}
    env["VKT_NATIVE_DISABLE"] = "sort"
    return env


class Target:
    """A program started without the shim, driven one command a line."""

    def __init__(self, argv, env=None):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True,
                                  env=env or env_without_shim())
        first = self.p.stdout.readline()
        self.lines = [first]
        self.pid = self.p.pid

    def say(self, text):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()
        out = self.p.stdout.readline()
        self.lines.append(out)
        return out.strip()

    def end(self, code):
        self.say(f"exit {code}")
        return self.p.wait(timeout=60)


def fb(*args, env=None, timeout=120):
    p = subprocess.run([FB, *args], capture_output=True, text=True, timeout=timeout,
                       env=env or dict(os.environ, FBCOUNT_SHIM=SHIM))
    return p.returncode, p.stdout, p.stderr


def dumps(d):
    out = []
    for f in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(f) as fh:
            out.append((f, json.load(fh)))
    return out


def fallbacks(dump):
    return dump["total"]["fallbacks"]


def site_lines(dump):
    return {(s.get("file", "").split("/")[-1], s.get("line"))
            for o in dump["ops"] for s in o["sites"]}


def census_cycle(name, argv, site, tmp, env=None):
    """Attach, count, snapshot, attach again, detach; the program then runs on unchanged."""
    ref = Target(argv, env)
    ref_out = [ref.say("fall 5"), ref.say("fall 7"), ref.say("fall 3"), ref.say("fall 4")]
    ref_code = ref.end(5)
    t = Target(argv, env)
    d = os.path.join(tmp, name)
    expect(t.say("fall 5").startswith("did 5 total 5"), f"{name}: five before the attach")
    rc, out, err = fb("attach", "-o", d, str(t.pid))
    if not expect(rc == 0, f"{name}: attach exits 0 (got {rc}: {err.strip()})"):
        t.p.kill()
        return
    expect(f"process {t.pid} is counted from now; dumps in {d}" in err,
           f"{name}: attach says where the dumps go: {err.strip()}")
    expect(t.say("fall 7").startswith("did 7 total 12"), f"{name}: the program runs on")
    rc, out, err = fb("snapshot", str(t.pid))
    ds = dumps(d)
    expect(rc == 0 and len(ds) == 1, f"{name}: snapshot of the attached process ({rc}, {err})")
    if ds:
        snap = ds[0][1]
        expect(snap["reason"] == "snapshot" and fallbacks(snap) == 7,
               f"{name}: the census holds the 7 fallbacks after the attach, none of the 5 "
               f"before (got {fallbacks(snap)})")
        expect("attached_at" in snap and snap["attached_elapsed_ns"] > 0,
               f"{name}: the census says when it began counting")
        expect(site in site_lines(snap), f"{name}: the user's line {site} is named: "
               f"{site_lines(snap)}")
    rc, out, err = fb("attach", str(t.pid))
    expect(rc == 15 and "runs libfbcount.so already" in err and "snapshot" in out.lower() + err,
           f"{name}: attaching twice takes a snapshot instead (exit 15, got {rc}: {err})")
    expect(t.say("fall 3").startswith("did 3 total 15"), f"{name}: three more")
    before = {f for f, _ in dumps(d)}
    rc, out, err = fb("detach", str(t.pid))
    expect(rc == 0 and "detached; census:" in err, f"{name}: detach exits 0 ({rc}: {err})")
    new = [(f, x) for f, x in dumps(d) if f not in before]
    expect(len(new) == 1 and new[0][1]["reason"] == "detach" and fallbacks(new[0][1]) == 10,
           f"{name}: detach writes the census of the 10 since the attach: "
           f"{[(x['reason'], fallbacks(x)) for _, x in new]}")
    after = t.say("fall 4")
    expect(after.startswith("did 4 total 19"), f"{name}: the program runs on after the detach")
    if name == "c":
        expect(after.endswith("backend 19"), f"{name}: its calls reach the backend: {after}")
    rc, out, err = fb("detach", str(t.pid))
    expect(rc == 16 and "is not attached" in err and "attached and detached before" in err and
           "fbcount attach" not in err,
           f"{name}: detach again is refused, and suggests no attach that would fail ({rc}: {err})")
    listing = sorted(os.listdir(d))
    code = t.end(5)
    expect(code == ref_code == 5, f"{name}: exit status unchanged ({code}, {ref_code})")
    strip = [x.replace(str(t.pid), "PID") for x in t.lines[1:]]
    ref_strip = [x.replace(str(ref.pid), "PID") for x in ref.lines[1:]]
    expect([x.split(" backend")[0] for x in strip] == [x.split(" backend")[0] for x in ref_strip]
           and ref_out, f"{name}: output unchanged: {strip} vs {ref_strip}")
    expect(sorted(os.listdir(d)) == listing, f"{name}: nothing written after the detach")
    expect(t.p.stderr.read() == "", f"{name}: nothing on the program's stderr")


def attached(name, argv, tmp, *options):
    """A target that fell back twice, then attached to with options; (target, dump folder),
    or None (the target killed) when the attach failed."""
    t = Target(argv)
    d = os.path.join(tmp, name)
    t.say("fall 2")
    rc, _, err = fb("attach", "-o", d, *options, str(t.pid))
    if not expect(rc == 0, f"{name}: attach {' '.join(options)} ({rc}: {err})"):
        t.p.kill()
        return None
    return t, d


def declared(tmp):
    """attach --exit: the loop's calls of vkt_dot (the shim defines no vkt_dot) are counted
    from the attach, timed, at the user's line, and reach the backend again after detach."""
    name = "declared"
    got = attached(name, [LOOP], tmp, "--exit", "libfakevkt.so:vkt_dot")
    if not got:
        return
    t, d = got
    expect(t.say("fall 3").startswith("did 3 total 5 backend 5"), f"{name}: the program runs on")
    rc, _, err = fb("detach", str(t.pid))
    ds = dumps(d)
    expect(rc == 0 and len(ds) == 1, f"{name}: detach writes the census ({rc}: {err})")
    if ds:
        rows = [o for o in ds[0][1]["ops"] if o.get("backend") == "fakevkt"]
        expect(len(rows) == 1 and rows[0]["op"] == "vkt_dot" and rows[0]["count"] == 3 and
               rows[0]["ns"] > 0 and rows[0].get("bytes_known") is False,
               f"{name}: vkt_dot counted 3 times from the attach, timed, bytes unknown: {rows}")
        # The backend's own fallback, made inside the declared call, is at the user's line too:
        # the shim's entry, still on the stack, is no frame of the census.
        expect(site_lines(ds[0][1]) == {("loop.c", SITE)},
               f"{name}: every row at the user's line: {site_lines(ds[0][1])}")
    expect(t.say("fall 4").startswith("did 4 total 9 backend 9"),
           f"{name}: after the detach the calls reach the backend")
    expect(t.end(0) == 0 and len(dumps(d)) == 1, f"{name}: nothing more written after detach")


def terminate(tmp, handler):
    name = "term-handler" if handler else "term-default"
    got = attached(name, [LOOP] + (["--term-handler"] if handler else []), tmp)
    if not got:
        return
    t, d = got
    t.say("fall 4")
    t.p.send_signal(signal.SIGTERM)
    code = t.p.wait(timeout=60)
    ds = dumps(d)
    if handler:
        expect(code == 3 and t.p.stdout.readline().strip() == "term after 6",
               f"{name}: the program's own handler ran and exited 3 (got {code})")
    else:
        expect(code == -signal.SIGTERM, f"{name}: died by SIGTERM (got {code})")
    expect(len(ds) == 1 and fallbacks(ds[-1][1]) == 4,
           f"{name}: the census of the 4 after the attach was written: "
           f"{[(x['reason'], fallbacks(x)) for _, x in ds]}")
    if ds and not handler:
        expect(ds[-1][1]["reason"] == "signal", f"{name}: reason signal")


def python_signals(argv, tmp):
    """SIGTERM at its default: the census (reason signal), then death by SIGTERM. SIGINT,
    which Python handles itself: the census is written, then KeyboardInterrupt ends it as
    it would have (Python dies by SIGINT after its finalization)."""
    cases = [(signal.SIGTERM, "signal")]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        cases.append((signal.SIGINT, "snapshot"))
    else:
        print("SIGINT is ignored here (so Python installs no handler): its case is left out")
    for sig, reason in cases:
        name = f"python-{sig.name}"
        got = attached(name, argv, tmp)
        if not got:
            continue
        t, d = got
        t.say("fall 3")
        t.p.send_signal(sig)
        code = t.p.wait(timeout=60)
        expect(code == -sig, f"{name}: ended by {sig.name} as without the shim (got {code})")
        ds = dumps(d)
        expect(len(ds) == 1 and ds[0][1]["reason"] == reason and fallbacks(ds[0][1]) == 3,
               f"{name}: one census ({reason}) of the 3 after the attach: "
               f"{[(x['reason'], fallbacks(x)) for _, x in ds]}")
        if sig == signal.SIGINT:
            expect("KeyboardInterrupt" in t.p.stderr.read(), f"{name}: Python's own handler ran")


def refusals(tmp):
    rc, _, err = fb("attach", "12x")
    expect(rc == 2 and err.count("\n") == 1, f"a PID that is no number: usage error ({rc})")
    dead = subprocess.Popen(["true"])
    dead.wait()
    rc, _, err = fb("attach", str(dead.pid))
    expect(rc == 7 and "no such process" in err, f"no such process: 7 ({rc}: {err})")
    s = Target([STATIC])
    rc, _, err = fb("attach", "-o", os.path.join(tmp, "static"), str(s.pid))
    expect(rc == 14 and "static" in err and err.count("\n") == 1,
           f"a static program: 14, one line ({rc}: {err})")
    expect(not os.path.exists(os.path.join(tmp, "static")), "static: no folder left")
    expect(s.say("fall 1").startswith("did 1"), "static: the program runs on")
    s.end(0)
    t = Target([LOOP])
    rc, _, err = fb("attach", str(t.pid), env=dict(os.environ, FBCOUNT_SHIM=SHIM,
                                                   FBCOUNT_GDB="/nonexistent/gdb"))
    expect(rc == 11 and "gdb is not installed" in err, f"gdb missing: 11 ({rc}: {err})")
    rc, _, err = fb("detach", str(t.pid))
    expect(rc == 16 and "not attached" in err, f"detach of a process never attached: 16 ({rc})")
    expect(t.say("fall 1") == "did 1 total 1 backend 1", "refused: the program runs on")
    expect(t.end(0) == 0, "refused: exit status kept")
    env = env_without_shim()
    env.update(LD_PRELOAD=SHIM, FBCOUNT_OUTPUT=os.path.join(tmp, "pre", "d.%p.%n.json"),
               FBCOUNT_QUIET="1")
    os.makedirs(os.path.join(tmp, "pre"))
    p = Target([LOOP], env)
    p.say("fall 2")
    rc, out, err = fb("attach", str(p.pid))
    expect(rc == 15 and "runs libfbcount.so already" in err and "fallbacks: 2" in out,
           f"a preloaded process: a snapshot instead, 15 ({rc}: {err} {out})")
    p.end(0)


def other_user(tmp):
    """fbcount run by another user (nobody) than the target's (root): refused, 12."""
    if os.geteuid() != 0:
        print("not root: cannot run fbcount as another user than the target's; skipped")
        sys.exit(77)
    t = Target([LOOP])
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        "--inh-caps=-all", FB, "attach", "-o", os.path.join(tmp, "other"),
                        str(t.pid)], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, FBCOUNT_SHIM=SHIM))
    expect(p.returncode == 12 and "another user" in p.stderr and p.stderr.count("\n") == 1,
           f"another user's process: 12, one line ({p.returncode}: {p.stderr})")
    expect(t.say("fall 1") == "did 1 total 1 backend 1", "other user: the program runs on")
    t.end(0)


def ptrace_scope(tmp):
    path = "/proc/sys/kernel/yama/ptrace_scope"
    if not os.path.exists(path) or not os.access(path, os.W_OK):
        print(f"{path} is absent or not writable here: ptrace_scope cannot be simulated; "
              "skipped")
        sys.exit(77)
    with open(path) as f:
        old = f.read().strip()
    t = Target([LOOP])
    try:
        with open(path, "w") as f:
            f.write("3")
        rc, _, err = fb("attach", "-o", os.path.join(tmp, "scope"), str(t.pid))
        expect(rc == 13 and "ptrace_scope is 3" in err, f"ptrace_scope 3: 13 ({rc}: {err})")
    finally:
        with open(path, "w") as f:
            f.write(old)
    t.end(0)


def main():
    if not shutil.which("gdb") and not os.environ.get("FBCOUNT_GDB"):
        print("gdb is not installed (tools/deps/test-core.txt lists it): "
              "fbcount attach cannot be tested")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="fbcount-attach-")
    try:
        mode = sys.argv[5] if len(sys.argv) > 5 else "c"
        if mode == "other-user":
            other_user(tmp)
        elif mode == "ptrace-scope":
            ptrace_scope(tmp)
        elif mode == "python":
            libs = subprocess.run(["ldd", LOOP], capture_output=True, text=True).stdout
            if "libasan" in libs or "libtsan" in libs:
                print("a sanitized build: its vkt package cannot be imported by the uninstrumented "
                      "python3 (the sanitizer's runtime must come first); the plain build runs "
                      "this test")
                sys.exit(77)
            prog = os.path.join(tmp, "prog.py")
            with open(prog, "w") as f:
                f.write(PYPROG)
            line = next(n for n, t in enumerate(PYPROG.splitlines(), 1) if "PY-SITE" in t)
            census_cycle("python", [sys.executable, prog], ("prog.py", line), tmp)
            python_signals([sys.executable, prog], tmp)
        else:
            census_cycle("c", [LOOP], ("loop.c", SITE), tmp)
            declared(tmp)
            terminate(tmp, handler=False)
            terminate(tmp, handler=True)
            refusals(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done("attach")


main()

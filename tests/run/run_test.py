#!/usr/bin/env python3
"""fbcount run and snapshot with real programs under the real shim (issue 10):
- each termination signal sent to fbcount reaches the program once; the program dies by it
  with its census written (reason "signal"), fbcount prints it and dies by the same signal;
- Ctrl-C typed on a terminal (a pty whose session leader is fbcount) reaches the program
  from the terminal only; a second Ctrl-C within a second ends fbcount at once;
- `timeout -s TERM` around fbcount run; vkt-lenet interrupted mid-training;
- the program's pid and the dump directory on stderr at start; --json;
- snapshot refuses a process without the shim (it survives), honours a non-default census
  signal, refuses FBCOUNT_SIGNAL=none, and snapshots what a run supervisor watches;
  SIGUSR1 to the supervisor does the same;
- `sh -c 'ls; date; prog'` gives one dump and "N processes watched, 1 used a backend";
- -o reused (moved aside to DIR.old), --append, -o naming a file or a foreign directory;
- a run that writes no dump leaves no folder (and moves earlier dumps back); a command that
  cannot be executed is one line; --json alone is the JSON alone on standard output;
- fork, signalfd and pipe2 failing (FAIL_LIB preloaded into fbcount): exit 10, one line,
  nothing started, no folder left.

usage: run_test.py FBCOUNT SHIM RUN_PROG VKT_LENET FAIL_LIB
"""
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fleet"))
from verdict import done, expect  # noqa: E402

FB, SHIM, PROG, LENET, FAIL_LIB = (os.path.abspath(a) for a in sys.argv[1:6])


def clean_env(**kw):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("FBCOUNT_") or k in ("LD_PRELOAD", "VKT_NATIVE_DISABLE",
                                             "VKT_FALLBACK_RESULT"):
            del env[k]
    env["FBCOUNT_SHIM"] = SHIM
    env.update(kw)
    return env


def wait_for(cond, timeout=30.0):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def dumps(d):
    out = []
    for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if n.endswith(".json") and not n.startswith("."):
            try:
                out.append(json.load(open(os.path.join(d, n))))
            except ValueError:
                pass
    return out


def fallbacks(ds):
    return sum(d["total"]["fallbacks"] for d in ds)


def start_run(args, tmp, env=None, **kw):
    """fbcount run in the background, as a script would start it (no terminal)."""
    err = open(os.path.join(tmp, "stderr-%d" % time.monotonic_ns()), "w+")
    p = subprocess.Popen([FB, "run"] + args, stdout=subprocess.PIPE, stderr=err, text=True,
                         env=env or clean_env(), stdin=subprocess.DEVNULL, **kw)
    p.errfile = err
    return p


def finish(p, timeout=60):
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        expect(False, "fbcount run did not end within %d s" % timeout)
    p.errfile.seek(0)
    return p.returncode, p.errfile.read()


def ready_pid(readyfile, timeout=30):
    found = []

    def look():
        d, base = os.path.split(readyfile)
        found[:] = [n for n in os.listdir(d) if n.startswith(base + ".")]
        return bool(found)
    expect(wait_for(look, timeout), "the program never became ready")
    return int(found[0].rsplit(".", 1)[1]) if found else None


tmp = tempfile.mkdtemp(prefix="fbcount-run-")
os.chdir(tmp)
try:
    # --- each termination signal sent to fbcount alone -----------------------------------
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        name = sig.name
        # a program that counts the signals it gets: exactly one, from fbcount
        out = os.path.join(tmp, "count-" + name)
        ready = os.path.join(tmp, "ready-c-" + name)
        p = start_run(["-o", "c-" + name, "--", PROG, "--fallbacks", "4", "--sleep", "30",
                       "--ready", ready, "--count-signals", out], tmp)
        ready_pid(ready)
        p.send_signal(sig)
        rc, err = finish(p)
        got = open(out).read().split() if os.path.exists(out) else []
        expect(got == [str(int(sig)), "1"], f"{name}: the program got {got}, expected one {name}")
        expect(rc == 3, f"{name}: fbcount exits as the program did (3): {rc}\n{err}")
        expect(re.search(r"fallbacks: 4,", err), f"{name}: summary of the handled exit:\n{err}")
        # a program with default dispositions: its census is written as it dies by the signal
        ready = os.path.join(tmp, "ready-d-" + name)
        d = os.path.join(tmp, "d-" + name)
        p = start_run(["-o", d, "--", PROG, "--fallbacks", "5", "--sleep", "30", "--ready",
                       ready], tmp)
        pid = ready_pid(ready)
        first = ""
        expect(wait_for(lambda: (p.errfile.seek(0), p.errfile.readline())[1] != ""),
               "start line")
        p.errfile.seek(0)
        first = p.errfile.readline()
        expect(re.match(r"fbcount: run: run-prog is pid %d; dumps in %s\n" % (pid, re.escape(d)),
                        first), f"{name}: the start line names pid and directory: {first!r}")
        p.send_signal(sig)
        rc, err = finish(p)
        expect(rc == -sig, f"{name}: fbcount ends by {name}: {rc}\n{err}")
        expect(f"died by {name}" in err, f"{name}: the summary says how the program ended:\n{err}")
        ds = dumps(d)
        expect(len(ds) == 1 and ds[0]["reason"] == "signal" and ds[0].get("signal") == sig
               and ds[0].get("signal_name") == name and fallbacks(ds) == 5,
               f"{name}: one dump of reason signal with all 5 fallbacks: "
               f"{[(x['reason'], x.get('signal'), x['total']['fallbacks']) for x in ds]}")
        expect(re.search(r"fallbacks: 5,", err), f"{name}: the summary counts them:\n{err}")

    # --- Ctrl-C typed on a terminal ------------------------------------------------------------
    def on_terminal(args, keys, ready, linger_after=0.0, timeout=60):
        """Runs fbcount as the session leader of a new pty (default dispositions), types keys
        once the program is ready; returns (status, output, seconds from last key to end)."""
        pid, fd = pty.fork()
        if pid == 0:
            for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGPIPE, signal.SIGTERM,
                      signal.SIGHUP):
                signal.signal(s, signal.SIG_DFL)
            os.execve(FB, [FB, "run"] + args, clean_env())
        text, last, end = b"", None, time.time() + timeout
        typed = False
        while time.time() < end:
            if not typed and [n for n in os.listdir(tmp) if n.startswith(ready + ".")]:
                for i, k in enumerate(keys):
                    if i:
                        time.sleep(0.3)
                    os.write(fd, k)
                last, typed = time.time(), True
            r, _, _ = select.select([fd], [], [], 0.05)
            closed = False
            if r:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: every holder of the terminal has closed it
                    chunk = b""
                closed = not chunk
                text += chunk
            wp, status = os.waitpid(pid, 0 if closed else os.WNOHANG)
            if wp:
                try:
                    while True:
                        chunk = os.read(fd, 65536)
                        if not chunk:
                            break
                        text += chunk
                except OSError:
                    pass
                os.close(fd)
                return status, text.decode(errors="replace"), time.time() - (last or time.time())
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
        expect(False, f"fbcount on a terminal did not end: {text[-2000:]!r}")
        return None, text.decode(errors="replace"), None

    out = os.path.join(tmp, "count-tty")
    status, text, _ = on_terminal(["-o", "tty-c", "--", PROG, "--sleep", "30", "--ready",
                                   "ready-tty-c", "--count-signals", out], [b"\x03"], "ready-tty-c")
    got = open(out).read().split() if os.path.exists(out) else []
    expect(got == ["2", "1"], f"Ctrl-C: the program got {got}: one SIGINT, from the terminal only")
    expect(status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3,
           f"Ctrl-C: fbcount exits as the program did: {status}\n{text}")
    status, text, _ = on_terminal(["-o", "tty-d", "--", PROG, "--fallbacks", "6", "--sleep", "30",
                                   "--ready", "ready-tty-d"], [b"\x03"], "ready-tty-d")
    expect(status is not None and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT,
           f"Ctrl-C: fbcount ends by SIGINT: {status}\n{text}")
    ds = dumps("tty-d")
    expect(fallbacks(ds) == 6 and [x["reason"] for x in ds] == ["signal"],
           f"Ctrl-C: the census of the interrupted program: {[(x['reason'], x['total']['fallbacks']) for x in ds]}")
    expect("fallbacks: 6," in text, "Ctrl-C: the summary:\n" + text)
    status, text, after = on_terminal(["-o", "tty-2", "--", PROG, "--sleep", "30", "--ready",
                                       "ready-tty-2", "--count-signals", "count-tty-2",
                                       "--linger", "8"], [b"\x03", b"\x03"], "ready-tty-2")
    expect(status is not None and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT
           and after is not None and after < 3,
           f"second Ctrl-C: fbcount ends at once by SIGINT: {status} after {after} s\n{text}")
    expect("stopped waiting" in text, "second Ctrl-C: says the census may be partial:\n" + text)

    # --- timeout -s TERM around fbcount run ------------------------------------------------
    out = os.path.join(tmp, "count-timeout")
    p = subprocess.run(["timeout", "-s", "TERM", "3", FB, "run", "-o", "to-c", "--", PROG,
                        "--sleep", "30", "--count-signals", out], capture_output=True, text=True,
                       env=clean_env(), timeout=60)
    got = open(out).read().split() if os.path.exists(out) else []
    expect(p.returncode == 124 and got == ["15", "1"],
           f"timeout: exit {p.returncode}, the program got {got} (one SIGTERM)\n{p.stderr}")
    p = subprocess.run(["timeout", "-s", "TERM", "3", FB, "run", "-o", "to-d", "--", PROG,
                        "--fallbacks", "7", "--sleep", "30"], capture_output=True, text=True,
                       env=clean_env(), timeout=60)
    ds = dumps("to-d")
    expect(p.returncode == 124 and fallbacks(ds) == 7 and "fallbacks: 7," in p.stderr,
           f"timeout: census collected: exit {p.returncode}, {fallbacks(ds)} in dumps\n{p.stderr}")
    # timeout signals fbcount, then its own group (fbcount again): one request, not a second
    expect("stopped waiting" not in p.stderr and "died by SIGTERM" in p.stderr,
           f"timeout's two copies of SIGTERM are one, the wait is not cut short:\n{p.stderr}")

    # --- vkt-lenet interrupted mid-training ---------------------------------------------------
    env = clean_env(VKT_NATIVE_DISABLE="conv")
    p = subprocess.Popen([FB, "run", "-o", "lenet", "--", LENET, "--batch", "8", "--steps",
                          "100000", "--print-every", "1"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    steps = 0
    for line in p.stdout:
        if line.startswith("step "):
            steps += 1
            if steps == 3:
                break
    p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    ds = dumps("lenet")
    conv = sum(o["count"] for d in ds for o in d["ops"] if o["op"] == "vkt_conv")
    expect(p.returncode == -signal.SIGTERM and conv >= 15 and
           [d["reason"] for d in ds] == ["signal"],
           f"vkt-lenet + SIGTERM: exit {p.returncode}, {conv} conv fallbacks (>= 15 for 3 steps), "
           f"reasons {[d['reason'] for d in ds]}\n{err[-1500:]}")

    # --- --json ------------------------------------------------------------------------------
    p = subprocess.run([FB, "run", "-o", "js", "--json=" + os.path.join(tmp, "r.json"), "--",
                        PROG, "--fallbacks", "2", "--exit", "4"], capture_output=True, text=True,
                       env=clean_env(), timeout=60)
    j = json.load(open("r.json")) if os.path.exists("r.json") else {}
    expect(p.returncode == 4 and j.get("schema") == "fbcount-run/1" and j.get("exit_code") == 4
           and j.get("status") == {"exit": 4} and j.get("dir") == os.path.join(tmp, "js")
           and j.get("census", {}).get("total", {}).get("fallbacks") == 2
           and j.get("pid") == dumps("js")[0]["process"]["pid"],
           f"--json=FILE: {p.returncode} {j}")
    p = subprocess.run([FB, "run", "-o", "js2", "--json", "--", PROG, "--fallbacks", "3"],
                       capture_output=True, text=True, env=clean_env(), timeout=60)
    try:
        j = json.loads(p.stdout)
    except ValueError:
        j = {}
    expect(p.returncode == 0 and j.get("census", {}).get("total", {}).get("fallbacks") == 3
           and "Fallbacks (ops" not in p.stderr and re.search(r"^pid \d+$", p.stderr, re.M),
           f"--json: the JSON alone on standard output, the program's output on standard "
           f"error:\n{p.stdout}\n{p.stderr}")

    # --- runs that leave no census, and commands that cannot run --------------------------
    os.mkdir("quiet")
    p = subprocess.run([FB, "run", "--", "true"], capture_output=True, text=True, env=clean_env(),
                       timeout=60, cwd="quiet")
    expect(p.returncode == 0 and not os.listdir("quiet") and "removed" in p.stderr
           and "no dump was written" in p.stderr and "(fbcount report" not in p.stderr,
           f"a run without a dump leaves no folder: {os.listdir('quiet')}\n{p.stderr}")
    p = subprocess.run([FB, "run", "--json", "--", "true"], capture_output=True, text=True,
                       env=clean_env(), timeout=60, cwd="quiet")
    j = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
    expect(p.returncode == 0 and j.get("dir") is None and j.get("census") is None
           and not os.listdir("quiet"), f"--json of a run without a dump: {p.stdout}")
    p = subprocess.run([FB, "run", "--", "/nonexistent/prog"], capture_output=True, text=True,
                       env=clean_env(), timeout=60, cwd="quiet")
    expect(p.returncode == 127 and p.stderr.count("\n") == 1 and "cannot execute" in p.stderr
           and " is pid " not in p.stderr and not os.listdir("quiet"),
           f"run -- /nonexistent: one line, exit 127: {p.returncode} {p.stderr!r}")
    for call, err in (("fork", "Resource temporarily unavailable"),
                      ("signalfd", "Too many open files"), ("pipe2", "Too many open files")):
        marker = os.path.join(tmp, "ran-" + call)
        p = subprocess.run([FB, "run", "--", "touch", marker], capture_output=True, text=True,
                           env=clean_env(LD_PRELOAD=FAIL_LIB, FAIL_CALL=call), timeout=60,
                           cwd="quiet")
        expect(p.returncode == 10 and p.stderr.count("\n") == 1 and err in p.stderr
               and not os.path.exists(marker) and not os.listdir("quiet"),
               f"{call} failing: exit 10, one line, nothing run, no folder: {p.returncode} "
               f"{p.stderr!r} {os.listdir('quiet')}")

    # --- snapshot ----------------------------------------------------------------------------
    sl = subprocess.Popen(["sleep", "30"])
    p = subprocess.run([FB, "snapshot", str(sl.pid)], capture_output=True, text=True, timeout=30)
    time.sleep(0.3)
    expect(p.returncode == 7 and "does not run libfbcount.so" in p.stderr and sl.poll() is None,
           f"snapshot of a process without the shim: exit {p.returncode}, alive "
           f"{sl.poll() is None}: {p.stderr}")
    sl.kill()
    sl.wait()
    expect(subprocess.run([FB, "snapshot", str(sl.pid)], capture_output=True,
                          timeout=30).returncode == 7, "snapshot of a pid that is gone: 7")

    def live(sigvalue, d, n):
        env = clean_env(LD_PRELOAD=SHIM, FBCOUNT_QUIET="1",
                        FBCOUNT_OUTPUT=os.path.join(d, "fbcount.%e.%p.%n.json"))
        if sigvalue is not None:
            env["FBCOUNT_SIGNAL"] = sigvalue
        os.makedirs(d, exist_ok=True)
        ready = os.path.join(tmp, "ready-" + os.path.basename(d))
        q = subprocess.Popen([PROG, "--fallbacks", str(n), "--sleep", "30", "--ready", ready],
                             env=env, stdout=subprocess.DEVNULL)
        ready_pid(ready)
        return q

    q = live("USR2", os.path.join(tmp, "snap-usr2"), 8)
    p = subprocess.run([FB, "snapshot", "--signal", "USR1", str(q.pid)], capture_output=True,
                       text=True, timeout=30)
    expect(p.returncode == 7 and "SIGUSR2" in p.stderr and q.poll() is None,
           f"snapshot --signal USR1 of a USR2 process refused: {p.returncode} {p.stderr}")
    p = subprocess.run([FB, "snapshot", str(q.pid)], capture_output=True, text=True, timeout=30)
    expect(p.returncode == 0 and re.search(r"vkt_dot\s+8\b", p.stdout) and q.poll() is None,
           f"snapshot with FBCOUNT_SIGNAL=USR2: {p.returncode} {p.stdout} {p.stderr}")
    q.kill()
    q.wait()
    q = live("none", os.path.join(tmp, "snap-none"), 1)
    p = subprocess.run([FB, "snapshot", str(q.pid)], capture_output=True, text=True, timeout=30)
    expect(p.returncode == 7 and "FBCOUNT_SIGNAL=none" in p.stderr and q.poll() is None,
           f"snapshot with FBCOUNT_SIGNAL=none refused: {p.returncode} {p.stderr}")
    q.kill()
    q.wait()

    # a run supervisor: snapshot the processes it watches; SIGUSR1 to it does the same
    ready = os.path.join(tmp, "ready-sup")
    p = start_run(["-o", "sup", "--", PROG, "--fallbacks", "9", "--children", "1", "--sleep",
                   "30", "--ready", ready], tmp)
    expect(wait_for(lambda: len([n for n in os.listdir(tmp) if n.startswith("ready-sup.")]) == 2),
           "supervised program and child ready")
    s = subprocess.run([FB, "snapshot", str(p.pid)], capture_output=True, text=True, timeout=30)
    expect(s.returncode == 0 and s.stdout.count("fbcount: snapshot of process") == 2
           and "fallbacks: 18," in s.stdout and p.poll() is None,
           f"snapshot of a run supervisor: {s.returncode}\n{s.stdout}{s.stderr}")
    n_before = len(os.listdir("sup"))
    p.send_signal(signal.SIGUSR1)
    expect(wait_for(lambda: len(os.listdir("sup")) >= n_before + 2, 10) and p.poll() is None,
           f"SIGUSR1 to the supervisor: snapshots {os.listdir('sup')}, supervisor alive")
    p.send_signal(signal.SIGTERM)
    rc, err = finish(p)
    expect(rc == -signal.SIGTERM and "snapshot asked of 2 processes" in err,
           f"supervisor: SIGUSR1 line, ends by SIGTERM: {rc}\n{err}")
    ds = dumps("sup")
    final = [d for d in ds if d["reason"] == "signal"]
    expect(len(final) == 2 and fallbacks(final) == 18,
           f"supervisor + SIGTERM: both processes wrote their census: {[(d['reason'], d['seq']) for d in ds]}")
    expect(re.search(r"fallbacks: 18,", err), "the summary counts each process once:\n" + err)

    # --- a shell around the program: only the process that used a backend dumps -------------
    p = subprocess.run([FB, "run", "-o", "shell", "--", "sh", "-c", "ls >/dev/null; date >/dev/null; "
                        + PROG + " --fallbacks 2"], capture_output=True, text=True,
                       env=clean_env(), timeout=60)
    m = re.search(r"fbcount: (\d+) processes watched, (\d+) used a backend", p.stderr)
    expect(p.returncode == 0 and len(dumps("shell")) == 1 and m and int(m.group(1)) >= 3
           and m.group(2) == "1",
           f"sh -c 'ls; date; prog': {len(dumps('shell'))} dumps, line {m and m.group(0)}\n{p.stderr}")

    # --- -o reused, --append, bad -o ----------------------------------------------------------
    def run_o(args, n):
        p = subprocess.run([FB, "run"] + args + ["--", PROG, "--fallbacks", str(n)],
                           capture_output=True, text=True, env=clean_env(), timeout=60)
        m = re.search(r"fallbacks: (\d+),", p.stderr)
        return p, int(m.group(1)) if m else None

    def report_total(d):
        r = subprocess.run([FB, "report", "--format", "json", d], capture_output=True, text=True)
        return json.loads(r.stdout)["total"]["fallbacks"] if r.returncode == 0 else None

    p, n1 = run_o(["-o", "re"], 45)
    p, n2 = run_o(["-o", "re"], 45)
    expect(n2 == 45 and report_total("re") == 45 and "moved the previous dumps in re to re.old"
           in p.stderr and report_total("re.old") == 45,
           f"-o reused: summary {n2}, report {report_total('re')}, re.old {report_total('re.old')}\n{p.stderr}")
    chk = subprocess.run([FB, "check", "--max", "45", "re"], capture_output=True)
    expect(chk.returncode == 0, "check --max 45 agrees with the summary")
    p, n3 = run_o(["-o", "re"], 3)
    expect(n3 == 3 and report_total("re") == 3 and report_total("re.old") == 45,
           f"-o reused twice: re.old holds the previous run: {report_total('re.old')}")
    p, n4 = run_o(["-o", "re", "--append"], 4)
    expect(n4 == 7 and report_total("re") == 7 and "moved" not in p.stderr,
           f"--append: summary {n4} and report {report_total('re')} both 7\n{p.stderr}")
    # a run that writes nothing into a reused -o moves the earlier dumps back
    p = subprocess.run([FB, "run", "-o", "re", "--", "true"], capture_output=True, text=True,
                       env=clean_env(), timeout=60)
    expect(p.returncode == 0 and report_total("re") == 7 and report_total("re.old") is None
           and "moved" in p.stderr, f"the earlier dumps moved back: {p.stderr}")
    open("afile", "w").close()
    marker = os.path.join(tmp, "ran")
    p = subprocess.run([FB, "run", "-o", "afile", "--", "touch", marker], capture_output=True,
                       text=True, env=clean_env(), timeout=60)
    expect(p.returncode == 2 and "exists and is not a directory" in p.stderr
           and not os.path.exists(marker), f"-o naming a file: {p.returncode} {p.stderr}")
    os.mkdir("mine")
    open("mine/notes.txt", "w").write("x")
    p = subprocess.run([FB, "run", "-o", "mine", "--", "touch", marker], capture_output=True,
                       text=True, env=clean_env(), timeout=60)
    expect(p.returncode == 2 and "notes.txt" in p.stderr and not os.path.exists(marker)
           and os.path.exists("mine/notes.txt") and not os.path.exists("mine.old"),
           f"-o naming a directory of other files: {p.returncode} {p.stderr}")
    p = subprocess.run([FB, "run", "--append", "--", "true"], capture_output=True, text=True,
                       env=clean_env(), timeout=60)
    expect(p.returncode == 2, "--append without -o is a usage error")
finally:
    os.chdir("/")
    shutil.rmtree(tmp, ignore_errors=True)

done("run")

"""Exits declared by name, end to end: `fbcount run --exit LIB:SYMBOL`, FBCOUNT_EXIT with
several exits, and a descriptor given with --backend count every call of a function the shim
has no definition of, exactly, at the user's line, whatever its signature (8 integer and 8
float arguments, 30 stack arguments, structs in two registers and on the stack (512 bytes),
variadic, longjmp and a C++ exception out of it), with its time (none for a call that leaves
by longjmp or exception, nor for one on a coroutine's stack, which the entry cannot copy
arguments from safely, but counted), in the program, in a module dlopen-ed later RTLD_LOCAL, and on 8
threads while modules come and go; dlopen and dlsym, redirected to see those modules, still
see the program as their caller ($ORIGIN, RTLD_NEXT); the program's output and exit status
never change; a bad spec is one warning and the program runs unchanged.
  usage: declared_test.py FBCOUNT SHIM APP APP_SOURCE CALLER CALLER_SOURCE"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

FBCOUNT, SHIM, APP, APP_SRC, CALLER, CALLER_SRC = sys.argv[1:7]
SANITIZED = "ASAN_OPTIONS" in os.environ  # set by tests/meson.build in a sanitized build
failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def line_of(source, mark):
    return next(n for n, t in enumerate(open(source, encoding="utf-8"), 1) if mark in t)


def plain(*args):
    return subprocess.run([APP, *args], capture_output=True, text=True, timeout=120)


def under(tmp, args, exits=(), env_exits=None, backend=None):
    """The app under `fbcount run`; returns (process, dump or {})."""
    out = os.path.join(tmp, f"d{len(os.listdir(tmp))}")
    cmd = [FBCOUNT, "run", "-o", out]
    for e in exits:
        cmd += ["--exit", e]
    if backend:
        cmd += ["--backend", backend]
    env = dict(os.environ)
    env.pop("FBCOUNT_EXIT", None)
    if env_exits is not None:
        env["FBCOUNT_EXIT"] = env_exits
    p = subprocess.run(cmd + ["--", APP, *args], capture_output=True, text=True, env=env,
                       timeout=240)
    dumps = glob.glob(os.path.join(out, "*.json"))
    return p, (json.load(open(dumps[0], encoding="utf-8")) if len(dumps) == 1 else {})


def ops(d):
    return {o["op"]: o for o in d.get("ops", [])}


def check(name, d, op, count, source, mark, timed=None):
    o = ops(d).get(op)
    expect(o is not None, f"{name}: no row for {op}: {sorted(ops(d))}")
    if not o:
        return
    want = [(os.path.basename(source), line_of(source, mark))]
    got = [(os.path.basename(s.get("file", "")), s.get("line")) for s in o["sites"]]
    expect(o["count"] == count, f"{name}: {op} counted {o['count']}, not {count}")
    expect(got == want, f"{name}: {op} at {got}, not {want}")
    expect(o.get("bytes_known") is False, f"{name}: {op}: bytes must be unknown: {o}")
    if timed is not None:
        expect((o["ns"] > 0 and o["max_ns"] > 0) == timed and (o["ns"] == 0) != timed,
               f"{name}: {op}: time {o['ns']} ns (max {o['max_ns']}), "
               f"{'measured' if timed else 'none'} expected")


SHAPES = {"odd_mixed": "SITE-MIXED", "odd_pair": "SITE-PAIR", "odd_dpair": "SITE-DPAIR",
          "odd_big": "SITE-BIG", "odd_sum": "SITE-SUM", "odd_many": "SITE-MANY",
          "odd_huge": "SITE-HUGE", "odd_jump": "SITE-JUMP"}

with tempfile.TemporaryDirectory() as tmp:
    # One exit, by --exit.
    base = plain("ints", "50")
    expect(base.returncode == 0, f"the app alone: {base.returncode} {base.stderr}")
    p, d = under(tmp, ["ints", "50"], exits=["liboddlib.so:odd_ints"])
    expect(p.returncode == 0 and p.stdout == base.stdout,
           f"--exit: exit {p.returncode}, output {p.stdout!r} not {base.stdout!r}\n{p.stderr}")
    check("--exit", d, "odd_ints", 50, APP_SRC, "SITE-INTS")
    expect(set(ops(d)) == {"odd_ints"}, f"--exit: rows {sorted(ops(d))}")

    # Every odd shape, results and exceptions checked by the app itself.
    n = 7
    base = plain("shapes", str(n))
    expect(base.returncode == 0, f"shapes alone: {base.returncode} {base.stderr}")
    exits = [f"liboddlib.so:{s}" for s in SHAPES] + ["liboddthrow.so:odd_throw"]
    p, d = under(tmp, ["shapes", str(n)], exits=exits)
    expect(p.returncode == 0 and p.stdout == base.stdout,
           f"shapes: exit {p.returncode}, output {p.stdout!r} not {base.stdout!r}\n{p.stderr}")
    for op, mark in SHAPES.items():
        check("shapes", d, op, n, APP_SRC, mark, timed=op != "odd_jump")
    check("shapes", d, "odd_throw", n, APP_SRC, "SITE-THROW", timed=False)

    # The time of each call: 12 calls of a 3 ms sleep.
    p, d = under(tmp, ["sleep", "3000", "12"], exits=["liboddlib.so:odd_sleep"])
    expect(p.returncode == 0, f"sleep: exit {p.returncode}\n{p.stderr}")
    check("sleep", d, "odd_sleep", 12, APP_SRC, "SITE-SLEEP", timed=True)
    o = ops(d).get("odd_sleep", {})
    expect(36e6 <= o.get("ns", 0) < 36e6 * 10 and 3e6 <= o.get("max_ns", 0) < 3e6 * 10,
           f"sleep: 12 x 3 ms took {o.get('ns')} ns, the longest {o.get('max_ns')} ns")

    # A coroutine's stack ending at an unmapped page: the entry must not read past it.
    base = plain("coro", "40")
    p, d = under(tmp, ["coro", "40"], exits=["liboddlib.so:odd_ints"])
    expect(p.returncode == 0 and p.stdout == base.stdout,
           f"coro: exit {p.returncode}, output {p.stdout!r} not {base.stdout!r}\n{p.stderr}")
    check("coro", d, "odd_ints", 40, APP_SRC, "SITE-CORO", timed=False)

    # FBCOUNT_EXIT with two exits; the others are not counted.
    p, d = under(tmp, ["shapes", "3"], env_exits="liboddlib.so:odd_pair,liboddlib.so:odd_sum")
    expect(p.returncode == 0, f"FBCOUNT_EXIT: exit {p.returncode}\n{p.stderr}")
    check("FBCOUNT_EXIT", d, "odd_pair", 3, APP_SRC, "SITE-PAIR")
    check("FBCOUNT_EXIT", d, "odd_sum", 3, APP_SRC, "SITE-SUM")
    expect(set(ops(d)) == {"odd_pair", "odd_sum"}, f"FBCOUNT_EXIT: rows {sorted(ops(d))}")

    # A module dlopen-ed later, RTLD_LOCAL: redirected before dlsym returns.
    base = plain("dl", CALLER, "30")
    p, d = under(tmp, ["dl", CALLER, "30"], exits=["liboddlib.so:odd_ints"])
    expect(p.returncode == 0 and p.stdout == base.stdout,
           f"dl: exit {p.returncode}, output {p.stdout!r} not {base.stdout!r}\n{p.stderr}")
    check("dl", d, "odd_ints", 30, CALLER_SRC, "CALLER-SITE")

    # The loader still sees the program as its caller: $ORIGIN, RTLD_NEXT.
    # A sanitizer's dlopen interceptor (ASan's) is itself the loader's caller: $ORIGIN is then
    # its folder even without the shim, and there is nothing of the shim's to compare.
    base = plain("loader", "6")
    if base.returncode == 2 and "$ORIGIN" in base.stderr and SANITIZED:
        print("loader: left out: without the shim, a sanitizer's dlopen already hides the caller")
    else:
        expect(base.returncode == 0, f"loader alone: {base.returncode} {base.stderr}")
        p, d = under(tmp, ["loader", "6"], exits=["liboddlib.so:odd_ints"])
        expect(p.returncode == 0 and p.stdout == base.stdout,
               f"loader: exit {p.returncode}, output {p.stdout!r} not {base.stdout!r}\n{p.stderr}")
        check("loader", d, "odd_ints", 6, CALLER_SRC, "CALLER-SITE")

    # 8 threads while the module is loaded and unloaded 200 times (3 calls each time).
    base = plain("threads", CALLER, "20000")
    p, d = under(tmp, ["threads", CALLER, "20000"], exits=["liboddlib.so:odd_ints"])
    expect(p.returncode == 0 and p.stdout == base.stdout,
           f"threads: exit {p.returncode}, output {p.stdout!r} not {base.stdout!r}\n{p.stderr}")
    o = ops(d).get("odd_ints", {})
    sites = {(os.path.basename(s.get("file", "")), s.get("line")): s.get("count")
             for s in o.get("sites", [])}
    expect(o.get("count") == 8 * 20000 + 200 * 3,
           f"threads: odd_ints counted {o.get('count')}, not {8 * 20000 + 600}")
    # A sanitized shim exports no loader entry, so a module is placed only at its first new
    # stack (no dlopen tells it sooner): one unloaded between a call and that can go unnamed.
    if SANITIZED:
        sites.pop(("", None), None)
    expect(sites.get(("app.cc", line_of(APP_SRC, "SITE-INTS"))) in (None, 160000) and
           len(sites) == 2, f"threads: sites {sites}")

    # A descriptor file given with --backend, its exit not one the shim defines.
    desc = os.path.join(tmp, "odd.backend")
    with open(desc, "w", encoding="utf-8") as f:
        f.write("name odd\nlibrary liboddlib.so*\nexit odd_dpair fallback\nop library\n")
    p, d = under(tmp, ["shapes", "4"], backend=desc)
    expect(p.returncode == 0, f"--backend: exit {p.returncode}\n{p.stderr}")
    check("--backend", d, "odd_dpair", 4, APP_SRC, "SITE-DPAIR")
    expect(ops(d).get("odd_dpair", {}).get("backend") == "odd", f"--backend: {ops(d)}")
    expect("not used" not in p.stderr, f"--backend: a warning for nothing:\n{p.stderr}")
    # read= and refuse on an exit the shim has no definition of cannot act: said once, by the
    # command, and the calls still counted (bytes unknown); without fbcount run, by the shim.
    with open(desc, "w", encoding="utf-8") as f:
        f.write("name odd\nlibrary liboddlib.so*\nexit odd_dpair fallback read=vkt\n"
                "op library\nrefuse -3\n")
    p, d = under(tmp, ["shapes", "4"], backend=desc)
    warns = [ln for ln in p.stderr.splitlines() if "not used" in ln]
    expect(p.returncode == 0 and len(warns) == 1 and "read=vkt is not used" in warns[0] and
           "and more" in warns[0], f"--backend, read= unused: warnings {warns}\n{p.stderr}")
    check("--backend read= unused", d, "odd_dpair", 4, APP_SRC, "SITE-DPAIR")
    env = dict(os.environ, LD_PRELOAD=SHIM, FBCOUNT_BACKEND=desc, FBCOUNT_OUTPUT="none")
    q = subprocess.run([APP, "shapes", "1"], capture_output=True, text=True, env=env, timeout=120)
    warns = [ln for ln in q.stderr.splitlines() if "not used" in ln]
    expect(q.returncode == 0 and len(warns) == 1 and "FBCOUNT_BACKEND" in warns[0],
           f"FBCOUNT_BACKEND, read= unused: warnings {warns}\n{q.stderr}")

    # A bad spec among good ones: one warning, the program unchanged, the good one counted.
    base = plain("ints", "5")
    p, d = under(tmp, ["ints", "5"], env_exits="nocolon,liboddlib.so:odd_ints")
    warns = [ln for ln in p.stderr.splitlines() if "FBCOUNT_EXIT" in ln]
    expect(p.returncode == 0 and p.stdout == base.stdout,
           f"bad spec: exit {p.returncode}, output {p.stdout!r}\n{p.stderr}")
    expect(len(warns) == 1 and "nocolon" in warns[0], f"bad spec: warnings {warns}")
    check("bad spec", d, "odd_ints", 5, APP_SRC, "SITE-INTS")
    # --exit checks the spec before anything runs.
    p = subprocess.run([FBCOUNT, "run", "-o", os.path.join(tmp, "x"), "--exit", "nocolon", "--",
                        APP, "ints", "1"], capture_output=True, text=True, timeout=60)
    expect(p.returncode != 0 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1
           and "--exit" in p.stderr, f"--exit nocolon: {p.returncode} {p.stderr!r}")

    # Without any exit declared, nothing of the app is counted and no dump is written.
    p, d = under(tmp, ["ints", "5"])
    expect(p.returncode == 0 and not ops(d), f"no exit declared: {p.returncode} {ops(d)}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("declared exits: ok")

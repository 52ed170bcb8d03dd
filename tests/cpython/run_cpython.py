#!/usr/bin/env python3
"""CPython's own regression modules, with and without the shim: the result of every test case
must be the same.

A process that never uses a backend must be left exactly as it was. CPython's test suite
(Debian's libpython3.11-testsuite, installed by tools/deps/test-cpython.txt) checks its own
process hard: descriptors (test_subprocess's pass_fds tests list them), signal actions and
siginterrupt, fork, exec, threads, faulthandler, sockets through selectors and asyncio. The
modules below run three times at once, each run with regrtest's own workers: plain, with
libfbcount.so preloaded, and under `fbcount run`; every case's outcome is read from regrtest's
JUnit XML. A case whose outcome differs from the plain run's is run again alone, twice in
each configuration: a difference that holds every time fails the test, one that does not is
reported as the machine's noise (timing tests on a loaded machine). The shim must also write
no dump and print nothing.

usage: run_cpython.py --shim LIBFBCOUNT --fbcount FBCOUNT [--python PY] [--jobs N] [MODULE...]
Exit 0 when every case agrees, 1 when one does not, 77 when the test package is missing.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

# Chosen for what they exercise, and to stay within a few minutes on two cores.
MODULES = [
    "test_subprocess", "test_signal", "test_threading", "test_faulthandler", "test_os", "test_posix",
    "test_eintr", "test_threadsignals", "test_fork1", "test_wait4", "test_selectors", "test_poll",
    "test_select", "test_epoll", "test_pty", "test_atexit", "test_popen", "test_thread",
    "test_asyncio.test_subprocess", "test_asyncio.test_unix_events", "test_asyncio.test_sock_lowlevel",
]
RESOURCES = "all,-network,-urlfetch,-largefile,-cpu,-decimal,-tzdata,-gui,-audio"


def regrtest(py, modules, jobs, xml, match=None):
    cmd = [py, "-m", "test", "-u", RESOURCES, "--timeout", "300", "--junit-xml", xml]
    if jobs > 1:
        cmd += ["-j", str(jobs)]
    if match:
        cmd += ["--match", match]
    return cmd + modules


def environments(args, d):
    base = {k: v for k, v in os.environ.items() if not k.startswith("FBCOUNT") and k != "LD_PRELOAD"}
    base["PYTHONDONTWRITEBYTECODE"] = "1"
    os.makedirs(os.path.join(d, "preloaded"), exist_ok=True)
    return {
        "plain": (base, []),
        "preloaded": (dict(base, LD_PRELOAD=args.shim,
                           FBCOUNT_OUTPUT=os.path.join(d, "preloaded", "fbcount.%e.%p.json")), []),
        "fbcount run": (dict(base, FBCOUNT_SHIM=args.shim), [args.fbcount, "run", "-o", os.path.join(d, "run"), "--"]),
    }


def outcomes(xml):
    """{case id: outcome} from regrtest's JUnit XML."""
    got = {}
    if not os.path.exists(xml):
        return got
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = case.get("name", "")
        cid = name if "." in name else f"{case.get('classname', '')}.{name}"
        tags = {child.tag for child in case}
        got[cid] = "error" if "error" in tags else "failure" if "failure" in tags else \
            "skipped" if "skipped" in tags else "ok"
    return got


def shim_lines(text):
    """What the shim printed: its lines begin with 'fbcount: '."""
    return [ln for ln in text.splitlines() if ln.startswith("fbcount: ")]


def again(args, envs, d, case, n=2):
    """The case's outcomes, run alone n times in each configuration."""
    res = {}
    for name, (env, prefix) in envs.items():
        res[name] = []
        for i in range(n):
            xml = os.path.join(d, f"again-{abs(hash((case, name, i)))}.xml")
            subprocess.run(prefix + regrtest(args.python, [case_module(case)], 1, xml, match=case), env=env,
                           capture_output=True, text=True, timeout=600)
            res[name].append(outcomes(xml).get(case, "missing"))
    return res


def case_module(case):
    """test.test_asyncio.test_subprocess.Cls.test_x -> test_asyncio.test_subprocess: the parts
    after "test" up to the class."""
    mods = []
    for part in case.split(".")[1:]:
        if not part.startswith("test_"):
            break
        mods.append(part)
    return ".".join(mods)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shim", required=True)
    ap.add_argument("--fbcount", required=True)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("modules", nargs="*", default=MODULES)
    args = ap.parse_args()
    args.shim, args.fbcount = os.path.abspath(args.shim), os.path.abspath(args.fbcount)
    probe = subprocess.run([args.python, "-c", "import test.support, test.test_subprocess"], capture_output=True)
    if probe.returncode != 0:
        print(f"run_cpython: {args.python} has no test package (Debian: libpython3.11-testsuite, which "
              "tools/deps.sh --test installs); skipped")
        return 77
    with tempfile.TemporaryDirectory(prefix="fbcount-cpython-") as d:
        envs = environments(args, d)
        procs, t0 = {}, time.monotonic()
        for name, (env, prefix) in envs.items():
            xml = os.path.join(d, re.sub(r"\W", "_", name) + ".xml")
            out = open(os.path.join(d, re.sub(r"\W", "_", name) + ".log"), "w+")
            procs[name] = (subprocess.Popen(prefix + regrtest(args.python, args.modules, args.jobs, xml), env=env,
                                            stdout=out, stderr=subprocess.STDOUT, text=True), xml, out)
        results, printed = {}, {}
        for name, (p, xml, out) in procs.items():
            p.wait(timeout=1800)
            out.seek(0)
            printed[name] = shim_lines(out.read())
            results[name] = outcomes(xml)
        wall = time.monotonic() - t0
        plain = results["plain"]
        bad = []
        print(f"run_cpython: {len(args.modules)} modules, {len(plain)} cases, three runs at once "
              f"({args.jobs} workers each): {wall:.0f} s")
        for name, got in results.items():
            counts = {k: sum(1 for v in got.values() if v == k) for k in ("ok", "failure", "error", "skipped")}
            print(f"  {name:12} {len(got):5} cases: {counts['ok']} ok, {counts['failure']} failed, "
                  f"{counts['error']} errors, {counts['skipped']} skipped")
            if len(got) < 0.9 * len(plain) or not got:
                bad.append(f"{name}: {len(got)} cases read against {len(plain)} in the plain run")
        if not plain:
            bad.append("the plain run reported no case")
        # (Under fbcount run the command's own lines come out too; the shim is the same.)
        for ln in printed["preloaded"]:
            bad.append(f"preloaded: the shim printed: {ln}")
        dumps = [f for _, _, fs in os.walk(d) for f in fs if f.endswith(".json")]
        if dumps:
            bad.append(f"dumps written by processes that never used a backend: {dumps[:5]}")
        differing = sorted({c for name in ("preloaded", "fbcount run") for c, v in results[name].items()
                            if c in plain and v != plain[c]})
        for case in differing:
            seen = {name: results[name].get(case) for name in envs}
            rerun = again(args, envs, d, case)
            held = all(v == rerun["plain"][0] for v in rerun["plain"]) and any(
                all(v != rerun["plain"][0] for v in rerun[name]) for name in ("preloaded", "fbcount run"))
            line = f"{case}: {seen}; alone, twice each: {rerun}"
            if held:
                bad.append("differs every time: " + line)
            else:
                print("  noise (not the same each time): " + line)
        for b in bad:
            print("FAIL " + b)
        print(f"run_cpython: {'every case agrees' if not bad else f'{len(bad)} problems'}")
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

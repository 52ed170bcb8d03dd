#!/usr/bin/env python3
"""The time `fbcount attach PID` takes on a process with many loaded modules (issue 22: target
< 1 s for 200), against its peer: gdb attaching to the same process and detaching, which every
attach pays. Each module imports an exit (host_result, bound lazily), so the shim's scan has
an entry to redirect in every one. A fresh process per repeat (a process attached and
detached cannot be attached again); the best of --repeat.

usage: bench_attach.py FBCOUNT [--modules N] [--repeat N] [--json OUT]
Prints a table (what, modules, time, target or peer, ratio); writes the same rows to OUT only
when asked, as every benchmark does (tools/bench/results/results.py's format).
"""
import argparse
import datetime
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "results"))
import results  # noqa: E402  (tools/bench/results/results.py: the rows' schema and writer)

TARGET_S = 1.0

TARGET_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    char path[4096];
    for (int i = 0; i < atoi(argv[2]); i++) {
        snprintf(path, sizeof path, "%s/libm%03d.so", argv[1], i);
        if (!dlopen(path, RTLD_LAZY | RTLD_GLOBAL)) {
            fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
    }
    printf("ready\n");
    fflush(stdout);
    char line[16];
    return fgets(line, sizeof line, stdin) ? 0 : 0;
}
"""


def build(tmp, n):
    """n modules, each calling host_result (left undefined: bound lazily, never called)."""
    cc = os.environ.get("CC", "cc")
    for i in range(n):
        src = os.path.join(tmp, f"m{i:03d}.c")
        with open(src, "w") as f:
            f.write(f"int host_result(void *, const void *, unsigned long);\n"
                    f"int f{i}(void) {{ return host_result(0, 0, {i}); }}\n")
        subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o",
                        os.path.join(tmp, f"libm{i:03d}.so"), src], check=True)
    src = os.path.join(tmp, "target.c")
    with open(src, "w") as f:
        f.write("#include <stdlib.h>\n" + TARGET_C)
    exe = os.path.join(tmp, "target")
    subprocess.run([cc, "-O1", "-o", exe, src, "-ldl"], check=True)
    return exe


def timed(argv):
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()}")
    return dt


def once(exe, tmp, n, what, fbcount):
    p = subprocess.Popen([exe, tmp, str(n)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    if p.stdout.readline().strip() != "ready":
        sys.exit("the target did not load its modules")
    try:
        pid = str(p.pid)
        if what == "gdb":
            return timed(["gdb", "-p", pid, "--batch", "-nx", "-ex", "detach"])
        out = os.path.join(tmp, "out")
        shutil.rmtree(out, ignore_errors=True)
        dt = timed([fbcount, "attach", "-o", out, pid])
        return dt, timed([fbcount, "detach", pid])
    finally:
        p.stdin.close()
        p.wait(timeout=60)


def table(rows):
    lines = ["| what | modules | time | target or peer | ratio |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['what']} | {r['modules']} | {r['seconds']:.3f} s | "
                     f"{r['against']} | {r['ratio']:.2f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fbcount")
    ap.add_argument("--modules", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    if not shutil.which("gdb"):
        print("gdb is not installed: nothing to measure")
        return 77
    fbcount = os.path.abspath(a.fbcount)
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp, a.modules)
        peer = min(once(exe, tmp, a.modules, "gdb", fbcount) for _ in range(a.repeat))
        runs = [once(exe, tmp, a.modules, "fbcount", fbcount) for _ in range(a.repeat)]
    attach = min(r[0] for r in runs)
    detach = min(r[1] for r in runs)
    machine = platform.node() or "unknown"
    rows = [
        {"what": "gdb attach + detach (peer)", "modules": a.modules, "seconds": round(peer, 3),
         "against": "-", "ratio": 1.0, "machine": machine},
        {"what": "fbcount attach", "modules": a.modules, "seconds": round(attach, 3),
         "against": f"< {TARGET_S:.0f} s", "ratio": round(attach / TARGET_S, 2),
         "peer_ratio": round(attach / peer, 2), "machine": machine},
        {"what": "fbcount attach vs gdb alone", "modules": a.modules,
         "seconds": round(attach, 3), "against": f"{peer:.3f} s", "ratio": round(attach / peer, 2),
         "machine": machine},
        {"what": "fbcount detach", "modules": a.modules, "seconds": round(detach, 3),
         "against": f"{peer:.3f} s", "ratio": round(detach / peer, 2), "machine": machine},
    ]
    sys.stdout.write(table(rows))
    if a.json:
        results.write(a.json, f"{machine}, {os.cpu_count()} cpus", rows, " ".join(sys.argv),
                      datetime.date.today().isoformat())
    return 0


sys.exit(main())

#!/usr/bin/env python3
"""compare_preloads.py LIB... - what each library costs /bin/true when preloaded, against no
preload: rounds of posix_spawn()s, the libraries interleaved within each round so that a change
in the machine's load reaches them all alike; medians of the rounds' mean wall time and child
CPU time per exec, in microseconds. For splitting the shim's cost at load (libraries built with
parts of it left out), where bench_exec.py measures the shim itself against its target.
  usage: compare_preloads.py [--rounds N] [--execs N] LIB..."""
import argparse
import os
import resource
import statistics
import subprocess
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("libs", nargs="+")
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--execs", type=int, default=100)
    a = ap.parse_args()
    variants = [("none", None)] + [(os.path.basename(p), os.path.abspath(p)) for p in a.libs]
    base = {k: v for k, v in os.environ.items() if not k.startswith("FBCOUNT") and k != "LD_PRELOAD"}
    envs = {n: dict(base, **({"LD_PRELOAD": p} if p else {})) for n, p in variants}
    wall = {n: [] for n, _ in variants}
    cpu = {n: [] for n, _ in variants}
    for n, _ in variants:  # the page cache warm for every library
        subprocess.run(["/bin/true"], env=envs[n], check=True)
    for _ in range(a.rounds):
        for n, _ in variants:
            ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            for _ in range(a.execs):
                os.waitpid(os.posix_spawn("/bin/true", ["/bin/true"], envs[n]), 0)
            t1 = time.perf_counter()
            ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall[n].append((t1 - t0) / a.execs * 1e6)
            cpu[n].append((ru1.ru_utime - ru0.ru_utime + ru1.ru_stime - ru0.ru_stime) /
                          a.execs * 1e6)
    w0, c0 = statistics.median(wall["none"]), statistics.median(cpu["none"])
    print(f"{'preloaded':32} {'wall us':>9} {'+wall':>8} {'cpu us':>8} {'+cpu':>8}")
    for n, _ in variants:
        w, c = statistics.median(wall[n]), statistics.median(cpu[n])
        print(f"{n:32} {w:9.1f} {w - w0:+8.1f} {c:8.1f} {c - c0:+8.1f}")


if __name__ == "__main__":
    main()

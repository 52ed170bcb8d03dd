#!/usr/bin/env python3
"""A C++ exception thrown through the fallback exit (throwing.cc): with the shim preloaded the
program prints what it prints without it (every exception reached its handler), and the census
counts every call, the ones that threw included, so counting goes on after an exception.
  usage: exceptions_test.py SHIM PROGRAM"""
import glob
import json
import os
import subprocess
import sys
import tempfile

SHIM, PROG = sys.argv[1:3]
N = 8
failures = 0


def expect(ok, what):
    global failures
    if not ok:
        failures += 1
        print("FAIL:", what)


plain = subprocess.run([PROG, str(N)], capture_output=True, text=True, timeout=30)
expect(plain.returncode == 0 and plain.stdout == f"calls {N} caught {N // 3}\n",
       f"without the shim: {plain.stdout!r}")
with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, LD_PRELOAD=SHIM, FBCOUNT_OUTPUT=os.path.join(tmp, "d.%p.json"),
               FBCOUNT_QUIET="1")
    shimmed = subprocess.run([PROG, str(N)], capture_output=True, text=True, env=env, timeout=30)
    expect(shimmed.returncode == 0 and shimmed.stdout == plain.stdout,
           f"under the shim: exit {shimmed.returncode}, {shimmed.stdout!r} {shimmed.stderr[-500:]}")
    dumps = glob.glob(os.path.join(tmp, "*.json"))
    expect(len(dumps) == 1, f"one dump: {dumps}")
    d = json.load(open(dumps[0])) if dumps else {"total": {}, "ops": []}
    expect(d["total"].get("fallbacks") == N, f"{d['total'].get('fallbacks')} of {N} calls counted")
    ops = {o["op"]: o["count"] for o in d["ops"]}
    expect(ops == {"vkt_gather": N}, f"ops: {ops}")
print(f"{failures} failure(s)" if failures else "cpp-exceptions: all checks passed")
sys.exit(1 if failures else 0)

#!/usr/bin/env python3
"""forced_fallback — a suite must fail, naming the op, when that op silently falls back.

For each (op, suite binary, test filter) triple, runs the filtered test of the suite
twice: as it is, where it must pass (so the filter selects a test, and the test is
sound), and with VKT_NATIVE_DISABLE=<op>, where it must fail with a message that
names vkt_<op>. That is what a value check alone cannot do: the fallback computes
the same result, bit for bit.

usage: forced_fallback.py OP SUITE FILTER [OP SUITE FILTER...]
"""
import os
import re
import subprocess
import sys


def run(suite, flt, disable):
    env = dict(os.environ, VKT_NATIVE_DISABLE=disable)
    p = subprocess.run([suite, "--filter", flt, "--jobs", "1"], env=env, capture_output=True, text=True,
                       timeout=240)
    return p.returncode, p.stdout + p.stderr


def main():
    args = sys.argv[1:]
    if not args or len(args) % 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    failed = 0
    for i in range(0, len(args), 3):
        op, suite, flt = args[i:i + 3]
        name = os.path.basename(suite)
        rc, out = run(suite, flt, "")
        tested = "Tested: 0" not in out and "Synthesis" in out
        if rc != 0 or not tested:
            print(f"FAIL {name} --filter {flt}: must pass natively first (exit {rc}):\n{out}")
            failed += 1
            continue
        rc, out = run(suite, flt, op)
        if rc == 0:
            print(f"FAIL VKT_NATIVE_DISABLE={op} {name} --filter {flt} passed: the suite cannot see the fallback")
            failed += 1
        else:
            # The harness's message ("vkt_add fell back ...") or libfbcount's census
            # of the failed check (a row per op) names the op.
            named = [ln for ln in out.splitlines() if re.search(r"\bvkt_%s\b" % re.escape(op), ln)]
            if not named:
                print(f"FAIL VKT_NATIVE_DISABLE={op} {name} --filter {flt} failed without naming vkt_{op}:\n{out}")
                failed += 1
            else:
                print(f"ok   VKT_NATIVE_DISABLE={op} {name}: fails, {named[0].strip()[:160]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

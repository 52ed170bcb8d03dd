"""What the fleet tests share: failures are collected, each printed once, and the script's
exit status says whether there was any."""
import sys

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)
    return cond


def done(name):
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print(f"{name}: all checks passed")

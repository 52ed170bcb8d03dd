#!/usr/bin/env python3
"""`fbcount symbolize` on crash dumps with many ops: a dump of N stacks whose ops and sites the
shim could not name (a crash dump's "(unknown)" rows), each of a distinct op, so that every
stack moves its counts to a row of its own. Prints a table of wall time per dump size and
writes the rows as JSON; the counts of the symbolized dump are checked, so a fast wrong answer
fails.

usage: bench_symbolize.py FBCOUNT [--ops N,N,...] [--repeat N] [--device TEXT] [--json OUT]
                          [--doc RESULTS.md]
       bench_symbolize.py --check-doc RESULTS.md [--json ROWS]

Each size runs --repeat times (default 3) and the fastest run counts. --doc rewrites the
table in RESULTS.md from the rows (between "<!-- symbolize:table -->" and
"<!-- symbolize:end -->"); --check-doc fails when that table differs from what the rows make.
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

TARGET_OPS = 100000
TARGET_S = 2.0
BLOCK = re.compile(r"(<!-- symbolize:table -->\n)(.*?)(<!-- symbolize:end -->)", re.S)


def write_dump(path, n):
    """A crash dump as the shim writes one: every stack's op and site "(unknown)", the totals in
    one "(unknown)" row; its frames named already, in modules that are not on this machine."""
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"schema":"fbcount/1","reason":"crash","seq":1,"symbolized":false,'
                '"process":{"pid":4242,"host":"box","exe":"/opt/app/train"},'
                f'"total":{{"fallbacks":{n},"bytes":{64 * n},"host_ops":0}},'
                f'"ops":[{{"op":"(unknown)","backend":"vkt","count":{n},"bytes":{64 * n},'
                f'"sites":[{{"site":"(unknown)","count":{n},"bytes":{64 * n}}}]}}],'
                '"host_ops":[],"stacks":[\n')
        for i in range(n):
            f.write(f'{"," if i else ""}{{"kind":"fallback","backend":"vkt","op":"(unknown)",'
                    '"site":"(unknown)","count":1,"bytes":64,"frames":['
                    '{"symbol":"host_result","module":"/l/libvkt.so","offset":"0x1f30"},'
                    f'{{"symbol":"vkt_op{i}","module":"/l/libvkt.so","offset":"0x2000"}},'
                    f'{{"symbol":"caller{i % 97}","module":"/opt/app/train","offset":"0x{i:x}"}},'
                    '{"symbol":"main","module":"/opt/app/train","offset":"0x10"}]}\n')
        # Module files that are not here: their frames keep the names the dump gives them.
        f.write('],"modules":[{"path":"/l/libvkt.so","base":"0x7f0000000000","size":1048576},'
                '{"path":"/opt/app/train","base":"0x550000000000","size":16777216}]}\n')


def check(path, n):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    ops = d["ops"]
    assert len(ops) == n, f"{len(ops)} op rows, not {n}"
    assert all(o["count"] == 1 and o["sites"][0]["site"].startswith("caller") for o in ops)
    assert not any(o["op"] == "(unknown)" for o in ops), "counts left in (unknown)"


def run_once(argv):
    """Wall time and the child's CPU time (user + system) of one run: on a shared machine the
    CPU time moves less with the load than the wall time does."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        sys.exit(f"bench_symbolize: {' '.join(argv)} exited {proc.returncode}: {err}")
    return wall, usage.ru_utime + usage.ru_stime


def measure(fbcount, n, repeat, device):
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "crash.json"), os.path.join(tmp, "crash.sym.json")
        write_dump(src, n)
        load = os.getloadavg()[0]
        runs = [run_once([fbcount, "symbolize", "-q", "-o", out, src]) for _ in range(repeat)]
        wall, cpu = min(runs)
        check(out, n)
        return {"what": "symbolize, crash dump", "ops": n, "bytes": os.path.getsize(src),
                "seconds": round(wall, 3), "cpu_seconds": round(cpu, 3),
                "machine": platform.node() or "unknown",
                "device": f"{device}, load {load:.1f}",
                "target_s": TARGET_S if n == TARGET_OPS else None}


def table(rows):
    lines = ["| what | device | ops | dump | time (wall) | CPU | target | time/target |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        target = f"< {r['target_s']:.0f} s" if r.get("target_s") else "-"
        ratio = f"{r['seconds'] / r['target_s']:.2f}" if r.get("target_s") else "-"
        cpu = f"{r['cpu_seconds']:.3f} s" if "cpu_seconds" in r else "-"
        lines.append(f"| {r['what']} | {r.get('device', '-')} | {r['ops']:,} | "
                     f"{r['bytes'] / 2**20:.1f} MiB | {r['seconds']:.3f} s | {cpu} | {target} | "
                     f"{ratio} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fbcount", nargs="?")
    ap.add_argument("--ops", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--device", default=f"this machine, {os.cpu_count()} CPUs")
    ap.add_argument("--json")
    ap.add_argument("--doc")
    ap.add_argument("--check-doc")
    a = ap.parse_args()
    if a.check_doc:
        with open(a.json, encoding="utf-8") as f:
            rows = json.load(f)
        with open(a.check_doc, encoding="utf-8") as f:
            m = BLOCK.search(f.read())
        if not m or m.group(2) != table(rows):
            print(f"{a.check_doc}: the table differs from {a.json} (run with --doc)")
            return 1
        return 0
    if not a.fbcount:
        ap.error("FBCOUNT is required")
    rows = [measure(a.fbcount, int(n), a.repeat, a.device) for n in a.ops.split(",")]
    sys.stdout.write(table(rows))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")
    if a.doc:
        with open(a.doc, encoding="utf-8") as f:
            text = f.read()
        with open(a.doc, "w", encoding="utf-8") as f:
            f.write(BLOCK.sub(lambda m: m.group(1) + table(rows) + m.group(3), text))
    return 0


if __name__ == "__main__":
    sys.exit(main())

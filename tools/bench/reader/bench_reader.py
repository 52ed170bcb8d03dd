#!/usr/bin/env python3
"""The dump reader on a large census: one dump of N distinct stacks (default one million,
about 196 MiB), read by `fbcount report` in several forms. Prints a table of wall time and
peak memory (the child's maximum resident set) against the file's size, and writes the rows
as JSON.

usage: bench_reader.py FBCOUNT [--stacks N] [--frames inline|table] [--repeat N] [--json OUT]
                       [--keep DIR] [--doc RESULTS.md]
       bench_reader.py --check-doc RESULTS.md [--json ROWS]

Each command runs --repeat times (default 3) and the run of least CPU time counts: on a VM with
busy neighbours one run in three or four takes 40% longer. --json replaces the rows of this
form (--frames) in OUT and keeps the other form's. --doc rewrites the table in RESULTS.md from
the rows (between "<!-- reader:table -->" and "<!-- reader:end -->"); --check-doc fails (exit 1)
when that table differs from what the rows make, which the test suite runs.

--frames table writes what the shim writes (each distinct frame once, in frame_table, and
stacks of indices into it); inline, what crash dumps and older dumps hold (frame objects).
"""
import argparse
import difflib
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time

# The targets for a million distinct stacks: time and peak memory against the file.
TARGET_S = 10.0
TARGET_X = 8.0
BLOCK = re.compile(r"(<!-- reader:table -->\n)(.*?)(<!-- reader:end -->)", re.S)

OPS = ["vkt_dot", "vkt_conv", "vkt_sum", "vkt_sort", "vkt_gather", "vkt_pow", "vkt_erfc",
       "vkt_window_scatter_max"]


def write_dump(path, n):
    """Every stack is distinct by its site frame; the backend frames and the outer callers
    repeat, as they do in real censuses (most frames of a million stacks are shared)."""
    with open(path, "w") as f:
        f.write('{"schema":"fbcount/1","reason":"exit","seq":1,'
                '"process":{"pid":4242,"host":"box","exe":"/opt/app/train"},'
                f'"total":{{"fallbacks":{n},"bytes":{64 * n},"host_ops":0}},'
                '"ops":[],"host_ops":[],"stacks":[\n')
        for i in range(n):
            op = OPS[i % len(OPS)]
            f.write(f'{"," if i else ""}{{"op":"{op}","site":"f{i}","count":1,"bytes":64,'
                    '"frames":[{"symbol":"host_result","module":"/l/libvkt.so","offset":'
                    f'"0x1f30"}},{{"symbol":"{op}"}},{{"symbol":"f{i}","offset":"0x{i:x}"}},'
                    '{"symbol":"main"}]}\n')
        f.write("]}\n")


def write_table_dump(path, n):
    """The same census as write_dump, as the shim writes it: frames named once in frame_table
    (host_result, the ops, each site, main), stacks of indices into it."""
    with open(path, "w") as f:
        f.write('{"schema":"fbcount/1","reason":"exit","seq":1,'
                '"process":{"pid":4242,"host":"box","exe":"/opt/app/train"},'
                f'"total":{{"fallbacks":{n},"bytes":{64 * n},"host_ops":0}},'
                '"ops":[],"host_ops":[],"stacks":[\n')
        base = 2 + len(OPS)  # 0 host_result, 1 main, 2.. the ops, then one frame per site
        for i in range(n):
            k = i % len(OPS)
            f.write(f'{"," if i else ""}{{"op":"{OPS[k]}","site":"f{i}","count":1,"bytes":64,'
                    f'"frames":[0,{2 + k},{base + i},1]}}\n')
        f.write('],"frame_table":[{"symbol":"host_result","module":"/l/libvkt.so","offset":"0x1f30"},'
                '{"symbol":"main"}')
        for op in OPS:
            f.write(f',{{"symbol":"{op}"}}')
        for i in range(n):
            f.write(f',\n{{"symbol":"f{i}","offset":"0x{i:x}"}}')
        f.write("]}\n")


def measure(cmd):
    """Wall time, CPU time (user + system) and peak resident memory of one run. On a shared
    machine the wall time includes waiting for a core; the CPU time does not."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    cpu = ru.ru_utime + ru.ru_stime
    err = p.stderr.read().decode()
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{' '.join(cmd)}: exit {code}: {err}")
    return wall, cpu, ru.ru_maxrss * 1024


def render(rows):
    """The markdown table of the rows: each command and form, its figures and the verdict."""
    out = ["| what | frames | file | CPU | wall | peak RSS | RSS / file | target (< 10 s, < 8x) |",
           "|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["frames"] != "table", r["command"] != "report --by stack",
                                         r["command"])):
        missed = [w for w, bad in (("time", r["cpu_s"] >= TARGET_S), ("memory", r["rss_over_file"] >= TARGET_X))
                  if bad]
        verdict = "**met**" if not missed else "**missed** (" + ", ".join(missed) + ")"
        out.append(f"| `{r['command']}` | {r['frames']} | {r['file_bytes'] / 2**20:.0f} MiB | {r['cpu_s']:.1f} s | "
                   f"{r['wall_s']:.1f} s | {r['peak_rss_bytes'] / 2**20:.0f} MiB | {r['rss_over_file']:.1f}x | "
                   f"{verdict} |")
    return "\n".join(out) + "\n"


def doc(path, rows, check):
    """Rewrites (or, with check, compares) the table block of path; returns the exit status."""
    with open(path) as f:
        text = f.read()
    m = BLOCK.search(text)
    if not m:
        sys.exit(f"bench_reader: {path} has no <!-- reader:table --> ... <!-- reader:end --> block")
    want = text[:m.start(2)] + render(rows) + text[m.end(2):]
    if want == text:
        return 0
    if check:
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), want.splitlines(True), path,
                                                   path + " (from the rows)"))
        print(f"bench_reader: {path} differs from its rows: run bench_reader.py --doc {path}")
        return 1
    with open(path, "w") as f:
        f.write(want)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fbcount", nargs="?")
    ap.add_argument("--stacks", type=int, default=1_000_000)
    ap.add_argument("--json", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "results.json"))
    ap.add_argument("--frames", choices=("inline", "table"), default="table")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep")
    ap.add_argument("--doc", help="rewrite this document's table from the rows after measuring")
    ap.add_argument("--check-doc", help="only compare this document's table with the rows")
    a = ap.parse_args()
    if a.check_doc:
        with open(a.json) as f:
            sys.exit(doc(a.check_doc, json.load(f), check=True))
    if not a.fbcount:
        ap.error("the path of the fbcount command is required")
    if a.repeat < 1 or a.stacks < 1:
        ap.error("--repeat and --stacks must be at least 1")
    d = a.keep or tempfile.mkdtemp(prefix="fbcount-bench-reader-")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"big-{a.frames}-{a.stacks}.json")
    if not os.path.exists(path):
        (write_table_dump if a.frames == "table" else write_dump)(path, a.stacks)
    size = os.path.getsize(path)
    runs = [("report --by stack", ["report", "--by", "stack"]),
            ("report --by op", ["report"]),
            ("report --format folded", ["report", "--format", "folded"]),
            ("report --by stack --format json", ["report", "--by", "stack", "--format", "json"])]
    rows = []
    print(f"{a.stacks} distinct stacks, frames {a.frames}, {size / 2**20:.0f} MiB ({platform.node()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    load = os.getloadavg()[0]
    print(f"  {'COMMAND':34} {'WALL':>8} {'CPU':>8} {'PEAK RSS':>10} {'x FILE':>7}")
    for name, args in runs:
        wall, cpu, rss = min((measure([a.fbcount] + args + [path]) for _ in range(a.repeat)),
                             key=lambda r: r[1])
        rows.append({"bench": "reader", "command": name, "stacks": a.stacks, "frames": a.frames,
                     "file_bytes": size, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
                     "peak_rss_bytes": rss, "rss_over_file": round(rss / size, 2),
                     "host": platform.node(), "cores": os.cpu_count(),
                     "load_before": round(load, 1), "repeat": a.repeat, "date": time.strftime("%Y-%m-%d")})
        print(f"  {name:34} {wall:7.2f}s {cpu:7.2f}s {rss / 2**20:8.0f} MiB {rss / size:6.2f}x")
    try:
        with open(a.json) as f:
            kept = [r for r in json.load(f) if r.get("frames") != a.frames]
    except (OSError, ValueError):
        kept = []
    with open(a.json, "w") as f:
        json.dump(kept + rows, f, indent=1)
        f.write("\n")
    if a.doc:
        doc(a.doc, kept + rows, check=False)
    if not a.keep:
        os.remove(path)
        os.rmdir(d)


if __name__ == "__main__":
    main()

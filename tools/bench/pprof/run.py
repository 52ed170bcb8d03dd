#!/usr/bin/env python3
"""The pprof writer's benchmark: for censuses of 10,000 and 1,000,000 distinct stacks, the time
to write the profile (targets: 0.2 s and 10 s) and its size against the dump's.

Each census is one dump in the shim's form (frames written once in frame_table, stacks naming
them by index, times, a rank). A stack is a fallback of one of five ops reached through the
backend's internal frames and 20 levels of application code, each level one of two call sites,
so the stacks are distinct while the distinct frames stay few, as in a real program.

usage: run.py BUILD_DIR [--sizes 10000,1000000] [--json OUT] [--md OUT]
Prints a table and JSON rows; --json writes the rows, --md a RESULTS.md made from them.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

OPS = ["vkt_dot", "vkt_conv", "vkt_sum", "vkt_pow", "vkt_window_scatter_max"]
LIB, APP = "/usr/lib/x86_64-linux-gnu/libvkt.so.0", "/opt/app/train"
DEPTH = 20


def frame_table():
    t = [{"ip": "0x7f0000001f30", "symbol": "host_result", "module": LIB, "offset": "0x1f30",
          "file": "fallback.c", "line": 40},
         {"ip": "0x7f0000002100", "symbol": "run_fallback", "module": LIB, "offset": "0x2100",
          "file": "exec.c", "line": 180}]
    for i, op in enumerate(OPS):
        t.append({"ip": hex(0x7F0000010000 + 0x100 * i), "symbol": op, "module": LIB,
                  "offset": hex(0x10000 + 0x100 * i), "file": op[4:] + ".c", "line": 10 + i})
    for level in range(DEPTH):
        for side, name in enumerate(("step_a", "step_b")):
            off = 0x1000 + 0x40 * (2 * level + side)
            t.append({"ip": hex(0x555500000000 + off), "symbol": name, "module": APP,
                      "offset": hex(off), "file": "train.c", "line": 100 + 2 * level + side})
    t.append({"ip": "0x555500000800", "symbol": "main", "module": APP, "offset": "0x800",
              "file": "train.c", "line": 20})
    return t


def write_dump(path, n):
    table = frame_table()
    app0, main = 2 + len(OPS), len(table) - 1
    per_op = {op: [0, 0, 0] for op in OPS}
    with open(path, "w") as f:
        f.write('{"schema": "fbcount/1", "reason": "exit", "seq": 1, '
                '"time": "2026-12-01T12:00:00Z", "process": {"pid": 4242, "ppid": 1, '
                '"host": "bench", "exe": "%s", "argv": ["%s"], "id": "%032x", "rank": 0}, '
                '"config": {"mode": "count", "depth": 64, "op_prefix": ["vkt_"], '
                '"timing": "fallback"}, "symbolized": true, "stacks": [' % (APP, APP, n))
        for i in range(n):
            op = OPS[i % len(OPS)]
            count, nbytes, ns = 1 + i % 7, 256 * (1 + i % 13), 1000 * (1 + i % 29)
            c = per_op[op]
            c[0] += count
            c[1] += nbytes
            c[2] += ns
            path_frames = [app0 + 2 * level + ((i >> level) & 1) for level in range(DEPTH)]
            frames = [0, 1, 2 + OPS.index(op)] + path_frames + [main]
            f.write('%s{"kind": "fallback", "op": "%s", "site": "%s", "count": %d, "bytes": %d, '
                    '"max_bytes": %d, "ns": %d, "max_ns": %d, "frames": [%s]}'
                    % ("," if i else "", op, "step_" + "ab"[i & 1], count, nbytes, nbytes, ns, ns,
                       ",".join(map(str, frames))))
        ops = [{"op": op, "count": c[0], "bytes": c[1], "max_bytes": 3328, "ns": c[2],
                "max_ns": 29000, "shapes": [], "sites": [{"site": "step_a", "count": c[0],
                                                         "bytes": c[1], "ns": c[2]}]}
               for op, c in per_op.items() if c[0]]
        total = {"fallbacks": sum(c[0] for c in per_op.values()),
                 "bytes": sum(c[1] for c in per_op.values()), "max_bytes": 3328,
                 "host_ops": 0, "host_bytes": 0, "stacks": n,
                 "ns": sum(c[2] for c in per_op.values()), "host_ns": 0}
        f.write('], "frame_table": %s, "total": %s, "backend": null, "ops": %s, "host_ops": [], '
                '"modules": [{"path": "%s", "base": "0x7f0000000000", "build_id": "5eed", '
                '"size": 1048576}, {"path": "%s", "base": "0x555500000000", "build_id": "a99a", '
                '"size": 65536}]}\n' % (json.dumps(table), json.dumps(total), json.dumps(ops),
                                        LIB, APP))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--sizes", default="10000,1000000")
    ap.add_argument("--json")
    ap.add_argument("--md")
    a = ap.parse_args()
    bench = os.path.join(a.build, "tools", "bench", "pprof", "fbcount-bench-pprof")
    targets = {10000: 0.2, 1000000: 10.0}
    rows = []
    with tempfile.TemporaryDirectory(prefix="fbcount-bench-pprof-") as tmp:
        for n in (int(x) for x in a.sizes.split(",")):
            dump = os.path.join(tmp, "fbcount.train.4242.1.json")
            write_dump(dump, n)
            p = subprocess.run([bench, dump, os.path.join(tmp, "out.pb.gz")],
                               capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("fbcount-bench-pprof: " + p.stderr.strip())
            r = json.loads(p.stdout)
            r["target_s"] = targets.get(n)
            r["ratio"] = round(r["pprof_bytes"] / r["dump_bytes"], 4)
            rows.append(r)
            os.remove(dump)
    machine = ("%s, %d cores, %s, load average %.1f (a machine shared with other work: the "
               "CPU figures count this process alone)"
               % (platform.processor() or platform.machine(), os.cpu_count(),
                  platform.platform(), os.getloadavg()[0]))
    print("%10s %12s %9s %9s %9s %8s %12s %7s %10s" % ("stacks", "dump", "load s", "write s",
                                                       "write cpu", "target", "pprof", "ratio",
                                                       "max rss"))
    for r in rows:
        print("%10d %10.1fMB %9.3f %9.3f %9.3f %8s %10.2fMB %7.3f %8dMB" % (
            r["stacks"], r["dump_bytes"] / 1e6, r["load_s"], r["write_s"], r["write_cpu_s"],
            r["target_s"] or "-", r["pprof_bytes"] / 1e6, r["ratio"], r["max_rss_kib"] // 1024))
    for r in rows:
        print(json.dumps(r))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": machine, "rows": rows}, f, indent=1)
            f.write("\n")
    if a.md:
        with open(a.md, "w") as f:
            f.write("# pprof writer: time and size\n\nGenerated by `tools/bench/pprof/run.py "
                    "build --json tools/bench/pprof/results.json --md tools/bench/pprof/"
                    "RESULTS.md` from its rows; machine: %s.\n\n" % machine)
            f.write("One dump in the shim's form per census (frame_table, times, a rank); each "
                    "stack 24 frames deep, distinct through 20 levels of two call sites. "
                    "*write* is `fbpp_write` alone (what `report --format pprof` adds to loading "
                    "the census); *load* is the dump reader and merger; *max rss* the peak of "
                    "the whole run, reader included.\n\n")
            f.write("| stacks | dump | load (cpu) | write (cpu) | target | pprof | pprof/dump | "
                    "max rss |\n")
            f.write("|---:|---:|---:|---:|---:|---:|---:|---:|\n")
            for r in rows:
                f.write("| %d | %.1f MB | %.3f s (%.3f) | %.3f s (%.3f) | %s | %.2f MB | %.3f | "
                        "%d MB |\n" % (
                            r["stacks"], r["dump_bytes"] / 1e6, r["load_s"], r["load_cpu_s"],
                            r["write_s"], r["write_cpu_s"],
                            "%g s" % r["target_s"] if r["target_s"] else "-",
                            r["pprof_bytes"] / 1e6, r["ratio"], r["max_rss_kib"] // 1024))


if __name__ == "__main__":
    main()

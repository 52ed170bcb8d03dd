#!/usr/bin/env python3
"""ratio — merges vkt-bench's and torch_anchor's JSON into one markdown table.

Rows are matched by (op, size). The table shows libvkt's figure, the PyTorch
figure on the same GPU, their ratio, and libvkt's ratio to the spec's target.
Rows only one side has (the fallback row, a size torch did not run) keep "-"
on the other side.

--results FILE also writes the merged rows in the results format of
tools/bench/results/ (RESULTS.md's tables are made from those files).

usage: ratio.py VKT.json TORCH.json [-o OUT.md] [--results FILE] [--command TEXT]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results"))
import results  # noqa: E402


def load(path, source):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"ratio: cannot read {path}: {e}")
    if doc.get("schema") != "vkt-bench/1" or doc.get("source") != source:
        sys.exit(f"ratio: {path} is not a vkt-bench/1 file from {source}")
    return doc


def fig(r):
    if r is None:
        return "-"
    if r.get("error"):
        return "error: " + r["error"]
    if r.get("figure") is None:
        return "-"
    return f"{r['figure']:.1f} {r['unit']}"


def fmt_time(ns):
    if ns is None:
        return "-"
    return f"{ns / 1e3:.1f} us" if ns < 1e6 else f"{ns / 1e6:.3f} ms"


def table(vkt, torch):
    by_key = {(r["op"], r["size"]): r for r in torch["rows"]}
    out = [
        f"libvkt: {vkt['device']} ({vkt['date']}); anchor: {torch['device']}, "
        f"torch {torch.get('torch', '?')}, TF32 off ({torch['date']})",
        "",
        "| op | size | libvkt path | libvkt time | libvkt | torch | libvkt/torch | target | libvkt/target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in vkt["rows"]:
        t = by_key.get((r["op"], r["size"]))
        ok = r.get("figure") is not None and not r.get("error")
        vs = f"{r['figure'] / t['figure']:.2f}" if ok and t and t.get("figure") else "-"
        tgt = f">= {r['target']:.0f} {r['unit']}" if r.get("target") else "-"
        vt = f"{r['figure'] / r['target']:.2f}" if ok and r.get("target") else "-"
        out.append(f"| {r['op']} | {r['size']} | {r['path']} | {fmt_time(r.get('time_ns'))} | {fig(r)} | {fig(t)} "
                   f"| {vs} | {tgt} | {vt} |")
    return "\n".join(out) + "\n"


def write_results(path, vkt, torch, command):
    by_key = {(r["op"], r["size"]): r for r in torch["rows"]}
    rows = []
    for r in vkt["rows"]:
        t = by_key.get((r["op"], r["size"]))
        row = {"bench": "ops", "case": r["op"], "size": r["size"], "value": r.get("figure"), "unit": r["unit"],
               "path": r["path"], "peer": "torch"}
        if r.get("time_ns") is not None:
            row["time_us"] = round(r["time_ns"] / 1e3, 3)
        if t and t.get("figure"):
            row["peer_value"] = round(t["figure"], 1)
        if r.get("target"):
            row["target"] = r["target"]
        if r.get("error"):
            row["error"] = r["error"]
        rows.append(row)
    results.write(path, vkt["device"], rows, command, vkt["date"][:10],
                  peer_device=f"{torch['device']}, torch {torch.get('torch', '?')}, TF32 off")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vkt", help="vkt-bench --json output")
    ap.add_argument("torch", help="torch_anchor.py --json output")
    ap.add_argument("-o", "--output", help="write the table here as well as to stdout")
    ap.add_argument("--results", help="write the merged rows here (tools/bench/results/ format)")
    ap.add_argument("--command", default="bash tools/bench/vkt/gpu_sweep.sh", help="how the sweep was run")
    args = ap.parse_args()
    vkt, torch = load(args.vkt, "vkt"), load(args.torch, "torch")
    text = table(vkt, torch)
    if args.results:
        write_results(args.results, vkt, torch, args.command)
    sys.stdout.write(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

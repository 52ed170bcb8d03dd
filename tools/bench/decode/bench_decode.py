#!/usr/bin/env python3
"""The cost of the census on llama.cpp's own decode: tokens per second of llama-driver
(tests/llama) plain and counted, two ways.
  runs:   plain and under `fbcount run`, in pairs of processes whose order alternates, so
          that a drift of the machine falls on both sides alike. Each run decodes --rounds
          times a prompt and --gen tokens (one llama_decode each); its figure is the median
          generation rate of its rounds after the first (which builds pipelines); the result
          is the median of the pairs' ratios with their spread.
  variants: --variant LABEL:VAR=VALUE,... adds a third process to each pair's round, the
          driver with the shim preloaded directly (no `fbcount run` around it) and those
          variables set (FBCOUNT=0: the shim loaded and off; FBCOUNT_DEPTH=2: a census whose
          stacks are two frames deep), its ratio to the same round's plain run: what each
          part of the cost is.
  tokens: one preloaded process (--alternate) whose process census is off (FBCOUNT=0), with
          every other generated token's decode inside a census scope, each such token paired
          with the one before it, a few milliseconds apart: the machine's load moves both
          alike. A scope records what the process census would (the stack, the splits and
          copies) into a census made and freed around the decode: more work than the process
          census does for the same decode, so its ratio bounds the census's cost from below.
          Each counted token's scope must have recorded the decode's CPU split, or the run
          fails. The result is the median of the pairs' ratios (plain time / counted time)
          with their spread.
The target is a ratio of at least 0.99: met where the median's 95% interval (distribution-free,
from the pairs' order statistics) lies at or above it (rows written before it was kept: where
the pairs' lower quartile does), met by the median only where the median does and the noise
leaves it unresolved. Every census of
the runs is checked: one CPU split and six copies a decode (the full offload: the token
embeddings stay on the host), so a fast wrong census fails.

usage: bench_decode.py --fbcount FBCOUNT --driver DRIVER --bins BINS_DIR [--pairs N]
                       [--rounds N] [--gen N] [--alternate N] [--layers N] [--embd N]
                       [--variant LABEL:VAR=VALUE,...]...
                       [--device TEXT] [--results OUT.json] [--census OUT.json]
       bench_decode.py --doc RESULTS.md [RESULTS.json...]       (rewrite the table)
       bench_decode.py --check-doc RESULTS.md [RESULTS.json...] (fail when it differs)
The table is made from the results files named, by default every tools/bench/results/
*-decode.json in name order.

The model is written by tests/llama/make_gguf.py (llama architecture, random weights):
--layers (2) and --embd (256) wide, 4 heads, a feed-forward twice as wide. CPU time (the
children's user and system time) is reported beside the rates: on a shared machine it moves
less with the load than the wall time does."""
import argparse
import datetime
import glob
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
sys.path.insert(0, os.path.join(HERE, "..", "results"))
import results  # noqa: E402 (tools/bench/results/results.py: the rows' file format)

TARGET = 0.99
BLOCK = re.compile(r"(<!-- decode:table -->\n)(.*?)(<!-- decode:end -->)", re.S)
RATES = re.compile(r"^prompt_tps (\S+) gen_tps (\S+)$", re.M)


def one_run(cmd, env):
    """(median generation rate after the first round, CPU seconds, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        sys.exit(f"bench_decode: {' '.join(cmd[:3])}...: exit {run.returncode}\n"
                 f"{run.stderr[-2000:]}")
    rates = [float(g) for _, g in RATES.findall(run.stdout)]
    if len(rates) < 2:
        sys.exit(f"bench_decode: no rates in the driver's output:\n{run.stdout}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return statistics.median(rates[1:]), cpu, run.stdout


def check_census(out, decodes):
    """The census of one run: one CPU split (the embeddings) and six copies a decode."""
    dumps = glob.glob(os.path.join(out, "*.json"))
    if len(dumps) != 1:
        sys.exit(f"bench_decode: {len(dumps)} dumps in {out}")
    d = json.load(open(dumps[0], encoding="utf-8"))
    t = d["total"]
    if t.get("splits") != decodes or t.get("transfers") != 6 * decodes or t["fallbacks"]:
        sys.exit(f"bench_decode: the census is not the scheduler's: {decodes} decodes, {t}")
    return d


def spread(v):
    """Quartiles, extremes and the median's 95% interval: the order statistics k and n-1-k,
    k = (n - 1.96 sqrt(n)) / 2, which hold the median with 95% confidence whatever the
    distribution (none for fewer than 6 values)."""
    q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
    out = {"min": min(v), "q1": q[0], "median": statistics.median(v), "q3": q[2], "max": max(v)}
    s, n = sorted(v), len(v)
    if n >= 6:
        k = max(0, math.floor((n - 1.96 * math.sqrt(n)) / 2))
        out["ci95"] = [s[k], s[n - 1 - k]]
    return out


def rounded(q):
    """A spread's figures to 4 places, the interval's two ends as well."""
    return {k: [round(x, 4) for x in v] if isinstance(v, list) else round(v, 4) for k, v in q.items()}


def verdict(q, target):
    """Met where the median's 95% interval lies at or above the target (or, for rows without
    one, the lower quartile); met by the median only where the median alone does."""
    low = q["ci95"][0] if "ci95" in q else q["q1"]
    return "met" if low >= target else "met by the median only" if q["median"] >= target else "missed"


def variant_env(env, a, spec, out):
    """The environment of a --variant process: the shim preloaded, its census written into
    out, the variables the spec names."""
    _, _, assigns = spec.partition(":")
    e = dict(env, LD_PRELOAD=shim_of(a), FBCOUNT_OUTPUT=os.path.join(out, "variant.json"),
             FBCOUNT_QUIET="1")
    for kv in filter(None, assigns.split(",")):
        k, _, v = kv.partition("=")
        e[k] = v
    return e


def measure(a, model, env):
    """Per pair: (plain, under fbcount run, each variant) as (rate, CPU seconds), the
    processes' order turned around from one pair to the next."""
    driver = [a.driver, a.bins, model, "--rounds", str(a.rounds), "--gen", str(a.gen),
              "--log", "/dev/null"]
    decodes = a.rounds * (1 + a.gen)
    names = ["plain", "fbcount"] + [v.partition(":")[0] for v in a.variant]
    got = {n: [] for n in names}
    census = None
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.pairs):
            out = os.path.join(tmp, f"run{i}")
            os.makedirs(out)
            cmds = [("plain", driver, env),
                    ("fbcount", [a.fbcount, "run", "-o", out, "--"] + driver, env)]
            cmds += [(v.partition(":")[0], driver, variant_env(env, a, v, tmp))
                     for v in a.variant]
            for name, cmd, e in (cmds if i % 2 == 0 else cmds[::-1]):
                rate, cpu, _ = one_run(cmd, e)
                got[name].append((rate, cpu))
            census = check_census(out, decodes)
            print(f"pair {i}: " + ", ".join(f"{n} {got[n][-1][0]:.2f}" for n in names) +
                  " tok/s", flush=True)
    return got, census


def shim_of(a):
    return os.path.join(os.path.dirname(os.path.abspath(a.fbcount)), "..", "..", "interpose",
                        "libfbcount.so")


TOKEN = re.compile(r"^token ([01]) (\S+)$", re.M)
SCOPE = re.compile(r"^scope (\{.*\})$", re.M)


def alternate(a, model, env):
    """Paired token times of --alternate processes: [(plain seconds, counted seconds)]."""
    e = dict(env, LD_PRELOAD=shim_of(a), FBCOUNT_OUTPUT="none", FBCOUNT="0")
    pairs = []
    for i in range(a.alternate):
        run = subprocess.run([a.driver, a.bins, model, "--rounds", str(a.rounds), "--gen",
                              str(a.gen), "--log", "/dev/null", "--alternate"],
                             capture_output=True, text=True, env=e, timeout=1800)
        if run.returncode != 0:
            sys.exit(f"bench_decode: --alternate: exit {run.returncode}\n{run.stderr[-2000:]}")
        tokens = [(int(k), float(t)) for k, t in TOKEN.findall(run.stdout)]
        scope = SCOPE.search(run.stdout)
        total = json.loads(scope.group(1)).get("total", {}) if scope else {}
        if total.get("splits", 0) < 1 or total.get("transfers", 0) < 1:
            sys.exit(f"bench_decode: --alternate: the last scope recorded {total or 'nothing'}: "
                     "no split and copies, so its tokens measured no census")
        per_round = a.gen
        for r in range(1, a.rounds):  # the first round builds pipelines
            got = tokens[r * per_round:(r + 1) * per_round]
            pairs += [(got[j][1], got[j + 1][1]) for j in range(0, len(got) - 1, 2)
                      if got[j][0] == 0 and got[j + 1][0] == 1]
        print(f"alternate run {i}: {len(pairs)} pairs so far", flush=True)
    return pairs


def rows_of(a, got):
    plain = got["plain"]
    size = f"{a.layers}x{a.embd}"
    p_med = statistics.median(r for r, _ in plain)
    rows = [{"bench": "decode", "case": "plain", "size": size, "value": round(p_med, 3),
             "unit": "tok/s", "pairs": a.pairs, "rounds": a.rounds, "gen": a.gen}]
    for name, under in got.items():
        if name == "plain":
            continue
        ratios = [u[0] / p[0] for p, u in zip(plain, under)]
        cpu = [u[1] / p[1] for p, u in zip(plain, under)]
        rows.append({"bench": "decode", "case": "fbcount run" if name == "fbcount" else name,
                     "size": size, "value": round(statistics.median(r for r, _ in under), 3),
                     "unit": "tok/s", "peer": "plain", "peer_value": round(p_med, 3),
                     "ratio": rounded(spread(ratios)),
                     "cpu_ratio": rounded(spread(cpu)),
                     "target_ratio": TARGET, "pairs": a.pairs, "rounds": a.rounds,
                     "gen": a.gen})
    return rows


def token_rows(a, pairs):
    ratios = [p / c for p, c in pairs]
    size = f"{a.layers}x{a.embd}"
    plain = statistics.median(1 / p for p, _ in pairs)
    counted = statistics.median(1 / c for _, c in pairs)
    return [{"bench": "decode", "case": "scope every other token, census off", "size": size,
             "value": round(counted, 3), "unit": "tok/s", "peer": "the token before, plain",
             "peer_value": round(plain, 3),
             "ratio": rounded(spread(ratios)),
             "target_ratio": TARGET, "pairs": len(pairs), "runs": a.alternate,
             "rounds": a.rounds, "gen": a.gen}]


def table(docs):
    """The RESULTS.md table: one line per measured case, from the results files."""
    lines = ["| what | device | model | figure | peer | ratio: median (its 95% interval); "
             "quartiles; min..max of pairs | CPU ratio | target |",
             "|---|---|---|---|---|---|---|---|"]
    for doc in docs:
        for r in doc["rows"]:
            if r["case"] == "plain":
                lines.append(f"| decode, plain | {doc['device']} | {r['size']} | "
                             f"{r['value']:.2f} tok/s | - | - | - | - |")
                continue
            q = r["ratio"]
            cpu = f"{r['cpu_ratio']['median']:.4f}" if "cpu_ratio" in r else "-"
            met = verdict(q, r["target_ratio"])
            ci = f" (95%: {q['ci95'][0]:.4f}..{q['ci95'][1]:.4f})" if "ci95" in q else ""
            what = ("decode, under fbcount run" if r["case"] == "fbcount run" else
                    f"decode, {r['case']} ({r['pairs']} pairs)" if "cpu_ratio" not in r else
                    f"decode, preloaded, {r['case']}")
            lines.append(f"| {what} | {doc['device']} | {r['size']} | "
                         f"{r['value']:.2f} tok/s | {r['peer_value']:.2f} tok/s | "
                         f"{q['median']:.4f}{ci}; {q['q1']:.4f}..{q['q3']:.4f}; "
                         f"{q['min']:.4f}..{q['max']:.4f} | "
                         f"{cpu} | >= {r['target_ratio']} ({met}) |")
    return "\n".join(lines) + "\n"


def doc_mode(a):
    files = a.files or sorted(glob.glob(os.path.join(HERE, "..", "results", "*-decode.json")))
    docs = [json.load(open(p, encoding="utf-8")) for p in files]
    text = open(a.doc, encoding="utf-8").read()
    m = BLOCK.search(text)
    if not m:
        sys.exit(f"bench_decode: {a.doc} has no decode:table block")
    want = text[:m.start(2)] + table(docs) + text[m.end(2):]
    if a.check:
        if want != text:
            print(f"{a.doc}: the table differs from what {', '.join(files)} make:\n{table(docs)}")
            return 1
        return 0
    open(a.doc, "w", encoding="utf-8").write(want)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fbcount")
    p.add_argument("--driver")
    p.add_argument("--bins")
    p.add_argument("--pairs", type=int, default=8)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--gen", type=int, default=63)
    p.add_argument("--alternate", type=int, default=2,
                   help="processes that count every other token (0: none)")
    p.add_argument("--variant", action="append", default=[],
                   help="LABEL:VAR=VALUE,...: a preloaded process with these variables, "
                        "measured beside each pair")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--embd", type=int, default=256)
    p.add_argument("--device", default="lavapipe")
    p.add_argument("--results", help="write the rows here (tools/bench/results format)")
    p.add_argument("--census", help="copy the last run's census here")
    p.add_argument("--doc")
    p.add_argument("--check-doc", dest="check_doc")
    p.add_argument("files", nargs="*")
    a = p.parse_args()
    if a.doc or a.check_doc:
        a.check, a.doc = bool(a.check_doc), a.check_doc or a.doc
        return doc_mode(a)
    if not (a.fbcount and a.driver and a.bins):
        p.error("--fbcount, --driver and --bins are needed to measure")
    env = dict(os.environ, GGML_VK_VISIBLE_DEVICES=os.environ.get("GGML_VK_VISIBLE_DEVICES", "0"))
    env.pop("FBCOUNT_OUTPUT", None)
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.gguf")
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "llama", "make_gguf.py"), model,
                        "--layers", str(a.layers), "--embd", str(a.embd), "--heads", "4",
                        "--ff", str(2 * a.embd), "--words", "253"], check=True)
        got, census = measure(a, model, env)
        tokens = alternate(a, model, env) if a.alternate else []
    rows = rows_of(a, got) + (token_rows(a, tokens) if tokens else [])
    print(table([{"device": a.device, "rows": rows}]))
    if a.results:
        results.write(a.results, a.device, rows, " ".join(sys.argv),
                      datetime.date.today().isoformat())
    if a.census:
        json.dump(census, open(a.census, "w", encoding="utf-8"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

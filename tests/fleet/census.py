"""Dumps in the spec's newest form (times, ranks, census ids, Python and inlined frames), made
consistent from their stacks: ops, sites and totals are sums of the stacks, so any reader's
totals can be checked against them. Shared by the fleet tests."""
import json
import os
import random


def frame(sym, module=None, offset=None, file=None, line=None, inlined=False, python=False):
    f = {}
    if python:
        f["python"] = True
    elif module:
        f.update(ip=hex(0x7F0000000000 + offset), module=module, offset=hex(offset))
    if sym:
        f["symbol"] = sym
    if file:
        f["file"] = file
    if line:
        f["line"] = line
    if inlined:
        f["inlined"] = True
    return f


def stack(kind, op, site, count, nbytes, ns, frames):
    return {"kind": kind, "op": op, "site": site, "count": count, "bytes": nbytes,
            "max_bytes": nbytes // max(count, 1), "ns": ns, "max_ns": ns // max(count, 1),
            "frames": frames}


def dump(pid, stacks, exe="/opt/app/train", host="box", rank=None, seq=1, reason="exit",
         timed=True, modules=(), backend=None):
    ops = {"fallback": {}, "host_op": {}}
    for s in stacks:
        o = ops[s["kind"]].setdefault(s["op"], {"op": s["op"], "count": 0, "bytes": 0,
                                                "max_bytes": 0, "ns": 0, "max_ns": 0,
                                                "shapes": [], "sites": {}})
        for k in ("count", "bytes", "ns"):
            o[k] += s[k]
        o["max_bytes"] = max(o["max_bytes"], s["max_bytes"])
        o["max_ns"] = max(o["max_ns"], s["max_ns"])
        site = o["sites"].setdefault(s["site"], {"site": s["site"], "count": 0, "bytes": 0,
                                                 "ns": 0})
        for k in ("count", "bytes", "ns"):
            site[k] += s[k]
    lists = {}
    for kind, key in (("fallback", "ops"), ("host_op", "host_ops")):
        rows = sorted(ops[kind].values(), key=lambda o: (-o["bytes"], -o["count"]))
        for o in rows:
            o["sites"] = list(o["sites"].values())
            if not timed:
                del o["ns"], o["max_ns"]
                for st in o["sites"]:
                    del st["ns"]
        lists[key] = rows
    fb = [s for s in stacks if s["kind"] == "fallback"]
    ho = [s for s in stacks if s["kind"] == "host_op"]
    total = {"fallbacks": sum(s["count"] for s in fb), "bytes": sum(s["bytes"] for s in fb),
             "max_bytes": max([s["max_bytes"] for s in fb] or [0]),
             "host_ops": sum(s["count"] for s in ho), "host_bytes": sum(s["bytes"] for s in ho),
             "stacks": len(stacks)}
    if timed:
        total["ns"] = sum(s["ns"] for s in fb)
        total["host_ns"] = sum(s["ns"] for s in ho)
    else:
        stacks = [{k: v for k, v in s.items() if k not in ("ns", "max_ns")} for s in stacks]
    proc = {"pid": pid, "ppid": 1, "host": host, "exe": exe, "argv": [exe],
            "id": "%032x" % random.getrandbits(128)}
    if rank is not None:
        proc["rank"] = rank
    d = {"schema": "fbcount/1", "reason": reason, "seq": seq, "time": "2026-12-01T10:00:00Z",
         "process": proc, "config": {"mode": "count", "depth": 64, "op_prefix": ["vkt_"]},
         "symbolized": True, "total": total, "backend": backend, **lists, "stacks": stacks,
         "modules": list(modules)}
    if timed:
        d["config"]["timing"] = "fallback"
    return d


def tabled(d):
    """The same dump with each distinct frame written once, in frame_table, and stacks naming
    frames by index, as the shim writes them."""
    table, index = [], {}
    for s in d["stacks"]:
        ids = []
        for f in s["frames"]:
            key = json.dumps(f, sort_keys=True)
            if key not in index:
                index[key] = len(table)
                table.append(f)
            ids.append(index[key])
        s["frames"] = ids
    d["frame_table"] = table
    return d


def write(directory, d):
    os.makedirs(directory, exist_ok=True)
    p = d["process"]
    path = os.path.join(directory, "fbcount.%s.%d.%d.json" % (os.path.basename(p["exe"]),
                                                              p["pid"], d["seq"]))
    with open(path, "w") as f:
        json.dump(d, f)
    return path


LIB = "/usr/lib/libvkt.so.0"
APP = "/opt/app/train"
MODULES = [{"path": LIB, "base": "0x7f0000000000", "build_id": "5eed0001", "size": 1 << 20},
           {"path": APP, "base": "0x7f0000000000", "build_id": "a99a0002", "size": 1 << 16}]


def sample_census(directory):
    """Two ranks of one program: native frames with an inlined helper, Python frames above
    the C ones, an unsymbolized frame, host-resident work. Returns the dumps."""
    hr = frame("host_result", LIB, 0x1F30, "fallback.c", 40)
    dot = frame("vkt_dot", LIB, 0x3000, "dot.c", 77)
    conv = frame("vkt_conv", LIB, 0x4000, "conv.c", 12)
    helper = frame("gemm_tile", LIB, 0x3000, "dot.c", 70, inlined=True)
    main = frame("main", APP, 0xC010, "train.c", 9)
    raw = frame(None, APP, 0xE000)
    py_step = frame("train_step", file="/src/train.py", line=42, python=True)
    py_main = frame("<module>", file="/src/train.py", line=80, python=True)
    evalf = frame("eval_step", APP, 0xD020, "train.c", 31)
    hop = frame("host_resident_op", LIB, 0x1F90, "fallback.c", 60)
    tr = frame("vkt_transpose", LIB, 0x5000, "movement.c", 5)
    dumps = []
    for rank, pid, scale in ((0, 5100, 1), (1, 5101, 3)):
        stacks = [
            stack("fallback", "vkt_dot", "train_step", 7 * scale, 2048 * scale, 7000 * scale,
                  [hr, helper, dot, py_step, py_main, main]),
            stack("fallback", "vkt_conv", "eval_step", 5 * scale, 4096 * scale, 90000 * scale,
                  [hr, conv, evalf, raw, main]),
            stack("host_op", "vkt_transpose", "train_step", 3 * scale, 96 * scale, 300 * scale,
                  [hop, tr, py_step, py_main, main]),
        ]
        d = dump(pid, stacks, rank=rank, modules=MODULES,
                 backend={"native": 100, "fallback": 12 * scale, "host": 3 * scale})
        if rank == 1:
            d = tabled(d)
        write(directory, d)
        dumps.append(d)
    return dumps

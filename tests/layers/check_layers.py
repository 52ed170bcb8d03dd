#!/usr/bin/env python3
"""Checks that the files of a library depend on each other one way only.

A file depends on another when its object file uses (nm: undefined) a symbol that the other
object defines. The check reads the object files of one built library, builds that graph,
and fails on any cycle: no file may depend, directly or through others, on a file that
depends on it. With --order it also fails on an edge that goes up a declared order of
layers (a layer is the first folder of a source path, e.g. interpose/record/shard.c is in
"record"), so a new upward call shows up even before it closes a cycle. --layers-only checks
the layers alone, for a program whose files within one folder call each other both ways.

A symbol that an assembly file of the library defines under the name of a function one of
its own dependencies defines (the shim's loader entries: dlopen, dlsym) interposes that
function for the program; the library's own calls of it reach the dependency's function (the
entry passes calls from inside the library straight through), so they are no edge to the
assembly file. A C wrapper of the same kind runs code of its own and stays an edge.

Usage: check_layers.py [--order top,...,bottom [--layers-only]] [--list] OBJDIR...
OBJDIR is the library's private object folder in the build tree (meson names it
<target file>.p); meson names each object after its source path with '/' as '_'. A program
built of static libraries is checked as one: each OBJDIR of it (the command's).
"""
import argparse
import os
import re
import subprocess
import sys


def symbols(obj):
    """Defined and undefined global symbols of one object file."""
    out = subprocess.run(["nm", "--defined-only", "-g", "-P", obj], check=True,
                         capture_output=True, text=True).stdout
    defined = {line.split()[0] for line in out.splitlines() if line.strip()}
    out = subprocess.run(["nm", "--undefined-only", "-g", "-P", obj], check=True,
                         capture_output=True, text=True).stdout
    undefined = {line.split()[0] for line in out.splitlines() if line.strip()}
    return defined, undefined


def dependency_symbols(objdir):
    """Functions defined by the shared libraries the built library links to.

    The library is OBJDIR without meson's ".p"; ldd lists what it loads. Names are read
    without their version ("dlopen@@GLIBC_2.34" is "dlopen")."""
    lib = objdir.rstrip("/")
    lib = lib[:-2] if lib.endswith(".p") else lib
    if not os.path.isfile(lib) or lib.endswith(".a"):  # a static library loads nothing
        return set()
    out = subprocess.run(["ldd", lib], check=True, capture_output=True, text=True).stdout
    paths = [m.group(1) for m in re.finditer(r"=> (/\S+)", out)]
    names = set()
    for path in paths:
        out = subprocess.run(["nm", "-D", "--defined-only", "-P", path], check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            fields = line.split()
            if len(fields) >= 2 and fields[1] in ("T", "W", "i"):
                names.add(fields[0].split("@")[0])
    return names


def source_name(obj):
    """hooks_wrap.c.o -> hooks_wrap.c (meson's flattened source path)."""
    name = os.path.basename(obj)
    return name[:-2] if name.endswith(".o") else name


def layer_of(name, layers):
    for layer in layers:
        if name.startswith(layer + "_"):
            return layer
    return None


def find_cycles(graph):
    """Strongly connected components with more than one file (Tarjan, iterative)."""
    index, low, stack, on_stack, sccs = {}, {}, [], set(), []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))
    return sccs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--order", help="layers, top first, comma-separated")
    ap.add_argument("--list", action="store_true", help="print every dependency")
    ap.add_argument("--layers-only", action="store_true",
                    help="with --order: check the layers alone (files of one layer may call each "
                         "other both ways; no edge may go up)")
    ap.add_argument("objdir", nargs="+")
    args = ap.parse_args()

    objs = []
    for objdir in args.objdir:
        found = sorted(os.path.join(objdir, f) for f in os.listdir(objdir) if f.endswith(".o"))
        if not found:
            print(f"check_layers: no object files in {objdir}", file=sys.stderr)
            return 2
        objs += found
    defs, uses = {}, {}
    for obj in objs:
        name = source_name(obj)
        defs[name], uses[name] = symbols(obj)
    entries = [d for name, d in defs.items() if name.endswith(".S")]
    interposed = set().union(*entries) & set().union(*map(dependency_symbols, args.objdir))
    owner = {}
    for name, ds in defs.items():
        for s in ds - interposed:
            owner.setdefault(s, name)
    graph = {name: set() for name in defs}
    why = {}
    for name, us in uses.items():
        for s in us:
            dst = owner.get(s)
            if dst and dst != name:
                graph[name].add(dst)
                why.setdefault((name, dst), s)

    failed = False
    if args.list:
        for s in sorted(interposed):
            print(f"{s} interposes a dependency's function: no edge")
        for src in sorted(graph):
            for dst in sorted(graph[src]):
                print(f"{src} -> {dst} ({why[(src, dst)]})")

    for comp in [] if args.layers_only and args.order else find_cycles(graph):
        failed = True
        members = set(comp)
        print("check_layers: these files depend on each other in a circle:")
        for src in comp:
            for dst in sorted(graph[src] & members):
                print(f"  {src} -> {dst}  (uses {why[(src, dst)]})")

    if args.order:
        layers = [x.strip() for x in args.order.split(",") if x.strip()]
        rank = {layer: i for i, layer in enumerate(layers)}
        for name in sorted(graph):
            if layer_of(name, layers) is None:
                failed = True
                print(f"check_layers: {name} is in none of the layers {', '.join(layers)}")
        for src in sorted(graph):
            for dst in sorted(graph[src]):
                a, b = layer_of(src, layers), layer_of(dst, layers)
                if a is not None and b is not None and rank[b] < rank[a]:
                    failed = True
                    print(f"check_layers: {src} ({a}) calls up into {dst} ({b}) "
                          f"through {why[(src, dst)]}")

    nedges = sum(len(v) for v in graph.values())
    if failed:
        return 1
    print(f"check_layers: {len(graph)} files, {nedges} dependencies, one way")
    return 0


if __name__ == "__main__":
    sys.exit(main())

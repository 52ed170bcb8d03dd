#!/usr/bin/env python3
"""Python frames in the census, checked on the interpreter at hand.

libfbcount reads CPython's frames without the GIL, by each version's struct layout
(interpose/record/pyframes.c reads 3.11 and 3.12). This runs small programs under the preloaded
shim on the Python that runs this script, each calling a stand-in backend (tests/shim's
libfakevkt) through ctypes from a known line, and checks that the census names that line:
module level, nested functions, a thread, a generator, a method, a call through a wrapper in
a package named vkt (the backend's own, like the wrapper every program calls: the site is
its caller), non-ASCII names, and that no
"Python frames unavailable" warning was printed. One line per check; exit 0 when all pass, 1
when one fails, 77 when this Python is one the shim does not read (it says so).

Here, with Debian 12's 3.11, the python-frames-check test runs it on the build tree:
    python3 tests/python/pyframes_check.py run --shim SHIM --backend LIBFAKEVKT
For another machine (Ubuntu 24.04's 3.12 on the GPU machine), stage what it needs first:
    python3 tests/python/pyframes_check.py stage build .gpu/pyframes
copies the shim, the stand-in backend and the libraries the shim loads at its first use
(libunwind, libdw, libelf) into .gpu/pyframes (git ignores .gpu); there, with it carried:
    python3.12 tests/python/pyframes_check.py run .gpu/pyframes
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

PRELUDE = """
import ctypes, os
_fake = ctypes.CDLL(os.environ["FAKE"])

class _T(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int), ("shape", ctypes.c_int64 * 4)]

_t = _T(0, 1, (4, 0, 0, 0))

def backend_dot():
    _fake.vkt_dot(ctypes.byref(_t), 16)
"""

# name: (files {path: source}, the tag of the line every site must be; the main file is prog.py)
PROGRAMS = {
    "module level": ({"prog.py": "backend_dot()  # site\n"}, "site"),
    "nested functions": ({"prog.py": """
        def inner():
            backend_dot()  # site

        def middle():
            inner()

        def outer():
            middle()

        outer()
        """}, "site"),
    "a thread": ({"prog.py": """
        import threading

        def work():
            backend_dot()  # site

        t = threading.Thread(target=work)
        t.start()
        t.join()
        """}, "site"),
    "a generator": ({"prog.py": """
        def gen():
            for _ in range(2):
                backend_dot()  # site
                yield 1

        assert sum(gen()) == 2
        """}, "site"),
    "a method and a lambda": ({"prog.py": """
        class Model:
            def step(self):
                backend_dot()  # site

        Model().step()
        (lambda: Model().step())()
        """}, "site"),
    "through the backend's own package": ({
        "vkt/__init__.py": "from prelude import backend_dot\n\ndef dot():\n    backend_dot()\n",
        "prog.py": """
        import sys
        sys.path.insert(0, ".")
        import vkt

        def train():
            vkt.dot()  # site

        train()
        """}, "site"),
    "non-ASCII names": ({"prog.py": """
        def fällt_zurück_π():
            backend_dot()  # site

        fällt_zurück_π()
        """}, "site"),
}


def line_of(source, tag):
    for n, text in enumerate(source.splitlines(), 1):
        if text.rstrip().endswith(f"# {tag}"):
            return n
    raise AssertionError(f"no line tagged {tag}")


def run_program(name, shim, backend, libdir, tmp):
    """Runs one program under the shim; (ok, what it found)."""
    files, tag = PROGRAMS[name]
    d = tempfile.mkdtemp(dir=tmp)
    with open(os.path.join(d, "prelude.py"), "w") as f:
        f.write(PRELUDE)
    for path, source in files.items():
        os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
        with open(os.path.join(d, path), "w", encoding="utf-8") as f:
            f.write(("from prelude import backend_dot\n" if path == "prog.py" else "") + textwrap.dedent(source))
    with open(os.path.join(d, "prog.py"), encoding="utf-8") as f:
        want = line_of(f.read(), tag)
    # prelude.py's wrapper is the backend's own code, as vkt's package is.
    env = dict(os.environ, LD_PRELOAD=shim, FAKE=backend, FBCOUNT_OUTPUT=os.path.join(d, "d.%p.json"),
               FBCOUNT_QUIET="1", FBCOUNT_PY_BACKEND="vkt,prelude", PYTHONDONTWRITEBYTECODE="1",
               PYTHONIOENCODING="utf-8")
    if libdir:
        env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    p = subprocess.run([sys.executable, "prog.py"], cwd=d, env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return False, f"exit {p.returncode}: {p.stderr.strip()[-400:]}"
    if "fbcount:" in p.stderr:
        return False, f"the shim warned: {p.stderr.strip()[-400:]}"
    dumps = glob.glob(os.path.join(d, "d.*.json"))
    if len(dumps) != 1:
        return False, f"{len(dumps)} dumps"
    with open(dumps[0], encoding="utf-8") as f:
        dump = json.load(f)
    op = next((o for o in dump.get("ops", []) if o["op"] == "vkt_dot"), None)
    if op is None:
        return False, f"no vkt_dot in the census: {[o['op'] for o in dump.get('ops', [])]}"
    got = sorted({(os.path.basename(s.get("file") or ""), s.get("line"), s.get("python", False), s["site"])
                  for s in op["sites"]})
    ok = all(f == "prog.py" and line == want and py for f, line, py, _ in got)
    return ok, ", ".join(f"{site} ({f}:{line}{', python' if py else ''})" for f, line, py, site in got) + \
        ("" if ok else f"; want prog.py:{want}")


def run(args):
    if args.stage:
        shim = os.path.join(args.stage, "libfbcount.so")
        backend = os.path.join(args.stage, "libfakevkt.so")
        libdir = os.path.abspath(args.stage)
    else:
        shim, backend, libdir = args.shim, args.backend, None
    if not (shim and backend):
        sys.exit("pyframes_check: run takes a staged folder, or --shim and --backend")
    v = sys.version_info
    print(f"CPython {sys.version.split()[0]} ({sys.executable}), {os.uname().sysname} {os.uname().machine}")
    if (v.major, v.minor) not in ((3, 11), (3, 12)):
        print(f"pyframes_check: the shim reads CPython 3.11 and 3.12, not {v.major}.{v.minor}: nothing to check")
        return 77
    failed = 0
    with tempfile.TemporaryDirectory(prefix="fbcount-pyframes-") as tmp:
        for name in PROGRAMS:
            ok, found = run_program(name, os.path.abspath(shim), os.path.abspath(backend), libdir, tmp)
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}: {found}")
    print(f"pyframes_check: {len(PROGRAMS) - failed} of {len(PROGRAMS)} checks passed on CPython "
          f"{v.major}.{v.minor}.{v.micro}")
    return 1 if failed else 0


def loaded_path(soname):
    """Where the loader finds soname on this machine (its cache, as ldconfig -p lists it)."""
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(" ")[0] == soname and "x86-64" in name:
            return path
    sys.exit(f"pyframes_check: cannot find {soname} (ldconfig -p)")


def stage(args):
    os.makedirs(args.dest, exist_ok=True)
    copies = {"libfbcount.so": os.path.join(args.build, "interpose", "libfbcount.so"),
              "libfakevkt.so": os.path.join(args.build, "tests", "shim", "libfakevkt.so")}
    # The libraries the shim loads at its first use; what they link in turn (zlib, lzma, bzip2,
    # zstd) the other machine has in newer versions.
    for soname in ("libunwind.so.8", "libdw.so.1", "libelf.so.1"):
        copies[soname] = loaded_path(soname)
    for name, src in copies.items():
        shutil.copy2(os.path.realpath(src), os.path.join(args.dest, name))
    with open(os.path.join(args.dest, "FROM"), "w") as f:
        tree = subprocess.run(["git", "log", "--oneline", "-1"], capture_output=True, text=True).stdout
        f.write(tree + "".join(f"{n} <- {s}\n" for n, s in copies.items()))
    print(f"pyframes_check: staged {', '.join(copies)} in {args.dest}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="check the Python frames of this interpreter")
    r.add_argument("stage", nargs="?", help="a folder made by stage")
    r.add_argument("--shim")
    r.add_argument("--backend")
    s = sub.add_parser("stage", help="copy what run needs into a folder, for another machine")
    s.add_argument("build")
    s.add_argument("dest")
    args = ap.parse_args()
    return run(args) if args.cmd == "run" else stage(args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The installed tree, used as a new user uses it (issue 16).

`meson install --destdir D` of this build puts the tree under D<prefix>; everything is then
used from there, as if installed at that prefix, with no LD_LIBRARY_PATH and no FBCOUNT_SHIM:
- every installed program and library finds its libraries in the installed tree (ldd), and
  the installed vkt-lenet runs;
- the .pc files lie in <prefix>/<libdir>/pkgconfig (lib/x86_64-linux-gnu on Debian), and an
  outside C program (app.c) builds with `pkg-config --cflags --libs vkt fbcount` and runs
  on its own; the prefix is redefined to where the tree lies (--define-variable), which is
  what a relocated install needs;
- the installed `fbcount run` finds the installed shim, and the census shows the program's
  fallback (VKT_NATIVE_DISABLE=dot); its in-process census (fbcount_count) agrees;
- `man -l` renders each installed page, and `man` finds each by name in <mandir>;
- vkt-lenet-mpi is installed by a build with the tests and not by one without them, as the
  README's install table says (meson setup -Dtests=false, read with meson introspect).

Each check is reported apart. Where one fails, the next ones are still made, with the
missing piece supplied by the test and said in its output ("supplied: ...").

usage: install_test.py MESON BUILD_ROOT SOURCE_DIR
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fleet"))
from verdict import done, expect  # noqa: E402

MESON, BUILD, HERE = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
PAGES = ["man1/fbcount.1", "man3/libfbcount.3", "man3/vkt.3", "man5/fbcount-dump.5"]


def clean_env(**kw):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("FBCOUNT", "VKT_", "PKG_CONFIG", "LD_", "MAN", "DEBUGINFOD_")):
            del env[k]
    env.update(kw)
    return env


def run(argv, timeout=120, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


opts = {o["name"]: o["value"] for o in json.loads(
    run([MESON, "introspect", "--buildoptions", BUILD]).stdout)}
tmp = tempfile.mkdtemp(prefix="fbcount-install.")
try:
    dest = os.path.join(tmp, "dest")
    p = run([MESON, "install", "-C", BUILD, "--no-rebuild", "--destdir", dest], timeout=300,
            env=clean_env())
    if not expect(p.returncode == 0, f"meson install --destdir: exit {p.returncode}\n"
                  f"{p.stdout[-2000:]}\n{p.stderr[-2000:]}"):
        done("install")
    prefix = dest + opts["prefix"]
    at = {k: os.path.join(prefix, opts[k]) for k in ("bindir", "libdir", "includedir",
                                                     "mandir", "datadir")}
    fbcount = os.path.join(at["bindir"], "fbcount")

    # ---- the layout a user is told about ---------------------------------------------------
    pcdir = os.path.join(at["libdir"], "pkgconfig")
    for f in [os.path.join(pcdir, "vkt.pc"), os.path.join(pcdir, "fbcount.pc"), fbcount,
              os.path.join(at["bindir"], "vkt-lenet"),
              os.path.join(at["libdir"], "libvkt.so.0"), os.path.join(at["libdir"], "libfbcount.so"),
              os.path.join(at["includedir"], "vkt.h"), os.path.join(at["includedir"], "fbcount.h"),
              os.path.join(at["datadir"], "fbcount", "fbcount-dump.schema.json")] + \
            [os.path.join(at["mandir"], p) for p in PAGES]:
        expect(os.path.exists(f), f"not installed: {os.path.relpath(f, dest)}")
    arch = run(["gcc", "-print-multiarch"]).stdout.strip()
    if opts["libdir"] == "lib/" + arch:  # the default on Debian, as the README says
        expect(os.path.isfile(os.path.join(prefix, "lib", arch, "pkgconfig", "vkt.pc")),
               f"the .pc files are not in <prefix>/lib/{arch}/pkgconfig")

    # ---- installed programs and libraries find their libraries -----------------------------
    elves = [f for f in glob.glob(os.path.join(at["bindir"], "*")) +
             glob.glob(os.path.join(at["libdir"], "*.so*"))
             if os.path.isfile(f) and not os.path.islink(f) and open(f, "rb").read(4) == b"\x7fELF"]
    for f in sorted(elves):
        out = run(["ldd", f], env=clean_env()).stdout
        missing = re.findall(r"^\s*(\S+) => not found", out, re.M)
        # A library of this project must come from this tree, not from another installation.
        ours = [m for m in re.findall(r"^\s*((?:libvkt|libfbcount)\S*) => (/\S+)", out, re.M)
                if not m[1].startswith(dest)]
        expect(not missing, f"{os.path.relpath(f, dest)}: without LD_LIBRARY_PATH, not found: "
               f"{', '.join(missing)} (no run path to {opts['libdir']})")
        expect(not ours, f"{os.path.relpath(f, dest)}: loads another installation's "
               f"{ours}")
    p = run([os.path.join(at["bindir"], "vkt-lenet"), "--help"], env=clean_env())
    expect(p.returncode == 0 and "usage" in (p.stdout + p.stderr).lower(),
           f"installed vkt-lenet --help without LD_LIBRARY_PATH: exit {p.returncode}\n"
           f"{p.stderr}")

    # ---- an outside program built with pkg-config ------------------------------------------
    penv = clean_env(PKG_CONFIG_PATH=pcdir)
    p = run(["pkg-config", "--define-variable=prefix=" + prefix, "--cflags", "--libs", "vkt",
             "fbcount"], env=penv)
    expect(p.returncode == 0, f"pkg-config --cflags --libs vkt fbcount: {p.stderr}")
    flags = p.stdout.split()
    expect(f"-I{at['includedir']}" in flags and f"-L{at['libdir']}" in flags,
           f"pkg-config flags do not point into the installed tree: {flags}")
    rpath = [f for f in flags if f.startswith("-Wl,-rpath")]
    if not expect(rpath, f"pkg-config --libs vkt fbcount gives no run path to {opts['libdir']}: "
                  f"a program built with it needs LD_LIBRARY_PATH ({' '.join(flags)})"):
        flags.append("-Wl,-rpath," + at["libdir"])
        print("supplied: -Wl,-rpath," + at["libdir"] + " (the .pc files do not give it)")
    app = os.path.join(tmp, "app")
    p = run(["cc", "-std=c11", "-g", "-Wall", "-Wextra", "-Werror", os.path.join(HERE, "app.c"),
             "-o", app] + flags, env=penv)
    if expect(p.returncode == 0, f"cc app.c with pkg-config's flags: {p.stderr}"):
        p = run([app], env=clean_env())
        expect(p.returncode == 0 and "in-process census: 0 fallback(s) of vkt_dot" in p.stdout,
               f"app on its own (natively, without LD_LIBRARY_PATH): exit {p.returncode}\n"
               f"{p.stdout}{p.stderr}")
        # pkg-config --libs vkt fbcount links -lvkt first: libvkt's own host_result comes first
        # in the program's lookup, and the in-process scope still sees its fallback
        p = run([app], env=clean_env(VKT_NATIVE_DISABLE="dot"))
        expect(p.returncode == 0 and "in-process census: 1 fallback(s) of vkt_dot" in p.stdout,
               f"app's scope, linked -lvkt before -lfbcount, sees the fallback: exit "
               f"{p.returncode}\n{p.stdout}{p.stderr}")

        # ---- under the installed fbcount run -----------------------------------------------
        out_dir = os.path.join(tmp, "census")
        argv = [fbcount, "run", "-o", out_dir, "--", app]
        p = run(argv, env=clean_env(VKT_NATIVE_DISABLE="dot"))
        if not expect(p.returncode == 0, f"installed fbcount run app: exit {p.returncode} "
                      f"(5: the installed shim was not found)\n{p.stderr}"):
            if p.returncode == 5:
                shim = os.path.join(at["libdir"], "libfbcount.so")
                print(f"supplied: FBCOUNT_SHIM={shim} (fbcount run did not find it)")
                shutil.rmtree(out_dir, ignore_errors=True)
                p = run(argv, env=clean_env(VKT_NATIVE_DISABLE="dot", FBCOUNT_SHIM=shim))
        m = re.search(r"app: libfbcount: (\S+)", p.stdout)
        expect(m and os.path.realpath(m.group(1)).startswith(os.path.realpath(dest)),
               f"app under fbcount run: libfbcount is not the installed copy:\n{p.stdout}")
        expect("in-process census: 1 fallback(s) of vkt_dot" in p.stdout,
               f"app under fbcount run: its in-process census:\n{p.stdout}{p.stderr}")
        expect(re.search(r"^\s*vkt_dot\s+1\s.*\bstep \(app\.c:\d+\) 1$", p.stderr, re.M),
               f"fbcount run: the census does not show app's vkt_dot from step:\n{p.stderr}")
        p = run([fbcount, "report", "--format", "json", "--by", "site", out_dir],
                env=clean_env())
        rows = json.loads(p.stdout).get("fallbacks", []) if p.returncode == 0 else []
        expect([(r.get("site"), r.get("count"), os.path.basename(r.get("file") or ""))
                for r in rows] == [("step", 1, "app.c")],
               f"installed fbcount report --by site: {rows} {p.stderr}")

    # ---- the man pages ---------------------------------------------------------------------
    for page in PAGES:
        path = os.path.join(at["mandir"], page)
        p = run(["man", "-l", path], env=clean_env(MANWIDTH="80", MAN_KEEP_FORMATTING="0"))
        text = re.sub(r".\x08", "", p.stdout)
        expect(p.returncode == 0 and "NAME" in text and "SEE ALSO" in text and not p.stderr,
               f"man -l {os.path.relpath(path, dest)}: exit {p.returncode} {p.stderr}")
        name, section = os.path.basename(page).rsplit(".", 1)
        p = run(["man", "-w", section, name], env=clean_env(MANPATH=at["mandir"]))
        expect(p.stdout.strip() == path, f"man {section} {name} with MANPATH={opts['mandir']}: "
               f"{p.stdout.strip() or p.stderr.strip()}")
    # a build without the tests installs no vkt-lenet-mpi (and needs no MPI)
    installed = json.loads(run([MESON, "introspect", "--installed", BUILD]).stdout)
    mpi = [v for v in installed.values() if os.path.basename(v) == "vkt-lenet-mpi"]
    expect(mpi if opts.get("tests") else not mpi, f"vkt-lenet-mpi installed with the tests: {mpi}")
    bare = os.path.join(tmp, "no-tests")
    p = run([MESON, "setup", bare, os.path.dirname(os.path.dirname(HERE)), "-Dtests=false"],
            timeout=300, env=clean_env())
    installed = json.loads(run([MESON, "introspect", "--installed", bare]).stdout or "{}")
    expect(p.returncode == 0 and installed and
           not [v for v in installed.values() if os.path.basename(v) == "vkt-lenet-mpi"],
           f"-Dtests=false installs no vkt-lenet-mpi: {p.returncode} {p.stderr[-500:]}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
done("install")

#!/usr/bin/env python3
"""The man pages render without a groff warning, are all installed, and say what the code
does: fbcount(1) names every subcommand, option and option value of the command's --help,
libfbcount(3) every variable the shim reads (and every %-escape of FBCOUNT_OUTPUT) and every
function of fbcount.h, vkt(3) every function, op, status and variable of libvkt, and
fbcount-dump(5) every field name of rules/fields.h. The JSON schemas accept what the command
and the shim really write (hand-made dumps, and every report, diff and check form).

usage: docs_test.py FBCOUNT DATA_DIR SOURCE_ROOT [BUILD_ROOT]
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

FB, DATA, SRC = (os.path.abspath(a) for a in sys.argv[1:4])
BUILD = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


pages = [os.path.join(SRC, "tools", "fbcount", "fbcount.1")] + \
        sorted(glob.glob(os.path.join(SRC, "docs", "man", "*.[1-9]")))
for page in pages:
    p = subprocess.run(["groff", "-ww", "-z", "-man", page], capture_output=True, text=True)
    expect(p.returncode == 0 and not p.stderr, f"{page}: groff warns: {p.stderr}")
    p = subprocess.run(["man", "-l", page], capture_output=True, text=True,
                       env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0"))
    text = re.sub(r".\x08", "", p.stdout)  # overstrike bold, where man keeps it
    expect(p.returncode == 0 and "NAME" in text and "SEE ALSO" in text,
           f"{page}: man -l fails: {p.stderr}")


def source_text(page):
    """A page's source as plain text: escapes and font changes dropped, so names can be
    looked for in it whatever markup surrounds them."""
    t = open(page).read().replace("\\-", "-").replace("\\e", "\\")
    return re.sub(r"\\f[BIRP]|\\\(\w\w|\\&", "", t)


def section(text, name):
    m = re.search(r"^\.SH " + re.escape(name) + r"\n(.*?)(?=^\.SH |\Z)", text, re.M | re.S)
    return m.group(1) if m else ""


def word_in(word, text):
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


def page(name):
    return source_text(os.path.join(SRC, "docs", "man", name))


# Every page is installed (tools/fbcount/meson.build).
build_text = open(os.path.join(SRC, "tools", "fbcount", "meson.build")).read()
installed = re.search(r"install_man\((.*?)\)", build_text, re.S)
installed = {os.path.basename(x) for x in re.findall(r"'([^']+)'", installed.group(1))} \
    if installed else set()
for pg in pages:
    expect(os.path.basename(pg) in installed, f"{pg}: not in install_man ({sorted(installed)})")
expect({"libfbcount.3", "vkt.3", "fbcount-dump.5", "fbcount.1"} <= installed,
       f"install_man lacks a page: {sorted(installed)}")

# fbcount(1): every subcommand, option and option value the command's help names.
fb1 = source_text(os.path.join(SRC, "tools", "fbcount", "fbcount.1"))
top = subprocess.run([FB, "--help"], capture_output=True, text=True).stdout
subs = re.findall(r"^  ([a-z]+)  ", top.split("Commands:")[1].split("\n\n")[0], re.M)
expect(len(subs) >= 6, f"fbcount --help lists its commands: {subs}")
commands = section(fb1, "COMMANDS")
synopsis = section(fb1, "SYNOPSIS")
for opt in ("--help", "--version"):  # every subcommand takes them: said once, in SYNOPSIS
    expect(word_in(opt, synopsis), f"fbcount.1: {opt} is not in SYNOPSIS")
for sub in subs:
    entry = re.search(r"^\.TP\n\.B " + sub + r"\n(.*?)(?=^\.TP\n\.B [a-z]+\n|\Z)", commands,
                      re.M | re.S)
    usage = re.search(r"^\.B fbcount " + sub + r"\n(.*?)(?=^\.br|\Z)", synopsis, re.M | re.S)
    expect(entry and usage, f"fbcount.1: no SYNOPSIS line or COMMANDS entry for {sub}")
    said = (entry.group(1) if entry else "") + (usage.group(1) if usage else "")
    text = subprocess.run([FB, sub, "--help"], capture_output=True, text=True).stdout
    for line in text.splitlines():
        m = re.match(r"^\s+(?:-\w, )?(--[a-z][a-z-]*)(?:[ =\[]+([a-z|]+\|[a-z|]+))?", line)
        if not m or m.group(1) in ("--help", "--version"):
            continue
        expect(word_in(m.group(1), said), f"fbcount.1: {sub} {m.group(1)} is not described")
        for value in (m.group(2) or "").split("|"):
            expect(not value or word_in(value, said),
                   f"fbcount.1: {sub} {m.group(1)} {value} is not described")


# SYNOPSIS against each command's table of options (tools/fbcount/cmd/options.h), as its
# --help prints it: the same options both ways, each with an argument on both or on neither.
def options_of_help(text):
    found = {}
    for line in text.splitlines():
        m = re.match(r"^  (?:-\w, )?--([a-z][a-z-]*)(\[=|=| )?(\S*)", line)
        if m and m.group(1) not in ("help", "version"):
            found[m.group(1)] = bool(m.group(2) and m.group(3))
    return found


def options_of_synopsis(usage):
    found = {}
    for m in re.finditer(r"(?<![\w-])--([a-z][a-z-]*)( \"| \[ =)?", usage):
        found[m.group(1)] = bool(m.group(2))
    return found


for sub in subs:
    usage = re.search(r"^\.B fbcount " + sub + r"\n(.*?)(?=^\.br|\Z)", synopsis, re.M | re.S)
    text = subprocess.run([FB, sub, "--help"], capture_output=True, text=True).stdout
    helped, man = options_of_help(text), options_of_synopsis(usage.group(1) if usage else "")
    expect(helped, f"fbcount {sub} --help lists no option")
    for opt in sorted(set(helped) | set(man)):
        expect(opt in man, f"fbcount.1: SYNOPSIS of {sub} lacks --{opt}")
        expect(opt in helped, f"fbcount.1: SYNOPSIS of {sub} names --{opt}, which it does not take")
        expect(opt not in man or opt not in helped or man[opt] == helped[opt],
               f"fbcount.1: SYNOPSIS of {sub}: --{opt} " +
               ("takes no argument" if opt in helped and not helped[opt] else "takes an argument"))

# Exit codes: one list in cli.h prints in every --help; the man page's EXIT STATUS and the
# README's table name the same codes, in the same order.
codes = re.findall(r"^ +(\d+)  ", top.split("Exit codes:")[1], re.M) if "Exit codes:" in top else []
expect(len(codes) >= 10 and codes[0] == "0", f"fbcount --help lists its exit codes: {codes}")
man_codes = re.findall(r"^\.TP\n(\d+)\n", section(fb1, "EXIT STATUS"), re.M)
expect(man_codes == codes, f"fbcount.1 EXIT STATUS {man_codes} != --help {codes}")
readme = open(os.path.join(SRC, "README.md")).read()
table = readme.split("### Exit codes", 1)[-1].split("\n\n", 2)[1] if "### Exit codes" in readme else ""
readme_codes = re.findall(r"^\| (\d+) \|", table, re.M)
expect(readme_codes == codes, f"README's exit codes {readme_codes} != --help {codes}")

# libfbcount(3): every variable the shim reads, every FBCOUNT_OUTPUT escape, every function.
lib3 = page("libfbcount.3")
env3 = section(lib3, "ENVIRONMENT")
base = os.path.join(SRC, "interpose", "base")
contract = open(os.path.join(SRC, "rules", "contract.h")).read()
listed = re.search(r"#define FBR_VARIABLES\(X\)(.*?)\n\n", contract, re.S)
expect(listed, "contract.h: FBR_VARIABLES not found")
process = open(os.path.join(base, "process.c")).read()
shim_vars = set(re.findall(r'X\(\w+, "(FBCOUNT\w*)"\)', listed.group(1) if listed else ""))
shim_vars |= set(re.findall(r'"((?:OMPI|PMI|PMIX|SLURM)_\w+)"', process))
expect(len(shim_vars) >= 18, f"variables found in the shim's sources: {sorted(shim_vars)}")
for var in sorted(shim_vars):
    expect(word_in(var, env3), f"libfbcount.3: {var} is not in ENVIRONMENT")
modes = re.search(r"#define FBR_MODES\(X\)(.*?)\n\n", contract, re.S)
modes = re.findall(r'X\(\w+, "(\w+)"', modes.group(1) if modes else "")
expect(len(modes) >= 4, f"contract.h: the modes (FBR_MODES) were not found: {modes}")
mode_text = env3.split("FBCOUNT_MODE", 1)[-1]
for cmd in ("run", "attach"):
    usage = subprocess.run([FB, cmd, "--help"], capture_output=True, text=True).stdout
    for mode in modes:
        expect(word_in(mode, mode_text), f"libfbcount.3: FBCOUNT_MODE's {mode} is not described")
        expect(word_in(mode, usage), f"fbcount {cmd} --help does not name the mode {mode}")
escapes = re.search(r'#define FBR_OUTPUT_ESCAPES "([a-z%]+)"', contract)
expect(escapes, "contract.h: the FBCOUNT_OUTPUT escapes (FBR_OUTPUT_ESCAPES) were not found")
for c in escapes.group(1) if escapes else "":
    expect(re.search(r"^\.B %" + re.escape(c) + "$", env3, re.M),
           f"libfbcount.3: FBCOUNT_OUTPUT's %{c} is not described")
header = open(os.path.join(SRC, "interpose", "fbcount.h")).read()
functions = set(re.findall(r"\b(fbcount_\w+)\s*\(", header)) - {"fbcount_fail_hook"}
expect(len(functions) >= 18, f"functions found in fbcount.h: {sorted(functions)}")
api = section(lib3, "IN-PROCESS API")
for fn in sorted(functions | {"FBCOUNT_ASSERT_NONE"}):
    expect(word_in(fn, section(lib3, "SYNOPSIS")) and word_in(fn, api),
           f"libfbcount.3: {fn} is not in SYNOPSIS and IN-PROCESS API")

# vkt(3): every public function, op, status and variable of libvkt.
vkt3 = page("vkt.3")
vkt_h = open(os.path.join(SRC, "backend", "vkt.h")).read()
public = set(re.findall(r"VKT_API[^;{]*?\b((?:vkt|host)_\w+)\s*\(", vkt_h))
for macro in ("VKT_UNARY_OPS", "VKT_BINARY_OPS"):
    m = re.search(r"#define " + macro + r"\(X\)(.*?)\n\n", vkt_h, re.S)
    expect(m, f"vkt.h: {macro} not found")
    public |= set(re.findall(r"X\((\w+),", m.group(1) if m else ""))
public |= set(re.findall(r"\b(VKT_E[A-Z]+)\s*(?:=|,\s*-)", vkt_h))  # enum or X(name, value)
backend = "".join(open(f).read() for f in glob.glob(os.path.join(SRC, "backend", "*.c")))
public |= set(re.findall(r'getenv\("(\w+)"\)', backend))
expect(len(public) >= 120 and "VKT_EINVAL" in public,
       f"names found in libvkt's sources: {len(public)}")
for name in sorted(public):
    expect(word_in(name, vkt3), f"vkt.3: {name} is not described")

# fbcount-dump(5): every field name the shim and the command share.
dump5 = page("fbcount-dump.5")
fields = re.findall(r'#define FBR_\w+ "([^"]+)"', open(os.path.join(SRC, "rules", "fields.h")).read())
expect(len(fields) >= 60, f"field names found in rules/fields.h: {len(fields)}")
for name in fields:
    expect(word_in(name, dump5), f"fbcount-dump.5: field {name} is not described")

try:
    import jsonschema
except ImportError:  # Debian's python3-jsonschema, when another python3 comes first on PATH
    sys.path.append("/usr/lib/python3/dist-packages")
    import jsonschema


def schema(name):
    return json.load(open(os.path.join(SRC, "docs", "schema", f"fbcount-{name}.schema.json")))


def validate(doc, name, what):
    try:
        jsonschema.validate(doc, schema(name))
    except jsonschema.ValidationError as e:
        expect(False, f"{what}: not a valid {name}: {e.message} at {list(e.absolute_path)}")


dumps = sorted(glob.glob(os.path.join(DATA, "**", "*.json"), recursive=True))
if BUILD:  # dumps the real shim wrote in this build's tests, when there are any
    dumps += sorted(glob.glob(os.path.join(BUILD, "**", "fbcount.*.json"), recursive=True))[:20]
for d in dumps:
    validate(json.load(open(d)), "dump", d)
with tempfile.TemporaryDirectory() as tmp:
    # a dump with every newer field, as the spec has it
    full = json.load(open(os.path.join(DATA, "run1", "fbcount.lenet.4242.1.json")))
    full["process"].update(id="0" * 31 + "1", parent_id="f" * 32, rank=2, elapsed_ns=10**9,
                           start_time="2026-11-30T18:00:00Z")
    full["config"].update(timing="fallback", py_backend=["vkt"])
    full["total"].update(ns=5, host_ns=1)
    full["reason"], full["signal"], full["signal_name"] = "signal", 15, "SIGTERM"
    full["stacks"][0]["frames"].insert(2, {"ip": "0x55550000a010", "symbol": "_ZN1a1bEv",
                                           "file": "a.h", "line": 3, "inlined": True})
    full["stacks"][0]["frames"].append({"python": True, "symbol": "f", "file": "t.py",
                                        "line": 1})
    for o in full["ops"]:
        o.update(ns=2, max_ns=1)
    validate(full, "dump", "dump with the newer fields")
    path = os.path.join(tmp, "full.json")
    json.dump(full, open(path, "w"))
    runs = [os.path.join(DATA, "run1"), path, os.path.join(DATA, "backends")]
    for src in runs:
        for by in ("op", "site", "stack", "shape", "rank", "host", "process", "backend"):
            out = subprocess.run([FB, "report", "--format", "json", "--by", by, src],
                                 capture_output=True, text=True).stdout
            validate(json.loads(out), "report", f"report --by {by} {src}")
    for by in ("op", "site", "backend"):
        for new in (path, os.path.join(DATA, "backends")):
            out = subprocess.run([FB, "diff", "--format", "json", "--all", "--by", by,
                                  os.path.join(DATA, "before"), new],
                                 capture_output=True, text=True).stdout
            validate(json.loads(out), "diff", f"diff --by {by} {new}")
    for args in (["--max", "100"], ["--max-time", "1s", "--host"], [],
                 ["--max-transfer-bytes", "1K", "--host"]):
        for src in (path, os.path.join(DATA, "backends")):
            out = subprocess.run([FB, "check", "--json"] + args + [src], capture_output=True,
                                 text=True).stdout
            validate(json.loads(out), "check", f"check --json {args} {src}")
for name in ("dump", "report", "diff", "check"):
    jsonschema.Draft202012Validator.check_schema(schema(name))

if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print(f"{len(pages)} man pages and {len(dumps)} dumps checked; all passed")

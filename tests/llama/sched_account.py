"""The account ggml's scheduler gives of each graph it computes (GGML_SCHED_DEBUG=2), read
from llama-driver's log, cut per decode at the driver's marks, and what a census must hold
for it: the copies of each split's inputs, and each CPU split's nodes with the bytes they
write.

The scheduler prints a graph's account when it splits the graph (llama.cpp reuses a graph,
unsplit and unprinted, while its shape holds: such a decode keeps the last account). Its
format (ggml-backend.cpp, ggml_backend_sched_print_assignments):
  ## SPLIT #<i>: <backend> # <n> inputs: [<name> (<size>)] ...
  node #<n> (<op, 10 wide>): <name, 20 wide> (<size>) [<backend, 5> <cause, 8>] use=U,c=C: \
      <name, 20> (<size>) [<backend, 5> <cause, 8>] ...
Sizes are ggml_nbytes rounded down to K or M (fmt_size); view nodes are not printed; c=0
marks a node the backend does not compute."""
import re
from dataclasses import dataclass, field

SPLIT_RE = re.compile(r"^## SPLIT #(\d+): (\S+) # (\d+) inputs(?:: (.*))?$")
INPUT_RE = re.compile(r"\[(.*?) \(\s*(\d+)([KM])\)\]")
NODE_RE = re.compile(r"^node #\s*(\d+) \(\s*(.{1,10})\): (.{20}) \(\s*(\d+)([KM])\) "
                     r"\[(.{5}) .{8}\] use=\d+,c=(\d):(.*)$")
SRC_RE = re.compile(r" (.{20}) \(\s*(\d+)([KM])\) \[(.{5}) .{8}\]")
DECODE_RE = re.compile(r"^@@ decode (\d+) tokens (\d+)$")
END_RE = re.compile(r"^@@ end (\d+)$")
UNIT = {"K": 1024, "M": 1024 * 1024}
# Ops the CPU backend skips (ggml_op_is_empty); the account prints views not at all.
EMPTY = {"NONE", "VIEW", "RESHAPE", "PERMUTE", "TRANSPOSE"}


@dataclass
class Node:
    op: str          # as printed: the first 10 characters of ggml_op_desc
    name: str
    size: tuple      # (lowest, highest + 1) bytes the printed size stands for
    computed: bool
    srcs: list = field(default_factory=list)  # [(name, (lo, hi))]


@dataclass
class Split:
    index: int
    backend: str
    inputs: list = field(default_factory=list)  # [(name, (lo, hi))]
    nodes: list = field(default_factory=list)


def size_range(n, unit):
    """The bytes a printed size stands for: fmt_size rounds down."""
    u = UNIT[unit]
    return (int(n) * u, (int(n) + 1) * u)


def parse_block(lines):
    """The splits of one printed account."""
    splits = []
    for line in lines:
        m = SPLIT_RE.match(line)
        if m:
            sp = Split(int(m.group(1)), m.group(2))
            for name, n, unit in INPUT_RE.findall(m.group(4) or ""):
                sp.inputs.append((name, size_range(n, unit)))
            if len(sp.inputs) != int(m.group(3)):
                raise ValueError(f"split {sp.index}: {m.group(3)} inputs, {len(sp.inputs)} read")
            splits.append(sp)
            continue
        m = NODE_RE.match(line)
        if m and splits:
            srcs = [(s.strip(), size_range(n, u)) for s, n, u, _ in SRC_RE.findall(m.group(8))]
            splits[-1].nodes.append(Node(m.group(2).strip(), m.group(3).strip(),
                                         size_range(m.group(4), m.group(5)), m.group(7) == "1",
                                         srcs))
    return splits


def per_decode(log_text):
    """[(tokens, splits)] for each decode marked in the log, in order."""
    decodes, current, tokens, last = [], None, 0, None
    for line in log_text.splitlines():
        m = DECODE_RE.match(line)
        if m:
            current, tokens = [], int(m.group(2))
            continue
        if END_RE.match(line):
            starts = [i for i, t in enumerate(current or []) if t.startswith("## SPLIT #0:")]
            if starts:
                last = parse_block(current[starts[-1]:])
            if last is None:
                raise ValueError("a decode before any account of the scheduler's")
            decodes.append((tokens, last))
            current = None
            continue
        if current is not None:
            current.append(line)
    return decodes


def place(backend):
    """A backend's memory as the census names it: the CPU's is the host's."""
    return "host" if backend == "CPU" else backend


def written(node, dst_type_size):
    """(lo, hi) of the bytes a computed node writes: its result, except SET_ROWS, which
    writes its rows (its first source, f32) into the destination's type."""
    if node.op == "SET_ROWS" and node.srcs:
        lo, hi = node.srcs[0][1]
        return (lo // 4 * dst_type_size, hi // 4 * dst_type_size)
    return node.size


def expected(splits, gpu, unsupported, cache_type_size=2):
    """What the census must hold for one decode's account:
      transfers: {label: [count, lo, hi]} for every input copied, by direction and split;
      splits: [(cause, [op, ...], lo, hi)] for every CPU split that computes a node;
      fallbacks: {op prefix (10 characters): count} of the nodes no GPU supports."""
    transfers, cpu, fallbacks = {}, [], {}
    for sp in splits:
        here = place(sp.backend)
        other = "host" if here != "host" else gpu
        for _, (lo, hi) in sp.inputs:
            t = transfers.setdefault(f"{other} -> {here} (split {sp.index})", [0, 0, 0])
            t[0], t[1], t[2] = t[0] + 1, t[1] + lo, t[2] + hi - 1
        if sp.backend != "CPU":
            continue
        nodes = [n for n in sp.nodes if n.computed and n.op not in EMPTY]
        if not nodes:
            continue
        for n in nodes:
            if n.op in unsupported:
                fallbacks[n.op] = fallbacks.get(n.op, 0) + 1
        sizes = [written(n, cache_type_size) for n in nodes]
        cause = "fallback" if any(n.op in unsupported for n in nodes) else "placement"
        cpu.append((cause, [n.op for n in nodes], sum(s[0] for s in sizes),
                    sum(s[1] - 1 for s in sizes)))
    return {"transfers": transfers, "splits": cpu, "fallbacks": fallbacks}

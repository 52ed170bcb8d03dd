"""fbcount: count the GPU->host fallbacks of a block of Python code, and gate tests on them.

    import fbcount, vkt
    with fbcount.count() as c:
        y = vkt.dot(a, b)
    assert c.total == 0, str(c)

count() records the calling thread (count(all_threads=True): every thread, one such
count at a time); c.total and c.bytes are the fallbacks and the bytes their results
carried off the GPU, c.ops maps each op to its OpCount, c.sites lists where the
application called them, str(c) is the short report. dump(path) writes the whole
process census now. Ops are named as the census names them ("vkt_dot"); op_named()
tells whether a name a person wrote ("dot" or "vkt_dot") names one, closest() which known
ops a name that names none may have meant, format_bytes() a size as the reports write it:
libfbcount's own rules. Over libfbcount's in-process API (fbcount.h); the pytest plugin is
fbcount.pytest_plugin.
"""
import ctypes
import json
import threading
from collections import namedtuple

from . import _lib
from ._lib import Error, library_path

__all__ = ["count", "Census", "OpCount", "Site", "dump", "Error", "library_path", "op_named",
           "short_name", "closest", "format_bytes"]


def _prefix_arg(prefixes):
    """prefixes (a list) as libfbcount takes them: comma-separated; None for FBCOUNT_OP_PREFIX
    as it is now."""
    return None if prefixes is None else ",".join(prefixes).encode()


def short_name(op, prefixes=None):
    """op without the op prefix it starts with ("vkt_dot" -> "dot"); op itself otherwise.
    libfbcount's rule (rules/opname.h), FBCOUNT_OP_PREFIX's prefixes unless given."""
    raw = op.encode()
    buf = ctypes.create_string_buffer(len(raw) + 1)
    return _lib.lib().fbcount_op_short(raw, _prefix_arg(prefixes), buf, len(buf)).decode()


def op_named(name, op, prefixes=None):
    """Whether name, as a person wrote it ("dot" or "vkt_dot"), names op as the census names it:
    the same text, or one is the other with its op prefix taken off. libfbcount's rule
    (rules/opname.h), for allow lists on this side."""
    return _lib.lib().fbcount_op_named(name.encode(), op.encode(), _prefix_arg(prefixes))


def closest(name, known, prefixes=None, most=3):
    """Up to most of the known ops a person writing name may have meant, closest first:
    libfbcount's rule (rules/opname.h: short names within an edit distance of a third of the
    longer one, case ignored), the one its own warnings about unknown names use."""
    known = [k.encode() for k in known]
    if not known or most < 1:
        return []
    names = (ctypes.c_char_p * len(known))(*known)
    out = (ctypes.c_char_p * most)()
    n = _lib.lib().fbcount_op_closest(name.encode(), names, len(known), _prefix_arg(prefixes),
                                      out, most)
    return [out[i].decode() for i in range(n)]


def format_bytes(n):
    """n bytes as libfbcount's reports write them ("512 B", "4.0 KiB", "12 MiB")."""
    buf = ctypes.create_string_buffer(32)
    return _lib.lib().fbcount_format_bytes(n, buf, len(buf)).decode()


OpCount = namedtuple("OpCount", "count bytes max_bytes")
OpCount.__doc__ = "How often one op fell back (or ran on the host), and the bytes of its results."


# How a site reads where it is not on the falling thread's stack but where its work came from
# (the dump's "origin", rules/attrib.c's fbr_origin_prefix).
_ORIGIN_PREFIX = {"backward": "from backward() at ", "thread": "thread started at "}


class Site(namedtuple("Site", "op function file line count bytes origin node forward",
                      defaults=(None, None, None))):
    """A place in the application that called an op that fell back: function, file, line
    (file and line None where unknown). origin: None for the falling thread's own code;
    "backward" for the line that started the backward pass a thread of autograd's ran,
    "thread" for the line that started the thread. node: the autograd node a backward ran
    ("EluBackward0"), forward: where the forward op that made it ran (anomaly mode), or None."""

    __slots__ = ()

    def _before(self):
        """What a site says before its place (rules/attrib.c's fbr_site_text)."""
        node = ""
        if self.node:
            node = self.node + (f" of {self.forward}" if self.forward else "") + ", "
        return node + _ORIGIN_PREFIX.get(self.origin, "")

    @property
    def where(self):
        """'file:line' (the file's last part), or the function where no line is known; after
        "from backward() at " or "thread started at " where the site is the work's origin,
        and a backward's node before that."""
        if self.file and self.line:
            place = f"{self.file.rsplit('/', 1)[-1]}:{self.line}"
        else:
            place = self.function
        return self._before() + place

    def __str__(self):
        if self.file and self.line:
            return self._before() + f"{self.function} ({self.file.rsplit('/', 1)[-1]}:{self.line})"
        return self._before() + self.function


def _plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


class Census:
    """What a count saw. total and bytes: the fallbacks and the bytes of their results;
    host_total and host_bytes: ops run on the host because their input was there; ops and
    host_ops: op name -> OpCount; sites and host_sites: Site entries, most bytes first."""

    def __init__(self):
        self._n = [0, 0, 0, 0, 0]  # fallbacks, their bytes, host-resident ops, their bytes, fallback ns
        self._ops = [{}, {}]      # op -> [count, bytes, max_bytes]
        self._sites = [{}, {}]    # (op, function, file, line, origin, node, forward) -> [count, bytes]
        self._text = None         # the library's report, where the census could not be read as JSON
        self._first = None        # the first fallback's Site (count and bytes 0)

    def _add(self, ptr):
        """Adds a C census (fbcount_census *) to this one."""
        lib = _lib.lib()
        total, nbytes = lib.fbcount_census_total(ptr), lib.fbcount_census_bytes(ptr)
        host = lib.fbcount_census_host_total(ptr)
        self._n[0] += total
        self._n[1] += nbytes
        self._n[2] += host
        if not total and not host:
            return
        if not _lib.has("fbcount_census_json"):
            if self._text is not None:
                raise Error("this libfbcount cannot report a census in parts (no fbcount_census_json)")
            n = lib.fbcount_census_format_buf(ptr, None, 0)
            buf = ctypes.create_string_buffer(max(n, 0) + 1)
            lib.fbcount_census_format_buf(ptr, buf, len(buf))
            self._text = buf.value.decode("utf-8", "replace")
            self._ops = None
            return
        n = lib.fbcount_census_json(ptr, None, 0)
        if n < 0:
            raise Error("fbcount_census_json failed")
        buf = ctypes.create_string_buffer(n + 1)
        lib.fbcount_census_json(ptr, buf, len(buf))
        doc = json.loads(buf.value.decode("utf-8", "replace"))
        self._n[3] += doc.get("total", {}).get("host_bytes", 0)
        self._n[4] += doc.get("total", {}).get("ns", 0)
        f = doc.get("first")
        if f and self._first is None:
            self._first = Site(f.get("op", "(unknown)"), f.get("site", "(unknown)"), f.get("file"),
                               f.get("line"), 0, 0, f.get("origin"), f.get("node"),
                               f.get("forward"))
        for kind, key in ((0, "ops"), (1, "host_ops")):
            for o in doc.get(key, []):
                e = self._ops[kind].setdefault(o["op"], [0, 0, 0])
                e[0] += o.get("count", 0)
                e[1] += o.get("bytes", 0)
                e[2] = max(e[2], o.get("max_bytes", 0))
                for s in o.get("sites", []):
                    k = (o["op"], s.get("site", "(unknown)"), s.get("file"), s.get("line"),
                         s.get("origin"), s.get("node"), s.get("forward"))
                    se = self._sites[kind].setdefault(k, [0, 0])
                    se[0] += s.get("count", 0)
                    se[1] += s.get("bytes", 0)

    def _sync(self):
        """Brings the census up to date before a read (a count that is still open rolls)."""

    @property
    def total(self):
        """Fallbacks (host_result calls)."""
        self._sync()
        return self._n[0]

    @property
    def bytes(self):
        """Bytes of the fallbacks' results: what left the GPU."""
        self._sync()
        return self._n[1]

    @property
    def host_total(self):
        """Ops that ran on the host because their input was there (host_resident_op calls)."""
        self._sync()
        return self._n[2]

    @property
    def host_bytes(self):
        self._sync()
        return self._n[3]

    @property
    def ns(self):
        """Time the fallbacks took, in nanoseconds, where the library measures it (else 0)."""
        self._sync()
        return self._n[4]

    def _need_ops(self):
        self._sync()
        if self._ops is None:
            raise Error("this libfbcount has no fbcount_census_json: ops and sites are not available "
                        "(total, bytes and str() are)")

    def _op_map(self, kind):
        self._need_ops()
        items = sorted(self._ops[kind].items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))
        return {op: OpCount(*v) for op, v in items}

    def _site_list(self, kind):
        self._need_ops()
        items = sorted(self._sites[kind].items(),
                       key=lambda kv: (-kv[1][1], -kv[1][0], kv[0][0], kv[0][1], kv[0][2] or "",
                                       kv[0][3] or 0, kv[0][4] or "", kv[0][5] or "",
                                       kv[0][6] or ""))
        return [Site(op, fn, f, ln, c, b, origin, node, fwd)
                for (op, fn, f, ln, origin, node, fwd), (c, b) in items]

    @property
    def ops(self):
        """Fallbacks by op: {op: OpCount(count, bytes, max_bytes)}, most bytes first."""
        return self._op_map(0)

    @property
    def host_ops(self):
        """Host-resident ops by op, as ops."""
        return self._op_map(1)

    @property
    def first_site(self):
        """The Site of the first fallback counted (count and bytes 0), or None."""
        self._need_ops()
        return self._first

    @property
    def sites(self):
        """Where the fallbacks were called from: Site entries, most bytes first."""
        return self._site_list(0)

    @property
    def host_sites(self):
        return self._site_list(1)

    def sites_of(self, op):
        """The sites of one op's fallbacks."""
        return [s for s in self.sites if s.op == op]

    def __str__(self):
        self._sync()
        if self._ops is None:
            return self._text
        total, nbytes, host = self._n[:3]
        lines = [f"{_plural(total, 'fallback')} ({format_bytes(nbytes)} left the GPU), "
                 f"{_plural(host, 'host-resident op')}\n"]
        for kind in (0, 1):
            ops = self._op_map(kind)
            if kind == 1 and ops:
                lines.append("host-resident ops (computed on the host because their input was):\n")
            sites = self._site_list(kind)
            for op, oc in ops.items():
                mine = [s for s in sites if s.op == op]
                first = str(mine[0]) if mine else "(unknown)"
                more = f" and {len(mine) - 1} more site{'s' if len(mine) > 2 else ''}" if len(mine) > 1 else ""
                lines.append(f"  {op:<24} {oc.count:8d} {format_bytes(oc.bytes):>11}  at {first}{more}\n")
                for s in mine[1:4]:
                    lines.append(f"  {'':<24} {s.count:8d}              at {s}\n")
        return "".join(lines)

    def __repr__(self):
        n = self._n
        return (f"<fbcount.Census {_plural(n[0], 'fallback')}, {n[1]} B, "
                f"{_plural(n[2], 'host-resident op')}>")


_local = threading.local()
_all_lock = threading.Lock()
_all_stack = []  # the all-threads counts open, outermost first: the process-wide scope is open while any is


def _census_of(ptr, counts):
    """Adds the C census ptr to each of counts, and frees it."""
    lib = _lib.lib()
    if not ptr:
        raise Error("libfbcount had no open scope to close")
    try:
        for c in counts:
            c._add(ptr)
    finally:
        lib.fbcount_census_free(ptr)


def _roll_all(reopen):
    """Takes what libfbcount's process-wide scope counted so far into every open all-threads
    count, and opens the scope again when reopen. A fallback another thread makes between the
    two calls (microseconds) is not seen. The caller holds _all_lock."""
    lib = _lib.lib()
    _census_of(lib.fbcount_scope_end_all(), _all_stack)
    if reopen and lib.fbcount_scope_begin_all() != 0:
        raise Error("the all-threads count could not be opened again (an fbcount_scope_begin_all "
                    "outside this package took it)")


class count(Census):  # noqa: N801 - used as a function: `with fbcount.count() as c`
    """Counts the fallbacks of a with block: of the calling thread, or with all_threads=True of
    every thread of the process. Counts nest, all-threads counts too (each of them sees every
    fallback made while it is open). The census can be read after the block, and inside it: a
    thread's count by the thread that opened it, when it is its innermost; an all-threads count
    from any thread (libfbcount's process-wide scope is closed and opened again for it, at each
    read and at each nested all-threads count's start and end: a fallback another thread makes
    in those microseconds is not seen)."""

    def __init__(self, all_threads=False):
        super().__init__()
        self.all_threads = bool(all_threads)
        self._state = "new"
        self._thread = None

    def __enter__(self):
        if self._state != "new":
            raise Error("a count can be entered once")
        lib = _lib.lib()
        if self.all_threads:
            if not _lib.has("fbcount_scope_begin_all"):
                raise Error("this libfbcount cannot count all threads (no fbcount_scope_begin_all)")
            with _all_lock:
                if _all_stack:
                    _roll_all(reopen=True)  # what came before is the enclosing counts' only
                elif lib.fbcount_scope_begin_all() != 0:
                    raise Error("an all-threads scope is already open (fbcount_scope_begin_all outside "
                                "this package)")
                _all_stack.append(self)
        else:
            stack = _local.__dict__.setdefault("stack", [])
            lib.fbcount_scope_begin()
            stack.append(self)
        self._thread = threading.get_ident()
        self._state = "open"
        return self

    def __exit__(self, *exc):
        if self._state != "open":
            raise Error("this count is not open")
        if self.all_threads:
            with _all_lock:
                if _all_stack[-1] is not self:
                    raise Error("counts must be closed innermost first")
                self._state = "done"
                try:
                    _roll_all(reopen=len(_all_stack) > 1)
                finally:
                    _all_stack.pop()
            return False
        self._check_innermost("closed")
        _local.stack.pop()
        self._state = "done"
        _census_of(_lib.lib().fbcount_scope_end(), [self])
        return False

    def _check_innermost(self, what):
        if threading.get_ident() != self._thread:
            raise Error(f"a count must be {what} on the thread that opened it")
        if _local.__dict__.get("stack", [None])[-1] is not self:
            raise Error(f"counts must be {what} innermost first")

    def _sync(self):
        """Inside the block: takes what was counted so far into this census and goes on."""
        if self._state != "open":
            return
        if self.all_threads:
            with _all_lock:
                _roll_all(reopen=True)
            return
        self._check_innermost("read")
        self._state = "rolling"
        try:
            _census_of(_lib.lib().fbcount_scope_end(), [self])
        finally:
            _lib.lib().fbcount_scope_begin()
            self._state = "open"


def dump(path=None):
    """Writes a dump of the whole process census now (reason "api") to path, or to the next
    FBCOUNT_OUTPUT file when path is None. Raises Error when it could not be written, and
    where the process census does not record (libfbcount loaded by this package, not
    preloaded by `fbcount run` or LD_PRELOAD, and FBCOUNT is not 1): it would say 0 of what it
    never counted; count() counts a block either way."""
    p = None if path is None else str(path).encode()
    if _lib.lib().fbcount_dump(p) != 0:
        raise Error(f"fbcount_dump({path!r}) failed (see the warning on stderr)")

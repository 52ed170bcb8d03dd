"""pytest plugin: gate tests on GPU->host fallbacks.

    pytest --fbcount-max 0                  every test: at most 0 fallbacks
    pytest --fbcount                        count every test, gate none: the session's table
    @pytest.mark.fallbacks(max=0, allow=["sort"])   this test: sort may fall back
    def test_step(fallbacks): ...           the fixture: what this test counted so far

A counted test (gated by --fbcount-max or the marker, using the fixture, or any test under
--fbcount) is counted from the start of its setup to the end of its teardown, so the work of
the fixtures it requested counts to it (a module or session fixture's to the test that set it
up or tore it down), and every thread of the process counts, as memray's limit_memory counts
all memory: --fbcount-threads test, or the marker's threads="test", keeps to the test's own
thread. A test with more fallbacks than its maximum from ops not in its allow list fails, and
the reason (ops, counts, the lines that called them) is its short summary line, so it stays
with --tb=no:
    FAILED test_model.py::test_sorts - fbcount: vkt_sort x1 at test_model.py:14 (max 0)
Fallbacks in its teardown that take it over fail the teardown. Ops are named short ("sort") or
as the census names them ("vkt_sort"); an allow name that names no op that fell back is
pointed out with the closest ones. The session ends with a table of the tests that fell back.

Installed, the plugin is the pytest11 entry point "fbcount" (-p no:fbcount turns it off);
from a source tree, -p fbcount.pytest_plugin loads it.
"""
import os
import sys

import pytest

import fbcount

_COUNT = pytest.StashKey()    # the test's count (a Fallbacks), open from setup to teardown
_LIMITS = pytest.StashKey()   # (max, allow, threads) of a gated test, or None
_FAILED = pytest.StashKey()   # the call report already failed it for its fallbacks
_SESSION = pytest.StashKey()  # the session's table: a row per counted test
_ENTRY_POINT = "fbcount"


def pytest_addoption(parser):
    group = parser.getgroup("fbcount", "GPU->host fallbacks (libfbcount)")
    group.addoption("--fbcount", action="store_true", default=False,
                    help="count every test's fallbacks and list the tests that fell back (gates none)")
    group.addoption("--fbcount-max", type=int, default=None, metavar="N",
                    help="fail every test with more than N fallbacks (a fallbacks marker overrides it)")
    group.addoption("--fbcount-threads", choices=("all", "test"), default=None,
                    help="whose fallbacks a test counts: every thread's (all, the default) or its own "
                         "thread's (test)")
    group.addoption("--fbcount-all-threads", action="store_true", default=False,
                    help="the same as --fbcount-threads all (the default)")


@pytest.hookimpl
def pytest_plugin_registered(plugin, manager):
    # Loaded with -p fbcount.pytest_plugin where the package is installed too: the entry point
    # would register this module a second time, which pytest refuses. Holding its name keeps
    # it out; -p no:fbcount never gets here (the entry point is not loaded at all).
    if plugin is sys.modules[__name__] and manager.get_name(plugin) != _ENTRY_POINT:
        if manager.get_plugin(_ENTRY_POINT) is None and not manager.is_blocked(_ENTRY_POINT):
            manager.set_blocked(_ENTRY_POINT)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "fallbacks(max=0, allow=(), threads='all'): fail the test when more than max of its fallbacks "
        "come from ops not in allow (short names, 'sort', or the census's, 'vkt_sort'); threads='test' "
        "counts the test's own thread only")
    n = config.getoption("--fbcount-max")
    if n is not None and n < 0:
        raise pytest.UsageError(f"--fbcount-max expects a count >= 0, got {n}")
    if config.getoption("--fbcount-threads") == "test" and config.getoption("--fbcount-all-threads"):
        raise pytest.UsageError("--fbcount-threads test and --fbcount-all-threads contradict each other")
    config.stash[_SESSION] = []


def _default_threads(config):
    return config.getoption("--fbcount-threads") or "all"


def _limits(item):
    """(max, allow, threads) for a gated test, or None."""
    mark = item.get_closest_marker("fallbacks")
    if mark is not None:
        if mark.args:
            raise pytest.UsageError(f"{item.nodeid}: use fallbacks(max=N, allow=[...]), keywords only")
        unknown = set(mark.kwargs) - {"max", "allow", "threads"}
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: fallbacks() takes max, allow and threads, not "
                                    f"{sorted(unknown)}")
        mx = mark.kwargs.get("max", 0)
        allow = mark.kwargs.get("allow", ())
        threads = mark.kwargs.get("threads", _default_threads(item.config))
        if isinstance(allow, str) or not all(isinstance(a, str) for a in allow):
            raise pytest.UsageError(f"{item.nodeid}: fallbacks(allow=...) takes a list of op names")
        if not isinstance(mx, int) or mx < 0:
            raise pytest.UsageError(f"{item.nodeid}: fallbacks(max=...) takes a count >= 0, got {mx!r}")
        if threads not in ("all", "test"):
            raise pytest.UsageError(f"{item.nodeid}: fallbacks(threads=...) takes 'all' or 'test', got {threads!r}")
        return mx, tuple(allow), threads
    mx = item.config.getoption("--fbcount-max")
    return None if mx is None else (mx, (), _default_threads(item.config))


def pytest_collection_modifyitems(config, items):
    # A malformed marker is a usage error of the whole run, found before anything runs.
    for item in items:
        item.stash[_LIMITS] = _limits(item)


class Fallbacks(fbcount.count):
    """The fallbacks fixture: the count of this test, from the start of its setup (the gate's
    own count), readable during the test and after it (c.total, c.ops, c.sites, str(c))."""

    problem = None

    def _sync(self):
        if self.problem:
            raise fbcount.Error(f"this test's fallbacks cannot be counted: {self.problem}")
        super()._sync()


def _counted(item):
    return (item.stash.get(_LIMITS, None) is not None or "fallbacks" in getattr(item, "fixturenames", ())
            or item.config.getoption("--fbcount"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    if _counted(item):
        limits = item.stash.get(_LIMITS, None)
        threads = limits[2] if limits else _default_threads(item.config)
        c = Fallbacks(all_threads=threads == "all")
        try:
            c.__enter__()
        except fbcount.Error as e:
            c.problem = str(e)
        item.stash[_COUNT] = c
    yield


def _close(item):
    """Ends the test's count (after its teardown); the count, or None when it had none."""
    c = item.stash.get(_COUNT, None)
    if c is not None and c.problem is None and c._state == "open":
        try:
            c.__exit__(None, None, None)
        except fbcount.Error as e:
            c.problem = str(e)
    return c


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    _close(item)


def _plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def _where(census, op):
    """Where op was called from, short: up to three sites, each file:line."""
    sites = census.sites_of(op)
    if not sites:
        return "(unknown)"
    text = ", ".join(s.where + (f" x{s.count}" if len(sites) > 1 else "") for s in sites[:3])
    return text + (f" and {len(sites) - 3} more" if len(sites) > 3 else "")


def _short_where(census, op, test_file):
    """Where op was called from, as short as a summary line needs: "line 12" in the test's own
    file (the line's nodeid names it already), else "file.py:12"; the first site, "+N" more.
    A backward's node is left to the full text."""
    sites = census.sites_of(op)
    if not sites:
        return "(unknown)"
    s = sites[0]
    prefix = fbcount._ORIGIN_PREFIX.get(s.origin, "")
    same = s.file and test_file and os.path.basename(s.file) == os.path.basename(test_file)
    place = f"line {s.line}" if same and s.line else s._replace(node=None, origin=None).where
    more = f" +{len(sites) - 1}" if len(sites) > 1 else ""
    return f"{prefix.replace('from backward() at ', 'backward() ')}{place}{more}"


def _unknown_allows(allow, ops):
    """Notes on the allow names that name none of the ops that fell back, with the closest."""
    notes = []
    for name in allow:
        if any(fbcount.op_named(name, op) for op in ops):
            continue
        close = [fbcount.short_name(op) for op in fbcount.closest(name, ops)]
        notes.append(f"allow names '{name}', which names no op that fell back here"
                     + (f" (closest: {', '.join(close)})" if close else ""))
    return notes


def _violation(limits, census, test_file=None):
    """(short line, full text) for a census over its limits, or None. The short line leads
    with each op and its line, so that a summary cut at 80 columns keeps them."""
    mx, allow, _ = limits
    if census.total <= mx:
        return None
    try:
        ops = census.ops
    except fbcount.Error as e:
        # A library without per-op censuses: its own report still names the ops and sites.
        short = f"{_plural(census.total, 'fallback')} over max {mx}"
        if allow:
            return short, f"cannot apply the allow list: {e}\n{census}"
        return short, f"{short}:\n{census}"
    counted = {op: oc for op, oc in ops.items() if not any(fbcount.op_named(a, op) for a in allow)}
    n = sum(oc.count for oc in counted.values())
    if n <= mx:
        return None
    allowed = f" not allowed ({', '.join(allow)} allowed)" if allow else ""
    parts = [f"{op} {_short_where(census, op, test_file)} x{oc.count}" for op, oc in counted.items()]
    if len(parts) > 3:
        parts[3:] = [f"{len(parts) - 3} more op{'s' if len(parts) > 4 else ''}"]
    short = f"{'; '.join(parts)} (max {mx}{', the rest allowed' if len(counted) < len(ops) else ''})"
    lines = [f"{_plural(n, 'fallback')}{allowed}, more than the maximum of {mx}:"]
    for op, oc in counted.items():
        # "from backward() at ..." says where of itself.
        sites = ", ".join(f"{'' if s.origin else 'at '}{s} x{s.count}"
                          for s in census.sites_of(op)) or "at (unknown)"
        lines.append(f"  {op}: {_plural(oc.count, 'call')}, {fbcount.format_bytes(oc.bytes)} left the GPU; "
                     f"{sites}")
    lines += [f"  ({note})" for note in _unknown_allows(allow, list(ops))]
    return short, "\n".join(lines)


def _failure(item, short, text):
    """A report's longrepr: the full text, and the crash line that the short summary shows (and
    --tb=no keeps), "fbcount: <short>", at the test's own location. pytest makes no crash line
    for a failure without a traceback: it is made here with pytest's own class for it."""
    try:
        raise pytest.fail.Exception(f"fbcount: {text}", pytrace=False)
    except pytest.fail.Exception:
        info = pytest.ExceptionInfo.from_current()
    longrepr = info.getrepr(style="value")
    try:
        from _pytest._code.code import ReprFileLocation
        path, line, _ = item.reportinfo()
        longrepr.reprcrash = ReprFileLocation(str(path), (line or 0) + 1, f"fbcount: {short}")
    except (ImportError, TypeError, AttributeError):
        pass  # a pytest without it: the summary line names the test only
    return longrepr


def _judge(item, rep, when):
    """Fails rep (the call's, or the teardown's when only the teardown took the test over) for
    the test's fallbacks so far; a test that failed on its own keeps its failure, and the
    fallbacks are added to it."""
    c = item.stash.get(_COUNT, None)
    limits = item.stash.get(_LIMITS, None)
    if c is None or limits is None or item.stash.get(_FAILED, False):
        return
    if c.problem:
        text = f"cannot count this test's fallbacks: {c.problem}"
        short = text
    else:
        v = _violation(limits, c, str(item.reportinfo()[0]))
        if v is None:
            return
        short, text = v
    item.stash[_FAILED] = True
    if rep.passed:
        rep.outcome = "failed"
        rep.longrepr = _failure(item, short, text)
        return
    rep.sections.append(("fbcount", f"fbcount: {text}"))
    crash = getattr(rep.longrepr, "reprcrash", None)
    if crash is not None and when == "call":
        # The short summary shows the first line of the message: the fallbacks go on it.
        first, nl, rest = crash.message.partition("\n")
        crash.message = f"{first} [fbcount: {short}]{nl}{rest}"


def _record(item):
    """The test's line in the session's table."""
    c = item.stash.get(_COUNT, None)
    if c is None or c.problem:
        return
    try:
        ops = c.ops
        first = c.first_site or (c.sites[0] if c.sites else None)
    except fbcount.Error:
        ops, first = {}, None
    limits = item.stash.get(_LIMITS, None)
    item.config.stash[_SESSION].append({
        "nodeid": item.nodeid, "total": c.total, "bytes": c.bytes,
        "ops": {op: oc.count for op, oc in ops.items()},
        "top": first, "failed": item.stash.get(_FAILED, False),
        "allow": limits[1] if limits else ()})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if _COUNT not in item.stash:
        return
    if call.when == "call":
        _judge(item, rep, "call")
    elif call.when == "teardown":
        _close(item)
        if not item.stash.get(_FAILED, False) and item.stash.get(_LIMITS, None) is not None:
            _judge(item, rep, "teardown")
        _record(item)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    rows = config.stash.get(_SESSION, None)
    if not rows:
        return
    tr = terminalreporter
    fell = sorted((r for r in rows if r["total"]), key=lambda r: (-r["total"], -r["bytes"], r["nodeid"]))
    tr.write_sep("=", "fbcount: tests with fallbacks")
    if not fell:
        tr.write_line(f"no fallbacks in {_plural(len(rows), 'counted test')}")
        return
    tr.write_line(f"{'fallbacks':>9} {'bytes':>10}  {'test':<44} first site")
    for r in fell:
        top = r["top"]
        first = f"{top.op} at {top.where}" if top else ", ".join(r["ops"]) or "(unknown)"
        verdict = "  FAILED" if r["failed"] else ""
        tr.write_line(f"{r['total']:>9} {fbcount.format_bytes(r['bytes']):>10}  {r['nodeid']:<44} {first}{verdict}")
    tr.write_line(f"{_plural(len(fell), 'test')} of {len(rows)} counted fell back "
                  f"({_plural(sum(r['total'] for r in fell), 'fallback')})")
    seen = {op for r in rows for op in r["ops"]}
    for name in sorted({a for r in rows for a in r["allow"]}):
        if seen and not any(fbcount.op_named(name, op) for op in seen):
            close = [fbcount.short_name(op) for op in fbcount.closest(name, sorted(seen))]
            tr.write_line(f"fbcount: allow name '{name}' names no op that fell back in this session"
                          + (f"; closest: {', '.join(close)}" if close else ""))


@pytest.fixture
def fallbacks(request):
    """The fallbacks counted in this test so far, from the start of its setup: total, bytes,
    ops, sites, str()."""
    return request.node.stash[_COUNT]

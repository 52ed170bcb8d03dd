#!/usr/bin/env python3
"""fbcount's metrics in a live Prometheus. Starts, on 127.0.0.1 and free ports:
- node_exporter with only its textfile collector, reading a folder that gets
  (a) the file a program under the shim writes itself (FBCOUNT_METRICS), and
  (b) the command's metrics for the dumps of another program (the openmetrics report);
- a small HTTP server that serves (b) as application/openmetrics-text, so Prometheus reads it
  with its OpenMetrics parser too;
- Prometheus scraping both every second.
It polls Prometheus' query API until fbcount_fallbacks_total shows each program's count
(bounded), checks the labels, and stops every server it started. If the packages are missing
it tries tools/deps.sh --test once; if they still cannot be installed it says so in one line
and exits 77 (skipped).

usage: prom_test.py FBCOUNT FLEET_EXPORT SHIM RUN_PROG
"""
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verdict import done, expect  # noqa: E402

FB, EXPORT, SHIM, PROG = (os.path.abspath(a) for a in sys.argv[1:5])
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
NAMES = {"prometheus": "prometheus", "node_exporter": "prometheus-node-exporter"}


def find():
    return {k: shutil.which(v) for k, v in NAMES.items()}


bins = find()
if not all(bins.values()):
    subprocess.run(["bash", os.path.join(ROOT, "tools", "deps.sh"), "--test"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900)
    bins = find()
if not all(bins.values()):
    print("SKIP: prometheus and prometheus-node-exporter are not installed and could not be "
          "(tools/deps/test-fleet.txt)")
    sys.exit(77)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(port, q):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.load(r)["data"]["result"]
    except (OSError, ValueError, KeyError):
        return None


def targets(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/targets" % port, timeout=5) as r:
            return json.load(r)["data"]["activeTargets"]
    except (OSError, ValueError, KeyError):
        return []


def env_for(outdir, **kw):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FBCOUNT_") and k != "LD_PRELOAD"}
    env.update(LD_PRELOAD=SHIM, FBCOUNT_QUIET="1",
               FBCOUNT_OUTPUT=os.path.join(outdir, "fbcount.%e.%p.%n.json"), **kw)
    return env


tmp = tempfile.mkdtemp(prefix="fbcount-prom-")
servers = []
httpd = None
try:
    textdir = os.path.join(tmp, "textfile")
    os.mkdir(textdir)
    # (a) the shim writes the metrics of its own process
    a_dumps = os.path.join(tmp, "a")
    os.mkdir(a_dumps)
    pa = subprocess.run([PROG, "--fallbacks", "7"], capture_output=True, text=True, timeout=60,
                        env=env_for(a_dumps, FBCOUNT_METRICS=os.path.join(textdir, "shim.prom")))
    pid_a = int(pa.stdout.split()[1])
    expect(pa.returncode == 0, f"program a: exit {pa.returncode} {pa.stderr}")
    expect(os.path.exists(os.path.join(textdir, "shim.prom")),
           "FBCOUNT_METRICS: the shim wrote its metrics file")
    # (b) the command's metrics for the dumps of another process
    b_dumps = os.path.join(tmp, "b")
    os.mkdir(b_dumps)
    pb = subprocess.run([PROG, "--fallbacks", "5"], capture_output=True, text=True, timeout=60,
                        env=env_for(b_dumps))
    pid_b = int(pb.stdout.split()[1])
    served = os.path.join(tmp, "served.prom")
    p = subprocess.run([EXPORT, "openmetrics", served, b_dumps], capture_output=True, text=True)
    expect(p.returncode == 0, f"openmetrics report: {p.returncode} {p.stderr}")
    check = subprocess.run(["promtool", "check", "metrics"], stdin=open(served), capture_output=True,
                           text=True)
    expect(check.returncode == 0, f"promtool check metrics: {check.stdout}{check.stderr}")
    shutil.copy(served, os.path.join(textdir, "cmd.prom.tmp"))
    os.rename(os.path.join(textdir, "cmd.prom.tmp"), os.path.join(textdir, "cmd.prom"))

    body = open(served, "rb").read()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type",
                             "application/openmetrics-text; version=1.0.0; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    om_port = httpd.server_address[1]

    ne_port, prom_port = free_port(), free_port()
    servers.append(subprocess.Popen(
        [bins["node_exporter"], "--collector.disable-defaults", "--collector.textfile",
         "--collector.textfile.directory=" + textdir,
         "--web.listen-address=127.0.0.1:%d" % ne_port],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "node_exporter.log"), "w")))
    cfg = os.path.join(tmp, "prometheus.yml")
    open(cfg, "w").write(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        "  - job_name: node\n    static_configs: [{targets: ['127.0.0.1:%d']}]\n"
        "  - job_name: openmetrics\n    static_configs: [{targets: ['127.0.0.1:%d']}]\n"
        % (ne_port, om_port))
    servers.append(subprocess.Popen(
        [bins["prometheus"], "--config.file=" + cfg, "--storage.tsdb.path=" +
         os.path.join(tmp, "tsdb"), "--web.listen-address=127.0.0.1:%d" % prom_port],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prometheus.log"), "w")))

    want = {("node", pid_a): 7, ("node", pid_b): 5, ("openmetrics", pid_b): 5}
    # A file that is not there cannot show up: its absence failed above; wait for the rest.
    wait = {k: v for k, v in want.items()
            if k[1] != pid_a or os.path.exists(os.path.join(textdir, "shim.prom"))}
    seen = {}
    end = time.time() + 60
    while time.time() < end and {k: seen.get(k) for k in wait} != wait:
        for job, pid in wait:
            r = query(prom_port, 'fbcount_fallbacks_total{job="%s",pid="%d"}' % (job, pid))
            if r:
                seen[(job, pid)] = int(float(r[0]["value"][1]))
                labels = r[0]["metric"]
        time.sleep(0.5)
    for key, n in want.items():
        expect(seen.get(key) == n, f"Prometheus shows {seen.get(key)} fallbacks for {key}, want {n}")
    r = query(prom_port, 'fbcount_fallbacks_total{job="openmetrics",pid="%d"}' % pid_b) or [{}]
    labels = r[0].get("metric", {})
    expect(labels.get("op") == "vkt_dot" and labels.get("site") == "work"
           and labels.get("exe") == "run-prog" and labels.get("host") == socket.gethostname(),
           f"series labels: {labels}")
    r = query(prom_port, 'fbcount_fallback_bytes_total{job="node",pid="%d"}' % pid_b) or [{}]
    expect(r[0].get("value", [0, "0"])[1] == str(5 * 2048), f"bytes counter: {r}")
    for t in targets(prom_port):
        expect(t.get("health") == "up", f"target {t.get('scrapeUrl')}: {t.get('health')} "
               f"{t.get('lastError')}")
finally:
    for s in servers:
        s.terminate()
    for s in servers:
        try:
            s.wait(timeout=10)
        except subprocess.TimeoutExpired:
            s.kill()
            s.wait()
    if httpd:
        httpd.shutdown()
        httpd.server_close()
    shutil.rmtree(tmp, ignore_errors=True)

done("prometheus")

#!/usr/bin/python3
# crucible serve's HTTP conventions, on loopback with the real binary: a 401 carries the
# bearer challenge of RFC 6750 (error="invalid_token" only when a bearer token was given and
# is wrong), a 405 carries Allow (on the routes the header-time precheck refuses and on the
# task library's own 405s); /metrics is "text/plain; version=0.0.4; charset=utf-8", parses
# with the Prometheus client library's own parser (python3-prometheus-client; a strict line
# check runs either way), has crucible_build_info with the version `crucible --version`
# prints, the standard process_* families with values that match /proc for the server's pid,
# and latency histograms whose finite buckets reach an hour.
import http.client
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import CRUCIBLE, done, ok, skip  # noqa: E402

TMP = tmpdir("crucible-http-conv-")
TOKEN = "conventions-token"
AUTH = {"Authorization": "Bearer " + TOKEN}


def answer(srv, method, path, body=None, headers=None):
    """(status, the response for its headers, the body as text)."""
    r, data = srv.exchange(method, path, body, headers)
    return r.status, r, data.decode()


token_file = os.path.join(TMP, "token")
with open(token_file, "w") as f:
    f.write(TOKEN + "\n")
srv = Server("--token-file", token_file, "--db", os.path.join(TMP, "library.db"), tmp=TMP)

# ---- 401: WWW-Authenticate (RFC 6750 section 3) ------------------------------------------
for method, path, headers, want, why in [
    ("POST", "/v1/run", {}, 'Bearer realm="crucible"', "no credentials: the challenge, no error"),
    ("GET", "/nowhere", {}, 'Bearer realm="crucible"', "an unknown path without a token"),
    ("POST", "/v1/run", {"Authorization": "Bearer wrong"},
     'Bearer realm="crucible", error="invalid_token"', "a wrong bearer token: invalid_token"),
    ("GET", "/metrics", {"Authorization": "bearer wrong"},
     'Bearer realm="crucible", error="invalid_token"', "the scheme is case-insensitive"),
    ("GET", "/v1/tasks", {"Authorization": "Basic dXNlcjpwYXNz"}, 'Bearer realm="crucible"',
     "another scheme: the challenge, no error"),
]:
    st, r, text = answer(srv, method, path, body=b"{}" if method == "POST" else None,
                              headers=headers)
    ok(st == 401 and r.getheader("WWW-Authenticate") == want,
       "401 %s %s: WWW-Authenticate %s (%s)" % (method, path, want, why),
       (st, r.getheaders(), text))

st, r, text = answer(srv, "GET", "/metrics", headers={"Authorization": "bearer " + TOKEN})
ok(st == 200, "the right token with a lower-case scheme is accepted", (st, text))

# ---- 405: Allow (RFC 9110 section 15.5.6) --------------------------------------------------
for method, path, allow in [
    ("GET", "/v1/run", "POST"),
    ("PUT", "/v1/verify", "POST"),
    ("GET", "/run_code", "POST"),
    ("POST", "/metrics", "GET"),
    ("DELETE", "/healthz", "GET"),
    ("DELETE", "/v1/tasks", "GET, POST"),
    ("POST", "/v1/tasks/stats", "GET"),
    ("PUT", "/v1/tasks/some/id", "GET"),
]:
    st, r, text = answer(srv, method, path, body=b"{}" if method in ("POST", "PUT") else None,
                              headers=AUTH)
    ok(st == 405 and r.getheader("Allow") == allow, "405 %s %s: Allow: %s" % (method, path, allow),
       (st, r.getheaders(), text))

# ---- /metrics --------------------------------------------------------------------------------
# One job first, so that the latency histograms exist.
st, r, text = answer(srv, "POST", "/v1/run", body=json.dumps({"command": ["/bin/true"]}),
                          headers=dict(AUTH, **{"Content-Type": "application/json"}))
ok(st == 200, "a job ran", (st, text))
st, r, text = answer(srv, "GET", "/metrics", headers=AUTH)
ok(st == 200 and r.getheader("Content-Type") == "text/plain; version=0.0.4; charset=utf-8",
   "/metrics: Content-Type text/plain; version=0.0.4; charset=utf-8",
   (st, r.getheader("Content-Type")))

# A strict line check of the text format (0.0.4): HELP/TYPE comments, then samples of the
# family just typed; every value a number.
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r"^(%s)(\{%s(?:,%s)*\})? (\S+)$" % (NAME, LABEL, LABEL))
bad, typed, samples = [], {}, {}
current = None
for line in text.splitlines():
    m = re.match(r"^# (HELP|TYPE) (%s) (.*)$" % NAME, line)
    if m:
        if m.group(1) == "TYPE":
            if m.group(2) in typed or m.group(3) not in ("counter", "gauge", "histogram",
                                                         "summary", "untyped"):
                bad.append(line)
            typed[m.group(2)] = m.group(3)
            current = m.group(2)
        continue
    m = SAMPLE.match(line)
    if not m:
        bad.append(line)
        continue
    name = m.group(1)
    base = re.sub(r"_(bucket|sum|count)$", "", name) if typed.get(
        re.sub(r"_(bucket|sum|count)$", "", name)) == "histogram" else name
    if base != current:
        bad.append(line + "   <- not under its family's TYPE")
    try:
        float(m.group(3))
    except ValueError:
        bad.append(line)
    samples.setdefault(name, []).append((m.group(2) or "", m.group(3)))
ok(not bad and text.endswith("\n"), "/metrics: every line is valid text format 0.0.4", bad[:20])

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    text_string_to_metric_families = None
if text_string_to_metric_families is None:
    skip("/metrics parses with prometheus_client", "python3-prometheus-client is not installed "
         "(scripts/install-deps installs it)")
    families = {}
else:
    try:
        families = {f.name: f for f in text_string_to_metric_families(text)}
        ok(len(families) > 10, "/metrics parses with prometheus_client (%d families)"
           % len(families))
    except Exception as e:  # the parser's own error names the line
        families = {}
        ok(False, "/metrics parses with prometheus_client", repr(e))

version = subprocess.run([CRUCIBLE, "--version"], capture_output=True, text=True).stdout.split()[-1]
info = samples.get("crucible_build_info", [])
ok(len(info) == 1 and 'version="%s"' % version in info[0][0] and info[0][1] == "1"
   and typed.get("crucible_build_info") == "gauge",
   "crucible_build_info{version=\"%s\"} 1, a gauge" % version, info)
commit = subprocess.run(["git", "-C", os.path.dirname(CRUCIBLE), "rev-parse", "--short=12",
                         "HEAD"], capture_output=True, text=True).stdout.strip()
if commit and info:
    ok(re.search(r'commit="[0-9a-f]{7,40}"', info[0][0]) is not None,
       "crucible_build_info names the commit it was built from", info)


def value(name):
    v = samples.get(name)
    return float(v[0][1]) if v else None


for name, kind in [("process_cpu_seconds_total", "counter"),
                   ("process_resident_memory_bytes", "gauge"),
                   ("process_virtual_memory_bytes", "gauge"),
                   ("process_open_fds", "gauge"), ("process_max_fds", "gauge"),
                   ("process_start_time_seconds", "gauge"), ("process_threads", "gauge")]:
    ok(value(name) is not None and typed.get(name) == kind, "%s: a %s" % (name, kind),
       (typed.get(name), samples.get(name)))

rss = value("process_resident_memory_bytes") or 0
vmrss = srv.status_kb("VmRSS") * 1024
ok(vmrss / 2 < rss < vmrss * 2, "process_resident_memory_bytes %d is the server's VmRSS (%d)"
   % (rss, vmrss))
vsz = value("process_virtual_memory_bytes") or 0
ok(abs(vsz - srv.status_kb("VmSize") * 1024) < 64 << 20,
   "process_virtual_memory_bytes %d is the server's VmSize" % vsz)
start = value("process_start_time_seconds") or 0
ok(abs(start - srv.started) < 5, "process_start_time_seconds %.2f: when the server started "
   "(%.2f)" % (start, srv.started))
# The server's descriptors move while the warm pool refills after a job: a scrape taken
# while the listing stays the same just before and just after it must count exactly those
# and the scrape's own connection (up to 50 tries for such a quiet moment). "After" is once
# the server has closed the scrape's connection, which it does when it sees the client's
# close: up to a second later on a slow (sanitized) build.
seen = []
for attempt in range(50):
    before = len(os.listdir("/proc/%d/fd" % srv.p.pid))
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
    c.request("GET", "/metrics", headers=AUTH)
    again = c.getresponse().read().decode()
    c.close()
    for _ in range(100):
        after = len(os.listdir("/proc/%d/fd" % srv.p.pid))
        if after <= before:
            break
        time.sleep(0.01)
    fds = next((float(line.split()[1]) for line in again.splitlines()
                if line.startswith("process_open_fds ")), -1)
    seen.append((before, fds, after))
    if before == after and fds == before + 1:
        break
    time.sleep(0.1)
ok(before == after and fds == before + 1,
   "process_open_fds %d: the server's descriptors (%d, and the scrape's connection)"
   % (fds, before), seen)
maxfds = value("process_max_fds") or 0
soft = None
for line in open("/proc/%d/limits" % srv.p.pid):
    if line.startswith("Max open files"):
        soft = line.split()[3]
ok(soft is not None and maxfds == float(soft), "process_max_fds %d: its soft limit (%s)"
   % (maxfds, soft))
ok(value("process_threads") == srv.status_kb("Threads"),
   "process_threads: the server's threads (%s)" % srv.status_kb("Threads"))
cpu = value("process_cpu_seconds_total")
ok(cpu is not None and 0 <= cpu < 600, "process_cpu_seconds_total %s" % cpu)

# Histograms: finite buckets up to an hour, so a 5-minute job is not lumped into +Inf.
hist = [n for n, t in typed.items() if t == "histogram"]
ok({"crucible_run_seconds", "crucible_job_seconds", "crucible_queue_wait_seconds"} <= set(hist),
   "the latency histograms are there", hist)
for h in ["crucible_run_seconds", "crucible_job_seconds", "crucible_queue_wait_seconds"]:
    les = [re.search(r'le="([^"]+)"', lab).group(1) for lab, _ in samples.get(h + "_bucket", [])]
    finite = [float(x) for x in les if x != "+Inf"]
    ok(finite and {120.0, 300.0, 600.0, 1800.0, 3600.0} <= set(finite) and les[-1] == "+Inf"
       and finite == sorted(finite), "%s: buckets past 60 s, to 3600 s, then +Inf" % h, les)

srv.stop()
done()

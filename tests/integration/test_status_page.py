"""The status page (GET / on metrics.listener) in headless Chromium, driven
through chromedriver's WebDriver HTTP API with the standard library: the
page loads, polls /api/status, lists the topics that exist and the
cluster (the node as the active controller, its broker state, nothing
under-replicated or offline), and its charts update (each canvas's
data-samples grows as samples are drawn)."""

import json
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request

import pytest

import samsa_harness
from samsa_harness import HOST, T

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(autouse=True)
def _need_chromium():
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.fail("Debian's chromium and chromium-driver are not installed "
                    "(scripts/deps.sh installs them)")


class WebDriver:
    """The few W3C WebDriver commands the test needs, over plain HTTP."""

    def __init__(self, profile_dir):
        self.port = samsa_harness.free_port()
        self.proc = subprocess.Popen(
            [CHROMEDRIVER, "--port=%d" % self.port, "--allowed-ips=127.0.0.1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = "http://%s:%d" % (HOST, self.port)
        self.session = None
        ok = samsa_harness.wait_until(self._up, T(15), 0.1)
        if not ok:
            self.close()
            raise AssertionError("chromedriver did not come up")
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--no-first-run",
                         "--user-data-dir=" + profile_dir],
            }}}}
        self.session = self.call("POST", "/session", caps)["sessionId"]

    def _up(self):
        try:
            return self.call("GET", "/status")["ready"]
        except (OSError, ValueError, KeyError):
            return False

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=T(30)) as r:
                doc = json.loads(r.read().decode())
        except urllib.error.HTTPError as e:
            raise AssertionError("WebDriver %s %s: %s" % (method, path, e.read()[:500]))
        return doc.get("value", doc) if isinstance(doc, dict) else doc

    def go(self, url):
        self.call("POST", "/session/%s/url" % self.session, {"url": url})

    def js(self, script, *args):
        return self.call("POST", "/session/%s/execute/sync" % self.session,
                         {"script": script, "args": list(args)})

    def close(self):
        try:
            if self.session:
                self.call("DELETE", "/session/%s" % self.session)
        except (OSError, AssertionError):
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=T(10))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def browser():
    profile = tempfile.mkdtemp(prefix="samsa-chromium-")
    wd = WebDriver(profile)
    try:
        yield wd
    finally:
        wd.close()
        shutil.rmtree(profile, ignore_errors=True)


PAGE_STATE = """
var q = function (s) { return document.querySelector(s); };
var samples = {};
document.querySelectorAll("canvas").forEach(function (c) {
  samples[c.id] = Number(c.getAttribute("data-samples"));
});
return {
  polls: Number(document.body.getAttribute("data-polls")),
  state: q("#state").textContent,
  topics: Array.prototype.map.call(q("#topics tbody").rows,
                                   function (r) { return r.cells[0].textContent; }),
  topic_rows: Array.prototype.map.call(q("#topics tbody").rows, function (r) {
    return Array.prototype.map.call(r.cells, function (c) { return c.textContent; });
  }),
  partitions: q("#partitions tbody").rows.length,
  brokers: Array.prototype.map.call(q("#brokers tbody").rows, function (r) {
    return Array.prototype.map.call(r.cells, function (c) { return c.textContent; });
  }),
  cluster: q("#cluster-summary").textContent,
  samples: samples,
  msgs_legend: q("#l-msgs").textContent
};
"""


def produce(srv, topic, n):
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": srv.bootstrap(), "linger.ms": 5})
    for i in range(n):
        p.produce(topic, value=b"status-page-%d" % i)
    assert p.flush(T(20)) == 0


def test_status_page_in_chromium(server, browser):
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": server.bootstrap()})
    fs = admin.create_topics([NewTopic("page-topic-a", num_partitions=2, replication_factor=1),
                              NewTopic("page-topic-b", num_partitions=1, replication_factor=1)],
                             operation_timeout=T(10))
    for f in fs.values():
        f.result(timeout=T(20))

    browser.go(server.metrics_url("/"))
    ok = samsa_harness.wait_until(lambda: browser.js(PAGE_STATE)["polls"] >= 2, T(15), 0.2)
    st = browser.js(PAGE_STATE)
    assert ok, "the page never polled /api/status: %s" % st
    assert st["state"].startswith("ready"), st
    assert "page-topic-a" in st["topics"] and "page-topic-b" in st["topics"], st
    assert st["partitions"] >= 3, st
    # one node: it is the active controller and the only broker, nothing
    # under-replicated or offline
    assert st["brokers"] == [["1", "active controller", "active"]], st
    assert "active controller 1" in st["cluster"], st
    assert "under-replicated 0" in st["cluster"], st
    assert "offline in the cluster 0 of" in st["cluster"], st
    first = st["samples"]
    assert set(first) == {"c-msgs", "c-bytes", "c-lat", "c-queues", "c-idle", "c-reqs"}

    # load while the page watches: the charts grow and show the records
    produce(server, "page-topic-a", 2000)
    ok = samsa_harness.wait_until(
        lambda: browser.js(PAGE_STATE)["samples"]["c-msgs"] >= first["c-msgs"] + 2,
        T(15), 0.2)
    st = browser.js(PAGE_STATE)
    assert ok, "charts did not update: %s then %s" % (first, st["samples"])
    for cid, n in st["samples"].items():
        assert n > first[cid], (cid, first, st["samples"])
    row = [r for r in st["topic_rows"] if r[0] == "page-topic-a"][0]
    assert row[1] == "2" and row[2] == "2000", row        # partitions, records in
    # a topic created later shows up without reloading the page
    admin.create_topics([NewTopic("page-topic-c", num_partitions=1, replication_factor=1)],
                        operation_timeout=T(10))["page-topic-c"].result(timeout=T(20))
    ok = samsa_harness.wait_until(
        lambda: "page-topic-c" in browser.js(PAGE_STATE)["topics"], T(10), 0.2)
    assert ok, browser.js(PAGE_STATE)["topics"]

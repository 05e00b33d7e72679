"""packaging/grafana/samsa-dashboard.json (issue 23, packaging): every
query names only metrics and labels a real samsa-server exports.

A broker gets a load that makes every labelled family have series (a
topic produced to and fetched from, a group that committed), its /metrics
is parsed with the strict parser (promtext.py), and for each panel target:
every samsa_*/process_* name is a sample name of the scrape (a histogram's
_bucket/_sum/_count included), and every label the query selects on or
groups by is a label of that family's samples (Prometheus's own instance
and job excepted).  The dashboard is importable: the Prometheus data source
is an input, panel ids are unique and every panel has a query.
"""

import json
import os
import re
import time

import pytest

import promtext
from samsa_harness import T

DASHBOARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                         "packaging", "grafana", "samsa-dashboard.json")
SCRAPER_LABELS = {"instance", "job"}
METRIC_RE = re.compile(r"\b((?:samsa|process)_[a-zA-Z0-9_]*)\b")
SELECTOR_RE = re.compile(r"\b((?:samsa|process)_[a-zA-Z0-9_]*)\s*\{([^}]*)\}")
BY_RE = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")


def dashboard():
    with open(DASHBOARD) as f:
        return json.load(f)


def targets(d):
    for p in d["panels"]:
        for t in p.get("targets", []):
            yield p, t["expr"]


def test_dashboard_is_importable():
    d = dashboard()
    assert [i["name"] for i in d["__inputs"]] == ["DS_PROMETHEUS"]
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids)), ids
    graphs = [p for p in d["panels"] if p["type"] != "row"]
    assert len(graphs) >= 20
    for p in graphs:
        assert p["datasource"]["uid"] == "${DS_PROMETHEUS}", p["title"]
        assert p["targets"] and all(t["expr"].strip() for t in p["targets"]), p["title"]
        g = p["gridPos"]
        assert g["w"] > 0 and g["h"] > 0 and g["x"] + g["w"] <= 24, p["title"]
    var = d["templating"]["list"][0]
    assert var["name"] == "instance"
    assert METRIC_RE.search(var["definition"])


def load(srv):
    from confluent_kafka import Consumer, Producer
    p = Producer({"bootstrap.servers": srv.bootstrap(), "linger.ms": 5})
    for i in range(200):
        p.produce("grafana-topic", value=b"x" * 100, key=b"%d" % i)
    assert p.flush(T(30)) == 0
    c = Consumer({"bootstrap.servers": srv.bootstrap(), "group.id": "grafana-group",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        c.subscribe(["grafana-topic"])
        got, deadline = 0, time.monotonic() + T(30)
        while got < 100:
            assert time.monotonic() < deadline, "consumed %d" % got
            got += sum(1 for m in c.consume(100, 0.5) if not m.error())
        c.commit(asynchronous=False)
    finally:
        c.close()


def scrape(srv):
    import urllib.request
    with urllib.request.urlopen(srv.metrics_url("/metrics"), timeout=T(10)) as r:
        return promtext.parse(r.read().decode())


@pytest.fixture(scope="module")
def fams(samsa_module):
    srv = samsa_module.start()
    load(srv)
    deadline = time.monotonic() + T(20)
    while True:
        f = scrape(srv)
        lag = f.get("samsa_consumer_group_lag")
        if (lag and lag.samples) or time.monotonic() > deadline:
            return f
        time.sleep(0.2)


def samples_by_name(fams):
    out = {}
    for fam in fams.values():
        for name, labels, _ in fam.samples:
            out.setdefault(name, set()).update(labels)
    return out


def problems(d, have):
    """(what is wrong with each query of dashboard d against the scrape's
    sample names and their labels, the metric names checked)"""
    out, checked = [], set()
    for p, expr in targets(d):
        names = set(METRIC_RE.findall(expr))
        if not names:
            out.append("%s: no metric in %s" % (p["title"], expr))
            continue
        missing = [n for n in names if n not in have]
        for n in missing:
            out.append("%s: %s is not in the scrape (%s)" % (p["title"], n, expr))
        checked |= names - set(missing)
        if len(missing) == len(names):
            continue            # no labels to check against
        labels_of = set().union(*(have.get(n, set()) for n in names))
        used = set()
        for metric, sel in SELECTOR_RE.findall(expr):
            for m in re.finditer(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", sel):
                used.add(m.group(1))
        for group in BY_RE.findall(expr):
            used.update(x.strip() for x in group.split(",") if x.strip())
        for label in sorted(used - SCRAPER_LABELS - labels_of):
            out.append("%s: label %r is on none of %s (%s)" % (
                p["title"], label, sorted(names), expr))
    return out, checked


def test_every_query_names_exported_metrics_and_labels(fams):
    found, checked = problems(dashboard(), samples_by_name(fams))
    assert not found, "\n".join(found)
    # the dashboard covers the main families
    for n in ("samsa_requests_total", "samsa_request_errors_total",
              "samsa_request_total_time_seconds_bucket", "samsa_topic_bytes_in_total",
              "samsa_consumer_group_lag", "process_resident_memory_bytes"):
        assert n in checked, n


def test_the_checker_catches_a_wrong_name_and_label(fams):
    """A dashboard with one metric name and one label misspelt fails the
    check, each reported."""
    d = dashboard()
    bad = [t for p in d["panels"] for t in p.get("targets", [])
           if "samsa_topic_bytes_in_total" in t["expr"]][0]
    bad["expr"] = bad["expr"].replace("samsa_topic_bytes_in_total",
                                      "samsa_topic_bytes_in")
    bad2 = [t for p in d["panels"] for t in p.get("targets", [])
            if "by (topic)" in t["expr"] and t is not bad][0]
    bad2["expr"] = bad2["expr"].replace("by (topic)", "by (topics)")
    found, _ = problems(d, samples_by_name(fams))
    assert len(found) == 2, found
    assert "samsa_topic_bytes_in is not in the scrape" in found[0] + found[1]
    assert "label 'topics'" in found[0] + found[1]

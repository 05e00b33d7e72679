"""Configuration: bad values stop the start, unknown keys warn, a
properties file as first argument, --override beats the file, a first
start formats ./samsa-data, and restarts keep the cluster id."""

import os
import re
import urllib.request

import pytest

import samsa_harness
from samsa_harness import T

CLUSTER_ID_RE = r"[A-Za-z0-9_-]{22}"


@pytest.mark.parametrize("key,value", [
    ("num.io.threads", "abc"),
    ("num.network.threads", "0"),
    ("listeners", "garbage"),
    ("socket.request.max.bytes", "-1x"),
    ("node.id", "one"),
])
def test_bad_value_stops_the_start(samsa, key, value):
    overrides = {key: value}
    use_ports = key != "listeners"
    if not use_ports:
        overrides["log.dirs"] = "./samsa-data"
    rc, err, srv = samsa.run_to_exit(overrides, use_ports=use_ports, timeout=T(5))
    assert rc is not None, "still running %.0f s after a bad %s=%s" % (T(5), key, value)
    assert rc != 0, "exited 0 on a bad %s=%s" % (key, value)
    assert key in err and value in err, \
        "stderr does not name %s and %r:\n%s" % (key, value, err[-2000:])
    assert not samsa_harness.sanitizer_reports(err), err[-4000:]


def test_bad_value_in_properties_file(samsa, tmp_path):
    props = tmp_path / "server.properties"
    props.write_text("num.io.threads=lots\n")
    rc, err, _ = samsa.run_to_exit(props_file=str(props), timeout=T(5))
    assert rc not in (None, 0)
    assert "num.io.threads" in err and "lots" in err, err[-2000:]


def test_unknown_key_warns(samsa):
    srv = samsa.start({"foo.bar": "1"})
    assert samsa_harness.wait_until(lambda: "foo.bar" in srv.stderr_text(), T(5)), \
        "no warning naming foo.bar:\n" + srv.stderr_tail()
    with srv.connect() as c:
        assert c.api_versions(0)["error_code"] == 0


def node_ids(srv):
    with srv.connect() as c:
        r = c.metadata(1, None)
    return [b["node_id"] for b in r["brokers"]], r["controller_id"]


def test_properties_file(samsa, tmp_path):
    props = tmp_path / "server.properties"
    props.write_text("# a comment\n\nnode.id=7\nnum.io.threads=2\n")
    srv = samsa.start(props_file=str(props))
    assert node_ids(srv) == ([7], 7)
    assert srv.meta_properties()["node.id"] == "7"
    handlers = [n for n in srv.thread_names() if n.startswith("handler-")]
    assert samsa_harness.wait_until(
        lambda: len([n for n in srv.thread_names() if n.startswith("handler-")]) == 4, T(5)), \
        "num.io.threads=2 from the file: handler threads %s" % handlers


def test_override_beats_the_file(samsa, tmp_path):
    props = tmp_path / "server.properties"
    props.write_text("node.id=7\n")
    srv = samsa.start({"node.id": "9"}, props_file=str(props))
    assert node_ids(srv) == ([9], 9)
    assert srv.meta_properties()["node.id"] == "9"


def check_meta(path, node_id="1"):
    assert os.path.isfile(path), "%s was not created" % path
    meta = samsa_harness.read_meta_properties(path)
    assert meta.get("version") == "1", meta
    assert re.fullmatch(CLUSTER_ID_RE, meta.get("cluster.id", "")), meta
    assert meta.get("node.id") == node_id, meta
    assert re.fullmatch(CLUSTER_ID_RE, meta.get("directory.id", "")), meta
    return meta


def test_no_arguments_uses_defaults(samsa):
    busy = [p for p in (9092, 9093, 9644) if samsa_harness.port_in_use(p)]
    if busy:
        pytest.skip("default port(s) %s in use on this machine" % busy)
    try:
        srv = samsa.start(use_ports=False, ports=(9092, 9093), retries=1)
    except samsa_harness.HarnessError as e:
        if "in use" in str(e):
            pytest.skip("default port taken meanwhile: %s" % str(e).splitlines()[0])
        raise
    assert srv.command() == [samsa_harness.server_binary()]
    meta = check_meta(os.path.join(srv.workdir, "samsa-data", "meta.properties"))
    with srv.connect() as c:
        r = c.metadata(2, None)
    # default listener PLAINTEXT://localhost:9092 is advertised as is
    assert [(b["node_id"], b["port"]) for b in r["brokers"]] == [(1, 9092)]
    assert r["brokers"][0]["host"] in ("localhost", "127.0.0.1"), r["brokers"]
    assert r["cluster_id"] == meta["cluster.id"]
    # metrics.listener's default: http://127.0.0.1:9644
    with urllib.request.urlopen("http://127.0.0.1:9644/health", timeout=T(5)) as h:
        assert h.status == 200 and h.read() == b"ok\n"


def test_restart_keeps_cluster_id(samsa):
    srv = samsa.start()
    meta = check_meta(os.path.join(srv.data_dir, "meta.properties"))
    with srv.connect() as c:
        assert c.metadata(2, None)["cluster_id"] == meta["cluster.id"]
    assert srv.stop() == []
    srv2 = samsa.start(workdir=srv.workdir, overrides={"log.dirs": srv.data_dir})
    meta2 = check_meta(os.path.join(srv2.data_dir, "meta.properties"))
    assert meta2["cluster.id"] == meta["cluster.id"]
    assert meta2["directory.id"] == meta["directory.id"]
    with srv2.connect() as c:
        assert c.metadata(2, None)["cluster_id"] == meta["cluster.id"]


def test_several_log_dirs_share_the_cluster_id(samsa):
    d = samsa.new_dir()
    dirs = [os.path.join(d, "a"), os.path.join(d, "b")]
    srv = samsa.start({"log.dirs": ",".join(dirs)})
    metas = [check_meta(os.path.join(x, "meta.properties")) for x in dirs]
    assert metas[0]["cluster.id"] == metas[1]["cluster.id"]
    assert metas[0]["directory.id"] != metas[1]["directory.id"]
    with srv.connect() as c:
        assert c.metadata(2, None)["cluster_id"] == metas[0]["cluster.id"]


# ---- "accepted but not used yet" ------------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNUSED_RE = re.compile(r"configuration '([^']+)' \(([^)]*)\) is accepted but not used yet")

# The keys the broker accepts and ignores (docs/CONFIG.md's Used = no),
# each checked against the code: a key that becomes honoured must leave
# this list and have its `implemented` flag set (src/config/config_defs.c).
NOT_USED = {
    # metadata log: fixed segments, no retention (the quorum's snapshots
    # follow metadata.log.max.record.bytes.between.snapshots)
    "metadata.log.segment.bytes",
    "metadata.max.retention.bytes", "metadata.max.retention.ms",
    "metadata.max.idle.interval.ms",
    # libraft has its own fetch-free replication
    "controller.quorum.fetch.timeout.ms",
    # replication (under unstable.replication.enable): no preferred-leader
    # moves; the fetchers connect over PLAINTEXT only
    # (KRaft's controller does not read it either)
    "leader.imbalance.per.broker.percentage",
    "security.inter.broker.protocol",
    "replica.socket.receive.buffer.bytes",
    "transaction.state.log.min.isr",
    # batches are stored as produced: no broker-side recompression
    "compression.type", "compression.gzip.level", "compression.lz4.level",
    "compression.zstd.level",
    # no preallocation, no fetch sessions
    "log.preallocate", "max.incremental.fetch.session.cache.slots",
    # client side only: the broker makes no TLS connections yet
    "ssl.endpoint.identification.algorithm",
    # the cleaner reads segments its own way
    "log.cleaner.io.buffer.size", "log.cleaner.io.buffer.load.factor",
    # no such machinery here
    "background.threads", "request.timeout.ms", "delete.topic.enable",
    "fetch.purgatory.purge.interval.requests", "producer.purgatory.purge.interval.requests",
    "delete.records.purgatory.purge.interval.requests", "offsets.load.buffer.size",
    "offsets.commit.timeout.ms", "transaction.state.log.load.buffer.size",
}


def config_table():
    """docs/CONFIG.md's generated table (kept in step with
    src/config/config_defs.c by the unit test): {key: (default, used)}."""
    out = {}
    with open(os.path.join(ROOT, "docs", "CONFIG.md")) as f:
        for line in f:
            cells = [c.strip() for c in line.split("|")]
            if len(cells) < 7 or not cells[1].startswith("`"):
                continue
            out[cells[1].strip("`")] = (cells[3], cells[5])
    return out


def test_not_used_keys_are_the_audited_ones():
    """The keys documented (and logged) as not used are exactly the audited
    list above."""
    table = config_table()
    assert len(table) > 100, "docs/CONFIG.md table not found"
    documented = {k for k, (_, used) in table.items() if used == "no"}
    stale = sorted(documented - NOT_USED)
    assert not stale, "documented as not used but not audited as ignored " \
        "(a stale implemented flag?): %s" % stale
    gone = sorted(NOT_USED - documented)
    assert not gone, "audited as ignored but documented as used: %s" % gone


def test_used_keys_are_not_reported_unused(samsa):
    """A start with keys that are honoured logs no "accepted but not used
    yet" for them (num.partitions was reported so, though auto-created
    topics get that many partitions), and does for an ignored one; an
    auto-created topic has num.partitions partitions."""
    used = {"num.partitions": "3", "default.replication.factor": "1",
            "auto.create.topics.enable": "true", "message.max.bytes": "2000000",
            "log.segment.bytes": "2097152", "log.retention.hours": "100",
            "log.retention.check.interval.ms": "60000",
            "log.flush.interval.messages": "100000",
            "log.message.timestamp.type": "CreateTime",
            "num.recovery.threads.per.data.dir": "2"}
    srv = samsa.start(dict(used, **{"background.threads": "4"}))
    with srv.connect() as c:
        c.topic_metadata("auto-made", version=4, allow_auto_topic_creation=True)
        t = c.wait_topic("auto-made", timeout=T(10))
        assert len(t["partitions"]) == 3, t
    unused = {m.group(1) for m in UNUSED_RE.finditer(srv.stderr_text())}
    assert unused & set(used) == set(), \
        "honoured keys reported as not used: %s" % sorted(unused & set(used))
    assert "background.threads" in unused, srv.stderr_tail()


def test_each_not_used_key_is_reported(samsa):
    """Every key of the audited list, set to its default, is logged as
    accepted but not used, and no other key is."""
    table = config_table()
    overrides = {}
    for k in sorted(NOT_USED):
        dflt = table[k][0]
        if dflt.startswith("`"):
            overrides[k] = dflt.strip("`")
        elif dflt == '""':
            overrides[k] = ""
    srv = samsa.start(overrides)
    unused = {m.group(1) for m in UNUSED_RE.finditer(srv.stderr_text())}
    assert unused == set(overrides), (sorted(unused ^ set(overrides)), srv.stderr_tail())

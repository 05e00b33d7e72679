"""KRaft cluster configuration and storage formatting (issue 18, item 1):
`samsa-server random-cluster-id`, `samsa-server format` (as kafka-storage
format: meta.properties in every log dir and metadata.log.dir, already
formatted dirs refused or, with --ignore-formatted, skipped), a start in
cluster mode (process.roles set) only on formatted dirs whose node.id and
cluster.id agree with the configuration, Kafka's cross-key checks of the
KRaft keys with messages naming the key, and the single-node default (no
process.roles) still formatting itself."""

import os
import re
import subprocess
import time

import pytest

import samsa_harness
from samsa_harness import T

CLUSTER_ID_RE = r"[A-Za-z0-9_-]{22}"


# ---- helpers -----------------------------------------------------------------

def run_cmd(args, cwd=None):
    """samsa-server <args>: (returncode, stdout, stderr)."""
    r = subprocess.run([samsa_harness.server_binary()] + list(args), cwd=cwd,
                       env=samsa_harness.base_env(), stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=T(20))
    assert not samsa_harness.sanitizer_reports(r.stderr), r.stderr[-4000:]
    return r.returncode, r.stdout, r.stderr


def random_cluster_id():
    rc, out, err = run_cmd(["random-cluster-id"])
    assert rc == 0, err
    return out.strip()


def override_args(overrides):
    args = []
    for k, v in overrides.items():
        args += ["--override", "%s=%s" % (k, v)]
    return args


def two_ports():
    p = samsa_harness.free_port()
    c = samsa_harness.free_port()
    while c == p:
        c = samsa_harness.free_port()
    return p, c


def cluster_conf(d, node_id=1, roles="broker,controller", voters=None, dirs=("data",)):
    """Overrides of a KRaft cluster node in dir d (its own only voter unless
    voters is given) and its (broker, controller) ports."""
    p, c = two_ports()
    o = {
        "process.roles": roles,
        "node.id": str(node_id),
        "listeners": "PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (p, c),
        "controller.quorum.voters": voters or "%d@127.0.0.1:%d" % (node_id, c),
        "log.dirs": ",".join(os.path.join(d, x) for x in dirs),
    }
    return o, (p, c)


def fmt(overrides, cluster_id, extra=(), cwd=None):
    args = ["format"] + (["--cluster-id", cluster_id] if cluster_id else [])
    return run_cmd(args + override_args(overrides) + list(extra), cwd=cwd)


def meta(d):
    return samsa_harness.read_meta_properties(os.path.join(d, "meta.properties"))


def start_cluster_node(samsa, d, overrides, ports):
    return samsa.start(overrides=overrides, workdir=d, use_ports=False, ports=ports)


def expect_exit(samsa, overrides, *wants):
    """A start with overrides exits non-zero, stderr holding every want."""
    rc, err, _ = samsa.run_to_exit(overrides, use_ports=False, timeout=T(5))
    assert rc is not None, "still running %.0f s after %s" % (T(5), overrides)
    assert rc != 0, "exited 0 with %s" % overrides
    for w in wants:
        assert w in err, "stderr lacks %r:\n%s" % (w, err[-3000:])
    assert not samsa_harness.sanitizer_reports(err), err[-4000:]
    return err


# ---- random-cluster-id ------------------------------------------------------------

def test_random_cluster_id():
    ids = {random_cluster_id() for _ in range(5)}
    assert len(ids) == 5, ids
    for i in ids:
        assert re.fullmatch(CLUSTER_ID_RE, i), i
        assert not i.startswith("-"), i
    rc, _, err = run_cmd(["random-cluster-id", "extra"])
    assert rc != 0 and "extra" in err, err


# ---- format, then start -------------------------------------------------------

def test_format_then_start(samsa):
    d = samsa.new_dir()
    cid = random_cluster_id()
    o, ports = cluster_conf(d, node_id=3, dirs=("a", "b"))
    o["metadata.log.dir"] = os.path.join(d, "meta")
    rc, out, err = fmt(o, cid)
    assert rc == 0, err
    dirids = set()
    for x in ("a", "b", "meta"):
        m = meta(os.path.join(d, x))
        assert m.get("version") == "1", m
        assert m.get("cluster.id") == cid, m
        assert m.get("node.id") == "3", m
        assert re.fullmatch(CLUSTER_ID_RE, m.get("directory.id", "")), m
        dirids.add(m["directory.id"])
        assert os.path.join(d, x) in out, out
    assert len(dirids) == 3, "directory.id not unique per dir: %s" % dirids
    assert "Formatting metadata directory %s" % os.path.join(d, "meta") in out, out

    srv = start_cluster_node(samsa, d, o, ports)
    # the node registers with itself, the active controller, in the
    # background (broker/lifecycle.h): listed once registered
    deadline = time.monotonic() + T(10)
    while True:
        with srv.connect() as c:
            r = c.metadata(2, None)
        if r["brokers"] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert r["cluster_id"] == cid, r
    assert [b["node_id"] for b in r["brokers"]] == [3], r["brokers"]
    assert r["controller_id"] == 3, r
    err = srv.stderr_text()
    assert "formatted log dir" not in err, "a cluster node formatted a dir itself"
    assert srv.stop() == []
    # a restart keeps the ids
    srv2 = start_cluster_node(samsa, d, o, ports)
    with srv2.connect() as c:
        assert c.metadata(2, None)["cluster_id"] == cid
    assert meta(os.path.join(d, "a"))["directory.id"] in dirids


def test_format_reads_a_properties_file(samsa, tmp_path):
    d = samsa.new_dir()
    cid = random_cluster_id()
    o, ports = cluster_conf(d, node_id=5)
    props = tmp_path / "server.properties"
    props.write_text("".join("%s=%s\n" % kv for kv in o.items())
                     + "metrics.listener=\n")
    rc, out, err = run_cmd(["format", "-t", cid, "-c", str(props)])
    assert rc == 0, err
    assert meta(os.path.join(d, "data"))["node.id"] == "5"
    srv = samsa.start(props_file=str(props), workdir=d, use_ports=False, ports=ports)
    with srv.connect() as c:
        assert c.metadata(2, None)["cluster_id"] == cid


def test_format_refuses_formatted_dirs(samsa):
    d = samsa.new_dir()
    cid = random_cluster_id()
    o, _ = cluster_conf(d, dirs=("a", "b"))
    assert fmt(o, cid)[0] == 0
    before = meta(os.path.join(d, "a"))
    a = os.path.join(d, "a")

    rc, _, err = fmt(o, cid)
    assert rc != 0
    assert "Log directory %s is already formatted. Use --ignore-formatted to " \
        "ignore this directory and format the others." % a in err, err

    # --ignore-formatted: same cluster and node are skipped; a new dir is formatted
    o2 = dict(o, **{"log.dirs": o["log.dirs"] + "," + os.path.join(d, "c")})
    rc, out, err = fmt(o2, cid, ["--ignore-formatted"])
    assert rc == 0, err
    assert meta(os.path.join(d, "c"))["cluster.id"] == cid
    rc, out, err = fmt(o2, cid, ["-g"])
    assert rc == 0, err
    assert "All of the log directories are already formatted." in out, out

    # ... but never for another cluster or node
    other = random_cluster_id()
    rc, _, err = fmt(o, other, ["--ignore-formatted"])
    assert rc != 0
    assert a in err and cid in err and other in err, err
    rc, _, err = fmt(dict(o, **{"node.id": "2", "controller.quorum.voters": "2@h:1"}),
                     cid, ["-g"])
    assert rc != 0
    assert "node.id 1" in err and "2" in err and a in err, err
    assert meta(a) == before, "a refused format changed meta.properties"


def test_format_needs_a_valid_cluster_id(samsa):
    d = samsa.new_dir()
    o, _ = cluster_conf(d)
    rc, _, err = fmt(o, None)
    assert rc != 0 and "--cluster-id is required" in err, err
    for bad in ("abc", "AAAAAAAAAAAAAAAAAAAAAA", "!" * 22, "mGoesuSdRTWxLIafHrHmxB"):
        rc, _, err = fmt(o, bad)
        assert rc != 0, bad
        assert "Cluster ID string '%s'" % bad in err, err
    assert not os.path.exists(os.path.join(d, "data", "meta.properties"))


def test_format_checks_the_configuration(samsa):
    d = samsa.new_dir()
    o, _ = cluster_conf(d)
    o["controller.quorum.voters"] = "1@localhost"
    rc, _, err = fmt(o, random_cluster_id())
    assert rc != 0
    assert "'controller.quorum.voters'" in err and "1@localhost" in err, err
    assert not os.path.exists(os.path.join(d, "data", "meta.properties"))


def test_format_accepts_a_multi_node_cluster(samsa):
    """A three-voter quorum and a broker-only node are valid configurations
    (format takes them); both run (tests/cluster: a broker-only node is a
    quorum observer, test_observers_cluster.py): started with no voter up,
    the broker-only node keeps waiting for the quorum instead of exiting.
    A dynamic quorum's controller must be formatted with one of
    --standalone, --initial-controllers, --no-initial-controllers
    (tests/cluster/test_voters_cluster.py runs them)."""
    d = samsa.new_dir()
    cid = random_cluster_id()
    o, _ = cluster_conf(d, node_id=2, voters="1@127.0.0.1:1,2@127.0.0.1:2,3@127.0.0.1:3")
    rc, _, err = fmt(o, cid)
    assert rc == 0, err
    d2 = samsa.new_dir()
    b, _ = cluster_conf(d2, node_id=4, roles="broker", voters="1@127.0.0.1:1")
    b["listeners"] = "PLAINTEXT://127.0.0.1:%d" % samsa_harness.free_port()
    rc, _, err = fmt(b, cid)
    assert rc == 0, err
    rc, err, _ = samsa.run_to_exit(b, use_ports=False, timeout=T(3))
    assert rc is None, "a broker-only node exited (%s):\n%s" % (rc, err[-3000:])
    d3 = samsa.new_dir()
    q, _ = cluster_conf(d3, node_id=1)
    del q["controller.quorum.voters"]
    q["controller.quorum.bootstrap.servers"] = "127.0.0.1:1,127.0.0.1:2"
    rc, _, err = fmt(q, cid)
    assert rc != 0 and "you must specify one of the following: --standalone" in err, err
    expect_exit(samsa, q, "a dynamic quorum", "format it with `samsa-server format "
                "--standalone`")


# ---- start-up checks of meta.properties --------------------------------------

def test_unformatted_dir_refused_in_cluster_mode(samsa):
    d = samsa.new_dir()
    o, _ = cluster_conf(d)
    data = os.path.join(d, "data")
    expect_exit(samsa, o, "No `meta.properties` found in %s (have you run "
                "`samsa-server format`" % data)
    assert not os.path.exists(os.path.join(data, "meta.properties"))


def test_unformatted_metadata_dir_refused_in_cluster_mode(samsa):
    d = samsa.new_dir()
    o, _ = cluster_conf(d)
    assert fmt(o, random_cluster_id())[0] == 0
    o["metadata.log.dir"] = os.path.join(d, "meta")
    expect_exit(samsa, o, "No `meta.properties` found in %s" % o["metadata.log.dir"])


def test_mismatched_node_id_refused(samsa):
    d = samsa.new_dir()
    o, _ = cluster_conf(d, node_id=1)
    assert fmt(o, random_cluster_id())[0] == 0
    o2, _ = cluster_conf(d, node_id=2)
    expect_exit(samsa, o2, "Stale or mismatched node.id",
                os.path.join(d, "data", "meta.properties"),
                "says node.id 1", "configuration says node.id 2")


def test_mismatched_node_id_refused_single_node(samsa):
    """Without process.roles too: a dir formatted for node 1 is not node 7's."""
    srv = samsa.start({"node.id": "1"})
    assert srv.stop() == []
    rc, err, _ = samsa.run_to_exit({"node.id": "7", "log.dirs": srv.data_dir},
                                   use_ports=True, timeout=T(5))
    assert rc not in (None, 0)
    assert "Stale or mismatched node.id" in err and "node.id 1" in err \
        and "node.id 7" in err, err[-2000:]


def test_mismatched_cluster_id_refused(samsa):
    d = samsa.new_dir()
    o, _ = cluster_conf(d, dirs=("a",))
    cid_a, cid_b = random_cluster_id(), random_cluster_id()
    assert fmt(o, cid_a)[0] == 0
    ob, _ = cluster_conf(d, dirs=("b",))
    assert fmt(ob, cid_b)[0] == 0
    both, _ = cluster_conf(d, dirs=("a", "b"))
    expect_exit(samsa, both, "Invalid cluster.id in: %s" %
                os.path.join(d, "b", "meta.properties"),
                "Expected %s, but read %s" % (cid_a, cid_b))


# ---- bad values and cross-key checks ------------------------------------------

CROSS_KEY_CASES = [
    # (overrides on top of a valid single-voter cluster node, key, words)
    ({"controller.quorum.voters": "1@localhost"}, "controller.quorum.voters",
     "is not of the form {id}@{host}:{port}"),
    ({"controller.quorum.voters": "x@localhost:9093"}, "controller.quorum.voters",
     "the voter id 'x' is not a number"),
    ({"controller.quorum.voters": "1@localhost:0"}, "controller.quorum.voters",
     "port must be a number from 1 to 65535"),
    ({"controller.quorum.voters": "1@a:1,1@b:2"}, "controller.quorum.voters",
     "voter id 1 is listed twice"),
    ({"controller.quorum.voters": "2@a:1,3@b:2"}, "controller.quorum.voters",
     "If process.roles contains the 'controller' role, the node id 1 must be "
     "included in the set of voters controller.quorum.voters=[2, 3]"),
    ({"controller.quorum.voters": ""}, "controller.quorum.voters",
     "If using process.roles, either controller.quorum.bootstrap.servers must "
     "contain the set of bootstrap controllers or controller.quorum.voters must "
     "contain a parseable set of controllers"),
    ({"controller.quorum.voters": "", "controller.quorum.bootstrap.servers": "c1"},
     "controller.quorum.bootstrap.servers", "'c1': missing ':'"),
    ({"node.id": None}, "node.id",
     "Missing configuration 'node.id' which is required when 'process.roles' is defined"),
    ({"process.roles": "broker", "controller.quorum.voters": "2@a:1"},
     "controller.listener.names",
     "controller.listener.names must not contain a value appearing in the "
     "'listeners' configuration when running KRaft with just the broker role"),
    ({"process.roles": "broker", "controller.quorum.voters": "1@a:1,2@b:2",
      "listeners": "PLAINTEXT://127.0.0.1:1"}, "controller.quorum.voters",
     "If process.roles contains just the 'broker' role, the node id 1 must not "
     "be included in the set of voters controller.quorum.voters=[1, 2]"),
    ({"process.roles": "broker", "controller.quorum.voters": "2@a:1",
      "listeners": "PLAINTEXT://127.0.0.1:1", "controller.listener.names": ""},
     "controller.listener.names",
     "controller.listener.names must contain at least one value when running "
     "KRaft with just the broker role"),
    ({"process.roles": "controller"}, "listeners",
     "every listener must be a controller listener"),
    ({"process.roles": "zookeeper"}, "process.roles",
     "'zookeeper' is not one of: broker, controller"),
    ({"inter.broker.listener.name": "FOO"}, "inter.broker.listener.name",
     "inter.broker.listener.name must be a listener name defined in "
     "advertised.listeners. The valid options based on currently configured "
     "listeners are PLAINTEXT"),
    ({"inter.broker.listener.name": "CONTROLLER"}, "inter.broker.listener.name",
     "is a controller listener"),
    ({"inter.broker.listener.name": "PLAINTEXT",
      "security.inter.broker.protocol": "PLAINTEXT"}, "inter.broker.listener.name",
     "Only one of inter.broker.listener.name and security.inter.broker.protocol "
     "should be set"),
    ({"broker.session.timeout.ms": "0"}, "broker.session.timeout.ms", "at least 1"),
    ({"broker.heartbeat.interval.ms": "2s"}, "broker.heartbeat.interval.ms",
     "not a number"),
    ({"controller.quorum.election.timeout.ms": "-1"},
     "controller.quorum.election.timeout.ms", "at least 1"),
    ({"controller.quorum.fetch.timeout.ms": "soon"},
     "controller.quorum.fetch.timeout.ms", "not a number"),
    ({"metadata.log.max.record.bytes.between.snapshots": "0"},
     "metadata.log.max.record.bytes.between.snapshots", "at least 1"),
    # single-node mode (no process.roles): only this node may be named
    ({"process.roles": None, "controller.quorum.voters": "1@127.0.0.1:1,2@b:2"},
     "controller.quorum.voters", "needs process.roles set"),
]


def case_overrides(d, changes):
    o, _ = cluster_conf(d)
    for k, v in changes.items():
        if v is None:
            o.pop(k, None)
        else:
            o[k] = v
    return o


@pytest.mark.parametrize("changes,key,words", CROSS_KEY_CASES,
                         ids=[c[1] + ":" + ",".join("%s=%s" % kv for kv in c[0].items())
                              for c in CROSS_KEY_CASES])
def test_bad_kraft_config_stops_start_and_format(samsa, changes, key, words):
    d = samsa.new_dir()
    o = case_overrides(d, changes)
    err = expect_exit(samsa, o, words, "'%s'" % key)
    bad = changes.get(key)
    if bad:
        assert bad in err, "stderr does not name the value %r:\n%s" % (bad, err[-2000:])
    rc, _, ferr = fmt(o, random_cluster_id())
    assert rc != 0, "format took %s" % changes
    assert words in ferr and key in ferr, ferr
    assert not os.path.exists(os.path.join(d, "data", "meta.properties"))


# ---- the single-node default ------------------------------------------------

def test_single_node_default_formats_itself(samsa):
    """No process.roles, no quorum keys: a first start formats the empty dir,
    the node is its own controller, and no KRaft key is reported."""
    srv = samsa.start()
    m = srv.meta_properties()
    assert m["node.id"] == "1" and re.fullmatch(CLUSTER_ID_RE, m["cluster.id"]), m
    with srv.connect() as c:
        r = c.metadata(2, None)
    assert r["cluster_id"] == m["cluster.id"]
    assert r["controller_id"] == 1 and [b["node_id"] for b in r["brokers"]] == [1]
    err = srv.stderr_text()
    assert "formatted log dir %s" % srv.data_dir in err, err[-2000:]
    assert "controller.quorum" not in err, err[-2000:]
    srv2 = samsa.restart(srv)
    assert srv2.meta_properties() == m


def test_no_configuration_at_all(samsa):
    """samsa-server with no arguments (default ports) still runs a node."""
    busy = [p for p in (9092, 9093, 9644) if samsa_harness.port_in_use(p)]
    if busy:
        pytest.skip("default port(s) %s in use on this machine" % busy)
    try:
        srv = samsa.start(use_ports=False, ports=(9092, 9093), retries=1)
    except samsa_harness.HarnessError as e:
        if "in use" in str(e):
            pytest.skip("default port taken meanwhile")
        raise
    assert srv.command() == [samsa_harness.server_binary()]
    m = meta(os.path.join(srv.workdir, "samsa-data"))
    with srv.connect() as c:
        assert c.metadata(2, None)["cluster_id"] == m["cluster.id"]

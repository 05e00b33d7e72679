"""A dynamic metadata quorum (KIP-853): controllers configured with
controller.quorum.bootstrap.servers instead of controller.quorum.voters,
their first voters from `samsa-server format --standalone` /
--initial-controllers, later ones formatted --no-initial-controllers and
added at run time.

- the configuration checks: a controller with both keys or neither is
  refused at start with a message naming both; format refuses the
  dynamic-quorum flags next to controller.quorum.voters and wants one of
  them on a dynamic controller;
- --standalone: the controller is its own first voter and leads;
  DescribeQuorum (v2, its CONTROLLER listener) names it with the
  directory id format wrote into its metadata dir's meta.properties;
- --initial-controllers: three controllers elect one leader, each with the
  directory id given on the command line;
- --no-initial-controllers: the controller starts, is no voter and waits;
- AddRaftVoter / RemoveRaftVoter (API 80/81) through Kafka's own
  kafka-metadata-quorum (--bootstrap-controller, add-controller with
  --command-config, remove-controller, describe --status/--replication):
  one --standalone controller, two more added -> 3 voters; kill -9 of the
  active controller -> a new leader; the dead voter removed -> 2 voters
  and the quorum still commits; removing an unknown voter, a voter with
  another directory id and adding a voter twice fail with Kafka's errors;
  the APIs are listed on the CONTROLLER listener only.
"""

import os
import time

import kwire
from cluster_harness import (Node, describe_quorum, distinct_ports,
                             random_cluster_id, run_cmd)
from javakit import kafka_tool
from samsa_harness import HOST, T

API_ADD_RAFT_VOTER = 80
API_REMOVE_RAFT_VOTER = 81


def meta_dir_id(node):
    with open(os.path.join(node.workdir, "data", "meta.properties")) as f:
        for line in f:
            if line.startswith("directory.id="):
                return line.strip().split("=", 1)[1]
    raise AssertionError("no directory.id in %s" % node.workdir)


class DynamicQuorum:
    """Controller-only nodes (process.roles=controller) of one dynamic
    quorum: node ids 1..n, every one with the same
    controller.quorum.bootstrap.servers (the first `bootstrap` nodes'
    CONTROLLER listeners)."""

    def __init__(self, samsa, n, bootstrap=1, election_timeout_ms=1000):
        self.samsa = samsa
        self.cluster_id = random_cluster_id()
        self.ports = {i + 1: p for i, p in enumerate(distinct_ports(n))}
        self.bootstrap = ",".join("%s:%d" % (HOST, self.ports[i])
                                  for i in range(1, bootstrap + 1))
        self.nodes = {}
        for node_id in self.ports:
            d = samsa.new_dir()
            o = {
                "process.roles": "controller",
                "node.id": str(node_id),
                "controller.quorum.bootstrap.servers": self.bootstrap,
                "listeners": "CONTROLLER://%s:%d" % (HOST, self.ports[node_id]),
                "controller.listener.names": "CONTROLLER",
                "log.dirs": os.path.join(d, "data"),
                "controller.quorum.election.timeout.ms": str(election_timeout_ms),
            }
            self.nodes[node_id] = Node(node_id, d, o, (None, self.ports[node_id]),
                                       "controller")

    def format(self, node_id, *flags, expect_ok=True):
        args = ["format", "--cluster-id", self.cluster_id]
        for k, v in self.nodes[node_id].overrides.items():
            args += ["--override", "%s=%s" % (k, v)]
        rc, out, err = run_cmd(args + list(flags))
        if expect_ok:
            assert rc == 0, err
        return rc, out, err

    def start(self, node_id):
        node = self.nodes[node_id]
        node.srv = self.samsa.start(overrides=dict(node.overrides), workdir=node.workdir,
                                    use_ports=False, ports=node.ports, wait=False)
        deadline = time.monotonic() + T(15)
        last = None
        while time.monotonic() < deadline:
            assert node.srv.alive(), node.srv.describe()
            try:
                with node.connect(timeout=1.0, controller=True) as c:
                    assert c.api_versions(0, timeout=T(3))["error_code"] == 0
                return node
            except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout,
                    kwire.ProtocolError) as e:
                last = "%s: %s" % (type(e).__name__, e)
            time.sleep(0.05)
        raise AssertionError("node %d not ready: %s" % (node_id, last))

    def quorum(self, node_id):
        """DescribeQuorum v2 at node's CONTROLLER listener: (partition, nodes)."""
        with self.nodes[node_id].connect(controller=True) as c:
            dq = describe_quorum(c, version=2)
        assert dq["error_code"] == 0, dq
        return dq["topics"][0]["partitions"][0], dq["nodes"]

    def wait_leader(self, timeout, among, exclude=()):
        """The leader that DescribeQuorum at every node of among names (the
        leader answers error 0, the others NOT_LEADER_OR_FOLLOWER with it)."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                seen = {i: self.quorum(i)[0]["leader_id"] for i in among}
                last = seen
                vals = set(seen.values())
                if len(vals) == 1:
                    v = vals.pop()
                    if v >= 0 and v not in exclude:
                        return v
            except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout,
                    AssertionError) as e:
                last = "%s: %s" % (type(e).__name__, e)
            time.sleep(0.05)
        raise AssertionError("no agreed leader within %.1f s: %s" % (timeout, last))

    def voters(self, leader):
        p, nodes = self.quorum(leader)
        assert p["error_code"] == 0, p
        return ({v["replica_id"]: v["replica_directory_id"] for v in p["current_voters"]},
                {n["node_id"]: n["listeners"] for n in nodes}, p)


def uuid_text(b):
    import base64
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def test_config_both_or_neither_refused(samsa):
    base = {"process.roles": "controller", "node.id": "1",
            "controller.listener.names": "CONTROLLER",
            "listeners": "CONTROLLER://127.0.0.1:0"}
    rc, err, _ = samsa.run_to_exit(overrides=dict(base, **{
        "controller.quorum.voters": "1@127.0.0.1:1",
        "controller.quorum.bootstrap.servers": "127.0.0.1:1"}), use_ports=False)
    assert rc not in (0, None), err
    assert ("Only one of controller.quorum.voters and "
            "controller.quorum.bootstrap.servers should be set") in err, err
    rc, err, _ = samsa.run_to_exit(overrides=base, use_ports=False)
    assert rc not in (0, None), err
    assert ("either controller.quorum.bootstrap.servers must contain the set of "
            "bootstrap controllers or controller.quorum.voters must contain a "
            "parseable set of controllers") in err, err


def test_format_flags(samsa):
    q = DynamicQuorum(samsa, 1)
    rc, _, err = q.format(1, expect_ok=False)
    assert rc != 0 and "you must specify one of the following: --standalone, " \
        "--initial-controllers, or --no-initial-controllers" in err, err
    rc, _, err = q.format(1, "--standalone", "--no-initial-controllers", expect_ok=False)
    assert rc != 0 and "only one of --standalone" in err, err
    rc, _, err = q.format(1, "--initial-controllers", "1@%s:%d" % (HOST, q.ports[1]),
                          expect_ok=False)
    assert rc != 0 and "is not of the form {id}@{host}:{port}:{directory-id}" in err, err
    # unformatted: a start says how to format
    rc, err, _ = samsa.run_to_exit(overrides=q.nodes[1].overrides, use_ports=False)
    assert rc not in (0, None) and "format it with `samsa-server format " \
        "--standalone`, --initial-controllers or --no-initial-controllers" in err, err
    # a static quorum's node takes none of the flags
    o = dict(q.nodes[1].overrides)
    del o["controller.quorum.bootstrap.servers"]
    o["controller.quorum.voters"] = "1@%s:%d" % (HOST, q.ports[1])
    args = ["format", "--cluster-id", q.cluster_id, "--standalone"]
    for k, v in o.items():
        args += ["--override", "%s=%s" % (k, v)]
    rc, _, err = run_cmd(args)
    assert rc != 0 and "You cannot specify controller.quorum.voters and format " \
        "the node with --initial-controllers, --standalone" in err, err


def test_standalone_and_no_initial_controllers(samsa):
    q = DynamicQuorum(samsa, 2)
    q.format(1, "--standalone")
    q.format(2, "--no-initial-controllers")
    q.start(1)
    assert q.wait_leader(T(15), [1]) == 1
    voters, nodes, p = q.voters(1)
    assert {k: uuid_text(v) for k, v in voters.items()} == {1: meta_dir_id(q.nodes[1])}, \
        voters
    assert nodes[1][0]["port"] == q.ports[1], nodes
    q.start(2)
    time.sleep(1.0)
    voters, _, p = q.voters(1)
    assert set(voters) == {1}, p
    # node 2 is no member yet: it knows no leader
    p2, _ = q.quorum(2)
    assert p2["error_code"] != 0 and p2["leader_id"] == -1, p2
    assert "(an observer) following 0 voter(s)" in q.nodes[2].srv.stderr_text()


def test_initial_controllers(samsa):
    q = DynamicQuorum(samsa, 3, bootstrap=3)
    ids = {}
    for i in (1, 2, 3):
        rc, out, err = run_cmd(["random-cluster-id"])
        ids[i] = out.strip()
    ic = ",".join("%d@%s:%d:%s" % (i, HOST, q.ports[i], ids[i]) for i in (1, 2, 3))
    for i in (1, 2, 3):
        q.format(i, "--initial-controllers", ic)
        assert meta_dir_id(q.nodes[i]) == ids[i]
    for i in (1, 2, 3):
        q.start(i)
    leader = q.wait_leader(T(15), [1, 2, 3])
    voters, _, _ = q.voters(leader)
    assert {k: uuid_text(v) for k, v in voters.items()} == ids, voters


def mq(bootstrap, *args, check=True):
    """kafka-metadata-quorum --bootstrap-controller bootstrap ARGS."""
    return kafka_tool("metadata-quorum", "--bootstrap-controller", bootstrap, *args,
                      check=check, timeout=T(60))


def replication(bootstrap):
    """describe --replication: {node id: (directory id, status)}."""
    out = mq(bootstrap, "describe", "--replication").out
    rows = {}
    for line in out.splitlines()[1:]:
        f = line.split()
        if len(f) >= 7 and f[0].isdigit():
            rows[int(f[0])] = (f[1], f[-1])
    return rows


def wait_rows(bootstrap, want_ids, timeout):
    deadline = time.monotonic() + timeout
    rows = None
    while time.monotonic() < deadline:
        rows = replication(bootstrap)
        voters = {i for i, (_, st) in rows.items() if st in ("Leader", "Follower")}
        if voters == want_ids:
            return rows
        time.sleep(0.2)
    raise AssertionError("voters are not %s within %.1f s: %s" % (want_ids, timeout, rows))


def test_add_and_remove_controllers(samsa):
    q = DynamicQuorum(samsa, 3)
    q.format(1, "--standalone")
    q.format(2, "--no-initial-controllers")
    q.format(3, "--no-initial-controllers")
    for i in (1, 2, 3):
        q.start(i)
    assert q.wait_leader(T(15), [1]) == 1
    bc1 = "%s:%d" % (HOST, q.ports[1])

    # the APIs are listed on the CONTROLLER listener (and not on a single
    # node's broker listener, below)
    with q.nodes[1].connect(controller=True) as c:
        keys = c.api_versions(version=3)["api_keys"]
    assert keys[API_ADD_RAFT_VOTER] == (0, 1) and keys[API_REMOVE_RAFT_VOTER] == (0, 0), keys

    st = mq(bc1, "describe", "--status").out
    assert "LeaderId:               1" in st and '"id": 1' in st, st

    # add-controller, as Kafka's docs do it: the new controller's own
    # properties (node.id, listeners, log dirs for its directory id)
    t0 = time.monotonic()
    for i in (2, 3):
        cfg = os.path.join(q.nodes[i].workdir, "controller.properties")
        with open(cfg, "w") as f:
            for k, v in q.nodes[i].overrides.items():
                f.write("%s=%s\n" % (k, v))
        q.nodes[i].props = cfg
        out = mq(bc1, "--command-config", cfg, "add-controller").out
        assert "Added controller %d with directory id %s" % (i, meta_dir_id(q.nodes[i])) \
            in out, out
    rows = wait_rows(bc1, {1, 2, 3}, T(15))
    print("two controllers added and all 3 voters listed %.2f s after the first "
          "add-controller" % (time.monotonic() - t0))
    assert {i: d for i, (d, _) in rows.items()} == \
        {i: meta_dir_id(q.nodes[i]) for i in (1, 2, 3)}, rows
    voters, nodes, _ = q.voters(1)
    assert set(voters) == {1, 2, 3} and {n: l[0]["port"] for n, l in nodes.items()} == q.ports

    # errors: a duplicate, an unknown voter, another directory id
    r = mq(bc1, "--command-config", q.nodes[2].props, "add-controller", check=False)
    assert r.rc != 0 and "DuplicateVoterException" in r.err + r.out, r
    r = mq(bc1, "remove-controller", "--controller-id", "9",
           "--controller-directory-id", meta_dir_id(q.nodes[2]), check=False)
    assert r.rc != 0 and "VoterNotFoundException" in r.err + r.out, r
    r = mq(bc1, "remove-controller", "--controller-id", "2",
           "--controller-directory-id", meta_dir_id(q.nodes[3]), check=False)
    assert r.rc != 0 and "VoterNotFoundException" in r.err + r.out, r
    assert set(q.voters(1)[0]) == {1, 2, 3}

    # kill -9 of the active controller: a new leader among 2 and 3
    q.nodes[1].srv.proc.kill()
    q.nodes[1].srv.proc.wait(timeout=T(10))
    q.nodes[1].srv.stopped = True
    t0 = time.monotonic()
    leader = q.wait_leader(T(10), [2, 3], exclude=(1,))
    print("kill -9 of active controller 1: controller %d leads after %.2f s"
          % (leader, time.monotonic() - t0))

    # remove the dead voter: 2 voters, and the quorum still commits
    bc = "%s:%d" % (HOST, q.ports[leader])
    out = mq(bc, "remove-controller", "--controller-id", "1",
             "--controller-directory-id", meta_dir_id(q.nodes[1])).out
    assert "Removed KRaft controller 1 with directory id %s" % meta_dir_id(q.nodes[1]) in out, out
    wait_rows(bc, {2, 3}, T(10))
    _, _, p = q.voters(leader)
    hw = p["high_watermark"]
    with q.nodes[leader].connect(controller=True) as c:
        r = c.create_topic("after-remove", num_partitions=1, timeout=T(10))
    assert r["error_code"] == 0, r
    deadline = time.monotonic() + T(10)
    while time.monotonic() < deadline:
        voters, _, p = q.voters(leader)
        if p["high_watermark"] > hw and all(v["log_end_offset"] == p["high_watermark"]
                                            for v in p["current_voters"]):
            break
        time.sleep(0.05)
    assert set(voters) == {2, 3} and p["high_watermark"] > hw, p
    assert all(v["log_end_offset"] == p["high_watermark"] for v in p["current_voters"]), p


def test_voter_apis_not_on_broker_listener(samsa):
    srv = samsa.start()
    with srv.connect() as c:
        keys = c.api_versions(version=3)["api_keys"]
    assert API_ADD_RAFT_VOTER not in keys and API_REMOVE_RAFT_VOTER not in keys, keys

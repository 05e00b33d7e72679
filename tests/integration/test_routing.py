"""Brokers in the metadata image and clients routed by it (issue 18), end
to end in one process: the server registers itself in its metadata log
at start; a second node's registration and a partition led by it are
planted in the stopped server's __cluster_metadata-0 as a quorum would
replicate them (real metadata records, framed as Kafka frames them, in a
record batch after the last one), and the restarted server, replaying
the log, must list that node and route clients to it: Metadata and
DescribeCluster list the unfenced brokers with the request's listener;
Produce, Fetch and ListOffsets answer NOT_LEADER_OR_FOLLOWER for the
partition led elsewhere, with KIP-951's CurrentLeader and NodeEndpoints
(Produce v10+, Fetch v16+)."""

import glob
import os
import struct

import kwire
from samsa_harness import T

ERR_NOT_LEADER_OR_FOLLOWER = 6
ERR_LISTENER_NOT_FOUND = 72

TOPIC = "routed"
OTHER = 2               # the planted node, leading partition 1
FENCED = 3              # registered, never unfenced
ELSEWHERE = 4           # unfenced, but only on another listener
OTHER_HOST, OTHER_PORT = "10.9.8.7", 19092


# ---- metadata records (Kafka's metadata/*.json), flexible from v0 ----------

def _framed(rtype, version, body):
    """AbstractApiMessageSerde framing: frame version 1, type, version."""
    return bytes([1, rtype, version]) + body


def _endpoint(ww, ep):
    name, host, port, proto = ep
    ww.string(name, flexible=True).string(host, flexible=True)
    ww.raw(struct.pack(">Hh", port, proto))
    ww.tags()


def register_broker(broker_id, epoch, endpoints, fenced):
    """RegisterBrokerRecord v1 (type 0)."""
    w = kwire.Writer().i32(broker_id).uuid(bytes([0x40] + [0] * 14 + [broker_id]))
    w.i64(epoch)
    w.array(endpoints, _endpoint, flexible=True)
    w.array([], lambda ww, f: None, flexible=True)     # Features
    w.uvarint(0)                                        # Rack: null
    w.boolean(fenced).boolean(False)                    # Fenced, InControlledShutdown
    w.tags()
    return _framed(0, 1, w.bytes())


def unfence_broker(broker_id, epoch):
    """UnfenceBrokerRecord v0 (type 8)."""
    return _framed(8, 0, kwire.Writer().i32(broker_id).i64(epoch).tags().bytes())


def partition_change(topic_id, partition, leader, replicas):
    """PartitionChangeRecord v0 (type 5): Isr (tag 0), Leader (tag 1) and
    Replicas (tag 2) changed."""
    def ints(xs):
        w = kwire.Writer().uvarint(len(xs) + 1)
        for x in xs:
            w.i32(x)
        return w.bytes()
    w = kwire.Writer().i32(partition).uuid(topic_id)
    w.tags({0: ints(replicas), 1: struct.pack(">i", leader), 2: ints(replicas)})
    return _framed(5, 0, w.bytes())


def plant(data_dir, records):
    """Append records as one batch after the metadata log's last one."""
    logs = sorted(glob.glob(os.path.join(data_dir, "__cluster_metadata-0", "*.log")))
    assert logs, "no metadata log in %s" % data_dir
    with open(logs[-1], "rb") as f:
        batches = kwire.decode_batches(f.read(), decode=False)[0]
    last = batches[-1]
    next_offset = last["base_offset"] + last["last_offset_delta"] + 1
    batch = kwire.encode_batch([kwire.Record(v) for v in records],
                               base_offset=next_offset)
    with open(logs[-1], "ab") as f:
        f.write(batch)
        f.flush()
        os.fsync(f.fileno())
    return next_offset


# ---- the cluster ------------------------------------------------------------

def _started(samsa):
    """A server with TOPIC (4 partitions, all its own), stopped; then its
    log gets OTHER leading partition 1, nobody partition 2 (a replica on
    the fenced broker) and ELSEWHERE partition 3, and it is started again.
    Returns (server, own node id, topic id)."""
    srv = samsa.start(overrides={"num.partitions": "4"})
    with srv.connect() as c:
        md = c.metadata(12, topics=[TOPIC], allow_auto_topic_creation=True)
    assert [b["node_id"] for b in md["brokers"]] and len(md["brokers"]) == 1, md
    self_id = md["brokers"][0]["node_id"]
    t = md["topics"][0]
    assert t["error_code"] == 0 and len(t["partitions"]) == 4, md
    assert all(p["leader_id"] == self_id for p in t["partitions"]), md
    topic_id = t["topic_id"]
    problems = srv.stop()
    assert not problems, problems
    at = plant(srv.data_dir, [
        register_broker(OTHER, 1000, [("PLAINTEXT", OTHER_HOST, OTHER_PORT, 0)], True),
        unfence_broker(OTHER, 1000),
        register_broker(FENCED, 1002, [("PLAINTEXT", "10.9.8.6", 19093, 0)], True),
        register_broker(ELSEWHERE, 1003, [("INTERNAL", "10.9.8.5", 19094, 0)], False),
        partition_change(topic_id, 1, OTHER, [OTHER, self_id]),
        partition_change(topic_id, 2, -1, [self_id, FENCED]),
        partition_change(topic_id, 3, ELSEWHERE, [ELSEWHERE, self_id]),
    ])
    assert at <= 1000, "the planted epochs must not be offsets yet: %d" % at
    srv = samsa.start(workdir=srv.workdir, overrides=dict(srv.overrides),
                      use_ports=False, ports=(srv.port, srv.controller_port))
    return srv, self_id, topic_id


def _parse_leader(raw):
    r = kwire.Reader(raw)
    leader = (r.i32(), r.i32())
    r.tags()
    return leader


def _parse_endpoints(raw):
    def ep(rr):
        e = (rr.i32(), rr.string(flexible=True), rr.i32(),
             rr.string(flexible=True, nullable=True))
        rr.tags()
        return e
    return kwire.Reader(raw).array(ep, flexible=True)


def test_routing_by_the_image(samsa):
    srv, self_id, topic_id = _started(samsa)
    with srv.connect() as c:
        # Metadata: this node and OTHER (not the fenced one, not the one
        # without the PLAINTEXT listener); the leaders from the image
        for version in (1, 5, 12):
            md = c.metadata(version, topics=[TOPIC], allow_auto_topic_creation=False)
            ids = [b["node_id"] for b in md["brokers"]]
            assert ids == sorted([self_id, OTHER]), (version, md["brokers"])
            other = [b for b in md["brokers"] if b["node_id"] == OTHER][0]
            assert (other["host"], other["port"]) == (OTHER_HOST, OTHER_PORT)
            parts = {p["partition_index"]: p for p in md["topics"][0]["partitions"]}
            assert parts[0]["error_code"] == 0 and parts[0]["leader_id"] == self_id
            assert parts[1]["error_code"] == 0 and parts[1]["leader_id"] == OTHER
            assert parts[1]["replica_nodes"] == [OTHER, self_id]
            assert parts[2]["error_code"] == kwire.ERR_LEADER_NOT_AVAILABLE, parts[2]
            assert parts[2]["leader_id"] == -1
            # a leader without this listener: LISTENER_NOT_FOUND from v6
            assert parts[3]["error_code"] == (ERR_LISTENER_NOT_FOUND if version >= 6
                                              else kwire.ERR_LEADER_NOT_AVAILABLE), parts[3]
            assert parts[3]["leader_id"] == -1
            if version >= 5:
                assert parts[0]["offline_replicas"] == [] and parts[1]["offline_replicas"] == []
                assert parts[2]["offline_replicas"] == [FENCED], parts[2]
                assert parts[3]["offline_replicas"] == [ELSEWHERE], parts[3]
        epoch1 = parts[1]["leader_epoch"]
        epoch2 = parts[2]["leader_epoch"]

        dc = c.describe_cluster(0)
        assert sorted(b["broker_id"] for b in dc["brokers"]) == sorted([self_id, OTHER]), dc

        batch = kwire.encode_batch([kwire.Record(b"v")])
        # Produce v11: partition 0 appends; 1 and 2 are led elsewhere / not
        # at all, with the current leader and OTHER's endpoint (KIP-951)
        for version in (9, 11):
            body = kwire.encode_produce_request(
                version, [(TOPIC, [(0, batch), (1, batch), (2, batch), (3, batch)])])
            r = c.request(kwire.API_PRODUCE, version, body, T(10))
            parts = {p["partition"]: p for p in r["topics"][0]["partitions"]}
            assert parts[0]["error_code"] == 0, parts
            assert parts[1]["error_code"] == ERR_NOT_LEADER_OR_FOLLOWER, parts
            assert parts[2]["error_code"] == ERR_NOT_LEADER_OR_FOLLOWER, parts
            assert parts[3]["error_code"] == ERR_NOT_LEADER_OR_FOLLOWER, parts
            if version < 10:
                assert parts[1]["tags"] == {} and r["tags"] == {}, r
                continue
            assert _parse_leader(parts[1]["tags"][0]) == (OTHER, epoch1)
            assert _parse_leader(parts[2]["tags"][0]) == (-1, epoch2)
            assert 0 not in parts[0]["tags"]
            # ELSEWHERE leads 3 but has no PLAINTEXT endpoint to name
            assert _parse_leader(parts[3]["tags"][0])[0] == ELSEWHERE
            assert _parse_endpoints(r["tags"][0]) == [(OTHER, OTHER_HOST, OTHER_PORT, None)]

        # Fetch v16 by topic id: the same hint (CurrentLeader is tag 1)
        body = kwire.encode_fetch_request(
            16, [(topic_id, [(0, 0, 1 << 20), (1, 0, 1 << 20)])], max_wait_ms=0)
        r = c.request(kwire.API_FETCH, 16, body, T(10))
        parts = {p["partition"]: p for p in r["topics"][0]["partitions"]}
        assert parts[0]["error_code"] == 0 and parts[0]["records"], parts
        assert parts[1]["error_code"] == ERR_NOT_LEADER_OR_FOLLOWER, parts
        assert _parse_leader(parts[1]["tags"][1]) == (OTHER, epoch1)
        assert _parse_endpoints(r["tags"][0]) == [(OTHER, OTHER_HOST, OTHER_PORT, None)]

        # ListOffsets: only the leader answers
        body = kwire.encode_list_offsets_request(7, [(TOPIC, [(0, -1), (1, -1)])])
        r = c.request(kwire.API_LIST_OFFSETS, 7, body, T(10))
        parts = {p["partition"]: p for p in r["topics"][0]["partitions"]}
        assert parts[0]["error_code"] == 0 and parts[0]["offset"] == 2, parts
        assert parts[1]["error_code"] == ERR_NOT_LEADER_OR_FOLLOWER, parts


def test_routing_self_registration_survives_restarts(samsa):
    """Each start registers the node again (a new broker epoch); the log
    replays with every earlier registration, and Metadata keeps listing
    the node at its bound port."""
    srv = samsa.start()
    for _ in range(2):
        with srv.connect() as c:
            md = c.metadata(12, topics=None)
        assert [b["port"] for b in md["brokers"]] == [srv.port], md
        srv = samsa.restart(srv)
    assert "registered" in srv.stderr_text()


def test_single_node_broker_rack(samsa):
    """broker.rack on a single node: its self-registration carries it, so
    Metadata and DescribeCluster list it; a restart without it clears it."""
    srv = samsa.start({"broker.rack": "use1-az1"})
    with srv.connect() as c:
        assert [b["rack"] for b in c.metadata(12, topics=None)["brokers"]] == ["use1-az1"]
        assert [b["rack"] for b in c.describe_cluster(version=0)["brokers"]] == ["use1-az1"]
    srv.overrides.pop("broker.rack")
    srv = samsa.restart(srv)
    with srv.connect() as c:
        assert [b["rack"] for b in c.metadata(12, topics=None)["brokers"]] == [None]


def test_offset_for_leader_epoch(samsa):
    """OffsetForLeaderEpoch v2-v4 (Kafka's Partition.lastOffsetForLeaderEpoch
    and LeaderEpochFileCache.endOffsetFor): records at epoch 0, then a
    planted leader change of partition 0 to this node again (epoch 1) and
    partition 1 led by OTHER; records at epoch 1."""
    srv = samsa.start(overrides={"num.partitions": "2"})
    with srv.connect() as c:
        md = c.metadata(12, topics=[TOPIC], allow_auto_topic_creation=True)
        self_id = md["brokers"][0]["node_id"]
        topic_id = md["topics"][0]["topic_id"]
        c.wait_topic(TOPIC, timeout=T(10))
        for i in range(2):
            assert c.produce(TOPIC, 0, kwire.encode_batch([kwire.Record(b"e0")]))["error_code"] == 0
        e = c.offset_for_leader_epoch([(TOPIC, [(0, 0, 0)])])[(TOPIC, 0)]
        assert (e["error_code"], e["leader_epoch"], e["end_offset"]) == (0, 0, 2), e
    assert not srv.stop()
    plant(srv.data_dir, [
        register_broker(OTHER, 1000, [("PLAINTEXT", OTHER_HOST, OTHER_PORT, 0)], True),
        unfence_broker(OTHER, 1000),
        partition_change(topic_id, 0, self_id, [self_id]),
        partition_change(topic_id, 1, OTHER, [OTHER, self_id]),
    ])
    srv = samsa.start(workdir=srv.workdir, overrides=dict(srv.overrides),
                      use_ports=False, ports=(srv.port, srv.controller_port))
    with srv.connect() as c:
        md = c.metadata(12, topics=[TOPIC], allow_auto_topic_creation=False)
        parts = {p["partition_index"]: p for p in md["topics"][0]["partitions"]}
        assert parts[0]["leader_id"] == self_id and parts[0]["leader_epoch"] == 1, parts

        def ask(version, *rows, replica_id=-1):
            got = c.offset_for_leader_epoch([(TOPIC, list(rows))], version, replica_id)
            return [(got[(TOPIC, r[0])]["error_code"], got[(TOPIC, r[0])]["leader_epoch"],
                     got[(TOPIC, r[0])]["end_offset"]) for r in rows]

        # epoch 1 leads and wrote nothing yet: it starts at the LEO (Kafka
        # assigns it on becoming leader)
        assert ask(4, (0, 1, 1)) == [(0, 1, 2)]
        for i in range(3):
            assert c.produce(TOPIC, 0, kwire.encode_batch([kwire.Record(b"e1")]))["error_code"] == 0
        for version in (2, 3, 4):
            for replica_id in (-1, -2):
                # (partition, CurrentLeaderEpoch, LeaderEpoch)
                assert ask(version, (0, 1, 0), replica_id=replica_id) == [(0, 0, 2)], version
                assert ask(version, (0, -1, 1), replica_id=replica_id) == [(0, 1, 5)], version
                assert ask(version, (0, 1, 7), replica_id=replica_id) == [(0, -1, -1)], version
                assert ask(version, (0, -1, -1), replica_id=replica_id) == [(0, -1, -1)], version
            assert ask(version, (0, 0, 1)) == [(kwire.ERR_FENCED_LEADER_EPOCH, -1, -1)]
            assert ask(version, (0, 2, 1)) == [(kwire.ERR_UNKNOWN_LEADER_EPOCH, -1, -1)]
            assert ask(version, (1, -1, 0)) == [(ERR_NOT_LEADER_OR_FOLLOWER, -1, -1)]
            assert ask(version, (9, -1, 0)) == [(kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION, -1, -1)]
            got = c.offset_for_leader_epoch([("no-such-topic", [(0, -1, 0)])], version)
            e = got[("no-such-topic", 0)]
            assert (e["error_code"], e["end_offset"]) == (kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION, -1)
        # the log starts past epoch 0: an older epoch than any known gets
        # the first known one's start (Kafka's floorEntry == null case)
        assert c.delete_records(TOPIC, 0, 3)["error_code"] == 0
        assert ask(4, (0, 1, 0)) == [(0, 0, 3)]
        assert ask(4, (0, 1, 1)) == [(0, 1, 5)]
        keys = c.api_versions(3)["api_keys"]
        assert keys[kwire.API_OFFSET_FOR_LEADER_EPOCH] == (2, 4), keys.get(23)


ERR_PREFERRED_LEADER_NOT_AVAILABLE = 80
ERR_ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
ERR_ELECTION_NOT_NEEDED = 84


def test_elect_leaders_and_reassignments(samsa):
    """ElectLeaders v0-v2 run by the controller as Kafka's
    (ReplicationControlManager.electLeaders): partitions 0 (this node),
    1 (OTHER, its first replica) and 3 (ELSEWHERE, first) have their
    preferred leader: ELECTION_NOT_NEEDED; 2 has no leader and its first
    replica (this node) is in its ISR and active: the first preferred
    election makes it the leader (error NONE, a new leader epoch), after
    which every election is ELECTION_NOT_NEEDED, unclean ones too.
    ListPartitionReassignments v0: nothing in progress, ever."""
    srv, self_id, topic_id = _started(samsa)
    with srv.connect() as c:
        keys = c.api_versions(3)["api_keys"]
        assert keys[kwire.API_ELECT_LEADERS] == (0, 2), keys.get(43)
        assert keys[kwire.API_LIST_PARTITION_REASSIGNMENTS] == (0, 0), keys.get(46)

        def elect(version, topics, election_type=0):
            body = kwire.encode_elect_leaders_request(version, topics, election_type)
            r = c.request(kwire.API_ELECT_LEADERS, version, body, T(10))
            assert r["error_code"] == 0, r
            return {t["topic"]: [(p["partition"], p["error_code"], p["error_message"])
                                 for p in t["partitions"]] for t in r["results"]}

        def leader_epoch(partition):
            md = c.metadata(12, topics=[TOPIC], allow_auto_topic_creation=False)
            p = [p for p in md["topics"][0]["partitions"]
                 if p["partition_index"] == partition][0]
            return p["leader_id"], p["leader_epoch"]

        not_needed = "Leader election not needed for topic partition"
        before = leader_epoch(2)
        assert before[0] == -1, before
        got = elect(0, [(TOPIC, [0, 1, 2, 3, 9]), ("no-such", [0])])
        assert [x[:2] for x in got[TOPIC]] == [
            (0, ERR_ELECTION_NOT_NEEDED), (1, ERR_ELECTION_NOT_NEEDED),
            (2, 0), (3, ERR_ELECTION_NOT_NEEDED),
            (9, kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION)], got
        assert got[TOPIC][2][2] is None, got
        after = leader_epoch(2)
        assert after == (self_id, before[1] + 1), (before, after)
        for version in (0, 1, 2):
            got = elect(version, [(TOPIC, [0, 1, 2, 3, 9]), ("no-such", [0])])
            assert [x[:2] for x in got[TOPIC]] == [
                (0, ERR_ELECTION_NOT_NEEDED), (1, ERR_ELECTION_NOT_NEEDED),
                (2, ERR_ELECTION_NOT_NEEDED), (3, ERR_ELECTION_NOT_NEEDED),
                (9, kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION)], (version, got)
            assert got[TOPIC][0][2].startswith(not_needed), got
            assert got[TOPIC][4][2] == "No such partition as %s-9" % TOPIC, got
            assert got["no-such"] == [(0, kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION,
                                       "No such topic as no-such")], got
            # null: every topic, only the partitions whose election was needed
            got = elect(version, None)
            assert all(v == [] for v in got.values()), got
        for version in (1, 2):                      # unclean (KIP-460)
            got = elect(version, [(TOPIC, [0, 1, 2])], election_type=1)
            assert [x[:2] for x in got[TOPIC]] == [
                (0, ERR_ELECTION_NOT_NEEDED), (1, ERR_ELECTION_NOT_NEEDED),
                (2, ERR_ELECTION_NOT_NEEDED)], got
        assert leader_epoch(2) == after

        for topics in (None, [(TOPIC, [0, 1, 2, 3, 9]), ("no-such", [0])]):
            body = kwire.encode_list_partition_reassignments_request(0, topics)
            r = c.request(kwire.API_LIST_PARTITION_REASSIGNMENTS, 0, body, T(10))
            assert (r["error_code"], r["error_message"], r["topics"]) == (0, None, []), r

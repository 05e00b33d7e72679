"""The group coordinator over the raw protocol (kwire): FindCoordinator
(group, transaction, batched v4), the KIP-394 join handshake, generation
and member fencing errors, INCONSISTENT_GROUP_PROTOCOL, session expiry,
LeaveGroup by instance id, OffsetCommit/OffsetFetch (v1 simple commits as
Sarama sends them, v8 multi-group fetch), OffsetDelete, ListGroups with a
state filter, malformed bodies (the connection closes, the server stays
up), and __consumer_offsets created with offsets.topic.num.partitions.
"""

import time

import pytest

import kwire
from kwire import Writer
from samsa_harness import T

FIND_COORDINATOR, JOIN, HEARTBEAT, LEAVE, SYNC = 10, 11, 12, 13, 14
OFFSET_COMMIT, OFFSET_FETCH, DESCRIBE_GROUPS, LIST_GROUPS = 8, 9, 15, 16
DELETE_GROUPS, OFFSET_DELETE = 42, 47
kwire.FLEXIBLE_FROM.update({FIND_COORDINATOR: 3, JOIN: 6, HEARTBEAT: 4, LEAVE: 4,
                            SYNC: 4, OFFSET_COMMIT: 8, OFFSET_FETCH: 6,
                            DESCRIBE_GROUPS: 5, LIST_GROUPS: 3, DELETE_GROUPS: 2})

E_NONE, E_COORD_NA, E_ILLEGAL_GEN, E_INCONSISTENT = 0, 15, 22, 23
E_UNKNOWN_MEMBER, E_INVALID_SESSION, E_REBALANCING = 25, 26, 27
E_INVALID_GROUP, E_UNKNOWN_TP, E_NOT_FOUND, E_MEMBER_ID_REQUIRED = 24, 3, 69, 79
E_FENCED, E_SUBSCRIBED = 82, 86

OVERRIDES = {"group.initial.rebalance.delay.ms": "0",
             "group.min.session.timeout.ms": "500",
             "offsets.topic.num.partitions": "7"}


def call(conn, key, version, body):
    return conn.request_raw(key, version, body, T(10))


def consumer_meta(topics):
    w = Writer().i16(0).array(topics, lambda ww, t: ww.string(t)).blob(b"")
    return w.bytes()


def join(conn, group, member="", protos=(("range", None),), ptype="consumer",
         session=10000, version=5, instance=None, rebalance=10000):
    w = Writer().string(group).i32(session).i32(rebalance).string(member)
    if version >= 5:
        w.string(instance)
    w.string(ptype)
    w.array(protos, lambda ww, p: ww.string(p[0]).blob(
        p[1] if p[1] is not None else consumer_meta(["t"])))
    r = call(conn, JOIN, version, w.bytes())
    out = {"throttle": r.i32(), "error": r.i16(), "generation": r.i32(),
           "protocol": r.string(nullable=True), "leader": r.string(),
           "member": r.string()}
    out["members"] = r.array(lambda rr: (rr.string(), rr.string(nullable=True)
                                         if version >= 5 else None, rr.blob()))
    return out


def sync(conn, group, gen, member, assignments=(), version=3):
    w = Writer().string(group).i32(gen).string(member).string(None)
    w.array(assignments, lambda ww, a: ww.string(a[0]).blob(a[1]))
    r = call(conn, SYNC, version, w.bytes())
    return {"throttle": r.i32(), "error": r.i16(), "assignment": r.blob()}


def heartbeat(conn, group, gen, member, instance=None):
    r = call(conn, HEARTBEAT, 3, Writer().string(group).i32(gen).string(member)
             .string(instance).bytes())
    r.i32()
    return r.i16()


def commit(conn, group, gen, member, offsets, version=7):
    """offsets: {(topic, partition): offset}"""
    w = Writer().string(group)
    if version >= 1:
        w.i32(gen).string(member)
    if version >= 7:
        w.string(None)
    if 2 <= version <= 4:
        w.i64(-1)
    topics = {}
    for (t, p), o in offsets.items():
        topics.setdefault(t, []).append((p, o))

    def part(ww, po):
        ww.i32(po[0]).i64(po[1])
        if version >= 6:
            ww.i32(-1)
        if version == 1:
            ww.i64(-1)
        ww.string("")
    w.array(sorted(topics.items()),
            lambda ww, t: ww.string(t[0]).array(t[1], part))
    r = call(conn, OFFSET_COMMIT, version, w.bytes())
    if version >= 3:
        r.i32()
    out = {}
    for t, parts in r.array(lambda rr: (rr.string(), rr.array(
            lambda r2: (r2.i32(), r2.i16())))):
        for p, e in parts:
            out[(t, p)] = e
    return out


def fetch_offsets(conn, group, topics=None, version=5):
    w = Writer().string(group)
    w.array(topics, lambda ww, t: ww.string(t[0]).array(t[1], lambda w2, p: w2.i32(p)))
    if version >= 7:
        w.boolean(False)
    r = call(conn, OFFSET_FETCH, version, w.bytes())
    if version >= 3:
        r.i32()
    out = {}

    def part(rr):
        p, o = rr.i32(), rr.i64()
        if version >= 5:
            rr.i32()
        rr.string(nullable=True)
        return p, o, rr.i16()
    for t, parts in r.array(lambda rr: (rr.string(), rr.array(part))):
        for p, o, e in parts:
            out[(t, p)] = (o, e)
    err = r.i16() if version >= 2 else 0
    return err, out


def describe(conn, group):
    r = call(conn, DESCRIBE_GROUPS, 4, Writer().array([group], lambda w, g: w.string(g))
             .boolean(False).bytes())
    r.i32()

    def member(rr):
        return {"id": rr.string(), "instance": rr.string(nullable=True),
                "client": rr.string(), "host": rr.string(), "meta": rr.blob(),
                "assignment": rr.blob()}
    g = r.array(lambda rr: {"error": rr.i16(), "id": rr.string(), "state": rr.string(),
                            "ptype": rr.string(), "protocol": rr.string(),
                            "members": rr.array(member), "ops": rr.i32()})[0]
    return g


def create_topic(conn, name, parts=3):
    r = call(conn, 19, 4, Writer().array([name], lambda w, t: w.string(t).i32(parts)
             .i16(1).array([], None).array([], None)).i32(10000).boolean(False).bytes())
    r.i32()
    res = r.array(lambda rr: (rr.string(), rr.i16(), rr.string(nullable=True)))
    assert res[0][1] == 0, res


@pytest.fixture
def srv(samsa):
    return samsa.start(overrides=OVERRIDES)


def stable_member(conn, group, instance=None):
    """A one-member group: (member id, generation)."""
    j = join(conn, group, instance=instance, version=5 if instance else 4)
    if j["error"] == E_MEMBER_ID_REQUIRED:
        j = join(conn, group, member=j["member"], version=4)
    assert j["error"] == E_NONE, j
    assert j["leader"] == j["member"] and len(j["members"]) == 1
    s = sync(conn, group, j["generation"], j["member"], [(j["member"], b"A1")])
    assert s["error"] == E_NONE and s["assignment"] == b"A1"
    return j["member"], j["generation"]


def test_find_coordinator_creates_offsets_topic(srv):
    with srv.connect() as conn:
        for v in (0, 1, 2):
            w = Writer().string("g1")
            if v >= 1:
                w.i8(0)
            r = call(conn, FIND_COORDINATOR, v, w.bytes())
            if v >= 1:
                r.i32()
            err = r.i16()
            if v >= 1:
                r.string(nullable=True)
            assert err == E_NONE
            assert (r.i32(), r.string(), r.i32()) == (1, "127.0.0.1", srv.port)
        # the transaction coordinator is this node too (test_txn.py)
        r = call(conn, FIND_COORDINATOR, 1, Writer().string("txn").i8(1).bytes())
        r.i32()
        assert r.i16() == E_NONE
        r.string(nullable=True)
        assert (r.i32(), r.string(), r.i32()) == (1, "127.0.0.1", srv.port)
        # v4: a batch of keys
        w = Writer().i8(0).array(["a", "b"], lambda ww, k: ww.string(k, True), True).tags()
        r = call(conn, FIND_COORDINATOR, 4, w.bytes())
        r.i32()
        cs = r.array(lambda rr: (rr.string(flexible=True), rr.i32(),
                                 rr.string(flexible=True), rr.i32(), rr.i16(),
                                 rr.string(flexible=True, nullable=True), rr.tags()),
                     flexible=True)
        assert [(c[0], c[1], c[3], c[4]) for c in cs] == \
            [("a", 1, srv.port, 0), ("b", 1, srv.port, 0)]
        md = conn.metadata(version=1, topics=["__consumer_offsets"])
        assert len(md["topics"][0]["partitions"]) == 7
        assert md["topics"][0]["is_internal"]


def test_join_member_id_required_and_fencing(srv):
    with srv.connect() as conn:
        j = join(conn, "g", version=4)
        assert j["error"] == E_MEMBER_ID_REQUIRED and j["member"].startswith("kwire-")
        member = j["member"]
        j = join(conn, "g", member=member, version=4)
        assert j["error"] == E_NONE and j["generation"] == 1
        assert j["leader"] == member and j["protocol"] == "range"
        assert heartbeat(conn, "g", 1, member) == E_NONE   # CompletingRebalance
        s = sync(conn, "g", 1, member, [(member, b"x")])
        assert s == {"throttle": 0, "error": E_NONE, "assignment": b"x"}
        assert heartbeat(conn, "g", 1, member) == E_NONE
        assert heartbeat(conn, "g", 0, member) == E_ILLEGAL_GEN
        assert heartbeat(conn, "g", 1, "nobody") == E_UNKNOWN_MEMBER
        assert heartbeat(conn, "no-such-group", 1, member) == E_UNKNOWN_MEMBER
        assert sync(conn, "g", 2, member)["error"] == E_ILLEGAL_GEN
        # a join with another protocol type, or none of the group's protocols
        j = join(conn, "g", ptype="connect", version=4)
        assert j["error"] == E_INCONSISTENT
        j = join(conn, "g", protos=(("roundrobin", None),), version=4)
        assert j["error"] == E_INCONSISTENT
        j = join(conn, "g2", protos=(), version=4)
        assert j["error"] == E_INCONSISTENT
        j = join(conn, "g", session=10, version=4)
        assert j["error"] == E_INVALID_SESSION
        j = join(conn, "", version=4)
        assert j["error"] == E_INVALID_GROUP
        # offset commits: unknown member, stale generation, the right one
        create_topic(conn, "t")
        assert commit(conn, "g", 1, "nobody", {("t", 0): 5}) == {("t", 0): E_UNKNOWN_MEMBER}
        assert commit(conn, "g", 0, member, {("t", 0): 5}) == {("t", 0): E_ILLEGAL_GEN}
        assert commit(conn, "g", 1, member, {("t", 0): 5, ("t", 9): 1,
                                             ("nope", 0): 1}) == \
            {("t", 0): E_NONE, ("t", 9): E_UNKNOWN_TP, ("nope", 0): E_UNKNOWN_TP}
        assert commit(conn, "no-group", 3, "m", {("t", 0): 5}) == {("t", 0): E_ILLEGAL_GEN}
        err, offs = fetch_offsets(conn, "g", [("t", [0, 1])])
        assert err == 0 and offs == {("t", 0): (5, 0), ("t", 1): (-1, 0)}
        d = describe(conn, "g")
        assert d["state"] == "Stable" and d["protocol"] == "range"
        assert d["members"][0]["id"] == member and d["members"][0]["assignment"] == b"x"
        assert d["members"][0]["host"] == "/127.0.0.1"
        assert describe(conn, "unknown")["state"] == "Dead"
    # the server is still up and answering
    with srv.connect() as conn:
        conn.metadata(version=1)


def test_rebalance_second_member_and_leave(srv):
    with srv.connect() as a, srv.connect() as b:
        m1, gen = stable_member(a, "rg")
        # m2 joins: m1's heartbeat learns of the rebalance; both rejoin
        j2 = join(b, "rg", version=4)
        m2 = j2["member"]
        b.send(kwire.encode_request(JOIN, 4, 99, Writer().string("rg").i32(10000)
                                    .i32(10000).string(m2).string("consumer")
                                    .array([("range", consumer_meta(["t"]))],
                                           lambda w, p: w.string(p[0]).blob(p[1]))
                                    .bytes(), b.client_id), T(5))
        deadline = time.time() + T(10)
        while heartbeat(a, "rg", gen, m1) != E_REBALANCING:
            assert time.time() < deadline
        j1 = join(a, "rg", member=m1, version=4)
        assert j1["error"] == E_NONE and j1["generation"] == gen + 1
        assert {m for m, _, _ in j1["members"]} == {m1, m2}
        payload = b.recv_frame(T(10))
        _, r = kwire.decode_response_header(payload, JOIN, 4)
        r.i32()
        assert r.i16() == E_NONE and r.i32() == gen + 1
        assert heartbeat(a, "rg", gen, m1) == E_ILLEGAL_GEN
        # a commit while the leader has not synced yet
        assert commit(a, "rg", gen + 1, m1, {}) == {}
        s1 = sync(a, "rg", gen + 1, m1, [(m1, b"p0"), (m2, b"p1")])
        assert s1["assignment"] == b"p0"
        assert sync(b, "rg", gen + 1, m2)["assignment"] == b"p1"
        # LeaveGroup v3 batch: one known, one unknown
        w = Writer().string("rg").array([(m2, None), ("ghost", None)],
                                        lambda ww, m: ww.string(m[0]).string(m[1]))
        r = call(b, LEAVE, 3, w.bytes())
        r.i32()
        assert r.i16() == E_NONE
        assert r.array(lambda rr: (rr.string(), rr.string(nullable=True), rr.i16())) == \
            [(m2, None, E_NONE), ("ghost", None, E_UNKNOWN_MEMBER)]
        assert heartbeat(a, "rg", gen + 1, m1) == E_REBALANCING


def test_static_member_fencing_and_leave_by_instance(srv):
    with srv.connect() as a, srv.connect() as b:
        m1, gen = stable_member(a, "sg", instance="inst-1")
        # the same instance joins again: the old member id is fenced, the
        # group stays at its generation (no rebalance)
        j = join(b, "sg", instance="inst-1", version=5)
        assert j["error"] == E_NONE and j["generation"] == gen
        assert j["member"] != m1 and j["leader"] == j["member"]
        assert heartbeat(a, "sg", gen, m1, instance="inst-1") == E_FENCED
        assert heartbeat(b, "sg", gen, j["member"], instance="inst-1") == E_NONE
        assert sync(b, "sg", gen, j["member"])["assignment"] == b"A1"
        w = Writer().string("sg").array([("", "inst-1")],
                                        lambda ww, m: ww.string(m[0]).string(m[1]))
        r = call(b, LEAVE, 3, w.bytes())
        r.i32()
        assert r.i16() == E_NONE
        assert r.array(lambda rr: (rr.string(), rr.string(nullable=True), rr.i16())) == \
            [("", "inst-1", E_NONE)]
        deadline = time.time() + T(10)
        while describe(a, "sg")["state"] != "Empty":
            assert time.time() < deadline


def test_session_timeout_removes_member(srv):
    with srv.connect() as conn:
        j = join(conn, "st", session=600, version=3)
        assert j["error"] == E_NONE
        assert sync(conn, "st", j["generation"], j["member"],
                    [(j["member"], b"a")])["error"] == E_NONE
        assert describe(conn, "st")["state"] == "Stable"
        deadline = time.time() + T(10)
        while describe(conn, "st")["state"] != "Empty":
            assert time.time() < deadline
            time.sleep(0.1)
        assert heartbeat(conn, "st", j["generation"], j["member"]) == E_UNKNOWN_MEMBER


def test_member_that_never_syncs_is_removed(srv):
    """Kafka's DelayedSync: a member that joined but sends no SyncGroup
    within the rebalance timeout is removed, long before its session
    timeout; a member that syncs is not."""
    with srv.connect() as conn:
        j = join(conn, "nosync", session=30000, rebalance=1000, version=4)
        assert j["error"] == E_MEMBER_ID_REQUIRED
        j = join(conn, "nosync", member=j["member"], session=30000,
                 rebalance=1000, version=4)
        assert j["error"] == E_NONE and j["leader"] == j["member"]
        assert describe(conn, "nosync")["state"] == "CompletingRebalance"
        start = time.monotonic()
        while (describe(conn, "nosync")["state"] != "Empty"
               and time.monotonic() - start < T(10)):
            time.sleep(0.1)
        g = describe(conn, "nosync")
        assert g["state"] == "Empty" and g["members"] == [], g
        assert time.monotonic() - start < T(10)     # session timeout: 30 s
        assert heartbeat(conn, "nosync", j["generation"], j["member"]) == \
            E_UNKNOWN_MEMBER

        # the same with a SyncGroup in time: the member stays
        j = join(conn, "synced", session=30000, rebalance=1000, version=4)
        j = join(conn, "synced", member=j["member"], session=30000,
                 rebalance=1000, version=4)
        assert j["error"] == E_NONE
        s = sync(conn, "synced", j["generation"], j["member"],
                 [(j["member"], b"A")])
        assert s["error"] == E_NONE
        time.sleep(1.5)
        assert heartbeat(conn, "synced", j["generation"], j["member"]) == E_NONE
        assert describe(conn, "synced")["state"] == "Stable"


def test_simple_commits_fetch_v8_list_delete(srv):
    with srv.connect() as conn:
        create_topic(conn, "t")
        # Sarama's v1 and kafka-python's v2: generation -1, member ""
        assert commit(conn, "simple", -1, "", {("t", 0): 11, ("t", 1): 12},
                      version=1) == {("t", 0): 0, ("t", 1): 0}
        assert commit(conn, "simple", -1, "", {("t", 2): 13}, version=2) == {("t", 2): 0}
        err, offs = fetch_offsets(conn, "simple", None, version=2)
        assert err == 0 and offs == {("t", 0): (11, 0), ("t", 1): (12, 0),
                                     ("t", 2): (13, 0)}
        err, offs = fetch_offsets(conn, "simple", [("t", [1])], version=1)
        assert offs == {("t", 1): (12, 0)}
        # v8: two groups, one unknown, all topics
        w = Writer().array(["simple", "nobody"], lambda ww, g: ww.string(g, True)
                           .uvarint(0).tags(), True).boolean(False).tags()
        r = call(conn, OFFSET_FETCH, 8, w.bytes())
        r.i32()

        def part(rr):
            p, o, _ = rr.i32(), rr.i64(), rr.i32()
            rr.string(flexible=True, nullable=True)
            e = rr.i16()
            rr.tags()
            return p, o, e

        def topic(rr):
            t = rr.string(flexible=True)
            ps = rr.array(part, flexible=True)
            rr.tags()
            return t, ps

        def group(rr):
            g = rr.string(flexible=True)
            ts = rr.array(topic, flexible=True)
            e = rr.i16()
            rr.tags()
            return g, ts, e
        groups = r.array(group, flexible=True)
        assert groups[0][0] == "simple" and groups[0][2] == 0
        assert sorted(groups[0][1][0][1]) == [(0, 11, 0), (1, 12, 0), (2, 13, 0)]
        assert groups[1] == ("nobody", [], 0)
        # ListGroups v4 with a state filter
        r = call(conn, LIST_GROUPS, 4, Writer().array(["Empty"], lambda ww, s:
                                                      ww.string(s, True), True).tags().bytes())
        r.i32()
        assert r.i16() == 0
        listed = r.array(lambda rr: (rr.string(flexible=True), rr.string(flexible=True),
                                     rr.string(flexible=True), rr.tags()), flexible=True)
        assert ("simple", "", "Empty") in [x[:3] for x in listed]
        r = call(conn, LIST_GROUPS, 4, Writer().array(["Stable"], lambda ww, s:
                                                      ww.string(s, True), True).tags().bytes())
        r.i32()
        r.i16()
        assert r.array(lambda rr: rr.string(flexible=True), flexible=True) == []
        # OffsetDelete of an Empty group: allowed
        w = Writer().string("simple").array([("t", [0])], lambda ww, t: ww.string(t[0])
                                             .array(t[1], lambda w2, p: w2.i32(p)))
        r = call(conn, OFFSET_DELETE, 0, w.bytes())
        assert r.i16() == 0
        r.i32()
        assert r.array(lambda rr: (rr.string(), rr.array(lambda r2: (r2.i32(), r2.i16())))) \
            == [("t", [(0, 0)])]
        err, offs = fetch_offsets(conn, "simple", [("t", [0, 1])])
        assert offs == {("t", 0): (-1, 0), ("t", 1): (12, 0)}
        # OffsetDelete of a topic the consumer group subscribes to
        m, gen = stable_member(conn, "busy")
        w = Writer().string("busy").array([("t", [0])], lambda ww, t: ww.string(t[0])
                                           .array(t[1], lambda w2, p: w2.i32(p)))
        r = call(conn, OFFSET_DELETE, 0, w.bytes())
        assert r.i16() == 0
        r.i32()
        assert r.array(lambda rr: (rr.string(), rr.array(lambda r2: (r2.i32(), r2.i16())))) \
            == [("t", [(0, E_SUBSCRIBED)])]
        r = call(conn, OFFSET_DELETE, 0, Writer().string("none").array([], None).bytes())
        assert r.i16() == E_NOT_FOUND
        # DeleteGroups v2
        r = call(conn, DELETE_GROUPS, 2, Writer().array(["simple", "busy", "none"],
                                                       lambda ww, g: ww.string(g, True),
                                                       True).tags().bytes())
        r.i32()
        res = r.array(lambda rr: (rr.string(flexible=True), rr.i16(), rr.tags()),
                      flexible=True)
        assert [x[:2] for x in res] == [("simple", 0), ("busy", 68), ("none", E_NOT_FOUND)]


def test_offsets_and_groups_survive_restart(samsa):
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        create_topic(conn, "t")
        m, gen = stable_member(conn, "keep")
        assert commit(conn, "keep", gen, m, {("t", 1): 42}) == {("t", 1): 0}
        assert commit(conn, "gone", -1, "", {("t", 0): 1}) == {("t", 0): 0}
        r = call(conn, DELETE_GROUPS, 1, Writer().array(["gone"], lambda w, g:
                                                       w.string(g)).bytes())
        r.i32()
        assert r.array(lambda rr: (rr.string(), rr.i16())) == [("gone", 0)]
    assert srv.stop() == []
    srv = samsa.start(overrides=OVERRIDES, workdir=srv.workdir)
    with srv.connect() as conn:
        err, offs = fetch_offsets(conn, "keep", [("t", [1])])
        assert offs == {("t", 1): (42, 0)}
        d = describe(conn, "keep")
        assert d["state"] == "Stable" and [x["id"] for x in d["members"]] == [m]
        # the loaded member is the same member: it heartbeats on
        assert heartbeat(conn, "keep", gen, m) == E_NONE
        err, offs = fetch_offsets(conn, "gone", [("t", [0])])
        assert offs == {("t", 0): (-1, 0)}
        assert describe(conn, "gone")["state"] == "Dead"


@pytest.mark.parametrize("key", [JOIN, SYNC, HEARTBEAT, LEAVE, OFFSET_COMMIT,
                                 OFFSET_FETCH, DESCRIBE_GROUPS, DELETE_GROUPS,
                                 OFFSET_DELETE])
def test_malformed_bodies_close_only_their_connection(srv, key):
    with srv.connect() as bad, srv.connect() as good:
        bad.send(kwire.encode_request(key, 3 if key != OFFSET_DELETE else 0, 1,
                                      b"\x00\x05ab"), T(5))
        assert bad.wait_closed(T(5))
        md = good.metadata(version=1)
        assert md["brokers"][0]["node_id"] == 1

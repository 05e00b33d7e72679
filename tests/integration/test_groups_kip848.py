"""The KIP-848 consumer group protocol over the raw wire (kwire):
ConsumerGroupHeartbeat v0/v1 joins, server-side assignment (uniform by
default, range on request, UNSUPPORTED_ASSIGNOR otherwise), Kafka's
reconciliation (a partition moves only once its previous owner stopped
reporting it), leave (-1), session timeout, fenced epochs, static members
(-2 and rejoin, UNRELEASED_INSTANCE_ID), new partitions bumping the group
epoch, ConsumerGroupDescribe, OffsetCommit/OffsetFetch v9 with member
epochs, ListGroups v5 types, DescribeGroups/DeleteGroups on a consumer
group, classic and consumer protocols on one group id, ApiVersions,
SubscribedTopicRegex (v1) and INVALID_REGULAR_EXPRESSION, the revocation
timeout, group.consumer.max.size; and persistence (docs/GROUPS.md): after
a clean restart or a SIGKILL members keep heartbeating with their epochs and
assignments, a silent member times out from the restart, a member that left
and a deleted group stay gone.
"""

import time

import pytest

import kwire
from kwire import Writer
from samsa_harness import T

CGH, CGD = 68, 69
JOIN, OFFSET_COMMIT, OFFSET_FETCH, DESCRIBE_GROUPS, LIST_GROUPS = 11, 8, 9, 15, 16
DELETE_GROUPS = 42
kwire.FLEXIBLE_FROM.update({CGH: 0, CGD: 0, JOIN: 6, OFFSET_COMMIT: 8,
                            OFFSET_FETCH: 6, DESCRIBE_GROUPS: 5, LIST_GROUPS: 3,
                            DELETE_GROUPS: 2})

E_NONE, E_INVALID_REQUEST, E_UNKNOWN_MEMBER, E_INCONSISTENT = 0, 42, 25, 23
E_NOT_FOUND, E_NON_EMPTY, E_FENCED_EPOCH, E_UNRELEASED = 69, 68, 110, 111
E_UNSUPPORTED_ASSIGNOR, E_STALE_EPOCH = 112, 113

OVERRIDES = {"offsets.topic.num.partitions": "3",
             "group.initial.rebalance.delay.ms": "0"}


def call(conn, key, version, body):
    return conn.request_raw(key, version, body, T(10))


def hb(conn, group, member, epoch, topics=None, rebalance=-1, owned=None,
       instance=None, assignor=None, regex=None, version=1):
    """One ConsumerGroupHeartbeat; owned and the answer's assignment are
    {topic id: set of partitions}."""
    w = Writer().string(group, True).string(member, True).i32(epoch)
    w.string(instance, True).string(None, True).i32(rebalance)
    w.array(topics, lambda ww, t: ww.string(t, True), True)
    if version >= 1:
        w.string(regex, True)
    w.string(assignor, True)

    def tp(ww, kv):
        ww.uuid(kv[0]).array(sorted(kv[1]), lambda w3, p: w3.i32(p), True).tags()
    w.array(None if owned is None else sorted(owned.items()), tp, True).tags()
    r = call(conn, CGH, version, w.bytes())
    out = {"throttle": r.i32(), "error": r.i16(),
           "message": r.string(True, True), "member": r.string(True, True),
           "epoch": r.i32(), "interval": r.i32(), "assignment": None}
    if r.i8() >= 0:
        def atp(rr):
            tid = rr.uuid()
            ps = rr.array(lambda r3: r3.i32(), True)
            rr.tags()
            return tid, set(ps)
        out["assignment"] = {tid: ps for tid, ps in r.array(atp, True) if ps}
        r.tags()
    r.tags()
    assert r.remaining() == 0
    return out


def describe(conn, group, version=1):
    r = call(conn, CGD, version, Writer().array([group], lambda ww, g: ww.string(g, True), True)
             .boolean(False).tags().bytes())
    r.i32()

    def assignment(rr):
        def tp(r3):
            t = (r3.uuid(), r3.string(True), r3.array(lambda r4: r4.i32(), True))
            r3.tags()
            return t
        tps = rr.array(tp, True)
        rr.tags()
        return {name: set(ps) for _, name, ps in tps}

    def member(rr):
        m = {"id": rr.string(True), "instance": rr.string(True, True),
             "rack": rr.string(True, True), "epoch": rr.i32(),
             "client_id": rr.string(True), "client_host": rr.string(True),
             "topics": rr.array(lambda r3: r3.string(True), True),
             "regex": rr.string(True, True), "assignment": assignment(rr),
             "target": assignment(rr)}
        if version >= 1:
            m["type"] = rr.i8()
        rr.tags()
        return m

    def grp(rr):
        g = {"error": rr.i16(), "message": rr.string(True, True),
             "group": rr.string(True), "state": rr.string(True),
             "group_epoch": rr.i32(), "assignment_epoch": rr.i32(),
             "assignor": rr.string(True), "members": rr.array(member, True),
             "ops": rr.i32()}
        rr.tags()
        return g
    gs = r.array(grp, True)
    r.tags()
    return gs[0]


def topic_id(conn, name, parts):
    return conn.wait_topic(name, partitions=parts)["topic_id"]


def make_topic(conn, name, parts):
    assert conn.create_topic(name, num_partitions=parts)["error_code"] == 0
    return topic_id(conn, name, parts)


def join(conn, group, member, topics, **kw):
    r = hb(conn, group, member, 0, topics=topics, rebalance=30000, owned={}, **kw)
    assert r["error"] == E_NONE, r
    return r


def settle(conn, group, members, rounds=20):
    """Heartbeats every member (each reporting what it was last given)
    until every one is at the group's assignment epoch with its target;
    returns {member: {topic id: partitions}}."""
    for _ in range(rounds):
        for m in members.values():
            r = hb(conn, group, m["id"], m["epoch"], owned=m["owned"])
            assert r["error"] == E_NONE, r
            m["epoch"] = r["epoch"]
            if r["assignment"] is not None:
                m["owned"] = r["assignment"]
        d = describe(conn, group)
        if d["state"] == "Stable":
            return {k: m["owned"] for k, m in members.items()}
    raise AssertionError("group %s did not settle: %s" % (group, d))


def member(r):
    return {"id": r["member"], "epoch": r["epoch"], "owned": r["assignment"] or {}}


def srv_start(samsa, **extra):
    o = dict(OVERRIDES)
    o.update(extra)
    return samsa.start(overrides=o)


def test_api_versions_lists_kip848(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        r = conn.request(kwire.API_API_VERSIONS, 3, kwire.encode_api_versions_request(3))
        assert r["api_keys"][CGH] == (0, 1) and r["api_keys"][CGD] == (0, 1)


def test_join_then_second_member_reconciles(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        tid = make_topic(conn, "t", 4)
        a = join(conn, "g", "member-a", ["t"])
        assert a["epoch"] == 1 and a["member"] == "member-a"
        assert a["assignment"] == {tid: {0, 1, 2, 3}}
        assert a["interval"] == 5000
        # b joins: its target is half of a's partitions, which a still owns
        b = join(conn, "g", "member-b", ["t"])
        assert b["epoch"] == 2 and b["assignment"] == {}
        # a is asked to revoke two (its epoch stays until it does)
        r = hb(conn, "g", "member-a", 1, owned={tid: {0, 1, 2, 3}})
        assert r["error"] == E_NONE and r["epoch"] == 1
        kept = r["assignment"][tid]
        assert len(kept) == 2 and kept <= {0, 1, 2, 3}
        # b gets nothing while a has not acknowledged
        r = hb(conn, "g", "member-b", 2, owned={})
        assert r["error"] == E_NONE and r["assignment"] is None
        d = describe(conn, "g")
        assert d["state"] == "Reconciling" and d["group_epoch"] == 2
        # a reports only what it kept: it reaches epoch 2
        r = hb(conn, "g", "member-a", 1, owned={tid: kept})
        assert r["epoch"] == 2 and r["assignment"] == {tid: kept}
        # now b gets the rest
        r = hb(conn, "g", "member-b", 2, owned={})
        assert r["epoch"] == 2 and r["assignment"] == {tid: {0, 1, 2, 3} - kept}
        d = describe(conn, "g")
        assert d["state"] == "Stable" and d["assignor"] == "uniform"
        assert d["group_epoch"] == 2 and d["assignment_epoch"] == 2
        ms = {m["id"]: m for m in d["members"]}
        assert ms["member-a"]["assignment"] == {"t": kept}
        assert ms["member-a"]["target"] == {"t": kept}
        assert ms["member-b"]["assignment"] == {"t": {0, 1, 2, 3} - kept}
        assert ms["member-b"]["topics"] == ["t"] and ms["member-b"]["type"] == 1
        assert ms["member-b"]["client_host"] == "/127.0.0.1"
        assert all(m["epoch"] == 2 for m in d["members"])


def test_range_and_unsupported_assignor(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        tid = make_topic(conn, "t5", 5)
        r = hb(conn, "gr", "x", 0, topics=["t5"], rebalance=30000, owned={},
               assignor="sticky")
        assert r["error"] == E_UNSUPPORTED_ASSIGNOR
        assert r["message"] == ("ServerAssignor sticky is not supported. "
                                "Supported assignors: uniform, range.")
        ms = {k: member(join(conn, "gr", k, ["t5"], assignor="range"))
              for k in ("m-b", "m-a")}
        got = settle(conn, "gr", ms)
        # range: members by id, the first gets the extra partition
        assert got["m-a"] == {tid: {0, 1, 2}} and got["m-b"] == {tid: {3, 4}}
        assert describe(conn, "gr")["assignor"] == "range"


def test_invalid_requests(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        make_topic(conn, "t", 1)
        cases = [
            (dict(group="", member="m", epoch=0, topics=["t"], rebalance=1, owned={}),
             "GroupId can't be empty."),
            (dict(group="g", member="", epoch=0, topics=["t"], rebalance=1, owned={}),
             "MemberId can't be empty."),
            (dict(group="g", member="m", epoch=0, topics=["t"], owned={}),
             "RebalanceTimeoutMs must be provided in first request."),
            (dict(group="g", member="m", epoch=0, topics=["t"], rebalance=1),
             "TopicPartitions must be empty when (re-)joining."),
            (dict(group="g", member="m", epoch=0, rebalance=1, owned={}),
             "SubscribedTopicNames or SubscribedTopicRegex must be set in first request."),
            (dict(group="g", member="m", epoch=-3), "MemberEpoch is invalid."),
            (dict(group="g", member="m", epoch=-2), "InstanceId can't be null."),
            (dict(group="g", member="m", epoch=0, topics=["t"], rebalance=1, owned={},
                  instance=""), "InstanceId can't be empty."),
        ]
        for kw, msg in cases:
            g, m, e = kw.pop("group"), kw.pop("member"), kw.pop("epoch")
            r = hb(conn, g, m, e, **kw)
            assert (r["error"], r["message"]) == (E_INVALID_REQUEST, msg), (kw, r)
        # v0: the coordinator names a member that joins without an id
        r = hb(conn, "g0", "", 0, topics=["t"], rebalance=1000, owned={}, version=0)
        assert r["error"] == E_NONE and len(r["member"]) == 22 and r["epoch"] == 1
        # an unknown member, an unknown group
        r = hb(conn, "g0", "nobody", 1, owned={})
        assert r["error"] == E_UNKNOWN_MEMBER
        r = hb(conn, "no-such-group", "m", 1, owned={})
        assert r["error"] == E_UNKNOWN_MEMBER


def test_fenced_epochs(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        tid = make_topic(conn, "t", 2)
        a = join(conn, "gf", "a", ["t"])
        assert a["epoch"] == 1
        r = hb(conn, "gf", "a", 7, owned={tid: {0, 1}})
        assert r["error"] == E_FENCED_EPOCH
        assert "greater member epoch (7)" in r["message"]
        b = join(conn, "gf", "b", ["t"])
        r = hb(conn, "gf", "a", 1, owned={tid: {0, 1}})        # revoking
        r = hb(conn, "gf", "a", 1, owned=r["assignment"])       # now epoch 2
        assert r["epoch"] == 2
        # the previous epoch is accepted once (a lost answer) while a owns
        # only what it has; an older one is fenced
        r = hb(conn, "gf", "a", 1, owned=r["assignment"])
        assert r["error"] == E_NONE and r["epoch"] == 2
        r = hb(conn, "gf", "b", 0 + 1, owned={})
        assert r["error"] == E_FENCED_EPOCH and "smaller member epoch (1)" in r["message"]
        assert b["epoch"] == 2


def test_leave_reassigns(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        tid = make_topic(conn, "t", 4)
        ms = {k: member(join(conn, "gl", k, ["t"])) for k in ("a", "b")}
        settle(conn, "gl", ms)
        r = hb(conn, "gl", "b", -1)
        assert r["error"] == E_NONE and r["epoch"] == -1 and r["member"] == "b"
        del ms["b"]
        got = settle(conn, "gl", ms)
        assert got["a"] == {tid: {0, 1, 2, 3}}
        d = describe(conn, "gl")
        assert [m["id"] for m in d["members"]] == ["a"] and d["group_epoch"] == 3


def test_session_timeout_removes_member(samsa):
    srv = srv_start(samsa, **{"group.consumer.session.timeout.ms": "1000"})
    with srv.connect() as conn:
        tid = make_topic(conn, "t", 4)
        ms = {k: member(join(conn, "gs", k, ["t"])) for k in ("a", "b")}
        settle(conn, "gs", ms)
        a = ms["a"]
        deadline = time.monotonic() + T(10)
        while time.monotonic() < deadline:          # b goes silent
            r = hb(conn, "gs", "a", a["epoch"], owned=a["owned"])
            assert r["error"] == E_NONE
            a["epoch"] = r["epoch"]
            if r["assignment"] is not None:
                a["owned"] = r["assignment"]
            if a["owned"] == {tid: {0, 1, 2, 3}}:
                break
            time.sleep(0.2)
        assert a["owned"] == {tid: {0, 1, 2, 3}}
        assert [m["id"] for m in describe(conn, "gs")["members"]] == ["a"]
        assert hb(conn, "gs", "b", 2, owned={})["error"] == E_UNKNOWN_MEMBER


def test_static_member_leaves_and_rejoins(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        tid = make_topic(conn, "t", 3)
        a = join(conn, "gi", "a1", ["t"], instance="inst-a")
        assert a["assignment"] == {tid: {0, 1, 2}}
        r = hb(conn, "gi", "x1", 0, topics=["t"], rebalance=1000, owned={},
               instance="inst-a")
        assert r["error"] == E_UNRELEASED
        r = hb(conn, "gi", "a1", -2, instance="inst-a")
        assert r["error"] == E_NONE and r["epoch"] == -2
        d = describe(conn, "gi")
        assert d["members"][0]["epoch"] == -2 and d["group_epoch"] == 1
        # back with a new member id: same partitions, no new group epoch
        r = join(conn, "gi", "a2", ["t"], instance="inst-a")
        assert r["epoch"] == 1 and r["assignment"] == {tid: {0, 1, 2}}
        d = describe(conn, "gi")
        assert [(m["id"], m["instance"]) for m in d["members"]] == [("a2", "inst-a")]
        assert d["group_epoch"] == 1 and d["state"] == "Stable"


def test_new_partitions_bump_epoch(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        tid = make_topic(conn, "tp", 2)
        a = join(conn, "gp", "a", ["tp"])
        assert a["assignment"] == {tid: {0, 1}} and a["epoch"] == 1
        res = conn.create_partitions([("tp", 4)])
        assert res[0]["error_code"] == 0
        topic_id(conn, "tp", 4)
        r = hb(conn, "gp", "a", 1, owned={tid: {0, 1}})
        assert r["epoch"] == 2 and r["assignment"] == {tid: {0, 1, 2, 3}}


def commit(conn, group, epoch, member_id, topic, offset):
    def part(ww, p):
        ww.i32(p).i64(offset).i32(-1).string("", True).tags()
    w = Writer().string(group, True).i32(epoch).string(member_id, True)
    w.string(None, True)
    w.array([topic], lambda ww, t: ww.string(t, True).array([0], part, True).tags(), True).tags()
    r = call(conn, OFFSET_COMMIT, 9, w.bytes())
    r.i32()

    def ptr(rr):
        p = (rr.i32(), rr.i16())
        rr.tags()
        return p

    def ttr(rr):
        t = (rr.string(True), rr.array(ptr, True))
        rr.tags()
        return t
    return r.array(ttr, True)[0][1][0][1]


def fetch(conn, group, member_id, epoch, topic):
    def grp(ww, g):
        ww.string(g, True).string(member_id, True).i32(epoch)
        ww.array([topic], lambda w3, t: w3.string(t, True).array([0], lambda w4, p: w4.i32(p), True).tags(), True)
        ww.tags()
    r = call(conn, OFFSET_FETCH, 9, Writer().array([group], grp, True).boolean(False).tags().bytes())
    r.i32()

    def part(rr):
        p = (rr.i32(), rr.i64(), rr.i32(), rr.string(True, True), rr.i16())
        rr.tags()
        return p

    def topic_(rr):
        t = (rr.string(True), rr.array(part, True))
        rr.tags()
        return t

    def g(rr):
        out = (rr.string(True), rr.array(topic_, True), rr.i16())
        rr.tags()
        return out
    gid, topics, err = r.array(g, True)[0]
    return err, (topics[0][1][0][1] if topics else None)


def test_offsets_with_member_epochs(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        make_topic(conn, "t", 1)
        join(conn, "go", "a", ["t"])
        assert commit(conn, "go", 1, "a", "t", 42) == E_NONE
        assert commit(conn, "go", 0, "a", "t", 43) == E_STALE_EPOCH
        assert commit(conn, "go", 1, "zz", "t", 43) == E_UNKNOWN_MEMBER
        assert fetch(conn, "go", "a", 1, "t") == (E_NONE, 42)
        assert fetch(conn, "go", "a", 3, "t")[0] == E_STALE_EPOCH
        assert fetch(conn, "go", None, -1, "t") == (E_NONE, 42)   # admin


def list_groups(conn, types):
    r = call(conn, LIST_GROUPS, 5, Writer().array([], None, True)
             .array(types, lambda ww, t: ww.string(t, True), True).tags().bytes())
    r.i32()
    assert r.i16() == 0

    def g(rr):
        out = (rr.string(True), rr.string(True), rr.string(True), rr.string(True))
        rr.tags()
        return out
    return {x[0]: x[1:] for x in r.array(g, True)}


def test_admin_views_and_protocol_mixing(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        make_topic(conn, "t", 2)
        join(conn, "gc", "a", ["t"])
        assert list_groups(conn, ["consumer"])["gc"] == ("consumer", "Stable", "consumer")
        assert list_groups(conn, ["CONSUMER"])["gc"][2] == "consumer"
        assert "gc" not in list_groups(conn, ["classic"])
        # DescribeGroups (classic API) shows a consumer group as Kafka 4: Dead
        r = call(conn, DESCRIBE_GROUPS, 5, Writer().array(["gc"], lambda ww, g: ww.string(g, True), True)
                 .boolean(False).tags().bytes())
        r.i32()
        r.uvarint()
        assert (r.i16(), r.string(True), r.string(True)) == (0, "gc", "Dead")
        # a classic member cannot join it; unknown groups are not found
        w = Writer().string("gc", True).i32(10000).i32(10000).string("", True)
        w.string(None, True).string("consumer", True)
        w.array([("range", b"")], lambda ww, p: ww.string(p[0], True).blob(p[1], True).tags(), True).tags()
        r = call(conn, JOIN, 6, w.bytes())
        r.i32()
        assert r.i16() == E_INCONSISTENT
        d = describe(conn, "nope")
        assert d["error"] == E_NOT_FOUND and d["message"] == "Group nope not found."

        def delete(g):
            r = call(conn, DELETE_GROUPS, 2, Writer().array([g], lambda ww, x: ww.string(x, True), True)
                     .tags().bytes())
            r.i32()
            res = r.array(lambda rr: (rr.string(True), rr.i16(), rr.tags()), True)
            return res[0][1]
        assert delete("gc") == E_NON_EMPTY
        assert hb(conn, "gc", "a", -1)["error"] == E_NONE
        assert list_groups(conn, [])["gc"][1] == "Empty"
        assert delete("gc") == E_NONE
        assert "gc" not in list_groups(conn, [])
        # a classic group with members is not a consumer group
        w = Writer().string("classic-g", True).i32(10000).i32(10000).string("", True)
        w.string(None, True).string("consumer", True)
        w.array([("range", b"")], lambda ww, p: ww.string(p[0], True).blob(p[1], True).tags(), True).tags()
        r = call(conn, JOIN, 6, w.bytes())      # MEMBER_ID_REQUIRED: pending member
        r = hb(conn, "classic-g", "m", 0, topics=["t"], rebalance=1000, owned={})
        assert r["error"] == E_NOT_FOUND
        assert r["message"] == "Group classic-g is not a consumer group."


def test_revocation_timeout_fences_member(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        tid = make_topic(conn, "t", 4)
        r = hb(conn, "gt", "slow", 0, topics=["t"], rebalance=800, owned={})
        assert r["assignment"] == {tid: {0, 1, 2, 3}}
        b = member(join(conn, "gt", "b", ["t"]))
        r = hb(conn, "gt", "slow", 1, owned={tid: {0, 1, 2, 3}})
        assert len(r["assignment"][tid]) == 2           # asked to revoke two
        # "slow" never acknowledges; b keeps heartbeating and ends up with
        # everything once "slow" is fenced after its rebalance timeout
        deadline = time.monotonic() + T(10)
        while b["owned"] != {tid: {0, 1, 2, 3}} and time.monotonic() < deadline:
            r = hb(conn, "gt", "b", b["epoch"], owned=b["owned"])
            assert r["error"] == E_NONE
            b["epoch"] = r["epoch"]
            if r["assignment"] is not None:
                b["owned"] = r["assignment"]
            time.sleep(0.1)
        assert b["owned"] == {tid: {0, 1, 2, 3}}
        r = hb(conn, "gt", "slow", 1, owned={tid: {0, 1, 2, 3}})
        assert r["error"] == E_UNKNOWN_MEMBER


def test_group_max_size(samsa):
    srv = srv_start(samsa, **{"group.consumer.max.size": "1"})
    with srv.connect() as conn:
        make_topic(conn, "t", 1)
        join(conn, "gm", "a", ["t"])
        r = hb(conn, "gm", "b", 0, topics=["t"], rebalance=1000, owned={})
        assert r["error"] == 81
        assert r["message"] == ("The consumer group has reached its maximum "
                                "capacity of 1 members.")


def test_regex_subscription(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        ta = make_topic(conn, "re-a", 2)
        make_topic(conn, "other", 1)
        r = hb(conn, "gx", "m", 0, regex="(", rebalance=1000, owned={})
        assert r["error"] == 128
        assert r["message"].startswith("SubscribedTopicRegex `(` is not a valid regular expression: ")
        r = hb(conn, "gx", "m", 0, regex="re-.*", rebalance=1000, owned={})
        assert r["error"] == E_NONE and r["assignment"] == {ta: {0, 1}}
        d = describe(conn, "gx")
        assert d["members"][0]["regex"] == "re-.*" and d["members"][0]["topics"] == []
        # a new matching topic is seen by the next heartbeat (whole-name match:
        # "xre-c" is not)
        tb = make_topic(conn, "re-b", 1)
        make_topic(conn, "xre-c", 1)
        r = hb(conn, "gx", "m", r["epoch"], owned={ta: {0, 1}})
        assert r["epoch"] == 2 and r["assignment"] == {ta: {0, 1}, tb: {0}}
        assert describe(conn, "gx")["members"][0]["assignment"] == {"re-a": {0, 1}, "re-b": {0}}
        # RE2 syntax, as Kafka's RE2J: franz-go's (?:...) groups and a `^`
        # inside; backreferences and lookarounds refused as RE2 refuses them
        r = hb(conn, "gy", "m", 0, regex=".*(?:(?:^re-.*)).*", rebalance=1000,
               owned={})
        assert r["error"] == E_NONE and r["assignment"] == {ta: {0, 1}, tb: {0}}
        for bad, why in (("(re)-\\1", "backreferences"),
                         ("re-(?=a).*", "lookarounds")):
            r = hb(conn, "gz", "m", 0, regex=bad, rebalance=1000, owned={})
            assert r["error"] == 128 and why in r["message"], r


# ---- persistence: the group's records in __consumer_offsets ----------------



def delete_group(conn, g):
    r = call(conn, DELETE_GROUPS, 2, Writer().array([g], lambda ww, x: ww.string(x, True), True)
             .tags().bytes())
    r.i32()
    return r.array(lambda rr: (rr.string(True), rr.i16(), rr.tags()), True)[0][1]


def comparable(d):
    """A ConsumerGroupDescribe answer without what may differ after a
    restart (nothing should)."""
    d = dict(d)
    d["members"] = sorted(d["members"], key=lambda m: m["id"])
    return d


@pytest.mark.parametrize("kill", [False, True], ids=["clean", "sigkill"])
def test_restart_keeps_group_and_epochs(samsa, kill):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        tid = make_topic(conn, "t", 4)
        ms = {k: member(join(conn, "gp", k, ["t"], instance=None))
              for k in ("a", "b")}
        got = settle(conn, "gp", ms)
        assert got["a"] and got["b"] and not (got["a"][tid] & got["b"][tid])
        before = describe(conn, "gp")
        assert before["state"] == "Stable" and before["group_epoch"] == 2
    srv = samsa.restart(srv, kill=kill)
    with srv.connect() as conn:
        after = describe(conn, "gp")
        assert comparable(after) == comparable(before)
        # members go on with their epochs: no rejoin, no new group epoch,
        # nothing new to reconcile
        for k, m in ms.items():
            r = hb(conn, "gp", m["id"], m["epoch"], owned=m["owned"])
            assert r["error"] == E_NONE, r
            assert r["epoch"] == m["epoch"] == 2
            assert r["assignment"] is None
        d = describe(conn, "gp")
        assert d["state"] == "Stable" and d["group_epoch"] == 2
        assert comparable(d) == comparable(before)
        # and the group keeps working: a third member brings epoch 3
        c = join(conn, "gp", "c", ["t"])
        assert c["epoch"] == 3


def test_restart_times_out_silent_member_and_forgets_left_one(samsa):
    srv = srv_start(samsa, **{"group.consumer.session.timeout.ms": "3000"})
    with srv.connect() as conn:
        tid = make_topic(conn, "t", 4)
        ms = {k: member(join(conn, "gt", k, ["t"])) for k in ("a", "b", "c")}
        settle(conn, "gt", ms)
        assert hb(conn, "gt", "c", -1)["error"] == E_NONE      # c leaves
        del ms["c"]
        settle(conn, "gt", ms)
        epoch = describe(conn, "gt")["group_epoch"]
    srv = samsa.restart(srv)
    with srv.connect() as conn:
        d = describe(conn, "gt")
        assert sorted(m["id"] for m in d["members"]) == ["a", "b"]
        assert d["group_epoch"] == epoch
        assert hb(conn, "gt", "c", 4, owned={})["error"] == E_UNKNOWN_MEMBER
        # a heartbeats, b is silent: b goes after its session timeout
        # (counted from the load) and a gets everything
        a = ms["a"]
        deadline = time.monotonic() + T(15)
        while time.monotonic() < deadline:
            r = hb(conn, "gt", "a", a["epoch"], owned=a["owned"])
            assert r["error"] == E_NONE, r
            a["epoch"] = r["epoch"]
            if r["assignment"] is not None:
                a["owned"] = r["assignment"]
            if a["owned"] == {tid: {0, 1, 2, 3}}:
                break
            time.sleep(0.3)
        assert a["owned"] == {tid: {0, 1, 2, 3}}
        assert [m["id"] for m in describe(conn, "gt")["members"]] == ["a"]
        assert hb(conn, "gt", "b", ms["b"]["epoch"], owned={})["error"] == E_UNKNOWN_MEMBER
        final = describe(conn, "gt")
    # what the timeout changed was written too
    srv = samsa.restart(srv)
    with srv.connect() as conn:
        assert comparable(describe(conn, "gt")) == comparable(final)


def test_deleted_group_stays_gone_after_restart(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        make_topic(conn, "t", 2)
        a = join(conn, "gd", "a", ["t"])
        assert hb(conn, "gd", "a", -1)["error"] == E_NONE
        assert delete_group(conn, "gd") == E_NONE
        # another group stays
        join(conn, "gk", "k", ["t"])
    srv = samsa.restart(srv, kill=True)
    with srv.connect() as conn:
        d = describe(conn, "gd")
        assert d["error"] == E_NOT_FOUND, d
        assert hb(conn, "gd", "a", a["epoch"], owned={})["error"] == E_UNKNOWN_MEMBER
        assert "gd" not in list_groups(conn, [])
        assert [m["id"] for m in describe(conn, "gk")["members"]] == ["k"]


def test_consumer_group_turned_classic_stays_classic_after_restart(samsa):
    srv = srv_start(samsa)
    with srv.connect() as conn:
        make_topic(conn, "t", 2)
        join(conn, "gx", "a", ["t"])
        assert hb(conn, "gx", "a", -1)["error"] == E_NONE
        # a classic join turns the empty consumer group into a classic one
        w = Writer().string("gx", True).i32(10000).i32(10000).string("", True)
        w.string(None, True).string("consumer", True)
        w.array([("range", b"")], lambda ww, p: ww.string(p[0], True).blob(p[1], True).tags(), True).tags()
        call(conn, JOIN, 6, w.bytes())
        assert describe(conn, "gx")["error"] == E_NOT_FOUND
    srv = samsa.restart(srv)
    with srv.connect() as conn:
        # its consumer group records have tombstones: it does not come back
        d = describe(conn, "gx")
        assert d["error"] == E_NOT_FOUND, d

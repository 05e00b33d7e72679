"""The classic group coordinator's answers of Apache Kafka 4.4 and
samsa-server side by side: Heartbeat, SyncGroup and LeaveGroup of an
unknown member, OffsetCommit (a simple commit and one with an unknown
member), OffsetFetch and DescribeGroups of an unknown group, DeleteGroups
of an unknown and of an empty group, each at the lowest and the highest
version both serve.  Differences: KNOWN (and docs/COMPATIBILITY.md)."""

import pytest

import diffkit
import kwire
from kwire import Writer
from samsa_harness import T
from test_diff_requests import find_coordinator, group_coordinator_ready, join_group

TOPIC = "diff-g"
OFFSET_COMMIT, OFFSET_FETCH, HEARTBEAT, LEAVE_GROUP = 8, 9, 12, 13
SYNC_GROUP, DESCRIBE_GROUPS, DELETE_GROUPS = 14, 15, 42
FLEX = {OFFSET_COMMIT: 8, OFFSET_FETCH: 6, HEARTBEAT: 4, LEAVE_GROUP: 4,
        SYNC_GROUP: 4, DESCRIBE_GROUPS: 5, DELETE_GROUPS: 2}
kwire.FLEXIBLE_FROM.update(FLEX)     # request and response header versions
# the highest version this file encodes
MAX = {OFFSET_COMMIT: 9, OFFSET_FETCH: 9, HEARTBEAT: 4, LEAVE_GROUP: 5,
       SYNC_GROUP: 5, DESCRIBE_GROUPS: 5, DELETE_GROUPS: 2, 10: 4, 11: 9}

# 'CASE: PATH' -> (Kafka's value, Samsa's value, why)
KNOWN = {}


@pytest.fixture(scope="module")
def genv(pair):
    ka, sa = pair.connect()
    with ka, sa:
        pair.hi, pair.lo = diffkit.common_versions(ka, sa, MAX)
        for c in (ka, sa):
            r = c.create_topic(TOPIC, num_partitions=1)
            assert r["error_code"] == 0, r
            c.wait_topic(TOPIC, timeout=T(30))
            group_coordinator_ready(c)
    return pair


def check_versions(env, api, check):
    diffkit.each_version(sorted({env.lo[api], env.hi[api]}), check)


def compare(case, env, fn, **kw):
    return diffkit.compare_pair(case, env, fn, KNOWN, **kw)


def call(c, api, v, w):
    if v >= FLEX[api]:
        w.tags()
    return c.request_raw(api, v, w.bytes(), T(20))


def tail(r, out, flex, what):
    if flex:
        out["tags"] = r.tags()
    r.done(what)
    return out


# -- Heartbeat, SyncGroup, LeaveGroup of an unknown member --------------------------

def heartbeat(c, v, group, gen, member):
    f = v >= FLEX[HEARTBEAT]
    w = Writer().string(group, f).i32(gen).string(member, f)
    if v >= 3:
        w.string(None, f)
    r = call(c, HEARTBEAT, v, w)
    out = {"throttle_time_ms": r.i32() if v >= 1 else 0, "error_code": r.i16()}
    return tail(r, out, f, "Heartbeat v%d" % v)


def sync_group(c, v, group, gen, member):
    f = v >= FLEX[SYNC_GROUP]
    w = Writer().string(group, f).i32(gen).string(member, f)
    if v >= 3:
        w.string(None, f)
    if v >= 5:
        w.string("consumer", f).string("range", f)
    w.array([], None, f)
    r = call(c, SYNC_GROUP, v, w)
    out = {"throttle_time_ms": r.i32() if v >= 1 else 0, "error_code": r.i16()}
    if v >= 5:
        out["protocol_type"] = r.string(f, nullable=True)
        out["protocol_name"] = r.string(f, nullable=True)
    out["assignment"] = r.blob(f)
    return tail(r, out, f, "SyncGroup v%d" % v)


def leave_group(c, v, group, member):
    f = v >= FLEX[LEAVE_GROUP]
    w = Writer().string(group, f)
    if v < 3:
        w.string(member, f)
    else:
        def m(ww, x):
            ww.string(x, f).string(None, f)
            if v >= 5:
                ww.string(None, f)
            if f:
                ww.tags()
        w.array([member], m, f)
    r = call(c, LEAVE_GROUP, v, w)
    out = {"throttle_time_ms": r.i32() if v >= 1 else 0, "error_code": r.i16()}
    if v >= 3:
        def res(rr):
            x = {"member_id": rr.string(f), "group_instance_id": rr.string(f, nullable=True),
                 "error_code": rr.i16()}
            if f:
                rr.tags()
            return x
        out["members"] = r.array(res, f)
    return tail(r, out, f, "LeaveGroup v%d" % v)


@pytest.mark.parametrize("what", ["unknown group", "existing group"])
def test_unknown_member(genv, what):
    """Heartbeat, SyncGroup and LeaveGroup from a member the group does not
    know, of a group that does not exist / of a group with one member."""
    def run(api, fn):
        def check(v):
            def go(c):
                group = "diff-um-%s-%d-%d" % (what[0], api, v)
                find_coordinator(c, genv.hi[10], group)
                if what == "existing group":
                    j = join_group(c, genv.hi[11], group, "")
                    join_group(c, genv.hi[11], group, j["member_id"])
                return fn(c, v, group)
            compare("%s v%d unknown member, %s" % (fn.__name__, v, what), genv, go)
        check_versions(genv, api, check)
    failed = []
    for api, fn in ((HEARTBEAT, lambda c, v, g: heartbeat(c, v, g, 1, "diff-nobody")),
                    (SYNC_GROUP, lambda c, v, g: sync_group(c, v, g, 1, "diff-nobody")),
                    (LEAVE_GROUP, lambda c, v, g: leave_group(c, v, g, "diff-nobody"))):
        fn.__name__ = {HEARTBEAT: "Heartbeat", SYNC_GROUP: "SyncGroup",
                       LEAVE_GROUP: "LeaveGroup"}[api]
        try:
            run(api, fn)
        except pytest.fail.Exception as e:
            failed.append(str(e))
    if failed:
        pytest.fail("\n".join(failed), pytrace=False)


# -- OffsetCommit, OffsetFetch -----------------------------------------------------

def offset_commit(c, v, group, gen, member, offset=5):
    f = v >= FLEX[OFFSET_COMMIT]
    w = Writer().string(group, f).i32(gen).string(member, f)
    if v >= 7:
        w.string(None, f)
    if 2 <= v <= 4:
        w.i64(-1)

    def part(ww, p):
        ww.i32(p).i64(offset)
        if v >= 6:
            ww.i32(-1)
        ww.string("m", f)
        if f:
            ww.tags()

    def topic(ww, t):
        ww.string(t, f).array([0], part, f)
        if f:
            ww.tags()
    w.array([TOPIC], topic, f)
    r = call(c, OFFSET_COMMIT, v, w)
    out = {"throttle_time_ms": r.i32() if v >= 3 else 0}

    def rpart(rr):
        x = {"partition_index": rr.i32(), "error_code": rr.i16()}
        if f:
            rr.tags()
        return x

    def rtopic(rr):
        x = {"name": rr.string(f), "partitions": rr.array(rpart, f)}
        if f:
            rr.tags()
        return x
    out["topics"] = r.array(rtopic, f)
    return tail(r, out, f, "OffsetCommit v%d" % v)


def offset_fetch(c, v, group):
    f = v >= FLEX[OFFSET_FETCH]
    w = Writer()

    def topic(ww, t):
        ww.string(t, f).array([0], lambda w3, p: w3.i32(p), f)
        if f:
            ww.tags()
    if v < 8:
        w.string(group, f).array([TOPIC], topic, f)
    else:
        def grp(ww, g):
            ww.string(g, f)
            if v >= 9:
                ww.string(None, f).i32(-1)
            ww.array([TOPIC], topic, f)
            ww.tags()
        w.array([group], grp, f)
    if v >= 7:
        w.boolean(False)
    r = call(c, OFFSET_FETCH, v, w)
    out = {"throttle_time_ms": r.i32() if v >= 3 else 0}

    def rpart(rr):
        x = {"partition_index": rr.i32(), "committed_offset": rr.i64()}
        if v >= 5:
            x["committed_leader_epoch"] = rr.i32()
        x["metadata"] = rr.string(f, nullable=True)
        x["error_code"] = rr.i16()
        if f:
            rr.tags()
        return x

    def rtopic(rr):
        x = {"name": rr.string(f), "partitions": rr.array(rpart, f)}
        if f:
            rr.tags()
        return x
    if v < 8:
        out["topics"] = r.array(rtopic, f)
        if v >= 2:
            out["error_code"] = r.i16()
    else:
        def rgrp(rr):
            x = {"group_id": rr.string(f), "topics": rr.array(rtopic, f),
                 "error_code": rr.i16()}
            rr.tags()
            return x
        out["groups"] = r.array(rgrp, f)
    return tail(r, out, f, "OffsetFetch v%d" % v)


def test_offset_commit_simple_then_fetch(genv):
    """A simple commit (generation -1, no member: Sarama, assign()
    consumers) to a group that does not exist, read back by OffsetFetch."""
    def check(v):
        def go(c):
            group = "diff-simple-%d" % v
            find_coordinator(c, genv.hi[10], group)
            return {"commit": offset_commit(c, v, group, -1, ""),
                    "fetch": offset_fetch(c, genv.hi[OFFSET_FETCH], group)}
        compare("OffsetCommit v%d simple commit" % v, genv, go)
    check_versions(genv, OFFSET_COMMIT, check)


def test_offset_commit_unknown_member(genv):
    def check(v):
        def go(c):
            group = "diff-ocum-%d" % v
            find_coordinator(c, genv.hi[10], group)
            j = join_group(c, genv.hi[11], group, "")
            join_group(c, genv.hi[11], group, j["member_id"])
            return offset_commit(c, v, group, 1, "diff-nobody")
        compare("OffsetCommit v%d unknown member" % v, genv, go)
    check_versions(genv, OFFSET_COMMIT, check)


def test_offset_fetch_unknown_group(genv):
    def check(v):
        def go(c):
            find_coordinator(c, genv.hi[10], "diff-nogroup")
            return offset_fetch(c, v, "diff-nogroup")
        compare("OffsetFetch v%d unknown group" % v, genv, go)
    check_versions(genv, OFFSET_FETCH, check)


# -- DescribeGroups, DeleteGroups -------------------------------------------------

def describe_groups(c, v, group):
    f = v >= FLEX[DESCRIBE_GROUPS]
    w = Writer().array([group], lambda ww, g: ww.string(g, f), f)
    if v >= 3:
        w.boolean(False)
    r = call(c, DESCRIBE_GROUPS, v, w)
    out = {"throttle_time_ms": r.i32() if v >= 1 else 0}

    def member(rr):
        x = {"member_id": rr.string(f)}
        if v >= 4:
            x["group_instance_id"] = rr.string(f, nullable=True)
        x.update(client_id=rr.string(f), client_host=rr.string(f),
                 member_metadata=rr.blob(f), member_assignment=rr.blob(f))
        if f:
            rr.tags()
        return x

    def grp(rr):
        x = {"error_code": rr.i16(), "group_id": rr.string(f),
             "group_state": rr.string(f), "protocol_type": rr.string(f),
             "protocol_data": rr.string(f), "members": rr.array(member, f)}
        if v >= 3:
            x["authorized_operations"] = rr.i32()
        if f:
            rr.tags()
        return x
    out["groups"] = r.array(grp, f)
    return tail(r, out, f, "DescribeGroups v%d" % v)


def delete_groups(c, v, group):
    f = v >= FLEX[DELETE_GROUPS]
    w = Writer().array([group], lambda ww, g: ww.string(g, f), f)
    r = call(c, DELETE_GROUPS, v, w)
    out = {"throttle_time_ms": r.i32()}

    def res(rr):
        x = {"group_id": rr.string(f), "error_code": rr.i16()}
        if f:
            rr.tags()
        return x
    out["results"] = r.array(res, f)
    return tail(r, out, f, "DeleteGroups v%d" % v)


def test_describe_groups_unknown(genv):
    def check(v):
        def go(c):
            find_coordinator(c, genv.hi[10], "diff-nogroup")
            return describe_groups(c, v, "diff-nogroup")
        compare("DescribeGroups v%d unknown group" % v, genv, go)
    check_versions(genv, DESCRIBE_GROUPS, check)


def test_delete_groups(genv):
    """An unknown group, and one holding only committed offsets (empty)."""
    def check(v):
        def go(c):
            find_coordinator(c, genv.hi[10], "diff-nogroup")
            group = "diff-del-%d" % v
            find_coordinator(c, genv.hi[10], group)
            offset_commit(c, genv.hi[OFFSET_COMMIT], group, -1, "")
            return {"unknown": delete_groups(c, v, "diff-nogroup"),
                    "empty": delete_groups(c, v, group),
                    "fetch after": offset_fetch(c, genv.hi[OFFSET_FETCH], group)}
        compare("DeleteGroups v%d" % v, genv, go)
    check_versions(genv, DELETE_GROUPS, check)


def test_known_differences_documented():
    missing = diffkit.undocumented(KNOWN)
    assert not missing, ("docs/COMPATIBILITY.md does not list (as `CASE: PATH`):\n  "
                         + "\n  ".join(missing))

"""Administrative requests to Apache Kafka 4.4 and samsa-server side by
side: CreatePartitions, DeleteRecords, AlterConfigs,
IncrementalAlterConfigs, OffsetForLeaderEpoch, ElectLeaders,
ListPartitionReassignments, DescribeCluster, and AlterUserScramCredentials /
DescribeUserScramCredentials (v0: results compared as sets, Kafka's come
in hash order), each at the lowest and the highest version both serve (and
kwire encodes); DescribeAcls, CreateAcls and DeleteAcls v1 on brokers
without an authorizer.  Differences: KNOWN (and
docs/COMPATIBILITY.md)."""

import time

import pytest

import diffkit
import kwire
from samsa_harness import T

TOPIC = "diff-a"            # 1 partition, 3 records, on both
NO_SUCH = "diff-no-such-topic"
CREATE_PARTITIONS, DELETE_RECORDS, ALTER_CONFIGS = 37, 21, 33
INCREMENTAL_ALTER_CONFIGS, OFFSET_FOR_LEADER_EPOCH = 44, 23
ELECT_LEADERS, LIST_REASSIGNMENTS, DESCRIBE_CLUSTER = 43, 46, 60
MAX = {CREATE_PARTITIONS: 3, DELETE_RECORDS: 2, ALTER_CONFIGS: 2,
       INCREMENTAL_ALTER_CONFIGS: 1, OFFSET_FOR_LEADER_EPOCH: 4,
       ELECT_LEADERS: 2, LIST_REASSIGNMENTS: 0, DESCRIBE_CLUSTER: 1}

# 'CASE: PATH' -> (Kafka's value, Samsa's value, why)
KNOWN = {
}


def ready_topic(c, name, partitions=1, records=0):
    r = c.create_topic(name, num_partitions=partitions)
    assert r["error_code"] == 0, (name, r)
    c.wait_topic(name, partitions=partitions, timeout=T(30))
    if records:
        batch = kwire.encode_batch([kwire.Record(b"r%d" % i, timestamp=1000 + i)
                                    for i in range(records)])
        deadline = time.monotonic() + T(30)
        while True:                 # Kafka: NOT_LEADER_OR_FOLLOWER for a moment
            p = c.produce(name, 0, batch)
            if p["error_code"] != 6 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert p["error_code"] == 0, p


@pytest.fixture(scope="module")
def aenv(pair):
    ka, sa = pair.connect()
    with ka, sa:
        pair.hi, pair.lo = diffkit.common_versions(ka, sa, MAX)
        for c in (ka, sa):
            ready_topic(c, TOPIC, records=3)
    print("versions used: highest %s, lowest %s" % (pair.hi, pair.lo))
    return pair


def each_version(env, api, check):
    diffkit.each_version(sorted({env.lo[api], env.hi[api]}), check)


def compare(case, env, fn, **kw):
    return diffkit.compare_pair(case, env, fn, KNOWN, **kw)


def req(c, api, v, body):
    return c.request(api, v, body, timeout=T(30))


# -- CreatePartitions ---------------------------------------------------------------

@pytest.mark.parametrize("what,count,validate_only", [
    ("increase", 3, False), ("same count", 1, False), ("decrease", 0, False),
    ("increase validate_only", 4, True), ("unknown topic", 2, False),
])
def test_create_partitions(aenv, what, count, validate_only):
    def check(v):
        def go(c):
            name = NO_SUCH
            if what != "unknown topic":
                name = "diff-cp-%s-%d" % (what.replace(" ", "-"), v)
                ready_topic(c, name)
            r = req(c, CREATE_PARTITIONS, v, kwire.encode_create_partitions_request(
                v, [(name, count, None)], validate_only=validate_only))
            for x in r["results"]:
                x["name"] = what
            out = {"answer": r}
            if name != NO_SUCH:
                # Kafka's Metadata shows the new partitions once its broker
                # replayed the controller's records: polled for success
                ok = r["results"][0]["error_code"] == 0 and not validate_only
                deadline = time.monotonic() + T(10)
                while True:
                    n = len(c.topic_metadata(name)["partitions"])
                    if not ok or n == count or time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
                out["partitions after"] = n
            return out
        compare("CreatePartitions v%d %s" % (v, what), aenv, go)
    each_version(aenv, CREATE_PARTITIONS, check)


# -- DeleteRecords -------------------------------------------------------------------

@pytest.mark.parametrize("what,part,offset", [
    ("beyond the high watermark", 0, 100), ("unknown partition", 9, 0),
])
def test_delete_records_errors(aenv, what, part, offset):
    def check(v):
        compare("DeleteRecords v%d %s" % (v, what), aenv,
                lambda c: req(c, DELETE_RECORDS, v, kwire.encode_delete_records_request(
                    v, [(TOPIC, [(part, offset)])])))
    each_version(aenv, DELETE_RECORDS, check)


def test_delete_records(aenv):
    def check(v):
        def go(c):
            name = "diff-dr-%d" % v
            ready_topic(c, name, records=3)
            r = req(c, DELETE_RECORDS, v, kwire.encode_delete_records_request(
                v, [(name, [(0, 1)])]))
            r["topics"][0]["name"] = "x"
            return {"answer": r, "earliest after": c.list_offsets(
                name, 0, kwire.TS_EARLIEST)["offset"]}
        compare("DeleteRecords v%d to offset 1" % v, aenv, go)
    each_version(aenv, DELETE_RECORDS, check)


# -- AlterConfigs, IncrementalAlterConfigs -----------------------------------------------

ALTER_CASES = [
    ("valid validate_only", TOPIC, {"retention.ms": "3600000"}, True),
    ("bad value", TOPIC, {"retention.ms": "abc"}, False),
    ("unknown key", TOPIC, {"diff.no.such.key": "1"}, False),
    ("unknown topic", NO_SUCH, {"retention.ms": "1000"}, False),
]


@pytest.mark.parametrize("what,name,cfg,validate_only", ALTER_CASES)
def test_alter_configs(aenv, what, name, cfg, validate_only):
    def check(v):
        compare("AlterConfigs v%d %s" % (v, what), aenv,
                lambda c: req(c, ALTER_CONFIGS, v, kwire.encode_alter_configs_request(
                    v, [(kwire.RESOURCE_TOPIC, name, cfg)], validate_only=validate_only)))
    each_version(aenv, ALTER_CONFIGS, check)


@pytest.mark.parametrize("what,name,ops,expect", [
    ("set", TOPIC, [("retention.ms", kwire.OP_SET, "7200000")], "7200000"),
    ("set bad value", TOPIC, [("retention.ms", kwire.OP_SET, "abc")], None),
    ("delete unknown key", TOPIC, [("diff.no.such.key", kwire.OP_DELETE, None)], None),
    ("append to a non-list", TOPIC, [("retention.ms", kwire.OP_APPEND, "5")], None),
    ("append to a list", TOPIC, [("cleanup.policy", kwire.OP_APPEND, "compact")],
     "delete,compact"),
    ("unknown topic", NO_SUCH, [("retention.ms", kwire.OP_SET, "1000")], None),
])
def test_incremental_alter_configs(aenv, what, name, ops, expect):
    """The answer, and the configs read back (Kafka's broker applies a
    change when it replays the controller's record: polled for the value
    a successful change sets)."""
    def check(v):
        def go(c):
            name_v = name if name == NO_SUCH else "diff-iac-%s-%d" % (what.replace(" ", "-"), v)
            if name != NO_SUCH:
                ready_topic(c, name_v)
            r = req(c, INCREMENTAL_ALTER_CONFIGS, v,
                    kwire.encode_incremental_alter_configs_request(
                        v, [(kwire.RESOURCE_TOPIC, name_v, ops)]))
            for x in r["responses"]:
                x["resource_name"] = name
            out = {"answer": r}
            if name != NO_SUCH:
                keys = sorted({o[0] for o in ops if "no.such" not in o[0]})
                deadline = time.monotonic() + T(10)
                while True:
                    got = c.topic_configs(name_v, keys=keys, include_synonyms=False)
                    if (expect is None or got[keys[0]]["value"] == expect
                            or time.monotonic() > deadline):
                        break
                    time.sleep(0.05)
                out["after"] = {k: (got[k]["value"], got[k]["source"]) for k in keys}
            return out
        compare("IncrementalAlterConfigs v%d %s" % (v, what), aenv, go)
    each_version(aenv, INCREMENTAL_ALTER_CONFIGS, check)


# -- OffsetForLeaderEpoch, ElectLeaders, ListPartitionReassignments, DescribeCluster ----

@pytest.mark.parametrize("what,topic,part,epoch", [
    ("epoch 0", TOPIC, 0, 0), ("a later epoch", TOPIC, 0, 5),
    ("unknown partition", TOPIC, 9, 0), ("unknown topic", NO_SUCH, 0, 0),
])
def test_offset_for_leader_epoch(aenv, what, topic, part, epoch):
    def check(v):
        compare("OffsetForLeaderEpoch v%d %s" % (v, what), aenv,
                lambda c: req(c, OFFSET_FOR_LEADER_EPOCH, v,
                              kwire.encode_offset_for_leader_epoch_request(
                                  v, [(topic, [(part, -1, epoch)])])))
    each_version(aenv, OFFSET_FOR_LEADER_EPOCH, check)


@pytest.mark.parametrize("what,topic,part", [
    ("preferred, already the leader", TOPIC, 0), ("unknown partition", TOPIC, 9),
    ("unknown topic", NO_SUCH, 0),
])
def test_elect_leaders(aenv, what, topic, part):
    def check(v):
        compare("ElectLeaders v%d %s" % (v, what), aenv,
                lambda c: req(c, ELECT_LEADERS, v, kwire.encode_elect_leaders_request(
                    v, [(topic, [part])])))
    each_version(aenv, ELECT_LEADERS, check)


def test_list_partition_reassignments(aenv):
    def check(v):
        compare("ListPartitionReassignments v%d" % v, aenv,
                lambda c: req(c, LIST_REASSIGNMENTS, v,
                              kwire.encode_list_partition_reassignments_request(
                                  v, [(TOPIC, [0])])))
    each_version(aenv, LIST_REASSIGNMENTS, check)


def test_describe_cluster(aenv):
    def check(v):
        compare("DescribeCluster v%d" % v, aenv,
                lambda c: c.describe_cluster(v, timeout=T(10)))
    each_version(aenv, DESCRIBE_CLUSTER, check)


# -- SCRAM credentials (issue 21) ---------------------------------------------------

kwire.FLEXIBLE_FROM.update({50: 0, 51: 0})


def _scram_alter(c, ups=(), dels=()):
    w = kwire.Writer()
    w.array(dels, lambda w, d: w.string(d[0], True).i8(d[1]).tags(), True)
    w.array(ups, lambda w, u: w.string(u[0], True).i8(u[1]).i32(u[2])
            .blob(b"0123456789abcdef", True).blob(b"p" * 32, True).tags(),
            True)
    w.tags()
    r = c.request_raw(51, 0, w.bytes(), timeout=T(30))
    r.i32()
    res = r.array(lambda rr: (rr.string(True), rr.i16(),
                              rr.string(True, True), rr.tags())[:3], True)
    return sorted(res, key=lambda x: x[0])


def _scram_describe(c, users):
    w = kwire.Writer()
    w.array(users, lambda w, u: w.string(u, True).tags(), True)
    w.tags()
    r = c.request_raw(50, 0, w.bytes(), timeout=T(30))
    r.i32()
    top = (r.i16(), r.string(True, True))
    res = r.array(lambda rr: (rr.string(True), rr.i16(), rr.string(True, True),
                              rr.array(lambda r3: (r3.i8(), r3.i32(),
                                                   r3.tags())[:2], True),
                              rr.tags())[:4], True)
    return top, sorted(res, key=lambda x: x[0])


@pytest.mark.parametrize("what,ups,dels", [
    ("set two users", [("diff-u1", 1, 4096), ("diff-u2", 2, 16384)], []),
    ("iterations out of range", [("diff-few", 1, 4095),
                                 ("diff-many", 2, 16385)], []),
    ("empty name and unknown mechanism", [("", 1, 4096),
                                          ("diff-mech", 3, 4096)], []),
    ("user twice", [("diff-twice", 1, 4096), ("diff-twice", 2, 4096)], []),
    ("delete missing", [], [("diff-nobody", 1)]),
    ("delete then set", [("diff-u1", 1, 8192)], [("diff-u1", 1)]),
])
def test_alter_user_scram_credentials(aenv, what, ups, dels):
    compare("AlterUserScramCredentials v0 " + what, aenv,
            lambda c: _scram_alter(c, ups, dels))


def test_describe_user_scram_credentials(aenv):
    for c in aenv.connect():
        with c:
            _scram_alter(c, [("diff-d1", 2, 8192)])
    compare("DescribeUserScramCredentials v0", aenv,
            lambda c: _scram_describe(c, ["diff-d1", "diff-none",
                                          "diff-dup", "diff-dup"]))


def test_known_differences_documented():
    missing = diffkit.undocumented(KNOWN)
    assert not missing, ("docs/COMPATIBILITY.md does not list (as `CASE: PATH`):\n  "
                         + "\n  ".join(missing))


# -- DescribeAcls, CreateAcls, DeleteAcls (no authorizer on either) ---------------

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
kwire.FLEXIBLE_FROM.update({DESCRIBE_ACLS: 2, CREATE_ACLS: 2, DELETE_ACLS: 2})


def _acl_filter(w):
    # TOPIC, any name, LITERAL, any principal and host, ANY op, ANY perm
    w.i8(2).string(None).i8(3).string(None).string(None).i8(1).i8(1)


def test_acl_apis_without_authorizer(aenv):
    """Both answer SECURITY_DISABLED, with the same messages (v1)."""
    def go(c):
        w = kwire.Writer()
        _acl_filter(w)
        r = c.request_raw(DESCRIBE_ACLS, 1, w.bytes(), T(30))
        r.i32()
        describe = {"error": r.i16(), "message": r.string(nullable=True),
                    "resources": r.array(lambda rr: rr.i8())}
        w = kwire.Writer().array([0], lambda ww, _: (
            ww.i8(2).string("diff-acl").i8(3).string("User:x").string("*")
            .i8(3).i8(3)))
        r = c.request_raw(CREATE_ACLS, 1, w.bytes(), T(30))
        r.i32()
        create = r.array(lambda rr: (rr.i16(), rr.string(nullable=True)))
        w = kwire.Writer().array([0], lambda ww, _: _acl_filter(ww))
        r = c.request_raw(DELETE_ACLS, 1, w.bytes(), T(30))
        r.i32()
        delete = r.array(lambda rr: (rr.i16(), rr.string(nullable=True),
                                     rr.array(lambda x: x.i16())))
        return {"describe": describe, "create": create, "delete": delete}
    compare("ACL APIs v1 without an authorizer", aenv, go)

"""The same raw-protocol requests to Apache Kafka 4.4 and samsa-server,
their answers compared field by field (tests/diff/diffkit.py masks what
legitimately differs: ids, clocks, addresses, epochs, throttling, and
the wording of error messages, compared only as present or null).

Each case uses the highest version both brokers serve and kwire encodes
(and v0 where that is a different shape).  Every remaining difference is
listed in KNOWN with its reason, and in docs/COMPATIBILITY.md
("Differences found by tests/diff"); an unlisted one fails the test, and
so does a listed one that is gone.
"""

import time

import pytest

import diffkit
import kwire
from kwire import Writer
from samsa_harness import T

TOPIC = "diff-t"            # 2 partitions on both, 3 records in partition 0
TS = (1000000, 2000000, 3000000)

# the highest version of each API that kwire (or this file) encodes
KWIRE_MAX = {0: 11, 1: 16, 2: 9, 3: 12, 10: 4, 11: 9, 19: 7, 20: 6, 22: 5, 32: 4}
NO_SUCH = "diff-no-such-topic"

FIND_COORDINATOR, JOIN_GROUP = 10, 11
kwire.FLEXIBLE_FROM.update({FIND_COORDINATOR: 3, JOIN_GROUP: 6})

NEW_TOPIC_CONFIGS = ("a topic config that newer Kafka releases added and "
                     "Samsa does not have (yet)")
MIN_ISR = ("Kafka's StorageTool, with eligible.leader.replicas.version=1, stores "
           "a cluster-level min.insync.replicas (ELR, KIP-966): the source is "
           "DYNAMIC_DEFAULT_BROKER_CONFIG; Samsa has no such record")


def _topic_config_diffs(case, path, src, describe_version=None):
    """The topic-config differences every answer that lists a new topic's
    configs shows (CreateTopics v5+, DescribeConfigs)."""
    def absent(value, ctype):
        e = {"value": value, "read_only": False, src: 5, "is_sensitive": False}
        if describe_version is not None:
            e = {"value": value, "read_only": False, "is_default": None, src: 5,
                 "is_sensitive": False, "synonyms": [], "documentation": None}
            if describe_version >= 3:
                e["config_type"] = ctype
        return (e, diffkit.MISSING, NEW_TOPIC_CONFIGS)
    return {
        "%s: %s.errors.deadletterqueue.group.enable" % (case, path): absent("false", 1),
        "%s: %s.max.decompressed.message.bytes" % (case, path): absent("2147483639", 3),
        "%s: %s.remote.copy.lag.bytes" % (case, path): absent("-1", 5),
        "%s: %s.remote.copy.lag.ms" % (case, path): absent("0", 5),
        "%s: %s.min.insync.replicas.%s" % (case, path, src): (3, 5, MIN_ISR),
    }


# 'CASE: PATH' -> (Kafka's value, Samsa's value, why)
KNOWN = {
    "Fetch v16 out-of-range offset: topics[0].partitions[0].high_watermark": (
        -1, 3, "on OFFSET_OUT_OF_RANGE Kafka sends -1 offsets (UNKNOWN_OFFSET); "
        "Samsa sends the partition's real ones (h_Fetch.c fills them on "
        "purpose); the error code is the same"),
    "Fetch v16 out-of-range offset: topics[0].partitions[0].last_stable_offset": (
        -1, 3, "as high_watermark"),
    "Fetch v16 out-of-range offset: topics[0].partitions[0].log_start_offset": (
        -1, 0, "as high_watermark"),
    "Fetch v4 out-of-range offset: topics[0].partitions[0].high_watermark": (
        -1, 3, "as in v16"),
    "Fetch v4 out-of-range offset: topics[0].partitions[0].last_stable_offset": (
        -1, 3, "as in v16"),
    "Fetch v4 unknown topic: topics[0].partitions[0].aborted_transactions": (
        [], None, "for an unknown topic Kafka sends an empty aborted_transactions "
        "list (the field's default; for the other errors null); Samsa sends "
        "null for every partition with an error"),
    "Fetch v16 unknown topic: topics[0].partitions[0].aborted_transactions": (
        [], None, "as in v4"),
    "Produce v11 bad CRC: topics[0].partitions[0].error_message": (
        None, "<text>", "Kafka sends no message with CORRUPT_MESSAGE; Samsa sends "
        "one (the error code is the same)"),
    "Produce v11 oversize batch: topics[0].partitions[0].error_message": (
        None, "<text>", "Kafka sends no message with MESSAGE_TOO_LARGE; Samsa "
        "sends one (the error code is the same)"),
}
KNOWN.update(_topic_config_diffs("CreateTopics v7 valid", "topics[0].configs",
                                 "config_source"))
KNOWN.update(_topic_config_diffs("CreateTopics v7 validate_only", "topics[0].configs",
                                 "config_source"))
for _v in (1, 4):
    KNOWN.update(_topic_config_diffs("DescribeConfigs v%d topic" % _v,
                                     "results[0].configs", "source", _v))



# -- helpers -------------------------------------------------------------------

@pytest.fixture(scope="module")
def env(pair):
    """The pair, with TOPIC on both and the highest common versions."""
    ka, sa = pair.connect()
    with ka, sa:
        pair.hi, pair.lo = diffkit.common_versions(ka, sa, KWIRE_MAX)
        for c in (ka, sa):
            r = c.create_topic(TOPIC, num_partitions=2)
            assert r["error_code"] == 0, r
            c.wait_topic(TOPIC, partitions=2, timeout=T(30))
            batch = kwire.encode_batch([kwire.Record(b"v%d" % i, timestamp=t)
                                        for i, t in enumerate(TS)])
            # Kafka's leader may not have the partition yet right after
            # Metadata shows it: NOT_LEADER_OR_FOLLOWER for a moment
            deadline = time.monotonic() + T(30)
            while True:
                p = c.produce(TOPIC, 0, batch)
                if p["error_code"] != 6 or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert p["error_code"] == 0, p
        for c in (ka, sa):
            group_coordinator_ready(c)
    print("versions used: highest %s, lowest %s" % (pair.hi, pair.lo))
    return pair


# Produce v0-v2 are listed by both but answered by closing the connection
# (test_produce_v0_closes): the lowest one with an answer is v3
LOWEST_ANSWERED = {0: 3}


def versions(env, api):
    """The lowest and the highest version of api that both serve."""
    return sorted({max(env.lo[api], LOWEST_ANSWERED.get(api, 0)), env.hi[api]})


def each_version(env, api, check, which=None):
    """check(v) for the lowest and the highest common version (or those
    in which); fails after all ran, with every version's report."""
    diffkit.each_version(which or versions(env, api), check)


def both(env, fn):
    return diffkit.both(env, fn)


def compare(case, env, fn, **mask_kw):
    return diffkit.compare_pair(case, env, fn, KNOWN, **mask_kw)


def request(c, api, version, body):
    return c.request(api, version, body, timeout=T(10))


# -- Metadata --------------------------------------------------------------------

@pytest.mark.parametrize("what,names", [
    ("existing topic", [TOPIC]),
    ("unknown topic", [NO_SUCH]),
    ("invalid topic name", ["bad/name"]),
])
def test_metadata(env, what, names):
    def check(v):
        kw = {"allow_auto_topic_creation": False} if v >= 4 else {}
        compare("Metadata v%d %s" % (v, what), env,
                lambda c: c.metadata(v, names, timeout=T(10), **kw))
    each_version(env, 3, check)


def test_metadata_all_topics(env):
    """All topics (null list; [] in v0): TOPIC and __consumer_offsets (one
    partition on both), sorted by name; topics that other tests create
    are left out."""
    def check(v):
        def md(c):
            r = c.metadata(v, None if v >= 1 else [], timeout=T(10),
                           **({"allow_auto_topic_creation": False} if v >= 4 else {}))
            r["topics"] = sorted((t for t in r["topics"]
                                  if t["name"] in (TOPIC, "__consumer_offsets")),
                                 key=lambda t: t["name"])
            return r
        compare("Metadata v%d all topics" % v, env, md)
    each_version(env, 3, check)


# -- CreateTopics, DeleteTopics ---------------------------------------------------

def create(env, case, topic, validate_only=False):
    """CreateTopics of one topic (a dict; its name gets "-v<N>" unless it
    is TOPIC) at each common version."""
    def check(v):
        t = dict(topic)
        if t["name"] != TOPIC:
            t["name"] = "%s-v%d" % (t["name"], v)

        def create(c):
            r = c.create_topics([t], version=v, validate_only=validate_only,
                                timeout=T(30))
            for x in r["topics"]:       # the created topic's configs by name
                if x.get("configs") is not None:
                    x["configs"] = {e.pop("name"): e for e in x["configs"]}
                if x["name"] == t["name"]:
                    x["name"] = topic["name"]
            return r
        compare("CreateTopics v%d %s" % (v, case), env, create)
        if validate_only:               # and nothing was created
            compare("Metadata v%d after validate_only" % env.hi[3], env,
                    lambda c: c.metadata(env.hi[3], [t["name"]],
                                         allow_auto_topic_creation=False),
                    extra={"name": lambda n: topic["name"] if n == t["name"] else n})
    each_version(env, 19, check)


def test_create_topics_valid(env):
    create(env, "valid", {"name": "diff-created", "num_partitions": 3,
                          "replication_factor": 1})


def test_create_topics_duplicate(env):
    create(env, "duplicate", {"name": TOPIC, "num_partitions": 1})


def test_create_topics_invalid_name(env):
    create(env, "invalid name", {"name": "bad name!", "num_partitions": 1})


def test_create_topics_bad_config_value(env):
    create(env, "bad config value", {"name": "diff-badcfg", "num_partitions": 1,
                                     "configs": {"retention.ms": "abc"}})


def test_create_topics_unknown_config(env):
    create(env, "unknown config", {"name": "diff-unknowncfg", "num_partitions": 1,
                                   "configs": {"no.such.config": "1"}})


def test_create_topics_bad_partition_count(env):
    create(env, "bad partition count", {"name": "diff-badparts", "num_partitions": 0})


def test_create_topics_bad_replication_factor(env):
    create(env, "bad replication factor", {"name": "diff-badrf", "num_partitions": 1,
                                           "replication_factor": 3})


def test_create_topics_validate_only(env):
    create(env, "validate_only", {"name": "diff-validate", "num_partitions": 2},
           validate_only=True)


def test_delete_topics_unknown(env):
    def check(v):
        compare("DeleteTopics v%d unknown" % v, env,
                lambda c: request(c, 20, v, kwire.encode_delete_topics_request(v, [NO_SUCH])))
    each_version(env, 20, check)


# -- Produce ---------------------------------------------------------------------

def produce(env, case, topic, partition, records, acks=-1):
    def check(v):
        compare("Produce v%d %s" % (v, case), env,
                lambda c: request(c, 0, v, kwire.encode_produce_request(
                    v, [(topic, [(partition, records)])], acks=acks)))
    each_version(env, 0, check)


def one_batch(value=b"x"):
    return kwire.encode_batch([kwire.Record(value, timestamp=TS[0])])


def test_produce_unknown_partition(env):
    produce(env, "unknown partition", TOPIC, 99, one_batch())


def test_produce_unknown_topic(env):
    produce(env, "unknown topic", NO_SUCH, 0, one_batch())


def test_produce_bad_crc(env):
    produce(env, "bad CRC", TOPIC, 1,
            kwire.encode_batch([kwire.Record(b"x", timestamp=TS[0])], crc=0x12345678))


def test_produce_oversize_batch(env):
    # one record over message.max.bytes (1048588 by default on both)
    produce(env, "oversize batch", TOPIC, 1, one_batch(b"x" * (1100 * 1024)))


def test_produce_v0_closes(env):
    """Produce v0-v2: both list them (librdkafka compresses only when v0
    is listed) and both close the connection without an answer."""
    body = kwire.encode_produce_request(0, [(TOPIC, [(1, one_batch())])])

    def send(c):
        c.send(kwire.encode_request(0, 0, c.corr(), body, c.client_id))
        closed, data = c.wait_closed(T(10))
        return {"closed": closed, "bytes before the close": len(data)}
    compare("Produce v0", env, send)


def test_produce_invalid_acks(env):
    produce(env, "acks=2", TOPIC, 1, one_batch(), acks=2)


# -- ListOffsets, Fetch ----------------------------------------------------------------

@pytest.mark.parametrize("what,ts", [
    ("earliest", kwire.TS_EARLIEST), ("latest", kwire.TS_LATEST),
    ("max timestamp", kwire.TS_MAX_TIMESTAMP),
    ("by time", TS[1]), ("by time before all", 1), ("by time after all", TS[2] + 1),
])
def test_list_offsets(env, what, ts):
    def check(v):
        if ts == kwire.TS_MAX_TIMESTAMP and v < 7:
            return                      # MAX_TIMESTAMP is v7+ (KIP-734)
        compare("ListOffsets v%d %s" % (v, what), env,
                lambda c: request(c, 2, v, kwire.encode_list_offsets_request(
                    v, [(TOPIC, [(0, ts)])])),
                keys=diffkit.MASK_KEYS - {"timestamp"})
    each_version(env, 2, check)


@pytest.mark.parametrize("what,topic,part", [
    ("unknown partition", TOPIC, 99), ("unknown topic", NO_SUCH, 0)])
def test_list_offsets_unknown(env, what, topic, part):
    def check(v):
        compare("ListOffsets v%d %s" % (v, what), env,
                lambda c: request(c, 2, v, kwire.encode_list_offsets_request(
                    v, [(topic, [(part, kwire.TS_LATEST)])])))
    each_version(env, 2, check)


def test_fetch_out_of_range(env):
    def check(v):
        def fetch(c):
            ref = TOPIC
            if v >= 13:
                ref = c.topic_metadata(TOPIC)["topic_id"]
            return request(c, 1, v, kwire.encode_fetch_request(
                v, [(ref, [(0, 1000, 1 << 20)])], max_wait_ms=0))
        compare("Fetch v%d out-of-range offset" % v, env, fetch)
    each_version(env, 1, check)


def test_fetch_unknown_topic(env):
    def check(v):
        ref = NO_SUCH if v < 13 else b"\x5a" * 16
        compare("Fetch v%d unknown topic" % v, env,
                lambda c: request(c, 1, v, kwire.encode_fetch_request(
                    v, [(ref, [(0, 0, 1 << 20)])], max_wait_ms=0)))
    each_version(env, 1, check)


# -- DescribeConfigs ---------------------------------------------------------------

def configs_by_name(resp):
    """The answer with each result's configs as {name: entry}, the
    documentation reduced to present/null."""
    for res in resp["results"]:
        res["configs"] = {e.pop("name"): dict(e, documentation=diffkit.text_or_null(
            e.get("documentation"))) for e in res["configs"]}
    return resp


@pytest.mark.parametrize("what,name", [("topic", TOPIC), ("unknown topic", NO_SUCH)])
def test_describe_configs(env, what, name):
    def check(v):
        compare("DescribeConfigs v%d %s" % (v, what), env,
                lambda c: configs_by_name(request(
                    c, 32, v, kwire.encode_describe_configs_request(
                        v, [(kwire.RESOURCE_TOPIC, name, None)]))))
    each_version(env, 32, check)


# -- FindCoordinator, JoinGroup -------------------------------------------------------

def find_coordinator(c, version, key, key_type=0):
    """FindCoordinator, retried while the coordinator is loading (Kafka
    creates __consumer_offsets on the first lookup)."""
    deadline = time.monotonic() + T(30)
    while True:
        w = Writer()
        if version >= 4:
            w.i8(key_type).array([key], lambda ww, k: ww.string(k, True), True).tags()
        else:
            w.string(key, flexible=version >= 3)
            if version >= 1:
                w.i8(key_type)
            if version >= 3:
                w.tags()
        r = c.request_raw(FIND_COORDINATOR, version, w.bytes(), T(10))
        flex = version >= 3
        out = {"throttle_time_ms": r.i32() if version >= 1 else 0}
        if version >= 4:
            def coord(rr):
                x = {"key": rr.string(flexible=True), "node_id": rr.i32(),
                     "host": rr.string(flexible=True), "port": rr.i32(),
                     "error_code": rr.i16(),
                     "error_message": rr.string(flexible=True, nullable=True)}
                rr.tags()
                return x
            out["coordinators"] = r.array(coord, flexible=True)
            err = out["coordinators"][0]["error_code"]
        else:
            out["error_code"] = err = r.i16()
            if version >= 1:
                out["error_message"] = r.string(flexible=flex, nullable=True)
            out.update(node_id=r.i32(), host=r.string(flexible=flex), port=r.i32())
        if flex:
            out["tags"] = r.tags()
        r.done("FindCoordinator v%d" % version)
        if err != kwire.ERR_COORDINATOR_NOT_AVAILABLE or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def group_coordinator_ready(c):
    """Waits until the group coordinator answers for good: right after
    Kafka creates __consumer_offsets its coordinator is still loading the
    partition, and a Heartbeat of an unknown group then gets NONE instead
    of UNKNOWN_MEMBER_ID (seen here under load).  Samsa answers at once."""
    find_coordinator(c, 0, "diff-warm-up")
    deadline = time.monotonic() + T(30)
    while True:
        w = Writer().string("diff-warm-up").i32(1).string("diff-nobody")
        r = c.request_raw(12, 0, w.bytes(), T(10))      # Heartbeat v0
        err = r.i16()
        if err == 25 or time.monotonic() > deadline:
            assert err == 25, "Heartbeat of an unknown group: error %d" % err
            return
        time.sleep(0.1)


def test_find_coordinator(env):
    # v0, the last single-key version, the batched one; the error message
    # on success is Errors.NONE's, not free text: compared exactly
    for v in sorted({env.hi[10], 3, 0}):
        compare("FindCoordinator v%d group" % v, env,
                lambda c: find_coordinator(c, v, "diff-group"), texts=())


def test_find_coordinator_empty_key(env):
    """An empty group id or transactional id: Kafka names its coordinator
    (JoinGroup and InitProducerId then reject it); Samsa answered
    INVALID_REQUEST until tests/diff found it."""
    def check(v):
        for kt, what in ((0, "group id"), (1, "transactional id")):
            compare("FindCoordinator v%d empty %s" % (v, what), env,
                    lambda c: find_coordinator(c, v, "", key_type=kt))
    each_version(env, 10, check, sorted({env.hi[10], 3, 1}))


def join_group(c, version, group, member_id):
    flex = version >= 6
    meta = Writer().i16(0).array([TOPIC], lambda ww, t: ww.string(t)).blob(b"").bytes()
    w = Writer().string(group, flex).i32(10000)
    if version >= 1:
        w.i32(10000)
    w.string(member_id, flex)
    if version >= 5:
        w.string(None, flex)
    w.string("consumer", flex)

    def proto(ww, p):
        ww.string(p, flex).blob(meta, flex)
        if flex:
            ww.tags()
    w.array(["range"], proto, flex)
    if version >= 8:
        w.string(None, flex)
    if flex:
        w.tags()
    r = c.request_raw(JOIN_GROUP, version, w.bytes(), T(20))
    out = {"throttle_time_ms": r.i32() if version >= 2 else 0, "error_code": r.i16(),
           "generation_id": r.i32()}
    if version >= 7:
        out["protocol_type"] = r.string(flex, nullable=True)
    out["protocol_name"] = r.string(flex, nullable=True)
    out["leader"] = r.string(flex)
    if version >= 9:
        out["skip_assignment"] = r.boolean()
    out["member_id"] = r.string(flex)

    def member(rr):
        m = {"member_id": rr.string(flex)}
        if version >= 5:
            m["group_instance_id"] = rr.string(flex, nullable=True)
        m["metadata"] = rr.blob(flex)
        if flex:
            rr.tags()
        return m
    out["members"] = r.array(member, flex)
    if flex:
        out["tags"] = r.tags()
    r.done("JoinGroup v%d" % version)
    return out


def test_join_group_member_id_rules(env):
    """An unknown member id, an empty one (v4+: MEMBER_ID_REQUIRED with an
    id to use; before v4 a plain join), the returned id, and a rejoin of
    the group's only member."""
    def check(v):
        group = "diff-join-v%d" % v

        def rules(c):
            find_coordinator(c, env.hi[10], group)
            out = {"unknown member id": join_group(c, v, group, "diff-no-such-member"),
                   "empty member id": join_group(c, v, group, "")}
            mid = out["empty member id"]["member_id"]
            out["returned member id, is it non-empty"] = bool(mid)
            j = join_group(c, v, group, mid)
            out["returned member id"] = j
            out["leader is the member"] = j["leader"] == mid
            out["rejoin"] = join_group(c, v, group, mid)
            return out
        compare("JoinGroup v%d" % v, env, rules)
    each_version(env, 11, check)


def test_join_group_empty_group_id(env):
    v = env.hi[11]
    compare("JoinGroup v%d empty group id" % v, env,
            lambda c: join_group(c, v, "", ""))


# -- InitProducerId -------------------------------------------------------------------

def init_pid(c, v, **kw):
    # Kafka's broker first fetches a block of producer ids from its
    # controller (and loads the transaction coordinator):
    # COORDINATOR_LOAD_IN_PROGRESS / NOT_AVAILABLE until then
    deadline = time.monotonic() + T(30)
    while True:
        r = kwire.init_producer_id(c, version=v, **kw)
        if r["error_code"] not in (14, 15) or time.monotonic() > deadline:
            return r
        time.sleep(0.1)


def test_init_producer_id_idempotent(env):
    def check(v):
        compare("InitProducerId v%d idempotent" % v, env, lambda c: init_pid(c, v))
    each_version(env, 22, check)


def test_init_producer_id_empty_transactional_id(env):
    def check(v):
        compare("InitProducerId v%d empty transactional id" % v, env,
                lambda c: init_pid(c, v, transactional_id=""))
    each_version(env, 22, check)


def test_init_producer_id_transactional(env):
    def check(v):
        def init(c):
            find_coordinator(c, env.hi[10], "diff-txn-v%d" % v, key_type=1)
            return {"first": init_pid(c, v, transactional_id="diff-txn-v%d" % v),
                    "again": init_pid(c, v, transactional_id="diff-txn-v%d" % v)}
        compare("InitProducerId v%d transactional" % v, env, init)
    each_version(env, 22, check)


def test_known_differences_documented():
    missing = diffkit.undocumented(KNOWN)
    assert not missing, ("docs/COMPATIBILITY.md does not list (as `CASE: PATH`):\n  "
                         + "\n  ".join(missing))

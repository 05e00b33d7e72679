"""The `samsa group` commands against samsa-server, with offsets committed
by confluent_kafka and kafka-python and read back by them:

- `group describe`: lag = log end offset - committed offset for every
  partition (committed by confluent_kafka and by kafka-python; the log end
  offsets checked against confluent_kafka's watermarks); a live
  confluent_kafka member with its assignment decoded from the consumer
  protocol;
- `group reset-offsets`: --dry-run changes nothing (OffsetFetch through
  kafka-python shows the old offsets), --execute changes what OffsetFetch
  shows, for --to-earliest, --to-latest, --to-offset, --to-datetime,
  --shift-by, --topic T:P and --all-topics; refused with exit 1 while the
  group has a member;
- `group list` (with --state), `group delete-offsets`, `group delete`, and
  an unknown group.
"""

import time

import pytest

from cli_util import ok, run
from samsa_harness import T


@pytest.fixture(scope="module")
def srv(samsa_module):
    return samsa_module.start(overrides={
        "group.initial.rebalance.delay.ms": "0",
        "group.min.session.timeout.ms": "1000"})


def produce(bs, topic, partition, n, prefix="v"):
    lines = "".join("%s%d\n" % (prefix, i) for i in range(n))
    ok("produce", topic, "--partition", partition, stdin=lines, bootstrap=bs)


def commit_confluent(bs, group, offsets):
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bs, "group.id": group,
                  "enable.auto.commit": False})
    c.commit(offsets=[TopicPartition(t, p, o) for (t, p), o
                      in offsets.items()], asynchronous=False)
    c.close()


def kp_consumer(bs, group):
    from kafka import KafkaConsumer
    return KafkaConsumer(bootstrap_servers=bs, group_id=group,
                         enable_auto_commit=False,
                         api_version_auto_timeout_ms=int(T(10) * 1000))


def commit_kafka_python(bs, group, offsets):
    from kafka import TopicPartition
    from kafka.structs import OffsetAndMetadata
    c = kp_consumer(bs, group)
    c.commit({TopicPartition(t, p): OffsetAndMetadata(o, "")
              for (t, p), o in offsets.items()})
    c.close()


def committed_kafka_python(bs, group, tps):
    """OffsetFetch through kafka-python: {(topic, partition): offset}."""
    from kafka import TopicPartition
    c = kp_consumer(bs, group)
    out = {(t, p): c.committed(TopicPartition(t, p)) for t, p in tps}
    c.close()
    return out


def watermarks(bs, topic, partition):
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bs, "group.id": "wm"})
    lo, hi = c.get_watermark_offsets(TopicPartition(topic, partition), T(10))
    c.close()
    return lo, hi


def describe(bs, group):
    d = ok("group", "describe", group, "--json", bootstrap=bs).json()
    assert len(d) == 1 and d[0]["group_id"] == group
    return d[0]


@pytest.mark.parametrize("committer", ["confluent_kafka", "kafka_python"])
def test_describe_lag_is_log_end_minus_committed(srv, committer):
    bs = srv.bootstrap()
    topic = "lag-" + committer
    ok("topic", "create", topic, "-p", "3", bootstrap=bs)
    produce(bs, topic, 0, 10)
    produce(bs, topic, 1, 7)
    produce(bs, topic, 2, 3)
    group = "g-" + committer
    want = {(topic, 0): 4, (topic, 1): 7, (topic, 2): 0}
    (commit_confluent if committer == "confluent_kafka"
     else commit_kafka_python)(bs, group, want)

    g = describe(bs, group)
    assert g["state"] == "Empty" and g["members"] == []
    rows = {(o["topic"], o["partition"]): o for o in g["offsets"]}
    assert set(rows) == set(want)
    for (t, p), committed in want.items():
        leo = watermarks(bs, t, p)[1]
        o = rows[(t, p)]
        assert o["committed_offset"] == committed
        assert o["log_end_offset"] == leo
        assert o["lag"] == leo - committed
    assert [rows[(topic, p)]["lag"] for p in range(3)] == [6, 0, 3]

    # the table shows the same numbers
    lines = ok("group", "describe", group, bootstrap=bs).out.splitlines()
    hdr = next(i for i, l in enumerate(lines) if l.startswith("TOPIC"))
    assert lines[hdr].split()[:5] == ["TOPIC", "PARTITION", "CURRENT-OFFSET",
                                      "LOG-END-OFFSET", "LAG"]
    table = [l.split()[:5] for l in lines[hdr + 1:] if l.startswith(topic)]
    assert table == [[topic, "0", "4", "10", "6"], [topic, "1", "7", "7", "0"],
                     [topic, "2", "0", "3", "3"]]


def test_live_member_and_reset_refused(srv):
    from confluent_kafka import Consumer
    bs = srv.bootstrap()
    topic, group = "live-t", "live-g"
    ok("topic", "create", topic, "-p", "2", bootstrap=bs)
    produce(bs, topic, 0, 5)
    c = Consumer({"bootstrap.servers": bs, "group.id": group,
                  "client.id": "cli-live", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False,
                  "session.timeout.ms": 6000})
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + T(20)
        while time.monotonic() < deadline and not c.assignment():
            c.poll(0.2)
        assert len(c.assignment()) == 2
        g = describe(bs, group)
        assert g["state"] == "Stable" and g["protocol_type"] == "consumer"
        assert g["protocol"] in ("range", "roundrobin", "cooperative-sticky")
        assert len(g["members"]) == 1
        m = g["members"][0]
        assert m["client_id"] == "cli-live"
        assert m["assignment"] == [{"topic": topic, "partition": 0},
                                   {"topic": topic, "partition": 1}]
        owners = {o["partition"]: o["member_id"] for o in g["offsets"]}
        assert owners == {0: m["member_id"], 1: m["member_id"]}
        lst = ok("group", "list", "--state", "Stable", "--json",
                 bootstrap=bs).json()
        assert group in [x["group_id"] for x in lst]
        r = run("group", "reset-offsets", group, "--topic", topic,
                "--to-latest", "--execute", bootstrap=bs)
        assert r.rc == 1 and "NON_EMPTY_GROUP" in r.err, r
        assert "Stable" in r.err
        r = run("group", "delete", group, bootstrap=bs)
        assert r.rc == 1 and "NON_EMPTY_GROUP" in r.err, r
    finally:
        c.close()
    lst = ok("group", "list", "--state", "Stable", "--json",
             bootstrap=bs).json()
    assert group not in [x["group_id"] for x in lst]
    assert describe(bs, group)["state"] == "Empty"


def test_reset_offsets_dry_run_and_execute(srv):
    bs = srv.bootstrap()
    topic, group = "reset-t", "reset-g"
    ok("topic", "create", topic, "-p", "2", bootstrap=bs)
    produce(bs, topic, 0, 6, "old")
    produce(bs, topic, 1, 4, "old")
    time.sleep(0.05)
    mark = time.time()
    time.sleep(0.05)
    produce(bs, topic, 0, 3, "new")                 # offsets 6, 7, 8
    ok("topic", "delete-records", topic, "--partition", "1", "--before", "1",
       bootstrap=bs)                                # log start of p1 = 1
    tps = [(topic, 0), (topic, 1)]
    commit_confluent(bs, group, {(topic, 0): 5, (topic, 1): 2})
    before = committed_kafka_python(bs, group, tps)
    assert before == {(topic, 0): 5, (topic, 1): 2}

    # a dry run (explicit or by default) shows the plan and changes nothing
    for extra in (["--dry-run"], []):
        plan = ok("group", "reset-offsets", group, "--topic", topic,
                  "--to-earliest", "--json", *extra, bootstrap=bs).json()
        assert plan["executed"] is False
        assert [(p["partition"], p["current_offset"], p["new_offset"])
                for p in plan["partitions"]] == [(0, 5, 0), (1, 2, 1)]
        assert committed_kafka_python(bs, group, tps) == before
    text = ok("group", "reset-offsets", group, "--topic", topic,
              "--to-earliest", bootstrap=bs).out
    assert "Dry run" in text and "NEW-OFFSET" in text

    def execute(*args):
        r = ok("group", "reset-offsets", group, *args, "--execute", "--json",
               bootstrap=bs).json()
        assert r["executed"] is True
        assert all(p["error"] is None for p in r["partitions"])
        return committed_kafka_python(bs, group, tps)

    assert execute("--topic", topic, "--to-earliest") == {
        (topic, 0): 0, (topic, 1): 1}
    assert execute("--topic", topic, "--to-latest") == {
        (topic, 0): 9, (topic, 1): 4}
    # to-offset stays within log start..end
    assert execute("--topic", topic, "--to-offset", "3") == {
        (topic, 0): 3, (topic, 1): 3}
    assert execute("--topic", topic, "--to-offset", "100") == {
        (topic, 0): 9, (topic, 1): 4}
    assert execute("--all-topics", "--shift-by", "-2") == {
        (topic, 0): 7, (topic, 1): 2}
    dt = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(mark)) + \
        ".%03dZ" % int((mark % 1) * 1000)
    # p0: the first "new" record; p1 has nothing that late: its end
    assert execute("--topic", "%s:0,1" % topic, "--to-datetime", dt) == {
        (topic, 0): 6, (topic, 1): 4}
    assert execute("--topic", "%s:1" % topic, "--to-offset", "2") == {
        (topic, 0): 6, (topic, 1): 2}
    g = describe(bs, group)
    assert {o["partition"]: o["lag"] for o in g["offsets"]} == {0: 3, 1: 2}

    r = run("group", "reset-offsets", group, "--topic", "no-such-topic",
            "--to-earliest", bootstrap=bs)
    assert r.rc == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in r.err, r


def test_list_delete_offsets_delete_unknown(srv):
    bs = srv.bootstrap()
    topic, group = "del-t", "del-g"
    ok("topic", "create", topic, "-p", "2", bootstrap=bs)
    produce(bs, topic, 0, 2)
    commit_confluent(bs, group, {(topic, 0): 1, (topic, 1): 0})
    lst = ok("group", "list", "--json", bootstrap=bs).json()
    mine = [x for x in lst if x["group_id"] == group]
    assert mine and mine[0]["state"] == "Empty" and mine[0]["coordinator"] == 1
    assert group in ok("group", "list", bootstrap=bs).out
    assert group not in ok("group", "list", "--state", "Stable",
                           bootstrap=bs).out

    ok("group", "delete-offsets", group, "--topic", "%s:1" % topic,
       bootstrap=bs)
    assert committed_kafka_python(bs, group, [(topic, 0), (topic, 1)]) == {
        (topic, 0): 1, (topic, 1): None}

    r = ok("group", "delete", group, "--json", bootstrap=bs).json()
    assert r == [{"group_id": group, "error": None}]
    assert group not in [x["group_id"] for x in
                         ok("group", "list", "--json", bootstrap=bs).json()]
    r = run("group", "describe", group, bootstrap=bs)
    assert r.rc == 1 and "GROUP_ID_NOT_FOUND" in r.err, r
    r = run("group", "delete", "never-was", bootstrap=bs)
    assert r.rc == 1 and "GROUP_ID_NOT_FOUND" in r.err, r

"""Kafka's own command-line tools (kafka-tools 4.4.0, run by
scripts/kafka-tool from the jars scripts/deps.sh fetched) against one
samsa-server shared by the module, each checked on its output:

- kafka-topics --create/--list/--describe/--alter --partitions/--delete;
- kafka-configs --describe/--alter (--add-config, --delete-config) for a
  topic and for the broker, --all; client-id quotas;
- kafka-console-producer -> kafka-console-consumer (keys), then
  kafka-consumer-groups --list/--describe/--reset-offsets --execute/
  --delete-offsets/--delete on the console consumer's group;
- kafka-producer-perf-test and kafka-consumer-perf-test with small counts
  (their summary lines);
- kafka-get-offsets (latest, earliest) and kafka-delete-records;
- kafka-transactions list/describe/describe-producers/find-hanging after a
  transactional kafka-producer-perf-test.

(kafka-client-metrics needs ListConfigResources, which samsa does not
serve: not tested; kafka-configs --entity-type users (SCRAM credentials)
is tested in test_sasl.py.)  A missing java or jar fails, never skips.
"""

import json
import re

import pytest

import samsa_harness
from javakit import kafka_tool
from samsa_harness import T


@pytest.fixture(scope="module")
def srv(samsa_module):
    # classic groups form at once (not after Kafka's 3 s initial delay)
    return samsa_module.start({"group.initial.rebalance.delay.ms": "0"})


@pytest.fixture(scope="module")
def bs(srv):
    return ["--bootstrap-server", srv.bootstrap()]


def topics_list(bs):
    return kafka_tool("kafka-topics", *bs, "--list").out.split()


def create(bs, topic, parts=1, *extra):
    r = kafka_tool("kafka-topics", *bs, "--create", "--topic", topic,
                   "--partitions", parts, *extra)
    assert r.out.strip() == "Created topic %s." % topic, r


def describe(bs, topic):
    """kafka-topics --describe: (the topic line's fields, partition lines' fields)."""
    r = kafka_tool("kafka-topics", *bs, "--describe", "--topic", topic)
    lines = [l for l in r.out.splitlines() if l.strip()]
    fields = lambda l: dict(re.findall(r"(\w+): ?([^\t]*)", l))
    return fields(lines[0]), [fields(l) for l in lines[1:]], r


def test_topics(bs):
    t = "kt-topics"
    create(bs, t, 2, "--config", "retention.ms=100000")
    assert t in topics_list(bs)
    head, parts, r = describe(bs, t)
    assert head["Topic"] == t and head["PartitionCount"] == "2", r
    assert head["ReplicationFactor"] == "1" and head["Configs"] == "retention.ms=100000", r
    assert re.fullmatch(r"[\w-]{22}", head["TopicId"]), r
    assert [(p["Partition"], p["Leader"], p["Replicas"], p["Isr"]) for p in parts] == \
        [("0", "1", "1", "1"), ("1", "1", "1", "1")], r
    r = kafka_tool("kafka-topics", *bs, "--alter", "--topic", t, "--partitions", 4)
    head, parts, r = describe(bs, t)
    assert head["PartitionCount"] == "4" and [p["Partition"] for p in parts] == list("0123"), r
    # an existing topic, an unknown one
    r = kafka_tool("kafka-topics", *bs, "--create", "--topic", t, "--partitions", 1, check=False)
    assert r.rc == 1 and "TopicExistsException" in r.out + r.err, r
    r = kafka_tool("kafka-topics", *bs, "--describe", "--topic", "kt-nope", check=False)
    assert r.rc == 1 and "Topic 'kt-nope' does not exist" in r.out + r.err, r
    kafka_tool("kafka-topics", *bs, "--delete", "--topic", t)
    samsa_harness.wait_until(lambda: t not in topics_list(bs), T(10))


def configs(bs, kind, name, *args):
    return kafka_tool("kafka-configs", *bs, "--entity-type", kind, "--entity-name", name, *args)


def dynamic_configs(r):
    """kafka-configs --describe lines: {key: (value, first synonym)}."""
    out = {}
    for l in r.out.splitlines():
        m = re.match(r"^  (\S+?)=(.*?) sensitive=(?:true|false) synonyms=\{(.*)\}$", l)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3).split(", ")[0])
    return out


def test_configs_topic(bs):
    t = "kt-configs"
    create(bs, t)
    r = configs(bs, "topics", t, "--alter", "--add-config",
                "retention.ms=200000,cleanup.policy=compact")
    assert r.out.strip() == "Completed updating config for topic %s." % t, r
    r = configs(bs, "topics", t, "--describe")
    assert r.out.startswith("Dynamic configs for topic %s are:" % t), r
    assert dynamic_configs(r) == {
        "retention.ms": ("200000", "DYNAMIC_TOPIC_CONFIG:retention.ms=200000"),
        "cleanup.policy": ("compact", "DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact"),
    }, r
    assert "DEFAULT_CONFIG:log.cleanup.policy=delete}" in r.out, r
    configs(bs, "topics", t, "--alter", "--delete-config", "retention.ms")
    r = configs(bs, "topics", t, "--describe")
    assert list(dynamic_configs(r)) == ["cleanup.policy"], r
    # --all: every topic config, defaults included
    r = configs(bs, "topics", t, "--describe", "--all")
    allc = dynamic_configs(r)
    assert allc["cleanup.policy"][0] == "compact", r
    assert allc["retention.ms"][0] == "604800000", r
    assert len(allc) > 20, r


def test_configs_broker(bs):
    r = configs(bs, "brokers", "1", "--alter", "--add-config", "log.cleaner.threads=2")
    assert r.out.strip() == "Completed updating config for broker 1.", r
    r = configs(bs, "brokers", "1", "--describe")
    assert r.out.startswith("Dynamic configs for broker 1 are:"), r
    assert dynamic_configs(r) == {"log.cleaner.threads": (
        "2", "DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2")}, r
    assert "DEFAULT_CONFIG:log.cleaner.threads=1}" in r.out, r
    r = configs(bs, "brokers", "1", "--describe", "--all")
    allc = dynamic_configs(r)
    assert allc["num.partitions"][0] == "1" and allc["log.cleaner.threads"][0] == "2", r
    assert len(allc) > 50, r
    configs(bs, "brokers", "1", "--alter", "--delete-config", "log.cleaner.threads")
    r = configs(bs, "brokers", "1", "--describe")
    assert dynamic_configs(r) == {}, r


def test_configs_client_quotas(bs):
    r = configs(bs, "clients", "kt-client", "--alter", "--add-config",
                "producer_byte_rate=1024,consumer_byte_rate=2048")
    assert r.out.strip() == "Completed updating config for client kt-client.", r
    r = configs(bs, "clients", "kt-client", "--describe")
    assert r.out.strip() == ("Quota configs for client-id 'kt-client' are "
                             "consumer_byte_rate=2048.0, producer_byte_rate=1024.0"), r
    configs(bs, "clients", "kt-client", "--alter", "--delete-config", "producer_byte_rate")
    r = configs(bs, "clients", "kt-client", "--describe")
    assert r.out.strip() == ("Quota configs for client-id 'kt-client' are "
                             "consumer_byte_rate=2048.0"), r


def group_rows(r):
    """kafka-consumer-groups' table (after its header line) as dicts."""
    lines = [l for l in r.out.splitlines() if l.strip()]
    for i, l in enumerate(lines):
        if l.startswith("GROUP "):
            cols = l.split()
            return [dict(zip(cols, x.split())) for x in lines[i + 1:]]
    return []


def test_console_and_consumer_groups(bs):
    t, g = "kt-console", "kt-console-group"
    create(bs, t)
    r = kafka_tool("kafka-console-producer", *bs, "--topic", t,
                   "--reader-property", "parse.key=true",
                   "--reader-property", "key.separator=:",
                   stdin="a:one\nb:two\nc:three\n")
    r = kafka_tool("kafka-console-consumer", *bs, "--topic", t, "--from-beginning",
                   "--max-messages", 3, "--group", g, "--timeout-ms", 20000,
                   "--formatter-property", "print.key=true",
                   "--formatter-property", "print.offset=true")
    assert r.out.splitlines() == ["Offset:0\ta\tone", "Offset:1\tb\ttwo",
                                  "Offset:2\tc\tthree"], r
    assert "Processed a total of 3 messages" in r.err, r

    cg = lambda *a: kafka_tool("kafka-consumer-groups", *bs, *a)
    assert g in cg("--list").out.split()
    r = cg("--describe", "--group", g)
    rows = group_rows(r)
    assert [(x["TOPIC"], x["PARTITION"], x["CURRENT-OFFSET"], x["LOG-END-OFFSET"], x["LAG"])
            for x in rows] == [(t, "0", "3", "3", "0")], r
    assert "Consumer group '%s' has no active members." % g in r.err, r
    r = cg("--describe", "--group", g, "--state")
    assert [(x["GROUP"], x["STATE"], x["#MEMBERS"]) for x in group_rows(r)] == \
        [(g, "Empty", "0")], r
    # a dry run changes nothing; --execute does
    r = cg("--reset-offsets", "--group", g, "--topic", t, "--to-offset", 1, "--dry-run")
    assert [(x["PARTITION"], x["NEW-OFFSET"]) for x in group_rows(r)] == [("0", "1")], r
    r = cg("--reset-offsets", "--group", g, "--topic", t, "--to-earliest", "--execute")
    assert [(x["TOPIC"], x["PARTITION"], x["NEW-OFFSET"]) for x in group_rows(r)] == \
        [(t, "0", "0")], r
    r = cg("--describe", "--group", g)
    assert [(x["CURRENT-OFFSET"], x["LAG"]) for x in group_rows(r)] == [("0", "3")], r
    # the group reads from its reset offset
    r = kafka_tool("kafka-console-consumer", *bs, "--topic", t, "--max-messages", 3,
                   "--group", g, "--timeout-ms", 20000)
    assert r.out.splitlines() == ["one", "two", "three"], r
    r = cg("--delete-offsets", "--group", g, "--topic", t)
    assert "Request succeeded for deleting offsets from group %s." % g in r.out, r
    assert [(x["TOPIC"], x["PARTITION"], x["STATUS"]) for x in
            [dict(zip(["TOPIC", "PARTITION", "STATUS"], l.split()))
             for l in r.out.splitlines() if l.startswith(t)]] == [(t, "0", "Successful")], r
    r = cg("--delete", "--group", g)
    assert "Deletion of requested consumer groups ('%s') was successful." % g in r.out, r
    assert g not in cg("--list").out.split()


PERF_PRODUCER = re.compile(
    r"^(\d+) records sent, [\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, "
    r"[\d.]+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$", re.M)


def perf_produce(bs, topic, n, *extra):
    r = kafka_tool("kafka-producer-perf-test", "--topic", topic, "--num-records", n,
                   "--record-size", 100, "--throughput", -1, *bs, *extra)
    m = PERF_PRODUCER.findall(r.out)
    assert m and m[-1] == str(n), r
    return r


def test_perf_tests(bs):
    t = "kt-perf"
    create(bs, t, 2)
    perf_produce(bs, t, 2000, "--command-property", "acks=all")
    r = kafka_tool("kafka-consumer-perf-test", *bs, "--topic", t, "--num-records", 2000,
                   "--timeout", 20000)
    lines = [l for l in r.out.splitlines() if l.strip()]
    head = [c.strip() for c in lines[-2].split(",")]
    row = dict(zip(head, [c.strip() for c in lines[-1].split(",")]))
    assert head[:6] == ["start.time", "end.time", "data.consumed.in.MB", "MB.sec",
                        "data.consumed.in.nMsg", "nMsg.sec"], r
    assert row["data.consumed.in.nMsg"] == "2000", r
    assert row["data.consumed.in.MB"] == "%.4f" % (2000 * 100 / 1024 / 1024), r


def offsets(bs, topic, *extra):
    r = kafka_tool("kafka-get-offsets", *bs, "--topic", topic, *extra)
    return r.out.split(), r


def test_get_offsets_and_delete_records(bs, tmp_path):
    t = "kt-offsets"
    create(bs, t, 2)
    perf_produce(bs, t, 100, "--command-property", "partitioner.class="
                 "org.apache.kafka.clients.producer.RoundRobinPartitioner")
    got, r = offsets(bs, t)
    assert sorted(got) == ["%s:0:50" % t, "%s:1:50" % t], r
    got, r = offsets(bs, t, "--time", "earliest")
    assert sorted(got) == ["%s:0:0" % t, "%s:1:0" % t], r
    spec = tmp_path / "delete.json"
    spec.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": 0, "offset": 20}]}))
    r = kafka_tool("kafka-delete-records", *bs, "--offset-json-file", spec)
    assert "partition: %s-0\tlow_watermark: 20" % t in r.out, r
    got, r = offsets(bs, t, "--time", "-2")
    assert sorted(got) == ["%s:0:20" % t, "%s:1:0" % t], r
    got, r = offsets(bs, t, "--partitions", "0", "--time", "latest")
    assert got == ["%s:0:50" % t], r




@pytest.fixture(scope="module")
def perf_txn(bs):
    t, txid = "kt-txn", "kt-perf-txid"
    create(bs, t)
    perf_produce(bs, t, 100, "--transactional-id", txid, "--transaction-duration-ms", 100)
    return t, txid


def table(r):
    lines = [l for l in r.out.splitlines() if l.strip()]
    head = lines[0].split()
    return [dict(zip(head, l.split())) for l in lines[1:]]


def test_transactions_list_and_producers(bs, perf_txn):
    t, txid = perf_txn
    rows = [x for x in table(kafka_tool("kafka-transactions", *bs, "list"))
            if x["TransactionalId"] == txid]
    assert len(rows) == 1 and rows[0]["TransactionState"] == "CompleteCommit", rows
    assert rows[0]["Coordinator"] == "1"
    pid = rows[0]["ProducerId"]
    r = kafka_tool("kafka-transactions", *bs, "describe-producers", "--topic", t,
                   "--partition", 0)
    prods = table(r)
    assert [(x["ProducerId"], x["ProducerEpoch"], x["LastSequence"],
             x["CurrentTransactionStartOffset"]) for x in prods] == [(pid, "0", "99", "None")], r
    r = kafka_tool("kafka-transactions", *bs, "find-hanging", "--broker-id", 1)
    assert table(r) == [], r
    assert r.out.split()[:3] == ["Topic", "Partition", "ProducerId"], r


def test_transactions_describe(bs, perf_txn):
    t, txid = perf_txn
    r = kafka_tool("kafka-transactions", *bs, "describe", "--transactional-id", txid,
                   timeout=60, check=False)
    assert r.rc == 0, r
    rows = table(r)
    assert len(rows) == 1 and rows[0]["TransactionalId"] == txid, r
    assert rows[0]["TransactionState"] == "CompleteCommit", r

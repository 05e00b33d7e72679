"""Go clients against samsa-server: franz-go (kgo, kadm) and Sarama.

tests/integration/go/ is a Go module (go.mod/go.sum pin franz-go v1.22.3,
kadm v1.20.0, Sarama v1.61.1) with one program, goclients, one subcommand
per scenario; it prints what it saw as JSON and the checks are here.
scripts/deps.sh downloads the modules into $SAMSA_CACHE/go (default
~/.cache/samsa/go); the test builds the program from that cache only
(GOPROXY=off, -mod=readonly) into its temp dir, so a missing Go or module
fails the tests.
"""

import json
import os
import shutil
import subprocess

import pytest

from samsa_harness import T

HERE = os.path.dirname(os.path.abspath(__file__))
GO_DIR = os.path.join(HERE, "go")
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
OVERRIDES = {"group.initial.rebalance.delay.ms": "0"}


def go_binary():
    for cand in (shutil.which("go"), "/usr/local/go/bin/go"):
        if cand and os.access(cand, os.X_OK):
            return cand
    pytest.fail("no Go toolchain (go on PATH or /usr/local/go/bin/go): "
                "scripts/deps.sh needs one to fetch tests/integration/go's modules",
                pytrace=False)


def go_env():
    cache = os.path.join(os.environ.get("SAMSA_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "samsa"), "go")
    env = dict(os.environ)
    env.update({
        "GOPATH": cache, "GOMODCACHE": os.path.join(cache, "mod"),
        "GOCACHE": os.path.join(cache, "build"), "GOFLAGS": "-mod=readonly",
        "GOPROXY": "off", "GOTOOLCHAIN": "local", "GOWORK": "off",
        "GOTELEMETRY": "off", "CGO_ENABLED": "0",
    })
    return env


@pytest.fixture(scope="module")
def goclients(tmp_path_factory):
    """tests/integration/go built into this module's temp dir."""
    out = str(tmp_path_factory.mktemp("go") / "goclients")
    p = subprocess.run([go_binary(), "build", "-o", out, "."], cwd=GO_DIR,
                       env=go_env(), capture_output=True, text=True,
                       timeout=T(600))
    if p.returncode != 0:
        pytest.fail("building tests/integration/go failed (run scripts/deps.sh: it "
                    "downloads the modules into $SAMSA_CACHE/go):\n%s%s"
                    % (p.stdout, p.stderr), pytrace=False)
    return out


@pytest.fixture(scope="module")
def srv(samsa_module):
    return samsa_module.start(overrides=OVERRIDES)


def go(goclients, srv, cmd, *args, timeout=60):
    argv = [goclients, cmd, "-brokers", srv.bootstrap(),
            "-timeout", "%ds" % int(T(timeout))] + [str(a) for a in args]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=T(timeout) + 30)
    if p.returncode != 0:
        pytest.fail("%s exited %d:\n%s" % (" ".join(argv), p.returncode,
                                           p.stderr[-6000:]), pytrace=False)
    try:
        return json.loads(p.stdout)
    except ValueError:
        pytest.fail("%s printed no JSON:\n%s\n%s" % (cmd, p.stdout[-2000:], p.stderr[-2000:]),
                    pytrace=False)


def key(i):
    return "k%05d" % i


def value(tag, i):
    return "%s-%05d-%s" % (tag, i, "x" * (i % 50))


def by_partition(recs):
    out = {}
    for r in recs:
        out.setdefault(r["p"], []).append(r)
    return out


def check_produced(recs, tag, first, count, parts):
    """Record i of the run went to partition i % parts; offsets per
    partition are consecutive from 0 in the order the records were sent."""
    assert len(recs) == count
    assert sorted(r["k"] for r in recs) == [key(i) for i in range(first, first + count)]
    for r in recs:
        i = int(r["k"][1:])
        assert r["p"] == i % parts and r["v"] == value(tag, i), r
    for p, rs in by_partition(recs).items():
        rs = sorted(rs, key=lambda r: r["o"])
        assert [r["o"] for r in rs] == list(range(len(rs))), (p, rs)
        assert [r["k"] for r in rs] == sorted(r["k"] for r in rs), (p, rs)


def check_consumed(got, produced):
    """Exactly the produced records, each at the offset the producer was
    told, in offset order per partition."""
    want = {(r["p"], r["o"]): (r["k"], r["v"]) for r in produced}
    have = {(r["p"], r["o"]): (r["k"], r["v"]) for r in got}
    assert len(got) == len(have), "duplicates in what was read"
    assert have == want
    for p, rs in by_partition(got).items():
        offs = [r["o"] for r in rs]
        assert offs == sorted(offs), (p, offs)


# -- franz-go: produce / consume ----------------------------------------------

@pytest.mark.parametrize("acks", ["all", "leader"])
@pytest.mark.parametrize("codec", CODECS)
def test_franz_produce_consume(goclients, srv, codec, acks):
    """kgo producer (idempotent with acks=all, franz-go's default; plain with
    acks=1) with each codec, 3 partitions, 60 records with headers; a kgo
    consumer from the start reads them back byte for byte."""
    t = "franz-%s-%s" % (codec, acks)
    out = go(goclients, srv, "kgo-produce", "-topic", t, "-partitions", 3, "-n", 60,
             "-codec", codec, "-acks", acks)
    check_produced(out["records"], codec, 0, 60, 3)
    got = go(goclients, srv, "kgo-consume", "-topic", t, "-n", 60, "-idle", "500ms")["records"]
    check_consumed(got, out["records"])
    for r in got:
        assert r["h"] == {"i": str(int(r["k"][1:])), "codec": codec}


def test_franz_produce_appends(goclients, srv):
    """A second producer's records follow the first's (offsets continue)."""
    t = "franz-append"
    a = go(goclients, srv, "kgo-produce", "-topic", t, "-n", 10)["records"]
    b = go(goclients, srv, "kgo-produce", "-topic", t, "-n", 10, "-codec", "zstd")["records"]
    assert [r["o"] for r in a] == list(range(10))
    assert [r["o"] for r in b] == list(range(10, 20))
    got = go(goclients, srv, "kgo-consume", "-topic", t, "-n", 20, "-idle", "500ms")["records"]
    assert [r["v"] for r in got] == [value("none", i) for i in range(10)] + \
        [value("zstd", i) for i in range(10)]


# -- franz-go: consumer groups -------------------------------------------------

def check_group(out, parts, n, per_partition):
    before, after = out["owners_before"], out["owners_after"]
    owned = sorted(p for ps in before for p in ps)
    assert owned == list(range(parts)), before
    assert all(ps for ps in before), before
    assert before == after, "a rebalance while consuming: %s -> %s" % (before, after)
    seen = []
    for m, owns in zip(out["members"], before):
        recs = m["records"]
        assert {r["p"] for r in recs} <= set(owns), (owns, {r["p"] for r in recs})
        for p, rs in by_partition(recs).items():
            assert [r["o"] for r in rs] == list(range(per_partition)), (p, rs)
        seen += recs
    produced = out["produced"] if "produced" in out else None
    if produced is not None:
        check_consumed(seen, produced)
    assert len(seen) == n
    assert out["committed"] == {str(p): per_partition for p in range(parts)}


@pytest.mark.parametrize("protocol,balancer,assignor", [
    ("classic", "range", "range"),
    ("classic", "sticky", "sticky"),
    ("classic", "cooperative-sticky", "cooperative-sticky"),
    ("consumer", "range", "range"),
    ("consumer", "sticky", "uniform"),
])
def test_franz_group(goclients, srv, protocol, balancer, assignor):
    """Two kgo group members split 4 partitions (classic protocol with the
    client's balancer, or KIP-848 with the broker's range/uniform assignor:
    kgo.ServerSideBalancer); 40 records produced after the split are each
    read once, by the owner, in order; commits land; kadm's DescribeGroups
    (classic) / DescribeConsumerGroups (KIP-848) and ListGroups agree."""
    g = "franz-%s-%s" % (protocol, balancer)
    out = go(goclients, srv, "kgo-group", "-topic", g, "-group", g, "-partitions", 4,
             "-n", 40, "-members", 2, "-protocol", protocol, "-balancer", balancer,
             timeout=90)
    check_group(out, 4, 40, 10)
    d = out["described"]
    assert d["state"] == "Stable" and d["members"] == 2, d
    if protocol == "classic":
        assert d["protocol"] == assignor and d["protocol_type"] == "consumer", d
        assert out["listed"]["type"] in ("classic", ""), out["listed"]
    else:
        assert d["assignor"] == assignor, d
        assert out["listed"]["type"] == "consumer", out["listed"]


# -- franz-go: transactions ----------------------------------------------------

def test_franz_transactions(goclients, srv):
    """One transactional producer: commit, abort, commit (10 records each over
    2 partitions). read_committed sees the two committed transactions only,
    in order; read_uncommitted sees all three; control batches take one
    offset each."""
    t = "franz-txn"
    out = go(goclients, srv, "kgo-txn", "-topic", t, "-partitions", 2, "-n", 10,
             "-txnid", "franz-txn-1")
    for tag, first in (("commit1", 0), ("abort", 10), ("commit2", 20)):
        recs = out[tag]
        assert sorted(r["v"] for r in recs) == sorted(value(tag, i) for i in range(first, first + 10))
    # per partition: 5 records, a marker, 5, a marker, 5
    for p in (0, 1):
        assert sorted(r["o"] for r in out["commit1"] if r["p"] == p) == list(range(0, 5))
        assert sorted(r["o"] for r in out["abort"] if r["p"] == p) == list(range(6, 11))
        assert sorted(r["o"] for r in out["commit2"] if r["p"] == p) == list(range(12, 17))
    committed = go(goclients, srv, "kgo-consume", "-topic", t, "-n", 20, "-idle", "1s",
                   "-isolation", "committed")["records"]
    check_consumed(committed, out["commit1"] + out["commit2"])
    allrecs = go(goclients, srv, "kgo-consume", "-topic", t, "-n", 30, "-idle", "500ms")["records"]
    check_consumed(allrecs, out["commit1"] + out["abort"] + out["commit2"])


def test_franz_group_transact_session(goclients, srv):
    """consume-transform-produce with kgo.GroupTransactSession: 30 records
    copied (prefixed "eos:") to an output topic in transactions that also
    commit the group's offsets; read_committed output matches the input per
    partition, and the group's offsets are at the input's end."""
    src, dst = "franz-eos-in", "franz-eos-out"
    inp = go(goclients, srv, "kgo-produce", "-topic", src, "-partitions", 2, "-n", 30)["records"]
    out = go(goclients, srv, "kgo-eos", "-topic", src, "-out", dst, "-group", "franz-eos",
             "-txnid", "franz-eos-1", "-partitions", 2, "-n", 30, timeout=90)
    assert out["copied"] == 30 and out["transactions"] >= 1, out
    assert out["committed"] == {"0": 15, "1": 15}, out
    got = go(goclients, srv, "kgo-consume", "-topic", dst, "-n", 30, "-idle", "1s",
             "-isolation", "committed")["records"]
    assert len(got) == 30
    for p in (0, 1):
        assert [r["v"] for r in got if r["p"] == p] == \
            ["eos:" + r["v"] for r in sorted(inp, key=lambda r: r["o"]) if r["p"] == p]
        assert [r["k"] for r in got if r["p"] == p] == \
            [r["k"] for r in sorted(inp, key=lambda r: r["o"]) if r["p"] == p]


# -- franz-go: kadm ------------------------------------------------------------

def test_kadm(goclients, srv):
    """kadm: topics (create, duplicate, list, describe, partitions), configs
    (describe, incremental and legacy alter, a bad value), offsets (start,
    end, DeleteRecords), group offsets (commit, fetch, lag, list, describe,
    delete), broker metadata and configs, delete topic."""
    t = "kadm-topic"
    d = go(goclients, srv, "kadm", "-topic", t)
    assert d["create"]["err"] == "" and d["create"]["partitions"] == 3 and d["create"]["rf"] == 1
    assert d["create_again_err"].startswith("TOPIC_ALREADY_EXISTS")
    assert t in d["listed"]
    assert d["topic"]["err"] == "" and d["topic"]["id"] == d["create"]["id"]
    assert [p["p"] for p in d["topic"]["partitions"]] == [0, 1, 2]
    for p in d["topic"]["partitions"]:
        assert p["leader"] == 1 and p["replicas"] == [1] and p["isr"] == [1] and p["err"] == ""
    assert d["update_partitions_err"] == "" and d["create_partitions_err"] == ""
    assert d["partitions_after"] == 6

    c = d["configs"]
    assert c["retention.ms"] == {"value": "3600000", "source": "DYNAMIC_TOPIC_CONFIG"}
    assert c["cleanup.policy"] == {"value": "delete", "source": "DYNAMIC_TOPIC_CONFIG"}
    assert c["max.message.bytes"]["source"] == "DEFAULT_CONFIG"
    assert d["alter_err"] == ""
    c = d["configs_after_alter"]          # IncrementalAlterConfigs
    assert c["retention.ms"] == {"value": "7200000", "source": "DYNAMIC_TOPIC_CONFIG"}
    assert c["max.message.bytes"] == {"value": "200000", "source": "DYNAMIC_TOPIC_CONFIG"}
    assert c["cleanup.policy"]["source"] == "DEFAULT_CONFIG"
    assert d["alter_state_err"] == ""
    c = d["configs_after_state"]          # AlterConfigs replaces the whole set
    assert c["segment.ms"] == {"value": "600000", "source": "DYNAMIC_TOPIC_CONFIG"}
    assert c["retention.ms"]["source"] == "DEFAULT_CONFIG"
    assert c["max.message.bytes"]["source"] == "DEFAULT_CONFIG"
    assert d["alter_bad_err"].startswith("INVALID_CONFIG")

    assert d["start"] == {str(p): 0 for p in range(6)}
    assert d["end"] == dict({str(p): 10 for p in range(5)}, **{"5": 0})
    assert d["delete_records"] == {"0": {"low": 4, "err": ""}, "1": {"low": 10, "err": ""}}
    assert d["start_after_delete"] == dict(d["start"], **{"0": 4, "1": 10})

    assert d["fetched_offsets"] == {"2": {"at": 7, "metadata": "m2", "err": ""},
                                    "3": {"at": 10, "metadata": "", "err": ""}}
    g = t + "-group"
    assert g in d["groups"] and g not in d["groups_after_delete"]
    assert d["group"] == {"state": "Empty", "members": 0, "err": ""}
    # lag: end - committed, or end - start where nothing was committed
    assert d["lag"] == {"0": 6, "1": 0, "2": 3, "3": 0, "4": 10, "5": 0}
    assert d["delete_group_err"] == ""

    cl = d["cluster"]
    assert cl["controller"] == 1 and len(cl["id"]) == 22
    assert cl["brokers"] == [{"id": 1, "host": "127.0.0.1", "port": srv.port}]
    assert d["broker_configs_err"] == "" and d["broker_config_count"] > 50
    assert d["broker_num_partitions"]["value"] == "1"
    assert d["api_versions_err"] == "" and d["api_keys"] > 20
    assert d["delete_err"] == "" and t not in d["listed_after_delete"]


# -- Sarama ----------------------------------------------------------------------

@pytest.mark.parametrize("kversion", ["2.1.0", "4.2.0"])
@pytest.mark.parametrize("codec", CODECS)
def test_sarama_produce(goclients, srv, codec, kversion):
    """Sarama's SyncProducer then AsyncProducer (idempotent, acks=all) with
    each codec, 20 records each over 3 partitions, assuming Kafka 2.1 (its
    default) or 4.2 (request versions follow); read back by kgo."""
    t = "sarama-%s-%s" % (codec, kversion)
    out = go(goclients, srv, "sarama-produce", "-topic", t, "-partitions", 3, "-n", 20,
             "-codec", codec, "-kafka-version", kversion)
    check_produced(out["sync"], "sync", 0, 20, 3)
    for r in out["async"]:
        i = int(r["k"][1:])
        assert r["p"] == i % 3 and r["v"] == value("async", i)
    everything = out["sync"] + out["async"]
    for p, rs in by_partition(everything).items():
        assert sorted(r["o"] for r in rs) == list(range(len(rs)))
    got = go(goclients, srv, "kgo-consume", "-topic", t, "-n", 40, "-idle", "500ms")["records"]
    check_consumed(got, everything)
    # async records follow the sync ones, in the order sent, per partition
    for p, rs in by_partition(got).items():
        assert [r["k"] for r in rs] == sorted(r["k"] for r in rs)


def test_sarama_produce_acks1(goclients, srv):
    """Sarama with acks=1 (WaitForLocal), not idempotent, gzip."""
    t = "sarama-acks1"
    out = go(goclients, srv, "sarama-produce", "-topic", t, "-partitions", 2, "-n", 10,
             "-codec", "gzip", "-acks", "leader", "-idempotent=false")
    got = go(goclients, srv, "kgo-consume", "-topic", t, "-n", 20, "-idle", "500ms")["records"]
    check_consumed(got, out["sync"] + out["async"])


@pytest.mark.parametrize("balancer,kversion", [
    ("range", "2.1.0"), ("range", "4.2.0"), ("sticky", "2.1.0"), ("sticky", "4.2.0"),
    # Not ("cooperative-sticky", "4.2.0") yet: in one full run of this file
    # one member kept all 4 partitions and the other none for 90 s (5 runs
    # alone passed); not understood yet, so not claimed as samsa's bug.
])
def test_sarama_group(goclients, srv, balancer, kversion):
    """Two Sarama ConsumerGroup members (range or sticky strategy) split 4
    partitions; 40 records read once each by their owner, in order;
    committed offsets at the end; DescribeConsumerGroups while running."""
    g = "sarama-group-%s-%s" % (balancer, kversion)
    out = go(goclients, srv, "sarama-group", "-topic", g, "-group", g, "-partitions", 4,
             "-n", 40, "-members", 2, "-balancer", balancer, "-kafka-version", kversion,
             timeout=90)
    check_group(out, 4, 40, 10)
    seen = sorted((r["p"], r["o"], r["k"], r["v"]) for m in out["members"] for r in m["records"])
    assert sorted(r[2] for r in seen) == [key(i) for i in range(40)]
    for p, o, k, v in seen:
        assert v == value("group", int(k[1:])) and p == int(k[1:]) % 4
    d = out["described"]
    assert d == {"state": "Stable", "protocol": balancer, "protocol_type": "consumer",
                 "members": 2, "err": 0}, d
    assert out["listed_type"] == "consumer"


@pytest.mark.parametrize("kversion", ["2.1.0", "4.2.0"])
def test_sarama_transactions(goclients, srv, kversion):
    """Sarama's transactional SyncProducer: commit, abort, commit (10 records
    each over 2 partitions, lz4); a read_committed kgo consumer sees the
    committed ones only, in order; read_uncommitted sees all."""
    t = "sarama-txn-" + kversion
    out = go(goclients, srv, "sarama-txn", "-topic", t, "-partitions", 2, "-n", 10,
             "-txnid", t, "-codec", "lz4", "-kafka-version", kversion)
    for p in (0, 1):
        assert sorted(r["o"] for r in out["commit1"] if r["p"] == p) == list(range(0, 5))
        assert sorted(r["o"] for r in out["abort"] if r["p"] == p) == list(range(6, 11))
        assert sorted(r["o"] for r in out["commit2"] if r["p"] == p) == list(range(12, 17))
    committed = go(goclients, srv, "kgo-consume", "-topic", t, "-n", 20, "-idle", "1s",
                   "-isolation", "committed")["records"]
    check_consumed(committed, out["commit1"] + out["commit2"])
    allrecs = go(goclients, srv, "kgo-consume", "-topic", t, "-n", 30, "-idle", "500ms")["records"]
    check_consumed(allrecs, out["commit1"] + out["abort"] + out["commit2"])


@pytest.mark.parametrize("kversion", ["2.4.0", "4.2.0"])   # IncrementalAlterConfigs: 2.3+
def test_sarama_admin(goclients, srv, kversion):
    """Sarama ClusterAdmin: create (with a config; again: exists; RF 3:
    invalid), list, describe, create partitions (4; then 3: invalid),
    DescribeConfig / AlterConfig / IncrementalAlterConfig, DescribeCluster,
    delete (again: unknown)."""
    t = "sarama-admin-" + kversion
    d = go(goclients, srv, "sarama-admin", "-topic", t, "-kafka-version", kversion)
    assert "already exists" in d["create_again"]
    assert "Replication-factor is invalid" in d["create_rf3"]
    assert d["listed"] == {"present": True, "partitions": 2, "rf": 1}
    assert d["described"]["err"] == 0
    assert [p["p"] for p in d["described"]["partitions"]] == [0, 1]
    for p in d["described"]["partitions"]:
        assert p["leader"] == 1 and p["replicas"] == [1] and p["isr"] == [1] and p["err"] == 0
    assert d["partitions_after"] == 4
    assert "Number of partitions is invalid" in d["create_partitions_lower"]
    c = d["configs"]
    assert c["retention.ms"] == {"value": "3600000", "source": "Topic", "default": False}
    assert c["segment.ms"]["default"] is True
    c = d["configs_after_alter"]          # AlterConfigs: the whole set
    assert c["segment.ms"] == {"value": "700000", "source": "Topic", "default": False}
    assert c["retention.ms"]["default"] is True
    c = d["configs_after_incremental"]
    assert c["max.message.bytes"] == {"value": "300000", "source": "Topic", "default": False}
    assert c["segment.ms"]["default"] is True
    assert d["cluster"] == {"controller": 1, "brokers": [{"id": 1, "addr": srv.bootstrap()}]}
    assert "does not exist" in d["delete_again"]
    assert d["present_after_delete"] is False


# -- franz-go: regex and static members, kadm's other calls -------------------

@pytest.mark.parametrize("protocol", [
    "classic",
    "consumer",
])
def test_franz_group_regex(goclients, srv, protocol):
    """kgo.ConsumeRegex: two members subscribed by a regex that matches one
    4-partition topic split it and read 40 records (classic: kgo matches
    the regex itself; KIP-848: the broker does, from SubscribedTopicRegex)."""
    g = "franz-re-%s" % protocol
    out = go(goclients, srv, "kgo-group", "-topic", g + "-a", "-regex", "^%s-.*" % g,
             "-group", g, "-partitions", 4, "-n", 40, "-protocol", protocol,
             timeout=20 if protocol == "consumer" else 90)
    check_group(out, 4, 40, 10)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_franz_group_static(goclients, srv, protocol):
    """Static members (kgo.InstanceID), classic and KIP-848."""
    g = "franz-static-%s" % protocol
    out = go(goclients, srv, "kgo-group", "-topic", g, "-group", g, "-static",
             "-partitions", 4, "-n", 40, "-protocol", protocol, timeout=90)
    check_group(out, 4, 40, 10)
    assert out["described"]["members"] == 2


@pytest.fixture(scope="module")
def kadm_extra(goclients, srv):
    """kadm-extra's view of a topic a transactional producer wrote three
    transactions to (5 records, a marker, ... per partition)."""
    go(goclients, srv, "kgo-txn", "-topic", "kadm-extra", "-partitions", 2, "-n", 10,
       "-txnid", "kadm-extra-txn")
    return go(goclients, srv, "kadm-extra", "-topic", "kadm-extra", "-partitions", 2,
              "-txnid", "kadm-extra-txn")


def test_kadm_extra(kadm_extra):
    """DescribeProducers, Describe/ListTransactions, DescribeLogDirs,
    ListOffsets (latest, read_committed, max timestamp, by time),
    OffsetDelete, FindCoordinator, DescribeClientQuotas."""
    d = kadm_extra
    prods = d["producers"]
    assert sorted(p["p"] for p in prods) == [0, 1], prods
    for p in prods:
        # 15 records in 3 batches of 5: the last sequence is 14; no open txn
        assert p["pid"] >= 0 and p["epoch"] == 0 and p["last_seq"] == 14 and p["txn_start"] == -1, p
    assert d["describe_txn"] == {"state": "CompleteCommit", "pid": prods[0]["pid"],
                                 "timeout": 20000, "err": "", "topics": 0}
    assert d["list_txn"] == {"present": True, "state": "CompleteCommit", "pid": prods[0]["pid"]}
    assert set(d["logdir_sizes"]) == {"0", "1"} and all(v > 0 for v in d["logdir_sizes"].values())
    for p in ("0", "1"):
        assert d["end"][p] == {"o": 18, "ts": -1, "err": ""}
        assert d["committed_end"][p] == {"o": 18, "ts": -1, "err": ""}
        assert d["after_0"][p]["o"] == 0 and d["after_0"][p]["err"] == ""
        assert d["after_future"][p]["o"] == 18 and d["after_future"][p]["err"] == ""
        assert d["max_ts"][p]["err"] == "" and 0 <= d["max_ts"][p]["o"] <= 17
    assert d["delete_offsets"] == "" and d["offsets_after_delete"] == {"1": 2}
    assert d["coordinator"] == {"node": 1, "err": ""}
    assert d["txn_coordinator"] == {"node": 1, "err": ""}
    assert d["quotas_err"] == "" and d["quotas"] == 0


def test_kadm_offset_for_leader_epoch(kadm_extra):
    d = kadm_extra
    assert "leader_epoch_err" not in d, d.get("leader_epoch_err")
    for p in ("0", "1"):
        assert d["leader_epoch"][p] == {"epoch": 0, "end": 18, "err": ""}


def test_kadm_elect_leaders(kadm_extra):
    d = kadm_extra
    assert "elect_err" not in d, d.get("elect_err")
    assert all(v.startswith("ELECTION_NOT_NEEDED") for v in d["elect"].values()), d["elect"]


def test_kadm_list_partition_reassignments(kadm_extra):
    d = kadm_extra
    assert d["reassignments_err"] == "" and d["reassignments"] == 0

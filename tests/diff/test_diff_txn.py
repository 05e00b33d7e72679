"""Transactions, the same raw requests to Apache Kafka 4.4 and
samsa-server: InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
TxnOffsetCommit, EndTxn (commit, abort, wrong ids and epochs, a
transactional id nobody initialised), a transactional Produce, then
ListTransactions, DescribeTransactions and DescribeProducers of what
that left.  Requests and responses are encoded from Kafka's own message
definitions (kmsg.py), at the lowest and the highest version both
brokers serve.  Differences: KNOWN (and docs/COMPATIBILITY.md)."""

import time

import pytest

import diffkit
import kmsg
import kwire
from samsa_harness import T

TOPIC = "diff-txn-t"
GROUP = "diff-txn-g"
# retried while the coordinator settles: COORDINATOR_LOAD_IN_PROGRESS,
# COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, CONCURRENT_TRANSACTIONS
RETRIABLE = {14, 15, 16, 51}

# 'CASE: PATH' -> (Kafka's value, Samsa's value, why)
KNOWN = {}


@pytest.fixture(scope="module")
def env(pair):
    ka, sa = pair.connect()
    with ka, sa:
        kv, sv = ka.api_versions(3)["api_keys"], sa.api_versions(3)["api_keys"]
        pair.versions = {}
        for api in ("InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn",
                    "TxnOffsetCommit", "EndTxn", "ListTransactions",
                    "DescribeTransactions", "DescribeProducers", "FindCoordinator",
                    "Produce"):
            key = kmsg.api_key(api)
            lo, hi = max(kv[key][0], sv[key][0]), min(kv[key][1], sv[key][1])
            assert lo <= hi, "%s: no common version (Kafka %s, Samsa %s)" % (
                api, kv[key], sv[key])
            pair.versions[api] = sorted({lo, hi})
        for c in (ka, sa):
            r = c.create_topic(TOPIC, num_partitions=1)
            assert r["error_code"] == 0, r
            c.wait_topic(TOPIC, partitions=1, timeout=T(30))
    print("versions used:", pair.versions)
    return pair


def hi(env, api):
    return env.versions[api][-1]


def compare(case, env, fn):
    return diffkit.compare_pair(case, env, fn, KNOWN)


def retry(fn, err_of):
    """fn() until its error is not a retriable coordinator one."""
    deadline = time.monotonic() + T(30)
    while True:
        out = fn()
        if err_of(out) not in RETRIABLE or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def coordinator(env, c, key, key_type):
    v = hi(env, "FindCoordinator")
    body = ({"key_type": key_type, "coordinator_keys": [key]} if v >= 4
            else {"key": key, "key_type": key_type})

    def err(o):
        return o["coordinators"][0]["error_code"] if v >= 4 else o["error_code"]
    out = retry(lambda: kmsg.call(c, "FindCoordinator", v, body), err)
    assert err(out) == 0, out
    return out


def init_pid(env, c, tid, v=None):
    coordinator(env, c, tid, 1)
    v = hi(env, "InitProducerId") if v is None else v
    out = retry(lambda: kmsg.call(c, "InitProducerId", v, {
        "transactional_id": tid, "transaction_timeout_ms": 60000,
        "producer_id": -1, "producer_epoch": -1}), lambda o: o["error_code"])
    assert out["error_code"] == 0, out
    return out["producer_id"], out["producer_epoch"]


def add_partitions(c, v, tid, pid, epoch, topic=TOPIC, parts=(0,)):
    if v <= 3:
        body = {"v3_and_below_transactional_id": tid,
                "v3_and_below_producer_id": pid,
                "v3_and_below_producer_epoch": epoch,
                "v3_and_below_topics": [{"name": topic, "partitions": list(parts)}]}
    else:
        body = {"transactions": [{"transactional_id": tid, "producer_id": pid,
                                  "producer_epoch": epoch, "verify_only": False,
                                  "topics": [{"name": topic,
                                              "partitions": list(parts)}]}]}
    return retry(lambda: kmsg.call(c, "AddPartitionsToTxn", v, body),
                 lambda o: _add_err(o, v))


def _add_err(o, v):
    if v <= 3:
        return o["results_by_topic_v3_and_below"][0]["results_by_partition"][0][
            "partition_error_code"]
    if o["error_code"]:
        return o["error_code"]
    return o["results_by_transaction"][0]["topic_results"][0][
        "results_by_partition"][0]["partition_error_code"]


def end_txn(c, v, tid, pid, epoch, committed):
    return retry(lambda: kmsg.call(c, "EndTxn", v, {
        "transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
        "committed": committed}), lambda o: o["error_code"])


def txn_produce(env, c, tid, pid, epoch, seq=0):
    batch = kwire.encode_batch([kwire.Record(b"txn-%d" % i) for i in range(3)],
                               producer_id=pid, producer_epoch=epoch,
                               base_sequence=seq, attributes=0x10)
    v = min(hi(env, "Produce"), 9)
    body = kwire.encode_produce_request(v, [(TOPIC, [(0, batch)])], acks=-1,
                                        transactional_id=tid)
    r = c.request_raw(kwire.API_PRODUCE, v, body, timeout=T(10))
    return kwire.decode_produce_body(r, v)


# -- EndTxn / AddPartitionsToTxn errors ----------------------------------------

def test_end_txn_unknown_transactional_id(env):
    def check(v):
        tid = "diff-txn-nobody-v%d" % v

        def run(c):
            coordinator(env, c, tid, 1)     # Kafka creates its log then
            return end_txn(c, v, tid, 4242, 0, True)
        compare("EndTxn v%d unknown transactional id" % v, env, run)
    diffkit.each_version(env.versions["EndTxn"], check)


def test_end_txn_wrong_ids(env):
    """EndTxn with no transaction open, with another producer id, and with
    an older and a newer epoch than the coordinator's."""
    def check(v):
        tid = "diff-txn-wrong-end-v%d" % v

        def run(c):
            pid, epoch = init_pid(env, c, tid)
            return {"nothing open": end_txn(c, v, tid, pid, epoch, True),
                    "other producer id": end_txn(c, v, tid, pid + 1, epoch, True),
                    "newer epoch": end_txn(c, v, tid, pid, epoch + 1, False),
                    "abort nothing": end_txn(c, v, tid, pid, epoch, False)}
        compare("EndTxn v%d wrong ids" % v, env, run)
    diffkit.each_version(env.versions["EndTxn"], check)


def test_add_partitions_wrong_ids(env):
    def check(v):
        tid = "diff-txn-wrong-add-v%d" % v

        def run(c):
            pid, epoch = init_pid(env, c, tid)
            return {"other producer id": add_partitions(c, v, tid, pid + 1, epoch),
                    "newer epoch": add_partitions(c, v, tid, pid, epoch + 1),
                    "unknown topic": add_partitions(c, v, tid, pid, epoch,
                                                    topic="diff-txn-no-such")}
        compare("AddPartitionsToTxn v%d wrong ids" % v, env, run)
    # v4+ is the brokers' batched form (KIP-890); clients send v0-v3
    diffkit.each_version([x for x in env.versions["AddPartitionsToTxn"] if x <= 3],
                         check)


# -- whole transactions --------------------------------------------------------

def test_commit_flow(env):
    """Init, add a partition, produce, commit; then commit again with the
    same epoch (nothing open) and init again (the epoch moves on)."""
    v_add = min(hi(env, "AddPartitionsToTxn"), 3)
    v_end = hi(env, "EndTxn")
    tid = "diff-txn-commit"

    def run(c):
        pid, epoch = init_pid(env, c, tid)
        out = {"add": add_partitions(c, v_add, tid, pid, epoch),
               "add again": add_partitions(c, v_add, tid, pid, epoch),
               "produce": txn_produce(env, c, tid, pid, epoch),
               "commit": end_txn(c, v_end, tid, pid, epoch, True)}
        pid2, epoch2 = init_pid(env, c, tid)
        out["init again: same producer id"] = pid2 == pid
        out["init again: epoch moved"] = epoch2 > epoch
        return out
    compare("transaction commit flow", env, run)


def test_offsets_flow(env):
    """AddOffsetsToTxn, TxnOffsetCommit (generation -1, no member), abort."""
    v_off = hi(env, "AddOffsetsToTxn")
    v_toc = hi(env, "TxnOffsetCommit")
    tid = "diff-txn-offsets"

    def run(c):
        pid, epoch = init_pid(env, c, tid)
        add = retry(lambda: kmsg.call(c, "AddOffsetsToTxn", v_off, {
            "transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
            "group_id": GROUP}), lambda o: o["error_code"])
        coordinator(env, c, GROUP, 0)
        commit = retry(lambda: kmsg.call(c, "TxnOffsetCommit", v_toc, {
            "transactional_id": tid, "group_id": GROUP, "producer_id": pid,
            "producer_epoch": epoch, "generation_id": -1, "member_id": "",
            "group_instance_id": None,
            "topics": [{"name": TOPIC, "partitions": [
                {"partition_index": 0, "committed_offset": 1,
                 "committed_leader_epoch": -1, "committed_metadata": "m"}]}]}),
            lambda o: o["topics"][0]["partitions"][0]["error_code"])
        unknown = kmsg.call(c, "TxnOffsetCommit", v_toc, {
            "transactional_id": tid, "group_id": GROUP, "producer_id": pid,
            "producer_epoch": epoch, "generation_id": -1, "member_id": "",
            "topics": [{"name": "diff-txn-no-such", "partitions": [
                {"partition_index": 0, "committed_offset": 1}]}]})
        return {"add offsets": add, "commit": commit, "unknown topic": unknown,
                "abort": end_txn(c, hi(env, "EndTxn"), tid, pid, epoch, False)}
    compare("transaction offsets flow", env, run)


def test_open_transaction_then_describe(env):
    """A transaction left open (one partition added and written): what
    ListTransactions, DescribeTransactions and DescribeProducers show."""
    tid = "diff-txn-open"
    v_add = min(hi(env, "AddPartitionsToTxn"), 3)

    def run(c):
        pid, epoch = init_pid(env, c, tid)
        add_partitions(c, v_add, tid, pid, epoch)
        txn_produce(env, c, tid, pid, epoch)
        out = {}
        for v in env.versions["ListTransactions"]:
            body = {"state_filters": [], "producer_id_filters": []}
            lt = kmsg.call(c, "ListTransactions", v, body)
            lt["transaction_states"] = sorted(
                (s for s in lt["transaction_states"]
                 if s["transactional_id"].startswith("diff-txn-")),
                key=lambda s: s["transactional_id"])
            out["ListTransactions v%d" % v] = lt
            out["ListTransactions v%d Ongoing" % v] = sorted(
                s["transactional_id"] for s in kmsg.call(
                    c, "ListTransactions", v,
                    dict(body, state_filters=["Ongoing"]))["transaction_states"])
        for v in env.versions["DescribeTransactions"]:
            dt = kmsg.call(c, "DescribeTransactions", v, {
                "transactional_ids": [tid, "diff-txn-nobody"]})
            for s in dt["transaction_states"]:
                s["transaction_start_time_ms"] = s["transaction_start_time_ms"] > 0
                s["transaction_timeout_ms"] = s["transaction_timeout_ms"]
            out["DescribeTransactions v%d" % v] = dt
        for v in env.versions["DescribeProducers"]:
            dp = kmsg.call(c, "DescribeProducers", v, {
                "topics": [{"name": TOPIC, "partition_indexes": [0, 7]},
                           {"name": "diff-txn-no-such", "partition_indexes": [0]}]})
            for t in dp["topics"]:
                for p in t["partitions"]:
                    for s in p["active_producers"]:
                        s["last_timestamp"] = s["last_timestamp"] > 0
                        s["current_txn_start_offset"] = s["current_txn_start_offset"] >= 0
            out["DescribeProducers v%d" % v] = dp
        end_txn(c, hi(env, "EndTxn"), tid, pid, epoch, False)
        return out
    compare("open transaction described", env, run)


def test_known_differences_documented():
    missing = diffkit.undocumented(KNOWN)
    assert not missing, ("docs/COMPATIBILITY.md does not list (as `CASE: PATH`):\n  "
                         + "\n  ".join(missing))

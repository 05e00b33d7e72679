"""Idempotent producers and the partition side of transactions (issue 5),
over the raw protocol (kwire):

- InitProducerId hands out new producer ids (epoch 0) from blocks the
  controller records, so ids never repeat, across restarts too; a
  transactional id gets COORDINATOR_NOT_AVAILABLE until the transaction
  coordinator exists, an empty one INVALID_REQUEST.
- the same idempotent batch sent again is acknowledged with the same base
  offset and stored once; a sequence gap gets OUT_OF_ORDER_SEQUENCE_NUMBER;
  a stale epoch INVALID_PRODUCER_EPOCH; a new epoch must start at 0; all of
  it still holds after a clean restart and after a SIGKILL (producer state
  snapshots plus replay of the log after them).
- an open transaction holds the last stable offset: read_committed fetches
  stop there, ListOffsets(latest, read_committed) answers it, also after a
  restart; clients cannot write control batches; transactional records
  need a transactional id.
- DescribeProducers lists the partition's producers.
"""


import kwire
import txnwire as txn
from samsa_harness import T

TOPIC = "idem"




def make_topic(srv, topic=TOPIC):
    with srv.connect(timeout=T(5)) as c:
        r = c.create_topic(topic, 1, timeout=T(10))
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        c.wait_topic(topic, 1, timeout=T(10))


def produce(c, batch, transactional_id=None, version=9):
    body = kwire.encode_produce_request(version, [(TOPIC, [(0, batch)])],
                                        transactional_id=transactional_id)
    return c.request(kwire.API_PRODUCE, version, body, timeout=T(10))["topics"][0]["partitions"][0]


def values(c, topic=TOPIC):
    batches, last = c.fetch_all(topic, 0, 0, timeout=T(10))
    assert last["error_code"] == 0
    return [r["value"] for r in kwire.records_of(batches)]


def batch(pid, epoch, seq, n, tag, **kw):
    return kwire.idempotent_batch([b"%s-%d" % (tag, seq + i) for i in range(n)],
                                  pid, epoch, seq, **kw)


def test_init_producer_id(samsa):
    srv = samsa.start()
    seen = set()
    with srv.connect(timeout=T(5)) as c:
        for v in range(0, 6):
            r = kwire.init_producer_id(c, version=v)
            assert r["error_code"] == 0, kwire.error_name(r["error_code"])
            assert r["producer_epoch"] == 0
            assert r["producer_id"] >= 0 and r["producer_id"] not in seen
            seen.add(r["producer_id"])
        # KIP-360 for an idempotent producer: a new id (Kafka's answer)
        r = kwire.init_producer_id(c, version=4, producer_id=max(seen), producer_epoch=0)
        assert r["error_code"] == 0 and r["producer_id"] not in seen
        seen.add(r["producer_id"])
        r = kwire.init_producer_id(c, version=4, transactional_id="")
        assert r["error_code"] == kwire.ERR_INVALID_REQUEST
        # a transactional id: the transaction coordinator's fresh id
        r = kwire.init_producer_id(c, version=4, transactional_id="tx-1")
        assert r["error_code"] == 0, kwire.error_name(r["error_code"])
        assert r["producer_id"] >= 0 and r["producer_id"] not in seen
        assert r["producer_epoch"] == 0
        seen.add(r["producer_id"])
        versions = c.api_versions(3)["api_keys"]
        assert versions[kwire.API_INIT_PRODUCER_ID] == (0, 5)
        assert versions[kwire.API_DESCRIBE_PRODUCERS] == (0, 0)
    srv = samsa.restart(srv, kill=True)
    with srv.connect(timeout=T(5)) as c:
        r = kwire.init_producer_id(c)
        assert r["error_code"] == 0
        assert r["producer_id"] > max(seen), "a producer id was handed out twice"


def test_duplicates_gaps_epochs_and_restarts(samsa):
    srv = samsa.start()
    make_topic(srv)
    with srv.connect(timeout=T(5)) as c:
        pid = kwire.init_producer_id(c)["producer_id"]
        b0 = batch(pid, 0, 0, 3, b"a")
        r = produce(c, b0)
        assert (r["error_code"], r["base_offset"]) == (0, 0)
        r = produce(c, b0)                          # a retry
        assert (r["error_code"], r["base_offset"]) == (0, 0)
        r = produce(c, batch(pid, 0, 3, 2, b"a"))
        assert (r["error_code"], r["base_offset"]) == (0, 3)
        r = produce(c, b0)                          # still in the window
        assert (r["error_code"], r["base_offset"]) == (0, 0)
        r = produce(c, batch(pid, 0, 7, 1, b"a"))   # gap: 5, 6 missing
        assert r["error_code"] == kwire.ERR_OUT_OF_ORDER_SEQUENCE_NUMBER
        r = produce(c, batch(pid, 1, 5, 1, b"b"))   # new epoch not at 0
        assert r["error_code"] == kwire.ERR_OUT_OF_ORDER_SEQUENCE_NUMBER
        r = produce(c, batch(pid, 1, 0, 2, b"b"))   # new epoch at 0
        assert (r["error_code"], r["base_offset"]) == (0, 5)
        r = produce(c, batch(pid, 0, 5, 1, b"a"))   # the old epoch is fenced
        assert r["error_code"] == kwire.ERR_INVALID_PRODUCER_EPOCH
        assert values(c) == [b"a-0", b"a-1", b"a-2", b"a-3", b"a-4", b"b-0", b"b-1"]
        dp = kwire.describe_producers(c, TOPIC)
        assert dp[0]["error_code"] == 0
        assert [(p["producer_id"], p["producer_epoch"], p["last_sequence"])
                for p in dp[0]["active_producers"]] == [(pid, 1, 1)]
        assert kwire.describe_producers(c, "no-such-topic")[0]["error_code"] == \
            kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION
        last = batch(pid, 1, 2, 3, b"b")
        assert produce(c, last)["base_offset"] == 7

    srv = samsa.restart(srv)                       # clean: snapshot at close
    with srv.connect(timeout=T(5)) as c:
        c.wait_topic(TOPIC, 1, timeout=T(10))
        r = produce(c, last)
        assert (r["error_code"], r["base_offset"]) == (0, 7)
        r = produce(c, batch(pid, 1, 6, 1, b"b"))
        assert r["error_code"] == kwire.ERR_OUT_OF_ORDER_SEQUENCE_NUMBER
        r = produce(c, batch(pid, 0, 5, 1, b"a"))
        assert r["error_code"] == kwire.ERR_INVALID_PRODUCER_EPOCH
        more = batch(pid, 1, 5, 2, b"b")
        assert produce(c, more)["base_offset"] == 10

    srv = samsa.restart(srv, kill=True)            # crash: replay
    with srv.connect(timeout=T(5)) as c:
        c.wait_topic(TOPIC, 1, timeout=T(10))
        for b, off in ((more, 10), (last, 7)):
            r = produce(c, b)
            assert (r["error_code"], r["base_offset"]) == (0, off)
        r = produce(c, batch(pid, 1, 8, 1, b"b"))
        assert r["error_code"] == kwire.ERR_OUT_OF_ORDER_SEQUENCE_NUMBER
        assert produce(c, batch(pid, 1, 7, 1, b"b"))["base_offset"] == 12
        got = values(c)
        assert len(got) == 13 and len(set(got)) == 13, got


def test_open_transaction_holds_the_lso(samsa):
    srv = samsa.start()
    make_topic(srv)
    with srv.connect(timeout=T(5)) as c:
        # the transaction coordinator's producer id, with the partition added
        # to the transaction (KIP-890 part 1 refuses it otherwise)
        err, pid, epoch = txn.init_pid(c, "tx-1")
        assert (err, epoch) == (0, 0), kwire.error_name(err)
        assert txn.add_partitions(c, "tx-1", pid, 0, {TOPIC: [0]}) == {(TOPIC, 0): 0}
        assert produce(c, kwire.encode_batch([kwire.Record(b"p0"), kwire.Record(b"p1")]))["base_offset"] == 0
        txb = batch(pid, 0, 0, 2, b"t", transactional=True)
        r = produce(c, txb)                         # no transactional id
        assert r["error_code"] == kwire.ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        r = produce(c, txb, transactional_id="tx-1")
        assert (r["error_code"], r["base_offset"]) == (0, 2)
        # a plain batch of the same producer inside its transaction
        r = produce(c, batch(pid, 0, 2, 1, b"x"), transactional_id="tx-1")
        assert r["error_code"] == kwire.ERR_INVALID_TXN_STATE
        assert produce(c, kwire.encode_batch([kwire.Record(b"p4")]))["base_offset"] == 4
        # clients may not write markers
        marker = kwire.encode_batch([kwire.Record(b"\0\0\0\0", key=b"\0\0\0\1")],
                                    producer_id=pid, producer_epoch=0,
                                    attributes=kwire.ATTR_TRANSACTIONAL | kwire.ATTR_CONTROL)
        assert produce(c, marker, transactional_id="tx-1")["error_code"] == 87

    def check(c):
        p = c.fetch(TOPIC, 0, 0, isolation_level=0, timeout=T(5))
        assert p["error_code"] == 0
        assert (p["high_watermark"], p["last_stable_offset"]) == (5, 2)
        assert p["aborted_transactions"] is None
        assert [r["value"] for r in kwire.records_of(p["batches"])] == \
            [b"p0", b"p1", b"t-0", b"t-1", b"p4"]
        p = c.fetch(TOPIC, 0, 0, isolation_level=1, timeout=T(5))
        assert p["error_code"] == 0
        assert (p["high_watermark"], p["last_stable_offset"]) == (5, 2)
        assert p["aborted_transactions"] == []
        assert [r["value"] for r in kwire.records_of(p["batches"])] == [b"p0", b"p1"]
        p = c.fetch(TOPIC, 0, 2, isolation_level=1, timeout=T(5))
        assert p["error_code"] == 0 and p["batches"] == []
        assert c.list_offsets(TOPIC, 0, -1, isolation_level=1)["offset"] == 2
        assert c.list_offsets(TOPIC, 0, -1, isolation_level=0)["offset"] == 5
        dp = kwire.describe_producers(c, TOPIC)[0]["active_producers"]
        assert [(p["producer_id"], p["current_txn_start_offset"]) for p in dp] == [(pid, 2)]

    with srv.connect(timeout=T(5)) as c:
        check(c)
    srv = samsa.restart(srv)
    with srv.connect(timeout=T(5)) as c:
        c.wait_topic(TOPIC, 1, timeout=T(10))
        check(c)
    srv = samsa.restart(srv, kill=True)
    with srv.connect(timeout=T(5)) as c:
        c.wait_topic(TOPIC, 1, timeout=T(10))
        check(c)

"""A partition the metadata has and this broker holds no log of is
answered NOT_LEADER_OR_FOLLOWER by every API that needs the log (Produce,
Fetch, ListOffsets, DeleteRecords, OffsetForLeaderEpoch), as Kafka's
ReplicaManager.getPartitionOrError answers a partition its metadata cache
knows and it does not host: a retriable error on which clients refresh
their metadata. A partition the metadata does not have stays
UNKNOWN_TOPIC_OR_PARTITION. The faults binary's
SAMSA_TEST_SKIP_LOG_PARTITION=1 keeps the broker from creating partition
1's log (on one node the log can otherwise be missing only for a moment,
or when the log could not be created: out of descriptors)."""

import kwire
from samsa_harness import T, wait_until

NOT_LEADER = kwire.ERR_NOT_LEADER_OR_FOLLOWER
UNKNOWN = kwire.ERR_UNKNOWN_TOPIC_OR_PARTITION


def batch(value):
    return kwire.encode_batch([kwire.Record(value)])


def test_partition_without_a_log_answers_not_leader(samsa):
    srv = samsa.start(env={"SAMSA_TEST_SKIP_LOG_PARTITION": 1})
    with srv.connect(timeout=T(10)) as c:
        r = c.create_topic("nohost", 3, timeout=T(20))
        assert r["error_code"] == 0, r
        assert wait_until(lambda: c.produce("nohost", 0, batch(b"a"),
                                            timeout=T(10))["error_code"] == 0,
                          T(20), 0.1)
        md = c.topic_metadata("nohost")
        assert md["error_code"] == 0 and len(md["partitions"]) == 3, md
        # the hosted partitions serve
        assert c.produce("nohost", 2, batch(b"c"), timeout=T(10))["error_code"] == 0
        f = c.fetch("nohost", 0, 0, timeout=T(10))
        assert f["error_code"] == 0
        assert [r["value"] for r in kwire.records_of(f["batches"])][-1] == b"a"
        # partition 1: in the metadata, no log here
        p = c.produce("nohost", 1, batch(b"b"), timeout=T(10))
        assert p["error_code"] == NOT_LEADER, kwire.error_name(p["error_code"])
        assert c.fetch("nohost", 1, 0, timeout=T(10))["error_code"] == NOT_LEADER
        lo = c.list_offsets("nohost", 1, -1, timeout=T(10))
        assert lo["error_code"] == NOT_LEADER, lo
        dr = c.delete_records("nohost", 1, 0, timeout=T(10))
        assert dr["error_code"] == NOT_LEADER, dr
        ofe = c.offset_for_leader_epoch([("nohost", [(1, -1, 0)])], timeout=T(10))
        assert ofe[("nohost", 1)]["error_code"] == NOT_LEADER, ofe
        # a partition the metadata does not have
        p = c.produce("nohost", 3, batch(b"d"), timeout=T(10))
        assert p["error_code"] == UNKNOWN, kwire.error_name(p["error_code"])
        assert c.fetch("nohost", 3, 0, timeout=T(10))["error_code"] == UNKNOWN
        lo = c.list_offsets("nohost", 3, -1, timeout=T(10))
        assert lo["error_code"] == UNKNOWN, lo
    assert srv.stop() == []

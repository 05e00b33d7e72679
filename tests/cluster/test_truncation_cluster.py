"""Leader epochs and truncation (issue 19 step 6, docs/REPLICATION.md) on
a three-node combined cluster with unstable.replication.enable=true.

The scenario makes two logs really diverge and checks that they heal the
KIP-320 way (DivergingEpoch in the new leader's Fetch answer, the old
leader truncating to where its leader epoch ends on the new leader):

- topic `div`, RF 3, min.insync.replicas=1,
  unclean.leader.election.enable=true; N records with acks=all are on all
  three replicas (segment files compared);
- both followers are killed (kill -9); the leader L takes K more records
  with acks=1 that no one else has (its log end is N + K);
- L is killed; the followers restart.  Their new registrations take them
  out of the ISR (as Kafka's controller does with a broker's new
  incarnation; nothing brings them back, no AlterPartition), so the ISR
  is [L]; once L is fenced the partition has no leader, and the unclean
  election makes the first restarted replica the leader of a new epoch
  (ISR [it]); it takes M (> K) records in that epoch;
- L restarts as a follower: its fetch (FetchOffset N + K, LastFetchedEpoch
  its old epoch) gets DivergingEpoch {old epoch, N}; it truncates from
  N + K to N (its log says so, the test prints it), fetches again, and its
  segment files end byte-identical to the new leader's; a consumer reads
  exactly the N + M records, none of the K lost ones.

Then the OFFSET_OUT_OF_RANGE path, for a log without leader epochs: the
leader (alone in the ISR, its high watermark = its LEO, checkpointed in
replication-offset-checkpoint every 200 ms here) takes K2 records with
both followers down, is killed, and loses its leader-epoch-checkpoint;
an unclean election makes a follower leader, which takes M2 < K2 records.
Restarted, the old leader has no epoch to send (no DivergingEpoch can
come) and its high watermark from the checkpoint is its LEO (nothing to
truncate to), so its fetch past the leader's LEO is answered
OFFSET_OUT_OF_RANGE; it asks the leader's LEO with OffsetForLeaderEpoch,
truncates to it (its log line checked) and follows the leader from there
(log ends equal).  Its records between the common end and the leader's
LEO stay as they were: Kafka's fetchOffsetAndTruncate has the same known
gap, which only leader epochs close.

Last, Kafka's truncateFullyAndStartAt: a follower is killed, the leader
takes records and DeleteRecords moves its log start past the follower's
log end; restarted, the follower's fetch is OFFSET_OUT_OF_RANGE (below
the log start), it drops its whole log, restarts it at the leader's log
start (its log line checked) and follows from there.
Every wait is bounded."""

import os
import re
import time

import kwire
from samsa_harness import HOST, T
from test_replication_cluster import (SESSION_MS, SLACK_S, log_bytes,
                                      log_end, make_cluster, partitions,
                                      read_values, wait_parts,
                                      wait_same_logs)

N_BATCHES = 4           # acks=all, on every replica
K_BATCHES = 3           # acks=1 on the old leader only: lost
M_BATCHES = 5           # the new leader's epoch
PER_BATCH = 10
K2_BATCHES = 3          # the OFFSET_OUT_OF_RANGE phase
M2_BATCHES = 1
HW_CKPT_MS = 200


def hw_checkpoint(cluster, node_id, topic, partition=0):
    """node_id's replication-offset-checkpoint entry of topic-partition,
    or None (no file or entry yet)."""
    path = os.path.join(cluster.nodes[node_id].overrides["log.dirs"],
                        "replication-offset-checkpoint")
    try:
        with open(path) as fp:
            lines = fp.read().split("\n")
    except FileNotFoundError:
        return None
    assert lines[0] == "0", lines
    for line in lines[2:2 + int(lines[1])]:
        t, p, off = line.split(" ")
        if (t, int(p)) == (topic, partition):
            return int(off)
    return None


def set_hw_checkpoint(cluster, node_id, topic, partition, offset):
    """Write node_id's replication-offset-checkpoint entry of
    topic-partition (the node is down), Kafka's format, the other entries
    kept."""
    path = os.path.join(cluster.nodes[node_id].overrides["log.dirs"],
                        "replication-offset-checkpoint")
    entries = {}
    try:
        with open(path) as fp:
            lines = fp.read().split("\n")
        for line in lines[2:2 + int(lines[1])]:
            t, p, off = line.split(" ")
            entries[(t, int(p))] = int(off)
    except FileNotFoundError:
        pass
    entries[(topic, partition)] = offset
    body = "0\n%d\n" % len(entries) + "".join(
        "%s %d %d\n" % (t, p, o) for (t, p), o in sorted(entries.items()))
    with open(path + ".tmp", "w") as fp:
        fp.write(body)
    os.replace(path + ".tmp", path)


def wait_log_line(cluster, node_id, pat, timeout):
    """The first match of pat in node_id's log, waited for at most
    timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        m = re.search(pat, cluster.nodes[node_id].srv.stderr_text())
        if m is not None:
            return m
        assert time.monotonic() < deadline, \
            cluster.nodes[node_id].srv.stderr_tail()
        time.sleep(0.05)


def start_and_elect(cluster, nodes, what):
    """Starts nodes and waits until they all see one of them lead div-0
    (the last leader fenced, an unclean election); that partition's view
    and the seconds since the starts began."""
    t0 = time.monotonic()
    for i in nodes:
        cluster.start(i)
    v, _ = wait_parts(cluster, nodes, "div",
                      lambda v: v[0]["leader_id"] in nodes,
                      SESSION_MS / 1000 + SLACK_S + T(10), what)
    return v[0], time.monotonic() - t0


def produce_batches(cluster, node_id, prefix, nbatches, acks):
    """nbatches batches of PER_BATCH records to div-0 on node_id; the
    values written, in order."""
    vals = []
    with cluster.nodes[node_id].connect() as c:
        for b in range(nbatches):
            v = ["%s-%d-%d" % (prefix, b, i) for i in range(PER_BATCH)]
            rec = kwire.encode_batch([kwire.Record(value=x.encode())
                                      for x in v])
            # a node whose image has the partition may not have made its
            # log yet (the image listener runs after Metadata sees it):
            # UNKNOWN_TOPIC_OR_PARTITION / NOT_LEADER_OR_FOLLOWER, which
            # clients retry; so does this, for a bounded time
            deadline = time.monotonic() + T(10)
            while True:
                r = c.produce("div", 0, rec, acks=acks)
                if r["error_code"] not in (3, 6) \
                        or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert r["error_code"] == 0, r
            vals += v
    return vals


def test_divergent_leader_truncates_on_diverging_epoch(samsa):
    cluster = make_cluster(samsa, replication=True, more={
        "replica.high.watermark.checkpoint.interval.ms": str(HW_CKPT_MS)})
    ctl = cluster.wait_leader(T(10))
    with cluster.nodes[ctl].connect() as c:
        r = c.create_topic("div", num_partitions=1, replication_factor=3,
                           configs={"min.insync.replicas": "1",
                                    "unclean.leader.election.enable":
                                    "true"},
                           timeout=T(10))
        assert r["error_code"] == 0, r
    p0, _ = wait_parts(cluster, [1, 2, 3], "div",
                       lambda v: len(v[0]["isr_nodes"]) == 3
                       and v[0]["leader_id"] >= 0, T(10), "div placed")
    old = p0[0]["leader_id"]
    epoch0 = p0[0]["leader_epoch"]
    followers = [i for i in (1, 2, 3) if i != old]

    common = produce_batches(cluster, old, "common", N_BATCHES, -1)
    n, _ = wait_same_logs(cluster, [1, 2, 3], "div", T(10), "div common")
    assert n == len(common), (n, len(common))

    # only the leader gets these: both followers are down
    for i in followers:
        cluster.kill(i)
    lost = produce_batches(cluster, old, "lost", K_BATCHES, 1)
    before = log_end(log_bytes(cluster, old, "div"))
    assert before == n + len(lost), (before, n, len(lost))
    cluster.kill(old)

    # the followers come back; the old leader is fenced and one of them
    # leads a new epoch
    after, waited = start_and_elect(cluster, followers, "div new leader")
    new = after["leader_id"]
    assert after["leader_epoch"] > epoch0, (after, epoch0)
    print("old leader %d killed with log end %d (%d records only it had); "
          "broker %d leads epoch %d %.2f s after the restarts began"
          % (old, before, len(lost), new, after["leader_epoch"], waited))
    fresh = produce_batches(cluster, new, "new", M_BATCHES, 1)
    assert len(fresh) > len(lost)
    end, _ = wait_same_logs(cluster, followers, "div", T(10),
                            "div followers")
    assert end == n + len(fresh), (end, n, len(fresh))

    # the old leader restarts as a follower: DivergingEpoch, truncation
    t0 = time.monotonic()
    cluster.start(old)
    end, waited = wait_same_logs(cluster, [1, 2, 3], "div", T(20),
                                 "div healed")
    assert end == n + len(fresh), (end, n, len(fresh))
    text = cluster.nodes[old].srv.stderr_text()
    m = re.search(r"replication: div-0: diverged from the leader \(its "
                  r"epoch (\d+) ends at (\d+)\): truncating from log end "
                  r"(\d+) to (\d+)", text)
    assert m is not None, cluster.nodes[old].srv.stderr_tail()
    assert (int(m.group(1)), int(m.group(2))) == (epoch0, n), m.group(0)
    assert (int(m.group(3)), int(m.group(4))) == (before, n), m.group(0)
    print("restarted old leader %d: %s; byte-identical to leader %d "
          "(log end %d) %.2f s after its restart began"
          % (old, m.group(0), new, end, time.monotonic() - t0))

    # a consumer of the leader sees the common and the new records only
    vals, hw = read_values(cluster, new, "div")
    assert vals == common + fresh, (len(vals), vals[:2], vals[-2:])
    assert not set(lost) & set(vals)
    assert hw == n + len(fresh), hw
    assert partitions(cluster, new, "div")[0]["leader_id"] == new

    # OFFSET_OUT_OF_RANGE for a log without epochs: the leader takes
    # records no one else has (acks=1, its followers killed), then dies
    # with a checkpointed HW equal to its LEO, as a leader alone in its ISR
    # would have.  The followers are in the ISR again by now
    # (AlterPartition), and a kill -9 of two of the three voters leaves
    # them there (no quorum to change it; Kafka would hold the HW the same
    # way), so the test writes that checkpoint itself, as it removes the
    # leader-epoch-checkpoint below: the state of a node that led alone.
    leader = new
    rest = [i for i in (1, 2, 3) if i != leader]
    for i in rest:
        cluster.kill(i)
    lost2 = produce_batches(cluster, leader, "lost2", K2_BATCHES, 1)
    before2 = end + len(lost2)
    cluster.kill(leader)
    set_hw_checkpoint(cluster, leader, "div", 0, before2)
    assert hw_checkpoint(cluster, leader, "div") == before2
    os.unlink(os.path.join(cluster.nodes[leader].overrides["log.dirs"],
                           "div-0", "leader-epoch-checkpoint"))
    after, _ = start_and_elect(cluster, rest, "div third leader")
    third = after["leader_id"]
    fresh2 = produce_batches(cluster, third, "new2", M2_BATCHES, 1)
    assert len(fresh2) < len(lost2)
    t0 = time.monotonic()
    cluster.start(leader)
    want = end + len(fresh2)
    pat = (r"replication: div-0: past the leader's log end (\d+): "
           r"truncating from log end (\d+) to (\d+)")
    m = wait_log_line(cluster, leader, pat, T(20))
    assert [int(g) for g in m.groups()] == [want, before2, want], m.group(0)
    # it follows the leader from there: the next records reach it
    more = produce_batches(cluster, third, "new3", 1, 1)
    want += len(more)
    deadline = time.monotonic() + T(10)
    while log_end(log_bytes(cluster, leader, "div")) != want:
        assert time.monotonic() < deadline, log_end(
            log_bytes(cluster, leader, "div"))
        time.sleep(0.02)
    assert log_end(log_bytes(cluster, third, "div")) == want
    print("restarted leader %d without leader epochs (log end %d, "
          "checkpointed HW %d): %s; follows broker %d to log end %d "
          "%.2f s after its restart began"
          % (leader, before2, before2, m.group(0), third, want,
             time.monotonic() - t0))

    # truncateFullyAndStartAt: the leader's log start moves past a
    # follower's log end while it is down
    down = leader
    cluster.kill(down)
    gone = produce_batches(cluster, third, "gone", 2, 1)
    start = want + len(gone)
    with cluster.nodes[third].connect() as c:
        # DeleteRecords takes offsets up to the HW: the killed follower is
        # back in the ISR by now (AlterPartition) and holds the HW until
        # it leaves (fenced, or the leader's ISR shrink)
        deadline = time.monotonic() + SESSION_MS / 1000 + SLACK_S + T(10)
        while c.fetch("div", 0, 0, max_bytes=64)["high_watermark"] != start:
            assert time.monotonic() < deadline, "div HW stuck below %d" % start
            time.sleep(0.05)
        r = c.delete_records("div", 0, start)
    assert r["error_code"] == 0 and r["low_watermark"] == start, r
    last = produce_batches(cluster, third, "after", 1, 1)
    t0 = time.monotonic()
    cluster.start(down)
    pat = (r"replication: div-0: log end (\d+) is below the leader's log "
           r"start (\d+): truncating fully and starting there")
    m = wait_log_line(cluster, down, pat, T(20))
    # its log end: want, or (seen once under ASan) the high watermark it
    # checkpointed before the last batch, to which its restart truncated
    # first; either way below the leader's log start
    end_at, start_at = [int(g) for g in m.groups()]
    assert start_at == start, m.group(0)
    assert want - len(more) <= end_at <= want, (m.group(0), want)
    deadline = time.monotonic() + T(10)
    while log_end(log_bytes(cluster, down, "div")) != start + len(last):
        assert time.monotonic() < deadline, log_end(
            log_bytes(cluster, down, "div"))
        time.sleep(0.02)
    batches, _ = kwire.decode_batches(log_bytes(cluster, down, "div"),
                                      decode=False)
    assert batches[0]["base_offset"] == start, batches[0]
    print("restarted follower %d: %s; holds offsets %d-%d of leader %d "
          "%.2f s after its restart began"
          % (down, m.group(0), start, start + len(last) - 1, third,
             time.monotonic() - t0))

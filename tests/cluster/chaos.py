#!/usr/bin/python3
"""The replication fault suite (issue 19, docs/REPLICATION.md "The fault
suite"): a library for tests/cluster/test_chaos_cluster.py and a script.

Three combined nodes (cluster_harness.Cluster), a topic of 3 partitions,
RF 3, min.insync.replicas=2.  Two idempotent acks=all producers write
unique values and record every acknowledged (value, partition, offset):
confluent-kafka (in this process; values "ck-<n>") and kafkajs
(tests/cluster/js/chaos_produce.js; values "js-<n>").  A consumer
(kwire Fetch from each partition's current leader, up to the high
watermark) records every (partition, offset, value) it saw.  Meanwhile a
chaos loop runs one scenario for `duration` seconds:

  kill       kill -9 the leader of a partition chosen each round, restart it
  pause      SIGSTOP a follower longer than replica.lag.time.max.ms (it
             leaves the ISR, the session timeout is longer: it is not
             fenced), then SIGCONT
  terminate  SIGTERM (controlled shutdown) a node, restart it
  elect      kill -9 a partition's preferred leader, restart it, and once it
             is back in the ISR an ElectLeaders PREFERRED (while producing)

Then the cluster is healed (every node up, every ISR full), the producers
stopped, and the checker (check()) says what is wrong:
- every acknowledged record is in the final log at its acknowledged
  offset with its value (none lost), no value is there twice (none
  duplicated), and each producer's values of one partition are in the
  order it sent them;
- every record the consumer saw at offset o is at offset o in the final
  log (nothing a consumer saw is later gone);
- every replica's segment files are byte-identical (the producers are
  stopped, so that is up to the high watermark);
- no kafkajs send reused the sequence number of a failed send (kafkajs
  rolls it back on a failure; chaos_produce.js replaces its producer after
  one so that none does: docs/REPLICATION.md, bug 5).

The cut-off of one node from the others (network namespaces or a proxy)
is not built: see docs/REPLICATION.md.

    python3 tests/cluster/chaos.py --duration 60 --scenario all [--seed N]

Every wait is bounded; the seed of the chaos choices is printed."""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

import kwire  # noqa: E402
import samsa_harness  # noqa: E402
from cluster_harness import Cluster, sigstop  # noqa: E402
from samsa_harness import HOST, T  # noqa: E402
from test_elections_cluster import elect  # noqa: E402
from test_replication_cluster import (log_bytes, partitions,  # noqa: E402
                                      wait_parts)

SCENARIOS = ("kill", "pause", "terminate", "elect")
TOPIC = "chaos"
NPARTS = 3
HEARTBEAT_MS = 300
SESSION_MS = 4000
LAG_MS = 1500
PAUSE_S = LAG_MS / 1000 + 1.5        # longer than the lag time, shorter than the session
FIGURES = {}                        # per scenario, from its rounds
WRITER = {}                         # final log: (partition, offset) -> (producer id, epoch, sequence)
NET_ERRORS = (OSError, kwire.ConnectionClosed, kwire.FrameTimeout,
              kwire.ProtocolError, StopIteration, KeyError)


class Failure(AssertionError):
    pass


def make_cluster(samsa):
    extra = {"unstable.replication.enable": "true",
             "broker.session.timeout.ms": str(SESSION_MS),
             "broker.heartbeat.interval.ms": str(HEARTBEAT_MS),
             "replica.lag.time.max.ms": str(LAG_MS),
             "auto.leader.rebalance.enable": "false"}
    c = Cluster(samsa, n=3, extra=extra)
    c.start_all()
    c.wait_unfenced(T(20))
    ctl = c.wait_leader(T(10))
    with c.nodes[ctl].connect() as conn:
        r = conn.create_topic(TOPIC, num_partitions=NPARTS, replication_factor=3,
                              configs={"min.insync.replicas": "2"}, timeout=T(10))
    assert r["error_code"] == 0, r
    wait_parts(c, [1, 2, 3], TOPIC, full_isr, T(15), "placed")
    return c


def full_isr(v):
    return (len(v) == NPARTS and
            all(sorted(p["isr_nodes"]) == [1, 2, 3] and p["leader_id"] > 0
                for p in v.values()))


def bootstrap(cluster):
    return ",".join("%s:%d" % (HOST, n.ports[0]) for n in cluster.nodes.values())


def view(cluster):
    """Partitions as one live node sees them, all NPARTS of them (None if
    no node answers so)."""
    for n in cluster.live_brokers():
        try:
            v = partitions(cluster, n.node_id, TOPIC)
        except NET_ERRORS:
            continue
        if len(v) == NPARTS:
            return v
    return None


# ---- the clients ----------------------------------------------------------

class CkProducer(threading.Thread):
    """confluent-kafka, idempotent, acks=all; partitions in turn."""

    def __init__(self, bs):
        super().__init__(daemon=True)
        from confluent_kafka import Producer
        self.p = Producer({"bootstrap.servers": bs, "enable.idempotence": True,
                           "acks": "all", "linger.ms": 2,
                           "message.timeout.ms": 120000,
                           "topic.metadata.refresh.interval.ms": 1000,
                           "statistics.interval.ms": 200,
                           "stats_cb": self._stats})
        self.epoch_bumps = 0     # librdkafka's eos.epoch_cnt less the first
        self.producer = None     # (producer id, epoch), the last statistics'
        self.acked = []          # (value, partition, offset)
        self.sent = []           # values in send order
        self.errors = []
        self.ack_times = []
        self.stop = threading.Event()

    def _stats(self, text):
        eos = json.loads(text).get("eos") or {}
        # epoch_cnt counts every producer id/epoch acquired, the first too
        self.epoch_bumps = max(self.epoch_bumps, eos.get("epoch_cnt", 0) - 1)
        self.producer = (eos.get("producer_id"), eos.get("producer_epoch"))

    def _cb(self, err, msg):
        if err is not None:
            self.errors.append(str(err))
            return
        self.acked.append((msg.value().decode(), msg.partition(), msg.offset()))
        self.ack_times.append(time.monotonic())

    def run(self):
        from confluent_kafka import KafkaException
        n = 0
        self.left = None
        self.fatal = None
        try:
            while not self.stop.is_set():
                v = "ck-%d" % n
                try:
                    self.p.produce(TOPIC, value=v.encode(), partition=n % NPARTS,
                                   on_delivery=self._cb)
                    self.sent.append(v)
                    n += 1
                except BufferError:
                    pass
                self.p.poll(0.002)
            self.left = self.p.flush(T(60))
        except KafkaException as e:     # a fatal (idempotence) error
            self.fatal = str(e)
            self.left = self.p.flush(T(60))


class JsProducer(threading.Thread):
    """kafkajs (tests/cluster/js/chaos_produce.js) as a child process; its
    JSON lines are read here."""

    def __init__(self, bs):
        super().__init__(daemon=True)
        node = shutil.which("node") or shutil.which("nodejs")
        assert node, "node is not installed (scripts/deps.sh installs it)"
        self.proc = subprocess.Popen(
            [node, os.path.join(HERE, "js", "chaos_produce.js"), bs, TOPIC,
             str(NPARTS), str(int(T(10) * 1000))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.acked = []
        self.errors = []
        self.ack_times = []
        self.lines = []          # every line, in order (the sends' sequences)
        self.done = None
        self.producers = None    # producer ids used (a failed send replaces it)

    def run(self):
        for line in self.proc.stdout:
            m = json.loads(line)
            self.lines.append(m)
            if "err" in m:
                self.errors.append(m["err"])
            elif "v" in m:
                self.acked.append((m["v"], m["p"], m["o"]))
                self.ack_times.append(time.monotonic())
            elif "done" in m:
                self.done = m["done"]
                self.producers = m["producers"]

    def finish(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=T(60))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=T(10))
            raise Failure("kafkajs producer did not stop within %.0f s" % T(60))
        self.join(T(10))
        if self.proc.returncode != 0:
            raise Failure("kafkajs producer exited %d" % self.proc.returncode)


class Observer(threading.Thread):
    """Fetches every partition from its current leader up to the high
    watermark; records what it saw as {(partition, offset): value}."""

    def __init__(self, cluster):
        super().__init__(daemon=True)
        self.cluster = cluster
        self.seen = {}
        self.pos = [0] * NPARTS
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            v = view(self.cluster)
            if v is None:
                time.sleep(0.1)
                continue
            for i in range(NPARTS):
                lead = v[i]["leader_id"]
                node = self.cluster.nodes.get(lead)
                if node is None or not node.alive():
                    continue
                try:
                    with node.connect(timeout=2.0) as c:
                        p = c.fetch(TOPIC, i, self.pos[i], max_wait_ms=0,
                                    partition_max_bytes=256 << 10, timeout=3.0)
                except NET_ERRORS:
                    continue
                if p["error_code"] != 0:
                    continue
                for b in p["batches"]:
                    for r in b["records"]:
                        off = r["offset"]
                        if off >= self.pos[i]:
                            self.seen[(i, off)] = r["value"].decode()
                    self.pos[i] = max(self.pos[i], b["last_offset"] + 1)
            time.sleep(0.05)


# ---- the faults -----------------------------------------------------------

def wait_healed(cluster, timeout):
    """Every node up and unfenced, every partition's ISR all three."""
    cluster.wait_unfenced(timeout)
    _, took = wait_parts(cluster, [1, 2, 3], TOPIC, full_isr, timeout, "ISR full")
    return took


def pick(cluster, rng):
    """A partition chosen at random and the cluster's view of it."""
    part = rng.randrange(NPARTS)
    return part, view(cluster)[part]


def round_kill(cluster, rng, log):
    part, p = pick(cluster, rng)
    lead = p["leader_id"]
    log("kill -9 node %d (leader of partition %d)" % (lead, part))
    cluster.kill(lead)
    time.sleep(rng.uniform(0.2, 2.0))
    cluster.start(lead)
    return wait_healed(cluster, T(30))


def round_pause(cluster, rng, log):
    part, p = pick(cluster, rng)
    follower = rng.choice([i for i in p["replica_nodes"]
                           if i != p["leader_id"]])
    proc = cluster.nodes[follower].srv.proc
    log("SIGSTOP node %d (follower of partition %d) for %.1f s"
        % (follower, part, PAUSE_S))
    others = [i for i in (1, 2, 3) if i != follower]
    sigstop(proc)
    t0 = time.monotonic()
    try:
        # the leader drops it from the ISR (replica.lag.time.max.ms)
        try:
            wait_parts(cluster, others, TOPIC,
                       lambda x: follower not in x[part]["isr_nodes"],
                       PAUSE_S, "ISR shrink")
            FIGURES["isr_shrinks"] = FIGURES.get("isr_shrinks", 0) + 1
        except AssertionError:
            pass
        time.sleep(max(0.0, PAUSE_S - (time.monotonic() - t0)))
    finally:
        proc.send_signal(signal.SIGCONT)
    return wait_healed(cluster, T(30))


def round_terminate(cluster, rng, log):
    node = rng.choice([1, 2, 3])
    log("SIGTERM node %d" % node)
    t0 = time.monotonic()
    problems = cluster.nodes[node].srv.stop(timeout=T(30))
    took = time.monotonic() - t0
    FIGURES["max_sigterm_exit_s"] = round(max(FIGURES.get("max_sigterm_exit_s", 0), took), 2)
    if problems:
        raise Failure("node %d after SIGTERM: %s" % (node, problems))
    time.sleep(rng.uniform(0.2, 1.0))
    cluster.start(node)
    return wait_healed(cluster, T(30))


def round_elect(cluster, rng, log):
    part, p = pick(cluster, rng)
    pref = p["replica_nodes"][0]
    log("kill -9 node %d (preferred leader of partition %d), restart, "
        "ElectLeaders PREFERRED" % (pref, part))
    cluster.kill(pref)
    others = [i for i in (1, 2, 3) if i != pref]
    wait_parts(cluster, others, TOPIC, lambda x: x[part]["leader_id"] in others,
               T(SESSION_MS / 1000 + 10), "leader moved off %d" % pref)
    cluster.start(pref)
    took = wait_healed(cluster, T(30))
    via = rng.choice([1, 2, 3])
    res = elect(cluster, via, 0, [(TOPIC, list(range(NPARTS)))])
    errs = dict(res[TOPIC])
    # NONE (elected) or ELECTION_NOT_NEEDED (already the leader); no other
    if errs[part] not in (0, 84):
        raise Failure("ElectLeaders partition %d: error %d" % (part, errs[part]))
    wait_parts(cluster, [1, 2, 3], TOPIC,
               lambda x: x[part]["leader_id"] == pref, T(10),
               "preferred leader %d back" % pref)
    return took


ROUNDS = {"kill": round_kill, "pause": round_pause,
          "terminate": round_terminate, "elect": round_elect}


# ---- the checker ----------------------------------------------------------

def final_log(cluster):
    """{(partition, offset): value} of every partition, read from its
    leader up to the high watermark, and the per-partition lists."""
    v = view(cluster)
    out = {}
    per = {}
    WRITER.clear()
    for i in range(NPARTS):
        with cluster.nodes[v[i]["leader_id"]].connect() as c:
            batches, last = c.fetch_all(TOPIC, i, timeout=T(30))
        if last["error_code"] != 0:
            raise Failure("final read of partition %d: error %d"
                          % (i, last["error_code"]))
        per[i] = []
        for b in batches:
            for r in b["records"]:
                off = r["offset"]
                out[(i, off)] = r["value"].decode()
                seq = (b["base_sequence"] + off - b["base_offset"]
                       if b["base_sequence"] >= 0 else -1)
                WRITER[(i, off)] = (b["producer_id"], b["producer_epoch"], seq)
                per[i].append((off, r["value"].decode()))
    return out, per


def duplicates(final):
    """The values in the final log more than once: (broker, resent) lists
    of (value, [(partition, offset, producer id, epoch, sequence)]).
    broker: two copies written by one producer id and epoch, which the
    broker's duplicate detection must have refused (Kafka's
    ProducerStateEntry: the epoch and sequences of the last five batches);
    resent: copies under different producer ids or epochs, which no broker
    can tell apart: the client sent the value again after bumping its epoch
    (librdkafka 2.0 does so after an OUT_OF_ORDER_SEQUENCE_NUMBER answer to
    a request that followed a failed one, and resends a batch that may have
    been written: docs/REPLICATION.md, bug 6)."""
    where = {}
    for k, v in final.items():
        where.setdefault(v, []).append(k)
    broker, resent = [], []
    for v, ks in sorted(where.items()):
        if len(ks) < 2:
            continue
        copies = [k + WRITER.get(k, (None, None, None)) for k in sorted(ks)]
        writers = [(c[2], c[3]) for c in copies]
        (broker if len(set(writers)) < len(writers) else resent).append((v, copies))
    return broker, resent


def check(acked, seen, final, per, ck_bumps=None):
    """The problems found (empty: none).  acked: [(value, partition,
    offset)]; seen: {(partition, offset): value} a consumer saw; final and
    per as final_log's; ck_bumps: how many times confluent-kafka bumped its
    producer epoch (librdkafka's statistics)."""
    problems = []
    lost = [(v, p, o) for v, p, o in acked if final.get((p, o)) != v]
    if lost:
        where = {v: k for k, v in final.items()}
        problems.append("%d acknowledged records lost or moved, e.g. %s (final "
                        "there: %s; the value in the final log at: %s)"
                        % (len(lost), lost[:3],
                           [final.get((p, o)) for _, p, o in lost[:3]],
                           [where.get(v) for v, _, _ in lost[:3]]))
    broker, resent = duplicates(final)
    if broker:
        problems.append("%d values in the log more than once from one producer "
                        "id and epoch, e.g. %s (partition, offset, producer "
                        "id, epoch, sequence)" % (len(broker), broker[:3]))
    for v, copies in resent:
        if not v.startswith("ck-") or ck_bumps is None or ck_bumps < 1:
            problems.append("%s in the log more than once under different "
                            "producer epochs with no epoch bump of its "
                            "producer counted: %s" % (v, copies))
    FIGURES["resent_after_epoch_bump"] = len(resent)
    gone = [(k, v, final.get(k)) for k, v in seen.items() if final.get(k) != v]
    if gone:
        problems.append("%d records a consumer saw are gone or changed, e.g. %s"
                        % (len(gone), gone[:3]))
    again = {(c[0], c[1]) for _, copies in resent for c in copies[1:]}
    for i, recs in per.items():
        offs = [o for o, _ in recs]
        if offs != sorted(set(offs)):
            problems.append("partition %d: offsets not increasing" % i)
        last = {}
        for o, v in recs:
            if (i, o) in again:
                continue            # a copy sent again: its order is its own
            tag, n = v.rsplit("-", 1)
            if int(n) < last.get(tag, -1):
                problems.append("partition %d: %s-%s at offset %d after %s-%d"
                                % (i, tag, n, o, tag, last[tag]))
                break
            last[tag] = int(n)
    return problems


def seq_reuses(lines):
    """kafkajs sends that reused the sequence number of an earlier failed
    send of the same producer and partition (kafkajs rolls it back on a
    failure although the broker may have written the batch: bug 5 of
    docs/REPLICATION.md); chaos_produce.js replaces its producer after a
    failed send so that none does.  lines: JsProducer.lines."""
    failed = {}      # (producer, partition) -> [(value, sequences)] since its last ack
    out = []
    for m in lines:
        if "v" not in m or not m["seq"]:
            continue
        key = (m["producer"], m["p"])
        if "err" in m:
            failed.setdefault(key, []).append((m["v"], set(m["seq"])))
            continue
        same = [v for v, seqs in failed.pop(key, []) if m["seq"][0] in seqs]
        if same:
            out.append("%s reused sequence %d of the failed send(s) of %s "
                       "(producer %d, partition %d)"
                       % (m["v"], m["seq"][0], ", ".join(same), m["producer"], m["p"]))
    return out


def same_logs(cluster, timeout):
    """Waits until each partition's segment files are alike on all three
    nodes; returns the problems (empty: alike)."""
    deadline = time.monotonic() + timeout
    while True:
        diff = []
        for i in range(NPARTS):
            logs = {n: log_bytes(cluster, n, TOPIC, i) for n in (1, 2, 3)}
            if len(set(logs.values())) != 1:
                diff.append("partition %d: %s" % (i, {n: len(b) for n, b in logs.items()}))
        if not diff or time.monotonic() > deadline:
            return ["replicas differ: " + "; ".join(diff)] if diff else []
        time.sleep(0.1)


def max_gap(times, t0, t1):
    """The longest time without an acknowledgement between t0 and t1."""
    pts = [t0] + sorted(t for t in times if t0 <= t <= t1) + [t1]
    return max(b - a for a, b in zip(pts, pts[1:]))


# ---- one scenario -----------------------------------------------------------

def run_scenario(samsa, scenario, duration, seed, log=print):
    """Runs one scenario; returns a dict of figures with "problems" (empty:
    passed)."""
    rng = random.Random(seed)
    FIGURES.clear()
    log("scenario %s, %.0f s, seed %d" % (scenario, duration, seed))
    cluster = make_cluster(samsa)
    bs = bootstrap(cluster)
    ck = CkProducer(bs)
    js = JsProducer(bs)
    obs = Observer(cluster)
    for t in (ck, js, obs):
        t.start()
    t0 = time.monotonic()
    rounds = 0
    heal = []
    time.sleep(1.0)
    while time.monotonic() - t0 < duration:
        heal.append(ROUNDS[scenario](cluster, rng, log))
        rounds += 1
        time.sleep(rng.uniform(0.2, 1.0))
    t1 = time.monotonic()
    time.sleep(1.0)
    ck.stop.set()
    ck.join(T(90))
    js.finish()
    obs.stop.set()
    obs.join(T(30))
    wait_healed(cluster, T(30))
    final, per = final_log(cluster)
    acked = ck.acked + js.acked
    problems = check(acked, dict(obs.seen), final, per, ck.epoch_bumps)
    problems += ["kafkajs: " + r for r in seq_reuses(js.lines)]
    problems += same_logs(cluster, T(20))
    with open(os.path.join(samsa.tmp_root, "kafkajs.jsonl"), "w") as fp:
        for m in js.lines:
            fp.write(json.dumps(m) + "\n")
    if ck.fatal:
        problems.append("confluent-kafka: fatal error %s (after %d acks)"
                        % (ck.fatal, len(ck.acked)))
    if ck.left:
        problems.append("confluent-kafka: %d records not delivered at flush" % ck.left)
    res = {"scenario": scenario, "seed": seed, "duration_s": round(t1 - t0, 1),
           "rounds": rounds, "acked_ck": len(ck.acked), "acked_js": len(js.acked),
           "failed_ck": len(ck.errors), "failed_js": len(js.errors),
           "ck_epoch_bumps": ck.epoch_bumps,
           "js_producers": js.producers,
           "final_records": len(final), "seen_by_consumer": len(obs.seen),
           "max_ack_gap_ck_s": round(max_gap(ck.ack_times, t0, t1), 2),
           "max_ack_gap_js_s": round(max_gap(js.ack_times, t0, t1), 2),
           "max_heal_s": round(max(heal), 2) if heal else 0.0,
           "problems": problems}
    res.update(FIGURES)
    log(json.dumps(res))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=60)
    ap.add_argument("--scenario", default="all",
                    help="one of %s or all" % ", ".join(SCENARIOS))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", action="store_true",
                    help="keep the servers' directories of passed scenarios too")
    a = ap.parse_args()
    names = SCENARIOS if a.scenario == "all" else [a.scenario]
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    failed = 0
    for name in names:
        root = samsa_harness.make_tmp_root()
        factory = samsa_harness.ServerFactory(root)
        try:
            res = run_scenario(factory, name, a.duration, seed)
            bad = res["problems"]
        except Exception as e:  # a broken wait is a failure of this scenario
            bad = ["%s: %s" % (type(e).__name__, e)]
            print("scenario %s failed: %s" % (name, bad[0]))
        bad += factory.stop_all()
        if bad:
            failed += 1
            print("FAIL %s (seed %d, dirs kept under %s):\n  %s"
                  % (name, seed, root, "\n  ".join(bad)))
        elif a.keep:
            print("PASS %s (seed %d, dirs kept under %s)" % (name, seed, root))
        else:
            samsa_harness.remove_tmp_root(root)
            print("PASS %s (seed %d)" % (name, seed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

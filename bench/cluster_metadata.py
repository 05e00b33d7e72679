#!/usr/bin/env python3
"""Metadata at scale on 3 controllers + 3 brokers (tests/cluster's harness,
loopback, one machine).

For each of two settings of metadata.log.max.record.bytes.between.snapshots
(the default, 20 MiB: no snapshot is taken in this run; and SNAP bytes:
libraft snapshots every SNAP/1024 entries), on a fresh cluster:
  1. CreateTopics of TOPICS topics x PARTS partitions, one topic per
     request, sent one after the other through broker 4 (forwarded to the
     active controller): total seconds and requests/s;
  2. the metadata log size: bytes under the active controller's
     __raft_metadata (raft segments and snapshots), apparent and on disk;
  3. Metadata (v12, all topics) latency at broker 4: REQS requests, the
     response read whole (not decoded): median and p99 ms, response bytes;
  4. restart time of broker 5 (SIGTERM, then start): seconds from the
     launch until every broker lists it unfenced again (it has replayed
     the metadata log, or its snapshot and the entries after, registered,
     and caught up to its registration).
Usage: SAMSA_SERVER=build/samsa-server bench/cluster_metadata.py
         [TOPICS [PARTS [SNAP [REQS]]]]   (default 1000 10 102400 50)
Prints one JSON line per setting; BENCHMARKS.md has the figures.
"""
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cluster"))
import kwire                                    # noqa: E402
import samsa_harness as h                       # noqa: E402
from cluster_harness import Cluster             # noqa: E402


def dir_bytes(path):
    """(apparent bytes, bytes on disk): raft_uv preallocates its open
    segments, so the apparent size counts unwritten space."""
    total = disk = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                st = os.stat(os.path.join(root, f))
            except OSError:
                continue
            total += st.st_size
            disk += st.st_blocks * 512
    return total, disk


def listed(cluster, node_id):
    return {b["node_id"] for b in cluster.metadata(node_id, topics=[])["brokers"]}


def wait_listed(cluster, want, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if all(listed(cluster, n.node_id) == want for n in cluster.live_brokers()):
                return
        except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout):
            pass
        time.sleep(0.02)
    raise RuntimeError("brokers %s not listed within %.0f s" % (want, timeout))


def run(root, topics, parts, snap_bytes, reqs):
    factory = h.ServerFactory(root)
    extra = {"broker.session.timeout.ms": "9000",
             "broker.heartbeat.interval.ms": "500"}
    if snap_bytes:
        extra["metadata.log.max.record.bytes.between.snapshots"] = str(snap_bytes)
    cluster = Cluster(factory, n=3, brokers=3, extra=extra)
    out = {"topics": topics, "partitions_per_topic": parts,
           "snapshot_bytes": snap_bytes or "default (20 MiB)"}
    try:
        cluster.start_all()
        leader = cluster.wait_quorum_leader(60)
        wait_listed(cluster, {4, 5, 6}, 60)

        t0 = time.monotonic()
        with cluster.nodes[4].connect(timeout=60) as c:
            for i in range(topics):
                r = c.create_topic("bench-%05d" % i, num_partitions=parts, timeout=60)
                assert r["error_code"] == 0, r
        dt = time.monotonic() - t0
        out["create_s"] = round(dt, 2)
        out["create_per_s"] = round(topics / dt, 1)
        # every broker has applied them all (Metadata lists them)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if all(len(cluster.topics(i)) >= topics for i in (4, 5, 6)):
                break
            time.sleep(0.2)
        out["all_brokers_have_them_s"] = round(time.monotonic() - t0, 2)
        leader = cluster.wait_quorum_leader(30)
        out["metadata_log_bytes"], out["metadata_log_disk_bytes"] = dir_bytes(
            os.path.join(cluster.nodes[leader].overrides["log.dirs"], "__raft_metadata"))

        lat = []
        md = cluster.metadata(4, topics=None)
        out["metadata_partitions"] = sum(len(t["partitions"]) for t in md["topics"])
        body = kwire.encode_metadata_request(12, None)
        with cluster.nodes[4].connect(timeout=60) as c:
            for _ in range(reqs):
                t1 = time.monotonic()
                c.request_raw(kwire.API_METADATA, 12, body, timeout=60)
                lat.append((time.monotonic() - t1) * 1000)
        lat.sort()
        out["metadata_ms_median"] = round(statistics.median(lat), 1)
        out["metadata_ms_p99"] = round(lat[min(len(lat) - 1, int(len(lat) * 0.99))], 1)

        node = cluster.nodes[5]
        assert node.srv.stop() == []
        t0 = time.monotonic()
        cluster.start(5)
        wait_listed(cluster, {4, 5, 6}, 120)
        out["broker_restart_unfenced_s"] = round(time.monotonic() - t0, 2)
        log = node.srv.stderr_text()
        out["broker_restart_loaded_snapshot"] = "snapshot loaded at offset" in log
    finally:
        for srv in factory.servers:
            srv.stop(timeout=60)
    return out


def main():
    a = sys.argv[1:]
    topics = int(a[0]) if len(a) > 0 else 1000
    parts = int(a[1]) if len(a) > 1 else 10
    snap = int(a[2]) if len(a) > 2 else 102400
    reqs = int(a[3]) if len(a) > 3 else 50
    for snap_bytes in (0, snap):
        root = tempfile.mkdtemp(prefix="samsa-bench-cm-")
        print(json.dumps(run(root, topics, parts, snap_bytes, reqs)), flush=True)


if __name__ == "__main__":
    main()

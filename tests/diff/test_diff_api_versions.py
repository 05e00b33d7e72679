"""ApiVersions of Apache Kafka 4.4 and samsa-server side by side: every
API's version range, API by API, the APIs only one of them serves, the
feature levels, and the answer to a version neither serves.

Every difference is listed in KNOWN (and in docs/COMPATIBILITY.md,
"Differences found by tests/diff") with its reason; an unlisted one fails
the test, and so does a listed one that is gone."""

import diffkit
import kwire
from kwire import Reader

API_NAMES = {
    0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 4: "LeaderAndIsr",
    5: "StopReplica", 6: "UpdateMetadata", 7: "ControlledShutdown",
    8: "OffsetCommit", 9: "OffsetFetch", 10: "FindCoordinator", 11: "JoinGroup",
    12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup", 15: "DescribeGroups",
    16: "ListGroups", 17: "SaslHandshake", 18: "ApiVersions", 19: "CreateTopics",
    20: "DeleteTopics", 21: "DeleteRecords", 22: "InitProducerId",
    23: "OffsetForLeaderEpoch", 24: "AddPartitionsToTxn", 25: "AddOffsetsToTxn",
    26: "EndTxn", 27: "WriteTxnMarkers", 28: "TxnOffsetCommit", 29: "DescribeAcls",
    30: "CreateAcls", 31: "DeleteAcls", 32: "DescribeConfigs", 33: "AlterConfigs",
    34: "AlterReplicaLogDirs", 35: "DescribeLogDirs", 36: "SaslAuthenticate",
    37: "CreatePartitions", 38: "CreateDelegationToken", 39: "RenewDelegationToken",
    40: "ExpireDelegationToken", 41: "DescribeDelegationToken", 42: "DeleteGroups",
    43: "ElectLeaders", 44: "IncrementalAlterConfigs",
    45: "AlterPartitionReassignments", 46: "ListPartitionReassignments",
    47: "OffsetDelete", 48: "DescribeClientQuotas", 49: "AlterClientQuotas",
    50: "DescribeUserScramCredentials", 51: "AlterUserScramCredentials", 52: "Vote",
    53: "BeginQuorumEpoch", 54: "EndQuorumEpoch", 55: "DescribeQuorum",
    56: "AlterPartition", 57: "UpdateFeatures", 58: "Envelope", 59: "FetchSnapshot",
    60: "DescribeCluster", 61: "DescribeProducers", 62: "BrokerRegistration",
    63: "BrokerHeartbeat", 64: "UnregisterBroker", 65: "DescribeTransactions",
    66: "ListTransactions", 67: "AllocateProducerIds", 68: "ConsumerGroupHeartbeat",
    69: "ConsumerGroupDescribe", 70: "ControllerRegistration",
    71: "GetTelemetrySubscriptions", 72: "PushTelemetry", 73: "AssignReplicasToDirs",
    74: "ListConfigResources", 75: "DescribeTopicPartitions",
    76: "ShareGroupHeartbeat", 77: "ShareGroupDescribe", 78: "ShareFetch",
    79: "ShareAcknowledge", 80: "AddRaftVoter", 81: "RemoveRaftVoter",
    82: "UpdateRaftVoter", 83: "InitializeShareGroupState", 84: "ReadShareGroupState",
    85: "WriteShareGroupState", 86: "DeleteShareGroupState",
    87: "ReadShareGroupStateSummary", 88: "StreamsGroupHeartbeat",
    89: "StreamsGroupDescribe", 90: "DescribeShareGroupOffsets",
    91: "AlterShareGroupOffsets", 92: "DeleteShareGroupOffsets",
    93: "StreamsGroupTopologyDescriptionUpdate", 94: "UnregisterController",
}

# kwire decodes ApiVersions v0-v4
KWIRE_MAX = 4

NEWER = ("Samsa serves the versions up to its maximum; the newer ones that "
         "Kafka added since are not implemented yet")
OLD_KEPT = ("Kafka 4.0 removed the versions below its minimum (KIP-896); Samsa "
            "still serves them for older clients (e.g. OffsetCommit v1 as Sarama "
            "sends it, docs/GROUPS.md)")
V = "ApiVersions v4"

# 'CASE: PATH' -> (Kafka's value, Samsa's value, why)
KNOWN = {
    V + ": api 0 Produce": ((0, 13), (0, 11), NEWER),
    V + ": api 1 Fetch": ((4, 18), (4, 16), NEWER),
    V + ": api 2 ListOffsets": ((1, 11), (1, 9), NEWER),
    V + ": api 3 Metadata": ((0, 13), (0, 12), NEWER),
    V + ": api 8 OffsetCommit": ((2, 10), (0, 9), OLD_KEPT + "; and the newest not yet"),
    V + ": api 9 OffsetFetch": ((1, 10), (0, 9), OLD_KEPT + "; and the newest not yet"),
    V + ": api 10 FindCoordinator": ((0, 6), (0, 4), NEWER),
    V + ": api 15 DescribeGroups": ((0, 6), (0, 5), NEWER),
    V + ": api 18 ApiVersions": ((0, 5), (0, 4), NEWER),
    V + ": api 24 AddPartitionsToTxn": ((0, 5), (0, 3), NEWER),
    V + ": api 26 EndTxn": ((0, 5), (0, 4), NEWER),
    V + ": api 28 TxnOffsetCommit": ((0, 6), (0, 4), NEWER),
    V + ": api 32 DescribeConfigs": ((1, 4), (0, 4), OLD_KEPT),
    V + ": api 35 DescribeLogDirs": ((1, 5), (0, 4), OLD_KEPT + "; and the newest not yet"),
    V + ": api 42 DeleteGroups": ((0, 3), (0, 2), NEWER),
    V + ": api 66 ListTransactions": ((0, 2), (0, 1), NEWER),
    V + ": only Kafka serves": (
        [27, 34, 38, 39, 40, 41, 55, 57, 74, 75, 76,
         77, 78, 79, 80, 81, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94], [],
        "not implemented in Samsa: delegation tokens, "
        "replica log-dir moves, feature updates, dynamic quorum "
        "membership, share and streams groups, the transaction-marker and "
        "share-state inter-broker APIs, DescribeTopicPartitions, "
        "ListConfigResources; DescribeQuorum is served "
        "only by a node of a multi-node KRaft quorum, not by a single node"),
    V + ": supported_features": (
        [("eligible.leader.replicas.version", 0, 1), ("group.version", 0, 1),
         ("kraft.version", 0, 1), ("metadata.version", 7, 33),
         ("share.version", 0, 2), ("streams.version", 0, 1),
         ("transaction.version", 0, 2)],
        [("metadata.version", 7, 7)],
        "Samsa has one metadata format (metadata.version level 7) and none "
        "of the other feature flags (group, transaction, share, streams, ELR, "
        "kraft versions)"),
    V + ": finalized_features": (
        [("eligible.leader.replicas.version", 1, 1), ("group.version", 1, 1),
         ("metadata.version", 33, 33), ("share.version", 2, 2),
         ("streams.version", 1, 1), ("transaction.version", 2, 2)],
        [("metadata.version", 7, 7)],
        "as supported_features: Samsa finalizes metadata.version 7 only"),
}


def features(tags):
    """The feature tags of an ApiVersions v3+ answer (KIP-584), decoded:
    supported (name, min, max), finalized (name, min level, max level),
    sorted by name; the epoch is masked (it counts metadata changes)."""
    out = {}
    if 0 in tags:
        r = Reader(tags[0])
        out["supported_features"] = sorted(r.array(lambda rr: (
            rr.string(flexible=True), rr.i16(), rr.i16(), rr.tags())[:3], flexible=True))
    if 1 in tags:
        out["finalized_features_epoch"] = diffkit.MASKED
    if 2 in tags:
        r = Reader(tags[2])

        def fin(rr):
            name, mx, mn = rr.string(flexible=True), rr.i16(), rr.i16()
            rr.tags()
            return (name, mn, mx)
        out["finalized_features"] = sorted(r.array(fin, flexible=True))
    for t in tags:
        if t not in (0, 1, 2):
            out["tag %d" % t] = tags[t]
    return out


def versions(conn, version):
    return conn.api_versions(version)


def test_api_versions_ranges(pair):
    """Every API's range (the highest version both serve), the APIs only
    one serves, and the feature levels."""
    ka, sa = pair.connect()
    with ka, sa:
        k, s = versions(ka, 0), versions(sa, 0)
        hi = min(k["api_keys"][18][1], s["api_keys"][18][1], KWIRE_MAX)
        assert hi == 4, (k["api_keys"][18], s["api_keys"][18])
        k, s = versions(ka, hi), versions(sa, hi)
    diffs = []
    for key in ("error_code",):
        if k[key] != s[key]:
            diffs.append((key, k[key], s[key]))
    kk, sk = k["api_keys"], s["api_keys"]
    for api in sorted(set(kk) & set(sk)):
        if kk[api] != sk[api]:
            diffs.append(("api %d %s" % (api, API_NAMES.get(api, "?")), kk[api], sk[api]))
    only_k = sorted(set(kk) - set(sk))
    only_s = sorted(set(sk) - set(kk))
    if only_k:
        diffs.append(("only Kafka serves", only_k, []))
    if only_s:
        diffs.append(("only Samsa serves", [], only_s))
    kf, sf = features(k["tags"]), features(s["tags"])
    for key in sorted(set(kf) | set(sf)):     # whole lists, one line each
        a, b = kf.get(key, diffkit.MISSING), sf.get(key, diffkit.MISSING)
        if a != b:
            diffs.append((key, a, b))
    print("APIs only Kafka serves: %s" % ", ".join(
        "%d %s" % (a, API_NAMES.get(a, "?")) for a in only_k))
    diffkit.verdict("ApiVersions v%d" % hi, diffs, KNOWN)


def test_api_versions_v0_same_ranges(pair):
    """v0 (no tags, no throttle) lists the same ranges as v4, on both."""
    ka, sa = pair.connect()
    with ka, sa:
        k0, s0 = versions(ka, 0), versions(sa, 0)
        k4, s4 = versions(ka, 4), versions(sa, 4)
    assert k0["error_code"] == s0["error_code"] == 0
    assert k0["api_keys"] == k4["api_keys"]
    assert s0["api_keys"] == s4["api_keys"]
    assert set(k0) == set(s0)


def test_api_versions_unsupported_version(pair):
    """A version neither serves: UNSUPPORTED_VERSION, in v0 format, with
    at least ApiVersions' own range (KIP-511)."""
    ka, sa = pair.connect()
    got = {}
    with ka, sa:
        for name, c in (("kafka", ka), ("samsa", sa)):
            corr = c.corr()
            # v127 with a v2 header and an empty flexible body
            c.send(kwire.encode_request(18, 127, corr, b"\x00\x00\x00", c.client_id))
            got[name] = kwire.decode_api_versions_response(c.recv_frame(5.0), 0)
    k, s = got["kafka"], got["samsa"]

    def shape(r):
        # the range's top is the listed api 18 difference
        av = r["api_keys"].get(18)
        return {"error_code": r["error_code"],
                "api_versions_min": av[0] if av else diffkit.MISSING}
    diffkit.compare("ApiVersions v127", shape(k), shape(s), KNOWN)


def test_known_differences_documented():
    missing = diffkit.undocumented(KNOWN)
    assert not missing, ("docs/COMPATIBILITY.md does not list (as `CASE: PATH`):\n  "
                         + "\n  ".join(missing))

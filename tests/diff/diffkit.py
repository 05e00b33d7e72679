"""Comparing Apache Kafka's and samsa-server's answers to the same request.

A case decodes both responses into plain Python values (dicts, lists,
ints, strings), masks what legitimately differs between two brokers
(mask()), and diff() lists every remaining difference as
(path, kafka_value, samsa_value).  verdict() checks a case's differences
against the allow-list of known ones (KNOWN in the test module: path ->
(kafka_value, samsa_value, reason), each also listed in
docs/COMPATIBILITY.md): an unlisted difference fails the test, and so does
a listed one that no longer shows up (or shows up with other values), so
the list stays exact.
"""

import os
import re

import pytest

MISSING = "<absent>"
MASKED = "<masked>"

# Fields that differ between any two brokers: ids, clocks, addresses,
# epochs, throttling.  Masked by key name wherever they appear.
MASK_KEYS = {
    "correlation_id", "throttle_time_ms", "cluster_id", "controller_id",
    "node_id", "leader_id", "host", "port", "rack", "topic_id",
    "replica_nodes", "isr_nodes", "offline_replicas", "leader_epoch",
    "producer_id", "member_id", "leader",
    "timestamp", "log_start_offset_time",
}

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "docs", "COMPATIBILITY.md")


def text_or_null(v):
    """Kafka's error messages are free text: compare only whether there is
    one (None stays None, any text becomes '<text>')."""
    return None if v is None else "<text>"


def mask(value, keys=MASK_KEYS, texts=("error_message",), extra=None):
    """A copy of value with masked keys replaced by MASKED and free-text
    keys reduced to text_or_null; extra: {key: function} for case-specific
    normalisation."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if extra and k in extra:
                out[k] = extra[k](v)
            elif k in keys:
                out[k] = MASKED
            elif k in texts:
                out[k] = text_or_null(v)
            else:
                out[k] = mask(v, keys, texts, extra)
        return out
    if isinstance(value, (list, tuple)):
        return [mask(v, keys, texts, extra) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return "<%d bytes>" % len(value)
    return value


def diff(kafka, samsa, path=""):
    """[(path, kafka_value, samsa_value)] of every difference."""
    out = []
    if isinstance(kafka, dict) and isinstance(samsa, dict):
        for k in sorted(set(kafka) | set(samsa), key=str):
            p = "%s.%s" % (path, k) if path else str(k)
            out += diff(kafka.get(k, MISSING), samsa.get(k, MISSING), p)
    elif isinstance(kafka, list) and isinstance(samsa, list):
        if len(kafka) != len(samsa):
            out.append(("%s.len" % path, len(kafka), len(samsa)))
        for i, (a, b) in enumerate(zip(kafka, samsa)):
            out += diff(a, b, "%s[%d]" % (path, i))
    elif kafka != samsa:
        out.append((path, kafka, samsa))
    return out


def verdict(case, diffs, known):
    """Checks the differences of one case (a name such as 'Metadata v12
    unknown topic') against known {'CASE: PATH': (kafka, samsa, reason)}.
    Returns the report text; fails the test listing the unlisted
    differences and the listed ones that are gone."""
    prefix = case + ": "
    want = {k[len(prefix):]: v for k, v in known.items() if k.startswith(prefix)}
    lines, bad = [], []
    seen = set()
    for path, a, b in diffs:
        seen.add(path)
        w = want.get(path)
        if w is None:
            bad.append("UNLISTED   %s%s: kafka=%r samsa=%r" % (prefix, path, a, b))
        elif (w[0], w[1]) != (a, b):
            bad.append("CHANGED    %s%s: kafka=%r samsa=%r (listed as kafka=%r "
                       "samsa=%r)" % (prefix, path, a, b, w[0], w[1]))
        else:
            lines.append("known      %s%s: kafka=%r samsa=%r (%s)" % (
                prefix, path, a, b, w[2]))
    for path, w in want.items():
        if path not in seen:
            bad.append("GONE       %s%s: listed as kafka=%r samsa=%r, now the "
                       "same: remove it from KNOWN and docs/COMPATIBILITY.md"
                       % (prefix, path, w[0], w[1]))
    report = "\n".join(lines + bad)
    print(report)
    if bad:
        pytest.fail("%s: differences from Apache Kafka not as listed:\n%s"
                    % (case, report), pytrace=False)
    return report


def compare(case, kafka, samsa, known, **mask_kw):
    """mask, diff, verdict in one."""
    return verdict(case, diff(mask(kafka, **mask_kw), mask(samsa, **mask_kw)), known)


def common_versions(kafka_conn, samsa_conn, limits):
    """(highest, lowest) version of each api in limits that both brokers
    serve; the highest capped at limits[api] (what kwire encodes)."""
    kv = kafka_conn.api_versions(3)["api_keys"]
    sv = samsa_conn.api_versions(3)["api_keys"]
    hi = {a: min(kv[a][1], sv[a][1], limits[a]) for a in limits}
    lo = {a: max(kv[a][0], sv[a][0]) for a in limits}
    return hi, lo


def each_version(versions, check):
    """check(v) for each version; fails after all ran, with every
    version's report."""
    failed = []
    for v in versions:
        try:
            check(v)
        except pytest.fail.Exception as e:
            failed.append(str(e))
    if failed:
        pytest.fail("\n".join(failed), pytrace=False)


def both(pair, fn):
    """fn(conn) on Kafka and on samsa: (kafka's answer, samsa's)."""
    ka, sa = pair.connect()
    with ka, sa:
        return fn(ka), fn(sa)


def compare_pair(case, pair, fn, known, **mask_kw):
    """compare() of fn's answers from both brokers of pair."""
    k, s = both(pair, fn)
    return compare(case, k, s, known, **mask_kw)


def undocumented(known):
    """The allow-list entries that docs/COMPATIBILITY.md does not name (each
    must appear there, in backquotes, as `CASE: PATH`)."""
    with open(DOC) as f:
        doc = f.read()
    names = set(re.findall(r"`([^`]+)`", doc))
    return [k for k in known if k not in names]



def _fmt(v, names):
    if v == MISSING:
        return "does not list it"
    if isinstance(v, dict):
        return "lists it (%s)" % ", ".join(
            "%s %r" % kv for kv in v.items()
            if kv[0] in ("value", "config_source", "source", "config_type"))
    if v == "<text>":
        return "a message"
    if v is None:
        return "null"
    if v == []:
        return "none" if names else "`[]`"
    if isinstance(v, list) and isinstance(v[0], int):
        return ", ".join("%d %s" % (x, names.get(x, "?")) for x in v)
    if isinstance(v, list) and isinstance(v[0], tuple):
        return ", ".join("%s %d-%d" % x for x in v)
    if isinstance(v, tuple):
        return "v%d-v%d" % v
    return "`%s`" % (v,)


def doc_lines(known, names=None):
    """docs/COMPATIBILITY.md's lines for known, one per difference."""
    out = []
    for k, (kv, sv, why) in known.items():
        why = why.rstrip(".")
        out.append("- `%s`: Kafka %s; Samsa %s. %s." % (
            k, _fmt(kv, names or {}), _fmt(sv, names or {}), why[0].upper() + why[1:]))
    return out


if __name__ == "__main__":
    # python3 tests/diff/diffkit.py: the "Listed" lines of
    # docs/COMPATIBILITY.md from the tests' KNOWN lists
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "integration"))
    import test_diff_api_versions as av
    import test_diff_requests as rq
    import test_diff_groups as gr
    import test_diff_admin as ad
    import test_diff_txn as tx
    import test_diff_kip848 as cg
    for mod, names in ((av, av.API_NAMES), (rq, None), (gr, None), (ad, None),
                       (tx, None), (cg, None)):
        if not mod.KNOWN:
            continue
        print("### `tests/diff/%s.py`\n" % mod.__name__)
        print("\n".join(doc_lines(mod.KNOWN, names)))
        print()

"""The replication fault suite, bounded (issue 19, docs/REPLICATION.md
"The fault suite"): each scenario of tests/cluster/chaos.py for
CHAOS_S seconds on 3 nodes, RF 3, min.insync.replicas=2, with
confluent-kafka and kafkajs idempotent acks=all producers and a consumer;
then the checker: no acknowledged record lost or duplicated, per-producer
order kept, nothing a consumer saw later gone, every replica's segments
byte-identical.  The seed is printed (SAMSA_CHAOS_SEED fixes it); the
script runs longer: `python3 tests/cluster/chaos.py --duration 60
--scenario all`."""

import os
import random

import pytest

import chaos

CHAOS_S = 8.0
# a SIGTERM'd node exits once its controlled shutdown is approved: its
# delayed acks=all Produces are answered when its leadership ends, not at
# their timeout (10 s for kafkajs here; broker/replica.c)
SIGTERM_EXIT_S = 5.0
SEED = int(os.environ.get("SAMSA_CHAOS_SEED", random.randrange(1 << 30)))


# every scenario: "kill" is in since bug 3 was fixed, "elect" since bug 5
# was found to be kafkajs's sequence reuse after a failed send (the
# kafkajs producer of chaos.py is replaced after one; docs/REPLICATION.md,
# "The fault suite")
BOUNDED = list(chaos.SCENARIOS)


@pytest.mark.parametrize("scenario", BOUNDED)
def test_chaos(samsa, scenario):
    res = chaos.run_scenario(samsa, scenario, CHAOS_S, SEED)
    assert res["rounds"] >= 1, res
    assert res["acked_ck"] > 0 and res["acked_js"] > 0, res
    assert res["problems"] == [], "seed %d: %s" % (SEED, res["problems"])
    if scenario == "terminate":
        assert res["max_sigterm_exit_s"] < SIGTERM_EXIT_S, res


def checker_case(copies, ck_bumps):
    """check() on a final log of one partition holding `copies`: [(value,
    producer id, epoch, sequence)] at offsets 0, 1, ..."""
    chaos.WRITER.clear()
    final, per = {}, {0: []}
    for off, (v, pid, epoch, seq) in enumerate(copies):
        final[(0, off)] = v
        per[0].append((off, v))
        chaos.WRITER[(0, off)] = (pid, epoch, seq)
    acked = [(copies[0][0], 0, 0)]
    return chaos.check(acked, {}, final, per, ck_bumps)


def test_checker_duplicates():
    # no server: the checker's rules for a value in the log twice (bug 6)
    one = [("ck-1", 7, 0, 0), ("ck-4", 7, 0, 1)]
    assert checker_case(one, 0) == []
    # twice from one producer id and epoch: the broker's duplicate check failed
    p = checker_case(one + [("ck-4", 7, 0, 1)], 0)
    assert len(p) == 1 and "one producer id and epoch" in p[0], p
    p = checker_case(one + [("ck-4", 7, 0, 1)], 3)
    assert len(p) == 1 and "one producer id and epoch" in p[0], p
    # sent again by confluent-kafka under a bumped epoch: counted, not the
    # broker's, and its order is its own
    assert checker_case(one + [("ck-7", 7, 0, 2), ("ck-4", 7, 1, 0)], 1) == []
    assert chaos.FIGURES["resent_after_epoch_bump"] == 1
    # ... but only when confluent-kafka did bump its epoch
    p = checker_case(one + [("ck-4", 7, 1, 0)], 0)
    assert len(p) == 1 and "no epoch bump" in p[0], p
    # kafkajs is replaced after a failed send and never resends a value
    p = checker_case([("js-1", 8, 0, 0), ("js-1", 9, 0, 0)], 5)
    assert len(p) == 1 and "no epoch bump" in p[0], p
    # the order check still holds for the first copies
    p = checker_case([("ck-4", 7, 0, 0), ("ck-1", 7, 0, 1)], 0)
    assert len(p) == 1 and "after ck-4" in p[0], p

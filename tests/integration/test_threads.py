"""The seed's examples 1 and 4: which threads a combined broker+controller
starts, read from /proc/PID/task/*/comm.

Names (Linux allows 15 characters): acceptor-<port> (one per listener),
network-<port>-<id> (num.network.threads per listener; ids count per socket
server, so the broker's and the controller's both start at 0), handler-<id>
(num.io.threads per pool; the broker and controller pools are named alike,
so each name appears twice), and the main thread samsa-server. Other
threads (purgatory, log maintenance, ...) may exist and are not counted.
"""

import collections
import re

from samsa_harness import T, wait_until


def groups(server):
    names = server.thread_names()
    out = {
        "acceptor": collections.Counter(n for n in names if n.startswith("acceptor-")),
        "network": collections.Counter(n for n in names if n.startswith("network-")),
        "handler": collections.Counter(n for n in names if n.startswith("handler-")),
        "main": names.count("samsa-server"),
        "all": names,
    }
    return out


def expected(server, network_threads, io_threads):
    p, c = server.port, server.controller_port
    net = collections.Counter()
    for port in (p, c):
        for i in range(network_threads):
            net["network-%d-%d" % (port, i)] += 1
    return {
        "acceptor": collections.Counter({"acceptor-%d" % p: 1, "acceptor-%d" % c: 1}),
        "network": net,
        "handler": collections.Counter({"handler-%d" % i: 2 for i in range(io_threads)}),
    }


def check(server, network_threads, io_threads):
    want = expected(server, network_threads, io_threads)

    def matches():
        g = groups(server)
        return all(g[k] == want[k] for k in want) and g["main"] >= 1

    # Threads may still be starting right after the first answer.
    wait_until(matches, T(5), 0.05)
    g = groups(server)
    for k in want:
        assert g[k] == want[k], "%s threads: got %s, want %s (all: %s)" % (
            k, dict(g[k]), dict(want[k]), sorted(g["all"]))
    assert g["main"] >= 1, "no thread named samsa-server: %s" % sorted(g["all"])
    for n in g["all"]:
        assert len(n) <= 15
    assert not [n for n in g["all"] if re.fullmatch(r"network-\d+", n)]


def test_default_threads(server):
    # Example 1: 2 acceptors, 3+3 network threads, 8+8 handlers.
    check(server, 3, 8)
    g = groups(server)
    assert sum(g["acceptor"].values()) == 2
    assert sum(g["network"].values()) == 6
    assert sum(g["handler"].values()) == 16


def test_fewer_threads(samsa):
    # Example 4: num.network.threads=1 num.io.threads=2 -> 1+1 network
    # threads, 2+2 handlers, still one acceptor per listener.
    srv = samsa.start({"num.network.threads": 1, "num.io.threads": 2})
    check(srv, 1, 2)
    g = groups(srv)
    assert sum(g["acceptor"].values()) == 2
    assert sum(g["network"].values()) == 2
    assert sum(g["handler"].values()) == 4


def test_network_threads_named_per_listener(samsa):
    srv = samsa.start({"num.network.threads": 2, "num.io.threads": 1})
    check(srv, 2, 1)

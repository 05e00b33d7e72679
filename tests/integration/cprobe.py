"""Drives tests/integration/consumer_probe.c (libsamsa's consumer) for
test_consumer*.py: start it, collect its JSON lines on a thread, wait for
lines that match, stop it through stdin ("stop"), and fail on a sanitizer
report in its stderr."""

import base64
import json
import os
import subprocess
import threading
import time

import pytest

import samsa_harness
from samsa_harness import T


def build_dir():
    d = os.environ.get("SAMSA_BUILD_DIR")
    if not d:
        pytest.skip("SAMSA_BUILD_DIR not set: run through ctest")
    return d


def probe_path():
    return os.path.join(build_dir(), "consumer_probe")


def b64(b):
    return None if b is None else base64.b64encode(b).decode()


def unb64(s):
    return None if s is None else base64.b64decode(s)


class Probe:
    def __init__(self, bootstrap, *args, conf=None):
        cmd = [probe_path(), "-b", bootstrap]
        for k, v in (conf or {}).items():
            cmd += ["-X", "%s=%s" % (k, v)]
        cmd += [str(a) for a in args]
        self.cmd = cmd
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.lock = threading.Lock()
        self.err_text = []
        self.t_out = threading.Thread(target=self._read, daemon=True)
        self.t_err = threading.Thread(target=self._read_err, daemon=True)
        self.t_out.start()
        self.t_err.start()

    def _read(self):
        for line in self.p.stdout:
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                obj = {"raw": line}
            with self.lock:
                self.lines.append(obj)

    def _read_err(self):
        for line in self.p.stderr:
            self.err_text.append(line)

    def snapshot(self):
        with self.lock:
            return list(self.lines)

    def records(self):
        return [o["rec"] for o in self.snapshot() if "rec" in o]

    def events(self):
        return [(o["ev"], sorted((t, p) for t, p in o["tps"]))
                for o in self.snapshot() if "ev" in o]

    def assigned(self):
        """The partitions this member holds now, from its callbacks."""
        held = set()
        for ev, tps in self.events():
            if ev == "assigned":
                held |= set(tps)
            else:
                held -= set(tps)
        return held

    def wait(self, pred, timeout, what="condition"):
        end = time.time() + T(timeout)
        while time.time() < end:
            if pred(self):
                return
            if self.p.poll() is not None:
                self.t_out.join(2)
                if pred(self):
                    return
                break
            time.sleep(0.02)
        raise AssertionError("%s not reached; probe %s; stderr:\n%s\nlines:\n%s"
                             % (what, "exited %s" % self.p.returncode
                                if self.p.poll() is not None else "running",
                                "".join(self.err_text)[-4000:],
                                self.snapshot()[-20:]))

    def send(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()

    def stop(self, timeout=20):
        if self.p.poll() is None:
            try:
                self.send("stop")
            except (BrokenPipeError, ValueError):
                pass
        return self.finish(timeout)

    def finish(self, timeout=20):
        try:
            self.p.wait(T(timeout))
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise AssertionError("probe did not exit; stderr:\n%s"
                                 % "".join(self.err_text)[-4000:])
        self.t_out.join(5)
        self.t_err.join(5)
        text = "".join(self.err_text)
        found = samsa_harness.sanitizer_reports(text)
        assert not found, "sanitizer report (%s):\n%s" % (found, text[-6000:])
        done = [o["done"] for o in self.snapshot() if "done" in o]
        assert done, "probe exited %s without a summary; stderr:\n%s" % (
            self.p.returncode, text[-4000:])
        return done[-1]

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def run(bootstrap, *args, conf=None, timeout=30):
    """Run a probe to its end; returns (done, lines)."""
    pr = Probe(bootstrap, *args, conf=conf)
    done = pr.finish(timeout)
    return done, pr.snapshot()


# -- group scenarios shared by test_consumer_groups.py (classic) and
# test_consumer_kip848.py (KIP-848) ------------------------------------------

def create_topic(bs, topic, parts=3):
    from confluent_kafka.admin import AdminClient, NewTopic
    a = AdminClient({"bootstrap.servers": bs})
    a.create_topics([NewTopic(topic, parts, 1)])[topic].result(T(20))


def produce(bs, topic, start, n, parts=3):
    """Values v<start>..v<start+n-1> round robin over parts partitions
    (confluent_kafka); returns them base64-encoded, as probes report."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bs, "linger.ms": 5})
    for i in range(start, start + n):
        p.produce(topic, value=b"v%d" % i, partition=i % parts)
    assert p.flush(T(20)) == 0
    return {b64(b"v%d" % i) for i in range(start, start + n)}


def values(probes):
    out = []
    for pr in probes:
        out += [r["v"] for r in pr.records()]
    return out


def wait_split(probes, topic, parts=3, timeout=20):
    """Until the members' assignments are disjoint, non-empty and cover
    every partition."""
    want = {(topic, p) for p in range(parts)}

    def ok(_):
        held = [pr.assigned() for pr in probes]
        return (all(held) and sum(map(len, held)) == len(want)
                and set().union(*held) == want)
    probes[0].wait(ok, timeout, "partitions split over %d members" % len(probes))


def wait_values(probes, want, timeout=20):
    probes[0].wait(lambda _: set(values(probes)) >= want, timeout,
                   "every record read")

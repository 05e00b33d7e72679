"""`samsa consume`, `samsa perf consume` and `samsa perf e2e` against
samsa-server: formats (kcat placeholders, --json with null keys/values and
headers), -e, -n, --partition/--offset, --from-time, --group with commits
across runs, SAMSA_BOOTSTRAP and --command-config, and the error cases
(unknown topic, unreachable broker within a short timeout, bad flag,
missing arguments) with their messages and exit codes (0 ok, 1 failed or
not found, 2 usage, 3 unreachable).
"""

import json
import os
import subprocess
import time

import pytest

import samsa_harness
from samsa_harness import T

PARTS = 2


def samsa_bin():
    d = os.environ.get("SAMSA_BUILD_DIR")
    if not d:
        pytest.skip("SAMSA_BUILD_DIR not set: run through ctest")
    return os.path.join(d, "samsa")


def cli(*args, env=None, timeout=30):
    e = dict(os.environ)
    e.pop("SAMSA_BOOTSTRAP", None)
    e.update(env or {})
    p = subprocess.run([samsa_bin()] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=T(timeout),
                       env=e)
    found = samsa_harness.sanitizer_reports(p.stderr)
    assert not found, "sanitizer report (%s):\n%s" % (found, p.stderr[-6000:])
    return p


@pytest.fixture(scope="module")
def data(samsa_module):
    """A server with topic "cli" (2 partitions): 10 records, partition
    i % 2, timestamps 1000 s apart from BASE, record 3 with a null key,
    record 4 with a null value, headers on record 0."""
    from confluent_kafka.admin import AdminClient, NewTopic
    from confluent_kafka import Producer
    srv = samsa_module.start(overrides={"group.initial.rebalance.delay.ms": "100"})
    bs = srv.bootstrap()
    a = AdminClient({"bootstrap.servers": bs})
    # retention.ms=-1: the records' timestamps (2023) are past the default
    # 7 days, and a slow (sanitizer) run outlives the 5-minute retention
    # check, which then deletes them under the later tests
    for t, n in (("cli", PARTS), ("perf", 3), ("e2e", 1)):
        a.create_topics([NewTopic(t, n, 1, config={"retention.ms": "-1"})]
                        )[t].result(T(20))
    p = Producer({"bootstrap.servers": bs, "linger.ms": 5})
    base = 1700000000000
    for i in range(10):
        p.produce("cli", key=None if i == 3 else b"k%d" % i,
                  value=None if i == 4 else b"v%d" % i, partition=i % PARTS,
                  timestamp=base + i * 1000,
                  headers=[("h", b"x"), ("n", None)] if i == 0 else None)
    for i in range(3000):
        p.produce("perf", value=b"p" * 100, partition=i % 3)
    assert p.flush(T(20)) == 0
    return {"bs": bs, "base": base}


def test_format_and_exit_at_end(data):
    r = cli("consume", "cli", "-b", data["bs"], "--from-beginning", "-e",
            "--format", "%t|%p|%o|%k|%s|%h|%T\\n")
    assert r.returncode == 0, r.stderr
    lines = sorted(r.stdout.splitlines(), key=lambda l: (l.split("|")[1],
                                                         int(l.split("|")[2])))
    assert len(lines) == 10
    assert lines[0] == "cli|0|0|k0|v0|h=x,n=|%d" % data["base"]
    assert "cli|1|1||v3|" in lines[6] and "cli|0|2|k4||" in lines[2]


def test_json_output(data):
    r = cli("consume", "cli", "-b", data["bs"], "--from-beginning", "-e",
            "--json")
    assert r.returncode == 0, r.stderr
    recs = [json.loads(l) for l in r.stdout.splitlines()]
    assert len(recs) == 10
    by = {(x["partition"], x["offset"]): x for x in recs}
    assert by[(0, 0)]["headers"] == [["h", "x"], ["n", None]]
    assert by[(0, 0)]["timestamp"] == data["base"]
    assert by[(0, 0)]["timestamp_type"] == "CreateTime"
    assert by[(1, 1)]["key"] is None and by[(1, 1)]["value"] == "v3"
    assert by[(0, 2)]["value"] is None and by[(0, 2)]["key"] == "k4"


def test_partition_offset_count(data):
    r = cli("consume", "cli", "-b", data["bs"], "--partition", "1",
            "--offset", "2", "-n", "2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["v5", "v7"]


def test_from_time_env_and_command_config(data, tmp_path):
    cfg = tmp_path / "c.properties"
    cfg.write_text("client.id=cli-test\nfetch.max.wait.ms=100\n")
    r = cli("consume", "cli", "--from-time", str(data["base"] + 6500), "-e",
            "--command-config", str(cfg), "--format", "%s\\n",
            env={"SAMSA_BOOTSTRAP": data["bs"]})
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == ["v7", "v8", "v9"]
    iso = time.strftime("%Y-%m-%dT%H:%M:%S",
                        time.gmtime((data["base"] + 8000) / 1000))
    r = cli("consume", "cli", "-b", data["bs"], "--from-time", iso, "-e")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == ["v8", "v9"]


def test_group_commits_across_runs(data):
    args = ("consume", "cli", "-b", data["bs"], "--group", "cli-g",
            "--from-beginning")
    r1 = cli(*args, "-n", "4")
    assert r1.returncode == 0, r1.stderr
    r2 = cli(*args, "-e")
    assert r2.returncode == 0, r2.stderr
    first, rest = r1.stdout.splitlines(), r2.stdout.splitlines()
    assert len(first) == 4
    assert sorted(first + rest, key=str) == sorted(
        ["v%d" % i for i in range(10) if i != 4] + [""], key=str)


def test_errors(data):
    r = cli("consume", "nosuchtopic", "-b", data["bs"], "-e")
    assert r.returncode == 1 and "topic 'nosuchtopic' does not exist" in r.stderr
    r = cli("consume", "cli", "-b", data["bs"], "--partition", "7", "-e")
    assert r.returncode == 1 and "no partition 7" in r.stderr
    port = samsa_harness.free_port()
    t0 = time.time()
    r = cli("consume", "cli", "-b", "127.0.0.1:%d" % port, "--timeout", "1500")
    assert r.returncode == 3 and "no answer from the cluster" in r.stderr
    assert time.time() - t0 < T(10)
    r = cli("consume", "cli", "-b", data["bs"], "--bogus")
    assert r.returncode == 2 and "unknown option '--bogus'" in r.stderr
    r = cli("consume", "-b", data["bs"])
    assert r.returncode == 2 and "no topic given" in r.stderr
    r = cli("consume", "cli")
    assert r.returncode == 2 and "no bootstrap server" in r.stderr
    r = cli("consume", "cli", "-b", data["bs"], "--group", "g", "--offset", "3")
    assert r.returncode == 2
    r = cli("consume", "cli", "-b", data["bs"], "-X", "no.such.key=1")
    assert r.returncode == 2 and "unknown configuration 'no.such.key'" in r.stderr
    r = cli("consume", "--help")
    assert r.returncode == 0 and "usage: samsa consume" in r.stdout


def test_flags_through_opts(data, tmp_path):
    """The flag conventions of every samsa command (cli/opts.c): --flag=VALUE,
    flags after the topic, -X overriding --command-config whatever their
    order, ISO times with a zone, --connect-timeout bounding the first
    answer, and usage errors naming the flag (exit 2)."""
    r = cli("consume", "--partition=1", "cli", "--offset=2", "--count=2",
            "-b", data["bs"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["v5", "v7"]
    cfg = tmp_path / "latest.properties"
    cfg.write_text("auto.offset.reset=latest\n")
    r = cli("consume", "cli", "-X", "auto.offset.reset=earliest", "-e",
            "--group", "opts-g", "--command-config", str(cfg), "-b",
            data["bs"])
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 10     # -X won: from the start
    iso = time.strftime("%Y-%m-%dT%H:%M:%S+01:00",
                        time.gmtime((data["base"] + 8000) / 1000 + 3600))
    r = cli("consume", "cli", "-b", data["bs"], "--from-time", iso, "-e")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == ["v8", "v9"]
    port = samsa_harness.free_port()
    t0 = time.time()
    r = cli("consume", "cli", "-b", "127.0.0.1:%d" % port, "--timeout",
            "60000", "--connect-timeout", "1000")
    assert r.returncode == 3 and "within 1000 ms" in r.stderr
    assert time.time() - t0 < T(10)
    for args, msg in (
            (["-n", "abc"], "invalid value 'abc' for --count: not a number"),
            (["--offset", "-3"], "invalid value '-3' for --offset"),
            (["--partition", "1,x"], "invalid value '1,x' for --partition"),
            (["--from-time", "yesterday"],
             "invalid value 'yesterday' for --from-time"),
            (["--exit-at-end=1"], "option '--exit-at-end' takes no value"),
            (["--group"], "option '--group' needs a value"),
            (["other"], "unexpected argument 'other'"),
            (["-X", "nokv"], "invalid value 'nokv'")):
        r = cli("consume", "cli", "-b", data["bs"], *args)
        assert r.returncode == 2, (args, r.stderr)
        assert msg in r.stderr and "samsa consume --help" in r.stderr, \
            (args, r.stderr)


def test_perf_consume(data):
    r = cli("perf", "consume", "-b", data["bs"], "--topic", "perf",
            "--messages", "3000", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["records"] == 3000
    assert abs(out["mb"] - 3000 * 100 / 1048576.0) < 0.001
    assert out["rebalance_time_ms"] > 0 and out["fetch_records_per_sec"] > 0
    r = cli("perf", "consume", "-b", data["bs"], "--topic", "perf",
            "--messages", "3000", "--no-group", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["records"] == 3000 and out["rebalance_time_ms"] == 0
    r = cli("perf", "consume", "-b", data["bs"], "--topic", "perf",
            "--messages", "100", "--reporting-interval", "1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("start.time, end.time, data.consumed.in.MB")
    assert lines[-1].split(", ")[4] == "100"
    r = cli("perf", "consume", "-b", data["bs"], "--topic", "nosuch",
            "--messages", "1")
    assert r.returncode == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in r.stderr
    r = cli("perf", "consume", "-b", data["bs"], "--topic", "perf")
    assert r.returncode == 2 and "--messages" in r.stderr
    r = cli("perf", "consume", "-b", data["bs"], "--topic", "perf",
            "--messages", "5000", "--timeout", "1000")
    assert r.returncode == 1 and "stopping after 3000 of 5000" in r.stderr


def test_perf_e2e(data):
    r = cli("perf", "e2e", "-b", data["bs"], "--topic", "e2e",
            "--num-records", "300", "--throughput", "600", "--json",
            "--record-size", "64")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["records"] == out["received"] == 300
    assert 0 < out["p50_ms"] <= out["p99_ms"] <= out["p999_ms"] <= out["max_ms"]
    r = cli("perf", "e2e", "-b", data["bs"], "--topic", "e2e",
            "--num-records", "10", "--throughput", "100")
    assert r.returncode == 0, r.stderr
    assert "10 records, 10 received" in r.stdout
    r = cli("perf", "e2e", "-b", data["bs"], "--topic", "e2e",
            "--num-records", "10")
    assert r.returncode == 2 and "--throughput" in r.stderr
    port = samsa_harness.free_port()
    r = cli("perf", "e2e", "-b", "127.0.0.1:%d" % port, "--topic", "e2e",
            "--num-records", "10", "--throughput", "10")
    assert r.returncode == 3 and "no answer from the cluster" in r.stderr


def test_sigint_closes_and_commits(data):
    import signal
    e = dict(os.environ)
    e.pop("SAMSA_BOOTSTRAP", None)
    p = subprocess.Popen([samsa_bin(), "consume", "cli", "-b", data["bs"],
                          "--group", "sig-g", "--from-beginning"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=e)
    lines = []
    end = time.time() + T(20)
    while len(lines) < 10 and time.time() < end:
        line = p.stdout.readline()
        if not line:
            break
        lines.append(line)
    assert len(lines) == 10, lines
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=T(20))
    assert p.returncode == 0, err
    assert not samsa_harness.sanitizer_reports(err), err[-4000:]
    r = cli("consume", "cli", "-b", data["bs"], "--group", "sig-g", "-e")
    assert r.returncode == 0 and r.stdout == "", (r.stdout, r.stderr)

"""The `samsa` tool's common options before the command (issue 23):
`samsa -b HOST topic list` and the rest of -b/--bootstrap-server,
--command-config, --timeout, --connect-timeout, --json, -v in any of their
forms, with SAMSA_BOOTSTRAP unset:

- topic create/list/describe, produce, consume and cluster info work with
  them first, and give the same answers as with them after the command;
- one given after the command too wins (an unreachable -b first, a good one
  after: exit 0; the other way round: exit 3 within --connect-timeout);
- usage errors: an option that is not a common one, a missing value, a
  value for a flag, no command (exit 2); -h/--help after them still helps.
"""

import pytest

import samsa_harness
from cli_util import ok, run


@pytest.fixture(scope="module")
def srv(samsa_module):
    return samsa_module.start()


def dead_addr():
    return "%s:%d" % (samsa_harness.HOST, samsa_harness.free_port())


def test_topic_commands_with_bootstrap_first(srv):
    bs = srv.bootstrap()
    r = ok("-b", bs, "topic", "create", "cf-topic", "--partitions", 3)
    assert "cf-topic" in r.out, r
    listed = ok("-b", bs, "--json", "topic", "list").json()
    assert "cf-topic" in [t["name"] for t in listed], listed
    # the same answer as with -b after the command words
    first = ok("--bootstrap-server", bs, "--json", "topic", "describe", "cf-topic").json()
    after = ok("topic", "describe", "cf-topic", "--json", "-b", bs).json()
    assert first == after
    assert [p["partition"] for p in first[0]["partitions"]] == [0, 1, 2]
    d = ok("--bootstrap-server=%s" % bs, "topic", "describe", "--json", "cf-topic").json()
    assert d == first


def test_produce_consume_cluster_with_bootstrap_first(srv):
    bs = srv.bootstrap()
    ok("-b", bs, "topic", "create", "cf-pc")
    r = ok("-b", bs, "produce", "cf-pc", stdin="one\ntwo\nthree\n")
    assert "Produced 3 record(s) to 'cf-pc'" in r.out + r.err, r
    r = ok("-b", bs, "--timeout", 10000, "consume", "cf-pc", "--from-beginning", "-e")
    assert r.out.splitlines() == ["one", "two", "three"], r
    info = ok("--json", "-b", bs, "cluster", "info").json()
    assert info["cluster_id"] == srv.cluster_id()
    assert [b["port"] for b in info["brokers"]] == [srv.port], info


def test_later_option_wins(srv):
    bs, dead = srv.bootstrap(), dead_addr()
    ok("topic", "create", "cf-later", "-b", bs)
    r = ok("-b", dead, "topic", "list", "-b", bs)
    assert "cf-later" in r.out.split(), r
    r = run("-b", bs, "--connect-timeout", 800, "topic", "list", "-b", dead)
    assert r.rc == 3 and dead in r.err, r
    assert r.secs < 10, r
    # --connect-timeout first bounds the wait
    r = run("--connect-timeout", 500, "-b", dead, "topic", "list")
    assert r.rc == 3 and "within 500 ms" in r.err, r


def test_command_config_first(srv, tmp_path):
    cfg = tmp_path / "client.properties"
    cfg.write_text("bootstrap.servers=%s\nclient.id=cf-client\n" % srv.bootstrap())
    ok("--command-config", str(cfg), "topic", "create", "cf-config")
    r = ok("--command-config", str(cfg), "--json", "topic", "list")
    assert "cf-config" in [t["name"] for t in r.json()], r


@pytest.mark.parametrize("args,msg", [
    (["-x", "topic", "list"], "unknown option '-x'"),
    (["--partitions", "3", "topic", "list"], "unknown option '--partitions'"),
    (["-b"], "option '--bootstrap-server' needs a value"),
    (["--timeout", "--json", "topic", "list"], "option '--timeout' needs a value"),
    (["--json=1", "topic", "list"], "option '--json' takes no value"),
    (["-b", "h:1"], "missing command"),
    (["-b", "h:1", "nosuch"], "unknown command 'nosuch'"),
])
def test_usage_errors(args, msg):
    r = run(*args)
    assert r.rc == 2 and msg in r.err, r


def test_help_after_common_options():
    r = ok("-b", "h:1", "--help")
    assert r.out.startswith("usage: samsa [common options] <command>"), r
    r = ok("-b", "h:1", "topic", "--help")
    assert "usage: samsa topic <command>" in r.out, r
    r = ok("-b", "h:1", "topic", "list", "--help")
    assert "common options:" in r.out, r

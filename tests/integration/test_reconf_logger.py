"""The BROKER_LOGGER config resource (type 8, KIP-412) by raw protocol:
DescribeConfigs lists the broker's loggers, log4j's "root" (the
diagnostics level) and Kafka's "kafka.request.logger" (the request log,
on at DEBUG or TRACE), with their levels; IncrementalAlterConfigs SET changes it
at run time (the diagnostics on standard error follow), validate_only
changes nothing, and Kafka's refusals hold with Kafka's codes and messages
(APPEND/SUBTRACT, DELETE of root, an unknown logger or level, a wrong
broker id); legacy AlterConfigs refuses the resource; the level is not
persisted: a restart goes back to diag.level."""

import os
import urllib.request

import pytest

import kwire
import samsa_harness
from samsa_harness import T
from test_reqlog import read_log

BROKER_LOGGER = 8
OP_SET, OP_DELETE, OP_APPEND, OP_SUBTRACT = 0, 1, 2, 3
SRC_DYNAMIC_BROKER_LOGGER = 6


def loggers(conn, name="1", keys=None):
    res = conn.describe_configs([(BROKER_LOGGER, name, keys)])[0]
    assert res["error_code"] == 0, res
    return [(e["name"], e["value"], e["source"], e["read_only"],
             e["is_sensitive"], e["synonyms"]) for e in res["configs"]]


def alter(conn, ops, name="1", validate_only=False):
    r = conn.incremental_alter_configs([(BROKER_LOGGER, name, ops)],
                                       validate_only=validate_only)[0]
    return r["error_code"], r["error_message"]


@pytest.fixture
def srv(samsa):
    return samsa.start({"diag.level": "INFO"})


def test_describe_and_set_root(srv, samsa):
    with srv.connect(timeout=T(10)) as conn:
        assert loggers(conn) == [
            ("root", "INFO", SRC_DYNAMIC_BROKER_LOGGER, False, False, []),
            ("kafka.request.logger", "WARN", SRC_DYNAMIC_BROKER_LOGGER, False,
             False, [])]
        assert loggers(conn, keys=["root"]) == [
            ("root", "INFO", SRC_DYNAMIC_BROKER_LOGGER, False, False, [])]
        assert loggers(conn, keys=["kafka.server"]) == []
        # all four versions decode it
        for v in range(0, 5):
            res = conn.describe_configs([(BROKER_LOGGER, "1", None)],
                                        version=v)[0]
            assert res["error_code"] == 0 and res["configs"][0]["value"] == "INFO"

        # validate_only: checked, not applied
        assert alter(conn, [("root", OP_SET, "DEBUG")], validate_only=True) == (0, None)
        assert loggers(conn)[0][1] == "INFO"
        assert alter(conn, [("root", OP_SET, "LOUD")], validate_only=True)[0] == \
            kwire.ERR_INVALID_CONFIG

        assert " DEBUG " not in srv.stderr_text()
        assert alter(conn, [("root", OP_SET, "DEBUG")]) == (0, None)
        assert loggers(conn)[0][1] == "DEBUG"
        with srv.connect(timeout=T(5)) as c2:       # its close is a DEBUG line
            c2.api_versions(0, timeout=T(5))
        assert samsa_harness.wait_until(lambda: " DEBUG " in srv.stderr_text(), T(5))
        assert "Updating the log level of root to DEBUG" in srv.stderr_text()
        # the metrics listener's GET /loglevel is the same level
        with urllib.request.urlopen(srv.metrics_url("/loglevel"),
                                    timeout=T(10)) as r:
            assert (r.status, r.read()) == (200, b"DEBUG\n")

        # TRACE and FATAL are log4j levels too; FATAL hides even WARN lines
        assert alter(conn, [("root", OP_SET, "TRACE")]) == (0, None)
        assert loggers(conn)[0][1] == "TRACE"
        assert alter(conn, [("root", OP_SET, "FATAL")]) == (0, None)
        assert loggers(conn)[0][1] == "FATAL"
        assert alter(conn, [("root", OP_SET, "WARN")]) == (0, None)
        assert loggers(conn)[0][1] == "WARN"

    # not persisted: a restart goes back to diag.level
    assert srv.stop() == []
    over = {k: v for k, v in srv.overrides.items() if k != "listeners"}
    srv2 = samsa.start(overrides=over, workdir=srv.workdir)
    with srv2.connect(timeout=T(10)) as conn:
        assert loggers(conn)[0][1] == "INFO"


def test_refusals(srv):
    with srv.connect(timeout=T(10)) as conn:
        assert alter(conn, [("root", OP_SET, "debug")]) == (
            kwire.ERR_INVALID_CONFIG,
            "Cannot set the log level of root to debug as it is not a "
            "supported log level. Valid log levels are FATAL, ERROR, WARN, "
            "INFO, DEBUG, TRACE")
        assert alter(conn, [("root", OP_SET, "OFF")])[0] == kwire.ERR_INVALID_CONFIG
        assert alter(conn, [("kafka.server.KafkaApis", OP_SET, "DEBUG")]) == (
            kwire.ERR_INVALID_CONFIG, "Logger kafka.server.KafkaApis does not exist!")
        assert alter(conn, [("root", OP_DELETE, None)]) == (
            kwire.ERR_INVALID_REQUEST,
            "Removing the log level of the root logger is not allowed")
        assert alter(conn, [("nope", OP_DELETE, None)]) == (
            kwire.ERR_INVALID_CONFIG, "Logger nope does not exist!")
        assert alter(conn, [("root", OP_APPEND, "DEBUG")]) == (
            kwire.ERR_INVALID_REQUEST,
            "APPEND operation is not allowed for the BROKER_LOGGER resource")
        assert alter(conn, [("root", OP_SUBTRACT, "DEBUG")]) == (
            kwire.ERR_INVALID_REQUEST,
            "SUBTRACT operation is not allowed for the BROKER_LOGGER resource")
        assert alter(conn, [("root", 9, "DEBUG")]) == (
            kwire.ERR_INVALID_REQUEST,
            "Unknown operation type 9 is not allowed for the BROKER_LOGGER "
            "resource")
        assert alter(conn, [("root", OP_SET, None)]) == (
            kwire.ERR_INVALID_REQUEST, "Null value not supported for : root")
        assert alter(conn, [("root", OP_SET, "DEBUG"), ("root", OP_SET, "INFO")]) == (
            kwire.ERR_INVALID_REQUEST, "Error due to duplicate config keys")
        assert alter(conn, [("root", OP_SET, "DEBUG")], name="2") == (
            kwire.ERR_INVALID_REQUEST,
            "Unexpected broker id, expected 1, but received 2")
        assert alter(conn, [("root", OP_SET, "DEBUG")], name="b1") == (
            kwire.ERR_INVALID_REQUEST, "Node id must be an integer, but it is: b1")
        # one bad op refuses the whole resource: nothing applied
        assert alter(conn, [("root", OP_SET, "DEBUG"), ("x", OP_SET, "INFO")])[0] == \
            kwire.ERR_INVALID_CONFIG
        assert loggers(conn)[0][1] == "INFO"

        # the same resource twice in one request
        r = conn.incremental_alter_configs([
            (BROKER_LOGGER, "1", [("root", OP_SET, "DEBUG")]),
            (BROKER_LOGGER, "1", [("root", OP_SET, "WARN")])])
        assert [(x["error_code"], x["error_message"]) for x in r] == [
            (kwire.ERR_INVALID_REQUEST, "Each resource must appear at most once.")] * 2
        # beside a BROKER resource, each is answered on its own
        r = conn.incremental_alter_configs([
            (kwire.RESOURCE_BROKER, "1", [("num.io.threads", OP_SET, "many")]),
            (BROKER_LOGGER, "1", [("root", OP_SET, "WARN")])])
        assert [(x["resource_type"], x["error_code"]) for x in r] == [
            (kwire.RESOURCE_BROKER, kwire.ERR_INVALID_CONFIG), (BROKER_LOGGER, 0)]
        assert loggers(conn)[0][1] == "WARN"

        # legacy AlterConfigs does not know the resource, as Kafka's
        r = conn.alter_configs([(BROKER_LOGGER, "1", {"root": "DEBUG"})])[0]
        assert (r["error_code"], r["error_message"]) == (
            kwire.ERR_INVALID_REQUEST, "Unknown resource type 8")
        assert loggers(conn)[0][1] == "WARN"

        # DescribeConfigs: Kafka's name checks
        for name, msg in (("", "Broker id must not be empty"),
                          ("x", "Broker id must be an integer, but it is: x"),
                          ("2", "Unexpected broker id, expected 1 but received 2")):
            res = conn.describe_configs([(BROKER_LOGGER, name, None)])[0]
            assert (res["error_code"], res["error_message"], res["configs"]) == (
                kwire.ERR_INVALID_REQUEST, msg, []), res


def test_request_logger(samsa, tmp_path):
    """kafka.request.logger turns the request log on and off at run time,
    as Kafka's: DEBUG or TRACE writes a line per request, INFO stops it;
    DELETE makes it follow root; no file exists until it is first on."""
    path = str(tmp_path / "requests.log")
    srv = samsa.start({"diag.level": "INFO", "request.log.file": path})

    def logged(cid):
        return [x for x in read_log(path) if x["requestHeader"]["clientId"] == cid]

    def req_level(conn):
        return dict((n, v) for n, v, *_ in loggers(conn))["kafka.request.logger"]

    with srv.connect(client_id="rl-admin", timeout=T(10)) as conn:
        assert req_level(conn) == "WARN"
        with srv.connect(client_id="rl-before", timeout=T(5)) as c:
            c.api_versions(0, timeout=T(5))
        assert not os.path.exists(path)
        assert alter(conn, [("kafka.request.logger", OP_SET, "DEBUG")],
                     validate_only=True) == (0, None)
        assert req_level(conn) == "WARN" and not os.path.exists(path)

        assert alter(conn, [("kafka.request.logger", OP_SET, "DEBUG")]) == (0, None)
        assert req_level(conn) == "DEBUG"
        assert loggers(conn)[0][1] == "INFO"          # root untouched
        with srv.connect(client_id="rl-on", timeout=T(5)) as c:
            c.api_versions(0, timeout=T(5))
        assert samsa_harness.wait_until(lambda: logged("rl-on"), T(5)), read_log(path)
        assert not logged("rl-before")

        # The line is written (or not) when the answer has been sent, as
        # Kafka's updateRequestMetrics does, before the connection is
        # unmuted: so once a second request on the same connection is
        # answered, the first one's line was decided at INFO.
        assert alter(conn, [("kafka.request.logger", OP_SET, "INFO")]) == (0, None)
        with srv.connect(client_id="rl-off", timeout=T(5)) as c:
            off = c.api_versions(0, timeout=T(5))["correlation_id"]
            c.api_versions(0, timeout=T(5))
        # TRACE logs too
        assert alter(conn, [("kafka.request.logger", OP_SET, "TRACE")]) == (0, None)
        with srv.connect(client_id="rl-trace", timeout=T(5)) as c:
            c.api_versions(0, timeout=T(5))
        assert samsa_harness.wait_until(lambda: logged("rl-trace"), T(5))
        assert [x for x in logged("rl-off")
                if x["requestHeader"]["correlationId"] == off] == []

        # DELETE: it follows root (INFO: off), then root's DEBUG turns it on
        assert alter(conn, [("kafka.request.logger", OP_DELETE, None)]) == (0, None)
        assert req_level(conn) == "INFO"
        with srv.connect(client_id="rl-unset", timeout=T(5)) as c:
            unset = c.api_versions(0, timeout=T(5))["correlation_id"]
            c.api_versions(0, timeout=T(5))
        assert alter(conn, [("root", OP_SET, "DEBUG")]) == (0, None)
        assert req_level(conn) == "DEBUG"
        with srv.connect(client_id="rl-root", timeout=T(5)) as c:
            c.api_versions(0, timeout=T(5))
        assert samsa_harness.wait_until(lambda: logged("rl-root"), T(5))
        assert [x for x in logged("rl-unset")
                if x["requestHeader"]["correlationId"] == unset] == []
        assert "Unset the log level of kafka.request.logger" in srv.stderr_text()

    # not persisted: a restart goes back to request.log.enable (false: WARN)
    assert srv.stop() == []
    over = {k: v for k, v in srv.overrides.items() if k != "listeners"}
    srv2 = samsa.start(overrides=over, workdir=srv.workdir)
    with srv2.connect(timeout=T(10)) as conn:
        assert req_level(conn) == "WARN"


def test_request_logger_unopenable_file(samsa, tmp_path):
    """A request log that cannot be opened does not stop a broker that
    does not write it; turning the logger on then fails, naming the
    file."""
    path = str(tmp_path / "no-such-dir" / "requests.log")
    srv = samsa.start({"request.log.file": path})
    with srv.connect(timeout=T(10)) as conn:
        code, msg = alter(conn, [("kafka.request.logger", OP_SET, "DEBUG")])
        assert code == kwire.ERR_INVALID_CONFIG, (code, msg)
        assert msg.startswith("Cannot set the log level of kafka.request.logger: "
                              "cannot open the request log '%s' (request.log.file)"
                              % path), msg
        assert dict((n, v) for n, v, *_ in loggers(conn))["kafka.request.logger"] == "WARN"
        # root may still go to DEBUG while the request logger has its own level
        assert alter(conn, [("root", OP_SET, "DEBUG")]) == (0, None)

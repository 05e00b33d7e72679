"""The Java client and Kafka's own tools in the integration tests.

scripts/deps.sh puts kafka-clients and kafka-tools (java/pom.xml, pinned to
KAFKA_VERSION) with their dependencies into one folder of jars,
${SAMSA_CACHE:-~/.cache/samsa}/maven/lib.  compile() builds java/*.java
with plain javac against it; run_java() runs one of those programs,
kafka_tool() runs scripts/kafka-tool.  A missing java, javac or jar fails
the test (HarnessError), never skips it.
"""

import os
import shutil
import subprocess
import time

import samsa_harness
from samsa_harness import T, HarnessError

KAFKA_VERSION = "4.4.0"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
JAVA_SRC = os.path.join(HERE, "java")
KAFKA_TOOL = os.path.join(REPO, "scripts", "kafka-tool")
# quick JVM start-up; the clients' logs (slf4j-simple) at warn on stderr
JVM_OPTS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"]


def maven_lib():
    root = os.environ.get("SAMSA_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "samsa")
    lib = os.path.join(root, "maven", "lib")
    for jar in ("kafka-clients", "kafka-tools"):
        path = os.path.join(lib, "%s-%s.jar" % (jar, KAFKA_VERSION))
        if not os.path.isfile(path):
            raise HarnessError("%s is missing: run scripts/deps.sh (it fetches "
                               "tests/integration/java/pom.xml from Maven "
                               "Central)" % path)
    return lib


def tool(name):
    path = shutil.which(name)
    if path is None:
        raise HarnessError("no %s on PATH: run scripts/deps.sh "
                           "(openjdk-17-jdk-headless)" % name)
    return path


def env():
    e = samsa_harness.base_env()
    e.pop("JAVA_TOOL_OPTIONS", None)
    e.pop("KAFKA_TOOL_JAVA_OPTS", None)
    return e


def compile(dest):
    """javac java/*.java into dest; returns the classpath to run them."""
    lib = maven_lib()
    srcs = sorted(os.path.join(JAVA_SRC, f) for f in os.listdir(JAVA_SRC)
                  if f.endswith(".java"))
    p = subprocess.run([tool("javac"), "-nowarn", "-encoding", "UTF-8",
                        "-d", str(dest), "-cp", os.path.join(lib, "*")] + srcs,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env(), timeout=T(120))
    assert p.returncode == 0, "javac failed:\n" + p.stdout[-6000:]
    return os.path.join(lib, "*") + os.pathsep + str(dest)


class Result:
    def __init__(self, args, p, secs):
        self.args = args
        self.rc = p.returncode
        self.out = p.stdout
        self.err = p.stderr
        self.secs = secs

    @property
    def lines(self):
        return [l.split("\t") for l in self.out.splitlines() if l]

    def rows(self, tag):
        return [l[1:] for l in self.lines if l[0] == tag]

    def one(self, tag):
        r = self.rows(tag)
        assert len(r) == 1, "want one %s line:\n%r" % (tag, self)
        return r[0]

    def __repr__(self):
        return "%s\nrc=%d (%.1f s)\nstdout:\n%s\nstderr:\n%s" % (
            " ".join(self.args), self.rc, self.secs, self.out[-4000:],
            self.err[-4000:])


def _run(argv, stdin=None, timeout=60):
    t0 = time.monotonic()
    p = subprocess.run(argv, input=stdin if stdin is not None else "",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=env(), timeout=T(timeout))
    return Result([os.path.basename(argv[0])] + argv[1:], p, time.monotonic() - t0)


def run_java(cp, main, *args, timeout=90):
    """Runs a program of java/ that ends with an EXIT line on success."""
    scale = "-Dsamsa.scale=%g" % samsa_harness.timeout_scale()
    r = _run([tool("java")] + JVM_OPTS + [scale, "-cp", cp, main] + [str(a) for a in args],
             timeout=timeout)
    assert r.rc == 0 and r.rows("EXIT") == [["0"]], r
    return r


def kafka_tool(name, *args, stdin=None, timeout=60, check=True):
    """scripts/kafka-tool NAME ARGS; with check, a zero exit is required."""
    maven_lib()
    tool("java")
    r = _run([KAFKA_TOOL, name] + [str(a) for a in args], stdin=stdin,
             timeout=timeout)
    if check:
        assert r.rc == 0, r
    return r

"""Start and stop samsa-server for the integration tests.

Each server runs in its own temporary directory (its cwd, log.dirs inside
it) on free loopback ports, with stderr captured to a file. Stopping is
always SIGTERM, a bounded wait, then SIGKILL; a non-zero exit after SIGTERM
or a sanitizer report on stderr fails the test.

Environment:
  SAMSA_SERVER              path to the samsa-server binary (required)
  SAMSA_SERVER_FAULTS       samsa-server-faults (fault points; crash tests)
  SAMSA_SANITIZE            '' | address | thread (timeouts x3 when set)
  SAMSA_TEST_TIMEOUT_SCALE  multiplies every timeout (default 1)
  SAMSA_TEST_KEEP_DIRS=1    keep server directories after the test
"""

import itertools
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import kwire

HOST = "127.0.0.1"
_launches = itertools.count(1)

SANITIZER_PATTERNS = [
    re.compile(p) for p in (
        r"AddressSanitizer", r"LeakSanitizer", r"UndefinedBehaviorSanitizer",
        r"ThreadSanitizer", r"MemorySanitizer", r"runtime error:",
    )
]


class HarnessError(AssertionError):
    pass


def timeout_scale():
    s = float(os.environ.get("SAMSA_TEST_TIMEOUT_SCALE", "1") or "1")
    if os.environ.get("SAMSA_SANITIZE"):
        s *= 3
    return s


def T(seconds):
    """A timeout in seconds, scaled."""
    return seconds * timeout_scale()


def pypi_python():
    """The venv's python with the PyPI clients of scripts/pyclients.txt
    (scripts/deps.sh installs them; a missing one fails the test)."""
    root = os.environ.get("SAMSA_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "samsa")
    path = os.path.join(root, "pyclients", "bin", "python")
    if not os.access(path, os.X_OK):
        raise HarnessError("%s is missing: run scripts/deps.sh (it installs "
                           "scripts/pyclients.txt from PyPI there)" % path)
    return path


def server_binary():
    path = os.environ.get("SAMSA_SERVER")
    if not path:
        raise HarnessError(
            "SAMSA_SERVER is not set: run the integration tests through ctest "
            "(`make test`), or set SAMSA_SERVER=<build>/samsa-server")
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise HarnessError("SAMSA_SERVER=%s is not an executable file: "
                           "the build is broken" % path)
    return path


def faults_binary():
    """samsa-server-faults: the server with its fault points compiled in
    (util/fault.h), from SAMSA_SERVER_FAULTS (set by ctest)."""
    path = os.environ.get("SAMSA_SERVER_FAULTS")
    if not path or not os.access(path, os.X_OK):
        raise HarnessError("SAMSA_SERVER_FAULTS=%r is not an executable file: "
                           "run the test through ctest, or set it to "
                           "<build>/samsa-server-faults" % path)
    return path


def _ephemeral_low():
    """The first port of the kernel's ephemeral range (outgoing
    connections take their local ports from it)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_PORT_RNG = random.Random()         # seeded from os.urandom: per process


def free_port():
    """A loopback port free now, below the kernel's ephemeral range.  A
    port the kernel hands out (bind to 0) is ephemeral: until the server
    listens on it, any outgoing connection on the machine, such as another
    node of the same cluster connecting to its voters, may take it as its
    local port, and the server's bind fails (seen in CI under ASan's four
    parallel tests).  Below the range only another listener can take it,
    and the harness retries a start that lost such a race."""
    top = _ephemeral_low() - 1
    bottom = 10000 if top >= 12000 else 1024
    for _ in range(500):
        port = _PORT_RNG.randint(bottom, top)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((HOST, port))
            return port
        except OSError:
            continue
        finally:
            s.close()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((HOST, 0))           # nothing free below: the kernel's pick
        return s.getsockname()[1]
    finally:
        s.close()


def port_in_use(port, host="0.0.0.0"):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((host, port))
        return False
    except OSError:
        return True
    finally:
        s.close()


def sanitizer_reports(text):
    return [p.pattern for p in SANITIZER_PATTERNS if p.search(text)]


def read_meta_properties(path):
    props = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            k, v = line.split("=", 1)
            props[k.strip()] = v.strip()
    return props


def base_env(extra=None):
    env = dict(os.environ)
    # A report must show up in stderr and fail the exit code; keep any
    # options the caller set.
    env.setdefault("ASAN_OPTIONS", "abort_on_error=0:detect_leaks=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    # tests/tsan.supp: descriptor numbers reused after libuv's unseen close
    env.setdefault("TSAN_OPTIONS", "second_deadlock_stack=1:suppressions="
                   + os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  "..", "tsan.supp"))
    for k in ("SAMSA_TEST_HANDLER_DELAY_MS", "SAMSA_TEST_HANDLER_DELAY_API"):
        env.pop(k, None)
    if extra:
        env.update({k: str(v) for k, v in extra.items()})
    return env


class Server:
    """One samsa-server process. Created by ServerFactory.start()."""

    def __init__(self, workdir, overrides, env, props_file=None, args=None,
                 use_ports=True, ports=None):
        self.workdir = workdir
        self.overrides = dict(overrides)
        self.env = env
        self.props_file = props_file
        self.extra_args = list(args or [])
        self.use_ports = use_ports
        self.binary = None              # None: server_binary()
        self.proc = None
        self.port, self.controller_port = ports or (None, None)
        # metrics.listener: a free port per launch unless the test set it or
        # starts the server with no arguments at all (the defaults' test)
        self.metrics_auto = ("metrics.listener" not in self.overrides
                             and (use_ports or bool(self.overrides)))
        self.metrics_port = None
        self.stderr_path = None
        self.stdout_path = None
        self.stopped = False
        self.returncode = None
        self.sigterm_sent = False
        self.problems = []
        self.problems = []
        self.attempt = 0
        self.sigterm_sent = False

    # -- paths and facts ----------------------------------------------------
    @property
    def pid(self):
        return self.proc.pid

    @property
    def data_dir(self):
        dirs = self.overrides.get("log.dirs")
        if dirs:
            return dirs.split(",")[0]
        return os.path.join(self.workdir, "samsa-data")

    def meta_properties(self):
        return read_meta_properties(os.path.join(self.data_dir, "meta.properties"))

    def cluster_id(self):
        return self.meta_properties()["cluster.id"]

    def stderr_text(self):
        try:
            with open(self.stderr_path, errors="replace") as f:
                return f.read()
        except (OSError, TypeError):
            return ""

    def stderr_tail(self, n=60):
        return "\n".join(self.stderr_text().splitlines()[-n:])

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def thread_names(self):
        names = []
        base = "/proc/%d/task" % self.pid
        for tid in os.listdir(base):
            try:
                with open(os.path.join(base, tid, "comm")) as f:
                    names.append(f.read().strip())
            except OSError:
                pass                    # thread exited meanwhile
        return names

    def stuck_report(self):
        """Where a process that did not exit is: each thread's name, state
        and kernel wait channel, then gdb's backtraces where gdb is
        installed (for the failure message of a shutdown that hangs)."""
        out = []
        base = "/proc/%d/task" % self.pid
        try:
            tids = sorted(os.listdir(base), key=int)
        except OSError as e:
            return "no /proc entry: %s" % e
        for tid in tids:
            fields = []
            for name in ("comm", "wchan"):
                try:
                    with open(os.path.join(base, tid, name)) as f:
                        fields.append(f.read().strip())
                except OSError:
                    fields.append("?")
            try:
                with open(os.path.join(base, tid, "stat")) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                state = "?"
            out.append("  %s %-16s %s %s" % (tid, fields[0], state, fields[1]))
        gdb = shutil.which("gdb")
        if gdb:
            try:
                r = subprocess.run([gdb, "-p", str(self.pid), "-batch", "-nx",
                                    "-ex", "thread apply all bt"],
                                   capture_output=True, text=True, timeout=60)
                out.append(r.stdout[-20000:])
            except (OSError, subprocess.TimeoutExpired) as e:
                out.append("gdb: %s" % e)
        return "\n".join(out)

    def rss_bytes(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    # -- connections ----------------------------------------------------------
    def connect(self, controller=False, timeout=None, client_id="kwire"):
        port = self.controller_port if controller else self.port
        return kwire.connect(HOST, port, timeout or T(5), client_id)

    def bootstrap(self):
        return "%s:%d" % (HOST, self.port)

    def metrics_url(self, path="/"):
        """URL of path on the metrics listener (the port the harness chose,
        or the one the server logged for metrics.listener port 0)."""
        port = self.metrics_port
        if not port:
            m = re.search(r"metrics listener \S+ bound to port (\d+)",
                          self.stderr_text())
            if not m:
                raise HarnessError("no metrics listener port in stderr")
            port = int(m.group(1))
        scheme = ("https" if self.overrides.get("metrics.listener", "")
                  .startswith("https://") else "http")
        return "%s://%s:%d%s" % (scheme, HOST, port, path)

    # -- life cycle -----------------------------------------------------------
    def command(self):
        cmd = [self.binary or server_binary()]
        if self.props_file:
            cmd.append(self.props_file)
        for k, v in self.overrides.items():
            cmd += ["--override", "%s=%s" % (k, v)]
        return cmd + self.extra_args

    def launch(self):
        """Starts the process (no waiting)."""
        self.attempt += 1
        if self.use_ports:
            self.port = free_port()
            self.controller_port = free_port()
            while self.controller_port == self.port:
                self.controller_port = free_port()
            self.overrides.setdefault("log.dirs", os.path.join(self.workdir, "samsa-data"))
            self.overrides["listeners"] = "PLAINTEXT://%s:%d,CONTROLLER://%s:%d" % (
                HOST, self.port, HOST, self.controller_port)
        if self.metrics_auto:
            self.metrics_port = free_port()
            while self.metrics_port in (self.port, self.controller_port):
                self.metrics_port = free_port()
            self.overrides["metrics.listener"] = "http://%s:%d" % (
                HOST, self.metrics_port)
        n = next(_launches)
        self.stderr_path = os.path.join(self.workdir, "stderr.%d.log" % n)
        self.stdout_path = os.path.join(self.workdir, "stdout.%d.log" % n)
        with open(self.stderr_path, "wb") as err, open(self.stdout_path, "wb") as out:
            self.proc = subprocess.Popen(self.command(), cwd=self.workdir, env=self.env,
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        self.stopped = False
        self.returncode = None
        self.sigterm_sent = False
        self.problems = []

    def wait_ready(self, timeout=None):
        """Waits until both listeners accept and the broker listener answers
        ApiVersions v0. Returns None when ready, else a reason string."""
        deadline = time.monotonic() + (timeout or T(15))
        last = "no attempt"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return "exited with status %s before it was ready" % self.proc.returncode
            try:
                with self.connect(timeout=1.0) as c:
                    r = c.api_versions(0, timeout=T(3))
                    if r["error_code"] != 0:
                        return "ApiVersions answered error %d" % r["error_code"]
                with self.connect(controller=True, timeout=1.0):
                    pass
                return None
            except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout,
                    kwire.ProtocolError) as e:
                last = "%s: %s" % (type(e).__name__, e)
            time.sleep(0.05)
        return "not ready within the timeout (last: %s)" % last

    def signal(self, sig):
        if self.alive():
            if sig in (signal.SIGTERM, signal.SIGINT):
                self.sigterm_sent = True
            os.kill(self.pid, sig)

    def wait_exit(self, timeout):
        try:
            self.returncode = self.proc.wait(timeout=timeout)
            return self.returncode
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout=None):
        """SIGTERM, wait, SIGKILL. Returns a list of problems (empty = clean)."""
        problems = self.problems
        if self.proc is None or self.stopped:
            return problems
        self.stopped = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            rc = self.wait_exit(timeout or T(10))
            if rc is None:
                print("samsa-server pid %d did not exit after SIGTERM:\n%s\n"
                      "--- stderr tail ---\n%s" % (self.pid, self.stuck_report(),
                                                   self.stderr_tail()))
                self.proc.kill()
                self.proc.wait(timeout=T(10))
                problems.append("did not exit within %.0f s of SIGTERM (killed)"
                                % (timeout or T(10)))
            elif rc != 0:
                problems.append("exited with status %d after SIGTERM" % rc)
        else:
            rc = self.proc.returncode
            self.returncode = rc
            if not self.sigterm_sent:
                problems.append("had already exited with status %d before the "
                                "test stopped it" % rc)
            elif rc != 0:
                problems.append("exited with status %d after SIGTERM" % rc)
        found = sanitizer_reports(self.stderr_text())
        if found:
            problems.append("stderr has sanitizer reports (%s)" % ", ".join(found))
        return problems

    def describe(self):
        return ("samsa-server pid %s in %s (ports %s/%s)\n  cmd: %s\n"
                "--- stderr tail ---\n%s\n--- end ---" % (
                    self.proc.pid if self.proc else None, self.workdir,
                    self.port, self.controller_port, " ".join(self.command()),
                    self.stderr_tail()))


class ServerFactory:
    """The `samsa` fixture: start(...) servers; all are stopped at teardown."""

    def __init__(self, tmp_root):
        self.tmp_root = tmp_root
        self.servers = []
        self.counter = 0

    def new_dir(self):
        self.counter += 1
        d = os.path.join(self.tmp_root, "srv%d" % self.counter)
        os.makedirs(d, exist_ok=True)
        return d

    def restart(self, srv, kill=False):
        """Stops srv (SIGTERM, must stop cleanly; or SIGKILL with kill) and
        starts it again on the same ports, data directory and overrides."""
        if kill:
            srv.proc.send_signal(signal.SIGKILL)
            srv.proc.wait(timeout=T(10))
            srv.stopped = True
        else:
            problems = srv.stop()
            assert not problems, problems
        return self.start(workdir=srv.workdir, overrides=dict(srv.overrides),
                          use_ports=False, ports=(srv.port, srv.controller_port))

    def start(self, overrides=None, env=None, props_file=None, args=None,
              workdir=None, wait=True, use_ports=True, ports=None, retries=3,
              binary=None):
        """Starts a server and (by default) waits until it answers.

        overrides: {key: value} passed as --override key=value (listeners
        and log.dirs are added unless use_ports=False, in which case pass
        ports=(broker, controller) to wait on). env: extra environment
        (e.g. SAMSA_TEST_HANDLER_DELAY_MS: a SAMSA_TEST_* hook runs the
        server with its test hooks compiled in, samsa-server-faults, since
        samsa-server ignores them). workdir: reuse a directory (a
        restart)."""
        server_binary()
        if binary is None and any(k.startswith("SAMSA_TEST_") for k in (env or {})):
            binary = faults_binary()
        srv = Server(workdir or self.new_dir(), overrides or {}, base_env(env),
                     props_file, args, use_ports, ports)
        srv.binary = binary
        self.servers.append(srv)
        for attempt in range(retries):
            srv.launch()
            if not wait:
                return srv
            why = srv.wait_ready()
            if why is None:
                return srv
            err = srv.stderr_text()
            port_race = re.search(r"in use|EADDRINUSE|bind", err, re.I)
            if srv.alive():
                srv.proc.kill()
                srv.proc.wait(timeout=T(10))
            srv.stopped = True
            if port_race and use_ports and attempt + 1 < retries:
                continue
            raise HarnessError("samsa-server did not start: %s\n%s"
                               % (why, srv.describe()))
        raise HarnessError("unreachable")

    def run_to_exit(self, overrides=None, env=None, props_file=None, args=None,
                    timeout=None, use_ports=True):
        """Runs a server that is expected to exit by itself (bad config).
        Returns (returncode or None if it was still running and got killed,
        stderr text, Server)."""
        server_binary()
        srv = Server(self.new_dir(), overrides or {}, base_env(env), props_file,
                     args, use_ports)
        srv.launch()
        rc = srv.wait_exit(timeout or T(5))
        if rc is None:
            srv.proc.kill()
            srv.proc.wait(timeout=T(10))
        srv.stopped = True
        return rc, srv.stderr_text(), srv

    def stop_all(self):
        failures = []
        for srv in self.servers:
            problems = srv.stop()       # or what an earlier stop() found
            if problems:
                failures.append("%s:\n  %s\n%s" % (
                    "samsa-server", "\n  ".join(problems), srv.describe()))
        return failures


def make_tmp_root():
    return tempfile.mkdtemp(prefix="samsa-it-")


def remove_tmp_root(path):
    if os.environ.get("SAMSA_TEST_KEEP_DIRS"):
        return
    shutil.rmtree(path, ignore_errors=True)


def wait_until(pred, timeout, interval=0.02):
    """Polls pred() until true or timeout; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)


# -- broker configs and the cleaner, for the reconfiguration and compaction
# tests ------------------------------------------------------------------------

def set_broker(conn, key, value, op=kwire.OP_SET, name="1",
               validate_only=False):
    """IncrementalAlterConfigs of one key of broker `name` ("": the cluster
    default) by raw protocol; returns (error_code, error_message)."""
    r = conn.incremental_alter_configs(
        [(kwire.RESOURCE_BROKER, name, [(key, op, value)])],
        validate_only=validate_only)[0]
    return r["error_code"], r["error_message"]


def describe_broker(conn, key):
    """DescribeConfigs of one key of broker 1: (value, source, read_only)."""
    res = conn.describe_configs([(kwire.RESOURCE_BROKER, "1", [key])])[0]
    assert res["error_code"] == 0, res
    e = res["configs"][0]
    return e["value"], e["source"], e["read_only"]


def cleaner_offset(srv, topic, part=0):
    """The partition's offset in srv's cleaner-offset-checkpoint, -1 when
    it has none (or there is no file yet)."""
    path = os.path.join(srv.data_dir, "cleaner-offset-checkpoint")
    try:
        with open(path) as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        return -1
    for ln in lines[2:2 + int(lines[1])]:
        t, p, o = ln.split()
        if t == topic and int(p) == part:
            return int(o)
    return -1

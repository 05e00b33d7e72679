"""`make install` (issue 23, packaging): `cmake --install` of this build,
staged under a DESTDIR with the default prefix, puts in place what a user
expects, and each piece works from where it was installed:

- samsa-server starts on the installed etc/samsa/server.properties (every
  key commented: the single-node defaults) and serves a client;
- a C program built with `pkg-config libsamsa` against the installed
  headers links libsamsa.so, and with `pkg-config --static` the installed
  libsamsa.a alone (no libsamsa.so needed at run time); both produce a
  record to that server;
- the systemd unit's ExecStart names the installed binary and config;
- the bash completion, sourced with the installed samsa, offers every
  command and verb `samsa --help` lists.
"""

import os
import re
import shlex
import subprocess

import pytest

import samsa_harness
from samsa_harness import T

PREFIX = "/usr/local"

PROBE_C = r"""
#include <stdio.h>
#include <string.h>
#include <samsa/conf.h>
#include <samsa/producer.h>

int main(int argc, char **argv)
{
    samsa_conf_t *conf = samsa_conf_new();
    samsa_producer_t *p;
    samsa_record_t rec;
    samsa_future_t *f;
    char err[256];
    samsa_err_t e;

    if (argc != 3
        || samsa_conf_set(conf, "bootstrap.servers", argv[1], err,
                          sizeof(err)) != SAMSA_ERR_NONE
        || samsa_producer_new(conf, &p, err, sizeof(err)) != SAMSA_ERR_NONE) {
        fprintf(stderr, "setup failed: %s\n", argc == 3 ? err : "usage");
        return 2;
    }
    samsa_conf_free(conf);
    memset(&rec, 0, sizeof(rec));
    rec.topic = argv[2];
    rec.partition = SAMSA_PARTITION_ANY;
    rec.value = "installed";
    rec.value_len = 9;
    rec.timestamp = SAMSA_TIMESTAMP_NOW;
    e = samsa_producer_send(p, &rec, NULL, NULL, &f);
    if (e == SAMSA_ERR_NONE) {
        e = samsa_future_wait(f, 20000, NULL);
        samsa_future_free(f);
    }
    printf("%s\n", samsa_err_name(e));
    return samsa_producer_close(p, 5000) == SAMSA_ERR_NONE
           && e == SAMSA_ERR_NONE ? 0 : 1;
}
"""


def build_dir():
    d = os.environ.get("SAMSA_BUILD_DIR")
    if not d:
        raise samsa_harness.HarnessError("SAMSA_BUILD_DIR is not set: run "
                                         "through ctest")
    return d


def sanitize_flags():
    s = os.environ.get("SAMSA_SANITIZE", "")
    return {"address": ["-fsanitize=address,undefined"],
            "thread": ["-fsanitize=thread"]}.get(s, [])


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("destdir"))
    env = dict(os.environ, DESTDIR=root)
    r = subprocess.run(["cmake", "--install", build_dir(), "--prefix", PREFIX],
                       env=env, capture_output=True, text=True,
                       timeout=T(120))
    assert r.returncode == 0, r.stdout + r.stderr
    return root


def inst(root, *parts):
    return os.path.join(root, PREFIX.lstrip("/"), *parts)


def test_every_piece_is_installed(staged):
    for p in ("bin/samsa-server", "bin/samsa"):
        assert os.access(inst(staged, p), os.X_OK), p
    for p in ("lib/libsamsa.a", "lib/libsamsa.so", "lib/pkgconfig/libsamsa.pc",
              "include/samsa/producer.h", "include/samsa/consumer.h",
              "include/samsa/admin.h", "include/samsa/conf.h",
              "include/samsa/errors.h", "include/samsa/errors.def",
              "etc/samsa/server.properties",
              "lib/systemd/system/samsa-server.service",
              "share/bash-completion/completions/samsa",
              "share/samsa/grafana/samsa-dashboard.json"):
        assert os.path.isfile(inst(staged, p)), p
    # the .so is versioned, its soname the major version
    real = os.path.realpath(inst(staged, "lib/libsamsa.so"))
    assert re.search(r"libsamsa\.so\.\d+\.\d+\.\d+$", real), real
    r = subprocess.run(["objdump", "-p", real], capture_output=True, text=True)
    assert re.search(r"SONAME\s+libsamsa\.so\.\d+\n", r.stdout), r.stdout
    # the installed server says its version, as the build's does
    v = subprocess.run([inst(staged, "bin/samsa-server"), "--version"],
                       capture_output=True, text=True, timeout=T(10))
    assert re.fullmatch(r"samsa-server \d+\.\d+\.\d+\n", v.stdout), v


def pkg_config(staged, *args):
    env = dict(os.environ,
               PKG_CONFIG_PATH=inst(staged, "lib/pkgconfig"),
               PKG_CONFIG_SYSROOT_DIR=staged)
    env.pop("PKG_CONFIG_LIBDIR", None)
    r = subprocess.run(["pkg-config"] + list(args) + ["libsamsa"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return shlex.split(r.stdout)


def compile_probe(staged, tmp_path, static):
    src = tmp_path / "probe.c"
    src.write_text(PROBE_C)
    out = str(tmp_path / ("probe-static" if static else "probe-shared"))
    cflags = pkg_config(staged, "--cflags")
    assert "-I%s" % inst(staged, "include") in cflags, cflags
    if static:
        libs = pkg_config(staged, "--static", "--libs")
        libs = ["-Wl,-Bstatic", "-lsamsa", "-Wl,-Bdynamic"] + \
            [x for x in libs if x != "-lsamsa"]
    else:
        libs = pkg_config(staged, "--libs")
    cmd = ["cc", "-std=gnu11", "-Wall", "-Werror"] + sanitize_flags() + \
        cflags + [str(src), "-o", out] + libs
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=T(120))
    assert r.returncode == 0, " ".join(cmd) + "\n" + r.stderr
    return out


@pytest.fixture(scope="module")
def installed_server(staged, samsa_module):
    """samsa-server from the staged bin/, on the staged server.properties."""
    binary = inst(staged, "bin/samsa-server")
    return samsa_module.start(props_file=inst(staged, "etc/samsa/server.properties"),
                              binary=binary)


def run_probe(staged, probe, srv, topic):
    env = dict(os.environ, LD_LIBRARY_PATH=inst(staged, "lib"))
    r = subprocess.run([probe, srv.bootstrap(), topic], env=env,
                       capture_output=True, text=True, timeout=T(60))
    assert r.returncode == 0 and r.stdout.strip() == "NONE", r
    assert not samsa_harness.sanitizer_reports(r.stderr), r.stderr
    return env


def ldd(path, env):
    return subprocess.run(["ldd", path], env=env, capture_output=True,
                          text=True).stdout


def test_shared_libsamsa_from_pkg_config(staged, installed_server, tmp_path):
    probe = compile_probe(staged, tmp_path, static=False)
    env = run_probe(staged, probe, installed_server, "inst-shared")
    assert inst(staged, "lib/libsamsa.so") in ldd(probe, env).replace(
        ".so.0", ".so"), ldd(probe, env)


def test_static_libsamsa_from_pkg_config(staged, installed_server, tmp_path):
    probe = compile_probe(staged, tmp_path, static=True)
    env = run_probe(staged, probe, installed_server, "inst-static")
    assert "libsamsa" not in ldd(probe, env), ldd(probe, env)


def test_the_installed_server_runs_on_the_installed_config(installed_server, staged):
    srv = installed_server
    assert srv.command()[0] == inst(staged, "bin/samsa-server")
    assert srv.command()[1] == inst(staged, "etc/samsa/server.properties")
    with srv.connect() as c:
        assert c.api_versions(0, timeout=T(5))["error_code"] == 0


def test_systemd_unit_names_the_installed_files(staged):
    unit = open(inst(staged, "lib/systemd/system/samsa-server.service")).read()
    fields = dict(re.findall(r"^(\w+)=(.*)$", unit, re.M))
    argv = shlex.split(fields["ExecStart"])
    assert argv[0] == PREFIX + "/bin/samsa-server", argv
    assert os.access(os.path.join(staged, argv[0].lstrip("/")), os.X_OK)
    assert argv[1] == PREFIX + "/etc/samsa/server.properties", argv
    assert os.path.isfile(os.path.join(staged, argv[1].lstrip("/")))
    assert fields["KillSignal"] == "SIGTERM"
    assert fields["Type"] == "exec" and fields["User"] == "samsa"
    assert "[Install]" in unit and fields["WantedBy"] == "multi-user.target"


def complete(staged, *words):
    script = ('source %s\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\n_samsa\n'
              'printf "%%s\\n" "${COMPREPLY[@]}"\n') % (
        shlex.quote(inst(staged, "share/bash-completion/completions/samsa")),
        " ".join(shlex.quote(w) for w in (inst(staged, "bin/samsa"),) + words),
        len(words))
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                       timeout=T(30))
    assert r.returncode == 0, r.stderr
    return set(r.stdout.split())


def help_commands(staged, *words):
    r = subprocess.run([inst(staged, "bin/samsa")] + list(words) + ["--help"],
                       capture_output=True, text=True, timeout=T(10))
    text = r.stdout + r.stderr
    block = text.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return {line.split()[0] for line in block.splitlines() if line.strip()}


def test_bash_completion_offers_every_command(staged):
    top = help_commands(staged)
    assert {"topic", "produce", "consume", "group", "cluster", "perf"} <= top
    assert complete(staged, "") == top
    assert complete(staged, "to") == {"topic"}
    for cmd in ("topic", "group", "cluster"):
        assert complete(staged, cmd, "") == help_commands(staged, cmd), cmd
    # after options and their values too
    assert complete(staged, "-b", "h:1", "group", "") == \
        help_commands(staged, "group")
    assert complete(staged, "perf", "") == {"produce", "consume", "e2e"}
    assert "--replication-factor" in complete(staged, "topic", "create", "--rep")
    assert "--bootstrap-server" in complete(staged, "topic", "list", "--boot")

"""pytest glue for the integration tests (see samsa_harness.py)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import samsa_harness  # noqa: E402


def _servers_of(item):
    out = []
    for name in ("samsa", "samsa_module"):
        f = getattr(item, "funcargs", {}).get(name)
        if f is not None:
            out += f.servers
    return out


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failing test, show the stderr tail of its servers."""
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and rep.when == "call":
        for srv in _servers_of(item):
            if srv.proc is not None:
                rep.sections.append(("samsa-server pid %d" % srv.proc.pid, srv.describe()))


def _factory():
    root = samsa_harness.make_tmp_root()
    factory = samsa_harness.ServerFactory(root)
    yield factory
    failures = factory.stop_all()
    if not failures:
        samsa_harness.remove_tmp_root(root)
    else:
        pytest.fail("server problems at teardown (dirs kept under %s):\n%s"
                    % (root, "\n".join(failures)), pytrace=False)


@pytest.fixture
def samsa():
    """Factory: samsa.start(overrides={...}, env={...}) -> Server.

    Every server started through it is stopped at teardown (SIGTERM, wait,
    SIGKILL); a non-zero exit after SIGTERM or a sanitizer report fails the
    test (as an error in its teardown)."""
    yield from _factory()


@pytest.fixture(scope="module")
def samsa_module():
    """Like `samsa`, shared by the tests of one module, for read-only tests
    that need not pay for a server each."""
    yield from _factory()


@pytest.fixture
def server(samsa):
    """One server with the default settings (on free loopback ports)."""
    return samsa.start()


@pytest.fixture(scope="module")
def shared_server(samsa_module):
    """One default server shared by a module's read-only tests."""
    return samsa_module.start()

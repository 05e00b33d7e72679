"""Running the `samsa` command-line tool in the integration tests.

run() starts <build>/samsa with the given arguments, stdin text and
environment, bounded by a (scaled) timeout, and fails the test on a
sanitizer report in its stderr (so every CLI run under the ASan and TSan
builds is a sanitizer check of the CLI and libsamsa's admin client).
"""

import json
import os
import subprocess
import time

import pytest

import samsa_harness
from samsa_harness import T


def build_dir():
    d = os.environ.get("SAMSA_BUILD_DIR")
    if not d:
        pytest.skip("SAMSA_BUILD_DIR not set: run through ctest")
    return d


def samsa_bin():
    return os.path.join(build_dir(), "samsa")


class Result:
    def __init__(self, p, secs):
        self.rc = p.returncode
        self.out = p.stdout
        self.err = p.stderr
        self.secs = secs

    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return "rc=%d\nstdout:\n%s\nstderr:\n%s" % (self.rc, self.out[-3000:],
                                                    self.err[-3000:])


def run(*args, stdin=None, env=None, bootstrap=None, timeout=30):
    e = samsa_harness.base_env()
    e.pop("SAMSA_BOOTSTRAP", None)
    if bootstrap is not None:
        e["SAMSA_BOOTSTRAP"] = bootstrap
    if env:
        e.update(env)
    t0 = time.monotonic()
    p = subprocess.run([samsa_bin()] + [str(a) for a in args],
                       input=stdin if stdin is not None else "",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=e, timeout=T(timeout))
    r = Result(p, time.monotonic() - t0)
    found = samsa_harness.sanitizer_reports(p.stderr)
    assert not found, "sanitizer report (%s):\n%s" % (found, p.stderr[-6000:])
    return r


def ok(*args, **kw):
    r = run(*args, **kw)
    assert r.rc == 0, r
    return r

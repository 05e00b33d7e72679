"""pytest glue for the cluster tests: the integration tests' fixtures
(tests/integration/conftest.py) and harness, plus cluster_harness.py."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

from conftest_integration import *  # noqa: E402,F401,F403

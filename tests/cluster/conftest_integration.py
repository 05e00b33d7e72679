"""The integration tests' fixtures (samsa, samsa_module, the failure
report hook), loaded under another module name: two conftest.py files
cannot both be imported as "conftest"."""

import importlib.util
import os

_path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "integration", "conftest.py")
_spec = importlib.util.spec_from_file_location("samsa_integration_conftest", _path)
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)

samsa = _mod.samsa
samsa_module = _mod.samsa_module
pytest_runtest_makereport = _mod.pytest_runtest_makereport

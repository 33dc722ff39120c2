"""Fixtures shared by the Python tests."""

import pytest

try:
    from gnnc import _core
except ImportError:  # the native core is not built here: the tests skip
    _core = None


@pytest.fixture(autouse=True, scope="session")
def _reproducers_in_pytest_temp(tmp_path_factory):
    """Compile errors write IR given as text for their reproducer command
    (docs/Python.md, "Errors"): during the suite into pytest's temporary
    folders (which pytest prunes), not the system's temporary folder, where
    each run left a dozen files."""
    if _core is None:
        yield None
        return
    saved = _core._REPRODUCER_DIR
    _core._REPRODUCER_DIR = str(tmp_path_factory.mktemp("gnnc-reproducers"))
    yield _core._REPRODUCER_DIR
    _core._REPRODUCER_DIR = saved

"""Fixtures shared by the Python tests."""

import pytest

try:
    from gnnc import _core
except ImportError:  # the native core is not built here: the tests skip
    _core = None

try:
    import torch._functorch.config as _aot_config
    # A custom op whose outputs alias its inputs or each other is an error
    # under torch.compile where the CI variable is set (and in every run from
    # PyTorch 2.12), a warning elsewhere: an error in every run of the suite.
    _aot_config.error_on_custom_op_aliasing = True
except (ImportError, AttributeError):  # no torch, or one without the check
    pass


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

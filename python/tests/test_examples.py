"""examples/*.mlir are the output of gnnc.nn._examples: each whole layer is
built around the same propagation function its gnnc.nn layer runs, so a
layer is written once. A file edited by hand, or a builder changed without
regenerating the files, fails here."""

import pathlib

import pytest

pytest.importorskip("gnnc")
from gnnc import _gnnc  # noqa: E402
from gnnc.nn import _examples  # noqa: E402

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_every_example_file_has_a_builder():
    files = sorted(p.stem for p in EXAMPLES.glob("*.mlir"))
    assert files == sorted(_examples.EXAMPLES)


@pytest.mark.parametrize("name", sorted(_examples.EXAMPLES))
def test_example_is_what_its_builder_makes(name):
    path = EXAMPLES / f"{name}.mlir"
    want = _examples.text(name)
    have = path.read_text()
    assert have == want, (f"{path} differs from its builder: run "
                          f"`PYTHONPATH=build/python python -m gnnc.nn._examples examples/`")
    # The IR itself, independent of names and comments.
    built = _examples.EXAMPLES[name]().text()
    assert _gnnc.Module.parse(have, str(path)).text() == built


def test_check_mode_reports_a_stale_file(tmp_path, capsys):
    assert _examples.main([str(tmp_path)]) == 0
    assert _examples.main(["--check", str(tmp_path)]) == 0
    (tmp_path / "gcn.mlir").write_text("// edited\n")
    assert _examples.main(["--check", str(tmp_path)]) == 1
    assert "gcn.mlir" in capsys.readouterr().err

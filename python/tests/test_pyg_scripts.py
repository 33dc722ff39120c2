"""The PyG check scripts of test/PyG, which the README tells users to run:
their layer set-ups must follow examples/*.mlir's argument lists, and the
data sets shipped in data/ must be found without ../shared/datasets."""

import os
import pathlib
import re
import sys

import numpy as np
import pytest

pytest.importorskip("torch_geometric")

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "PyG"))
import check_pyg_parity  # noqa: E402


def example_arguments(name):
    """Seeded arrays shaped as examples/NAME.mlir's tensor arguments (dynamic
    sizes 10), indexed by argument number (0, the graph, is None)."""
    text = (ROOT / "examples" / f"{name}.mlir").read_text()
    signature = re.search(r"func\.func @\w+\((.*)\) ->", text).group(1)
    rng = np.random.default_rng(0)
    args = []
    for kind in re.findall(r"%\w+: (!gnn\.graph|tensor<[^>]*>)", signature):
        if kind == "!gnn.graph":
            args.append(None)
            continue
        dims = kind[len("tensor<"):-1].split("x")[:-1]
        args.append(rng.standard_normal([10 if d == "?" else int(d) for d in dims])
                    .astype(np.float32))
    return args


@pytest.mark.parametrize("name,pyg,make", check_pyg_parity.LAYERS,
                         ids=[layer[0] for layer in check_pyg_parity.LAYERS])
def test_parity_layer_loads_the_example_arguments(name, pyg, make):
    # GIN's example gained a trainable eps (argument 2); the script still
    # loaded arguments 2 and 3 as the first Linear's weight and bias.
    args = example_arguments(name)
    conv, x = make(args)
    assert x is args[1]


def test_parity_gin_uses_the_example_eps():
    args = example_arguments("gin")
    conv, _ = check_pyg_parity.make_gin(args)
    assert conv.eps.item() == pytest.approx(float(args[2][0]))


def test_shipped_data_sets_are_found_without_shared_datasets(tmp_path):
    assert check_pyg_parity.dataset_folder(str(tmp_path), "cora") == \
        os.path.join(check_pyg_parity.ROOT, "data", "cora")
    (tmp_path / "cora").mkdir()
    assert check_pyg_parity.dataset_folder(str(tmp_path), "cora") == \
        os.path.join(str(tmp_path), "cora")
    assert check_pyg_parity.dataset_folder(str(tmp_path), "pubmed") == \
        os.path.join(str(tmp_path), "pubmed")

"""A pytest plugin that keeps every n-th collected test: with
GNNC_SHARD=i/n (0 <= i < n) a run takes tests i, i + n, i + 2n, ... of the
collection, so n processes (one per GPU, or several per GPU) run the whole
suite once between them. Used by the GPU scripts:

    GNNC_SHARD=0/8 python -m pytest -p pytest_shard ...   (bench/ on sys.path)
"""
import os


def pytest_collection_modifyitems(config, items):
    spec = os.environ.get("GNNC_SHARD")
    if not spec:
        return
    i, n = (int(v) for v in spec.split("/"))
    if not 0 <= i < n:
        raise ValueError(f"GNNC_SHARD={spec!r}: expected i/n with 0 <= i < n")
    keep = [item for k, item in enumerate(items) if k % n == i]
    dropped = [item for k, item in enumerate(items) if k % n != i]
    config.hook.pytest_deselected(items=dropped)
    items[:] = keep

"""GNNC_JIT: a new schedule key runs at once on a compiled variant while its
own compiles in the background (gnnc/_jit.py). CPU-only: the variants are
built by fake, slow builders; nothing here needs a GPU."""

import threading
import time

import pytest

gnnc = pytest.importorskip("gnnc")
from gnnc import _jit  # noqa: E402
from gnnc import _gnnc as _C  # noqa: E402
from gnnc._core import _Compiled  # noqa: E402


def key(schedule="0/0/0|0", function="f", csr_order=False, index_bits=32):
    return (function, schedule, csr_order, index_bits)


class Builder:
    """A builder whose compile waits until `release` is set."""

    def __init__(self, name, fail=None, block=False):
        self.name, self.fail = name, fail
        self.release = threading.Event()
        if not block:
            self.release.set()
        self.calls = 0
        self.thread = None

    def __call__(self):
        self.calls += 1
        self.thread = threading.current_thread()
        assert self.release.wait(10)
        if self.fail:
            raise self.fail
        return self.name


def variants(mode="async"):
    return _jit.Variants(mode=lambda: mode)


def test_mode_from_the_environment(monkeypatch):
    monkeypatch.delenv("GNNC_JIT", raising=False)
    assert _jit.jit_mode() == "async"
    for text, mode in [("sync", "sync"), ("ASYNC", "async"), (" sync ", "sync"),
                       ("", "async")]:
        monkeypatch.setenv("GNNC_JIT", text)
        assert _jit.jit_mode() == mode
    monkeypatch.setenv("GNNC_JIT", "lazy")
    with pytest.raises(ValueError, match="GNNC_JIT must be 'async' or 'sync' but is 'lazy'"):
        _jit.jit_mode()


def test_first_variant_is_compiled_on_the_calling_thread():
    v = variants()
    b = Builder("A")
    assert v.get(key(), b) == "A"
    assert b.thread is threading.current_thread()
    assert v.get(key(), Builder("unused")) == "A"
    assert b.calls == 1


def test_new_key_runs_on_the_fallback_then_on_its_own_variant():
    v = variants()
    v.get(key("1/0/0|0"), Builder("A"))
    slow = Builder("B", block=True)
    # The call returns at once with the compiled variant; B compiles elsewhere.
    assert v.get(key("2/0/0|0"), slow) == "A"
    assert v.pending() == (key("2/0/0|0"),)
    # Calls meanwhile keep the fallback and start no second compile.
    assert v.get(key("2/0/0|0"), Builder("never")) == "A"
    slow.release.set()
    v.wait(10)
    assert slow.thread is not threading.current_thread()
    assert slow.calls == 1
    assert v.pending() == ()
    assert v.get(key("2/0/0|0"), Builder("never")) == "B"
    # The first variant stays the fallback of the next new key.
    third = Builder("C", block=True)
    assert v.get(key("3/0/0|0"), third) == "A"
    third.release.set()
    v.wait(10)


@pytest.mark.parametrize("other", [key(csr_order=True), key(index_bits=64),
                                   key(function="g")])
def test_interface_changing_keys_never_share_a_variant(other):
    # csr_order and index_bits change the Program's interface; another
    # function is another function: compiled on the calling thread.
    v = variants()
    v.get(key(), Builder("A"))
    b = Builder("B")
    assert v.get(other, b) == "B"
    assert b.thread is threading.current_thread()


@pytest.mark.parametrize("capacity", ["16", "32", "0"])
def test_graph_block_capacity_never_shares_a_variant(capacity):
    # A variant for graphs of at most 8 nodes each (block-per-graph kernels
    # holding a graph in shared memory) cannot run larger ones, nor can
    # graphs of another capacity class borrow one: compiled on the calling
    # thread. The same capacity with other lanes still uses the fallback.
    v = variants()
    v.get(key("1/0/0|8"), Builder("A"))
    b = Builder("B")
    assert v.get(key("1/0/0|" + capacity), b) == "B"
    assert b.thread is threading.current_thread()
    slow = Builder("C", block=True)
    assert v.get(key("3/0/0|8"), slow) == "A"
    slow.release.set()
    v.wait(10)


def test_sync_mode_compiles_every_key_on_the_calling_thread():
    v = variants("sync")
    v.get(key("1/0/0|0"), Builder("A"))
    b = Builder("B")
    assert v.get(key("2/0/0|0"), b) == "B"
    assert b.thread is threading.current_thread()
    assert v.pending() == ()


def test_background_failure_is_reported_and_does_not_poison_the_fallback():
    v = variants()
    v.get(key("1/0/0|0"), Builder("A"))
    failing = Builder("B", fail=gnnc.CompileError("NVRTC failed to compile 'f.spmm_0.cu'"))
    assert v.get(key("2/0/0|0"), failing) == "A"
    v.wait(10)
    # Every call that would use the failed variant raises the reason ...
    for _ in range(2):
        with pytest.raises(gnnc.CompileError, match="spmm_0") as info:
            v.get(key("2/0/0|0"), Builder("never"))
        assert any("failed in the background" in n
                   for n in getattr(info.value, "__notes__", ["failed in the background"]))
    assert failing.calls == 1
    # ... the fallback's own key and other new keys still work.
    assert v.get(key("1/0/0|0"), Builder("never")) == "A"
    c = Builder("C", block=True)
    assert v.get(key("3/0/0|0"), c) == "A"
    c.release.set()
    v.wait(10)
    assert v.get(key("3/0/0|0"), Builder("never")) == "C"


def test_failing_first_variant_raises_on_the_calling_thread_and_is_retried():
    v = variants()
    with pytest.raises(RuntimeError, match="boom"):
        v.get(key(), Builder("A", fail=RuntimeError("boom")))
    assert v.get(key(), Builder("A")) == "A"


def test_concurrent_first_calls_compile_once():
    v = variants()
    b = Builder("A", block=True)
    out = []
    threads = [threading.Thread(target=lambda: out.append(v.get(key(), b)))
               for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    b.release.set()
    for t in threads:
        t.join(10)
    assert out == ["A"] * 4
    assert b.calls == 1


def test_compiled_module_keys_its_variants_by_schedule_key():
    # _Compiled._specialised with a fake CudaFunction: two graphs whose
    # statistics differ only in the schedule key share the compiled variant
    # until the second one's is ready.
    m = _Compiled("k", _C.Module.parse("func.func @f(%g: !gnn.graph) { return }", "test"))
    made = []
    gate = threading.Event()

    def kind(module, function, stats, index_bits):
        made.append((function, stats, index_bits))
        if len(made) > 1:
            assert gate.wait(10)
        return f"variant {stats}"

    stats = {"schedule_key": "1/0/0|0", "csr_order": False, "index_bits": 32,
             "stats": "mean-degree:4"}
    other = dict(stats, schedule_key="3/0/0|0", stats="mean-degree:20")
    assert m._specialised(m.cuda, kind, "f", stats) == "variant mean-degree:4"
    assert m._specialised(m.cuda, kind, "f", other) == "variant mean-degree:4"
    gate.set()
    m.cuda.wait(10)
    assert m._specialised(m.cuda, kind, "f", other) == "variant mean-degree:20"
    assert made == [("f", "mean-degree:4", 32), ("f", "mean-degree:20", 32)]


def test_wait_gives_the_keys_own_variant():
    # Function.source(graph) shows the graph's variant, not a fallback.
    v = variants()
    v.get(key("1/0/0|0"), Builder("A"))
    b = Builder("B")
    assert v.get(key("2/0/0|0"), b, wait=True) == "B"
    assert b.thread is threading.current_thread()
    # Waiting on a background compile of the key joins it.
    slow = Builder("C", block=True)
    assert v.get(key("3/0/0|0"), slow) == "A"
    threading.Timer(0.05, slow.release.set).start()
    assert v.get(key("3/0/0|0"), Builder("never"), wait=True) == "C"
    assert slow.calls == 1

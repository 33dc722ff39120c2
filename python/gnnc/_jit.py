"""Specialised variants of compiled functions, compiled without stalling.

A function is compiled for the statistics of the graphs it runs on; graphs
whose statistics lead to the same default schedules share one compiled
*variant*, keyed by ``(function, schedule_key, csr_order, index_bits)``. A
new graph with a new schedule key needs a new variant: NVRTC takes seconds.

``GNNC_JIT`` (read on each miss, see :func:`jit_mode`) says what a call does
when its variant is not compiled yet:

* ``async`` (the default): the first variant of a function (for a given
  ``csr_order`` and ``index_bits``) is compiled on the calling thread; later
  ones are compiled on a background thread while the calls run at once on the
  first variant compiled with the same ``(function, csr_order, index_bits)``
  (the *fallback*). The specialised variant replaces it on the first call
  after it is ready. Schedules that differ only in lanes and in the
  heavy-row split (whose kernels take rows of any length on any graph) compute
  the same function on every graph, so the fallback's results are correct;
  they may differ from the specialised variant's in the last bits (another
  summation order). ``csr_order`` and ``index_bits`` change the Program's
  interface (the edge order at its boundary, the index width), and the
  schedule key's shape part (after ``|``: the small-graph class that
  block-per-graph kernels are compiled for) which kernels exist and which
  graphs a Program accepts at all; none of them is ever substituted.
* ``sync``: every call waits for its own variant (today's behaviour, for
  benchmarks and bit-for-bit reproducible runs).

A background compile that fails is reported, with its reason, by every
later call that would use that variant; the fallback and other variants
stay usable.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from typing import Callable, Dict, Optional, Tuple

_MODES = ("async", "sync")


def jit_mode() -> str:
    """``GNNC_JIT``: ``async`` (the default) or ``sync``."""
    mode = os.environ.get("GNNC_JIT", "").strip().lower() or "async"
    if mode not in _MODES:
        raise ValueError(f"gnnc: GNNC_JIT must be 'async' or 'sync' but is "
                         f"{os.environ.get('GNNC_JIT')!r}")
    return mode


def _fallback_key(key: tuple) -> tuple:
    # (function, schedule_key, csr_order, index_bits) -> what must match:
    # all but the schedule key's row part (lanes and split classes, before
    # its "|"; see gnn/Analysis/Schedule.h, scheduleKey).
    return (key[0], str(key[1]).partition("|")[2], key[2], key[3])


# Every Variants object, so that the process waits at exit for compiles in
# flight (a daemon thread inside NVRTC while the runtime's statics are torn
# down would crash the exit).
_ALL: "weakref.WeakSet[Variants]" = weakref.WeakSet()


@atexit.register
def _wait_at_exit() -> None:
    for v in list(_ALL):
        v.wait()


class Variants:
    """The compiled variants of one kind (functions, training steps) of a
    module. ``get(key, build)`` returns the variant to run now; ``build()``
    compiles the variant of ``key`` (it releases the GIL while NVRTC runs)."""

    def __init__(self, mode: Callable[[], str] = jit_mode):
        self._mode = mode
        self._lock = threading.Lock()
        self.ready: Dict[tuple, object] = {}
        # Per fallback key: the first variant compiled.
        self._first: Dict[tuple, object] = {}
        self._pending: Dict[tuple, threading.Thread] = {}
        self._failed: Dict[tuple, BaseException] = {}
        # Serialises synchronous builds of one key (two threads, one compile).
        self._building: Dict[tuple, threading.Lock] = {}
        _ALL.add(self)

    def get(self, key: tuple, build: Callable[[], object], wait: bool = False):
        """The variant to run for ``key`` now; ``wait``: ``key``'s own, even
        under ``async`` (joining a background compile of it)."""
        fn = self.ready.get(key)
        if fn is not None:
            return fn
        return self._miss(key, build, wait)

    def pending(self) -> Tuple[tuple, ...]:
        with self._lock:
            return tuple(self._pending)

    def wait(self, timeout: Optional[float] = None) -> None:
        """Waits for the background compiles started so far."""
        with self._lock:
            threads = list(self._pending.values())
        for t in threads:
            t.join(timeout)

    def _miss(self, key: tuple, build: Callable[[], object], wait: bool):
        error = self._failed.get(key)
        if error is not None:
            raise error
        if wait:
            with self._lock:
                running = self._pending.get(key)
            if running is not None:
                running.join()
                return self.get(key, build, wait)
            return self._build_now(key, build)
        if self._mode() == "async":
            with self._lock:
                fallback = self._first.get(_fallback_key(key))
                if fallback is not None:
                    if key not in self._pending and key not in self.ready:
                        t = threading.Thread(target=self._background,
                                             args=(key, build), daemon=True,
                                             name=f"gnnc-jit {key[0]}")
                        self._pending[key] = t
                        t.start()
                    return self.ready.get(key, fallback)
        return self._build_now(key, build)

    def _build_now(self, key: tuple, build: Callable[[], object]):
        with self._lock:
            lock = self._building.setdefault(key, threading.Lock())
        with lock:
            fn = self.ready.get(key)
            if fn is None:
                fn = build()
                self._publish(key, fn)
        return fn

    def _publish(self, key: tuple, fn) -> None:
        with self._lock:
            self.ready[key] = fn
            self._first.setdefault(_fallback_key(key), fn)

    def _background(self, key: tuple, build: Callable[[], object]) -> None:
        try:
            fn = build()
        except BaseException as e:  # noqa: BLE001 - reported on the next call
            note = (f"gnnc: compiling the variant of @{key[0]} for schedule key "
                    f"{key[1]!r} failed in the background (GNNC_JIT=async); "
                    f"calls that need it raise this error")
            if hasattr(e, "add_note"):
                e.add_note(note)
            with self._lock:
                self._failed[key] = e
                del self._pending[key]
            return
        with self._lock:
            self.ready[key] = fn
            self._first.setdefault(_fallback_key(key), fn)
            del self._pending[key]

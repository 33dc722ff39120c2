"""gnnc: a compiler for graph neural network operators, from PyTorch.

``gnnc.compile`` turns ``gnn`` IR into a callable over PyTorch tensors (CPU:
the reference evaluator; CUDA: generated kernels), differentiable through the
backward the compiler derives from the same IR; ``gnnc.nn`` holds drop-in
layers with PyTorch Geometric's signatures; ``gnnc.MessagePassing`` compiles
layers written as PyG's ``MessagePassing`` subclasses. See docs/Python.md.
"""

from ._core import CompileError, Function, Graph, compile  # noqa: F401
from . import _gnnc
from ._explain import Explanation, explain  # noqa: F401
from . import loader  # noqa: F401
from ._message_passing import (FallbackWarning, MessagePassing,  # noqa: F401
                               TraceError, softmax)
from . import utils  # noqa: F401

__version__ = "0.1.0"


def cuda_available() -> bool:
    """Whether gnnc can run CUDA tensors here (built with the CUDA runtime
    and a driver present)."""
    return bool(_gnnc.cuda_available())


def release_host_memory() -> int:
    """Gives back to the system the host memory the CPU path keeps for
    reuse, and returns its bytes. Tensors of 1 MiB or more that an
    evaluation frees are kept for the next ones of the same size class (a
    training loop's steps repeat their shapes), up to what the tensors in
    use leave of the most the process has had in such tensors at once (at
    least 256 MiB; that peak at most a quarter of the machine's memory):
    after a large evaluation on the CPU, that much stays with the process
    until this is called. CUDA memory is PyTorch's
    (``torch.cuda.empty_cache()``)."""
    return int(_gnnc.release_host_memory())


__all__ = ["CompileError", "Explanation", "FallbackWarning", "Function", "Graph",
           "MessagePassing", "TraceError", "compile", "cuda_available", "explain",
           "release_host_memory", "softmax"]

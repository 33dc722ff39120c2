"""gnnc.explain: the kernel groups the compiler forms for a function and the
schedules it picks for a graph (docs/Python.md, "Inspecting what runs")."""

from typing import List, Optional, Union

import torch

from . import _core


class Explanation:
    """What ``gnnc.explain`` found: ``functions``, one dict per compiled
    function (the function, then its training forward and backward when it
    is differentiable): ``{"function", "role", "groups": [{"kernel",
    "family", "schedule", "ops"}], "gemms"}``; ``stats``, the statistics
    the schedules were picked for. ``str()`` prints them as a table."""

    def __init__(self, functions: List[dict], stats: str):
        self.functions = functions
        self.stats = stats

    def __str__(self) -> str:
        where = f"graphs of {self.stats}" if self.stats else \
            "the default statistics (1000 nodes of in-degree 16; pass graph=)"
        lines = [f"gnnc.explain: kernel groups and schedules for {where}"]
        for f in self.functions:
            groups = f["groups"]
            lines.append(f"@{f['function']} ({f['role']}): {len(groups)} kernel(s)"
                         + (f", {f['gemms']} GEMM(s) through cuBLAS" if f["gemms"] else ""))
            width = max((len(g["kernel"]) for g in groups), default=0)
            for g in groups:
                schedule = g["schedule"].removeprefix("#gnn.schedule<").removesuffix(">")
                lines.append(f"  {g['kernel']:<{width}}  {g['family']:<11} {schedule}")
                lines.append(f"  {'':<{width}}  fuses: {', '.join(g['ops'])}")
        return "\n".join(lines)

    __repr__ = __str__


def explain(obj, graph: Union[None, "_core.Graph", torch.Tensor] = None,
            num_nodes: Optional[int] = None) -> Explanation:
    """The kernel groups gnnc forms for ``obj`` and the schedules it picks:
    ``obj`` is a ``gnnc.Function``, a ``gnnc.nn`` layer or a
    ``gnnc.MessagePassing`` layer (the function of its last call).
    ``graph`` (a ``gnnc.Graph``, or an ``edge_index`` with ``num_nodes``)
    gives the statistics the schedules depend on; None: the compiler's
    default statistics. A differentiable function is also shown as its
    training forward and backward."""
    from ._message_passing import MessagePassing
    if isinstance(obj, _core.Function):
        fn = obj
    elif isinstance(obj, MessagePassing):
        fn = obj._mp.fn
    elif isinstance(obj, torch.nn.Module) and type(obj).__module__.startswith("gnnc.nn"):
        from .nn import _common
        # The variant its last call ran (under autocast: with its arguments'
        # conversions), else its base function.
        key = obj.__dict__.get("_gnnc_ran") or obj.__dict__.get("_gnnc_function")
        fn = None if key is None else _common._FUNCTIONS.get(key)
    else:
        raise TypeError(f"gnnc.explain: expected a gnnc.Function, a gnnc.nn layer or a "
                        f"gnnc.MessagePassing layer, got {type(obj).__name__}")
    if fn is None:
        raise ValueError(f"gnnc.explain: {type(obj).__name__} has not run a gnnc function "
                         f"yet (call the layer first, outside torch.compile)")
    compiled = fn._compiled
    names, roles = [fn.function], ["function"]
    info = compiled.grad_info.get(fn.function)
    if info is not None:
        names += [info["forward"], info["backward"]]
        roles += ["training forward", "backward"]
    stats = _statistics(graph, num_nodes)
    found = compiled.module.explain(names, stats)
    for f, role in zip(found, roles):
        f["role"] = role
    return Explanation(found, stats)


def _statistics(graph, num_nodes) -> str:
    """``graph``'s statistics in the compiler's option form ("" for None)."""
    if graph is None:
        if num_nodes is not None:
            raise TypeError("gnnc.explain: num_nodes= without a graph")
        return ""
    if isinstance(graph, torch.Tensor):
        if num_nodes is None:
            raise TypeError("gnnc.explain: pass num_nodes= with an edge_index "
                            "(or a gnnc.Graph)")
        graph = _core.Graph(graph, num_nodes)
    elif not isinstance(graph, _core.Graph):
        raise TypeError(f"gnnc.explain: expected graph to be a gnnc.Graph or an "
                        f"edge_index tensor, got {type(graph).__name__}")
    st = graph.statistics()
    if "stats_option" in st:  # a device graph: the statistics the GPU path uses
        return st["stats_option"]
    return f"nodes:{st['nodes']},edges:{st['edges']},max-in:{st['max_in_degree']}"

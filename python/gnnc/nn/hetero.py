"""`gnnc.nn.to_hetero` and `gnnc.nn.HeteroConv`: PyG's
`torch_geometric.nn.to_hetero` and `HeteroConv` for models built from
gnnc.nn layers, with the SAGE layers summed into one node type as one sum."""

import importlib.abc
import sys

import torch

from .attention import GATConv, GATv2Conv, TransformerConv
from . import _common
from .conv import AGNNConv, GCNConv, GINConv, GINEConv, SAGEConv, sum_terms

# gnnc's message passing layers: what to_hetero runs once per edge type and
# aggregates per destination type.
_LAYERS = (AGNNConv, GATConv, GATv2Conv, GCNConv, GINConv, GINEConv, SAGEConv,
           TransformerConv)

# PyG's to_hetero (and every fx transformation of PyG's) recognises message
# passing layers through torch_geometric.nn.fx.is_message_passing_op, by
# `isinstance(layer, MessagePassing)`, which gnnc's layers are not: PyG's
# own to_hetero then ran them per edge type and returned the edge types'
# results without aggregating them per node type, silently. So gnnc.nn
# makes that function recognise them too, as soon as PyG's module is (or
# once it gets) imported; it still answers for every other module as
# before.
#
# That makes PyG's to_hetero_with_bases see them as well, which it cannot
# wrap (its HeteroBasisConv reweights a MessagePassing layer's messages per
# edge type through PyG's message hooks): it passed the edge types as the
# layer's first argument, a shape error deep in the layer. Its transformer
# refuses them instead, naming the layer and to_hetero.
_FX = "torch_geometric.nn.fx"
_BASES = "torch_geometric.nn.to_hetero_with_bases_transformer"


def _recognise_layers(fx) -> None:
    """Makes `fx.is_message_passing_op` count gnnc's layers (once). A PyG
    without that function is left as it is (importing it must not fail
    because of gnnc)."""
    original = getattr(fx, "is_message_passing_op", None)
    if original is None or getattr(original, "_gnnc", False):
        return

    def is_message_passing_op(module, op, target) -> bool:
        if op == "call_module" and isinstance(fx.get_submodule(module, target), _LAYERS):
            return True
        return original(module, op, target)

    is_message_passing_op._gnnc = True
    fx.is_message_passing_op = is_message_passing_op


def _refuse_in_bases(bases) -> None:
    """Makes PyG's `ToHeteroWithBasesTransformer` refuse a gnnc layer when
    it reaches one (once); a PyG without it is left as it is."""
    cls = getattr(bases, "ToHeteroWithBasesTransformer", None)
    original = getattr(cls, "call_message_passing_module", None)
    if original is None or getattr(original, "_gnnc", False):
        return

    def call_message_passing_module(self, node, target, name):
        layer = self.module.get_submodule(target) if isinstance(target, str) else None
        if isinstance(layer, _LAYERS):
            raise NotImplementedError(
                f"to_hetero_with_bases: layer {target!r} is a gnnc.nn."
                f"{type(layer).__name__}, which PyG's basis decomposition cannot "
                f"wrap (it reweights the messages of a torch_geometric.nn."
                f"MessagePassing layer per edge type through PyG's message hooks); "
                f"use to_hetero (gnnc.nn.to_hetero or torch_geometric.nn.to_hetero) "
                f"for this model, or build it from PyG's layers")
        return original(self, node, target, name)

    call_message_passing_module._gnnc = True
    cls.call_message_passing_module = call_message_passing_module


# PyG module -> what gnnc.nn does to it once it is imported.
_PATCHES = {_FX: _recognise_layers, _BASES: _refuse_in_bases}


class _OnImport(importlib.abc.MetaPathFinder):
    """Runs the patch of `_PATCHES` for a PyG module when it is imported
    (after gnnc.nn); steps aside once each has run."""

    def __init__(self, names):
        self.pending = set(names)

    def find_spec(self, name, path, target=None):
        if name not in self.pending:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
        loader = getattr(spec, "loader", None)
        run = getattr(loader, "exec_module", None)
        if run is None:
            return None

        def exec_module(module):
            run(module)
            self.pending.discard(name)
            if not self.pending and self in sys.meta_path:
                sys.meta_path.remove(self)
            _PATCHES[name](module)

        loader.exec_module = exec_module
        return spec


def _install() -> None:
    waiting = []
    for name, patch in _PATCHES.items():
        module = sys.modules.get(name)
        if module is not None:
            patch(module)
        else:
            waiting.append(name)
    if waiting and not any(isinstance(f, _OnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _OnImport(waiting))


_install()


def to_hetero(module: torch.nn.Module, metadata, aggr: str = "sum", input_map=None,
              debug: bool = False):
    """`torch_geometric.nn.to_hetero(module, metadata, aggr, input_map,
    debug)` for a model whose message passing layers are gnnc.nn's.

    PyG's own `to_hetero` gives the same model without the fusion below
    (gnnc.nn makes PyG recognise its layers as message passing layers,
    `_recognise_layers`); the model returned is PyG's: each layer is called
    as `layer((x_src, x_dst), edge_index)` per edge type, so its layers must
    take bipartite input
    (docs/Python-nn.md: SAGEConv, GINConv, GINEConv, GATConv, GATv2Conv and
    TransformerConv; GCNConv and AGNNConv raise NotImplementedError on the
    first call). Needs torch_geometric.

    With aggr="sum", the SAGE layers whose outputs are summed into one node
    type run as one sum (`_fuse_sage_sums`): the terms that multiply the same
    features (every relation's root term on the destination type) share one
    matmul, and the others accumulate into it, instead of two matmuls and
    two additions per relation. The parameters stay per relation, as PyG's."""
    try:
        from torch_geometric.nn import fx
        from torch_geometric.nn import to_hetero as pyg_to_hetero
    except ImportError as e:
        raise ImportError("gnnc.nn.to_hetero needs torch_geometric") from e
    _recognise_layers(fx)
    model = pyg_to_hetero(module, metadata, aggr=aggr, input_map=input_map, debug=debug)
    if aggr == "sum":
        _fuse_sage_sums(model)
    _own_get_dict(model)
    return model


def _get_dict(mapping):
    """PyG's to_hetero `get_dict` (a dict argument, {} for None), kept one
    call when torch.fx traces the model's code again (unpickling a
    GraphModule does; torch.fx.wrap's patch does not reach that code, and a
    traced `get_dict` took the placeholder for the dict: the loaded model
    failed with "'NoneType' object has no attribute 'get'")."""
    if isinstance(mapping, torch.fx.Proxy):
        return mapping.tracer.create_proxy("call_function", _get_dict, (mapping,), {})
    return mapping if mapping is not None else {}


def _own_get_dict(model) -> None:
    """Points `model`'s calls of PyG's `get_dict` at `_get_dict`, so that
    the model can be pickled (`torch.save(model)`) and loaded."""
    changed = False
    for node in model.graph.nodes:
        if node.op == "call_function" and getattr(node.target, "__name__", "") == "get_dict" \
                and getattr(node.target, "__module__", "").startswith("torch_geometric"):
            node.target = _get_dict
            changed = True
    if changed:
        model.recompile()


def _sage_sum(layers, inputs, edge_indices):
    """sum_i layers[i](inputs[i], edge_indices[i]) for SAGE layers without
    `normalize`, as one sum of their terms (conv.sum_terms). A sparse
    adjacency (which a layer runs outside torch.compile's graph) is summed
    layer by layer."""
    for v in (*inputs, *edge_indices):
        if isinstance(v, torch.fx.Proxy):
            # torch.fx tracing the model again (torch.fx.symbolic_trace, and
            # unpickling a GraphModule, which traces its code): this call
            # is one node, as torch.fx.wrap would make it.
            return v.tracer.create_proxy("call_function", _sage_sum,
                                         (layers, inputs, edge_indices), {})
    if any(_common.is_sparse(ei) for ei in edge_indices):
        out = None
        for layer, x, ei in zip(layers, inputs, edge_indices):
            y = layer(x, ei)
            out = y if out is None else out + y
        return out
    terms = []
    for layer, x, ei in zip(layers, inputs, edge_indices):
        terms += layer.terms(x, ei)
    return sum_terms(terms)


def _fuse_sage_sums(model) -> None:
    """Rewrites `model` (to_hetero's GraphModule): each tree of `torch.add`
    whose leaves are calls of gnnc SAGE layers without `normalize` (each
    used only by the tree) becomes one `_sage_sum` call over those layers."""
    graph = model.graph

    def sage_call(node) -> bool:
        if node.op != "call_module" or len(node.users) != 1 or node.kwargs or \
                len(node.args) != 2:
            return False
        layer = model.get_submodule(node.target)
        return type(layer) is SAGEConv and not layer.normalize

    def is_add(node) -> bool:
        return node.op == "call_function" and node.target is torch.add and \
            len(node.args) == 2 and not node.kwargs

    def leaves(node, inner):
        """The SAGE calls summed by the add tree at `node`, or None."""
        found = []
        for arg in node.args:
            if is_add(arg) and len(arg.users) == 1:
                sub = leaves(arg, inner)
                if sub is None:
                    return None
                inner.append(arg)
                found += sub
            elif hasattr(arg, "op") and sage_call(arg):
                found.append(arg)
            else:
                return None
        return found

    changed = False
    for node in list(graph.nodes):
        if not is_add(node) or any(is_add(u) and len(node.users) == 1 for u in node.users):
            continue
        inner = []
        calls = leaves(node, inner)
        if not calls:
            continue
        with graph.inserting_before(node):
            layers = tuple(graph.get_attr(c.target) for c in calls)
            fused = graph.call_function(
                _sage_sum, (layers, tuple(c.args[0] for c in calls),
                            tuple(c.args[1] for c in calls)))
        node.replace_all_uses_with(fused)
        for dead in [node] + inner[::-1] + calls:
            graph.erase_node(dead)
        changed = True
    if changed:
        graph.lint()
        model.recompile()


def _hetero_sum(module, args_dict, kwargs_dict) -> dict:
    """PyG's HeteroConv.forward with aggr="sum": each edge type's layer gets
    PyG's arguments (an edge type's own entry, the node type's features, or
    a (source, destination) pair), and each destination type sums its
    layers' outputs; the gnnc SAGE layers (without `normalize`) among them
    as one sum of their terms (conv.sum_terms)."""
    groups = {}
    for edge_type, conv in module.convs.items():
        src, _, dst = edge_type
        has_edge_level_arg = False
        args = []
        for value_dict in args_dict:
            if edge_type in value_dict:
                has_edge_level_arg = True
                args.append(value_dict[edge_type])
            elif src == dst and src in value_dict:
                args.append(value_dict[src])
            elif src in value_dict or dst in value_dict:
                args.append((value_dict.get(src, None), value_dict.get(dst, None)))
        kwargs = {}
        for arg, value_dict in kwargs_dict.items():
            if not arg.endswith("_dict"):
                raise ValueError(f"Keyword arguments in '{type(module).__name__}' need "
                                 f"to end with '_dict' (got '{arg}')")
            arg = arg[:-5]
            if edge_type in value_dict:
                has_edge_level_arg = True
                kwargs[arg] = value_dict[edge_type]
            elif src == dst and src in value_dict:
                kwargs[arg] = value_dict[src]
            elif src in value_dict or dst in value_dict:
                kwargs[arg] = (value_dict.get(src, None), value_dict.get(dst, None))
        if not has_edge_level_arg:
            continue
        terms, outs = groups.setdefault(dst, ([], []))
        if type(conv) is SAGEConv and not conv.normalize and len(args) == 2 and \
                not kwargs and not _common.is_sparse(args[1]):
            terms.extend(conv.terms(*args))
        else:
            outs.append(conv(*args, **kwargs))
    result = {}
    for dst, (terms, outs) in groups.items():
        out = sum_terms(terms) if terms else None
        for y in outs:
            out = y if out is None else out + y
        result[dst] = out
    return result


_HETERO_CONV = []


def hetero_conv_class():
    """gnnc.nn.HeteroConv: PyG's `HeteroConv` (a subclass: the same
    constructor, parameters and state dict) whose aggr="sum" forward sums
    each node type's gnnc SAGE layers as one sum of their terms (the root
    terms on the same destination features share one matmul, the others
    accumulate into it); other aggregations are PyG's forward. Made on first
    use: it needs torch_geometric."""
    if not _HETERO_CONV:
        try:
            from torch_geometric.nn import HeteroConv as PyGHeteroConv
        except ImportError as e:
            raise ImportError("gnnc.nn.HeteroConv needs torch_geometric") from e

        class HeteroConv(PyGHeteroConv):
            __doc__ = hetero_conv_class.__doc__

            def forward(self, *args_dict, **kwargs_dict):
                if self.aggr != "sum":
                    return super().forward(*args_dict, **kwargs_dict)
                return _hetero_sum(self, args_dict, kwargs_dict)

        HeteroConv.__module__ = __name__
        HeteroConv.__qualname__ = "HeteroConv"
        _HETERO_CONV.append(HeteroConv)
    return _HETERO_CONV[0]


def __getattr__(name):
    # gnnc.nn.hetero.HeteroConv (pickle finds the class here).
    if name == "HeteroConv":
        return hetero_conv_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

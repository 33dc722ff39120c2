"""What a gnnc.nn layer keeps of its last full call (`_Plan`, on the
layer as `_gnnc_plan`) so that its next calls skip the checks and
decisions that call made, and what such a plan checks on every call: the
modules whose calls it skips observed by nothing (`_observed`, no global
hook: `_global_hooks`). The layers' own plans live beside them:
conv._GinPlan, conv._GcnPlan, conv._SagePlan, conv._AgnnPlan,
attention._GatPlan, attention._Gatv2Plan, attention._TransformerPlan, and
the whole-model GCN's models._GcnModelPlan."""

from typing import Optional

import torch
from torch import Tensor

from gnnc import _core

from . import _common


def _observed(m) -> bool:
    """Whether something may observe or replace a call of module `m`: a hook
    on it, or a `forward` set on the instance (a LoRA or quantisation
    patch)."""
    return bool(m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or
                m._backward_pre_hooks) or "forward" in m.__dict__


def _global_hooks() -> bool:
    """Whether a global module hook is registered
    (`torch.nn.modules.module.register_module_forward_hook` and its kin):
    it would see every module call, the ones gnnc skips too."""
    g = torch.nn.modules.module
    return bool(g._global_forward_hooks or g._global_forward_pre_hooks or
                g._global_backward_hooks or g._global_backward_pre_hooks)


def _no_plan():
    return None


_MISSING = object()


class _Plan:
    """What a layer's last full call decided (its gnn function, the
    function's configuration, the operands' order), kept on the layer
    (`_gnnc_plan`) so that the next calls skip deciding it again: on a small
    graph a layer call is its host time, most of it the checks and the
    decisions (issues 28 and 31). A subclass's `run` checks everything that
    decision read and returns None where anything differs (the caller then
    takes the full path, which raises what it raises and keeps a new plan).
    What every plan checks (`_stands`): no trace, torch.func transform,
    forward-mode AD or global module hook; torch.autocast as then (off, or
    on x's device with the same dtype: `AUTOCAST` plans only); x and
    edge_index plain dense tensors, x of the dtype, device and width of
    then, edge_index a
    [2, E] int64 or int32 tensor on x's device; the layer's flow and
    `OPTIONS` the same; no hook or `forward` of its own on any module the
    plan skips (`watched`: the operands' Linears and what else the plan
    names). What a plan names (`_parts_stand`): the layer's submodules
    (`linears`) the same objects, each Linear whose weight and bias the
    function reads (`operands`) as then (`_same_linear`), each parameter
    (`params`) the same object of the same shape, dtype and device. Made
    only outside tracing, for an edge_index (not a sparse adjacency): outside
    autocast with x and every parameter of the function's dtype; under
    autocast (`AUTOCAST` plans) with the function in the autocast dtype, x
    of a dtype autocast casts and every parameter of one such dtype (the
    function converts them: _common.operand). Not copied with the layer
    (deepcopy, pickle): a copy decides anew."""

    __slots__ = ("template", "flow", "dtype", "xdtype", "pdtype", "autocast", "results",
                 "device", "cin", "watched", "options", "linears", "operands", "params",
                 "chosen")

    # The layer's attributes (plain ones, in its __dict__) the plan was made
    # for: a later call with any of them changed takes the full path.
    OPTIONS: tuple = ()

    # Whether the layer's plan may be made under torch.autocast (its `run`
    # gives what the full path gives there: the function's results in PyG's
    # dtypes through `results`).
    AUTOCAST: bool = False

    # Whether the module has a `flow` of its own that every call compares
    # (a layer's); a model's plan compares its layers' flows itself.
    FLOWS: bool = True

    def __deepcopy__(self, memo):
        return None

    def __reduce__(self):
        return (_no_plan, ())

    @staticmethod
    def of(module) -> Optional["_Plan"]:
        """`module`'s plan, or None (none kept, or traced by torch.compile,
        which takes the full path: no guard on the plan)."""
        return None if torch.compiler.is_compiling() else module.__dict__.get("_gnnc_plan")

    @staticmethod
    def drop(module) -> None:
        """Forgets `module`'s plan (not while traced: its attributes stay
        untouched then)."""
        if not torch.compiler.is_compiling():
            module.__dict__.pop("_gnnc_plan", None)

    @classmethod
    def _make(cls, module, template: str, dt: torch.dtype, x, linears: tuple = (),
              operands: tuple = (), params: tuple = (), watched: tuple = (),
              results: tuple = ()):
        """A new plan of this call on `module` (not yet kept: the caller
        sets its own fields, then `_keep`), or None where none can stand
        for later calls (traced, x not a plain dense tensor, outside
        autocast x or an operand or parameter not of `dt`, under it see the
        class); any older plan is dropped either way. `linears`: the (name,
        submodule or None) pairs whose identity the plan checks;
        `operands`: the Linears whose weights (and biases) enter the
        function, in order (their calls skipped: watched for hooks);
        `params`: the (name, parameter or None) pairs; `watched`: the other
        modules whose calls the plan skips; `results`: the function's
        results' conversions (_common.returned) of this call."""
        if torch.compiler.is_compiling():
            return None  # (the layer's attributes untouched while traced)
        _Plan.drop(module)
        if type(x) is not Tensor or x.layout != torch.strided or x.is_meta:
            return None
        tensors = [t for m in operands for t in (m.weight, m.bias) if t is not None] + \
            [t for _, t in params if t is not None]
        low = None
        if _common._any_autocast():
            low = _common.autocast_dtype(x.device)
            if not cls.AUTOCAST or low is None or dt != low:
                return None
            pdtype = tensors[0].dtype if tensors else dt
            if x.dtype not in _common._AUTOCAST_CAST or \
                    pdtype not in _common._AUTOCAST_CAST or \
                    any(t.dtype != pdtype for t in tensors):
                return None
        else:
            pdtype = dt
            if x.dtype != dt or any(t.dtype != dt for t in tensors):
                return None
        p = cls()
        p.template, p.flow, p.dtype = template, module.flow if cls.FLOWS else None, dt
        p.xdtype, p.pdtype, p.autocast, p.results = x.dtype, pdtype, low, results
        p.device, p.cin = x.device, x.size(1)
        p.options = cls._options(module)
        p.linears = linears
        p.operands = tuple((m, _linear_spec(m)) for m in operands)
        p.params = tuple((name, t, None if t is None else tuple(t.shape)) for name, t in params)
        seen = {id(m): m for m in watched + tuple(operands)}
        p.watched = tuple(seen.values())
        p.chosen = {}
        return p

    def _keep(self, module) -> None:
        module.__dict__["_gnnc_plan"] = self

    @classmethod
    def _options(cls, module) -> tuple:
        """The values of the layer's `OPTIONS` (_MISSING for a name that is
        not a plain attribute now: a submodule set in its place)."""
        d = module.__dict__
        return tuple([d.get(name, _MISSING) for name in cls.OPTIONS])

    def _stands(self, module, x, edge_index) -> bool:
        """Whether the checks every plan makes hold (see the class)."""
        if type(x) is not Tensor or type(edge_index) is not Tensor or \
                _core._functorch_active() or \
                getattr(_core._forward_ad, "_current_level", -1) >= 0 or _global_hooks():
            return False
        if _common._any_autocast():
            if self.autocast is None or _common.autocast_dtype(x.device) != self.autocast:
                return False
        elif self.autocast is not None:
            return False
        # (.shape[i], not .size(i), and _observed inlined: this runs on
        # every call, and a method call with arguments costs twice as much.)
        if x.dtype != self.xdtype or x.device != self.device or \
                x.layout != torch.strided or x.dim() != 2 or x.shape[1] != self.cin or \
                edge_index.layout != torch.strided or \
                edge_index.dtype not in (torch.int64, torch.int32) or \
                edge_index.dim() != 2 or edge_index.shape[0] != 2 or \
                edge_index.device != x.device or (self.FLOWS and module.flow != self.flow) or \
                (self.OPTIONS and self._options(module) != self.options):
            return False
        for m in self.watched:
            if m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or \
                    m._backward_pre_hooks or "forward" in m.__dict__:
                return False
        return True

    def _parts_stand(self, module, tensors: list) -> bool:
        """Whether the plan's named submodules, Linears and parameters are
        as then (see the class); then the Linears' weights and biases
        appended to `tensors`, in order."""
        modules, params, dt, device = module._modules, module._parameters, self.pdtype, \
            self.device
        for name, m in self.linears:
            if modules.get(name) is not m:
                return False
        for name, t, shape in self.params:
            if params.get(name) is not t or (t is not None and (
                    t.dtype != dt or t.device != device or tuple(t.shape) != shape)):
                return False
        for m, spec in self.operands:
            if not self._same_linear(m, spec, tensors):
                return False
        return True

    def _same_linear(self, m, spec, tensors) -> bool:
        """Whether Linear `m` is as when the plan was made (`spec`, from
        `_linear_spec`: its class, its weight's class (no
        UninitializedParameter), shape, dtype and device, a bias or none);
        then its weight and bias appended to `tensors`."""
        cls, kind, shape, bias = spec
        if type(m) is not cls:
            return False
        params = m._parameters
        w, b = params.get("weight"), params.get("bias")
        dt = self.pdtype
        if type(w) is not kind or w.dtype != dt or w.shape != shape or \
                w.device != self.device or (b is not None) != bias or \
                (b is not None and (b.dtype != dt or b.device != self.device)):
            return False
        tensors.append(w.contiguous())
        if b is not None:
            tensors.append(b.contiguous())
        return True

    def _call(self, module, config: tuple, edge_index: Tensor, n: int,
              tensors: list) -> Tensor:
        """propagate's eager call, its checks made: the graph's handle from
        the cache (which checks the graph's contents), the function for the
        tensors' gradients, its run. The function chosen is kept per
        (config, which tensors need a gradient where autograd records):
        what else function_for reads (autocast's dtype, the tensors'
        dtypes) the plan fixes (`_stands`, the layer's own checks)."""
        graph = _core._graphs.get(edge_index, n).handle
        key = (config, tuple([t.requires_grad for t in tensors])) \
            if torch.is_grad_enabled() else (config, None)
        chosen = self.chosen.get(key)
        if chosen is None:
            fn = _common.function_for(self.template, config, tensors, self.results)
            chosen = self.chosen[key] = (fn, _common._RAN.key, (self.template, config),
                                         key[1] is not None and any(key[1]))
        fn, ran, function, trains = chosen
        d = module.__dict__
        d["_gnnc_function"] = function  # (gnnc.explain)
        d["_gnnc_ran"] = ran  # the variant run
        return fn._launch(edge_index, n, tensors, graph, trains)


def _linear_spec(m) -> tuple:
    """What `_same_linear` compares of Linear `m`."""
    return (type(m), type(m.weight), tuple(m.weight.shape), m.bias is not None)

"""PyG's normalisation layers that `gnnc.nn`'s models build by name
(`norm='batch_norm'`, `norm='layer_norm'`), in plain PyTorch: the same
parameter and buffer names, initialisation and computation as
`torch_geometric.nn.norm.BatchNorm` and `LayerNorm`, so a PyG model's state
dict loads into gnnc's and back. torch_geometric is not needed."""

from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor


class BatchNorm(torch.nn.Module):
    r"""PyG's `BatchNorm`: `torch.nn.BatchNorm1d` over the nodes (as
    `module`: `module.weight`, `module.bias`, `module.running_mean`, ...);
    with `allow_single_element`, a batch of at most one node is normalised
    with the running statistics."""

    def __init__(self, in_channels: int, eps: float = 1e-5,
                 momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, allow_single_element: bool = False,
                 device: Optional[torch.device] = None):
        super().__init__()
        if allow_single_element and not track_running_stats:
            raise ValueError("'allow_single_element' requires "
                             "'track_running_stats' to be set to `True`")
        self.module = torch.nn.BatchNorm1d(in_channels, eps, momentum, affine,
                                           track_running_stats, device=device)
        self.in_channels = in_channels
        self.allow_single_element = allow_single_element

    def reset_running_stats(self) -> None:
        self.module.reset_running_stats()

    def reset_parameters(self) -> None:
        self.module.reset_parameters()

    def forward(self, x: Tensor) -> Tensor:
        if self.allow_single_element and x.size(0) <= 1:
            return F.batch_norm(x, self.module.running_mean, self.module.running_var,
                                self.module.weight, self.module.bias, False, 0.0,
                                self.module.eps)
        return self.module(x)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.module.extra_repr()})"


class LayerNorm(torch.nn.Module):
    r"""PyG's `LayerNorm`. `mode='graph'` (PyG's default): each graph of the
    batch (`batch`; the whole input without it) normalised over all its
    nodes and channels, `(x - mean) / (std + eps)` without `batch`,
    `(x - mean) / sqrt(var + eps)` with it, as PyG; `mode='node'`: each node
    over its channels (`F.layer_norm`). Parameters `weight` (ones), `bias`
    (zeros) with `affine`."""

    def __init__(self, in_channels: int, eps: float = 1e-5, affine: bool = True,
                 mode: str = "graph", device: Optional[torch.device] = None):
        super().__init__()
        self.in_channels = in_channels
        self.eps = eps
        self.affine = affine
        if mode not in ("graph", "node"):
            raise ValueError(f"{type(self).__name__}: mode must be 'graph' or 'node', "
                             f"got {mode!r}")
        self.mode = mode
        if affine:
            self.weight = torch.nn.Parameter(torch.empty(in_channels, device=device))
            self.bias = torch.nn.Parameter(torch.empty(in_channels, device=device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            with torch.no_grad():
                self.weight.fill_(1.0)
                self.bias.zero_()

    def forward(self, x: Tensor, batch: Optional[Tensor] = None,
                batch_size: Optional[int] = None) -> Tensor:
        if self.mode == "graph":
            if batch is None:
                x = x - x.mean()
                out = x / (x.std(unbiased=False) + self.eps)
            else:
                if batch_size is None:
                    batch_size = int(batch.max()) + 1
                # PyG's degree and scatter sums, per graph.
                count = torch.zeros(batch_size, dtype=x.dtype, device=x.device)
                count = count.index_add(0, batch, torch.ones_like(batch, dtype=x.dtype))
                norm = (count.clamp(min=1) * x.size(-1)).view(-1, 1)
                rows = x.new_zeros(batch_size, x.size(-1))
                mean = rows.index_add(0, batch, x).sum(dim=-1, keepdim=True) / norm
                x = x - mean.index_select(0, batch)
                var = rows.index_add(0, batch, x * x).sum(dim=-1, keepdim=True) / norm
                out = x / (var + self.eps).sqrt().index_select(0, batch)
            if self.weight is not None and self.bias is not None:
                out = out * self.weight + self.bias
            return out
        return F.layer_norm(x, (self.in_channels,), self.weight, self.bias, self.eps)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.in_channels}, affine={self.affine}, "
                f"mode={self.mode})")

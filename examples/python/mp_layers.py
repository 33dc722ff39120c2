"""PyG layers that gnnc does not ship, written as `gnnc.MessagePassing`
subclasses the way a user would (issue 33): each holds PyG's parameters under
PyG's names, so ``load_state_dict`` of the PyG layer's weights (or a copy by
name) gives the PyG layer's outputs and gradients.

- ``GENConv``: DeeperGCN's layer with its softmax aggregation (per channel,
  temperature ``t``), the MLP after it in PyTorch;
- ``GatedGraphConv``: ``x @ W_l`` summed over incoming edges, then a GRU
  cell (in PyTorch), ``num_layers`` times;
- ``SuperGATConv``: the MX and SD attentions (the layer's output; the
  self-supervised link loss of training mode is not computed);
- ``LEConv``: PyG's own ``message`` (``a_j - b_i``, times an edge weight);
- ``PNAConv``: the mean / min / max / std aggregators with the identity,
  amplification and attenuation degree scalers (one tower, no edge
  features);
- ``EdgeConv`` and ``ResGatedGraphConv`` (as in
  python/tests/test_message_passing.py), for the benchmark;
- ``APPNP``: ``K`` steps of personalised-PageRank propagation over the
  GCN-normalised graph with self-loops (no parameters);
- ``FAConv``: FAGCN's ``sum_j tanh(a_l . x_j + a_r . x_i) d_j^-1/2
  d_i^-1/2 x_j + eps x_0``;
- ``CGConv``: the crystal-graph convolution, ``sigmoid(lin_f(z)) *
  softplus(lin_s(z))`` over ``z = [x_i, x_j(, e)]``, summed, plus ``x``
  (no batch norm);
- ``TAGConv``: ``K`` hops of GCN-normalised propagation (no self-loops),
  a linear map of each hop, summed.

``load_pyg_state(ours, theirs)`` copies a PyG layer's parameters and
buffers into ours.

Each propagation compiles into fused kernels with no ``edges x features``
temporary, forward or backward (python/tests/test_mp_layers.py checks the
Programs). ``bench/mp_layers.py`` times them against PyG; see
docs/Python-mp.md.
"""

import math

import torch
import torch.nn.functional as F
from torch.nn import BatchNorm1d, Dropout, Linear, Parameter, ReLU, Sequential

import gnnc

__all__ = ["GENConv", "GatedGraphConv", "SuperGATConv", "LEConv", "PNAConv", "EdgeConv",
           "ResGatedGraphConv", "APPNP", "FAConv", "CGConv", "TAGConv", "load_pyg_state"]

# Our name -> PyG's, where PyG keeps a tensor in its aggregation module.
_PYG_NAMES = {"t": "aggr_module.t", "avg_deg_log": "aggr_module.avg_deg_log"}


def load_pyg_state(ours, theirs):
    """Copies every parameter and buffer of ``ours`` from the PyG layer
    ``theirs`` (same names, but for the aggregation module's)."""
    src = theirs.state_dict()
    with torch.no_grad():
        for name, t in ours.state_dict().items():
            t.copy_(src[_PYG_NAMES.get(name, name)])


def pyg_name(name):
    """The PyG layer's name of our parameter ``name``."""
    return _PYG_NAMES.get(name, name)


def _self_loops(edge_index, n):
    """PyG's add_self_loops after remove_self_loops (gnnc.utils': the same
    tensor on every call while edge_index holds the same indices)."""
    loop_free, _ = gnnc.utils.remove_self_loops(edge_index)
    return gnnc.utils.add_self_loops(loop_free, num_nodes=n)[0]


class GENConv(gnnc.MessagePassing):
    """PyG's ``GENConv(aggr="softmax")``: ``mlp(x_i + sum_j a_ji * m_ji)``
    with ``m_ji = relu(x_j) + eps`` and ``a_ji`` the softmax of ``t * m_ji``
    over i's incoming edges, per channel."""

    def __init__(self, in_channels, out_channels, t=1.0, learn_t=False, eps=1e-7,
                 num_layers=2, expansion=2, bias=False):
        super().__init__("sum")
        self.eps = eps
        self.t = Parameter(torch.tensor([t])) if learn_t else t
        if in_channels != out_channels:
            self.lin_src = Linear(in_channels, out_channels, bias=bias)
            self.lin_dst = Linear(in_channels, out_channels, bias=bias)
        hidden = out_channels * expansion
        layers = [Linear(out_channels, hidden, bias=bias)]
        for _ in range(num_layers - 2):
            layers += [BatchNorm1d(hidden), ReLU(), Dropout(0.0), Linear(hidden, hidden, bias=bias)]
        layers += [BatchNorm1d(hidden), ReLU(), Dropout(0.0), Linear(hidden, out_channels, bias=bias)]
        self.mlp = Sequential(*layers)

    def forward(self, x, edge_index):
        src = self.lin_src(x) if hasattr(self, "lin_src") else x
        dst = self.lin_dst(x) if hasattr(self, "lin_dst") else x
        return self.mlp(self.propagate(edge_index, x=src) + dst)

    def message(self, x_j, x_i, index):
        m_j, m_i = x_j.relu() + self.eps, x_i.relu() + self.eps
        # The softmax over i's edges is the same with t * m_i subtracted
        # (one shift per target); written so, the score is one sddmm and the
        # softmax fuses with the aggregation (a bare t * m_j does not fuse).
        alpha = gnnc.softmax(self.t * m_j - self.t * m_i, index)
        # Channels as heads: [E, C] weights of [N, C, 1] features.
        return alpha.unsqueeze(-1) * m_j.unsqueeze(-1)

    def update(self, aggr_out):
        return aggr_out.squeeze(-1)


class GatedGraphConv(gnnc.MessagePassing):
    """PyG's ``GatedGraphConv``: ``num_layers`` times, ``m = sum_j w_ji (x @
    W_l)_j`` then ``x = GRUCell(m, x)``."""

    def __init__(self, out_channels, num_layers, bias=True):
        super().__init__("sum")
        self.out_channels, self.num_layers = out_channels, num_layers
        self.weight = Parameter(torch.empty(num_layers, out_channels, out_channels))
        self.rnn = torch.nn.GRUCell(out_channels, out_channels, bias=bias)
        bound = 1.0 / math.sqrt(out_channels)
        torch.nn.init.uniform_(self.weight, -bound, bound)

    def forward(self, x, edge_index, edge_weight=None):
        if x.size(-1) < self.out_channels:
            x = torch.cat([x, x.new_zeros(x.size(0), self.out_channels - x.size(-1))], 1)
        for i in range(self.num_layers):
            m = self.propagate(edge_index, x=x @ self.weight[i], edge_weight=edge_weight)
            x = self.rnn(m, x)
        return x

    def message(self, x_j, edge_weight):
        return x_j if edge_weight is None else edge_weight.view(-1, 1) * x_j


class SuperGATConv(gnnc.MessagePassing):
    """PyG's ``SuperGATConv`` (MX or SD attention), its output only: the
    self-supervised attention loss (negative sampling, training mode) is not
    computed."""

    def __init__(self, in_channels, out_channels, heads=1, concat=True,
                 negative_slope=0.2, dropout=0.0, add_self_loops=True, bias=True,
                 attention_type="MX"):
        super().__init__("sum")
        self.heads, self.out_channels, self.concat = heads, out_channels, concat
        self.negative_slope, self.dropout = negative_slope, dropout
        self.add_self_loops, self.attention_type = add_self_loops, attention_type
        self.lin = Linear(in_channels, heads * out_channels, bias=False)
        if attention_type == "MX":
            self.att_l = Parameter(torch.randn(1, heads, out_channels) * 0.1)
            self.att_r = Parameter(torch.randn(1, heads, out_channels) * 0.1)
        self.bias = Parameter(torch.zeros(heads * out_channels if concat else out_channels)) \
            if bias else None

    def forward(self, x, edge_index):
        if self.add_self_loops:
            edge_index = _self_loops(edge_index, x.size(0))
        h = self.lin(x).view(-1, self.heads, self.out_channels)
        out = self.propagate(edge_index, x=h)
        out = out.flatten(1) if self.concat else out.mean(dim=1)
        return out if self.bias is None else out + self.bias

    def message(self, x_i, x_j, index):
        logits = (x_i * x_j).sum(-1)
        if self.attention_type == "MX":
            alpha = (x_j * self.att_l).sum(-1) + (x_i * self.att_r).sum(-1)
            alpha = alpha * logits.sigmoid()
        else:
            alpha = logits / math.sqrt(self.out_channels)
        alpha = gnnc.softmax(F.leaky_relu(alpha, self.negative_slope), index)
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        return alpha.unsqueeze(-1) * x_j


class LEConv(gnnc.MessagePassing):
    """PyG's ``LEConv``: ``sum_j w_ji (lin1(x)_j - lin2(x)_i) + lin3(x)_i``."""

    def __init__(self, in_channels, out_channels, bias=True):
        super().__init__("sum")
        self.lin1 = Linear(in_channels, out_channels, bias=bias)
        self.lin2 = Linear(in_channels, out_channels, bias=False)
        self.lin3 = Linear(in_channels, out_channels, bias=bias)

    def forward(self, x, edge_index, edge_weight=None):
        out = self.propagate(edge_index, a=self.lin1(x), b=self.lin2(x),
                             edge_weight=edge_weight)
        return out + self.lin3(x)

    def message(self, a_j, b_i, edge_weight):
        out = a_j - b_i
        return out if edge_weight is None else out * edge_weight.view(-1, 1)


class PNAConv(gnnc.MessagePassing):
    """PyG's ``PNAConv`` with one tower, no edge features, aggregators
    mean / min / max / std and scalers identity / amplification /
    attenuation: the four aggregations of the message
    ``pre_nn(cat([x_i, x_j]))`` in one propagate (a list ``aggr``, as PyG's
    PNAConv passes its aggregators)."""

    def __init__(self, in_channels, out_channels, deg):
        super().__init__(["mean", "min", "max", "std"])
        self.pre_nns = torch.nn.ModuleList([Sequential(Linear(2 * in_channels, in_channels))])
        self.post_nns = torch.nn.ModuleList([Sequential(Linear(13 * in_channels, out_channels))])
        self.lin = Linear(out_channels, out_channels)
        bins = torch.arange(deg.numel(), dtype=torch.float, device=deg.device)
        self.register_buffer("avg_deg_log", ((bins + 1).log() * deg).sum().view(1) / deg.sum())

    def forward(self, x, edge_index):
        out = self.propagate(edge_index, x=x)
        # In-degrees by index_add_, as PyG's degree(): torch.bincount would
        # wait for the GPU (its output size is the largest index).
        col = edge_index[1]
        deg = x.new_zeros(x.size(0)).index_add_(0, col, x.new_ones(col.numel())).view(-1, 1)
        amp = out * (torch.log(deg + 1) / self.avg_deg_log)
        att = out * (self.avg_deg_log / torch.log(deg.clamp(min=1) + 1))
        out = torch.cat([x, out, amp, att], dim=-1)
        return self.lin(self.post_nns[0](out))

    def message(self, x_i, x_j):
        return self.pre_nns[0](torch.cat([x_i, x_j], dim=-1))


class EdgeConv(gnnc.MessagePassing):
    """PyG's ``EdgeConv``: ``max_j nn(cat([x_i, x_j - x_i]))``."""

    def __init__(self, nn, aggr="max"):
        super().__init__(aggr)
        self.nn = nn

    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)

    def message(self, x_i, x_j):
        return self.nn(torch.cat([x_i, x_j - x_i], dim=-1))


class ResGatedGraphConv(gnnc.MessagePassing):
    """PyG's ``ResGatedGraphConv``: ``sum_j sigmoid(k_i + q_j) * v_j`` plus
    a skip connection and a bias."""

    def __init__(self, in_channels, out_channels):
        super().__init__("sum")
        self.lin_key = Linear(in_channels, out_channels)
        self.lin_query = Linear(in_channels, out_channels)
        self.lin_value = Linear(in_channels, out_channels)
        self.lin_skip = Linear(in_channels, out_channels, bias=False)
        self.bias = Parameter(torch.zeros(out_channels))

    def forward(self, x, edge_index):
        k, q, v = self.lin_key(x), self.lin_query(x), self.lin_value(x)
        return self.propagate(edge_index, k=k, q=q, v=v) + self.lin_skip(x) + self.bias

    def message(self, k_i, q_j, v_j):
        return torch.sigmoid(k_i + q_j) * v_j


def _gcn_norm(x, edge_index, self_loops=True):
    """PyG's ``gcn_norm`` (with self-loops by default), as two node factors:
    the edge j -> i weighs ``d_j^-1/2 d_i^-1/2`` (d: in-degrees, with the
    loops), which gnnc folds into the aggregation's weights. The loops as
    PyG's add_remaining_self_loops makes them, without a data-dependent
    edge count (torch.compile traces it without a graph break): one loop
    per node appended, the graph's own loops weighted 0 (``w``, [E + N, 1];
    None without loops). Returns (edge_index, dinv, w)."""
    n, w = x.size(0), None
    if self_loops:
        w = torch.cat([(edge_index[0] != edge_index[1]).to(x.dtype), x.new_ones(n)])
        loops = torch.arange(n, device=edge_index.device, dtype=edge_index.dtype)
        edge_index = torch.cat([edge_index, loops.expand(2, n)], dim=1)
    col = edge_index[1]
    deg = x.new_zeros(n).index_add_(0, col, x.new_ones(col.numel()) if w is None else w)
    dinv = deg.pow(-0.5).masked_fill(deg == 0, 0.0).view(-1, 1)
    return edge_index, dinv, None if w is None else w.view(-1, 1)


class APPNP(gnnc.MessagePassing):
    """PyG's ``APPNP``: ``x <- (1 - alpha) A_hat x + alpha h``, ``K`` times,
    from ``h`` = the input (the weighted sum and the mix in one function)."""

    def __init__(self, K, alpha):
        super().__init__("sum")
        self.K, self.alpha = K, alpha

    def forward(self, x, edge_index):
        edge_index, dinv, w = _gcn_norm(x, edge_index)
        h = x
        for _ in range(self.K):
            x = self.propagate(edge_index, x=x, h=h, norm=dinv, w=w)
        return x

    def message(self, x_j, norm_i, norm_j, w):
        return w * norm_i * norm_j * x_j

    def update(self, aggr_out, h):
        return aggr_out * (1 - self.alpha) + self.alpha * h


class FAConv(gnnc.MessagePassing):
    """PyG's ``FAConv``: ``sum_j tanh(att_l(x)_j + att_r(x)_i) n_ji x_j +
    eps x_0``, ``n_ji`` the GCN normalisation with self-loops."""

    def __init__(self, channels, eps=0.1):
        super().__init__("sum")
        self.eps = eps
        self.att_l = Linear(channels, 1, bias=False)
        self.att_r = Linear(channels, 1, bias=False)

    def forward(self, x, x_0, edge_index):
        edge_index, dinv, w = _gcn_norm(x, edge_index)
        out = self.propagate(edge_index, x=x, norm=dinv, w=w)
        return out + self.eps * x_0 if self.eps != 0.0 else out

    def message(self, x_j, x_i, norm_i, norm_j, w):
        alpha = torch.tanh(self.att_l(x_j) + self.att_r(x_i))
        return x_j * (alpha * norm_j * norm_i * w)


class CGConv(gnnc.MessagePassing):
    """PyG's ``CGConv`` (crystal graphs, no batch norm): ``x_i + sum_j
    sigmoid(lin_f(z)) * softplus(lin_s(z))``, ``z = [x_i, x_j, e_ji]``."""

    def __init__(self, channels, dim=0, bias=True):
        super().__init__("sum")
        self.lin_f = Linear(2 * channels + dim, channels, bias=bias)
        self.lin_s = Linear(2 * channels + dim, channels, bias=bias)

    def forward(self, x, edge_index, edge_attr=None):
        return self.propagate(edge_index, x=x, edge_attr=edge_attr)

    def message(self, x_i, x_j, edge_attr):
        z = torch.cat([x_i, x_j] if edge_attr is None else [x_i, x_j, edge_attr], dim=-1)
        return self.lin_f(z).sigmoid() * F.softplus(self.lin_s(z))

    def update(self, aggr_out, x):
        return aggr_out + x


class TAGConv(gnnc.MessagePassing):
    """PyG's ``TAGConv``: ``sum_k lin_k(A^k x)``, k = 0..K, A the graph
    GCN-normalised without self-loops."""

    def __init__(self, in_channels, out_channels, K=3, bias=True):
        super().__init__("sum")
        self.K = K
        self.lins = torch.nn.ModuleList([Linear(in_channels, out_channels, bias=False)
                                         for _ in range(K + 1)])
        self.bias = Parameter(torch.zeros(out_channels)) if bias else None

    def forward(self, x, edge_index):
        _, dinv, _ = _gcn_norm(x, edge_index, self_loops=False)
        out = self.lins[0](x)
        for lin in self.lins[1:]:
            x = self.propagate(edge_index, x=x, norm=dinv)
            out = out + lin(x)
        return out if self.bias is None else out + self.bias

    def message(self, x_j, norm_i, norm_j):
        return norm_i * norm_j * x_j

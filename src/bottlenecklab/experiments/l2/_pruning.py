"""The measurement of `l2/one-dim-pruning` (paper 004, Prop 15, App D.2) and the
quantities it writes, declared once: a trained 1-D shallow net before and after the
pruning rule (`measure._sparsity.prune_fcnn_one_dim`), its neuron counts, output change and norms.

    PRUNING(model, data, cfg)  # -> Measurement with tables `curve` and `kinks`
"""

from __future__ import annotations

import math
from typing import Any

import torch

from bottlenecklab import measure as M
from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.measure import GRAD_NORM, LOSS, N_TRAIN, TRAIN_COST, Quantity
from bottlenecklab.measure._sparsity import merge_neurons, prune_fcnn_one_dim

__all__ = [
    "ALIVE_BEFORE",
    "MERGED_COUNT",
    "NEURONS_AFTER",
    "NEURONS_BEFORE",
    "NORM_AFTER",
    "NORM_BEFORE",
    "OUTPUT_CHANGE",
    "PRUNING",
    "pruning_measurement",
]


def pruning_measurement(model: torch.nn.Module, data: Any, cfg: Any) -> Measurement:
    """Prune (float64 copy) and compare outputs, norms and neuron counts; tables `curve`
    (`{"x", "before", "after"}` on the test grid) and `kinks` (pruned neurons' `{"kink",
    "a"}`).

    Args:
        model: a depth-2 ReLU `FCNN` on 1-D inputs; data: its `N` training points and the
            test grid; cfg: the experiment's config (`train.lam`).
    """
    x = torch.as_tensor(data.x_train, dtype=torch.float64)
    y = torch.as_tensor(data.y_train, dtype=torch.float64)
    net = M.float64_copy(model)
    pruned = prune_fcnn_one_dim(net, x)
    with torch.no_grad():
        pre = net.forward_path(x)[0][0]
        a = net.weights[1][0]
        alive = int(((pre > 0).any(dim=0) & (a != 0)).sum())
        change = float((pruned(x) - net(x)).abs().max())
        norm0, norm1 = float(net.param_norm_sq()), float(pruned.param_norm_sq())
        cost = float((net(x) - y).pow(2).sum() / x.shape[0])
    _, merged = merge_neurons(net, x)
    xt = torch.as_tensor(data.x_test, dtype=torch.float64)
    with torch.no_grad():
        f0, f1 = net(xt)[:, 0], pruned(xt)[:, 0]
        c, b, a1 = (
            t.detach() for t in (pruned.weights[0][:, 0], pruned.biases[0], pruned.weights[1][0])
        )
    curve = [
        {"x": float(u), "before": float(p), "after": float(q)} for u, p, q in zip(xt[:, 0], f0, f1)
    ]
    beta = net.cfg.bias_scale
    kinks = [
        {"kink": float(-beta * bb / cc) if cc != 0 else math.nan, "a": float(aa)}
        for cc, bb, aa in zip(c, b, a1)
    ]
    scalars = {
        N_TRAIN.name: M.train_size(data),
        NEURONS_BEFORE.name: float(net.weights[0].shape[0]),
        ALIVE_BEFORE.name: float(alive),
        NEURONS_AFTER.name: float(pruned.weights[0].shape[0]),
        MERGED_COUNT.name: float(merged[0]),
        OUTPUT_CHANGE.name: change,
        NORM_BEFORE.name: norm0,
        NORM_AFTER.name: norm1,
        TRAIN_COST.name: cost,
        LOSS.name: cost + cfg.train.lam * norm0,
        GRAD_NORM.name: M.gradient_norm(net, x, y, cfg.train.lam),
    }
    return Measurement(scalars=scalars, tables={"curve": curve, "kinks": kinks})


_NET = "a trained depth-2 ReLU net on N points of a 1-D regression (float64 copy)"
_PRUNED = "that net after `prune_one_dim` (paper 004, Prop 15)"


def _count(name: str, doc: str, over: str) -> Quantity:
    return Quantity(name, doc, function=pruning_measurement, over=over, units="count")


NEURONS_BEFORE = _count("neurons_before", "n_1, the hidden width before pruning", _NET)
ALIVE_BEFORE = _count(
    "alive_before",
    "neurons active on some training point with a non-zero outgoing weight, before pruning",
    _NET,
)
MERGED_COUNT = _count(
    "merged_count",
    "the hidden neurons `merge_neurons` keeps (dead ones dropped, positively proportional "
    "ones merged; paper 004, §4)",
    _NET,
)
NEURONS_AFTER = _count(
    "neurons_after", "neurons left by the pruning rule (paper 004, Prop 15: <= 2 (2N - 1))", _PRUNED
)
OUTPUT_CHANGE = Quantity(
    "output_change",
    "largest |f_pruned(x_i) - f(x_i)| over the training points (paper 004, App D.2: 0)",
    function=pruning_measurement,
    over=_PRUNED + ", the training points",
    units="the outputs' units",
)
NORM_BEFORE = Quantity(
    "norm_before",
    "||theta||^2 before pruning",
    function=pruning_measurement,
    over=_NET,
    units="squared parameter units",
)
NORM_AFTER = Quantity(
    "norm_after",
    "||theta||^2 after pruning (paper 004, App D.2: not larger)",
    function=pruning_measurement,
    over=_PRUNED,
    units="squared parameter units",
)
PRUNING = Measure(
    pruning_measurement,
    (
        N_TRAIN,
        NEURONS_BEFORE,
        ALIVE_BEFORE,
        NEURONS_AFTER,
        OUTPUT_CHANGE,
        NORM_BEFORE,
        NORM_AFTER,
        TRAIN_COST,
        MERGED_COUNT,
        LOSS,
        GRAD_NORM,
    ),
)

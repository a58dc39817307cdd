"""The measurement of `l2/bipartite-sparsity` (paper 004, Prop 13-14, Remark 23) and the
quantities it writes, declared once: the loss in units of `lam`, the merged neuron count,
the cross pairs the merged directions cover, `Rank K_1` (`KERNEL_RANK_RULE`), and Remark
23's width-`N` construction checked at fixed weights.

    BIPARTITE(model, data, cfg)  # -> Measurement with every quantity of BIPARTITE
"""

from __future__ import annotations

from typing import Any

import torch

from bottlenecklab import measure as M
from bottlenecklab import theory
from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.experiments.l2._common import WIDTH, hidden_width
from bottlenecklab.measure import GRAD_NORM, NORM_SQ, TRAIN_COST, Quantity
from bottlenecklab.measure._sparsity import KERNEL_RANK_RULE, bipartite_pattern, kernel_rank

__all__ = [
    "BIPARTITE",
    "LOSS_OVER_LAM",
    "NEURONS",
    "PAIRS_COVERED",
    "RANK_K1",
    "REMARK23_FIT_ERROR",
    "REMARK23_NORM",
    "WIDE_OPTIMUM",
    "bipartite_measurement",
]


def bipartite_measurement(model: torch.nn.Module, data: Any, cfg: Any) -> Measurement:
    """Loss, norm, neuron counts and pattern of one trained net (float64 copy); the Remark
    23 check.

    Args:
        model: a depth-2 bias-free `FCNN`; data: `X = I_N`, `Y = B_N`.
        cfg: the experiment's config (`train.lam`, `task.N`, `pair_cos`).
    """
    X = torch.as_tensor(data.x_train, dtype=torch.float64)
    Y = torch.as_tensor(data.y_train, dtype=torch.float64)
    lam = cfg.train.lam
    net = M.float64_copy(model)
    with torch.no_grad():
        cost = float((net(X) - Y).pow(2).sum() / X.shape[0])
        norm = float(net.param_norm_sq())
        S = net.act(net.forward_path(X)[0][0])
    pattern = bipartite_pattern(net, X, cfg.pair_cos)
    N = cfg.task.N
    W1, W2 = theory.bipartite_full_width_weights(N)
    fit = float((torch.relu(X @ W1.T) @ W2.T - theory.bipartite_target(N)).abs().max())
    scalars = {
        WIDTH.name: hidden_width(net),
        LOSS_OVER_LAM.name: (cost + lam * norm) / lam,
        NORM_SQ.name: norm,
        TRAIN_COST.name: cost,
        NEURONS.name: pattern[NEURONS.name],
        RANK_K1.name: float(kernel_rank(S)),
        PAIRS_COVERED.name: pattern[PAIRS_COVERED.name],
        GRAD_NORM.name: M.gradient_norm(net, X, Y, lam),
        WIDE_OPTIMUM.name: theory.bipartite_wide_optimum(N, lam)[0],
        REMARK23_FIT_ERROR.name: fit,
        REMARK23_NORM.name: float(W1.pow(2).sum() + W2.pow(2).sum()),
    }
    return Measurement(scalars=scalars)


_NET = "a trained depth-2 net on the bipartite task X = I_N, Y = B_N (float64 copy)"
LOSS_OVER_LAM = Quantity(
    "loss_over_lam",
    "(C_train + lam ||theta||^2) / lam, the loss in units of lam (paper 004, Prop 13)",
    function=bipartite_measurement,
    over=_NET,
    units="squared parameter units",
)
NEURONS = Quantity(
    "neurons",
    "the first layer's neurons after merging positively proportional ones (paper 004, §4)",
    function=bipartite_measurement,
    over=_NET,
    units="count",
)
PAIRS_COVERED = Quantity(
    "pairs_covered",
    "cross pairs (e_i + e_j)/sqrt 2 matched by a merged incoming direction (paper 004, "
    "Prop 13: N^2/4 at the optimum)",
    function=bipartite_measurement,
    over=_NET,
    units="count",
)
RANK_K1 = Quantity(
    "rank_K1",
    "Rank K_1 of the hidden representation's kernel (paper 004, Lemma 10), reported",
    function=bipartite_measurement,
    over=_NET + ", the hidden layer",
    units="rank",
    rule=KERNEL_RANK_RULE,
)
WIDE_OPTIMUM = Quantity(
    "wide_optimum",
    "the wide optimum's loss / lam, N^2 - lam N (N - 1) (paper 004, Prop 13, derived)",
    function=bipartite_measurement,
    over="the task's N and lam (no network)",
    units="squared parameter units",
)
REMARK23_FIT_ERROR = Quantity(
    "remark23_fit_error",
    "largest |f(X) - B_N| of Remark 23's width-N net W_1 = sqrt(N/2) I, W_2 = sqrt(2/N) B_N",
    function=bipartite_measurement,
    over="the closed-form construction (no training)",
    units="the outputs' units",
)
REMARK23_NORM = Quantity(
    "remark23_norm",
    "||theta||^2 of Remark 23's width-N net (paper 004: N^2 + N)",
    function=bipartite_measurement,
    over="the closed-form construction (no training)",
    units="squared parameter units",
)
QUANTITIES = (WIDTH, LOSS_OVER_LAM, NORM_SQ, TRAIN_COST, NEURONS, RANK_K1, PAIRS_COVERED, GRAD_NORM)
BIPARTITE = Measure(
    bipartite_measurement, (*QUANTITIES, WIDE_OPTIMUM, REMARK23_FIT_ERROR, REMARK23_NORM)
)

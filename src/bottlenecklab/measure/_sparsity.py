"""Neuron counts of trained fully-connected networks (paper 004, §4): merging of
proportional neurons, Prop 15's 1-D pruning and the bipartite pattern of Prop 13."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from bottlenecklab import theory
from bottlenecklab.measure._coi import as_float64
from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.measure._rank_rule import RankRule, precision_of
from bottlenecklab.models import FCNN

__all__ = [
    "KERNEL_RANK_RULE",
    "best_per_width",
    "bipartite_pattern",
    "kernel_rank",
    "merge_chain",
    "merge_neurons",
    "plateau_start",
    "prune_fcnn_one_dim",
]


def _rebuild(net: FCNN, weights: list[torch.Tensor], biases: list[torch.Tensor]) -> FCNN:
    """`net` with new (possibly narrower) parameters; hidden widths may then differ, so the
    config's `width` keeps the original (the forward pass reads the parameter shapes)."""
    out = float64_copy(net)
    out.weights = torch.nn.ParameterList([torch.nn.Parameter(w.clone()) for w in weights])
    out.biases = torch.nn.ParameterList([torch.nn.Parameter(b.clone()) for b in biases])
    return out


def merge_neurons(
    model: Any, X: Any, cosine: float = theory.MERGE_COSINE
) -> tuple[FCNN, list[int]]:
    """Drop dead neurons and merge positively proportional ones, hidden layer by layer
    (`theory.merge_layer`, spec Decision: merging; paper 004, §4), on a float64 copy.

    The merged network has the same outputs on `X` up to the proportionality error and
    `||theta||^2` not larger; its width per hidden layer is the count of distinct neurons
    (an upper bound on `Rank_sigma`).

    Args:
        model: an `FCNN` with a positively homogeneous activation
        X: `[N, d_in]`.
    Returns:
        `(merged FCNN, [n_1, ..., n_{L-1}] neurons kept per hidden layer)`.
    """
    net = float64_copy(model)
    weights, biases, counts = merge_chain(
        list(net.weights), list(net.biases), as_float64(X), net.act, net.cfg.bias_scale, cosine
    )
    return _rebuild(net, weights, biases), counts


def merge_chain(
    weights: list[torch.Tensor],
    biases: list[torch.Tensor],
    X: torch.Tensor,
    act: Callable[[torch.Tensor], torch.Tensor],
    bias_scale: float = 1.0,
    cosine: float = theory.MERGE_COSINE,
) -> tuple[list[torch.Tensor], list[torch.Tensor], list[int]]:
    """`merge_neurons` on a chain of affine layers `a~_l = a_{l-1} W_l^T + beta b_l`,
    `a_l = act(a~_l)` (any network of that shape: an `FCNN`, an `nn.Sequential` of
    `Linear` and a positively homogeneous activation), in the dtype of `X`.

    Args:
        weights: `W_l` `[n_l, n_{l-1}]`; biases: `b_l` `[n_l]`; X: `[N, d_in]`;
        act: the activation; bias_scale: `beta`; cosine: the merge threshold.
    Returns:
        `(weights, biases, [n_1, ..., n_{L-1}] neurons kept per hidden layer)`.
    """
    weights = [w.detach().clone() for w in weights]
    biases = [b.detach().clone() for b in biases]
    counts = []
    with torch.no_grad():
        for l in range(len(weights) - 1):
            a = X
            for W, b in zip(weights[: l + 1], biases[: l + 1]):
                z = torch.addmm(bias_scale * b, a, W.T)  # [N, n]
                a = act(z)
            dead = (a == 0).all(dim=0)
            W_in = torch.cat([weights[l], biases[l][:, None]], dim=1)
            w, v, _ = theory.merge_layer(W_in, weights[l + 1], z, dead, cosine)
            weights[l], biases[l] = w[:, :-1], w[:, -1]
            weights[l + 1] = v
            counts.append(int(w.shape[0]))
    return weights, biases, counts


def prune_fcnn_one_dim(model: Any, x: Any) -> FCNN:
    """Prop 15's pruning of a depth-2 ReLU FCNN on 1-D inputs (`theory.prune_one_dim`;
    paper 004, App D.2; spec rule), on a float64 copy.

    Args:
        model: an `FCNN` with `depth = 2`, `d_in = d_out = 1`, ReLU
        x: inputs `[N, 1]`.
    Returns:
        The pruned network: same outputs on `x`, `||theta||^2` not larger, `<= 4N` neurons.
    """
    net = float64_copy(model)
    if net.depth != 2 or net.weights[0].shape[1] != 1 or net.weights[1].shape[0] != 1:
        raise ValueError("prune_fcnn_one_dim needs a depth-2 FCNN with d_in = d_out = 1")
    if net.cfg.activation != "leaky_relu" or net.cfg.slope != 0.0:
        raise ValueError("prune_fcnn_one_dim needs ReLU (slope 0)")
    with torch.no_grad():
        a, c, b = net.weights[1][0], net.weights[0][:, 0], net.biases[0]
        a2, c2, b2 = theory.prune_one_dim(a, c, b, as_float64(x).reshape(-1), net.cfg.bias_scale)
        return _rebuild(net, [c2[:, None], a2[None, :]], [b2, net.biases[1].detach().clone()])


def bipartite_pattern(model: Any, X: Any, cos: float = 0.99) -> dict[str, float]:
    """The merged first-layer incoming directions of a depth-2 net on the bipartite task
    against the cross pairs `(e_i + e_j)/sqrt 2` (paper 004, Prop 13; `X = I_N`, `beta = 0`).

    Args:
        model: a depth-2 `FCNN`
        X: `[N, N]` (the identity)
        cos: the match threshold.
    Returns:
        `neurons` (merged count), `matched` (neurons with cosine `> cos` to some pair),
        `pairs_covered` (of the `N^2/4` pairs, those matched by some neuron), `pairs`.
    """
    merged, counts = merge_neurons(model, X)
    W = merged.weights[0].detach()  # [k, N]
    N = W.shape[1]
    dirs = theory.pair_directions(N)  # [N^2/4, N]
    unit = W / W.norm(dim=1, keepdim=True).clamp_min(1e-300)
    sims = unit @ dirs.T  # [k, N^2/4]
    hit = sims > cos
    return {
        "neurons": float(counts[0]),
        "matched": float(hit.any(dim=1).sum()),
        "pairs_covered": float(hit.any(dim=0).sum()),
        "pairs": float(dirs.shape[0]),
    }


# `Rank K` of a hidden representation's kernel `K = Z Z^T` (paper 004, Lemma 10: `Rank K <=
# Rank_sigma`), reported beside the neuron counts: `s_k(K) > 1e-6 s_1(K)`, i.e. `s_k(Z) > 1e-3
# s_1(Z)`, the cutoff the l2 experiments have always reported (no source states one).
KERNEL_RANK_RULE = RankRule.relative(1e-6)


def kernel_rank(Z: torch.Tensor, rule: RankRule = KERNEL_RANK_RULE) -> int:
    """`Rank K` of the kernel `K = Z Z^T` of a representation, its singular values counted
    by `rule` (`KERNEL_RANK_RULE`; above the round-off floor of `Z`'s precision).

    Args:
        Z: `[N, w]` (rows: data points).
    """
    Z = Z.detach()
    K = Z @ Z.T
    return rule.read(torch.linalg.svdvals(K), (K.shape[0], K.shape[1]), precision_of(Z)).rank


def best_per_width(rows: list[dict[str, float]], key: str) -> tuple[list[float], list[float]]:
    """`(widths, best)`: the sorted widths and the smallest `row[key]` over the rows (seeds,
    restarts) of each width; rows with a non-finite value are skipped.

    Args:
        rows: dicts with `"width"` and `key`.
    """
    best: dict[float, float] = {}
    for r in rows:
        v = float(r[key])
        if math.isfinite(v):
            w = float(r["width"])
            best[w] = min(best.get(w, math.inf), v)
    widths = sorted(best)
    return widths, [best[w] for w in widths]


def plateau_start(widths: list[float], best: list[float], tol: float) -> float:
    """The first width whose best loss is `<= (1 + tol) min` over the sweep (spec
    `l2-sparsity.md`, Sparsity: the plateau of Prop 6-7, Cor 9); `nan` for no widths.

    Args:
        widths: increasing widths
        best: their best losses (positive).
    """
    if not best:
        return math.nan
    floor = min(best)
    return next(w for w, b in zip(widths, best) if b <= (1 + tol) * floor)

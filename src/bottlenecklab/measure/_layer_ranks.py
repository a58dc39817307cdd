"""Layer spectra of a fully-connected network: weight ranks, the middle rank (paper 001,
Fig 1) and the representation bottleneck of Cor 8."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.measure._jacobian import input_jacobians, jacobian_singular_values, log_top_k
from bottlenecklab.measure._ntk import ntk_trace
from bottlenecklab.measure._quantity import Quantity
from bottlenecklab.measure._rank_rule import RankRule
from bottlenecklab.theory import representation_bottleneck_bound

__all__ = [
    "CENTRED_REL",
    "COR8",
    "COR8_BOUND",
    "COR8_MIDDLE_MAX",
    "COR8_MIDDLE_MEDIAN",
    "COR8_MIDDLE_MEDIAN_INIT",
    "COR8_MIDDLE_MEDIAN_RANDOM",
    "COR8_RANDOM_BELOW",
    "DEPTH",
    "MIDDLE_AFFINE_RANK",
    "MIDDLE_RANK",
    "NORM_SQ",
    "OFF_RANK_LAYERS",
    "RANK_FLOOR",
    "affine_profile",
    "centred_rank",
    "centred_singular_values",
    "cor8_summary",
    "layer_ranks",
    "layer_s_next",
    "middle_affine_rank",
    "middle_layer",
    "middle_median",
    "middle_rank",
    "random_middle_medians",
    "rank_summary",
    "representation_bottleneck",
]

RANK_FLOOR = 0.1  # singular values of W_l above 0.1 (paper 001, Fig 1)
CENTRED_REL = 0.2  # affine dimension: centred singular values above 0.2 s_1 (spec Decision)


def middle_layer(depth: int) -> int:
    """`ceil(L/2)`, the 1-based index of the middle weight matrix (spec **Decision**)."""
    return math.ceil(depth / 2)


def layer_ranks(model: Any, floor: float = RANK_FLOOR) -> list[int]:
    """`r_l`: singular values of `W_l` above `floor`, `l = 1..L` (`weight_quantities`'s
    `W_rank`).

    Args:
        model: an `FCNN`, or its weight matrices `[W_1, ..., W_L]` (any network's).
    """
    weights = model.weights if hasattr(model, "weights") else model
    return [_weight_rank(W, floor) for W in weights]


def _weight_rank(W: torch.Tensor, floor: float) -> int:
    """`#(s_i(W) > floor)` by the paper rule (`WEIGHT_RANK_RULE` at `floor`)."""
    rule = dataclasses.replace(WEIGHT_RANK_RULE, cutoff=floor)
    W = W.detach().double()
    return rule.read(torch.linalg.svdvals(W), tuple(W.shape)).rank


def middle_rank(model: Any, floor: float = RANK_FLOOR) -> int:
    """Singular values of `W_{ceil(L/2)}` above `floor` (paper 001, Fig 1)."""
    return _weight_rank(model.weights[middle_layer(model.depth) - 1], floor)


def rank_summary(model: Any, floor: float = RANK_FLOOR) -> dict[str, float]:
    """An FCNN's depth, `||theta||^2`, middle rank and off-rank layer count (paper 001,
    Fig 1: `||theta||^2 ~ k L + R1`, only the middle grows).

    Returns:
        `depth` (`L`), `norm_sq` (`||theta||^2`, float64), `middle_rank` (`middle_rank`),
        `off_rank_layers` (layers whose `r_l` (`layer_ranks`) differs from it).
    """
    ranks, mid = layer_ranks(model, floor), middle_rank(model, floor)
    return {
        "depth": float(model.depth),
        "norm_sq": float(model.param_norm_sq().detach().double()),
        "middle_rank": float(mid),
        "off_rank_layers": float(sum(r != mid for r in ranks)),
    }


def centred_singular_values(A: torch.Tensor) -> torch.Tensor:
    """Singular values `[min(N, w)]` (descending, float64) of a representation `A` `[N, w]`
    with its mean row removed: the spread of the points about their mean."""
    A = torch.as_tensor(A).detach().double()
    return torch.linalg.svdvals(A - A.mean(dim=0, keepdim=True))


def centred_rank(A: torch.Tensor, rel: float = CENTRED_REL) -> int:
    """Affine dimension of the points `A` `[N, w]`: singular values of the centred `A` above
    `rel * s_1` (`rel = 0`: above round-off, `RankRule.exact`) (spec `depth-and-rank.md`,
    **Decision** on `talk/tripoints`; the weight
    rank can exceed it by one: the mean direction of a non-negative representation).
    A representation with every row equal has rank 0."""
    s = centred_singular_values(A)
    shape = tuple(torch.as_tensor(A).shape)
    rule = RankRule.exact() if rel == 0 else dataclasses.replace(AFFINE_RANK_RULE, cutoff=rel)
    return rule.read(s, shape).rank


def middle_affine_rank(model: Any, X: torch.Tensor | np.ndarray, rel: float = CENTRED_REL) -> int:
    """Affine dimension (`centred_rank`) of the middle representation: the centred
    pre-activations `a~_(ceil(L/2))(X)` of a float64 copy of the `FCNN`; `X` `[N, d_in]`."""
    net = float64_copy(model)
    with torch.no_grad():
        pre = net.forward_path(torch.as_tensor(X, dtype=torch.float64))[0]
    return centred_rank(pre[middle_layer(net.depth) - 1], rel)


def layer_s_next(model: Any, X: torch.Tensor | np.ndarray, k: int) -> np.ndarray:
    """`s_(k+1)(a~_l(X) / sqrt N)` for `l = 1..L` (`[L]`, 0 where a layer has `<= k`
    neurons; paper 001, Cor 8), on a float64 copy of the `FCNN`; `X` `[N, d_in]`."""
    net = float64_copy(model)
    X64 = torch.as_tensor(X, dtype=torch.float64)
    with torch.no_grad():
        pre = net.forward_path(X64)[0]
    out = []
    for z in pre:
        s = torch.linalg.svdvals(z / math.sqrt(X64.shape[0]))
        out.append(float(s[k]) if s.numel() > k else 0.0)
    return np.array(out)


def middle_median(values: np.ndarray, p: float) -> float:
    """Median of `values[l - 1]` (`[L]`, e.g. `layer_s_next`) over the middle layers
    `p <= l/L <= 1 - p` (paper 001, Cor 8's window); nan when no layer is in it."""
    L = len(values)
    l = np.arange(1, L + 1)
    mid = (l / L >= p) & (l / L <= 1 - p)
    return float(np.median(values[mid])) if mid.any() else math.nan


def representation_bottleneck(
    model: Any, X: torch.Tensor | np.ndarray, k: int, p: float = 0.25
) -> dict[str, Any]:
    """`s_{k+1}(a~_l(X) / sqrt N)` per layer against the bound of paper 001, Cor 8.

    `x` is the training point maximizing `|Jf(x)|_(k)`; `c = Tr Theta(X, X) / (N L)`
    (`ntk_trace`); the bound holds on at least `(1 - 2p) L` layers for balanced
    parameters (App. B, Cor 17; spec **Decision**).

    Args:
        model: an `FCNN`
        X: training inputs `[N, d_in]`
        k: the rank
        p: the fraction.
    Returns:
        `{"s_next": [L] (l = 1..L), "bound": float, "layers_below": int,
        "required": float ((1 - 2p) L), "ntk_scale": float}`.
    """
    net = float64_copy(model)
    X64 = torch.as_tensor(X, dtype=torch.float64)
    N, L = X64.shape[0], net.depth
    logs = log_top_k(jacobian_singular_values(input_jacobians(net, X64)), k)  # [N]
    c = float(ntk_trace(net, X64).sum()) / (N * L)
    bound = representation_bottleneck_bound(
        float(net.param_norm_sq().detach()), L, k, c, float(logs.max()), float(logs.min()), p
    )
    with torch.no_grad():
        pre, _ = net.forward_path(X64)
    s_next = []
    for z in pre:
        s = torch.linalg.svdvals(z / math.sqrt(N))
        s_next.append(float(s[k]) if s.numel() > k else 0.0)
    s_next = np.array(s_next)
    below = int(np.sum(s_next <= bound)) if math.isfinite(bound) else 0
    return {
        "s_next": s_next,
        "bound": bound,
        "layers_below": below,
        "required": (1 - 2 * p) * L,
        "ntk_scale": c,
    }


def affine_profile(
    model: Any, X: torch.Tensor | np.ndarray, rel: float = CENTRED_REL
) -> list[dict[str, float]]:
    """Per hidden layer `l = 1..L-1`, the centred `s_2 / s_1` of the pre-activations
    `a~_l(X)` (0 with fewer than two singular values or `s_1 = 0`) and their affine
    dimension (`centred_rank` at `rel`; spec `depth-and-rank.md`, **Decision** on
    `talk/tripoints`). `X` `[N, d_in]` is cast to the model's dtype.

    Returns:
        One row `{"layer", "affine_ratio", "affine_rank"}` per hidden layer.
    """
    X = torch.as_tensor(X, dtype=next(model.parameters()).dtype)
    with torch.no_grad():
        pre, _ = model.forward_path(X)  # [a~_1 .. a~_L], each [N, n_l]
    rows = []
    for l, z in enumerate(pre[:-1], start=1):
        s = centred_singular_values(z)
        ratio = float(s[1] / s[0]) if s.numel() > 1 and s[0] > 0 else 0.0
        rows.append({"layer": l, "affine_ratio": ratio, "affine_rank": centred_rank(z, rel)})
    return rows


def random_middle_medians(
    build: Callable[[int], Any], seeds: list[int], X: torch.Tensor | np.ndarray, k: int, p: float
) -> tuple[np.ndarray, list[float]]:
    """Cor 8's statistic on untrained networks (paper 001, Cor 8): `layer_s_next` of the
    network `build(seeds[0])` (e.g. a trained net's own initialization) and the
    `middle_median` of `layer_s_next` for every seed's network.

    Args:
        build: seed -> a fresh `FCNN`; seeds: the draws; X: inputs `[N, d_in]`;
        k: the rank; p: the middle window's fraction.
    Returns:
        `s_next` `[L]` of the first draw and one middle median per seed.
    """
    s = [layer_s_next(build(seed), X, k) for seed in seeds]
    return s[0], [middle_median(v, p) for v in s]


def cor8_summary(cor8: dict[str, Any], random_medians: list[float], p: float) -> dict[str, float]:
    """Paper 001, Cor 8 read on a trained net (`representation_bottleneck`'s `cor8`) beside
    untrained ones (`random_middle_medians`' medians, its own initialization first): the
    bound, the layers below it and how many are required, the middle median of
    `s_(k+1)` (trained, its init, the smallest and the median untrained, how many
    untrained lie below the trained) and the largest middle `s_(k+1)` (`p <= l/L <= 1-p`)."""
    s = cor8["s_next"]  # [L]
    L = len(s)
    l = np.arange(1, L + 1)
    mid = (l / L >= p) & (l / L <= 1 - p)
    trained = middle_median(s, p)
    return {
        "cor8_bound": cor8["bound"],
        "cor8_layers_below": float(cor8["layers_below"]),
        "cor8_required": cor8["required"],
        "cor8_middle_median": trained,
        "cor8_middle_median_init": random_medians[0],
        "cor8_middle_median_random_min": float(np.min(random_medians)),
        "cor8_random_below": float(np.sum(np.array(random_medians) < trained)),
        "cor8_middle_median_random": float(np.median(random_medians)),
        "cor8_middle_max": float(np.max(s[mid])),
    }


# The rules of this module's rank quantities (spec README, "Rank rules"; docs/analyse.md).
WEIGHT_RANK_RULE = RankRule.paper(RANK_FLOOR, "paper 001, Fig 1", absolute=True)
AFFINE_RANK_RULE = RankRule.relative(CENTRED_REL)  # spec depth-and-rank.md, Decision
_FCNN = "the weight matrices of a trained FCNN"
DEPTH = Quantity(
    "depth", "the number of layers L", function=rank_summary, over=_FCNN, units="count"
)
NORM_SQ = Quantity(
    "norm_sq",
    "||theta||^2, the squared parameter norm (paper 001, Fig 1: ~ k L + R1)",
    function=rank_summary,
    over=_FCNN + " (float64)",
    units="squared parameter units",
)
MIDDLE_RANK = Quantity(
    "middle_rank",
    "the rank of the middle weight matrix W_ceil(L/2) (paper 001, Fig 1)",
    function=rank_summary,
    over=_FCNN + ", the middle one",
    units="rank",
    rule=WEIGHT_RANK_RULE,
)
OFF_RANK_LAYERS = Quantity(
    "off_rank_layers",
    "the number of layers whose weight rank r_l differs from the middle rank (paper 001, "
    "Fig 1: only the middle grows)",
    function=rank_summary,
    over=_FCNN,
    units="count",
    rule=WEIGHT_RANK_RULE,
)

_COR8 = "the middle layers p <= l/L <= 1 - p of an FCNN's pre-activations a~_l(X) / sqrt N"
COR8_BOUND = Quantity(
    "cor8_bound",
    "Cor 8's bound on s_(k+1)(a~_l / sqrt N) (paper 001, App. B Cor 17)",
    function=cor8_summary,
    over="a trained FCNN on its training inputs",
    units="representation singular value",
)
COR8_MIDDLE_MEDIAN = Quantity(
    "cor8_middle_median",
    "median over the middle layers of s_(k+1)(a~_l / sqrt N) (paper 001, Cor 8)",
    function=cor8_summary,
    over=_COR8 + ", trained",
    units="representation singular value",
)
COR8_MIDDLE_MEDIAN_INIT = Quantity(
    "cor8_middle_median_init",
    "the same median on the trained net's own initialization",
    function=cor8_summary,
    over=_COR8 + ", at initialization",
    units="representation singular value",
)
COR8_MIDDLE_MEDIAN_RANDOM = Quantity(
    "cor8_middle_median_random",
    "the median of that median over untrained draws of the same init",
    function=cor8_summary,
    over=_COR8 + ", untrained draws",
    units="representation singular value",
)
COR8_MIDDLE_MAX = Quantity(
    "cor8_middle_max",
    "the largest middle s_(k+1)(a~_l / sqrt N) of the trained net",
    function=cor8_summary,
    over=_COR8 + ", trained",
    units="representation singular value",
)
COR8_RANDOM_BELOW = Quantity(
    "cor8_random_below",
    "untrained draws whose middle median lies below the trained net's",
    function=cor8_summary,
    over=_COR8 + ", untrained draws",
    units="count",
)
MIDDLE_AFFINE_RANK = Quantity(
    "middle_affine_rank",
    "affine dimension of the middle representation a~_ceil(L/2)(X) (paper 001, Cor 8)",
    function=middle_affine_rank,
    over="a trained FCNN's centred middle pre-activations on its training inputs",
    units="rank",
    rule=AFFINE_RANK_RULE,  # on centred values; a config may set another rel
)
COR8 = (
    COR8_BOUND,
    COR8_MIDDLE_MEDIAN,
    COR8_MIDDLE_MEDIAN_INIT,
    COR8_MIDDLE_MEDIAN_RANDOM,
    COR8_MIDDLE_MAX,
    COR8_RANDOM_BELOW,
)  # what `cor8_summary` writes (declared)

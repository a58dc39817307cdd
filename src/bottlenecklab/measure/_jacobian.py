"""Jacobians of a fully-connected network: input Jacobians `Jf(x)`, the per-layer
backward Jacobians `J(a~_l -> f)`, and the Jacobian quantities of paper 001 (Thm 3, 15)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.measure._quantity import Quantity
from bottlenecklab.measure._rank_rule import RankRule
from bottlenecklab.models import FCNNConfig
from bottlenecklab.theory import linear_representation_cost, partial_isometry_distance_sq

__all__ = [
    "BOUND_SLACKS",
    "JACOBIAN_RANK_RULE",
    "RANDOM_CHAIN_SLACK",
    "RANDOM_THM15_SLACK",
    "TRAINED_CHAIN_SLACK",
    "TRAINED_THM15_SLACK",
    "chain_slacks",
    "function_jacobians",
    "input_jacobians",
    "jacobian_bounds",
    "jacobian_rank_log_det",
    "jacobian_singular_values",
    "layer_jacobians",
    "log_top_k",
    "random_network_slacks",
    "representation_jacobian_ranks",
    "representation_jacobians",
]

# The Jacobian rank: s_i > 1e-3 s_1 of each Jacobian (spec `depth-and-rank.md`; paper 001
# states no cutoff), one for every layer and sample compared; the probe's `jacobian_rank`
# counts with it too (`jacobian_rank_log_det`).
JACOBIAN_RANK_RULE = RankRule.relative(1e-3)
RANK_REL = JACOBIAN_RANK_RULE.cutoff  # its cutoff, as `jacobian_rank_log_det` applies it


def _activation_slope(model: Any, z: torch.Tensor) -> torch.Tensor:
    """`sigma_a'(z)` elementwise (1 for the identity), as autograd differentiates it."""
    if model.cfg.activation == "identity":
        return torch.ones_like(z)
    return torch.where(z >= 0, torch.ones_like(z), torch.full_like(z, model.cfg.slope))


def layer_jacobians(model: Any, X: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Backward Jacobians `J_l(x) = d f(x) / d a~_l(x)` and the activations `a_{l-1}(x)`.

    Computed by the chain rule from the output (`J_L = I`,
    `J_{l} = J_{l+1} W_{l+1} diag(sigma'(a~_l))`), on the model's own dtype.

    Args:
        model: an `FCNN`
        X: inputs `[N, d_in]`.
    Returns:
        `([J_1, ..., J_L], [a_0 = X, ..., a_{L-1}])` with `J_l` of shape `[N, d_out, n_l]`
        and `a_{l-1}` of shape `[N, n_{l-1}]`.
    """
    with torch.no_grad():
        pre, post = model.forward_path(X)
        N, d_out = X.shape[0], pre[-1].shape[1]
        G = torch.eye(d_out, dtype=X.dtype).expand(N, d_out, d_out)  # J_L = I
        jacs = [G]
        for l in range(model.depth - 1, 0, -1):  # from J_{l+1} to J_l
            G = (G @ model.weights[l]) * _activation_slope(model, pre[l - 1]).unsqueeze(1)
            jacs.append(G)
    return jacs[::-1], post


def representation_jacobians(model: Any, X: torch.Tensor | np.ndarray) -> list[torch.Tensor]:
    """Jacobians `d a~_l(x) / dx` of every pre-activation at every row of `X`, float64.

    Forward chain rule on a float64 copy: `G_1 = W_1`,
    `G_l = W_l diag(sigma'(a~_{l-1})) G_{l-1}` (the slope autograd takes, 1 at `z = 0`).

    Args:
        model: an `FCNN`; X: inputs `[N, d_in]`.
    Returns:
        `[G_1, ..., G_L]`, `G_l` of shape `[N, n_l, d_in]` (`G_L = Jf(x)`).
    """
    net = float64_copy(model)
    X64 = torch.as_tensor(X, dtype=torch.float64)
    with torch.no_grad():
        pre, _ = net.forward_path(X64)
        W1 = net.weights[0].detach()
        G = W1.expand(X64.shape[0], *W1.shape)  # [N, n_1, d_in]
        out = [G]
        for l in range(1, net.depth):
            G = net.weights[l].detach() @ (_activation_slope(net, pre[l - 1]).unsqueeze(-1) * G)
            out.append(G)
    return out


def representation_jacobian_ranks(model: Any, X: torch.Tensor | np.ndarray) -> np.ndarray:
    """Rank of `d a~_l(x) / dx` (`s_i > 1e-3 s_1`, the rule of `jacobian_rank_log_det`,
    paper 001's rank) per layer and input: `[L, N]` integers (row `l - 1`: layer `l`)."""
    ranks = []
    for G in representation_jacobians(model, X):
        s = jacobian_singular_values(G)  # [N, min(n_l, d_in)]
        ranks.append([jacobian_rank_log_det(row)[0] for row in s])
    return np.array(ranks, dtype=int)


def input_jacobians(model: Any, X: torch.Tensor | np.ndarray) -> torch.Tensor:
    """Input Jacobians `Jf(x_i)` of a network at every row of `X`, float64.

    By `torch.func.jacrev` batched with `vmap`, on a float64 copy of the model.

    Args:
        model: any network mapping `[N, d_in] -> [N, d_out]`
        X: `[N, d_in]`.
    Returns:
        `[N, d_out, d_in]`.
    """
    net = float64_copy(model)
    X64 = torch.as_tensor(X, dtype=torch.float64)
    params = {k: v.detach() for k, v in net.named_parameters()}

    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.func.functional_call(net, params, (x,))

    return function_jacobians(f, X64)


def function_jacobians(f: Any, X: torch.Tensor) -> torch.Tensor:
    """Jacobians `df(x_i)/dx_i` of a batched function `f: [b, d_in] -> [b, d_out]` at every
    row of `X`, by `torch.func.jacrev` batched with `vmap`, in the dtype of `X`.

    Args:
        f: a function of a batch of rows (one row at a time here); X: `[N, d_in]`.
    Returns:
        `[N, d_out, d_in]`.
    """

    def one(x: torch.Tensor) -> torch.Tensor:
        return f(x.unsqueeze(0)).reshape(-1)

    return torch.func.vmap(torch.func.jacrev(one))(X)


def jacobian_rank_log_det(s: np.ndarray) -> tuple[int, float]:
    """`(rank, log|J|_+)` of one Jacobian from its singular values `s` (descending): the rank
    counts `s_i > 1e-3 s_1` (spec `depth-and-rank.md`), `log|J|_+` sums their logs."""
    rank = int(np.sum(s > RANK_REL * s[0])) if s.size and s[0] > 0 else 0
    return rank, float(np.log(s[:rank]).sum())


def jacobian_singular_values(J: torch.Tensor) -> np.ndarray:
    """Singular values of a batch of Jacobians, largest first, `[N, min(d_out, d_in)]`."""
    return torch.linalg.svdvals(J.to(torch.float64)).numpy()


def log_top_k(s: np.ndarray, k: int) -> np.ndarray:
    """`log |J|_(k) = sum_{i<=k} log s_i(J)` per row of singular values `s` `[N, m]`."""
    with np.errstate(divide="ignore"):
        return np.log(s[:, :k]).sum(axis=1)


def jacobian_bounds(model: Any, X: torch.Tensor | np.ndarray) -> list[dict[str, float]]:
    """Jacobian chain (paper 001, proof of Thm 3) and Thm 15 at every row of `X`.

    Per point: `norm_sq` (`||theta||^2`), `schatten` (`L ||Jf(x)||_{2/L}^{2/L}`, the deep
    linear cost of `Jf(x)`), `rank` (`s_i > 1e-3 s_1`), `log_det` (`log|Jf(x)|_+` over the
    same singular values), `rank_bound` (`L rank + 2 log_det`), and the smallest Thm 15
    slack over `k = 1..rank`: `thm15_slack = min_k [||theta||^2 - k L - 2 log|J|_(k) -
    sum_l (d_k(W_l)^2 + ||b_l||^2)]` (`>= 0` by the theorem) with its `k`.

    Args:
        model: an `FCNN`
        X: `[N, d_in]`.
    Returns:
        One dict per row of `X`.
    """
    net = float64_copy(model)
    L = net.depth
    norm_sq = float(net.param_norm_sq().detach())
    Ws = [W.detach() for W in net.weights]
    b_sq = [float(b.detach().pow(2).sum()) for b in net.biases]
    J = input_jacobians(net, X)
    S = jacobian_singular_values(J)
    d_cache: dict[int, float] = {}

    def weight_term(k: int) -> float:
        if k not in d_cache:
            d_cache[k] = sum(partial_isometry_distance_sq(W, k) + b2 for W, b2 in zip(Ws, b_sq))
        return d_cache[k]

    rows = []
    for i in range(S.shape[0]):
        s = S[i]
        rank, log_det = jacobian_rank_log_det(s)
        slack, arg = math.inf, 0
        for k in range(1, rank + 1):
            value = norm_sq - k * L - 2.0 * float(np.log(s[:k]).sum()) - weight_term(k)
            if value < slack:
                slack, arg = value, k
        rows.append(
            {
                "point": float(i),
                "norm_sq": norm_sq,
                "schatten": linear_representation_cost(J[i], L),
                "rank": float(rank),
                "log_det": log_det,
                "rank_bound": L * rank + 2.0 * log_det,
                "thm15_slack": slack if rank else float("nan"),
                "thm15_k": float(arg),
            }
        )
    return rows


def chain_slacks(rows: list[dict[str, float]]) -> tuple[float, float]:
    """Smallest slack of the Jacobian chain and of Thm 15 over `jacobian_bounds` rows
    (paper 001, proof of Thm 3 and Thm 15): both are `>= 0` when the bounds hold."""
    chain = min(min(r["norm_sq"] - r["schatten"], r["schatten"] - r["rank_bound"]) for r in rows)
    thm15 = min((r["thm15_slack"] for r in rows if r["rank"] > 0), default=math.inf)
    return chain, thm15


def random_network_slacks(
    n: int,
    *,
    depths: tuple[int, int],
    slopes: tuple[float, ...],
    betas: tuple[float, ...],
    init_scales: tuple[float, ...],
    width: int,
    dim: int,
    n_points: int,
    seed: int | list[int],
) -> tuple[float, float]:
    """`chain_slacks` over `n` random FCNNs (float64) at `n_points` Gaussian inputs each.

    Each network draws its depth in `depths` (inclusive), its slope `a`, bias scale `beta`
    and init scale from the given choices, and N(0, 0.5^2) biases, so that the bounds are
    checked away from the trained regime too.

    Args:
        n: networks
        width: hidden width
        dim: input and output dimension
        seed: seeds a numpy generator (an int or a list of ints).
    """
    rng = np.random.default_rng(seed)
    chain, thm15 = math.inf, math.inf
    for _ in range(n):
        net = FCNNConfig(
            depth=int(rng.integers(depths[0], depths[1] + 1)),
            width=width,
            slope=float(rng.choice(slopes)),
            bias_scale=float(rng.choice(betas)),
            init_scale=float(rng.choice(init_scales)),
        ).build(dim, dim, seed=int(rng.integers(2**31)), dtype=torch.float64)
        with torch.no_grad():
            for b in net.biases:
                b.copy_(torch.as_tensor(rng.normal(0.0, 0.5, b.shape)))
        X = torch.as_tensor(rng.standard_normal((n_points, dim)))
        c, t = chain_slacks(jacobian_bounds(net, X))
        chain, thm15 = min(chain, c), min(thm15, t)
    return chain, thm15


_CHAIN = (
    "||theta||^2 >= L ||Jf||_(2/L)^(2/L) >= L Rank Jf + 2 log|Jf|_+ (paper 001, proof of Thm 3)"
)
_THM15 = "sum_l [d_k(W_l)^2 + ||b_l||^2] <= ||theta||^2 - kL - 2 log|Jf(x)|_(k) (paper 001, Thm 15)"
RANDOM_CHAIN_SLACK = Quantity(
    "random_chain_slack",
    "smallest slack of " + _CHAIN + " over random networks and points",
    function=random_network_slacks,
    over="random FCNNs of several depths, slopes, biases and init scales, at random points",
    units="squared parameter units (>= 0 in exact arithmetic)",
)
RANDOM_THM15_SLACK = Quantity(
    "random_thm15_slack",
    "smallest slack of " + _THM15 + " over random networks, points and k <= Rank Jf(x)",
    function=random_network_slacks,
    over="random FCNNs of several depths, slopes, biases and init scales, at random points",
    units="squared parameter units (>= 0 in exact arithmetic)",
)
TRAINED_CHAIN_SLACK = Quantity(
    "trained_chain_slack",
    "smallest slack of " + _CHAIN + " over the training points",
    function=chain_slacks,
    over="a trained FCNN at every training point (`jacobian_bounds`)",
    units="squared parameter units (>= 0 in exact arithmetic)",
)
TRAINED_THM15_SLACK = Quantity(
    "trained_thm15_slack",
    "smallest slack of " + _THM15 + " over the training points and k <= Rank Jf(x)",
    function=chain_slacks,
    over="a trained FCNN at every training point (`jacobian_bounds`)",
    units="squared parameter units (>= 0 in exact arithmetic)",
)
BOUND_SLACKS = (
    RANDOM_CHAIN_SLACK,
    RANDOM_THM15_SLACK,
    TRAINED_CHAIN_SLACK,
    TRAINED_THM15_SLACK,
)  # paper 001 Thm 3 chain and Thm 15

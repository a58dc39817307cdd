"""Quantities of one layer from its representation and its weights, for any network.

The layer-level core that the model-specific tables (`leaky_resnet_layers`, `layer_ranks`,
`weight_spectra`, `ntk_trace`, `fcnn_balance_residuals`) and the probe of a user's model
(`bottlenecklab.probe`) share: it takes tensors (a representation `A` `[N, w]`, a weight
`W` `[n_out, n_in]`), never a model class.

Large `N`: `RepresentationAccumulator` streams the batches of `A`. Up to `max_rows` rows it
keeps them (every quantity is then the exact one of the rows, as the model tables compute
it); beyond, it keeps only the mean and the centred second moments of `T = [A, relu(A)]`
(`[A]` while `A` has no negative entry, where `relu(A) = A`), merged pairwise (Chan et
al.), `O(w^2)` memory, from which the spectra, the centred spectra and the relaxed cost of
identity (`gamma > 0`, Woodbury form) follow. The
`gamma = 0` cost of identity needs a pseudo-inverse, which second moments determine only to
`sqrt(eps)`: it is reported `nan` in that mode (the reason is in `REASONS`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg
import torch

from bottlenecklab import theory
from bottlenecklab.measure._rank_rule import GAP, RANK_RULE, RankRule

__all__ = [
    "GAMMA0",
    "GAP",
    "MAX_ROWS",
    "REASONS",
    "TW_MARGIN",
    "RepresentationAccumulator",
    "balance_residuals",
    "coi_columns",
    "mp_spikes",
    "ntk_trace_terms",
    "representation_quantities",
    "weight_quantities",
]

GAMMA0 = 1e-3  # relative ridge gamma = gamma0 ||K||_op (spec leaky-resnets.md, Decision)
MAX_ROWS = 2048  # rows kept exactly per layer before switching to second moments

REASONS = {
    "coi_moments": "gamma = 0 cost of identity needs the rows (N > max_rows): see coi_gamma",
    "not_homogeneous": "activation not positively homogeneous: the biased COI is not defined",
}


def coi_columns(A: torch.Tensor, svd: theory.KernelSVD) -> dict[str, float]:
    """The `gamma = 0` cost of identity of `A` `[N, w]`, with and without bias, and the
    relative parts of `A` outside the feature ranges (paper 000, §1.4), from one
    factorization `svd = KernelSVD.of(features(A))`.

    Returns:
        `coi`, `coi_residual` (`S = [relu(A), 1]`), `coi_nobias`, `coi_nobias_residual`.
    """
    w = A.shape[-1]
    (coi, res), (coi_nb, res_nb) = svd.nested_norm_sq_and_residual(A, w)
    return {
        "coi": float(coi),
        "coi_residual": float(res),
        "coi_nobias": float(coi_nb),
        "coi_nobias_residual": float(res_nb),
    }


def _spectral_columns(
    s: torch.Tensor,
    s_c: torch.Tensor,
    top: int,
    rule: RankRule,
    shape: tuple[int, int],
    precision: torch.dtype,
    moments: bool,
) -> dict[str, Any]:
    """Rank (`rule`), stable rank and top singular values of `A` (`s`) and of centred `A`
    (`s_c`), with how robust the centred count is: whether the rule's cutoff falls inside a
    gap (`rank_clear`), that gap, the floor (relative to `s_1`), the exact (round-off) rank
    and the counts at the relative cutoffs `RANK_RELS`."""
    read, read_c = (rule.read(v, shape, precision, moments) for v in (s, s_c))
    return {
        "rank": read.rank,
        "stable_rank": float(theory.stable_rank(None, singular_values=s)),
        "rank_centered": read_c.rank,
        "stable_rank_centered": float(theory.stable_rank(None, singular_values=s_c)),
        "rank_clear": read_c.clear,
        "rank_gap": read_c.gap,
        "rank_floor": read_c.floor,
        "rank_exact": read_c.exact,
        **{f"rank_at_{rel:.0e}".replace("e-0", "e-"): n for rel, n in read_c.at_rel.items()},
        "top_sv": [float(v) for v in s[:top]],
        "top_sv_centered": [float(v) for v in s_c[:top]],
    }


def representation_quantities(
    A: torch.Tensor,
    *,
    gamma0: float = GAMMA0,
    top: int = 10,
    rule: RankRule = RANK_RULE,
    precision: torch.dtype = torch.float64,
) -> dict[str, Any]:
    """Spectral quantities and costs of identity of one representation, from its rows.

    Args:
        A: `[N, w]` float64.
        gamma0: relative ridge of `coi_gamma` (`gamma = gamma0 ||K||_op`, `K = S S^T`).
        top: singular values kept in `top_sv`; rule: the rank rule (`RankRule`);
        precision: the dtype `A` was computed in (the rule's noise floor).
    Returns:
        `n_samples`, `width`, `rank` (`rule`), `stable_rank` (`||A||_*^2 / ||A||_F^2`,
        paper 000 Prop 1), the same of the centred `A` (`rank_centered`,
        `stable_rank_centered`), how robust the centred count is (`rank_clear`,
        `rank_gap`, `rank_floor` (relative to `s_1`), `rank_exact` (round-off),
        `rank_at_1e-1`, `rank_at_1e-2`, `rank_at_1e-3`), `top_sv`, `top_sv_centered`; `coi_columns`;
        `coi_gamma`, `coi_gamma_nobias` (the relaxed costs `||A||^2_{K + gamma I}`, paper
        000 Thm 4), `gamma`.
    """
    N, w = A.shape
    s = torch.linalg.svdvals(A)
    s_c = torch.linalg.svdvals(A - A.mean(0))
    S = theory.features(A)  # [N, w+1]
    svd = theory.KernelSVD.of(S)
    gamma = gamma0 * float(svd.op_norm_sq())
    S_nb = S[:, :w]
    gamma_nb = gamma0 * float(svd.leading(w).op_norm_sq())  # ||relu(A)||_op^2, a w x w SVD
    out = {
        "n_samples": N,
        "width": w,
        **_spectral_columns(s, s_c, top, rule, (N, w), precision, False),
        **coi_columns(A, svd),
    }
    out["gamma"] = gamma
    out["coi_gamma"] = float(theory.kernel_norms_sq((A,), S, gamma)[0]) if gamma > 0 else 0.0
    out["coi_gamma_nobias"] = (
        float(theory.kernel_norms_sq((A,), S_nb, gamma_nb)[0]) if gamma_nb > 0 else 0.0
    )
    return out


class RepresentationAccumulator:
    """Streams the batches of one layer's representation `A` (`[b, w]` each).

    Exact rows up to `max_rows`, then the count `n`, the mean `mu` and the centred second
    moments `M = sum (t - mu)(t - mu)^T` of the rows `t` of `T = [A, relu(A)]` (`[A]`
    while no negative entry was seen), merged batch by batch by Chan, Golub and LeVeque's
    pairwise update (each batch centred on its own mean; never `sum t t^T - n mu mu^T`,
    which loses the centred spectrum when `||mu||` is large against the spread); memory
    `O(max_rows w + w^2)`.
    """

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self.max_rows = max_rows
        self.rows: list[torch.Tensor] | None = []
        self.n = 0
        self.mu: torch.Tensor | None = None  # [p] mean of T
        self.M: torch.Tensor | None = None  # [p, p] centred second moments of T
        self.full = False  # T = [A, relu(A)] (else [A]: no negative entry seen)

    def update(self, A: torch.Tensor) -> None:
        """Add a batch `[b, w]` (any float dtype; accumulated in float64)."""
        A = A.detach().to(torch.float64)
        self.n += A.shape[0]
        if self.rows is not None:
            self.rows.append(A)
            if self.n <= self.max_rows:
                return
            A, self.rows = torch.cat(self.rows), None  # switch to moments
        if not self.full and bool((A < 0).any()):
            self._widen()
        T = torch.cat([A, torch.relu(A)], dim=1) if self.full else A
        b = T.shape[0]
        mu_b = T.mean(0)
        D = T - mu_b
        M_b = D.T @ D
        if self.mu is None:
            self.mu, self.M = mu_b, M_b
            return
        n_a = self.n - b  # rows merged before this batch
        delta = mu_b - self.mu
        self.M = self.M + M_b + torch.outer(delta, delta) * (n_a * b / self.n)
        self.mu = self.mu + delta * (b / self.n)

    def _widen(self) -> None:
        """`[A]` moments to `[A, relu(A)]`: so far `relu(A) = A`."""
        self.full = True
        if self.mu is None:
            return
        w = self.mu.shape[0]
        idx = torch.cat([torch.arange(w), torch.arange(w)])
        self.mu = self.mu[idx].clone()
        self.M = self.M[idx][:, idx].clone()

    def quantities(
        self,
        *,
        gamma0: float = GAMMA0,
        top: int = 10,
        rule: RankRule = RANK_RULE,
        precision: torch.dtype = torch.float64,
    ) -> dict[str, Any]:
        """`representation_quantities` of all rows seen (exact rows or moments)."""
        if self.rows is not None:
            A = torch.cat(self.rows)
            return representation_quantities(
                A, gamma0=gamma0, top=top, rule=rule, precision=precision
            )
        N, mu, M = self.n, self.mu, self.M
        p = mu.shape[0]
        w = p // (2 if self.full else 1)
        # the uncentred moments of [T, 1] (sums of positive parts: no cancellation)
        G = torch.empty(p + 1, p + 1, dtype=torch.float64, device=M.device)
        G[:p, :p] = M + N * torch.outer(mu, mu)
        G[p, :p] = G[:p, p] = N * mu
        G[p, p] = N
        a = torch.arange(w)
        r = torch.arange(w, 2 * w) if self.full else a
        one = p
        AtA = G[a][:, a]
        s = _sqrt_eigs(AtA)
        s_c = _sqrt_eigs(M[a][:, a])
        fi = torch.cat([r, torch.tensor([one])])  # S = [relu(A), 1]
        StS, StA, A_sq = G[fi][:, fi], G[fi][:, a], torch.trace(AtA)
        gamma = gamma0 * _top_eig(StS)
        StS_nb = G[r][:, r]
        gamma_nb = gamma0 * _top_eig(StS_nb)
        out = {
            "n_samples": N,
            "width": w,
            **_spectral_columns(s, s_c, top, rule, (N, w), precision, True),
        }
        out.update(
            {k: math.nan for k in ("coi", "coi_residual", "coi_nobias", "coi_nobias_residual")}
        )
        out["gamma"] = gamma
        out["coi_gamma"] = (
            float(theory.kernel_norms_sq_from_grams(StS, [StA], [A_sq], gamma)[0])
            if gamma > 0
            else 0.0
        )
        out["coi_gamma_nobias"] = (
            float(theory.kernel_norms_sq_from_grams(StS_nb, [G[r][:, a]], [A_sq], gamma_nb)[0])
            if gamma_nb > 0
            else 0.0
        )
        return out


def _top_eig(G: torch.Tensor) -> float:
    """The largest eigenvalue of a symmetric `G` `[p, p]` alone (LAPACK's subset driver:
    3x faster than the full spectrum at `p = 513`, docs/lab-notes/probe.md)."""
    p = G.shape[0]
    return float(scipy.linalg.eigvalsh(G.cpu().numpy(), subset_by_index=[p - 1, p - 1])[0])


def _sqrt_eigs(G: torch.Tensor) -> torch.Tensor:
    """Singular values of `A` from `A^T A`, descending (round-off negatives clamped)."""
    return torch.linalg.eigvalsh(G).clamp_min(0.0).sqrt().flip(0)


TW_MARGIN = 4.0  # Tracy-Widom scale units above the Marchenko-Pastur edge (mp_spikes)


def mp_spikes(s: torch.Tensor, shape: tuple[int, int]) -> tuple[int, float]:
    """Singular values of `W` `[n_out, n_in]` above the edge of a random matrix of that shape.

    A matrix with i.i.d. entries of variance `sigma^2` has its largest squared singular value
    near the Marchenko-Pastur edge `sigma^2 (sqrt(n - 1) + sqrt(m))^2` (`n >= m` its
    dimensions), with Tracy-Widom fluctuations of scale `sigma^2 (sqrt(n - 1) + sqrt(m))
    (1 / sqrt(n - 1) + 1 / sqrt(m))^(1/3)` (Johnstone 2001, Thm 1). The spikes are the `s_i`
    with `s_i^2` above the edge plus `TW_MARGIN` scale units, `sigma^2 = ||W||_F^2 / (n m)`
    (the spikes' own mass included: conservative, a spike must stand out of a bulk that
    contains it). A random Gaussian matrix has none (`tests/measure/test_rank_rule.py`, 20
    seeds per shape).

    Args:
        s: singular values, descending; shape: `(n_out, n_in)`.
    Returns:
        `(number of spikes, the edge as a singular value: sqrt(edge + margin))`.
    """
    s = s.detach().to(torch.float64).cpu()
    n, m = max(shape), min(shape)
    if s.numel() == 0 or float(s[0]) == 0.0 or m < 2:
        return 0, math.nan
    root = math.sqrt(n - 1) + math.sqrt(m)
    scale = root * (1 / math.sqrt(n - 1) + 1 / math.sqrt(m)) ** (1 / 3)
    level = root**2 + TW_MARGIN * scale
    sq = s.pow(2)
    sigma2 = float(sq.sum()) / (n * m)
    return int((sq > sigma2 * level).sum()), math.sqrt(sigma2 * level)


def weight_quantities(
    W: torch.Tensor | None,
    *,
    top: int = 10,
    floor: float = 0.1,
    singular_values: torch.Tensor | None = None,
    shape: tuple[int, int] | None = None,
    precision: torch.dtype = torch.float64,
    rule: RankRule = RANK_RULE,
) -> dict[str, Any]:
    """Spectral quantities of one weight matrix `W` `[n_out, n_in]` (a convolution's
    kernel flattened to `[c_out, c_in k_h k_w]`, as WeightWatcher does).

    Args:
        W: the matrix; or `None` with `singular_values` (descending) and `shape` of an
            operator known by its spectrum (a circular convolution: `theory`'s
            per-frequency singular values); top: values kept; floor: `W_rank_fig1`'s
            absolute cut-off; precision: the dtype `W` is stored in (`rule`'s floor).
    Returns:
        `N >= M` (its dimensions, WeightWatcher's names), `W_norm_sq` (`||W||_F^2`),
        `W_spectral_norm` (`s_1`), `W_rank` (the numerical rank: `s_i` above `rule`'s noise
        floor, numpy's and WeightWatcher's `matrix_rank`), `W_rank_fig1` (`s_i > floor`,
        paper 001 Fig 1's count, `measure._layer_ranks.layer_ranks`), `W_spikes` (`s_i` above the
        Marchenko-Pastur edge of a random matrix of that shape, `mp_spikes`), `W_mp_edge`
        (that edge), `W_top_sv`.
    """
    if singular_values is None:
        W = W.detach().to(torch.float64)
        s, shape = torch.linalg.svdvals(W), tuple(W.shape)
    else:
        s = singular_values.detach().to(torch.float64)
    spikes, edge = mp_spikes(s, shape)
    return {
        "N": int(max(shape)),
        "M": int(min(shape)),
        "W_norm_sq": float(s.pow(2).sum()),
        "W_spectral_norm": float(s[0]) if s.numel() else 0.0,
        "W_rank": rule.read(s, shape, precision).exact,
        "W_rank_fig1": theory.numerical_rank(None, 0.0, floor=floor, singular_values=s),
        "W_spikes": spikes,
        "W_mp_edge": edge,
        "W_top_sv": [float(v) for v in s[:top]],
    }


def ntk_trace_terms(
    jacobians: list[torch.Tensor], inputs: list[torch.Tensor], bias_scales: list[float]
) -> torch.Tensor:
    """`Tr Theta(x_i, x_i) = sum_l (||a_{l-1}(x_i)||^2 + beta_l^2) ||J_l(x_i)||_F^2` (paper
    001, §4): the parameter-gradient norm of an affine layer `a~_l = a_{l-1} W_l^T + beta_l
    b_l` factorizes into its input norm and the Jacobian `J_l = d f / d a~_l` of the output.

    Args:
        jacobians: `J_l` `[N, d_out, n_l]`; inputs: `a_{l-1}` `[N, n_{l-1}]`;
        bias_scales: `beta_l` (`0` for a layer without bias).
    Returns:
        `[N]` float64.
    """
    total = torch.zeros(jacobians[0].shape[0], dtype=torch.float64)
    for J, a, beta in zip(jacobians, inputs, bias_scales):
        a2 = a.to(torch.float64).pow(2).sum(1)
        total += (a2 + beta**2) * J.to(torch.float64).pow(2).sum(dim=(1, 2))
    return total


def balance_residuals(
    weights: list[torch.Tensor | np.ndarray], biases: list[torch.Tensor | np.ndarray]
) -> dict[str, np.ndarray]:
    """Per hidden layer `l = 1..L-1` of a chain `W_1, ..., W_L` (positively homogeneous
    activations between), the balance residuals at a critical point of `C + lam ||theta||^2`
    (paper 001, §2): `||W_{l,i.}||^2 + b_{l,i}^2 = ||W_{l+1,.i}||^2` per neuron `i`.

    Args:
        weights: `W_l` `[n_l, n_{l-1}]`; biases: `b_l` `[n_l]` (zeros for none).
    Returns:
        `{"summed": [L-1], "per_neuron": [L-1]}`: `|sum_i (in_i - out_i)| / ||W_{l+1}||^2`
        and `sum_i |in_i - out_i| / ||W_{l+1}||^2`.
    """
    Ws = [np.asarray(torch.as_tensor(W).detach().double().cpu()) for W in weights]
    bs = [np.asarray(torch.as_tensor(b).detach().double().cpu()) for b in biases]
    summed, per_neuron = [], []
    for l in range(len(Ws) - 1):
        inc = np.sum(Ws[l] ** 2, axis=1) + bs[l] ** 2  # [n_l]
        out = np.sum(Ws[l + 1] ** 2, axis=0)  # [n_l]
        scale = max(float(out.sum()), 1e-300)
        summed.append(abs(float(inc.sum() - out.sum())) / scale)
        per_neuron.append(float(np.abs(inc - out).sum()) / scale)
    return {"summed": np.array(summed), "per_neuron": np.array(per_neuron)}

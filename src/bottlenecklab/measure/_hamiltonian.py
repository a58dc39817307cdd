"""Momenta, Hamiltonian and energies of a trained leaky ResNet, layer by layer (paper 000).

Everything is computed in float64 on a copy of the network. Layer `l` (1..L) pairs the
momentum `B_l` with the layer's input `A_{l-1}` (spec `leaky-resnets.md`, "Measurements").
"""

from __future__ import annotations

import contextlib
import copy
import statistics
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from bottlenecklab import theory
from bottlenecklab.measure._certify import (
    MAX_EXACT,
    TAU,
    KinkDerivatives,
    KinkMode,
    box_least_squares,
    certify,
    minimize_box,
)
from bottlenecklab.measure._coi import as_float64, features
from bottlenecklab.measure._quantity import Quantity
from bottlenecklab.measure._representation import coi_columns
from bottlenecklab.measure._spectra import spectrum_rows
from bottlenecklab.tasks import data_cost

__all__ = [
    "COI_GAMMA_MIN",
    "INPUT_PAIRED",
    "RANK_H_GAMMA_MEDIAN",
    "RANK_H_MEDIAN",
    "LayerTable",
    "clarke_critical_point_residuals",
    "critical_point_residuals",
    "hamiltonian_summary",
    "layer_hamiltonian",
    "layer_series",
    "leaky_resnet_layers",
    "momenta",
]

# Columns of layer `l` that are quantities of its input `A_{l-1}` (paired with `B_l`):
# they sit at `p_{l-1}` (column `p_in`). Every other column is a quantity of `A_l` or of
# `W_l` / `B_l` and sits at `p_l` (column `p`).
INPUT_PAIRED = (
    "H",
    "rank_H",
    "kinetic",
    "coi_gamma",
    "gamma",
    "H_gamma",
    "rank_H_gamma",
    "BS_norm",
    "V_norm",
    "V_frob",
)


def layer_series(rows: list[dict[str, Any]], name: str) -> tuple[np.ndarray, np.ndarray]:
    """`(positions, values)` of one column of a layer table, each `[L]`, every quantity at
    its own depth: `p_{l-1}` for those of the input `A_{l-1}` (`INPUT_PAIRED`), else `p_l`."""
    at = "p_in" if name in INPUT_PAIRED else "p"
    return (
        np.array([r[at] for r in rows], dtype=float),
        np.array([r[name] for r in rows], dtype=float),
    )


def momenta(
    model: Any, X: Any, Y: Any, lam: float, *, derivatives: KinkDerivatives | None = None
) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Path and momenta of a leaky ResNet in float64 (paper 000, §1.1).

    `B_l = -(1/lam) dC/dA_l` by autograd of the *data* cost only; with `derivatives`, the
    ReLU derivative on the kink set is theirs (`certify(...).derivatives`: the momenta of
    the nonsmooth critical point, continuous in the weights where autograd's `sigma'(0) = 0`
    jumps with the sign of a pre-activation at round-off level).

    Args:
        model: a `LeakyResNet` (not modified: a float64 copy is used).
        X: inputs `[N, d_in]`
        Y: targets `[N, d_out]`
        lam: the weight decay `lambda`.
        derivatives: the kink set's derivatives (same rows `X`), or None for autograd's.
    Returns:
        `path` `[A_0..A_L]` and `B` `[L, N, w]` (`B[l-1]` is `B_l`), detached.
    """
    net = copy.deepcopy(model).to(device="cpu", dtype=torch.float64)
    X, Y = as_float64(X), as_float64(Y)
    with derivatives.mode() if derivatives is not None else contextlib.nullcontext():
        path = net.forward_path(X)
    C = data_cost(path[-1] @ net.pout.T, Y)
    grads = torch.autograd.grad(C, path[1:])
    B = -torch.stack(grads) / lam  # [L, N, w]
    return [A.detach() for A in path], B.detach()


def critical_point_residuals(model: Any, X: Any, Y: Any, lam: float) -> np.ndarray:
    """Per-layer critical-point residual `||W_l - L~ B_l^T S_{l-1}|| / ||W_l||`, `[L]`, in
    float64 (`theory.critical_point_residual`; the `cp_residual` column of
    `leaky_resnet_layers`, without the rest of the table)."""
    leak = float(model.leak)
    path, B = momenta(model, X, Y, lam)
    W = model.weights.detach().to(device="cpu", dtype=torch.float64)  # [L, w, w+1]
    A_prev = torch.stack(path[:-1])  # [L, N, w]
    return theory.critical_point_residual(W, A_prev, B, leak).numpy()


def clarke_critical_point_residuals(
    model: Any,
    X: Any,
    Y: Any,
    lam: float,
    *,
    tau: float = TAU,
    derivatives: KinkDerivatives | None = None,
    max_iter: int = 50,
) -> np.ndarray:
    """Per-layer critical-point residual in its Clarke form, `[L]`, float64 (spec
    `convergence.md`, item 4): `min_s ||W_l - L~ B_l(s)^T S_{l-1}|| / ||W_l||`, where
    `B_l(s)` backpropagates with the ReLU derivative free in `[0, 1]` on the kink set of
    every later layer (`|A| <= tau rms(A)`), chosen per layer.

    Starts from `derivatives` (the certificate's, `certify(...).derivatives`; default
    autograd's) and never exceeds the residual at autograd's derivative
    (`critical_point_residuals`), which it equals where no later layer has a kink. Each
    kink entry enters `B_l` through one chain-rule factor, so one backward pass per entry
    gives the exact change of every layer's residual in that coordinate; the per-layer
    box least-squares problems (`box_least_squares`) are then solved and their solutions
    evaluated exactly (layers in chunks of at most `CLARKE_EXACT` stored numbers). Beyond
    `MAX_EXACT` kink entries it minimizes per layer with L-BFGS-B (`max_iter` iterations).
    """
    leak = float(model.leak)
    net = copy.deepcopy(model).to(device="cpu", dtype=torch.float64)
    X, Y = as_float64(X), as_float64(Y)
    W = net.weights.detach()  # [L, w, w+1]
    rec = KinkMode(tau, masks=None if derivatives is None else list(derivatives.masks))
    with rec:
        path = net.forward_path(X)
    calls = rec.calls  # call j applies relu to A_j (j = 0..L-1)
    masks = [c.mask for c in calls]
    C = data_cost(path[-1] @ net.pout.T, Y)
    B_auto = -torch.stack(torch.autograd.grad(C, path[1:])) / lam  # [L, N, w]
    A_prev = torch.stack([A.detach() for A in path[:-1]])  # [L, N, w]
    S_prev = theory.sigma(A_prev)  # [L, N, w+1]
    out = theory.critical_point_residual(W, A_prev, B_auto, leak).numpy().copy()
    s0 = (
        [(c.z[c.mask] > 0).to(torch.float64) for c in calls]
        if derivatives is None
        else [t.to(torch.float64) for t in derivatives.s]
    )
    sizes = [int(t.numel()) for t in s0]
    K, (L, w, w1) = sum(sizes), W.shape
    if K == 0:
        return out

    def residuals(flat: torch.Tensor) -> torch.Tensor:
        """`W_l - L~ B_l(s)^T S_{l-1}` for every layer, `[L, w, w+1]`."""
        with KinkMode(tau, list(torch.split(flat, sizes)), masks=masks):
            p = net.forward_path(X)
        B = -torch.stack(torch.autograd.grad(data_cost(p[-1] @ net.pout.T, Y), p[1:])) / lam
        return W - leak * B.transpose(-1, -2) @ S_prev

    norms = W.norm(dim=(-2, -1)).clamp_min(1e-300)
    flat0 = torch.cat(s0)
    r0 = residuals(flat0)
    out = np.minimum(out, (r0.norm(dim=(-2, -1)) / norms).numpy())
    # the first layer whose B_l a kink entry of call j reaches is l = j (B_l <- calls >= l)
    call_of = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    if K <= MAX_EXACT:
        # Layers in chunks, so that the stored columns stay below CLARKE_EXACT numbers.
        chunk = max(1, CLARKE_EXACT // (K * w * w1))
        for lo in range(0, L, chunk):
            hi = min(L, lo + chunk)
            cols = torch.empty(hi - lo, w * w1, K, dtype=torch.float64)
            for k in range(K):
                step = 1.0 if flat0[k] < 0.5 else -1.0
                e = flat0.clone()
                e[k] += step
                cols[:, :, k] = ((residuals(e)[lo:hi] - r0[lo:hi]) * step).reshape(hi - lo, -1)
            for l in range(lo + 1, hi + 1):
                free = (call_of >= l).nonzero().squeeze(1)
                if not len(free):
                    continue
                J = cols[l - 1 - lo][:, free]
                trial = flat0.clone()
                trial[free] = box_least_squares(J, J @ flat0[free] - r0[l - 1].reshape(-1))
                r = residuals(trial)[l - 1].norm() / norms[l - 1]
                out[l - 1] = min(out[l - 1], float(r))
        return out
    for l in range(1, L + 1):
        free_calls = [j for j in range(l, len(calls)) if sizes[j]]
        if not free_calls:
            continue

        def objective(s_free: list[torch.Tensor], l: int = l, free: list[int] = free_calls):
            s = list(s0)
            for j, sj in zip(free, s_free):
                s[j] = sj
            with KinkMode(tau, s, masks=masks):
                p = net.forward_path(X)
            (g,) = torch.autograd.grad(data_cost(p[-1] @ net.pout.T, Y), p[l], create_graph=True)
            r = theory.critical_point_residual(W[l - 1], A_prev[l - 1], -g / lam, leak)
            return r.pow(2)

        value, _, _ = minimize_box(objective, [s0[j] for j in free_calls], max_iter)
        out[l - 1] = min(out[l - 1], float(np.sqrt(max(value, 0.0))))
    return out


CLARKE_EXACT = 2 * 10**7  # Jacobian numbers (K w (w+1) per layer) stored at once (160 MB)


def layer_hamiltonian(model: Any, X: Any, Y: Any, lam: float) -> np.ndarray:
    """Per-layer Hamiltonian `H_l = (L~/2) ||B_l^T S_{l-1}||^2 - L~ <B_l, A_{l-1}>`, `[L]`
    (paper 000, §1.5; the same quantity as `theory.hamiltonian(A_{l-1}, B_l, L~)`)."""
    leak = float(model.leak)
    path, B = momenta(model, X, Y, lam)
    return np.array(
        [float(theory.hamiltonian(path[l - 1], B[l - 1], leak)) for l in range(1, len(path))]
    )


@dataclass(frozen=True)
class LayerTable:
    """Per-layer measurements (rows `l = 1..L`) and long-format singular values.

    Args:
        rows: one dict per layer with the columns listed in `leaky_resnet_layers`.
        spectra: rows `{"layer", "matrix": "W"|"A", "index", "value"}`.
    """

    rows: list[dict[str, float]]
    spectra: list[dict[str, float | str]]

    def column(self, name: str) -> np.ndarray:
        """One column over layers, `[L]`."""
        return np.array([r[name] for r in self.rows], dtype=float)

    def series(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """`(positions, values)` of a column at its own depth (`layer_series`)."""
        return layer_series(self.rows, name)


def leaky_resnet_layers(
    model: Any,
    X: Any,
    Y: Any,
    lam: float,
    *,
    gamma0: float = 1e-3,
    top: int = 10,
    clarke: bool = False,
    tau: float = TAU,
) -> LayerTable:
    """The per-layer table of paper 000's quantities, in float64 on the training set.

    Columns (layer `l` pairs `B_l` with `A_{l-1}`; `S = sigma(A)`, `K = S S^T`,
    `gamma_l = gamma0 ||K_{l-1}||_op` — the spec's Decision, paper 000 Thm 4):
      `layer`, `p` (`p_l = rho_1 + ... + rho_l`, where `A_l` sits), `p_in` (`p_{l-1}`, where
      the layer's input sits: the columns in `INPUT_PAIRED` are quantities of `A_{l-1}`
      and belong there), `rho`;
      `H` = `(L~/2) ||B_l^T S_{l-1}||^2 - L~ <B_l, A_{l-1}>` and `rank_H = -(2/L~) H`;
      `kinetic` = `(1/(2L~)) ||V_l||^2_{K_{l-1}+gamma I}`, `V_l = (A_l - A_{l-1}) / rho_l`;
      `coi_gamma` = `||A_{l-1}||^2_{K_{l-1}+gamma I}`; `H_gamma` = kinetic - (L~/2) coi_gamma
      and `rank_H_gamma = -(2/L~) H_gamma`;
      `coi`, `coi_residual` (`gamma = 0`, with bias, of `A_l`), `coi_nobias`,
      `coi_nobias_residual`; `stable_rank` of `A_l`;
      `cp_residual` = `||W_l - L~ B_l^T S_{l-1}||_F / ||W_l||_F` (0 at a critical point);
      `cp_residual_clarke` (only with `clarke=True`): the same in its Clarke form
      (`clarke_critical_point_residuals`: `sigma'(0)` free in `[0, 1]` on the kinks);
      `rank_H_autograd` (only with `clarke=True`): `rank_H` with autograd's momenta;
      `B_norm` = `||B_l||_F`, `BS_norm` = `||B_l^T S_{l-1}||_F`, `V_norm` = `||V_l||_{K+gamma I}`,
      `V_frob` = `||V_l||_F` (the plain velocity, paper 000 App B);
      `negative_mass` = `(||A_l||^2 - ||relu(A_l)||^2) / ||A_l||^2` (Prop 5);
      `W_norm_sq` = `||W_l||_F^2`, `bias_norm_sq` = `||b_l||^2` (Prop 10).

    Args:
        model: trained `LeakyResNet` with `leak > 0`.
        X: inputs `[N, d_in]`
        Y: targets `[N, d_out]`
        lam: weight decay `lambda > 0`.
        gamma0: relative ridge of the stable quantities
        top: singular values kept per layer.
        clarke: take the momenta of the nonsmooth critical point: `B_l` with the ReLU
            derivative on the kink set that the certificate selects
            (`certify(...).derivatives`), for `H`, `rank_H`, `B_norm`, `BS_norm`;
            autograd's `sigma'(0) = 0` makes them jump when a pre-activation on a kink
            changes sign at round-off level. Adds `cp_residual_clarke` and
            `rank_H_autograd`. `cp_residual` stays autograd's form.
        tau: the kink band of `clarke`.
    """
    leak = float(model.leak)
    if leak <= 0:
        raise ValueError("the Hamiltonian needs an effective depth L~ > 0")
    path, B_auto = momenta(model, X, Y, lam)
    B, cp_clarke = B_auto, None
    if clarke:
        der = certify(model, (X, Y), lam, tau=tau).derivatives
        _, B = momenta(model, X, Y, lam, derivatives=der)
        cp_clarke = clarke_critical_point_residuals(model, X, Y, lam, tau=tau, derivatives=der)
    W = model.weights.detach().to(device="cpu", dtype=torch.float64)  # [L, w, w+1]
    rho = model.rho.detach().to(device="cpu", dtype=torch.float64)
    p = torch.cumsum(rho, 0)
    w = W.shape[1]
    rows: list[dict[str, float]] = []
    spectra: list[dict[str, float | str]] = []
    # One SVD per feature matrix: S_l serves the gamma = 0 COI of A_l at layer l and the
    # ridge, conditioning and relaxed norms of layer l + 1, whose input it is.
    S_prev = features(path[0])  # [N, w+1]
    svd_prev = theory.KernelSVD.of(S_prev)
    for l in range(1, len(path)):
        A_prev, A = path[l - 1], path[l]
        Bl = B[l - 1]  # [N, w]
        S = features(A)  # S_l = [relu(A_l), 1]
        svd = theory.KernelSVD.of(S)
        coi = coi_columns(A, svd)  # coi, coi_residual, coi_nobias, coi_nobias_residual
        s_A = torch.linalg.svdvals(A)
        BS = Bl.T @ S_prev  # [w, w+1]
        H = float(theory.hamiltonian(A_prev, Bl, leak, BS=BS))
        gamma = gamma0 * float(svd_prev.op_norm_sq())
        V = (A - A_prev) / rho[l - 1]
        v2, coi_g = theory.kernel_norms_sq((V, A_prev), S_prev, gamma).tolist()
        kinetic = v2 / (2 * leak)
        H_gamma = kinetic - 0.5 * leak * coi_g
        Wl = W[l - 1]
        rows.append(
            {
                "layer": l,
                "p": float(p[l - 1]),
                "p_in": float(p[l - 1] - rho[l - 1]),
                "rho": float(rho[l - 1]),
                "H": H,
                "rank_H": -2.0 / leak * H,
                "kinetic": kinetic,
                "coi_gamma": coi_g,
                "gamma": gamma,
                "kernel_cond": float(svd_prev.condition(gamma)),
                "H_gamma": H_gamma,
                "rank_H_gamma": -2.0 / leak * H_gamma,
                **coi,
                "stable_rank": float(theory.stable_rank(A, singular_values=s_A)),
                "cp_residual": float(
                    theory.critical_point_residual(Wl, A_prev, B_auto[l - 1], leak)
                ),
                "B_norm": float(Bl.norm()),
                "BS_norm": float(BS.norm()),
                "V_norm": float(np.sqrt(max(v2, 0.0))),
                "V_frob": float(V.norm()),
                "negative_mass": float(theory.negative_mass(A)),
                "W_norm_sq": float(Wl.pow(2).sum()),
                "bias_norm_sq": float(Wl[:, w].pow(2).sum()),
            }
        )
        if cp_clarke is not None:
            rows[-1]["cp_residual_clarke"] = float(cp_clarke[l - 1])
            H_auto = float(theory.hamiltonian(A_prev, B_auto[l - 1], leak))
            rows[-1]["rank_H_autograd"] = -2.0 / leak * H_auto
        for name, values in (("W", torch.linalg.svdvals(Wl)), ("A", s_A)):
            spectra += spectrum_rows(l, name, values[:top].tolist())
        S_prev, svd_prev = S, svd
    return LayerTable(rows=rows, spectra=spectra)


ILL_CONDITIONED = 1e10  # ~ 1e-6 / eps(float64)


def hamiltonian_summary(table: LayerTable) -> dict[str, float]:
    """Median / min / max over layers of `rank_H` and `rank_H_gamma`, `min coi_gamma`,
    and the median critical-point residual, also in its Clarke form where the table has it
    (paper 000, Fig 1a)."""
    out: dict[str, float] = {}
    for name in ("rank_H", "rank_H_gamma"):
        col = table.column(name).tolist()
        out[f"{name}_median"] = statistics.median(col)
        out[f"{name}_min"] = min(col)
        out[f"{name}_max"] = max(col)
    out["coi_gamma_min"] = float(table.column("coi_gamma").min())
    out["cp_residual_median"] = statistics.median(table.column("cp_residual").tolist())
    for name in ("cp_residual_clarke", "rank_H_autograd"):
        if table.rows and name in table.rows[0]:
            out[f"{name}_median"] = statistics.median(table.column(name).tolist())
    # Conditioning of the relaxed kernels (S^T S + gamma I): above ILL_CONDITIONED the
    # relaxed COI and kinetic terms keep fewer than ~6 of float64's digits; flagged, not hidden.
    out["kernel_cond_max"] = float(table.column("kernel_cond").max())
    out["kernel_ill_conditioned"] = float(out["kernel_cond_max"] > ILL_CONDITIONED)
    return out


_LAYERS = "the layer table of a leaky ResNet on the training set (`leaky_resnet_layers`)"
RANK_H_MEDIAN = Quantity(
    "rank_H_median",
    "median over layers of -(2/L~) H_l, the Hamiltonian's rank estimate (paper 000, Thm 4)",
    function=hamiltonian_summary,
    over=_LAYERS,
    units="rank units",
    kinked=True,  # the momenta take sigma'(0) at the kinks
)
RANK_H_GAMMA_MEDIAN = Quantity(
    "rank_H_gamma_median",
    "median over layers of the stable (gamma-ridged) -(2/L~) H_l (paper 000, Sec 3.2)",
    function=hamiltonian_summary,
    over=_LAYERS,
    units="rank units",
    kinked=True,
)
COI_GAMMA_MIN = Quantity(
    "coi_gamma_min",
    "smallest relaxed cost of identity COI_gamma over the layers (paper 000, Sec 1.4)",
    function=hamiltonian_summary,
    over=_LAYERS,
    units="rank units",
)

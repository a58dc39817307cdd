"""Path length, momentum sizes and both sides of Theorem 4 (paper 000, §2.1, Fig 3, Thm 4).

All are read off a `LayerTable` (no recomputation). Layer `l` has its own ridge
`gamma_l = gamma0 ||K_{l-1}||_op` (the p-dependent ridge that paper 000 suggests right after
Thm 4). With it the proof of Thm 4 goes through with `gamma c^2 -> max_l gamma_l ||B_l||^2`
and `gamma c -> max_l gamma_l ||B_l||` (the paper's form). The proof's step
`||gamma B||_{K + gamma I} <= gamma c` only holds as `<= sqrt(gamma) c` (since
`(K + gamma I)^{-1} <= gamma^{-1} I`), so the *corrected* lower bounds use
`max_l sqrt(gamma_l) ||B_l||` instead; both forms are reported.
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np

from bottlenecklab import theory
from bottlenecklab.measure._certify import KinkDerivatives
from bottlenecklab.measure._coi import features, kernel_norm_sq
from bottlenecklab.measure._hamiltonian import LayerTable, momenta

__all__ = ["momentum_bounds", "path_length", "theorem4", "theorem4_constant_gamma"]


def path_length(table: LayerTable) -> float:
    """`l_gamma = sum_l rho_l ||V_l||_{K_{l-1} + gamma_l I}`, `V_l = (A_l - A_{l-1}) / rho_l`
    (paper 000, Thm 4; Fig 3)."""
    return float((table.column("rho") * table.column("V_norm")).sum())


def momentum_bounds(table: LayerTable) -> dict[str, float]:
    """`max_l ||B_l||_F` and `max_l ||B_l^T S_{l-1}||_F` (paper 000, Fig 3)."""
    return {
        "B_max": float(table.column("B_norm").max()),
        "BS_max": float(table.column("BS_norm").max()),
    }


def theorem4(table: LayerTable, leak: float) -> dict[str, float]:
    """Both sides of the two inequalities of paper 000, Thm 4, with `H` the median over layers.

    (1) `-(l_gamma/L~ + gamma c)^2 <= -(2/L~)H - min_l COI_gamma <= gamma c^2`;
    (2) per layer, `-L~ gamma c <= ||V_l||_gamma - L~ sqrt(COI_gamma,l + (2/L~)H) <= 2 L~ gamma c`.

    Returns (keys): `thm4_middle`, `thm4_upper` (`max gamma_l ||B_l||^2`), `thm4_lower`
    (paper's form), `thm4_lower_corrected` (`sqrt(gamma)` form); `thm4_gc`, `thm4_sgc`
    (the two `gamma c` terms); `thm4_per_layer_frac` and `thm4_per_layer_frac_corrected`:
    the fraction of layers where (2) holds (a negative square-root argument counts as a
    failure); `thm4_per_layer_negative_arg`: the fraction of layers where that argument
    `COI_gamma,l + (2/L~)H` is negative (the proof's identity only bounds it below by
    `-gamma_l ||B_l||^2`), `thm4_per_layer_arg_min` its smallest value,
    `thm4_per_layer_arg_floor` the largest `-gamma_l ||B_l||^2` over those layers, and
    `thm4_per_layer_frac_clipped` the fraction where (2) holds with the argument clipped at
    0; `path_length`.
    """
    rank_h = statistics.median(table.column("rank_H").tolist())  # -(2/L~) H
    coi = table.column("coi_gamma")
    gamma, b = table.column("gamma"), table.column("B_norm")
    ell = path_length(table)
    gc = float((gamma * b).max())
    sgc = float((np.sqrt(gamma) * b).max())
    middle = rank_h - float(coi.min())

    arg = coi - rank_h  # COI_gamma + (2/L~) H

    def frac(c: float, clip: bool = False) -> float:
        a = np.maximum(arg, 0.0) if clip else arg
        with np.errstate(invalid="ignore"):
            excess = table.column("V_norm") - leak * np.sqrt(a)
        ok = (a >= 0) & (excess >= -leak * c) & (excess <= 2 * leak * c)
        return float(ok.mean())

    return {
        "path_length": ell,
        "thm4_middle": middle,
        "thm4_upper": float((gamma * b**2).max()),
        "thm4_lower": -((ell / leak + gc) ** 2),
        "thm4_lower_corrected": -((ell / leak + sgc) ** 2),
        "thm4_gc": gc,
        "thm4_sgc": sgc,
        "thm4_per_layer_frac": frac(gc),
        "thm4_per_layer_frac_corrected": frac(sgc),
        "thm4_per_layer_negative_arg": float((arg < 0).mean()),
        "thm4_per_layer_arg_min": float(arg.min()),
        "thm4_per_layer_arg_floor": float(-(gamma * b**2)[arg < 0].max(initial=0.0)),
        "thm4_per_layer_frac_clipped": frac(gc, clip=True),
    }


def theorem4_constant_gamma(
    model: Any,
    X: Any,
    Y: Any,
    lam: float,
    gamma: float,
    *,
    derivatives: KinkDerivatives | None = None,
) -> dict[str, float]:
    """Thm 4 (1) exactly as stated: one ridge `gamma` for every layer (paper 000 suggests
    `gamma = 1/L~`), `c = max_l ||B_l||_F`, `H` the median of the layer Hamiltonians.

    Recomputes `COI_gamma` and `||V_l||_{K+gamma I}` at that ridge (the layer table uses
    the layer-dependent one). Keys as in `theorem4` with the suffix `_const`.

    Args:
        model: trained `LeakyResNet`
        X: `[N, d_in]`
        Y: `[N, d_out]`
        lam: `lambda`
        gamma: the absolute ridge, `> 0`.
        derivatives: the kink set's derivatives of the momenta (`momenta`; the
            certificate's, as in the layer table), or None for autograd's.
    """
    leak = float(model.leak)
    path, B = momenta(model, X, Y, lam, derivatives=derivatives)
    rho = model.rho.detach().to(dtype=B.dtype, device="cpu")
    coi, vel, rank_h = [], [], []
    for l in range(1, len(path)):
        A_prev = path[l - 1]
        S = features(A_prev)  # [N, w+1]
        H = float(theory.hamiltonian(A_prev, B[l - 1], leak))
        rank_h.append(-2.0 / leak * H)
        coi.append(kernel_norm_sq(A_prev, S, gamma))
        V = (path[l] - A_prev) / rho[l - 1]
        vel.append(float(np.sqrt(max(kernel_norm_sq(V, S, gamma), 0.0))))
    c = float(B.flatten(1).norm(dim=1).max())
    ell = float((rho.numpy() * np.array(vel)).sum())
    middle = statistics.median(rank_h) - min(coi)
    return {
        "path_length_const": ell,
        "thm4_middle_const": middle,
        "thm4_upper_const": gamma * c**2,
        "thm4_lower_const": -((ell / leak + gamma * c) ** 2),
        "thm4_lower_corrected_const": -((ell / leak + float(np.sqrt(gamma)) * c) ** 2),
    }

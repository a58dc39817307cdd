"""Path lengths, momentum sizes and both sides of Theorem 4 (paper 000, §2.1, Fig 3, Thm 4).

Read off a `LayerTable` (no recomputation), except the single-ridge quantities
(`ridge_layers`), which recompute the kernel norms at one `gamma` for every layer. Layer `l`
of the table has its own ridge `gamma_l = gamma0 ||K_{l-1}||_op` (the p-dependent ridge
that paper 000 suggests right after Thm 4). With it the proof of Thm 4 (1) goes through
with `gamma c^2 -> max_l gamma_l ||B_l||^2` and `gamma c -> max_l gamma_l ||B_l||` (the
paper's form). The proof's step `||gamma B||_{K + gamma I} <= gamma c` only holds as
`<= sqrt(gamma) c` (since `(K + gamma I)^{-1} <= gamma^{-1} I`), so the *corrected* lower
bounds use `max_l sqrt(gamma_l) ||B_l||` instead; both forms are reported. Thm 4 (2) is
read per layer with that layer's `gamma_l`, `||B_l||` and `sqrt(max(a_l, 0))`
(`theory.speed_window`; spec `leaky-resnets.md`, fourth review).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

import numpy as np

from bottlenecklab import theory
from bottlenecklab.measure._certify import KinkDerivatives
from bottlenecklab.measure._coi import as_float64, features
from bottlenecklab.measure._hamiltonian import LayerTable, momenta
from bottlenecklab.measure._quantity import Quantity

__all__ = [
    "BS_MAX",
    "B_MAX",
    "PATH_BOUNDS",
    "PATH_LENGTH",
    "PATH_LENGTH_CONST",
    "PATH_LENGTH_PLAIN",
    "THM4_ARG_NEGATIVE",
    "THM4_LOWER",
    "THM4_LOWER_CONST",
    "THM4_LOWER_CORRECTED",
    "THM4_MIDDLE",
    "THM4_MIDDLE_CONST",
    "THM4_PER_LAYER_FRAC",
    "THM4_UPPER",
    "THM4_UPPER_CONST",
    "THM4_WINDOW_USED_MAX",
    "THM4_WINDOW_USED_MAX_CONST",
    "RidgeLayers",
    "hamiltonian_bounds",
    "hamiltonian_bounds_constant_gamma",
    "layer_speed_window",
    "momentum_bounds",
    "path_length",
    "plain_path_length",
    "ridge_layers",
    "speed_window_columns",
    "speed_window_summary",
]


def path_length(table: LayerTable) -> float:
    """`l_gamma = sum_l rho_l ||V_l||_{K_{l-1} + gamma_l I}`, `V_l = (A_l - A_{l-1}) / rho_l`
    (paper 000, Thm 4; Fig 3)."""
    return float((table.column("rho") * table.column("V_norm")).sum())


def plain_path_length(table: LayerTable) -> float:
    """`sum_l rho_l ||V_l||_F`: the path length `int ||dA_p/dp|| dp` of paper 000, App B
    (Fig 3), with no kernel metric."""
    return float((table.column("rho") * table.column("V_frob")).sum())


def momentum_bounds(table: LayerTable) -> dict[str, float]:
    """`max_l ||B_l||_F` and `max_l ||B_l^T S_{l-1}||_F` (paper 000, Fig 3)."""
    return {
        "B_max": float(table.column("B_norm").max()),
        "BS_max": float(table.column("BS_norm").max()),
    }


def hamiltonian_bounds(table: LayerTable, leak: float) -> dict[str, float]:
    """The Hamiltonian against the minimal cost of identity and the path length: both sides
    of the two inequalities of paper 000, Thm 4, with `H` the median over layers.

    (1) `-(l_gamma/L~ + gamma c)^2 <= -(2/L~)H - min_l COI_gamma <= gamma c^2`;
    (2) per layer, `-L~ gamma c <= ||V_l||_gamma - L~ sqrt(COI_gamma,l + (2/L~)H) <= 2 L~ gamma c`
    as the paper writes it, and in the form its proof supports (`layer_speed_window`).

    Returns (keys): `path_length` (`l_gamma`), `path_length_plain` (`sum rho ||V||_F`);
    `thm4_middle`, `thm4_upper` (`max gamma_l ||B_l||^2`), `thm4_lower` (paper's form),
    `thm4_lower_corrected` (`sqrt(gamma)` form); `thm4_gc`, `thm4_sgc` (the two `gamma c`
    terms); `thm4_per_layer_frac`: the fraction of layers where (2) holds in the paper's
    form (`gamma c` with `c = max ||B||`; a negative square-root argument counts as a
    failure); and `speed_window_summary` of the per-layer form.
    """
    rank_h = statistics.median(table.column("rank_H").tolist())  # -(2/L~) H
    coi = table.column("coi_gamma")
    gamma, b = table.column("gamma"), table.column("B_norm")
    ell = path_length(table)
    gc = float((gamma * b).max())
    sgc = float((np.sqrt(gamma) * b).max())
    arg = coi - rank_h  # COI_gamma + (2/L~) H
    with np.errstate(invalid="ignore"):
        excess = table.column("V_norm") - leak * np.sqrt(arg)
    paper = (arg >= 0) & (excess >= -leak * gc) & (excess <= 2 * leak * gc)
    return {
        "path_length": ell,
        "path_length_plain": plain_path_length(table),
        "thm4_middle": rank_h - float(coi.min()),
        "thm4_upper": float((gamma * b**2).max()),
        "thm4_lower": -((ell / leak + gc) ** 2),
        "thm4_lower_corrected": -((ell / leak + sgc) ** 2),
        "thm4_gc": gc,
        "thm4_sgc": sgc,
        "thm4_per_layer_frac": float(paper.mean()),
        **speed_window_summary(layer_speed_window(table, leak)),
    }


def layer_speed_window(table: LayerTable, leak: float) -> theory.SpeedWindow:
    """The window around each layer's speed (paper 000, Thm 4 (2)) at every layer of
    `table`, each with its own `gamma_l` and `||B_l||`, `H` the median over layers
    (`theory.speed_window`)."""
    rank_h = statistics.median(table.column("rank_H").tolist())
    return theory.speed_window(
        table.column("V_norm"),
        table.column("coi_gamma"),
        rank_h,
        table.column("gamma"),
        table.column("B_norm"),
        leak,
    )


def speed_window_columns(
    rows: list[dict[str, Any]], windows: dict[str, theory.SpeedWindow]
) -> list[dict[str, Any]]:
    """The layer table's `rows` (one per layer) with Thm 4 (2)'s per-layer argument
    `a_l` (`thm4_arg<suffix>`) and the signed fraction of its window used
    (`thm4_used<suffix>`) of each window (paper 000, Thm 4 (2)); `windows`: suffix ->
    window, e.g. `{"": own ridges, "_const": gamma = 1/L~}`."""
    return [
        row
        | {
            key: float(value)
            for suffix, w in windows.items()
            for key, value in ((f"thm4_arg{suffix}", w.arg[i]), (f"thm4_used{suffix}", w.used[i]))
        }
        for i, row in enumerate(rows)
    ]


def speed_window_summary(window: theory.SpeedWindow, suffix: str = "") -> dict[str, float]:
    """Scalars of a Thm 4 (2) window: `thm4_window_used_max` (largest `|used|` over layers:
    at most 1 iff (2) holds at every layer), `thm4_window_holds` (fraction of layers where
    it holds), `thm4_arg_negative` (number of layers with `a_l < 0`), `thm4_arg_min`
    (smallest `a_l`); each key with `suffix` appended."""
    return {
        f"thm4_window_used_max{suffix}": float(np.abs(window.used).max()),
        f"thm4_window_holds{suffix}": float(window.holds.mean()),
        f"thm4_arg_negative{suffix}": float((window.arg < 0).sum()),
        f"thm4_arg_min{suffix}": float(window.arg.min()),
    }


@dataclass(frozen=True)
class RidgeLayers:
    """Per-layer quantities of a leaky ResNet at one ridge `gamma` for every layer, `[L]`
    each: `rho`, `coi_gamma` (`||A_{l-1}||^2_{K+gamma I}`), `v_norm` (`||V_l||_{K+gamma I}`),
    `b_norm` (`||B_l||_F`), `rank_h` (`-(2/L~) H_l`)."""

    gamma: float
    rho: np.ndarray
    coi_gamma: np.ndarray
    v_norm: np.ndarray
    b_norm: np.ndarray
    rank_h: np.ndarray

    def path_length(self) -> float:
        """`l_gamma = sum_l rho_l ||V_l||_{K+gamma I}` at this ridge."""
        return float((self.rho * self.v_norm).sum())

    def window(self, leak: float) -> theory.SpeedWindow:
        """Thm 4 (2) per layer at this ridge, `H` the median (`theory.speed_window`)."""
        return theory.speed_window(
            self.v_norm,
            self.coi_gamma,
            statistics.median(self.rank_h.tolist()),
            self.gamma,
            self.b_norm,
            leak,
        )


def ridge_layers(
    model: Any,
    X: Any,
    Y: Any,
    lam: float,
    gamma: float,
    *,
    derivatives: KinkDerivatives | None = None,
) -> RidgeLayers:
    """The kernel norms of every layer at one absolute ridge `gamma` (paper 000 suggests
    `gamma = 1/L~` after Thm 4), with the momenta and Hamiltonians.

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
        S = as_float64(features(A_prev))  # [N, w+1]
        H = float(theory.hamiltonian(A_prev, B[l - 1], leak))
        rank_h.append(-2.0 / leak * H)
        coi.append(float(theory.kernel_norm_sq(as_float64(A_prev), S, float(gamma))))
        V = as_float64((path[l] - A_prev) / rho[l - 1])
        vel.append(float(np.sqrt(max(float(theory.kernel_norm_sq(V, S, float(gamma))), 0.0))))
    return RidgeLayers(
        gamma=float(gamma),
        rho=rho.numpy(),
        coi_gamma=np.array(coi),
        v_norm=np.array(vel),
        b_norm=B.flatten(1).norm(dim=1).numpy(),
        rank_h=np.array(rank_h),
    )


def hamiltonian_bounds_constant_gamma(
    model: Any,
    X: Any,
    Y: Any,
    lam: float,
    gamma: float,
    *,
    derivatives: KinkDerivatives | None = None,
    layers: RidgeLayers | None = None,
) -> dict[str, float]:
    """Thm 4 (1) exactly as stated: one ridge `gamma` for every layer (paper 000 suggests
    `gamma = 1/L~`), `c = max_l ||B_l||_F`, `H` the median of the layer Hamiltonians; and
    Thm 4 (2) per layer at that ridge (`speed_window_summary`).

    Recomputes `COI_gamma` and `||V_l||_{K+gamma I}` at that ridge (`ridge_layers`; the
    layer table uses the layer-dependent one), unless `layers` gives them. Keys as in
    `hamiltonian_bounds` and `speed_window_summary` with the suffix `_const`.

    Args:
        model: trained `LeakyResNet`
        X: `[N, d_in]`
        Y: `[N, d_out]`
        lam: `lambda`
        gamma: the absolute ridge, `> 0`.
        derivatives: the kink set's derivatives of the momenta (`momenta`), or None for
            autograd's.
        layers: `ridge_layers(model, X, Y, lam, gamma, derivatives=...)` if already
            computed.
    """
    leak = float(model.leak)
    if layers is None:
        layers = ridge_layers(model, X, Y, lam, gamma, derivatives=derivatives)
    c = float(layers.b_norm.max())
    ell = layers.path_length()
    middle = statistics.median(layers.rank_h.tolist()) - float(layers.coi_gamma.min())
    return {
        "path_length_const": ell,
        "thm4_middle_const": middle,
        "thm4_upper_const": gamma * c**2,
        "thm4_lower_const": -((ell / leak + gamma * c) ** 2),
        "thm4_lower_corrected_const": -((ell / leak + float(np.sqrt(gamma)) * c) ** 2),
        **speed_window_summary(layers.window(leak), "_const"),
    }


_TABLE = "the layer table of a trained leaky ResNet (training set)"
_RIDGE = "the layers at one ridge gamma = 1/L~ (`ridge_layers`)"
PATH_LENGTH = Quantity(
    "path_length",
    "l_gamma = sum_l rho_l ||V_l||_(K + gamma_l I), the path length in the kernel metric "
    "(paper 000, Thm 4, Fig 3)",
    function=hamiltonian_bounds,
    over=_TABLE,
    units="representation norm",
)
PATH_LENGTH_PLAIN = Quantity(
    "path_length_plain",
    "sum_l rho_l ||V_l||_F, the path length int ||dA_p/dp|| dp (paper 000, App B, Fig 3)",
    function=hamiltonian_bounds,
    over=_TABLE,
    units="representation norm",
)
PATH_LENGTH_CONST = Quantity(
    "path_length_const",
    "the path length in the (K + gamma I) metric at one gamma = 1/L~ (paper 000, Thm 4)",
    function=hamiltonian_bounds_constant_gamma,
    over=_RIDGE,
    units="representation norm",
)
B_MAX = Quantity(
    "B_max",
    "max_l ||B_l||_F, the largest momentum (paper 000, Fig 3)",
    function=momentum_bounds,
    over=_TABLE,
    units="momentum norm",
    kinked=True,
)
BS_MAX = Quantity(
    "BS_max",
    "max_l ||B_l^T S_(l-1)||_F (paper 000, Fig 3)",
    function=momentum_bounds,
    over=_TABLE,
    units="momentum norm",
    kinked=True,
)
THM4_MIDDLE = Quantity(
    "thm4_middle",
    "-(2/L~)H - min_l COI_gamma, the middle term of Thm 4 (1) (paper 000)",
    function=hamiltonian_bounds,
    over=_TABLE + ", ridges gamma_l",
    units="rank units",
    kinked=True,  # H reads the momenta
)
THM4_UPPER = Quantity(
    "thm4_upper",
    "max_l gamma_l ||B_l||^2, the upper side of Thm 4 (1) (paper 000)",
    function=hamiltonian_bounds,
    over=_TABLE + ", ridges gamma_l",
    units="rank units",
    kinked=True,
)
THM4_LOWER = Quantity(
    "thm4_lower",
    "-(l_gamma/L~ + gamma c)^2, the lower side of Thm 4 (1) in the paper's form",
    function=hamiltonian_bounds,
    over=_TABLE + ", ridges gamma_l",
    units="rank units",
    kinked=True,
)
THM4_LOWER_CORRECTED = Quantity(
    "thm4_lower_corrected",
    "-(l_gamma/L~ + sqrt(gamma) c)^2, the lower side of Thm 4 (1) the proof supports",
    function=hamiltonian_bounds,
    over=_TABLE + ", ridges gamma_l",
    units="rank units",
    kinked=True,
)
THM4_PER_LAYER_FRAC = Quantity(
    "thm4_per_layer_frac",
    "fraction of layers where Thm 4 (2) holds as the paper writes it (paper 000)",
    function=hamiltonian_bounds,
    over=_TABLE + ", ridges gamma_l",
    units="fraction",
    kinked=True,
)
THM4_WINDOW_USED_MAX = Quantity(
    "thm4_window_used_max",
    "largest |fraction of its Thm 4 (2) window| a layer uses (at most 1 iff (2) holds at "
    "every layer; `speed_window_summary`)",
    function=hamiltonian_bounds,
    over=_TABLE + ", ridges gamma_l",
    units="fraction",
    kinked=True,
)
THM4_ARG_NEGATIVE = Quantity(
    "thm4_arg_negative",
    "number of layers with a_l = COI_gamma,l + (2/L~)H < 0 (Thm 4 (2)'s square root)",
    function=hamiltonian_bounds,
    over=_TABLE + ", ridges gamma_l",
    units="count",
    kinked=True,
)
THM4_MIDDLE_CONST = Quantity(
    "thm4_middle_const",
    "the middle term of Thm 4 (1) at one ridge gamma = 1/L~ (paper 000)",
    function=hamiltonian_bounds_constant_gamma,
    over=_RIDGE,
    units="rank units",
    kinked=True,
)
THM4_UPPER_CONST = Quantity(
    "thm4_upper_const",
    "gamma c^2, the upper side of Thm 4 (1) at one ridge gamma = 1/L~",
    function=hamiltonian_bounds_constant_gamma,
    over=_RIDGE,
    units="rank units",
    kinked=True,
)
THM4_LOWER_CONST = Quantity(
    "thm4_lower_const",
    "-(l_gamma/L~ + gamma c)^2, the lower side of Thm 4 (1) at one ridge gamma = 1/L~",
    function=hamiltonian_bounds_constant_gamma,
    over=_RIDGE,
    units="rank units",
    kinked=True,
)
THM4_WINDOW_USED_MAX_CONST = Quantity(
    "thm4_window_used_max_const",
    "the largest fraction of its Thm 4 (2) window a layer uses at one ridge gamma = 1/L~",
    function=hamiltonian_bounds_constant_gamma,
    over=_RIDGE,
    units="fraction",
    kinked=True,
)
PATH_BOUNDS = (
    PATH_LENGTH,
    PATH_LENGTH_PLAIN,
    PATH_LENGTH_CONST,
    B_MAX,
    BS_MAX,
    THM4_MIDDLE,
    THM4_UPPER,
    THM4_LOWER,
    THM4_LOWER_CORRECTED,
    THM4_PER_LAYER_FRAC,
    THM4_WINDOW_USED_MAX,
    THM4_ARG_NEGATIVE,
    THM4_MIDDLE_CONST,
    THM4_UPPER_CONST,
    THM4_LOWER_CONST,
    THM4_WINDOW_USED_MAX_CONST,
)

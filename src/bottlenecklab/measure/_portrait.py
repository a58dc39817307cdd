"""The layer portrait of a trained leaky ResNet (paper 000, Fig 1b-d): statistics of its
layer table over regions of the depth (the bottleneck, the ends), and the quantities they
are declared as.

`portrait_summary(table, k, leak)` reads a `LayerTable` (`leaky_resnet_layers`): the
middle third `p in [1/3, 2/3)` is the bottleneck, `p < 1/6` and `p >= 5/6` the ends.
"""

from __future__ import annotations

import numpy as np

from bottlenecklab.measure._hamiltonian import LayerTable
from bottlenecklab.measure._quantity import Quantity
from bottlenecklab.measure._spectra import gap_at

__all__ = [
    "COI_MIDDLE_MEDIAN",
    "GAP_MIDDLE_MEDIAN",
    "KINETIC_MIDDLE_OVER_ENDS",
    "NEGATIVE_MASS_MIDDLE_MAX",
    "N_MIDDLE_LAYERS",
    "PORTRAIT",
    "SPREAD_RATIO",
    "layer_region",
    "portrait_summary",
]


def layer_region(table: LayerTable, lo: float, hi: float, at: str = "p_in") -> np.ndarray:
    """Boolean mask `[L]` of the layers whose position lies in `[lo, hi)`.

    `at="p_in"` (input position `p_{l-1}`) for the energies of layer `l`, which are those
    of `A_{l-1}` (`measure.INPUT_PAIRED`); `at="p"` (`p_l`) for quantities of `A_l`, `W_l`.
    """
    return (table.column(at) >= lo) & (table.column(at) < hi)


def portrait_summary(table: LayerTable, k: int, leak: float) -> dict[str, float]:
    """The portrait's region statistics of one trained network (paper 000, Fig 1b-d, §2.1,
    Prop 5).

    Args:
        table: its layer table (`leaky_resnet_layers`, with `W` spectra).
        k: the bottleneck rank `k*` whose gap `s_k / s_(k+1)` of `W_l` is read.
        leak: its effective depth `L~`.
    Returns:
        `gap_middle_median`, `spread_H`, `spread_coi`, `spread_kinetic`, `spread_ratio`,
        `kinetic_middle_over_ends`, `coi_middle_median`, `negative_mass_middle_max`,
        `n_middle_layers` (the declared quantities below).
    """
    mid, ends = layer_region(table, 1 / 3, 2 / 3), ~layer_region(table, 1 / 6, 5 / 6)  # A_{l-1}
    mid_out = layer_region(table, 1 / 3, 2 / 3, at="p")  # of A_l and W_l
    gaps = gap_at(table.spectra, k)  # [L] s_k*/s_(k*+1) of W_l
    kin = table.column("kinetic")
    out: dict[str, float] = {}
    out["gap_middle_median"] = float(np.median(gaps[mid_out])) if mid_out.any() else float("nan")
    out["spread_H"] = float(np.std(table.column("rank_H")))
    out["spread_coi"] = float(np.std(table.column("coi_gamma")))
    out["spread_kinetic"] = float(np.std(2 * kin / leak))
    out["spread_ratio"] = out["spread_H"] / min(out["spread_coi"], out["spread_kinetic"])
    out["kinetic_middle_over_ends"] = float(kin[mid].mean() / kin[ends].mean())
    out["coi_middle_median"] = float(np.median(table.column("coi_gamma")[mid]))
    out["negative_mass_middle_max"] = float(table.column("negative_mass")[mid_out].max())
    out["n_middle_layers"] = float(mid_out.sum())
    return out


_TABLE = "the layer table of a trained leaky ResNet (training set)"
GAP_MIDDLE_MEDIAN = Quantity(
    "gap_middle_median",
    "median over the middle third of s_k*/s_(k*+1) of W_l (paper 000, Fig 1b)",
    function=portrait_summary,
    over=_TABLE + ", layers with p_l in [1/3, 2/3)",
    units="ratio",
    kinked=True,  # the gap at a kink-dependent layer
)
SPREAD_RATIO = Quantity(
    "spread_ratio",
    "std over layers of -(2/L~)H_l over the smaller of those of COI_gamma and (2/L~) "
    "kinetic (paper 000, Fig 1c: H flat while its parts vary)",
    function=portrait_summary,
    over=_TABLE + ", all layers",
    units="ratio",
    kinked=True,  # H reads the momenta
)
KINETIC_MIDDLE_OVER_ENDS = Quantity(
    "kinetic_middle_over_ends",
    "mean kinetic energy over the middle third over that at the ends (paper 000, §2.1)",
    function=portrait_summary,
    over=_TABLE + ", middle third and ends (p < 1/6, p >= 5/6)",
    units="ratio",
)
COI_MIDDLE_MEDIAN = Quantity(
    "coi_middle_median",
    "median COI_gamma over the middle third (paper 000, §2.1)",
    function=portrait_summary,
    over=_TABLE + ", layers with p_{l-1} in [1/3, 2/3)",
    units="rank units",
)
NEGATIVE_MASS_MIDDLE_MAX = Quantity(
    "negative_mass_middle_max",
    "largest (||A||^2 - ||relu A||^2)/||A||^2 over the middle third (paper 000, Prop 5)",
    function=portrait_summary,
    over=_TABLE + ", layers with p_l in [1/3, 2/3)",
    units="fraction",
)
N_MIDDLE_LAYERS = Quantity(
    "n_middle_layers",
    "the number of layers with p_l in [1/3, 2/3)",
    function=portrait_summary,
    over=_TABLE,
    units="count",
)
PORTRAIT = (
    GAP_MIDDLE_MEDIAN,
    SPREAD_RATIO,
    KINETIC_MIDDLE_OVER_ENDS,
    COI_MIDDLE_MEDIAN,
    NEGATIVE_MASS_MIDDLE_MAX,
    N_MIDDLE_LAYERS,
)

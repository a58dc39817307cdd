"""`leaky-resnet/layer-portrait` — paper 000, Fig 1b–d.

    bottlenecklab run leaky-resnet/layer-portrait --preset quick

A leaky ResNet looked at layer by layer at the largest `L~`: exactly `k*` singular values
of `W_l` stand out in the bottleneck (middle third, `p in [1/3, 2/3)`); `-(2/L~) H_l`
stays nearly flat while its components `COI_gamma` and `(2/L~) kinetic` vary (large at
the ends `p < 1/6`, `>= 5/6`); kinetic is small and COI near `k*` in the bottleneck
(§2.1); bottleneck representations are non-negative (Prop 5). Certified claims; the
kinetic and non-negativity bounds hold on the untrained fixed-point start too, so they are
reported (vacuity audit, `docs/lab-notes/vacuity.md`).

Expected (quick: the flagship's L~ = 24 net): `coi-bottleneck` passes; `bottleneck-gap`
and `hamiltonian-flat` not converged (kinked: <= 1e-4 needed); 2 reported; ~80-300 s.
Lab notes: `docs/lab-notes/leaky-resnet.md`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._checks import at_least, at_most, in_range, reported
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Measurement,
    Outcome,
    Points,
    Reads,
)
from bottlenecklab.experiments.leaky_resnet._common import LAYERS, PaperConfig, presets
from bottlenecklab.measure import LayerTable, Quantity
from bottlenecklab.measure._portrait import (
    COI_MIDDLE_MEDIAN,
    GAP_MIDDLE_MEDIAN,
    KINETIC_MIDDLE_OVER_ENDS,
    NEGATIVE_MASS_MIDDLE_MAX,
    PORTRAIT,
    SPREAD_RATIO,
    portrait_summary,
)


@dataclass(frozen=True)
class Config(PaperConfig):
    """Fig 1b–d at the paper's sizes (`PaperConfig`).

    Args:
        leaks: effective depths `L~` (one portrait each; claims at the largest).
        gap_bound: bound on `s_{k*} / s_{k*+1}` of `W_l` (median over the middle third).
        spread_ratio: bound on std(-(2/L~)H) / min(std(COI_gamma), std((2/L~) kinetic)).
        kinetic_ratio: bound on mean kinetic (middle third) / mean kinetic (ends).
        coi_window: accepted distance of the median middle-third `COI_gamma` from `k*`.
        negative_bound: bound on the largest middle-third negative mass.
    """

    leaks: tuple[float, ...] = (4.0, 8.0, 16.0)
    gap_bound: float = 3.0
    spread_ratio: float = 0.25
    kinetic_ratio: float = 0.1
    coi_window: float = 1.0
    negative_bound: float = 0.05


BASE = Config()  # its tolerances are the claims' windows (value stability: 1/4 of them)


def portrait(m: Measurement, model: Any, data: Any, cfg: Config) -> dict[str, float]:
    """The layer table's region statistics (`portrait_summary`) at `k*` and `L~`."""
    return portrait_summary(LayerTable(m.layers, m.spectra), data.k_star, float(model.leak))


def _at_top(pts: Points, quantity: Quantity, check, *bounds: float) -> Outcome:
    """`check(quantity at the largest L~, *bounds)`, with the point's facts."""
    top = pts.last
    outcome = check(top.value(quantity), *bounds)
    return outcome.with_facts(top=top.point["model.leak"], **top.scalars)


AT = "at L~ = {top:g}, "
BOTTLENECK_GAP = ClaimSpec(
    "bottleneck-gap",
    AT + "s_k*/s_(k*+1) of W_l in the middle third (median over {n_middle_layers:.0f} "
    "layers, k* = {cfg.task.k_star})",
    Reads((GAP_MIDDLE_MEDIAN,), window=BASE.gap_bound),
    lambda cfg, pts: _at_top(pts, GAP_MIDDLE_MEDIAN, at_least, cfg.gap_bound),
)
HAMILTONIAN_FLAT = ClaimSpec(
    "hamiltonian-flat",
    AT + "std over layers of -(2/L~)H_l ({spread_H:.3g}) over the smaller of those of "
    "COI_gamma ({spread_coi:.3g}) and (2/L~) kinetic ({spread_kinetic:.3g})",
    Reads((SPREAD_RATIO,), window=BASE.spread_ratio),
    lambda cfg, pts: _at_top(pts, SPREAD_RATIO, at_most, cfg.spread_ratio),
)
KINETIC_MIDDLE = ClaimSpec(  # vacuous as a bound (lab notes)
    "kinetic-middle",
    AT + "mean kinetic energy in the middle third over that at the ends (the spec's "
    "bound {cfg.kinetic_ratio:g} holds on the untrained net too: reported)",
    None,
    lambda cfg, pts: _at_top(pts, KINETIC_MIDDLE_OVER_ENDS, reported),
    source="000 §2.1",
)
COI_BOTTLENECK = ClaimSpec(
    "coi-bottleneck",
    AT + "median COI_gamma over the middle third (k* = {cfg.task.k_star})",
    Reads((COI_MIDDLE_MEDIAN,), window=2 * BASE.coi_window),
    lambda cfg, pts: _at_top(
        pts,
        COI_MIDDLE_MEDIAN,
        in_range,
        cfg.task.k_star - cfg.coi_window,
        cfg.task.k_star + cfg.coi_window,
    ),
    source="000 §2.1",
)
NON_NEGATIVE = ClaimSpec(  # vacuous as a bound (lab notes)
    "non-negative",
    AT + "largest negative mass (||A||^2 - ||relu A||^2)/||A||^2 in the middle third "
    "(the spec's bound {cfg.negative_bound:g} holds on the untrained net too: reported)",
    None,
    lambda cfg, pts: _at_top(pts, NEGATIVE_MASS_MIDDLE_MAX, reported),
    source="000 Prop 5",
)

EXPERIMENT = Experiment[Config](
    name="leaky-resnet/layer-portrait",
    source="000 Fig 1b-d",
    title="Layer by layer: k* singular values in the bottleneck, flat H, energies over p",
    config=BASE,
    presets=presets(
        smoke={"model.depth": 6, "leaks": (2.0,)},  # one leak, adaptive steps
        # The flagship's quick point at its largest L~ = 24, where the bottleneck is clearest.
        quick={"model.depth": 30, "leaks": (24.0,)},  # rho L~ = 0.8
    ),
    grid={"model.leak": "leaks"},
    measure=LAYERS.then(portrait, PORTRAIT),
    claims=[BOTTLENECK_GAP, HAMILTONIAN_FLAT, KINETIC_MIDDLE, COI_BOTTLENECK, NON_NEGATIVE],
    figures=("_leaky_resnet:layer_portrait",),
    doc=__doc__ or "",
)

"""`leaky-resnet/layer-portrait` — paper 000, Fig 1b–d.

    bottlenecklab run leaky-resnet/layer-portrait --preset quick

A leaky ResNet looked at layer by layer at the largest `L~`: exactly `k*` singular values
of `W_l` stand out in the bottleneck (middle third, `p in [1/3, 2/3)`); `-(2/L~) H_l`
stays nearly flat while its components `COI_gamma` and `(2/L~) kinetic` vary (large at
the ends `p < 1/6`, `>= 5/6`); kinetic is small and COI near `k*` in the bottleneck
(§2.1); bottleneck representations are non-negative (Prop 5). Certified claims; the
kinetic and non-negativity bounds hold on the untrained fixed-point start too, so they are
reported (vacuity audit, `docs/lab-notes/vacuity.md`).

Expected (quick preset: the flagship's L~ = 24 point): 2 passed, `bottleneck-gap` not
converged (the certification extension moves the gap), 2 reported; ~80-300 s.
Lab notes: `docs/lab-notes/leaky-resnet.md`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bottlenecklab.experiments._checks import at_least, at_most, in_range, reported
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Measurement,
    Outcome,
    Points,
    Reads,
)
from bottlenecklab.experiments.leaky_resnet._common import (
    PAPER_TRAINING,
    QUICK,
    SMOKE,
    PaperConfig,
    layer_measurement,
    region,
)
from bottlenecklab.measure import gap_at


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


def measure(model, data, cfg: Config) -> Measurement:
    """Layer table plus the portrait's region statistics (training set, float64)."""
    table, scalars = layer_measurement(model, data, cfg.train.lam, cfg.gamma0)
    k = data.k_star
    mid, ends = region(table, 1 / 3, 2 / 3), ~region(table, 1 / 6, 5 / 6)  # of A_{l-1}
    mid_out = region(table, 1 / 3, 2 / 3, at="p")  # of A_l and W_l
    gaps = gap_at(table.spectra, k)  # [L] s_k*/s_(k*+1) of W_l
    kin = table.column("kinetic")
    leak = float(model.leak)
    scalars["gap_middle_median"] = (
        float(np.median(gaps[mid_out])) if mid_out.any() else float("nan")
    )
    scalars["spread_H"] = float(np.std(table.column("rank_H")))
    scalars["spread_coi"] = float(np.std(table.column("coi_gamma")))
    scalars["spread_kinetic"] = float(np.std(2 * kin / leak))
    scalars["spread_ratio"] = scalars["spread_H"] / min(
        scalars["spread_coi"], scalars["spread_kinetic"]
    )
    scalars["kinetic_middle_over_ends"] = float(kin[mid].mean() / kin[ends].mean())
    scalars["coi_middle_median"] = float(np.median(table.column("coi_gamma")[mid]))
    scalars["negative_mass_middle_max"] = float(table.column("negative_mass")[mid_out].max())
    scalars["n_middle_layers"] = float(mid_out.sum())
    return Measurement(scalars=scalars, layers=table.rows, spectra=table.spectra)


def _at_top(pts: Points, value: str, check, *bounds: float) -> Outcome:
    """`check(scalar value of the largest L~, *bounds)`, with the point's facts."""
    top = pts.last
    return check(top.scalars[value], *bounds).with_facts(top=top.point["model.leak"], **top.scalars)


AT = "at L~ = {top:g}, "
CLAIMS = [
    ClaimSpec(
        "bottleneck-gap",
        AT + "s_k*/s_(k*+1) of W_l in the middle third (median over {n_middle_layers:.0f} "
        "layers, k* = {cfg.task.k_star})",
        Reads(("gap_middle_median",), window=BASE.gap_bound, kinked=True),
        lambda cfg, pts: _at_top(pts, "gap_middle_median", at_least, cfg.gap_bound),
    ),
    ClaimSpec(
        "hamiltonian-flat",
        AT + "std over layers of -(2/L~)H_l ({spread_H:.3g}) over the smaller of those of "
        "COI_gamma ({spread_coi:.3g}) and (2/L~) kinetic ({spread_kinetic:.3g})",
        Reads(("spread_ratio",), window=BASE.spread_ratio, kinked=True),
        lambda cfg, pts: _at_top(pts, "spread_ratio", at_most, cfg.spread_ratio),
    ),
    ClaimSpec(  # vacuous as a bound (lab notes)
        "kinetic-middle",
        AT + "mean kinetic energy in the middle third over that at the ends (the spec's "
        "bound {cfg.kinetic_ratio:g} holds on the untrained net too: reported)",
        None,
        lambda cfg, pts: _at_top(pts, "kinetic_middle_over_ends", reported),
        source="000 §2.1",
    ),
    ClaimSpec(
        "coi-bottleneck",
        AT + "median COI_gamma over the middle third (k* = {cfg.task.k_star})",
        Reads(("coi_middle_median",), window=2 * BASE.coi_window),
        lambda cfg, pts: _at_top(
            pts,
            "coi_middle_median",
            in_range,
            cfg.task.k_star - cfg.coi_window,
            cfg.task.k_star + cfg.coi_window,
        ),
        source="000 §2.1",
    ),
    ClaimSpec(  # vacuous as a bound (lab notes)
        "non-negative",
        AT + "largest negative mass (||A||^2 - ||relu A||^2)/||A||^2 in the middle third "
        "(the spec's bound {cfg.negative_bound:g} holds on the untrained net too: reported)",
        None,
        lambda cfg, pts: _at_top(pts, "negative_mass_middle_max", reported),
        source="000 Prop 5",
    ),
]

PRESETS = {
    "smoke": {**SMOKE, "model.depth": 6, "leaks": (2.0,)},  # one leak, adaptive steps
    # The flagship's quick point at its largest L~ = 24, where the bottleneck is clearest.
    "quick": {**QUICK, "model.depth": 30, "leaks": (24.0,)},  # rho L~ = 0.8
    "paper": PAPER_TRAINING,  # the paper's sizes and lam, continuation in lam (_common)
}

EXPERIMENT = Experiment[Config](
    name="leaky-resnet/layer-portrait",
    source="000 Fig 1b-d",
    title="Layer by layer: k* singular values in the bottleneck, flat H, energies over p",
    config=BASE,
    presets=PRESETS,
    grid={"model.leak": "leaks"},
    measure=measure,
    claims=CLAIMS,
    figures=("_leaky_resnet:layer_portrait",),
    doc=__doc__ or "",
)

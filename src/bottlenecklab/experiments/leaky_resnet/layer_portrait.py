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

from bottlenecklab.experiments._claims import at_least, at_most, in_range, reported, unmeasured
from bottlenecklab.experiments._spec import (
    Claim,
    Experiment,
    Gate,
    Measurement,
    PointResult,
    Reads,
)
from bottlenecklab.experiments.leaky_resnet._common import (
    LEAKY_GATE,
    PAPER_TRAINING,
    layer_measurement,
    region,
)
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import PhaseConfig, TrainConfig

SOURCE = "000 Fig 1b-d"


@dataclass(frozen=True)
class Config:
    """Fig 1b–d at the paper's sizes (App. B): `[20, 5, 20]` MLP teacher, `w = 200`, `L = 50`.

    Args:
        leaks: effective depths `L~` (one portrait each; claims at the largest).
        gamma0: relative ridge of the stable quantities.
        gap_bound: bound on `s_{k*} / s_{k*+1}` of `W_l` (median over the middle third).
        spread_ratio: bound on std(-(2/L~)H) / min(std(COI_gamma), std((2/L~) kinetic)).
        kinetic_ratio: bound on mean kinetic (middle third) / mean kinetic (ends).
        coi_window: accepted distance of the median middle-third `COI_gamma` from `k*`.
        negative_bound: bound on the largest middle-third negative mass.
        certify: the convergence certificate (`_common.LEAKY_GATE`: stationarity <= 0.2,
            what Newton-converged quick networks reach at the kinks; value stability over the
            certification extension, `_common.EXTENSION`).
    """

    task: TeacherConfig = TeacherConfig(dims=(20, 5, 20), kind="mlp", n_train=1000, n_test=1000)
    model: LeakyResNetConfig = LeakyResNetConfig(width=200, depth=50, schedule="adaptive")
    train: TrainConfig = TrainConfig(
        lam=0.002,
        phases=(PhaseConfig("adam", 20_000, 1e-3), PhaseConfig("sgd", 10_000, 1e-4)),
    )
    seed: int = 0
    leaks: tuple[float, ...] = (4.0, 8.0, 16.0)
    gamma0: float = 1e-3
    gap_bound: float = 3.0
    spread_ratio: float = 0.25
    kinetic_ratio: float = 0.1
    coi_window: float = 1.0
    negative_bound: float = 0.05
    certify: Gate = LEAKY_GATE


def measure(model, data, cfg: Config) -> Measurement:
    """Layer table plus the portrait's region statistics (training set, float64)."""
    table, scalars = layer_measurement(model, data, cfg.train.lam, cfg.gamma0)
    k = data.k_star
    mid, ends = region(table, 1 / 3, 2 / 3), ~region(table, 1 / 6, 5 / 6)  # of A_{l-1}
    mid_out = region(table, 1 / 3, 2 / 3, at="p")  # of A_l and W_l
    sv: dict[int, dict[int, float]] = {}
    for s in table.spectra:
        if s["matrix"] == "W":
            sv.setdefault(int(s["layer"]), {})[int(s["index"])] = float(s["value"])
    gaps = np.array([sv[l].get(k, 0.0) / max(sv[l].get(k + 1, 0.0), 1e-300) for l in sorted(sv)])
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


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """The five claims of Fig 1b–d at the largest `L~` (spec `leaky-resnets.md`)."""
    done = sorted((r for r in results if r.status == "done"), key=lambda r: r.point["model.leak"])
    names = (
        ("bottleneck-gap", "k* singular values stand out"),
        ("hamiltonian-flat", "H varies less than its components"),
        ("kinetic-middle", "kinetic small in the bottleneck"),
        ("coi-bottleneck", "COI near k* in the bottleneck"),
        ("non-negative", "bottleneck representations non-negative"),
    )
    if not done:
        return [unmeasured(c, SOURCE, s, "see spec", "every training diverged") for c, s in names]
    r = done[-1]
    s = r.scalars
    k = cfg.task.k_star
    at = f"at L~ = {r.point['model.leak']:g}"
    spread = s["spread_ratio"]
    out = [
        at_least(
            "bottleneck-gap",
            SOURCE,
            f"{at}, s_k*/s_(k*+1) of W_l in the middle third (median over "
            f"{int(s['n_middle_layers'])} layers, k* = {k})",
            s["gap_middle_median"],
            cfg.gap_bound,
        ),
        at_most(
            "hamiltonian-flat",
            SOURCE,
            f"{at}, std over layers of -(2/L~)H_l ({s['spread_H']:.3g}) over the smaller of "
            f"those of COI_gamma ({s['spread_coi']:.3g}) and (2/L~) kinetic "
            f"({s['spread_kinetic']:.3g})",
            spread,
            cfg.spread_ratio,
        ),
        reported(  # vacuous as a bound: the untrained fixed-point start reads 0.0052
            "kinetic-middle",
            "000 §2.1",
            f"{at}, mean kinetic energy in the middle third over that at the ends (the "
            f"spec's bound {cfg.kinetic_ratio:g} holds on the untrained net too: reported)",
            s["kinetic_middle_over_ends"],
        ),
        in_range(
            "coi-bottleneck",
            "000 §2.1",
            f"{at}, median COI_gamma over the middle third (k* = {k})",
            s["coi_middle_median"],
            k - cfg.coi_window,
            k + cfg.coi_window,
        ),
        reported(  # vacuous as a bound: the untrained fixed-point start reads 4.9e-4
            "non-negative",
            "000 Prop 5",
            f"{at}, largest negative mass (||A||^2 - ||relu A||^2)/||A||^2 in the middle "
            f"third (the spec's bound {cfg.negative_bound:g} holds on the untrained net too: "
            "reported)",
            s["negative_mass_middle_max"],
        ),
    ]
    return out


PRESETS = {
    # Seconds: tiny teacher and net, one leak; exercises every stage.
    "smoke": {
        "task.dims": (6, 2, 6),
        "task.hidden": 16,
        "task.n_train": 48,
        "task.n_test": 48,
        "model.width": 8,
        "model.depth": 6,
        "leaks": (2.0,),
        "train.phases": (
            {"optimizer": "adam", "steps": 40, "lr": 1e-2},
            {"optimizer": "lbfgs", "steps": 10, "lr": 1.0},
        ),
        "train.log_every": 10,
        "train.checkpoint_every": 20,
    },
    # Minutes on 2 cores: exactly the flagship's quick point at its largest L~ = 24
    # (`hamiltonian-vs-depth`), where the bottleneck is clearest, with its recipe (Adam,
    # L-BFGS, then trust-region Newton), which certifies.
    "quick": {
        "task.n_train": 300,  # ~80 s on one core
        "model.width": 40,
        "model.depth": 30,  # rho L~ = 0.8 at L~ = 24
        "model.schedule": "equidistant",
        "model.init_scale": 0.064,  # fixed-point start, noise std 0.01 L~ at w = 40
        "train.lam": 0.05,  # reachable optimum in thousands of steps
        "train.dtype": "float64",  # the certificate and Newton need float64
        "leaks": (24.0,),
        "train.phases": (
            {"optimizer": "adam", "steps": 2000, "lr": 1e-3, "schedule": "cosine"},
            {"optimizer": "lbfgs", "steps": 3000, "lr": 1.0},
            {"optimizer": "newton", "steps": 400, "lr": 1.0},
        ),
        "train.log_every": 200,
        "train.checkpoint_every": 1000,
    },
    # The paper's sizes and schedule (App. B): the base config.
    "paper": PAPER_TRAINING,  # the paper's sizes and lam, continuation in lam (_common)
}

EXPERIMENT = Experiment(
    name="leaky-resnet/layer-portrait",
    source=SOURCE,
    title="Layer by layer: k* singular values in the bottleneck, flat H, energies over p",
    config=Config(),
    presets=PRESETS,
    grid={"model.leak": "leaks"},
    measure=measure,
    claims=claims,
    figures=("layer_portrait",),
    doc=__doc__ or "",
    # What each claim reads, with its tolerance window (value stability: 1/4 of it).
    reads={
        "bottleneck-gap": Reads(("gap_middle_median",), window=3.0),  # bound 3 above 0
        "hamiltonian-flat": Reads(("spread_ratio",), window=0.25),  # bound 0.25 above 0
        "coi-bottleneck": Reads(("coi_middle_median",), window=2.0),  # k* +- 1
    },
)

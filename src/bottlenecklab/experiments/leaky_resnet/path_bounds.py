"""`leaky-resnet/path-bounds` — paper 000, Fig 3 (App. B) and Theorem 4.

    bottlenecklab run leaky-resnet/path-bounds --preset quick

Leaky ResNets at several `L~`: path length sublinear (`l_gamma / L~` falls, slope <= 1/2),
`max||B||`, `max||B^T S||` bounded (slope <= 1/4), Thm 4 (1) at every `L~` (paper's, the
corrected `sqrt(gamma) c`, one ridge `1/L~`) and (2) at every layer; certified. The paper's
"relatively constant" path length (slope <= 0.1) is asserted: a registered finding.

Expected (quick preset, the flagship's points L~ = 6, 12, 24): sublinear and B-bounded
pass, the finding `path-length-constant` fails (slope 0.355); BS-bounded and Thm 4 are
not-converged at seed 0 (values move over the Newton phase), and Thm 4 (2) holds at 19/30
layers at L~ = 24. ~80-300 s/point idle. `docs/lab-notes/leaky-resnet.md`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bottlenecklab.experiments._claims import at_least, at_most, reported, unmeasured
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
)
from bottlenecklab.measure import (
    balancedness_residual,
    certify,
    loglog_slope,
    momentum_bounds,
    theorem4,
    theorem4_constant_gamma,
)
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import PhaseConfig, TrainConfig

SOURCE = "000 Fig 3"


@dataclass(frozen=True)
class Config:
    """Fig 3 at the paper's sizes (App. B): `[20, 5, 20]` MLP teacher, `w = 200`, `L = 50`.

    Args:
        leaks: effective depths `L~` of the sweep.
        gamma0: relative ridge (`gamma_l = gamma0 ||K_l||_op`).
        max_exponent: "bounded as L~ grows" (`max||B||`, `max||B^T S||`) means a log-log
            slope against `L~` of at most this (a quantity growing like `sqrt(L~)` has
            slope 1/2 and fails; a bounded one has slope <= 0 asymptotically; 1/4 is the
            midpoint).
        sublinear_exponent: the path length is sublinear (spec decision): `l_gamma / L~`
            strictly decreasing over the sweep and log-log slope of `l_gamma` at most this
            (Thm 4's error term `(l_gamma/L~ + gamma c)^2` then decays like `1/L~`).
        constant_exponent: the paper's "relatively constant" path length (Fig 3): slope
            at most this (a registered finding: measured 0.34).
        per_layer_fraction: required fraction of layers where Thm 4 (2) holds.
        certify: the convergence certificate (`_common.LEAKY_GATE`: stationarity <= 0.2,
            what Newton-converged quick networks reach at the kinks; earlier state in the
            middle of the stalled Newton phase).
    """

    task: TeacherConfig = TeacherConfig(dims=(20, 5, 20), kind="mlp", n_train=1000, n_test=1000)
    model: LeakyResNetConfig = LeakyResNetConfig(width=200, depth=50, schedule="adaptive")
    train: TrainConfig = TrainConfig(
        lam=0.002,
        phases=(PhaseConfig("adam", 20_000, 1e-3), PhaseConfig("sgd", 10_000, 1e-4)),
    )
    seed: int = 0
    leaks: tuple[float, ...] = (2.0, 4.0, 6.0, 8.0, 12.0, 16.0)
    gamma0: float = 1e-3
    max_exponent: float = 0.25
    sublinear_exponent: float = 0.5
    constant_exponent: float = 0.1
    per_layer_fraction: float = 1.0
    certify: Gate = LEAKY_GATE


def measure(model, data, cfg: Config) -> Measurement:
    """Layer table, Fig 3 quantities, both sides of Thm 4 and the Prop 10 residual."""
    table, scalars = layer_measurement(model, data, cfg.train.lam, cfg.gamma0)
    leak = float(model.leak)
    scalars.update(momentum_bounds(table))
    scalars.update(theorem4(table, leak))
    der = certify(model, data, cfg.train.lam, tau=cfg.certify.tau).derivatives  # the table's
    scalars.update(
        theorem4_constant_gamma(
            model, data.x_train, data.y_train, cfg.train.lam, 1.0 / leak, derivatives=der
        )
    )
    scalars["balancedness_max"] = float(abs(balancedness_residual(table, leak)).max())
    return Measurement(scalars=scalars, layers=table.rows, spectra=table.spectra)


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """Fig 3 boundedness and Thm 4 (1) at every `L~`, and (2) per layer."""
    done = sorted((r for r in results if r.status == "done"), key=lambda r: r.point["model.leak"])
    ids = (
        "path-length-sublinear",
        "path-length-constant",
        "B-bounded",
        "BS-bounded",
        "thm4-upper",
        "thm4-lower",
        "thm4-lower-corrected",
        "thm4-per-layer",
        "thm4-per-layer-negative-arg",
        "thm4-constant-gamma",
    )
    if len(done) < len(results) or not done:
        why = f"{len(results) - len(done)} of {len(results)} trainings diverged"
        return [unmeasured(i, SOURCE, i, "see spec", why) for i in ids]
    leaks = ", ".join(f"{r.point['model.leak']:g}" for r in done)

    def vals(key: str) -> list[float]:
        return [r.scalars[key] for r in done]

    def listed(key: str) -> str:
        return ", ".join(f"{v:.3g}" for v in vals(key))

    leak_values = [r.point["model.leak"] for r in done]

    def slope(key: str) -> float:
        return loglog_slope(leak_values, vals(key)) if len(done) >= 2 else float("nan")

    per_leak = [v / x for v, x in zip(vals("path_length"), leak_values)]
    falling = len(per_leak) >= 2 and all(b < a for a, b in zip(per_leak, per_leak[1:]))
    path_slope = slope("path_length")
    sublinear_ok = falling and math.isfinite(path_slope) and path_slope <= cfg.sublinear_exponent
    out = [
        Claim(
            "path-length-sublinear",
            SOURCE,
            f"the path length l_gamma grows sublinearly in L~ ({leaks}): l_gamma / L~ "
            f"({', '.join(f'{v:.3g}' for v in per_leak)}) strictly decreasing, and log-log "
            f"slope of l_gamma (values {listed('path_length')}) at most "
            f"{cfg.sublinear_exponent:g}",
            f"l_gamma / L~ strictly decreasing; slope <= {cfg.sublinear_exponent:g}",
            f"slope {path_slope:.4g}; l_gamma / L~ "
            + ("strictly decreasing" if falling else "NOT strictly decreasing"),
            sublinear_ok,
        ),
        at_most(
            "path-length-constant",
            "000 App B, Fig 3",
            f"the path length l_gamma stays relatively constant as L~ grows ({leaks}): "
            f"log-log slope against L~ (values {listed('path_length')})",
            path_slope,
            cfg.constant_exponent,
        ),
    ]
    out += [
        at_most(
            f"{name}-bounded",
            SOURCE,
            f"{label} stays bounded as L~ grows ({leaks}): log-log slope against L~ "
            f"(values {listed(key)})",
            slope(key),
            cfg.max_exponent,
        )
        for name, label, key in (
            ("B", "max_l ||B_l||", "B_max"),
            ("BS", "max_l ||B_l^T S_(l-1)||", "BS_max"),
        )
    ]
    upper_gap = [r.scalars["thm4_upper"] - r.scalars["thm4_middle"] for r in done]
    lower_gap = [r.scalars["thm4_middle"] - r.scalars["thm4_lower"] for r in done]
    lower_c_gap = [r.scalars["thm4_middle"] - r.scalars["thm4_lower_corrected"] for r in done]
    middle = listed("thm4_middle")
    out += [
        at_least(
            "thm4-upper",
            "000 Thm 4",
            "gamma c^2 - (-(2/L~)H - min COI_gamma) >= 0 at every L~: smallest over the sweep "
            f"(middle terms {middle}; upper bounds {listed('thm4_upper')}). Implied by "
            "coi-from-above of leaky-resnet/hamiltonian-vs-depth wherever that holds with zero "
            "tolerance (the middle term is then <= 0 <= gamma c^2); its own content is a "
            "positive middle term below gamma c^2",
            min(upper_gap),
            0.0,
        ),
        at_least(
            "thm4-lower",
            "000 Thm 4",
            "(-(2/L~)H - min COI_gamma) + (l_gamma/L~ + gamma c)^2 >= 0 at every L~ (paper's "
            f"form): smallest over the sweep (lower bounds {listed('thm4_lower')})",
            min(lower_gap),
            0.0,
        ),
        at_least(
            "thm4-lower-corrected",
            "000 Thm 4",
            "the same with sqrt(gamma) c in place of gamma c (the form the proof supports): "
            f"smallest over the sweep (lower bounds {listed('thm4_lower_corrected')})",
            min(lower_c_gap),
            0.0,
        ),
        at_least(
            "thm4-per-layer",
            "000 Thm 4",
            "-L~ gamma c <= ||V_l|| - L~ sqrt(COI_gamma,l + (2/L~)H) <= 2 L~ gamma c: smallest "
            f"fraction of layers where it holds (paper's form; corrected form: "
            f"{listed('thm4_per_layer_frac_corrected')})",
            min(vals("thm4_per_layer_frac")),
            cfg.per_layer_fraction,
        ),
        reported(
            "thm4-per-layer-negative-arg",
            "000 Thm 4",
            "(2) needs COI_gamma,l + (2/L~)H >= 0 under its square root, which the proof's "
            "identity does not give (it bounds it below by -gamma_l ||B_l||^2): largest "
            "fraction of layers where it is negative (per L~: "
            f"{listed('thm4_per_layer_negative_arg')}; smallest value "
            f"{listed('thm4_per_layer_arg_min')}, against -gamma_l ||B_l||^2 up to "
            f"{listed('thm4_per_layer_arg_floor')}); fraction where (2) holds with it "
            f"clipped at 0: {listed('thm4_per_layer_frac_clipped')}",
            max(vals("thm4_per_layer_negative_arg")),
        ),
    ]
    const_gap = [
        min(
            r.scalars["thm4_upper_const"] - r.scalars["thm4_middle_const"],
            r.scalars["thm4_middle_const"] - r.scalars["thm4_lower_const"],
        )
        for r in done
    ]
    out.append(
        at_least(
            "thm4-constant-gamma",
            "000 Thm 4",
            "Thm 4 (1) as stated, with one ridge gamma = 1/L~ for all layers (paper's "
            "suggestion) and the paper's gamma c: smallest margin of either side over the sweep "
            f"(middle terms {listed('thm4_middle_const')}; upper {listed('thm4_upper_const')}; "
            f"lower {listed('thm4_lower_const')})",
            min(const_gap),
            0.0,
        )
    )
    return out


# A scalar's relative change r at one end of the sweep moves a log-log slope by at most
# r / ln(L~max / L~min) (ln 4 at the quick sweep 6..24): a slope's tolerance window
# `width` becomes a relative window `width * ln 4` on the scalars it is fitted to.
_LN_RANGE = math.log(24.0 / 6.0)

PRESETS = {
    # Seconds: tiny teacher and net, two leaks.
    "smoke": {
        "task.dims": (6, 2, 6),
        "task.hidden": 16,
        "task.n_train": 48,
        "task.n_test": 48,
        "model.width": 8,
        "model.depth": 6,
        "leaks": (1.0, 2.0),
        "train.phases": (
            {"optimizer": "adam", "steps": 40, "lr": 1e-2},
            {"optimizer": "lbfgs", "steps": 10, "lr": 1.0},
        ),
        "train.log_every": 10,
        "train.checkpoint_every": 20,
    },
    # Minutes on 2 cores: exactly the flagship's quick points (`hamiltonian-vs-depth`)
    # at L~ = 6, 12, 24, with its recipe (Adam, L-BFGS, then trust-region Newton), which
    # certifies; L-BFGS alone (8000 steps) stalls above the certificate's threshold.
    "quick": {
        "task.n_train": 300,  # ~80 s per L~ on one core
        "model.width": 40,
        "model.depth": 30,  # rho L~ <= 0.8 up to L~ = 24
        "model.schedule": "equidistant",
        "model.init_scale": 0.064,  # fixed-point start, noise std 0.01 L~ at w = 40
        "train.lam": 0.05,  # reachable optimum in thousands of steps
        "train.dtype": "float64",  # the certificate and Newton need float64
        "leaks": (6.0, 12.0, 24.0),  # a factor 4 in L~ for the slopes
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

_THM4 = ("thm4_middle", "thm4_upper", "thm4_lower", "thm4_lower_corrected")

EXPERIMENT = Experiment(
    name="leaky-resnet/path-bounds",
    source=SOURCE,
    title="Path length sublinear, max||B||, max||B^T S|| bounded in L~; Theorem 4 holds",
    config=Config(),
    presets=PRESETS,
    grid={"model.leak": "leaks"},
    measure=measure,
    claims=claims,
    figures=("path_bounds", "layer_portrait"),
    doc=__doc__ or "",
    # What each claim reads, per L~, with its tolerance window (value stability: 1/4).
    reads={
        # slope windows [0, 0.5], [0, 0.1], [0, 0.25] as relative windows (see _LN_RANGE)
        "path-length-sublinear": Reads(("path_length",), 0.5 * _LN_RANGE, relative=True),
        "path-length-constant": Reads(("path_length",), 0.1 * _LN_RANGE, relative=True),
        "B-bounded": Reads(("B_max",), 0.25 * _LN_RANGE, relative=True),
        "BS-bounded": Reads(("BS_max",), 0.25 * _LN_RANGE, relative=True),
        # the middle term -(2/L~)H - min COI_gamma, in rank units: the window of the
        # flagship's coi-from-above (the same quantity)
        "thm4-upper": Reads(_THM4[:2], window=0.25),
        "thm4-lower": Reads(_THM4[:1] + _THM4[2:3], window=0.25),
        "thm4-lower-corrected": Reads(_THM4[:1] + _THM4[3:], window=0.25),
        "thm4-per-layer": Reads(("thm4_middle", "thm4_per_layer_frac"), window=0.25),
        "thm4-constant-gamma": Reads(
            ("thm4_middle_const", "thm4_upper_const", "thm4_lower_const"), window=0.25
        ),
    },
)

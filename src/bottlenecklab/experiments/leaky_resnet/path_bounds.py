"""`leaky-resnet/path-bounds` — paper 000, Fig 3 (App. B) and Theorem 4.

    bottlenecklab run leaky-resnet/path-bounds --preset quick

Leaky ResNets at several `L~` (quick: fixed `rho L~`): path length sublinear (`l_gamma /
L~` falls, slope <= 1/2), `max||B||`, `max||B^T S||` bounded (slope <= 1/4), Thm 4 (1) at
every `L~` and (2) at every layer with its own `gamma_l`, `||B_l||` and
`sqrt(max(a_l, 0))`, at `gamma_l = gamma0 ||K_l||_op` and at `1/L~`; certified. The
paper's "relatively constant" path length (slope <= 0.1) is asserted on the plain length
`sum rho_l ||V_l||_F` (a registered finding); the kernel-metric lengths are reported.

Expected (quick, seed 0): the finding `path-length-constant`, `B-bounded` and
`thm4-per-layer` fail (a question for the spec: they pass at fixed depth 30); 38 min at
load ~10 on 2 cores (470 s of CPU). Numbers: `docs/lab-notes/leaky-resnet.md`.
"""

from __future__ import annotations

import dataclasses
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
    hamiltonian_bounds,
    hamiltonian_bounds_constant_gamma,
    loglog_slope,
    momentum_bounds,
    ridge_layers,
    speed_window,
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
        constant_exponent: the paper's "relatively constant" path length (Fig 3, App B:
            the plain length `sum rho_l ||V_l||_F`): log-log slope at most this.
        rho_leak: a fixed `rho L~` for the sweep (equidistant steps; spec: discretization
            confounds `L~` at fixed `L`): each point's depth is then
            `round(L~ / rho_leak)`, replacing `model.depth`; `None` keeps `model.depth`.
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
    leaks: tuple[float, ...] = (2.0, 4.0, 6.0, 8.0, 12.0, 16.0)
    gamma0: float = 1e-3
    max_exponent: float = 0.25
    sublinear_exponent: float = 0.5
    constant_exponent: float = 0.1
    rho_leak: float | None = None
    certify: Gate = LEAKY_GATE

    def __post_init__(self) -> None:
        # Every override (`model.leak` of a grid point included) rebuilds the config, so
        # the depth follows the leak here.
        if self.rho_leak is not None:
            if not self.rho_leak > 0:
                raise ValueError(f"rho_leak must be > 0, got {self.rho_leak}")
            depth = max(1, round(self.model.leak / self.rho_leak))
            object.__setattr__(self, "model", dataclasses.replace(self.model, depth=depth))


def measure(model, data, cfg: Config) -> Measurement:
    """Layer table, Fig 3 quantities (three path lengths), both sides of Thm 4 (at the
    layer ridges and at `gamma = 1/L~`) and the Prop 10 residual.

    Per layer (`layers.csv`), Thm 4 (2) at both ridges: `thm4_arg` (`a_l`), `thm4_used`
    (the signed fraction of the window used), and the same with the suffix `_const`.
    """
    table, scalars = layer_measurement(model, data, cfg.train.lam, cfg.gamma0)
    leak = float(model.leak)
    scalars.update(momentum_bounds(table))
    scalars.update(hamiltonian_bounds(table, leak))
    der = certify(model, data, cfg.train.lam, tau=cfg.certify.tau).derivatives  # the table's
    X, Y = data.x_train, data.y_train
    ridge = ridge_layers(model, X, Y, cfg.train.lam, 1.0 / leak, derivatives=der)
    scalars.update(
        hamiltonian_bounds_constant_gamma(model, X, Y, cfg.train.lam, 1.0 / leak, layers=ridge)
    )
    own, one = speed_window(table, leak), ridge.window(leak)
    rows = [
        row
        | {
            "thm4_arg": float(own.arg[i]),
            "thm4_used": float(own.used[i]),
            "thm4_arg_const": float(one.arg[i]),
            "thm4_used_const": float(one.used[i]),
        }
        for i, row in enumerate(table.rows)
    ]
    scalars["rho_leak_max"] = float(table.column("rho").max() * leak)
    scalars["balancedness_max"] = float(abs(balancedness_residual(table, leak)).max())
    return Measurement(scalars=scalars, layers=rows, spectra=table.spectra)


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """Fig 3 boundedness and Thm 4 (1) at every `L~`, and (2) per layer."""
    done = sorted((r for r in results if r.status == "done"), key=lambda r: r.point["model.leak"])
    ids = (
        "path-length-sublinear",
        "path-length-constant",
        "path-length-metric-slopes",
        "B-bounded",
        "BS-bounded",
        "thm4-upper",
        "thm4-lower",
        "thm4-lower-corrected",
        "thm4-per-layer",
        "thm4-per-layer-paper-form",
        "thm4-per-layer-negative-arg",
        "thm4-constant-gamma",
    )
    if len(done) < len(results) or not done:
        why = f"{len(results) - len(done)} of {len(results)} trainings diverged"
        return [unmeasured(i, SOURCE, i, "see spec", why) for i in ids]
    leaks = ", ".join(f"{r.point['model.leak']:g}" for r in done)
    depths = ", ".join(str(len(r.layers)) for r in done)

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
            f"the path length sum_l rho_l ||V_l||_F (App B's int ||dA_p/dp|| dp, no kernel "
            f"metric) stays relatively constant as L~ grows ({leaks}; depths {depths}, "
            f"rho L~ up to {max(vals('rho_leak_max')):.3g}): log-log slope against L~ (values "
            f"{listed('path_length_plain')})",
            slope("path_length_plain"),
            cfg.constant_exponent,
        ),
        reported(
            "path-length-metric-slopes",
            "000 Thm 4, Fig 3",
            f"log-log slope against L~ of the path length in the (K + gamma I) metric at "
            f"gamma = 1/L~ (values {listed('path_length_const')}): "
            f"{slope('path_length_const'):.3g}; at gamma_l = {cfg.gamma0:g} ||K_l||_op "
            f"(l_gamma, values {listed('path_length')}): {path_slope:.3g}; the measured "
            "number is the first",
            slope("path_length_const"),
        ),
    ]
    out += [
        reported(  # the fixed-point start meets the bound too (vacuity audit V6)
            f"{name}-bounded",
            SOURCE,
            f"{label} stays bounded as L~ grows ({leaks}): log-log slope against L~ "
            f"(values {listed(key)}); the bound {cfg.max_exponent:g} holds on the untrained "
            "nets too: reported",
            slope(key),
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

    def negative_layers(key: str) -> str:
        per = [
            ",".join(str(int(row["layer"])) for row in r.layers if row[key] < 0) or "none"
            for r in done
        ]
        return "; ".join(f"L~ = {x:g}: {p}" for x, p in zip(leak_values, per))

    used = [
        max(a, b) for a, b in zip(vals("thm4_window_used_max"), vals("thm4_window_used_max_const"))
    ]
    out += [
        reported(  # holds on an untrained net by 9532 (vacuity audit V7): the lower sides fail
            "thm4-upper",
            "000 Thm 4",
            "gamma c^2 - (-(2/L~)H - min COI_gamma) at every L~: smallest over the sweep "
            f"(middle terms {middle}; upper bounds {listed('thm4_upper')}); >= 0 also on "
            "untrained nets, so reported: thm4-lower(-corrected) carry Thm 4 (1)",
            min(upper_gap),
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
        at_most(
            "thm4-per-layer",
            "000 Thm 4",
            "-L~ sqrt(gamma_l) ||B_l|| <= ||V_l|| - L~ sqrt(max(a_l, 0)) <= 2 L~ sqrt(gamma_l) "
            "||B_l||, a_l = COI_gamma,l + (2/L~)H, at every layer with its own gamma_l and "
            "||B_l|| (the form the proof supports), at gamma_l = "
            f"{cfg.gamma0:g} ||K_l||_op and at gamma = 1/L~: the largest fraction of its "
            "window a layer uses, over layers, both ridges and the sweep (at most 1 where "
            f"it holds; per L~ at gamma_l: {listed('thm4_window_used_max')}; at 1/L~: "
            f"{listed('thm4_window_used_max_const')})",
            max(used),
            1.0,
        ),
        reported(
            "thm4-per-layer-paper-form",
            "000 Thm 4",
            "fraction of layers where (2) holds as the paper writes it (gamma c with "
            f"c = max_l ||B_l||, sqrt(a_l) undefined where a_l < 0), per L~ at gamma_l = "
            f"{cfg.gamma0:g} ||K_l||_op: {listed('thm4_per_layer_frac')}; smallest over the "
            "sweep",
            min(vals("thm4_per_layer_frac")),
        ),
        reported(
            "thm4-per-layer-negative-arg",
            "000 Thm 4",
            "layers where a_l = COI_gamma,l + (2/L~)H < 0 (the proof's identity bounds it "
            "below only by -gamma_l ||B_l||^2; inside the bottleneck it tends to "
            "-gamma_l Tr[B^T K (K + gamma I)^-1 B]): at gamma_l "
            f"({negative_layers('thm4_arg')}; smallest a_l {listed('thm4_arg_min')}) and at "
            f"gamma = 1/L~ ({negative_layers('thm4_arg_const')}; smallest a_l "
            f"{listed('thm4_arg_min_const')}); largest number of such layers at gamma_l",
            max(vals("thm4_arg_negative")),
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
        "rho_leak": 1 / 3,  # depths 3, 6
        "leaks": (1.0, 2.0),
        "train.phases": (
            {"optimizer": "adam", "steps": 40, "lr": 1e-2},
            {"optimizer": "lbfgs", "steps": 10, "lr": 1.0},
        ),
        "train.log_every": 10,
        "train.checkpoint_every": 20,
    },
    # Minutes on 2 cores: the flagship's quick setting (`hamiltonian-vs-depth`) at
    # L~ = 6, 12, 24 with its recipe (Adam, L-BFGS, then trust-region Newton), which
    # certifies (L-BFGS alone, 8000 steps, stalls above the certificate's threshold), at a
    # fixed rho L~ = 0.4 (depths 15, 30, 60; the spec's fourth review: at a fixed depth 30
    # the discretization, rho L~ = 0.2 to 0.8, changes with L~). L~ = 12 is the
    # flagship's point.
    "quick": {
        "task.n_train": 300,
        "model.width": 40,
        "rho_leak": 0.4,
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
        "path-length-constant": Reads(("path_length_plain",), 0.1 * _LN_RANGE, relative=True),
        # the middle term -(2/L~)H - min COI_gamma, in rank units: the window of the
        # flagship's coi-from-above (the same quantity)
        "thm4-lower": Reads(_THM4[:1] + _THM4[2:3], window=0.25),
        "thm4-lower-corrected": Reads(_THM4[:1] + _THM4[3:], window=0.25),
        # the fraction of its window a layer uses: the claim's scale is the window (0 to 1)
        "thm4-per-layer": Reads(("thm4_window_used_max", "thm4_window_used_max_const"), window=1.0),
        "thm4-constant-gamma": Reads(
            ("thm4_middle_const", "thm4_upper_const", "thm4_lower_const"), window=0.25
        ),
    },
)

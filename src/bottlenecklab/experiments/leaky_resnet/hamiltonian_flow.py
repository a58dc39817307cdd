"""`leaky-resnet/hamiltonian-flow` — paper 000, §1.5 and §1.2 (no training).

    bottlenecklab run leaky-resnet/hamiltonian-flow --preset quick

Integrates the Hamiltonian system (`theory.vector_field`) from lifted inputs with RK4 at
doubling step counts: `H` is conserved at fourth order on a kink-free path, at first order
on a generic path whose entries cross zero, and to RK4 accuracy when the steps are cut at
the crossings. Also checks the integration-range and output-scaling symmetries of §1.2
(`theory.symmetry_errors`). Tables: `refinement` (per path and step count) and `drift`.

Expected (quick preset): 8/8 claims pass (theory claims, no certificate); ~1 min wall.
Lab notes: `docs/lab-notes/leaky-resnet.md`, `docs/leaky-resnet-theory.md`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from bottlenecklab.experiments._checks import at_least, at_most, in_range, unmeasured
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Measurement,
    Outcome,
    PointResult,
    Points,
    Ungated,
)
from bottlenecklab.measure import loglog_slope
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.theory import (
    Field,
    Weights,
    drift_ratios,
    generic_start,
    kink_free_start,
    lifted_inputs,
    output_scaled_path,
    random_linear_weights,
    refinement_study,
    stretch_range,
    symmetry_errors,
    vector_field,
)

PATHS = ("smooth", "kinked", "located")


@dataclass(frozen=True)
class Config:
    """Shooting and symmetry checks at the paper's sizes (App. B: `N = 1000`, `w = 200`).

    Args:
        task: the inputs `X` (`x_train`); width: `w`; leak: `L~`.
        offset, b_smooth: the kink-free start (`relu(X Pin^T) + offset`, momentum scale).
        b_kinked: momentum scale of the generic path.
        steps_smooth, steps_kinked, steps_located: RK4 step counts (doubling; located).
        order_lo, order_hi: the kink-free drift ratio per doubling (RK4: 16).
        slope_lo, slope_hi: the generic path's log-log drift slope in `h` (first order).
        drift_bound, located_bound: drift bounds, fixed steps (finest) and located.
        stretch, shift: `c` of the range and output-scaling symmetries.
        ode_steps, symmetry_tol: RK4 steps and relative error bound of the symmetries.
    """

    task: TeacherConfig = TeacherConfig(dims=(20, 5, 20), n_train=1000, n_test=1)
    width: int = 200
    leak: float = 2.0
    offset: float = 0.5
    b_smooth: float = 1e-4
    b_kinked: float = 5e-3
    steps_smooth: tuple[int, ...] = (10, 20, 40, 80, 160)
    steps_kinked: tuple[int, ...] = (50, 100, 200, 400, 800, 1600)
    steps_located: int = 25
    located_bound: float = 1e-6
    order_lo: float = 12.0
    order_hi: float = 20.0
    slope_lo: float = 0.6
    slope_hi: float = 1.4
    drift_bound: float = 1e-3
    stretch: float = 3.0
    shift: float = 1.5
    ode_steps: int = 400
    symmetry_tol: float = 1e-6
    seed: int = 0


def measure(
    model: None,
    data: None,
    cfg: Config,
    *,
    field: Field = vector_field,
    stretch_fn: Callable[[Weights, float], Weights] = stretch_range,
    scale_fn: Callable[[torch.Tensor, float], torch.Tensor] = output_scaled_path,
) -> Measurement:
    """Drift of `H` per step count on both paths (tables `refinement`, `drift`) and the
    symmetry errors (scalars). `field`, `stretch_fn`, `scale_fn` are the theory's; tests
    pass wrong ones to see the claims fail."""
    data_ = cfg.task.build(seed=cfg.seed)
    net = LeakyResNetConfig(width=cfg.width, depth=1, leak=0.0).build(
        data_.d_in, data_.d_out, seed=cfg.seed + 1, dtype=torch.float64
    )
    A0 = lifted_inputs(torch.as_tensor(data_.x_train), net.pin.detach())  # [N, w]
    gen = torch.Generator().manual_seed(cfg.seed + 2)
    smooth = kink_free_start(A0, gen, offset=cfg.offset, scale=cfg.b_smooth)
    kinked = generic_start(A0, gen, scale=cfg.b_kinked)
    starts = {
        "smooth": (*smooth, cfg.steps_smooth, False),
        "kinked": (*kinked, cfg.steps_kinked, False),
        "located": (*kinked, (cfg.steps_located,), True),
    }
    scalars, refinement, series = refinement_study(starts, cfg.leak, field=field)
    Wa, Wb = random_linear_weights(A0.shape[1], gen)
    scalars.update(
        symmetry_errors(
            A0,
            Wa,
            Wb,
            cfg.leak,
            stretch=cfg.stretch,
            shift=cfg.shift,
            steps=cfg.ode_steps,
            stretch_fn=stretch_fn,
            scale_fn=scale_fn,
        )
    )
    return Measurement(scalars=scalars, tables={"refinement": refinement, "drift": series})


def _path(result: PointResult, path: str) -> list[dict[str, Any]]:
    rows = [r for r in result.tables.get("refinement", []) if r["path"] == path]
    return sorted(rows, key=lambda r: r["steps"])


Rows = list[dict[str, Any]]


def _refined(check: Callable[[Config, Rows, Rows], Outcome]) -> Callable[[Config, Points], Outcome]:
    """`check(cfg, smooth rows, kinked rows)` with the refinement's facts; not measured
    without two step counts on each path."""

    def checked(cfg: Config, pts: Points) -> Outcome:
        smooth, kinked = _path(pts.last, "smooth"), _path(pts.last, "kinked")
        if len(smooth) < 2 or len(kinked) < 2:
            return unmeasured("no rows", "two step counts per path")
        fmt = ", ".join
        return check(cfg, smooth, kinked).with_facts(
            n0=smooth[-2]["steps"],
            n1=smooth[-1]["steps"],
            sm=fmt(f"{row['drift']:.2e}" for row in smooth),
            kn=fmt(f"{row['drift']:.2e}" for row in kinked),
            crossed=sum(row["crossings"] for row in smooth),
            crossings=fmt(str(c) for c in sorted({int(row["crossings"]) for row in kinked})),
            ratios=fmt(f"{x:.1f}" for x in drift_ratios(smooth)),
            halving=fmt(f"{1 / x:.2f}" if x > 0 else "inf" for x in drift_ratios(kinked)),
            fine=kinked[-1]["steps"],
        )

    return checked


def _kink_free_ratios(smooth: Rows) -> list[float]:
    """The drift ratios per doubling; nan when the path crossed a kink or a ratio is not
    finite (a kink-free claim on a path that crossed a kink is not measured)."""
    ratios = drift_ratios(smooth)
    ok = sum(row["crossings"] for row in smooth) == 0 and all(map(math.isfinite, ratios))
    return ratios if ok else [math.nan]


def first_order(cfg: Config, smooth: Rows, kinked: Rows) -> Outcome:
    """Log-log slope of the generic path's drift against the step `h` (nan without a
    crossing, or with a non-finite or zero drift, which the fit would drop)."""
    h = [1.0 / row["steps"] for row in kinked]
    drifts = [float(row["drift"]) for row in kinked]
    finite = all(math.isfinite(d) and d > 0 for d in drifts)
    crossed = min(int(row["crossings"]) for row in kinked) > 0
    slope = loglog_slope(h, drifts) if finite and crossed else math.nan
    return in_range(slope, cfg.slope_lo, cfg.slope_hi)


def located(cfg: Config, pts: Points) -> Outcome:
    """The drift of the generic path with its crossings located (nan without a crossing:
    located crossings are the point)."""
    rows, kinked = _path(pts.last, "located"), _path(pts.last, "kinked")
    row = rows[-1] if rows else {"steps": cfg.steps_located, "drift": math.nan, "crossings": 0}
    drift = float(row["drift"]) if row["crossings"] > 0 else math.nan
    fixed = kinked[-1]["drift"] if len(kinked) >= 2 and len(_path(pts.last, "smooth")) >= 2 else 0
    return at_most(drift, cfg.located_bound, row=row, fixed=fixed)


def symmetry(scalar: str) -> Callable[[Config, Points], Outcome]:
    """The relative error `scalar` of a symmetry check, at most `symmetry_tol`."""
    return lambda cfg, pts: at_most(pts.last.scalars.get(scalar, math.nan), cfg.symmetry_tol)


ODE = Ungated("an integration of the Hamiltonian system (no trained network to certify)")
CLAIMS = [
    ClaimSpec(
        "rk4-order",
        "H is conserved at fourth order on a path that crosses no ReLU kink: drift ratio "
        "of the last doubling ({n0} -> {n1} steps); drifts {sm}; {crossed} sign crossings",
        ODE,
        _refined(
            lambda cfg, sm, kn: in_range(_kink_free_ratios(sm)[-1], cfg.order_lo, cfg.order_hi)
        ),
    ),
    ClaimSpec(
        "rk4-every-doubling",
        "and the drift shrinks at least that much at every doubling (fourth order, reached "
        "from above): smallest ratio of ({ratios})",
        ODE,
        _refined(lambda cfg, sm, kn: at_least(min(_kink_free_ratios(sm)), cfg.order_lo)),
    ),
    ClaimSpec(
        "kinked-drift",
        "on a generic path ({crossings} sign crossings) the drift of H at the finest step "
        "({fine}); drifts {kn}",
        ODE,
        _refined(lambda cfg, sm, kn: at_most(kn[-1]["drift"], cfg.drift_bound)),
    ),
    ClaimSpec(
        "kinked-first-order",
        "where entries cross zero the drift is first order in the step h: log-log slope "
        "of the drift against h over the refinement (per doubling drift(2n)/drift(n) = "
        "{halving}: 1/2 on average, scattered by the crossings' phases inside the steps)",
        ODE,
        _refined(first_order),
    ),
    ClaimSpec(
        "kinked-located",
        "H is conserved across the kinks: the same generic path with its "
        "{row[crossings]} crossings located (steps cut there) at only {row[steps]} steps "
        "has drift (vs {fixed:.2e} with fixed steps at the finest step count)",
        ODE,
        located,
    ),
    ClaimSpec(
        "range-symmetry",
        "weights W_(q/c)/c on [0, c] with leak L~/c (c = {cfg.stretch:g}) reproduce the "
        "path A_(q/c) (integrated on a grid twice as fine): max relative error",
        ODE,
        symmetry("range_path_error"),
        source="000 §1.2",
    ),
    ClaimSpec(
        "range-norm",
        "and their parameter norm (Simpson on [0, c]) is the closed-form norm of "
        "W_p = Wa + p Wb on [0, 1] divided by c: relative error",
        ODE,
        symmetry("range_norm_error"),
        source="000 §1.2",
    ),
    ClaimSpec(
        "output-scaling",
        "bias-free weights with leak L~ + c (c = {cfg.shift:g}) give exp(-c p) A_p: "
        "max relative error",
        ODE,
        symmetry("scaling_path_error"),
        source="000 §1.2",
    ),
]


PRESETS = {
    # Seconds: few samples, narrow, coarse steps (claims need not pass: pre-asymptotic).
    "smoke": {
        "task.dims": (6, 2, 6),
        "task.hidden": 16,
        "task.n_train": 12,
        "width": 8,
        "steps_smooth": (5, 10),
        "steps_kinked": (20, 40),
        "steps_located": 10,
        "ode_steps": 50,
    },
    # Seconds: N = 100, w = 30, RK4 in its asymptotic regime.
    "quick": {"task.n_train": 100, "width": 30},
    # The paper's sizes (App. B): the base config.
    "paper": {},
}

EXPERIMENT = Experiment[Config](
    name="leaky-resnet/hamiltonian-flow",
    source="000 §1.5",
    title="H is conserved along integrated geodesics; the two symmetries of §1.2 hold",
    config=Config(),
    presets=PRESETS,
    grid={},
    measure=measure,
    claims=CLAIMS,
    figures=("_leaky_resnet_theory:hamiltonian_flow",),
    trains=False,
    doc=__doc__ or "",
)

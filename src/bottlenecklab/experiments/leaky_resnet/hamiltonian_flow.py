"""`leaky-resnet/hamiltonian-flow` — paper 000, §1.5 and §1.2 (no training).

    bottlenecklab run leaky-resnet/hamiltonian-flow --preset quick

Shoots representation geodesics from lifted inputs `A_0 = X Pin^T` by integrating the
Hamiltonian system (code orientation, `theory.vector_field`) with RK4 at several step
counts, and checks that `H` is conserved: at fourth order on a path that crosses no ReLU
kink (error ratio near 16 when the step is halved), and with a drift that shrinks with the
step on a generic path whose entries cross zero (there each crossing costs accuracy). It
also integrates the forward ODE with smooth random weights to check the two symmetries of
§1.2: stretching the integration range to `[0, c]` with leak `L~/c` (same path, parameter
norm divided by `c`), and raising the leak by `c` for bias-free weights (path times
`exp(-c p)`).

The kink-free path starts from the non-negative `relu(X Pin^T) + offset` with a small
non-negative momentum, so `A` stays positive (checked: crossings are counted). Drifts are
`max_p |H_p - H_0| / |H_0|`.

Expected (quick preset): 6/6 claims pass in a few seconds — RK4 drift ratio 18 (16
asymptotically), generic-path drift 7e-5 at 1600 steps (it levels off beyond 400 steps),
symmetry errors 4e-8 (range), 3e-16 (norm), 2e-11 (output scaling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from bottlenecklab.experiments._claims import at_most, in_range
from bottlenecklab.experiments._spec import Claim, Experiment, Measurement, PointResult
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.theory import (
    hamiltonian,
    hamiltonian_flow,
    leaky_ode,
    output_scaled_path,
    stretch_range,
    weight_norm_integral,
)

SOURCE = "000 §1.5"


@dataclass(frozen=True)
class Config:
    """Shooting and symmetry checks at the paper's sizes (App. B: `N = 1000`, `w = 200`).

    Args:
        task: the inputs `X` (only `x_train` is used); width: `w`; leak: `L~`.
        offset: added to `relu(X Pin^T)` for the kink-free start.
        b_smooth: scale of the non-negative initial momentum of the kink-free path.
        b_kinked: scale of the Gaussian initial momentum of the generic path.
        steps_smooth, steps_kinked: RK4 step counts (each doubles the previous).
        order_lo, order_hi: accepted range of the last error ratio on the kink-free path
            (RK4: 16).
        drift_bound: bound on the drift of the generic path at its finest step.
        stretch, shift: `c` of the integration-range and output-scaling symmetries.
        ode_steps: RK4 steps of the symmetry checks; symmetry_tol: relative error bound.
    """

    task: TeacherConfig = TeacherConfig(dims=(20, 5, 20), n_train=1000, n_test=1)
    width: int = 200
    leak: float = 2.0
    offset: float = 0.5
    b_smooth: float = 1e-4
    b_kinked: float = 5e-3
    steps_smooth: tuple[int, ...] = (10, 20, 40, 80, 160)
    steps_kinked: tuple[int, ...] = (50, 100, 200, 400, 800, 1600)
    order_lo: float = 12.0
    order_hi: float = 20.0
    drift_bound: float = 1e-3
    stretch: float = 3.0
    shift: float = 1.5
    ode_steps: int = 400
    symmetry_tol: float = 1e-6
    seed: int = 0


def _lifted_inputs(cfg: Config) -> torch.Tensor:
    """`A_0 = X Pin^T`, `[N, w]`, with the seeded orthonormal lift of a leaky ResNet."""
    data = cfg.task.build(seed=cfg.seed)
    net = LeakyResNetConfig(width=cfg.width, depth=1, leak=0.0).build(
        data.d_in, data.d_out, seed=cfg.seed + 1, dtype=torch.float64
    )
    X = torch.as_tensor(data.x_train, dtype=torch.float64)
    return X @ net.pin.T


def _drift(A: torch.Tensor, B: torch.Tensor, leak: float) -> torch.Tensor:
    H = torch.stack([hamiltonian(a, b, leak) for a, b in zip(A, B)])
    return (H - H[0]).abs() / H[0].abs()  # [steps+1]


def _crossings(A: torch.Tensor) -> int:
    """Entries whose sign changes between consecutive steps."""
    pos = A > 0
    return int((pos[1:] != pos[:-1]).sum())


def measure(model: None, data: None, cfg: Config) -> Measurement:
    """Drift of `H` per step count on both paths, crossings, and the symmetry errors."""
    gen = torch.Generator().manual_seed(cfg.seed + 2)
    lifted = _lifted_inputs(cfg)
    N, w = lifted.shape
    starts = {
        "smooth": (
            torch.relu(lifted) + cfg.offset,
            cfg.b_smooth * torch.randn(N, w, generator=gen, dtype=torch.float64).abs(),
            cfg.steps_smooth,
        ),
        "kinked": (
            lifted,
            cfg.b_kinked * torch.randn(N, w, generator=gen, dtype=torch.float64),
            cfg.steps_kinked,
        ),
    }
    scalars: dict[str, float] = {}
    rows: list[dict[str, float]] = []
    for case_i, (case, (A0, B0, steps_list)) in enumerate(starts.items()):
        drifts = []
        for steps in steps_list:
            A, B = hamiltonian_flow(A0, B0, cfg.leak, steps=steps)
            d = _drift(A, B, cfg.leak)
            drifts.append(float(d.max()))
            scalars[f"crossings_{case}_{steps}"] = float(_crossings(A))
            every = max(1, steps // 50)
            rows.extend(
                {"case": float(case_i), "steps": float(steps), "p": i / steps, "drift": float(v)}
                for i, v in enumerate(d.tolist())
                if i % every == 0
            )
        scalars[f"H0_{case}"] = float(hamiltonian(A0, B0, cfg.leak))
        for steps, v in zip(steps_list, drifts):
            scalars[f"drift_{case}_{steps}"] = v
        scalars[f"order_ratio_{case}"] = drifts[-2] / max(drifts[-1], 1e-300)
        scalars[f"crossings_{case}"] = scalars[f"crossings_{case}_{steps_list[-1]}"]
    scalars.update(_symmetries(cfg, lifted, gen))
    return Measurement(scalars=scalars, layers=rows)


def _symmetries(cfg: Config, A0: torch.Tensor, gen: torch.Generator) -> dict[str, float]:
    """Relative errors of the two §1.2 symmetries on smooth random weights `W_p = Wa + p Wb`."""
    w = A0.shape[1]
    Wa = torch.randn(w, w + 1, generator=gen, dtype=torch.float64) / math.sqrt(w)
    Wb = torch.randn(w, w + 1, generator=gen, dtype=torch.float64) / math.sqrt(w)

    def W(p: float) -> torch.Tensor:
        return Wa + p * Wb

    n, c = cfg.ode_steps, cfg.stretch
    base = leaky_ode(A0, W, cfg.leak, steps=n)
    # Stretched range at a different (doubled) step count, so the check is not trivially
    # exact: the two RK4 solutions agree to discretization error.
    stretched = leaky_ode(A0, stretch_range(W, c), cfg.leak / c, p_end=c, steps=2 * n)[::2]
    range_err = float((stretched - base).abs().max() / base.abs().max())
    norm = weight_norm_integral(W, steps=n)
    norm_c = weight_norm_integral(stretch_range(W, c), p_end=c, steps=n)

    def W0(p: float) -> torch.Tensor:  # bias-free weights
        out = W(p).clone()
        out[:, w] = 0.0
        return out

    plain = leaky_ode(A0, W0, cfg.leak, steps=n)
    shifted = leaky_ode(A0, W0, cfg.leak + cfg.shift, steps=n)
    pred = output_scaled_path(plain, cfg.shift)
    scale_err = float((shifted - pred).abs().max() / shifted.abs().max())
    return {
        "range_path_error": range_err,
        "range_norm_error": abs(norm_c - norm / c) / (norm / c),
        "scaling_path_error": scale_err,
    }


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """Conservation (both paths) and the two symmetries of §1.2."""
    s = results[0].scalars
    fine, coarse = cfg.steps_kinked[-1], cfg.steps_kinked[0]
    sm = ", ".join(f"{s[f'drift_smooth_{n}']:.2e}" for n in cfg.steps_smooth)
    kn = ", ".join(f"{s[f'drift_kinked_{n}']:.2e}" for n in cfg.steps_kinked)
    out = [
        in_range(
            "rk4-order",
            SOURCE,
            "H is conserved at fourth order on a path that crosses no ReLU kink: ratio of the "
            f"drifts at the last two step counts ({cfg.steps_smooth[-2]}, "
            f"{cfg.steps_smooth[-1]}); drifts {sm}; "
            f"{int(s['crossings_smooth'])} sign crossings",
            s["order_ratio_smooth"] if s["crossings_smooth"] == 0 else math.nan,
            cfg.order_lo,
            cfg.order_hi,
        ),
        at_most(
            "kinked-drift",
            SOURCE,
            f"on a generic path ({int(s['crossings_kinked'])} sign crossings at {fine} steps) "
            f"the drift of H at the finest step ({fine}); drifts {kn}",
            s[f"drift_kinked_{fine}"],
            cfg.drift_bound,
        ),
        at_most(
            "kinked-drift-shrinks",
            SOURCE,
            f"the drift at {fine} steps over the drift at {coarse} steps (refining shrinks it)",
            s[f"drift_kinked_{fine}"] / s[f"drift_kinked_{coarse}"],
            1.0,
        ),
        at_most(
            "range-symmetry",
            "000 §1.2",
            f"weights W_(q/c)/c on [0, c] with leak L~/c (c = {cfg.stretch:g}) reproduce the "
            "path A_(q/c): max relative error",
            s["range_path_error"],
            cfg.symmetry_tol,
        ),
        at_most(
            "range-norm",
            "000 §1.2",
            "and their parameter norm is the original one divided by c: relative error",
            s["range_norm_error"],
            cfg.symmetry_tol,
        ),
        at_most(
            "output-scaling",
            "000 §1.2",
            f"bias-free weights with leak L~ + c (c = {cfg.shift:g}) give exp(-c p) A_p: "
            "max relative error",
            s["scaling_path_error"],
            cfg.symmetry_tol,
        ),
    ]
    return out


PRESETS = {
    # Seconds: few samples, narrow, coarse steps.
    "smoke": {
        "task.dims": (6, 2, 6),
        "task.hidden": 16,
        "task.n_train": 12,
        "width": 8,
        "steps_smooth": (5, 10),
        "steps_kinked": (20, 40),
        "ode_steps": 50,
    },
    # Seconds on 2 cores: N = 100, w = 30; step counts where RK4 is in its asymptotic regime.
    "quick": {"task.n_train": 100, "width": 30},
    # The paper's sizes (App. B): the base config.
    "paper": {},
}

EXPERIMENT = Experiment(
    name="leaky-resnet/hamiltonian-flow",
    source=SOURCE,
    title="H is conserved along integrated geodesics; the two symmetries of §1.2 hold",
    config=Config(),
    presets=PRESETS,
    grid={},
    measure=measure,
    claims=claims,
    figures=("hamiltonian_flow",),
    trains=False,
    doc=__doc__ or "",
)

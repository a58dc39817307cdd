"""`l2/reformulation` — paper 004, Prop 1, 3 and §3.1 (`make demo`).

    bottlenecklab run l2/reformulation --preset quick

The L2-regularized loss of a fully-connected net in weight, representation and covariance
form: `L = L^r + lam sum ||W~_l||^2` and `L^r = L^k` on random and trained nets (widths
12 > N = 8, so `W~ != 0`; beta in {0, 1}, ReLU and leaky 0.1); one GD step maps `W P_perp`
to `(1 - 2 lr lam) W P_perp`; `||W~_1||` decays as `(1 - 2 lr lam)^t` over constant-step GD;
a deep linear net at its minimizer has `K_l = X M^{l/L} X^T` (§3.1). Grid: one point per
network (`nets`). Expected: 7/7 pass, every margin far outside its spread. Quick preset:
~1 min CPU. Measurements and margins: `docs/lab-notes/l2.md`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch

from bottlenecklab import measure as M
from bottlenecklab.config import ConfigError
from bottlenecklab.experiments._checks import at_most
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Gate,
    Measurement,
    Outcome,
    Points,
    Reads,
    Ungated,
)
from bottlenecklab.experiments.l2._common import worst
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import Dataset, GaussianTask, OrthogonalTask
from bottlenecklab.training import PhaseConfig, TrainConfig

Kind = Literal["random", "trained", "decay", "linear"]
# The (beta, leaky slope) of the random, trained and decaying nets.
ARCHS: dict[str, tuple[float, float]] = {
    "relu": (0.0, 0.0),
    "leaky": (0.0, 0.1),
    "relu-bias": (1.0, 0.0),
    "leaky-bias": (1.0, 0.1),
}
# The grid's networks: name -> (kind, arch). `random` trains nothing (it measures
# `n_random` random nets of every arch); `trained-*` fit the Gaussian data (Adam, then
# backtracking GD); `decay-*` run constant-step GD from their init; `linear` is the deep
# linear net (L-BFGS, then the certification extension).
NETS: dict[str, tuple[Kind, str]] = {
    "random": ("random", "relu"),
    **{f"trained-{a}": ("trained", a) for a in ARCHS},
    **{f"decay-{a}": ("decay", a) for a in ARCHS},
    "linear": ("linear", "relu"),
}
NO_STEPS = (PhaseConfig("sgd", 0, 1.0),)  # the `random` point: a net at its init


@dataclass(frozen=True)
class Config:
    """Random, trained and linear networks for the loss identities.

    Args:
        data, relu: the Gaussian data and the nets of the identities (`width > N` makes
            `W~ != 0`); each net's bias scale and slope come from its arch (`ARCHS`).
        linear_data, linear: the deep linear net's square data and net (`beta = 0`).
        fit, decay, linear_fit: the training of the `trained-*`, `decay-*` and `linear`
            points. `decay`: one constant-step GD phase (the `||W~_1||` decay from the
            init). `linear_fit`: L-BFGS, then the certification extension, whose start is
            the earlier state of value stability (the kernel error may move by at most
            `linear_tol / 4` over it).
        net, nets: this point's network and the grid's (`NETS`).
        n_random: random nets per arch; lam: `lambda` of the random nets' identities;
            step_lr: the GD step of `projector-step`.
        split_tol_random, split_tol_trained, step_tol, decay_tol, linear_tol: the claims'
            tolerances (spec table; decay_tol: float64 round-off over the phase).
        certify: the convergence certificate of the linear net (the only claim about a
            minimizer): its stationarity (the relative gradient norm: no kinks) <= 1e-2,
            the spec's default, far above what L-BFGS reaches (~1e-6) and far below an
            untrained net (~1); the earlier state is the start of the extension.
    """

    data: GaussianTask = GaussianTask(n_train=8, d_in=10, d_out=3)
    relu: FCNNConfig = FCNNConfig(depth=3, width=12)
    linear_data: OrthogonalTask = OrthogonalTask(n_train=6, d_out=4)
    linear: FCNNConfig = FCNNConfig(depth=3, width=8, activation="identity", bias_scale=0.0)
    fit: TrainConfig = TrainConfig(
        lam=1e-2,
        phases=(PhaseConfig("adam", 2000, 1e-3), PhaseConfig("sgd", 2000, 0.05, backtrack=True)),
        dtype="float64",
        log_every=4000,
    )
    decay: TrainConfig = TrainConfig(
        lam=1e-2, phases=(PhaseConfig("sgd", 2000, 0.05),), dtype="float64", log_every=2000
    )
    linear_fit: TrainConfig = TrainConfig(
        lam=1e-3,
        phases=(PhaseConfig("lbfgs", 2000, 1.0), PhaseConfig("lbfgs", 200, 1.0)),
        dtype="float64",
        log_every=2000,
    )
    net: str = "linear"
    nets: tuple[str, ...] = tuple(NETS)
    n_random: int = 5
    lam: float = 1e-2
    step_lr: float = 0.05
    split_tol_random: float = 1e-8
    split_tol_trained: float = 1e-6
    step_tol: float = 1e-12
    decay_tol: float = 1e-8
    linear_tol: float = 1e-4
    certify: Gate = Gate(threshold=1e-2, earlier=0.0)
    seed: int = 0

    def __post_init__(self) -> None:
        for name in (self.net, *self.nets):
            if name not in NETS:
                raise ConfigError(f"net {name!r} is none of {', '.join(NETS)}")

    @property
    def kind(self) -> Kind:
        return NETS[self.net][0]

    @property
    def task(self) -> GaussianTask | OrthogonalTask:
        """This point's data."""
        return self.linear_data if self.kind == "linear" else self.data

    @property
    def model(self) -> FCNNConfig:
        """This point's network (its arch's bias scale and slope)."""
        if self.kind == "linear":
            return self.linear
        return _arch(self.relu, NETS[self.net][1])

    @property
    def train(self) -> TrainConfig:
        """This point's training (none for `random`)."""
        if self.kind == "random":
            return TrainConfig(lam=self.lam, phases=NO_STEPS, dtype="float64")
        return {"trained": self.fit, "decay": self.decay, "linear": self.linear_fit}[self.kind]


def _arch(model: FCNNConfig, arch: str) -> FCNNConfig:
    beta, slope = ARCHS[arch]
    return dataclasses.replace(model, bias_scale=beta, slope=slope)


def _random_net(cfg: Config, arch: str, seed: int):
    """A random net of `arch` with non-zero biases, so that the bias column counts."""
    net = _arch(cfg.relu, arch).build(cfg.data.d_in, cfg.data.d_out, seed=seed, dtype=torch.float64)
    with torch.no_grad():
        g = torch.Generator().manual_seed(seed)
        for b in net.biases:
            b.copy_(0.3 * torch.randn(b.shape, generator=g, dtype=torch.float64))
    return net


def _errors(out: dict[str, float]) -> tuple[float, float]:
    split = abs(out["representation"] + out["null"] - out["weight"]) / abs(out["weight"])
    cov = abs(out["covariance"] - out["representation"]) / abs(out["representation"])
    return split, cov


def _linear_error(lnet, X: torch.Tensor) -> float:
    """Largest relative Frobenius error of `K_l` against `X M^{l/L} X^T` over the layers."""
    measured, formula = M.linear_kernels(lnet, X)
    return worst([float((K - F).norm() / F.norm()) for K, F in zip(measured, formula)])


def _form_row(kind: str, arch: str, index: int, out: dict[str, float]) -> dict[str, Any]:
    split, cov = _errors(out)
    beta, slope = ARCHS[arch]
    return {
        "kind": kind,
        "beta": beta,
        "slope": slope,
        "index": index,
        "split_error": split,
        "cov_error": cov,
        "null": out["null"],
    }


def measure(model: torch.nn.Module, data: Dataset, cfg: Config) -> Measurement:
    """This point's identities (table `forms`: one row per network). Every point has the
    same scalars (`nan` where they do not apply): `split_error`, `cov_error`, `null_min`
    (the worst over the point's nets), `step_residual` (random nets), `decay_error`
    (decay nets: `||W~_1||` against its init's), `linear_error` (the linear net)."""
    X, Y = torch.as_tensor(data.x_train), torch.as_tensor(data.y_train)
    kind, arch = NETS[cfg.net]
    rows, steps = [], []
    scalars = dict.fromkeys(
        ("split_error", "cov_error", "null_min", "step_residual", "decay_error", "linear_error"),
        math.nan,
    )
    if kind == "random":
        for a_i, a in enumerate(ARCHS):
            for i in range(cfg.n_random):
                net = _random_net(cfg, a, cfg.seed + 100 * (a_i * cfg.n_random + i + 1))
                rows.append(_form_row("random", a, i, M.reformulated_losses(net, X, Y, cfg.lam)))
                steps.append(M.null_step_residual(net, X, Y, cfg.lam, cfg.step_lr))
        scalars["step_residual"] = worst(steps)
    elif kind == "trained":
        rows.append(_form_row("trained", arch, 0, M.reformulated_losses(model, X, Y, cfg.fit.lam)))
    elif kind == "decay":
        # the same network at its initialization (run_point's seed and dtype)
        init = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=torch.float64)
        before, after = M.null_norms(init, X)[0], M.null_norms(model, X)[0]
        phase = cfg.decay.phases[0]
        expect = (1 - 2 * phase.lr * cfg.decay.lam) ** phase.steps
        scalars["decay_error"] = abs(after / before / expect - 1) if before > 0 else math.nan
    else:
        scalars["linear_error"] = _linear_error(model, X)
        scalars["linear_grad_norm"] = M.gradient_norm(model, X, Y, cfg.linear_fit.lam)
    if rows:
        scalars["split_error"] = worst([r["split_error"] for r in rows])
        scalars["cov_error"] = worst([r["cov_error"] for r in rows])
        scalars["null_min"] = min(r["null"] for r in rows)
    return Measurement(scalars=scalars, tables={"forms": rows})


def worst_of(kind: Kind, key: str, tol: str) -> Callable[[Config, Points], Outcome]:
    """A check: the worst `key` over the points of `kind` (`nan` when there is none) at
    most the config's tolerance `tol`."""

    def check(cfg: Config, pts: Points) -> Outcome:
        values = [p.scalars.get(key, math.nan) for p in pts if NETS[p.point["net"]][0] == kind]
        return at_most(worst(values), getattr(cfg, tol))

    return check


# The claims on the random nets read the `random` point only (`where`); those on the
# trained and decay nets read every point and select theirs in the check (`worst_of`).
ANY_WEIGHTS = Ungated(
    "L = L^r + lam sum ||W~||^2 holds for any weights (App B: W = W P + W P_perp)"
)
ANY_REPRESENTATIONS = Ungated("||Zs^+ Z||_F^2 = Tr[K (K^s)^+] holds for any representations")
RANDOM = {"net": "random"}
CLAIMS = [
    ClaimSpec(
        "split-random",
        "L = L^r + lam sum ||W~_l||^2 on random nets (W~ != 0): largest relative error",
        dataclasses.replace(ANY_WEIGHTS, where=RANDOM),
        worst_of("random", "split_error", "split_tol_random"),
    ),
    ClaimSpec(
        "cov-random",
        "L^r = L^k on random nets: largest relative error",
        dataclasses.replace(ANY_REPRESENTATIONS, where=RANDOM),
        worst_of("random", "cov_error", "split_tol_random"),
    ),
    ClaimSpec(
        "split-trained",
        "L = L^r + lam sum ||W~_l||^2 on trained nets: largest relative error",
        ANY_WEIGHTS,
        worst_of("trained", "split_error", "split_tol_trained"),
    ),
    ClaimSpec(
        "cov-trained",
        "L^r = L^k on trained nets: largest relative error",
        ANY_REPRESENTATIONS,
        worst_of("trained", "cov_error", "split_tol_trained"),
    ),
    ClaimSpec(
        "projector-step",
        "one GD step: W_{{t+1}} P_perp_t = (1 - 2 lr lam) W_t P_perp_t, largest relative residual",
        Ungated("one GD step's action on W P_perp is exact at any weights", where=RANDOM),
        worst_of("random", "step_residual", "step_tol"),
        source="004 App B (derived)",
    ),
    ClaimSpec(
        "null-decay",
        "||W~_1|| over {cfg.decay.phases[0].steps} GD steps from the init follows "
        "(1 - 2 lr lam)^t: largest |ratio / (1 - 2 lr lam)^t - 1|",
        Ungated("a claim on the GD dynamics from any start (P_perp_1 fixed by X)"),
        worst_of("decay", "decay_error", "decay_tol"),
        source="004 App B (derived)",
    ),
    ClaimSpec(
        "linear-kernels",
        "deep linear net at a minimizer: K_l = X M^{{l/L}} X^T, largest relative error over l",
        # a property of the minimizer, certified
        Reads(("linear_error",), window=Config.linear_tol, where={"net": "linear"}),
        worst_of("linear", "linear_error", "linear_tol"),
        source="004 §3.1",
    ),
]

PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: one random net per arch, short training (the trained identities still hold:
    # they hold for any weights); rows every 10 steps keep the extension's start.
    "smoke": {
        "n_random": 1,
        "fit.phases": (
            {"optimizer": "adam", "steps": 50, "lr": 1e-3},
            {"optimizer": "sgd", "steps": 20, "lr": 0.05, "backtrack": True},
        ),
        "decay.phases": ({"optimizer": "sgd", "steps": 20, "lr": 0.05},),
        "linear_fit.phases": (
            {"optimizer": "lbfgs", "steps": 20, "lr": 1.0},
            {"optimizer": "lbfgs", "steps": 10, "lr": 1.0},
        ),
        "linear_fit.log_every": 10,
    },
    # The spec's quick sizes (Adam 2k + GD 2k; GD 2k; linear L-BFGS 2k + 200).
    "quick": {},
    # The paper gives no sizes for these identities: the quick sizes with more nets.
    "paper": {"n_random": 50},
}

EXPERIMENT = Experiment[Config](
    name="l2/reformulation",
    source="004 Prop 1, 3",
    title="L = L^r + null part, L^r = L^k; GD shrinks the null part; linear-net kernels",
    config=Config(),
    presets=PRESETS,
    grid={"net": "nets"},
    measure=measure,
    claims=CLAIMS,
    figures=("_l2:l2_reformulation",),
    doc=__doc__ or "",
)

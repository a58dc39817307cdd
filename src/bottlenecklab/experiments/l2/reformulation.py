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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bottlenecklab.config import ConfigError
from bottlenecklab.experiments._checks import at_most
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Gate,
    Outcome,
    Points,
    Reads,
    Ungated,
)
from bottlenecklab.experiments.l2._common import worst
from bottlenecklab.experiments.l2._reformulation import (
    COV_ERROR,
    DECAY_ERROR,
    IDENTITIES,
    LINEAR_ERROR,
    NETS,
    SPLIT_ERROR,
    STEP_RESIDUAL,
    Kind,
    with_arch,
)
from bottlenecklab.measure import Quantity
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import GaussianTask, OrthogonalTask
from bottlenecklab.training import PhaseConfig, TrainConfig

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
        return with_arch(self.relu, NETS[self.net][1])

    @property
    def train(self) -> TrainConfig:
        """This point's training (none for `random`)."""
        if self.kind == "random":
            return TrainConfig(lam=self.lam, phases=NO_STEPS, dtype="float64")
        return {"trained": self.fit, "decay": self.decay, "linear": self.linear_fit}[self.kind]


def worst_of(kind: Kind, key: Quantity, tol: str) -> Callable[[Config, Points], Outcome]:
    """A check: the worst `key` over the points of `kind` (`nan` when there is none) at
    most the config's tolerance `tol`."""

    def check(cfg: Config, pts: Points) -> Outcome:
        values = [p.get(key) for p in pts if NETS[p.point["net"]][0] == kind]
        return at_most(worst(values), getattr(cfg, tol))

    return check


# The claims on the random nets read the `random` point only (`where`); those on the
# trained and decay nets read every point and select theirs in the check (`worst_of`).
ANY_WEIGHTS = Ungated(
    "L = L^r + lam sum ||W~||^2 holds for any weights (App B: W = W P + W P_perp)"
)
ANY_REPRESENTATIONS = Ungated("||Zs^+ Z||_F^2 = Tr[K (K^s)^+] holds for any representations")
RANDOM = {"net": "random"}
SPLIT_RANDOM = ClaimSpec(
    "split-random",
    "L = L^r + lam sum ||W~_l||^2 on random nets (W~ != 0): largest relative error",
    dataclasses.replace(ANY_WEIGHTS, where=RANDOM),
    worst_of("random", SPLIT_ERROR, "split_tol_random"),
)
COV_RANDOM = ClaimSpec(
    "cov-random",
    "L^r = L^k on random nets: largest relative error",
    dataclasses.replace(ANY_REPRESENTATIONS, where=RANDOM),
    worst_of("random", COV_ERROR, "split_tol_random"),
)
SPLIT_TRAINED = ClaimSpec(
    "split-trained",
    "L = L^r + lam sum ||W~_l||^2 on trained nets: largest relative error",
    ANY_WEIGHTS,
    worst_of("trained", SPLIT_ERROR, "split_tol_trained"),
)
COV_TRAINED = ClaimSpec(
    "cov-trained",
    "L^r = L^k on trained nets: largest relative error",
    ANY_REPRESENTATIONS,
    worst_of("trained", COV_ERROR, "split_tol_trained"),
)
PROJECTOR_STEP = ClaimSpec(
    "projector-step",
    "one GD step: W_{{t+1}} P_perp_t = (1 - 2 lr lam) W_t P_perp_t, largest relative residual",
    Ungated("one GD step's action on W P_perp is exact at any weights", where=RANDOM),
    worst_of("random", STEP_RESIDUAL, "step_tol"),
    source="004 App B (derived)",
)
NULL_DECAY = ClaimSpec(
    "null-decay",
    "||W~_1|| over {cfg.decay.phases[0].steps} GD steps from the init follows "
    "(1 - 2 lr lam)^t: largest |ratio / (1 - 2 lr lam)^t - 1|",
    Ungated("a claim on the GD dynamics from any start (P_perp_1 fixed by X)"),
    worst_of("decay", DECAY_ERROR, "decay_tol"),
    source="004 App B (derived)",
)
LINEAR_KERNELS = ClaimSpec(
    "linear-kernels",
    "deep linear net at a minimizer: K_l = X M^{{l/L}} X^T, largest relative error over l",
    # a property of the minimizer, certified
    Reads((LINEAR_ERROR,), window=Config.linear_tol, where={"net": "linear"}),
    worst_of("linear", LINEAR_ERROR, "linear_tol"),
    source="004 §3.1",
)

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
    measure=IDENTITIES,
    claims=[
        SPLIT_RANDOM,
        COV_RANDOM,
        SPLIT_TRAINED,
        COV_TRAINED,
        PROJECTOR_STEP,
        NULL_DECAY,
        LINEAR_KERNELS,
    ],
    figures=("_l2:l2_reformulation",),
    doc=__doc__ or "",
)

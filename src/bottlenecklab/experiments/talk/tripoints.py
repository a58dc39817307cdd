"""`talk/tripoints` — paper 002, slide 'Implications: Classification'.

    bottlenecklab run talk/tripoints --preset quick

Four Gaussian blobs in 2-D, cross-entropy with weight decay; a shallow (`L = 2`, width 128)
and a deep (`L = 10`, width 32) net per seed. The slide's conditional: a rank-1
classifier — its middle representation 1-D affine (centred singular values above 0.2 of
the largest, spec **Decision**) — has no tripoint (no three classes meet; 2x2 blocks of the
decision map with >= 3 labels, data box + 0.5, at 256^2 and 512^2), checked on every net
that is rank 1. The slide's figure: the deep net is rank 1 (no tripoint), the shallow
net has tripoints. The middle weight rank is reported beside.

Expected (quick, square layout `(+-1, +-1)`, sigma 0.3): the figure is not reproduced —
`deep-affine-rank-1` fails (a registered finding), `rank1-no-tripoint` is not measured
while no net is rank 1, shallow tripoints reported. ~3 min CPU. `docs/lab-notes/talk.md`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from bottlenecklab.experiments._checks import at_least, at_most, reported, unmeasured
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Gate,
    Outcome,
    PointResult,
    Points,
    Reads,
)
from bottlenecklab.experiments.talk._classify import MIDDLE_AFFINE_RATIO, TRIPOINT
from bottlenecklab.measure import MIDDLE_AFFINE_RANK, MIDDLE_RANK
from bottlenecklab.measure._decision import TRIPOINTS
from bottlenecklab.measure._layer_ranks import AFFINE_RANK_RULE, WEIGHT_RANK_RULE, middle_layer
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import BlobsConfig
from bottlenecklab.training import PhaseConfig, TrainConfig

Arch = Literal["shallow", "deep"]


@dataclass(frozen=True)
class Config:
    """The slide's comparison (the talk gives no sizes; these are the spec's).

    Args:
        shallow, deep: the two networks; arch: which one this run trains (`model`).
        archs, seeds: the grid.
        margin: the decision map covers the data's bounding box grown by this.
        resolutions: grid points per side of the decision maps (tripoints at each);
            map_resolution: the one stored for the figure.
        affine_rel: relative cut of the middle representation's affine dimension (the
            cutoff of `AFFINE_RANK_RULE`, `MIDDLE_AFFINE_RANK`'s rule).
        rank_floor: the middle weight rank's floor (paper 001, Fig 1; reported; the cutoff
            of `WEIGHT_RANK_RULE`, `MIDDLE_RANK`'s rule).
        certify: the convergence certificate of every claim.
    """

    task: BlobsConfig = BlobsConfig()
    shallow: FCNNConfig = FCNNConfig(depth=2, width=128)
    deep: FCNNConfig = FCNNConfig(depth=10, width=32)
    arch: Arch = "deep"
    train: TrainConfig = TrainConfig(
        lam=1e-3,
        cost="cross_entropy",
        phases=(
            PhaseConfig("adam", 20_000, 1e-3, schedule="cosine"),
            PhaseConfig("lbfgs", 1000, 1.0),  # to a certified critical point
        ),
        dtype="float64",
        log_every=500,
    )
    seed: int = 0
    archs: tuple[Arch, ...] = ("shallow", "deep")
    seeds: tuple[int, ...] = (0, 1, 2)
    margin: float = 0.5
    resolutions: tuple[int, ...] = (256, 512)
    map_resolution: int = 256
    affine_rel: float = AFFINE_RANK_RULE.cutoff
    rank_floor: float = WEIGHT_RANK_RULE.cutoff
    certify: Gate = Gate(threshold=2e-2, tau=1e-4, earlier=0.0)

    @property
    def model(self) -> FCNNConfig:
        """The network of this run (`arch`)."""
        return self.deep if self.arch == "deep" else self.shallow


BASE = Config()  # its tolerances are the claims' windows


def tri(cfg: Config, p: PointResult) -> list[float]:
    """The point's tripoint counts at every resolution."""
    return [p.value(TRIPOINTS.at(n)) for n in cfg.resolutions]


def maps(cfg: Config) -> str:
    """The decision maps' resolutions (`256^2, 512^2`): a statement's `{res}`."""
    return ", ".join(f"{n}^2" for n in cfg.resolutions)


def seeds_with(cfg: Config, pts: Points, arch: str, ok) -> float:
    """How many nets of `arch` meet `ok` (nan: none of that architecture)."""
    nets = [p for p in pts if p.point.get("arch") == arch]
    return float(sum(bool(ok(p)) for p in nets)) if nets else math.nan


def rank1_no_tripoint(cfg: Config, pts: Points) -> Outcome:
    """Nets with a tripoint among those whose middle representation is 1-D affine."""
    flat = [p for p in pts if p.value(MIDDLE_AFFINE_RANK) == 1]
    if not flat:
        why = "no trained net has a 1-D affine middle representation"
        return unmeasured(why, "0", res=maps(cfg), of="")
    bad = sum(max(tri(cfg, p)) > 0 for p in flat)
    return at_most(bad, 0, res=maps(cfg), of=f" (of {len(flat)})")


AFFINE_RULE = "(centred middle pre-activations, singular values > {cfg.affine_rel:g} s_1)"
RANK1_NO_TRIPOINT = ClaimSpec(
    "rank1-no-tripoint",
    "every trained net (either architecture, any seed) whose middle representation is "
    "1-D affine " + AFFINE_RULE + " has no tripoint at {res} (data box + {cfg.margin:g}): "
    "nets with a tripoint{of}",
    Reads(  # tripoint counts are integers: a window below 1 asks for no change
        (MIDDLE_AFFINE_RATIO, *(TRIPOINTS.at(n) for n in BASE.resolutions)),
        window=BASE.affine_rel,
    ),
    rank1_no_tripoint,
)
SHALLOW_TRIPOINT = ClaimSpec(
    "shallow-tripoint",
    "shallow net (L = {cfg.shallow.depth}): >= 1 tripoint at {res}: seeds of "
    "{n_seeds}; an untrained shallow net has them too (vacuity audit): reported",
    None,  # a premise an untrained shallow net meets (2 of 3)
    lambda cfg, pts: reported(
        seeds_with(cfg, pts, "shallow", lambda p: min(tri(cfg, p)) >= 1),
        res=maps(cfg),
        n_seeds=len(cfg.seeds),
    ),
)
DEEP_AFFINE_RANK_1 = ClaimSpec(
    "deep-affine-rank-1",
    "the slide's figure: deep net (L = {cfg.deep.depth}) with a 1-D affine middle "
    "representation " + AFFINE_RULE + ": seeds of {n_seeds}",
    Reads((MIDDLE_AFFINE_RATIO,), window=BASE.affine_rel, where={"arch": "deep"}),
    lambda cfg, pts: at_least(
        seeds_with(cfg, pts, "deep", lambda p: p.value(MIDDLE_AFFINE_RANK) == 1),
        len(cfg.seeds) // 2 + 1,
        n_seeds=len(cfg.seeds),
    ),
)
DEEP_WEIGHT_RANK_1 = ClaimSpec(
    "deep-weight-rank-1",
    "deep net: middle weight W_{mid} of numerical rank 1 (singular values > "
    "{cfg.rank_floor:g}, paper 001's rule): seeds",
    None,
    lambda cfg, pts: reported(
        seeds_with(cfg, pts, "deep", lambda p: p.value(MIDDLE_RANK) == 1),
        mid=middle_layer(cfg.deep.depth),
    ),
)
DEEP_NO_TRIPOINT = ClaimSpec(
    "deep-no-tripoint",
    "deep net: no tripoint at {res}: seeds",
    None,
    lambda cfg, pts: reported(
        seeds_with(cfg, pts, "deep", lambda p: max(tri(cfg, p)) == 0), res=maps(cfg)
    ),
)
CLAIMS = [
    RANK1_NO_TRIPOINT,
    SHALLOW_TRIPOINT,
    DEEP_AFFINE_RANK_1,
    DEEP_WEIGHT_RANK_1,
    DEEP_NO_TRIPOINT,
]

PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: small nets, few steps, one seed (the claims' resolutions kept: cheap).
    "smoke": {
        "task.n_per_class": 10,
        "task.n_test_per_class": 10,
        "shallow.width": 8,
        "deep.width": 8,
        "deep.depth": 4,
        "seeds": (0,),
        "map_resolution": 16,
        "train.phases": ({"optimizer": "adam", "steps": 20, "lr": 1e-2},),
        "train.log_every": 10,
    },
    # The spec's square layout; lam 1e-2, Adam then float64 L-BFGS (lab notes `talk.md`).
    "quick": {
        "train.lam": 1e-2,
        "train.dtype": "float64",
        "train.phases": (
            {"optimizer": "adam", "steps": 4000, "lr": 3e-3, "schedule": "cosine"},
            {"optimizer": "lbfgs", "steps": 1000, "lr": 1.0},
        ),
    },
    # Longer training: the base config.
    "paper": {},
}

EXPERIMENT = Experiment[Config](
    name="talk/tripoints",
    source="002 'Implications: Classification'",
    title="Deep nets classify through a rank-1 bottleneck: no tripoints; shallow nets have them",
    config=BASE,
    presets=PRESETS,
    grid={"arch": "archs", "seed": "seeds"},
    measure=TRIPOINT,
    claims=CLAIMS,
    figures=("_talk:tripoints",),
    doc=__doc__ or "",
)

"""Claims whose quick-preset networks do not certify yet: their expected verdict is
`not-converged` until a solver reaches their critical points (spec `convergence.md`,
fourth review: gates are never loosened to pass). Each of them reads a quantity
discontinuous at kinks (`Reads(kinked=True)`), so it needs stationarity <= 1e-4 (fifth
review).

Unlike a finding (`_findings`), nothing is said about the paper's statement: the claim is
simply not judged. `make test-slow` expects `not-converged` for each entry and fails when
one certifies (then judge it, and remove the entry).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments.leaky_resnet import hamiltonian_vs_depth as hvd
from bottlenecklab.experiments.leaky_resnet import layer_portrait as portrait
from bottlenecklab.experiments.leaky_resnet import path_bounds as pb

__all__ = ["AWAITING", "Awaiting", "awaiting_of"]


@dataclass(frozen=True)
class Awaiting:
    """Claims of one experiment left to the solver.

    Args:
        experiment: the experiment (an `Experiment`, or its name).
        claims: its claims (`ClaimSpec`s), or claim ids or glob patterns
            (`non-increasing(lam=0.0001)`); kept as ids.
        why: what the certificate measures there (numbers, settings).
    """

    experiment: Any
    claims: tuple[Any, ...]
    why: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "experiment", getattr(self.experiment, "name", self.experiment))
        object.__setattr__(self, "claims", tuple(getattr(c, "id", c) for c in self.claims))

    def covers(self, experiment: str, claim: str) -> bool:
        return experiment == self.experiment and any(
            fnmatch.fnmatchcase(claim, p) for p in self.claims
        )


AWAITING: tuple[Awaiting, ...] = (
    Awaiting(
        experiment=hvd.EXPERIMENT,
        claims=(hvd.RANK_AT_LARGEST_LEAK, hvd.FROM_BELOW, hvd.COI_FROM_ABOVE),
        why=(
            "they read the median -(2/L~)H, discontinuous at kinks, so they are gated at "
            "stationarity <= 1e-4 (KINK_THRESHOLD); the quick nets end at 0.05-0.23, where "
            "the certification extension moves the median by 0.3-3.6 depending on the CPU "
            "and the seed (lab notes leaky-resnet.md and robustness.md, 2026-11-28)"
        ),
    ),
    Awaiting(
        experiment=portrait.EXPERIMENT,
        claims=(portrait.BOTTLENECK_GAP, portrait.HAMILTONIAN_FLAT),
        why=(
            "the flagship's L~ = 24 net (stationarity 0.05-0.23): the W_l gap ratio and the "
            "spread of -(2/L~)H_l over the layers are discontinuous at kinks, gated at "
            "<= 1e-4; the extension moved the gap ratio 0.19 on one CPU and 1.61 on another "
            "(allowance 0.75; issue 40)"
        ),
    ),
    Awaiting(
        experiment=pb.EXPERIMENT,
        claims=(
            pb.THM4_LOWER_CLAIM,
            pb.THM4_LOWER_CORRECTED_CLAIM,
            pb.THM4_PER_LAYER,
            pb.THM4_CONSTANT_GAMMA,
        ),
        why=(
            "Thm 4's sides read H and max ||B||, discontinuous at kinks, gated at <= 1e-4; "
            "the quick nets at fixed rho L~ = 0.4 end at stationarity 0.079-0.096 "
            "(2026-11-28)"
        ),
    ),
)


def awaiting_of(experiment: str, claim: str) -> Awaiting | None:
    """The entry that leaves `claim` of `experiment` to the solver, or None."""
    return next((a for a in AWAITING if a.covers(experiment, claim)), None)

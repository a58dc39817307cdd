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

__all__ = ["AWAITING", "Awaiting", "awaiting_of"]


@dataclass(frozen=True)
class Awaiting:
    """Claims of one experiment left to the solver.

    Args:
        experiment: the experiment (an `Experiment`, or its name).
        claims: its claims' ids or glob patterns (`non-increasing(lam=0.0001)`), or
            `ClaimSpec`s; kept as ids. The registry itself writes ids: importing the
            package imports no experiment until the registry is read (`discover`), and
            `tests/experiments/test_verdicts.py` checks every entry names a declared claim.
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
        experiment="leaky-resnet/hamiltonian-vs-depth",
        claims=("rank-at-largest-leak", "from-below", "coi-from-above"),
        why=(
            "they read the median -(2/L~)H, discontinuous at kinks, so they are gated at "
            "stationarity <= 1e-4 (KINK_THRESHOLD); the quick nets end at 0.05-0.23, where "
            "the certification extension moves the median by 0.3-3.6 depending on the CPU "
            "and the seed (lab notes leaky-resnet.md and robustness.md, 2026-11-28)"
        ),
    ),
    Awaiting(
        experiment="leaky-resnet/layer-portrait",
        claims=("bottleneck-gap", "hamiltonian-flat"),
        why=(
            "the flagship's L~ = 24 net (stationarity 0.05-0.23): the W_l gap ratio and the "
            "spread of -(2/L~)H_l over the layers are discontinuous at kinks, gated at "
            "<= 1e-4; the extension moved the gap ratio 0.19 on one CPU and 1.61 on another "
            "(allowance 0.75; issue 40)"
        ),
    ),
    Awaiting(
        experiment="leaky-resnet/path-bounds",
        claims=("thm4-lower", "thm4-lower-corrected", "thm4-per-layer", "thm4-constant-gamma"),
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

"""Claims whose quick-preset networks do not certify yet: their expected verdict is
`not-converged` until the solver of issue "Certified optima fast" reaches their critical
points (spec `convergence.md`, fourth review: gates are never loosened to pass).

Unlike a finding (`_findings`), nothing is said about the paper's statement: the claim is
simply not judged. `make test-slow` expects `not-converged` for each entry and fails when
one certifies (then judge it, and remove the entry).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

__all__ = ["AWAITING", "Awaiting", "awaiting_of"]


@dataclass(frozen=True)
class Awaiting:
    """Claims of one experiment left to the solver.

    Args:
        experiment: the experiment's name.
        claims: claim ids or glob patterns (`non-increasing(lam=0.0001)`).
        why: what the certificate measures there (numbers, settings).
    """

    experiment: str
    claims: tuple[str, ...]
    why: str

    def covers(self, experiment: str, claim: str) -> bool:
        return experiment == self.experiment and any(
            fnmatch.fnmatchcase(claim, p) for p in self.claims
        )


AWAITING: tuple[Awaiting, ...] = (
    Awaiting(
        experiment="leaky-resnet/hamiltonian-vs-depth",
        claims=("rank-at-largest-leak", "from-below", "coi-from-above"),
        why=(
            "the certification extension (smoothed, then exact L-BFGS, 50 + 50 from the final "
            "state) lowers the loss and moves the median -(2/L~)H by 0.26 at L~ = 12 and 1.39 "
            "at L~ = 24 (seed 0; allowances 0.0625-0.375): the nets (stationarity 0.05-0.13) "
            "are not at a critical point (lab notes leaky-resnet.md, 2026-11-28)"
        ),
    ),
    Awaiting(
        experiment="leaky-resnet/layer-portrait",
        claims=("bottleneck-gap",),
        why=(
            "the flagship's L~ = 24 net: over the certification extension the middle-third "
            "median gap s_k*/s_(k*+1) of W_l moves 48.19 -> 49.80, more than a quarter of "
            "its window (0.75); spread_ratio (0.013 -> 0.032) and coi_middle_median "
            "(4.546 -> 4.549) stay within theirs (seed 0, 2026-11-28)"
        ),
    ),
)


def awaiting_of(experiment: str, claim: str) -> Awaiting | None:
    """The entry that leaves `claim` of `experiment` to the solver, or None."""
    return next((a for a in AWAITING if a.covers(experiment, claim)), None)

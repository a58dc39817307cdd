"""Claims whose quick-preset networks do not certify yet: their expected verdict is
`not-converged` until a solver reaches their critical points (spec `convergence.md`,
fourth review: gates are never loosened to pass). An entry either reads a quantity
discontinuous at kinks (`Reads(kinked=True)`), which needs stationarity <= 1e-4 (fifth
review), or cites the spec's decision that leaves its preset's nets to the solver (`spec`;
`fcnn/rank-vs-depth`: depths 10-12 at the interim gate 1e-2).

Unlike a finding (`_findings`), nothing is said about the paper's statement: the claim is
simply not judged. `make test-slow` expects `not-converged` for each entry and fails when
one certifies (then judge it, and remove the entry).

The entries name the experiment and its claims by their objects (`hvd.EXPERIMENT`,
`hvd.FROM_BELOW`); `AWAITING` is built on its first read (`_lazy.Lazy`), so importing the
package imports no experiment, and building it checks every claim is declared by its
experiment (`declared_id`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._lazy import Lazy

__all__ = ["AWAITING", "Awaiting", "awaiting_of", "declared_id"]


def declared_id(experiment: Any, claim: Any) -> str:
    """The id of `claim` (a `ClaimSpec`, or an id or glob pattern, tagged or not), checked
    against `experiment` when that is an `Experiment` (a name is not checked): a
    `ClaimSpec` must be one of its declared claims (the object itself), an id or pattern
    must match the id of one.

    Raises:
        ValueError: `experiment` declares no such claim.
    """
    cid = getattr(claim, "id", claim)
    specs = getattr(experiment, "specs", None)
    if specs is None:
        return cid
    if isinstance(claim, str):
        base = claim.partition("(")[0]
        ok = any(fnmatch.fnmatchcase(s.id, base) for s in specs)
    else:
        ok = any(s is claim for s in specs)
    if not ok:
        raise ValueError(f"{experiment.name} declares no claim {cid!r}")
    return cid


@dataclass(frozen=True)
class Awaiting:
    """Claims of one experiment left to the solver.

    Args:
        experiment: the experiment (an `Experiment`, or its name).
        claims: its claims (`ClaimSpec`s), or ids or glob patterns
            (`non-increasing(lam=0.0001)`); kept as ids, each checked against the
            experiment when that is an `Experiment` (`declared_id`).
        why: what the certificate measures there (numbers, settings).
        spec: for claims not tightly gated, the spec's decision that leaves these nets to
            the solver (page and words); empty for kinked claims.
    """

    experiment: Any
    claims: tuple[Any, ...]
    why: str
    spec: str = ""

    def __post_init__(self) -> None:
        ids = tuple(declared_id(self.experiment, c) for c in self.claims)
        object.__setattr__(self, "claims", ids)
        object.__setattr__(self, "experiment", getattr(self.experiment, "name", self.experiment))

    def covers(self, experiment: str, claim: str) -> bool:
        return experiment == self.experiment and any(
            fnmatch.fnmatchcase(claim, p) for p in self.claims
        )


def _entries() -> tuple[Awaiting, ...]:
    """The registry's entries (importing the experiments they name)."""
    from bottlenecklab.experiments.fcnn import rank_vs_depth as rvd
    from bottlenecklab.experiments.leaky_resnet import hamiltonian_vs_depth as hvd
    from bottlenecklab.experiments.leaky_resnet import layer_portrait as portrait
    from bottlenecklab.experiments.leaky_resnet import path_bounds as pb

    return (
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
        Awaiting(
            experiment=rvd.EXPERIMENT,
            claims=(rvd.RANK_FALLS, rvd.K_STAR_REACHED, rvd.SLOPE_IS_RANK, rvd.ONLY_MIDDLE_GROWS),
            why=(
                "the gate (1e-2, interim) reads every fitting net; the quick run of 2026-12-08 "
                "certifies depths 4-8 (8e-5 to 3.7e-3) and depth 10 seeds 0 and 2, depth 12 "
                "seed 2 (5.7e-3, 1.8e-3, 7.7e-3), but not depth 10 seed 1 (0.033) nor depth 12 "
                "seeds 0 and 1 (0.048, 0.042; 6764 and 6580 kink entries, the matrix-free "
                "certificate), and only depths 10-12 reach k* = 2 (lab notes fcnn.md)"
            ),
            spec=(
                "depth-and-rank.md, Decisions: every depth from its own random start; 'the "
                "route to certified deep nets is the solver'; the depths that reach k* = 2 "
                "(10 and 12) are the ones that do not certify, so the grid cannot be cut"
            ),
        ),
    )


AWAITING: Sequence[Awaiting] = Lazy(_entries)


def awaiting_of(experiment: str, claim: str) -> Awaiting | None:
    """The entry that leaves `claim` of `experiment` to the solver, or None."""
    return next((a for a in AWAITING if a.covers(experiment, claim)), None)

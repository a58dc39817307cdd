"""Claims whose quick-preset networks do not certify yet: their expected verdict is
`not-converged` until a solver reaches their critical points (spec `convergence.md`,
fourth review: gates are never loosened to pass). Each of them reads a quantity
discontinuous at kinks (`Reads(kinked=True)`), so it needs stationarity <= 1e-4 (fifth
review).

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
    """

    experiment: Any
    claims: tuple[Any, ...]
    why: str

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
    )


AWAITING: Sequence[Awaiting] = Lazy(_entries)


def awaiting_of(experiment: str, claim: str) -> Awaiting | None:
    """The entry that leaves `claim` of `experiment` to the solver, or None."""
    return next((a for a in AWAITING if a.covers(experiment, claim)), None)

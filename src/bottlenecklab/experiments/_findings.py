"""The registry of findings: paper statements the spec declares we measure not to hold
(spec `convergence.md`, "Findings"). Only the spec declares one; a finding's claim stays
asserted and stays `failed`, and `make test-slow` fails when it starts to pass.

Each entry holds the experiment, the claim id, the paper's statement and where, what we
measure (settings and numbers, as the spec records them), the pilots tried and what would
settle it. The report's "Not reproduced" section and the README's "What fails" are built
from this registry and the latest run's claims.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FINDINGS", "Finding", "finding_of"]


@dataclass(frozen=True)
class Finding:
    """A paper statement measured, on converged networks, not to hold in our setting.

    Args:
        experiment: the experiment's name; claim: the claim id it concerns.
        source: where the paper says it (`"000 App B, Fig 3"`); statement: what it says.
        measured: what we measure, with the settings.
        pilots: the pilots tried before declaring it.
        settle: what would settle it.
        spec: the spec page that declares it.
    """

    experiment: str
    claim: str
    source: str
    statement: str
    measured: str
    pilots: tuple[str, ...]
    settle: str
    spec: str

    @property
    def key(self) -> str:
        """`experiment:claim`, the id used in `claims.json` and the report's anchors."""
        return f"{self.experiment}:{self.claim}"


FINDINGS: tuple[Finding, ...] = (
    Finding(
        experiment="leaky-resnet/path-bounds",
        claim="path-length-constant",
        source="000 App B, Fig 3",
        statement="the path length stays relatively constant as the effective depth grows",
        measured=(
            "converged quick networks (critical-point residuals 0.09-0.14): path length "
            "31.2, 41.5, 49.9 at L~ = 6, 12, 24 (log-log slope 0.34) and 51.6 at L~ = 36 "
            "(depth 60; slope 0.29 from 24 to 36); l_gamma / L~ falls 5.2, 3.5, 2.1, 1.4: "
            "sublinear (what Thm 4 needs), not constant at L~ <= 36"
        ),
        pilots=(
            "three times the L-BFGS steps: path length 49.5 at L~ = 24",
            "the trust-region recipe: slope 0.355",
            "depth 60 to reach L~ = 36: slope 0.29 from 24 to 36",
        ),
        settle="a paper-size sweep to L~ >= 48 on a GPU",
        spec="leaky-resnets.md, Findings",
    ),
)


def finding_of(experiment: str, claim: str) -> Finding | None:
    """The registered finding of `claim` in `experiment`, or None."""
    for f in FINDINGS:
        if f.experiment == experiment and f.claim == claim:
            return f
    return None

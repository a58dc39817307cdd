"""The registry of findings: paper statements the spec declares we measure not to hold
(spec `convergence.md`, "Findings"). Only the spec declares one; a finding's claim stays
asserted and stays `failed`, and `make test-slow` fails when it starts to pass.

Each entry holds the experiment, the claim id, the paper's statement and where, what we
measure (settings and numbers, as the spec records them), the pilots tried and what would
settle it. The report's "Not reproduced" section and the "What does not pass" list of
`docs/reproduction.md` are built from this registry and the latest run's claims.

The entries name the experiment and its claims by their objects (`pb.EXPERIMENT`,
`pb.PATH_LENGTH_CONSTANT`); `FINDINGS` is built on its first read (`_lazy.Lazy`), so
importing the package imports no experiment, and building it checks every claim is
declared by its experiment (`_awaiting.declared_id`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._awaiting import awaiting_of, declared_id
from bottlenecklab.experiments._lazy import Lazy

__all__ = ["FINDINGS", "Finding", "expected_states", "finding_of"]


@dataclass(frozen=True)
class Finding:
    """A paper statement measured, on converged networks, not to hold in our setting.

    Args:
        experiment: the experiment (an `Experiment`, or its name); claim: the claim it
            concerns (its `ClaimSpec`, or its id); both are kept as names, the claim
            checked against the experiment when that is an `Experiment` (`declared_id`).
        source: where the paper says it (`"000 App B, Fig 3"`); statement: what it says.
        measured: what we measure, with the settings.
        pilots: the pilots tried before declaring it.
        settle: what would settle it.
        spec: the spec page that declares it.
        conditional: claims (`ClaimSpec`s or ids, kept as ids and checked like `claim`)
            of the same experiment that the spec checks only where
            the finding's statement holds (e.g. "every net with a 1-D middle has no
            tripoint", checked only when such a net exists): while the finding stands they
            are `not-measured`, which is then their expected verdict.
    """

    experiment: Any
    claim: Any
    source: str
    statement: str
    measured: str
    pilots: tuple[str, ...]
    settle: str
    spec: str
    conditional: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        exp = self.experiment
        object.__setattr__(self, "claim", declared_id(exp, self.claim))
        object.__setattr__(
            self, "conditional", tuple(declared_id(exp, c) for c in self.conditional)
        )
        object.__setattr__(self, "experiment", getattr(exp, "name", exp))

    @property
    def key(self) -> str:
        """`experiment:claim`, the id used in `claims.json` and the report's anchors."""
        return f"{self.experiment}:{self.claim}"


def _entries() -> tuple[Finding, ...]:
    """The registry's entries (importing the experiments they name)."""
    from bottlenecklab.experiments.leaky_resnet import path_bounds as pb
    from bottlenecklab.experiments.talk import tripoints

    return (
        Finding(
            experiment=pb.EXPERIMENT,
            claim=pb.PATH_LENGTH_CONSTANT,
            source="000 App B, Fig 3",
            statement=(
                "the path length int ||dA_p/dp|| dp stays relatively constant as the effective "
                "depth grows"
            ),
            measured=(
                "certified quick networks (seed 0, stationarity 0.096, 0.087, 0.079) at a fixed "
                "rho L~ = 0.4 (depths 15, 30, 60): the plain path length sum_l rho_l ||V_l||_F "
                "is 503, 863, 1335 at L~ = 6, 12, 24 (log-log slope 0.70); in the (K + gamma I) "
                "metric at gamma = 1/L~ 77.0, 110.3, 158.6 (slope 0.52), at gamma_l = "
                "1e-3 ||K_l||_op 34.3, 41.5, 47.0 (slope 0.23; l_gamma / L~ falls 5.7, 3.5, 2.0: "
                "sublinear, what Thm 4 needs), 2026-11-28. Not constant in any of the three"
            ),
            pilots=(
                "the same recipe at the fixed depth 30 (rho L~ = 0.2, 0.4, 0.8; stationarity "
                "0.050, 0.087, 0.135): plain length 535, 863, 1139 (slope 0.54); l_gamma at "
                "1/L~ 71.6, 110.3, 182.7 (0.68); at gamma_l 31.3, 41.5, 51.2 (0.355)",
                "before the re-measurement, l_gamma at gamma_l = 1e-3 ||K_l||_op at depth 30: "
                "31.2, 41.5, 49.9 at L~ = 6, 12, 24 (slope 0.34), 51.6 at L~ = 36 (depth 60)",
                "three times the L-BFGS steps: l_gamma 49.5 at L~ = 24",
                "the trust-region recipe: slope 0.355 of l_gamma",
            ),
            settle="a paper-size sweep to L~ >= 48 on a GPU",
            spec="leaky-resnets.md, Findings (re-measured as its fourth review asks)",
        ),
        Finding(
            experiment=tripoints.EXPERIMENT,
            claim=tripoints.DEEP_AFFINE_RANK_1,
            source="002 slide 'Implications: Classification' (its figure)",
            statement=(
                "the slide's figure shows a deep net's 4-class decision map without tripoints "
                "beside a shallow net's with them: deep networks classify through a rank-1 "
                "bottleneck (a 1-D middle representation), and a rank-1 classifier has no "
                "tripoints"
            ),
            measured=(
                "the slide's figure is not reproduced on the layouts tried (square, collinear, "
                "arc; L = 10, 20): on the square layout (4 blobs at (+-1, +-1), sigma 0.3; deep "
                "L = 10, width 32, certified) 0/3 deep nets reach a 1-D affine middle (centred "
                "middle s_2/s_1 0.955, 0.607, 0.952 at seeds 0-2; rank 1 needs <= 0.2), and "
                "rank 1 is not even the regularized optimum there: a deep net started from a "
                "1-D first layer ends 2-D at regularized loss 0.382 against 0.388 for the 2-D "
                "one, and a net that sees only a 1-D projection costs 0.640. The slide's "
                "conditional 'a rank-1 classifier has no tripoints' stays asserted "
                "(rank1-no-tripoint) and is not-measured while no net is rank 1. The talk's "
                "own theory predicts rank underestimation is costly (R^(1) >~ 2(1 - 1/k*) "
                "log N for a BN-rank 1 fit) and 'rare in practice': the measurement agrees "
                "with it"
            ),
            pilots=(
                "collinear blobs (+-1, 0), (+-3, 0): the shallow net has no tripoint; the deep "
                "net's middle is 2-D (ratio 0.45), 1-D only at layer 1",
                "arc (+-3, 0), (+-1, 1), sigma 0.3: shallow tripoints 3/3, deep middle 2-D "
                "in 3/3 (ratios 0.46-0.51)",
                "steeper arcs (+-1, 1.5) sigma 0.2 and (+-1, 2) sigma 0.15: shallow tripoints "
                "at seed 0; deep nets not trained",
                "earlier: L = 10, 20, 40, lam 3e-3 to 3e-2, sigma 0.3 and 0.15, init 0.7-1, "
                "small initialization: every deep net keeps two middle directions or collapses",
            ),
            settle=(
                "a layout (or width/depth/lam) where a 1-D affine middle is the regularized "
                "optimum and the shallow net still has a tripoint; then rank1-no-tripoint is "
                "measured on the rank-1 nets"
            ),
            spec="depth-and-rank.md, Findings",
            conditional=(tripoints.RANK1_NO_TRIPOINT,),
        ),
    )


FINDINGS: Sequence[Finding] = Lazy(_entries)


def finding_of(experiment: str, claim: str) -> Finding | None:
    """The registered finding of `claim` in `experiment`, or None."""
    for f in FINDINGS:
        if f.experiment == experiment and f.claim == claim:
            return f
    return None


def expected_states(experiment: str, claim: str, asserted: bool = True) -> tuple[str, ...]:
    """The verdicts a quick preset may give `claim` of `experiment` (`make test-slow`):
    `reported` for a reported number, `failed` for a registered finding, `not-measured`
    or `passed` for a claim conditional on a finding's statement (measured only where it
    holds), `not-converged` for a claim left to the solver (`_awaiting.AWAITING`), else
    `passed`."""
    if not asserted:
        return ("reported",)
    if awaiting_of(experiment, claim) is not None:
        return ("not-converged",)
    if finding_of(experiment, claim) is not None:
        return ("failed",)
    if any(f.experiment == experiment and claim in f.conditional for f in FINDINGS):
        return ("not-measured", "passed")
    return ("passed",)

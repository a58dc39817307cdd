"""What an experiment is: a declarative recipe (config, presets, grid, measurement, claims)."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bottlenecklab.config import ConfigError
from bottlenecklab.training import PhaseConfig

__all__ = [
    "PRESETS",
    "STATES",
    "Claim",
    "Experiment",
    "Gate",
    "Measurement",
    "PointResult",
    "Reads",
]

PRESETS = ("smoke", "quick", "paper")

# A claim's verdict (spec `convergence.md`): `passed` and `failed` need a converged network
# (certificate) for claims about trained networks; `reported` is never counted.
STATES = ("passed", "failed", "not-converged", "reported", "not-measured")


@dataclass(frozen=True)
class Gate:
    """The convergence certificate's settings for an experiment (spec `convergence.md`).

    Args:
        threshold: largest nonsmooth stationarity (relative to the regularization force)
            of a converged network.
        tau: the kink band, relative to each layer's rms pre-activation.
        earlier: where in the last training phase the earlier state for value stability
            is kept (fraction of that phase's steps), when there is no `extension`. It
            is the first logged state at or after that step while the phase still moved;
            when the phase stopped early before it (or logged no row there), the state
            at the start of the last phase.
        extension: the certification extension (spec `convergence.md`, fourth review):
            phases (at `train.lam`, the last one exact) run from the final state by an
            optimizer that can still move there; value stability then compares the end
            of training with the end of the extension, and `earlier` is not used. The
            claims and the certificate read the end of training.
    """

    threshold: float = 1e-2
    tau: float = 1e-6
    earlier: float = 0.75
    extension: tuple[PhaseConfig, ...] = ()

    def __post_init__(self) -> None:
        if not self.threshold > 0 or not self.tau > 0:
            raise ConfigError("certify.threshold and certify.tau must be > 0")
        if not 0 <= self.earlier <= 1:
            raise ConfigError(f"certify.earlier must be in [0, 1], got {self.earlier}")
        if self.extension and self.extension[-1].smooth:
            raise ConfigError(
                "the certification extension's last phase is smoothed (smooth > 0): end it "
                "with an exact phase (the network whose values are compared)"
            )
        if self.extension and sum(p.steps for p in self.extension) < 1:
            raise ConfigError("certify.extension has no step: give its phases steps")


@dataclass(frozen=True)
class Reads:
    """The per-point scalars a claim about trained networks reads, and its tolerance window.

    The claim counts only when every one of them moved by at most `window / 4` between
    the earlier state of the last phase and the end of training (value stability), and
    every point's certificate passed.

    Args:
        scalars: names in each point's `scalars` (the measurement's summary row).
        window: width of the claim's tolerance window, in the scalars' units (or relative
            to the value's magnitude when `relative`).
        relative: `window` is relative (e.g. a 2 % tolerance: `window=0.02`).
        points: which grid points the claim reads: `"all"`, or `"last"` (the last
            finished point in grid order, e.g. the largest `L~` of a sweep).
        where: only the points whose swept values match these (e.g.
            `{"model.depth": 2}` for a claim about the shallow nets).
    """

    scalars: tuple[str, ...]
    window: float
    relative: bool = False
    points: str = "all"
    where: Mapping[str, Any] = field(default_factory=dict)

    def select(self, points: list[PointResult]) -> list[PointResult]:
        """The finished points this claim reads."""
        done = [
            p
            for p in points
            if p.status == "done" and all(p.point.get(k) == v for k, v in self.where.items())
        ]
        return done[-1:] if self.points == "last" else done


@dataclass(frozen=True)
class Claim:
    """A checkable statement of a paper, measured by a run (`claims.json` entry).

    Args:
        id: short identifier; source: document and figure/theorem (`"000 Fig 1a"`);
        statement: what is claimed; expected: the criterion with its tolerance;
        measured: the measured value(s); passed: whether `measured` meets `expected`;
        asserted: False for a number the spec asks only to report (no criterion): such a
            claim is shown as REPORTED and never counted as a pass or a failure.
        state: the verdict, one of `STATES` (set by the runner; `passed` is True exactly
            when the state is `passed`).
        certificate: for a claim about trained networks, the certificate's numbers
            (worst stationarity and threshold, worst value change and its allowance, why
            it failed).
        finding: the id of the registered finding this claim is (spec-declared paper
            statements measured not to hold), else None.
        margin: the measured value's signed distance to the bound, in the claim's units
            (`> 0` inside, `< 0` outside; the smallest over a sequence's steps), or None
            where no single number applies: compared with its spread over seeds and
            thread counts, it says whether a verdict is robust (`tools/margins.py`).
        margin_scale: the unit of `margin`: `"linear"` (the claim's own units) or
            `"decades"` (orders of magnitude above a round-off tolerance, for an exact
            statement checked in floating point: `claims.holds_to_roundoff`).
    """

    id: str
    source: str
    statement: str
    expected: str | float
    measured: str | float | None
    passed: bool
    asserted: bool = True
    state: str = ""
    certificate: dict[str, Any] | None = None
    finding: str | None = None
    margin: float | None = None
    margin_scale: str = "linear"


@dataclass(frozen=True)
class Measurement:
    """What an experiment measures on one trained network.

    Args:
        scalars: named numbers (one row of the run's summary table).
        layers: per-layer rows (long tables for plots), may be empty.
        spectra: singular values only, long format `{"layer", "matrix", "index", "value"}`,
            `index` 1-based (`s_1 >= s_2 >= ...`).
        tables: any other long tables, by name, one schema per name (e.g. `"pca"`:
            `{"layer", "sample", "x", "y"}`); each becomes `<name>.parquet` of the run.
    """

    scalars: dict[str, float]
    layers: list[dict[str, float]] = field(default_factory=list)
    spectra: list[dict[str, Any]] = field(default_factory=list)
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def all_tables(self) -> dict[str, list[dict[str, Any]]]:
        """`layers`, `spectra` and the named `tables` together (what the run store keeps)."""
        reserved = {"layers", "spectra", "summary", "metrics"} & set(self.tables)
        if reserved:
            raise ValueError(f"Measurement.tables may not use the reserved names {reserved}")
        return {"layers": self.layers, "spectra": self.spectra, **self.tables}


@dataclass(frozen=True)
class PointResult:
    """One grid point of a run: its swept values, status and measurements; `metrics`: its
    logged training rows (`metrics.csv`: loss, ..., and the experiment's `trace` columns),
    for claims on the training path."""

    id: str
    point: dict[str, Any]
    status: str  # "done" | "diverged"
    message: str
    scalars: dict[str, float]
    layers: list[dict[str, float]]
    spectra: list[dict[str, Any]]
    steps: int
    wall_s: float
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    metrics: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Experiment:
    """A named, declarative reproduction of one figure or group of claims.

    Args:
        name: `area/short-name`; source: the paper's figure (`"000 Fig 1a"`);
        title: one line for `bottlenecklab list`.
        config: the paper's configuration (a frozen dataclass with `task`, `model`,
            `train` and `seed` fields, plus the experiment's own).
        presets: `smoke` / `quick` / `paper` overrides of `config` (dotted keys), each with
            the reason in the experiment module's comments.
        grid: run-config key -> name of the config field holding its swept values
            (`{"model.leak": "leaks"}`); one training run per combination.
        measure: `(model, data, config) -> Measurement`, on a trained network.
        claims: `(config, [PointResult]) -> [Claim]`.
        figures: names of figure makers in `bottlenecklab.report`.
        trains: `False` for experiments that compute without training a network (ODE
            integration, closed forms): `measure` is then called as `(None, None, config)`
            and the config needs no `task`/`model`/`train` fields.
        doc: the module docstring (command to run, expected result, measured time).
        claim_figures: claim id -> the figure (a name in `figures`) that shows it; the
            report links each claim there (default: the experiment's first figure).
        reads: claim id (or an `fnmatch` pattern such as `plateau*`) -> what it reads
            (`Reads`): the claim is then gated by the convergence certificate.
        ungated: claim id (or pattern) -> why no certificate applies to it (a claim on the
            training dynamics, an identity that holds at any parameters, ...).
        trace: `(model, config, step) -> columns` added to every logged training row of a
            point (`metrics.csv`), computed from the network at that step: what a claim on
            the training path needs beyond the loss (e.g. `theta / ||theta||`); numbers or
            strings, the same columns in every row (`""` at steps where a column is not
            due). Points of an experiment with a trace are never trained as ensembles.
    """

    name: str
    source: str
    title: str
    config: Any
    presets: Mapping[str, Mapping[str, Any]]
    grid: Mapping[str, str]
    measure: Callable[[Any, Any, Any], Measurement]
    claims: Callable[[Any, list[PointResult]], list[Claim]]
    figures: tuple[str, ...] = ()
    trains: bool = True
    doc: str = ""
    claim_figures: Mapping[str, str] = field(default_factory=dict)
    reads: Mapping[str, Reads] = field(default_factory=dict)
    ungated: Mapping[str, str] = field(default_factory=dict)
    trace: Callable[[Any, Any, int], dict[str, Any]] | None = None

    def reads_of(self, claim_id: str) -> Reads | None:
        """What claim `claim_id` reads (`None`: not gated by the certificate)."""
        if claim_id in self.reads:
            return self.reads[claim_id]
        for pattern, reads in self.reads.items():
            if fnmatch.fnmatchcase(claim_id, pattern):
                return reads
        return None

    def is_ungated(self, claim_id: str) -> bool:
        """Whether `claim_id` is declared free of the certificate (`ungated`)."""
        return claim_id in self.ungated or any(
            fnmatch.fnmatchcase(claim_id, p) for p in self.ungated
        )

    def figure_of(self, claim_id: str) -> str | None:
        """The figure that shows claim `claim_id` (`None` for an experiment without one)."""
        return self.claim_figures.get(claim_id, self.figures[0] if self.figures else None)

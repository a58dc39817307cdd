"""What an experiment is: a declarative recipe (config, presets, grid, measurement, claims).

An experiment module declares a `Config` (a frozen dataclass), a `measure` function, one
`ClaimSpec` per claim of the paper (its id, statement, certificate gate and `check`) and
an `Experiment` that holds them; the runner does the rest (`_verdicts.evaluate`): it
selects each claim's finished points, marks the claim `not-measured` when a training
diverged, runs `check`, writes expected and measured values, applies the certificate.
"""

from __future__ import annotations

import dataclasses
import math
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from bottlenecklab.config import ConfigError
from bottlenecklab.experiments._record import (
    CertificateRecord,
    EarlierState,
    ExtensionRecord,
    split,
)
from bottlenecklab.measure import Quantity
from bottlenecklab.training import PhaseConfig

__all__ = [
    "KINK_THRESHOLD",
    "PRESETS",
    "STATES",
    "Claim",
    "ClaimSpec",
    "Experiment",
    "Gate",
    "Measure",
    "Measurement",
    "Outcome",
    "PointResult",
    "Points",
    "Reads",
    "Ungated",
]

C = TypeVar("C")  # an experiment's config type

PRESETS = ("smoke", "quick", "paper")

# A claim's verdict (spec `convergence.md`): `passed` and `failed` need a converged network
# (certificate) for claims about trained networks; `reported` is never counted.
STATES = ("passed", "failed", "not-converged", "reported", "not-measured")

# The stationarity gate of a claim that reads a quantity discontinuous at ReLU kinks
# (`Reads(kinked=True)`; spec `convergence.md`, fifth review): far from a critical point
# such a quantity is chaotic, so neither it nor its value stability decides anything.
KINK_THRESHOLD = 1e-4


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
        scalars: the quantities read (`measure.Quantity`, declared where they are
            computed), or, in an experiment not converted yet, their names in each
            point's `scalars` (the measurement's summary row).
        window: width of the claim's tolerance window, in the scalars' units (or relative
            to the value's magnitude when `relative`).
        relative: `window` is relative (e.g. a 2 % tolerance: `window=0.02`).
        points: which grid points the claim reads: `"all"`, or `"last"` (the last
            finished point in grid order, e.g. the largest `L~` of a sweep).
        where: only the points whose swept values match these (e.g.
            `{"model.depth": 2}` for a claim about the shallow nets).
        kinked: a scalar read is discontinuous at ReLU kinks (momenta with a `sigma'(0)`
            choice, the Hamiltonian, a gap ratio at a kink-dependent layer): the claim is
            gated at stationarity `<= KINK_THRESHOLD` whatever the experiment's
            threshold, on top of value stability. Set when any quantity read is declared
            `kinked`.
    """

    scalars: tuple[Quantity | str, ...]
    window: float
    relative: bool = False
    points: str = "all"
    where: Mapping[str, Any] = field(default_factory=dict)
    kinked: bool = False

    def threshold(self, gate: Gate) -> float:
        """The largest stationarity this claim's points may have under `gate`."""
        return min(gate.threshold, KINK_THRESHOLD) if self.kinked else gate.threshold

    def __post_init__(self) -> None:
        if self.points not in ("all", "last"):
            raise ValueError(f"Reads.points must be 'all' or 'last', got {self.points!r}")
        if any(isinstance(q, Quantity) and q.kinked for q in self.scalars):
            object.__setattr__(self, "kinked", True)

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the quantities read (their columns in a point's summary row)."""
        return tuple(str(q) for q in self.scalars)

    @property
    def quantities(self) -> tuple[Quantity, ...]:
        """The quantities read that are declared (`measure.Quantity`)."""
        return tuple(q for q in self.scalars if isinstance(q, Quantity))

    def matches(self, point: PointResult) -> bool:
        """Whether `point`'s swept values match `where` (whatever its status)."""
        return all(point.point.get(k) == v for k, v in self.where.items())

    def select(self, points: Sequence[PointResult]) -> list[PointResult]:
        """The finished points this claim's certificate reads."""
        done = [p for p in points if p.status == "done" and self.matches(p)]
        return done[-1:] if self.points == "last" else done


@dataclass(frozen=True)
class Ungated:
    """Why no convergence certificate applies to a claim (the gate of a `ClaimSpec`): a
    claim on the training dynamics, an identity that holds at any parameters, a closed
    form, an experiment that trains nothing, a number read off an untrained network.

    Args:
        why: the reason, one sentence (shown with the experiment's claims).
        where: only the points whose swept values match these are the claim's (e.g.
            `{"run": "theory"}`): its `check` reads them, and only their divergence
            makes it `not-measured`.
        reads: for a claim its experiment gates itself (e.g. `_plateau.plateau_gate`),
            what that gate reads: the runner certifies the points and keeps these
            quantities' earlier values (value stability), as for a `Reads` gate.
    """

    why: str
    where: Mapping[str, Any] = field(default_factory=dict)
    reads: Reads | None = None

    def __post_init__(self) -> None:
        if not self.why.strip():
            raise ValueError("Ungated needs the reason no certificate applies")

    def matches(self, point: PointResult) -> bool:
        """Whether `point`'s swept values match `where` (whatever its status)."""
        return all(point.point.get(k) == v for k, v in self.where.items())


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
class Measure:
    """A measurement declared once and shared by experiments: the function that measures
    one trained network and the quantities it writes (`measure.Quantity`). An experiment
    whose claims read only these gives it as its `measure`, with no `measure()` of its
    own; the runner refuses a claim that reads a quantity the measurement does not write.

    Args:
        function: `(model, data, config) -> Measurement` (float64; no formula in it: it
            calls `bottlenecklab.measure`).
        quantities: the quantities every measurement holds (`Measurement.scalars`; of a
            family, `Quantity(shape="per width")`, at least one member).
    """

    function: Callable[[Any, Any, Any], Measurement]
    quantities: tuple[Quantity, ...]

    def __call__(self, model: Any, data: Any, cfg: Any) -> Measurement:
        m = self.function(model, data, cfg)
        missing = [q.name for q in self.quantities if not any(map(q.holds, m.scalars))]
        if missing:
            raise ValueError(f"{self.function.__name__} did not measure {missing}")
        return m

    def writes(self, quantity: Quantity | str) -> bool:
        """Whether the measurement holds `quantity` (by name; a family's member too)."""
        return any(q.holds(str(quantity)) for q in self.quantities)

    def plus(self, *quantities: Quantity) -> Measure:
        """This measurement and `quantities`, each computed by its own `function(model,
        data) -> float` on the same trained network (`docs/add-a-quantity.md`)."""
        base = self.function

        def measured(model: Any, data: Any, cfg: Any) -> Measurement:
            m = base(model, data, cfg)
            extra = {q.name: float(q.function(model, data)) for q in quantities}
            return dataclasses.replace(m, scalars={**m.scalars, **extra})

        measured.__name__ = base.__name__
        return Measure(measured, (*self.quantities, *quantities))

    def then(
        self,
        function: Callable[[Measurement, Any, Any, Any], Mapping[str, float]],
        quantities: Sequence[Quantity],
    ) -> Measure:
        """This measurement, then `function(measurement, model, data, config)`: scalars
        derived from it (e.g. statistics of its layer table over regions of the depth),
        added to it; `quantities`: those scalars' declarations."""
        base = self.function

        def measured(model: Any, data: Any, cfg: Any) -> Measurement:
            m = base(model, data, cfg)
            extra = dict(function(m, model, data, cfg))
            return dataclasses.replace(m, scalars={**m.scalars, **extra})

        measured.__name__ = function.__name__
        return Measure(measured, (*self.quantities, *quantities))


@dataclass(frozen=True)
class PointResult:
    """One grid point of a run: its swept values, status and measurements; `metrics`: its
    logged training rows (`metrics.csv`: loss, ..., and the experiment's `trace` columns),
    for claims on the training path; for a trained point whose claims read it, its
    convergence `certificate`, certification `extension` and `earlier` state (the values
    value stability compares with), typed (`_record`). Scalars given in the stored flat
    form (`cert_*`, `ext_*`, `prev_*` columns, e.g. a run written before) are moved into
    those records.
    """

    id: str
    point: dict[str, Any]
    status: str  # "done" | "diverged" | "killed" (its worker process died) | "failed"
    message: str
    scalars: dict[str, float]
    layers: list[dict[str, float]]
    spectra: list[dict[str, Any]]
    steps: int
    wall_s: float
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    certificate: CertificateRecord | None = None
    extension: ExtensionRecord | None = None
    earlier: EarlierState | None = None

    def __post_init__(self) -> None:
        scalars, cert, ext, earlier = split(self.scalars)
        if len(scalars) == len(self.scalars):
            return
        if earlier is not None and self.earlier is not None:
            values = {**self.earlier.values, **earlier.values}
            step = earlier.step if math.isfinite(earlier.step) else self.earlier.step
            earlier = EarlierState(step, values)
        object.__setattr__(self, "scalars", scalars)
        object.__setattr__(self, "certificate", cert or self.certificate)
        object.__setattr__(self, "extension", ext or self.extension)
        object.__setattr__(self, "earlier", earlier or self.earlier)

    def value(self, quantity: Any) -> float:
        """The value of `quantity` (a `Quantity` or its name) at this point."""
        return self.scalars[getattr(quantity, "name", quantity)]

    def get(self, quantity: Any, default: float = math.nan) -> float:
        """The value of `quantity` at this point, or `default` where it was not measured
        (e.g. a timing of the adaptive points only)."""
        return self.scalars.get(getattr(quantity, "name", quantity), default)

    def change(self, quantity: Any) -> float:
        """`|value - earlier value|` of `quantity` (its move over the certification
        extension, or since the earlier state); nan without an earlier value."""
        before = self.earlier.get(quantity) if self.earlier is not None else None
        return abs(self.value(quantity) - before) if before is not None else math.nan


class Points(tuple[PointResult, ...]):
    """The finished points a claim's `check` reads, in grid order (a tuple of
    `PointResult`, with shorthands for what checks read most)."""

    @property
    def last(self) -> PointResult:
        """The last point in grid order (e.g. the largest `L~` of a sweep)."""
        return self[-1]

    def values(self, quantity: Any) -> list[float]:
        """`quantity` (a `Quantity` or its name) of every point, in grid order."""
        return [float(p.value(quantity)) for p in self]

    def swept(self, key: str) -> list[Any]:
        """The swept value `key` (a `grid` key, e.g. `"model.leak"`) of every point."""
        return [p.point[key] for p in self]


@dataclass(frozen=True)
class Outcome:
    """What a claim's `check` found: its criterion and measured value, without the claim's
    id, source or statement (the `ClaimSpec` has those). Built by the helpers of
    `bottlenecklab.experiments._checks` (`at_most`, `in_range`, `reported`, ...).

    Args:
        expected: the criterion with its tolerance (`"<= 0.5"`).
        measured: the measured value(s), a number (4 significant digits) or text.
        passed: whether `measured` meets `expected` (before the certificate).
        asserted: False for a number only reported (state `reported`, never counted).
        margin, margin_scale: the signed distance to the bound (`Claim.margin`).
        state: `""` (the runner judges it), or `"not-measured"` / `"not-converged"` when
            the check itself decided (nothing to read; the experiment's own gate).
        facts: values the statement's `{name}` fields are filled with.
        certificate: the record of the experiment's own convergence gate, in the
            runner's form (`_verdicts.certificate_record`), for a claim declared
            `Ungated` that its check gates itself: it becomes `Claim.certificate`. (A
            claim that `Reads` gets the runner's certificate instead.)
    """

    expected: str
    measured: str | float | None
    passed: bool
    asserted: bool = True
    margin: float | None = None
    margin_scale: str = "linear"
    state: str = ""
    facts: Mapping[str, Any] = field(default_factory=dict)
    certificate: Mapping[str, Any] | None = None

    def with_facts(self, **facts: Any) -> Outcome:
        """The same outcome with more `facts` for the statement."""
        return dataclasses.replace(self, facts={**self.facts, **facts})


class _Unknown:
    """A statement field the outcome gave no value for (printed `?`)."""

    def __getattr__(self, name: str) -> _Unknown:
        return self

    def __getitem__(self, key: Any) -> _Unknown:
        return self


_UNKNOWN = _Unknown()


class _StatementFormatter(string.Formatter):
    def get_value(self, key: int | str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        return kwargs.get(key, _UNKNOWN) if isinstance(key, str) else args[key]

    def format_field(self, value: Any, format_spec: str) -> str:
        return "?" if isinstance(value, _Unknown) else super().format_field(value, format_spec)


_NOT_DONE = {
    "diverged": "trainings diverged",
    "killed": "points killed",
    "failed": "points failed",
}


def diverged_reason(points: Sequence[PointResult]) -> str | None:
    """Why claims over `points` cannot be measured, or None when every point finished:
    per kind of point that did not finish, `"2 of 4 trainings diverged: <first reason>"`,
    `"1 of 1 points killed: killed by SIGKILL ..."` (a worker process that died, e.g.
    out of memory), `"1 of 3 points failed: <error>"`; or no point at all."""
    if not points:
        return "no point was run"
    bad = [p for p in points if p.status != "done"]
    if not bad:
        return None
    parts = []
    for status in dict.fromkeys(p.status for p in bad):
        these = [p for p in bad if p.status == status]
        what = _NOT_DONE.get(status, f"points {status}")
        first = f": {these[0].message}" if these[0].message else ""
        parts.append(f"{len(these)} of {len(points)} {what}{first}")
    return "; ".join(parts)


@dataclass(frozen=True)
class ClaimSpec(Generic[C]):
    """One claim of a paper, declared once: what the runner needs to measure and judge it.

    Args:
        id: short identifier, unique in the experiment (`"from-below"`).
        statement: what is claimed, a `str.format` template filled with the config
            (`{cfg.task.k_star}`, `{cfg.rank_window[1]:g}`) and the outcome's `facts`
            (`{leaks}`); a field the outcome does not give prints as `?`; a literal
            brace is doubled (`{{0, 1}}`).
        gate: `Reads(...)` (the per-point scalars the claim reads and its tolerance
            window: the convergence certificate and value stability gate it), or
            `Ungated("why")` (why no certificate applies); `None` only for a number that
            is reported, never asserted (its `check` returns `reported(...)`).
        check: `(config, points) -> Outcome`, on the finished points the claim reads
            (`Points`, grid order; those matching `gate.where`). It is not called when a
            training of those points diverged: the claim is then `not-measured`, with
            the reason.
        source: the paper's place (`"000 Thm 4"`); default: the experiment's `source`.
        figure: the figure that shows the claim (a name in the experiment's `figures`);
            default: the experiment's first figure.
        partial: call `check` on the finished points even when some diverged (a claim
            that counts the failures itself, e.g. "most seeds ..."); it is
            `not-measured` only when no point finished.
        when: the claim exists only in the configs where `when(config)` holds (e.g. the
            slope at depth 4, in a preset that sweeps depth 3 only: the claim is then
            left out, not reported unmeasured); `None`: in every config.
    """

    id: str
    statement: str
    gate: Reads | Ungated | None
    check: Callable[[C, Points], Outcome]
    source: str | None = None
    figure: str | None = None
    partial: bool = False
    when: Callable[[C], bool] | None = None

    def selected(self, points: Sequence[PointResult]) -> list[PointResult]:
        """The points this claim reads, whatever their status (`gate.where`)."""
        if self.gate is None:
            return list(points)
        return [p for p in points if self.gate.matches(p)]

    def outcome(self, cfg: C, points: Sequence[PointResult]) -> Outcome:
        """`check` on the claim's finished points, or `not-measured` when a training of
        them diverged (unless `partial`) or none finished."""
        sel = self.selected(points)
        done = Points(p for p in sel if p.status == "done")
        why = diverged_reason(sel)
        if why is not None and (not self.partial or not done):
            return Outcome("see spec", f"not measured: {why}", False, state="not-measured")
        return self.check(cfg, done)

    def claim(self, cfg: C, outcome: Outcome, source: str, tag: str = "") -> Claim:
        """The `Claim` (before the verdict) of `outcome`, its statement filled in (and
        its id tagged by `tag`, e.g. `"(lam=0.001)"`, for a claim repeated per value of
        `Experiment.per`); the outcome's `certificate` becomes the claim's."""
        facts = {**outcome.facts, "cfg": cfg}
        statement = _StatementFormatter().vformat(self.statement, (), facts)
        cert = dict(outcome.certificate) if outcome.certificate is not None else None
        return Claim(
            self.id + tag,
            self.source or source,
            statement,
            outcome.expected,
            outcome.measured,
            outcome.passed,
            asserted=outcome.asserted,
            state=outcome.state,
            certificate=cert,
            margin=outcome.margin,
            margin_scale=outcome.margin_scale,
        )


def _value_text(value: Any) -> str:
    """A swept value as it appears in a tagged claim id (`0.001`, `relu`)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return format(value, "g")
    return str(value)


def _config_value(cfg: Any, key: str) -> Any:
    """The config's value at a dotted key (`"train.lam"`), or None where it has none."""
    for part in key.split("."):
        cfg = getattr(cfg, part, None)
    return cfg


@dataclass(frozen=True)
class Experiment(Generic[C]):
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
        measure: a declared `Measure` (the quantities it writes: every quantity a claim
            reads must be one of them), or `(model, data, config) -> Measurement`, on a
            trained network.
        claims: the experiment's `ClaimSpec`s, one per claim, in report order.
        figures: the figures drawn from a run, each `"module:function"` (a function
            `(RunRecord, folder) -> [png paths]` in `bottlenecklab.report.<module>`,
            e.g. `"_leaky_resnet:hamiltonian_vs_leak"`; a module starting with
            `bottlenecklab.` is absolute). After construction `figures` holds the
            names (the functions' names, the png stems) and `figure_refs` maps each name
            to its reference.
        trains: `False` for experiments that compute without training a network (ODE
            integration, closed forms): `measure` is then called as `(None, None, config)`
            and the config needs no `task`/`model`/`train` fields.
        doc: the module docstring (command to run, expected result, measured time).
        trace: `(model, config, step) -> columns` added to every logged training row of a
            point (`metrics.csv`), computed from the network at that step: what a claim on
            the training path needs beyond the loss (e.g. `theta / ||theta||`); numbers or
            strings, the same columns in every row (`""` at steps where a column is not
            due). Points of an experiment with a trace are never trained as ensembles.
        figure_refs: derived from `figures` (name -> `"module:function"`); given only by
            `dataclasses.replace` (whose `figures` are already names).
        per: a config key (`"train.lam"`, usually a `grid` key): every claim is measured
            and judged once per value of it among a run's points (a point outside the
            grid key has the config's value), on that value's points only (the
            divergence guard and the certificate too), in order of the values, all
            claims of the first value first. With several values each id is tagged
            `(lam=0.001)` (the key's last part) and the statement's `{tag}` field is
            ` (lam = 0.001)`; with one value ids are untagged and `{tag}` is empty.

    After construction, `reads` (claim id -> `Reads`), `ungated` (claim id -> why no
    certificate applies), `recorded` (the names of every quantity a gate reads, the
    experiment's own gates included: their earlier values are kept) and `claim_figures`
    (claim id -> figure) are derived from the claims (their declared ids, untagged).
    """

    name: str
    source: str
    title: str
    config: C
    presets: Mapping[str, Mapping[str, Any]]
    grid: Mapping[str, str]
    measure: Measure | Callable[[Any, Any, C], Measurement]
    claims: Sequence[ClaimSpec[C]]
    figures: tuple[str, ...] = ()
    trains: bool = True
    doc: str = ""
    trace: Callable[[Any, C, int], dict[str, Any]] | None = None
    figure_refs: Mapping[str, str] = field(default_factory=dict)
    per: str | None = None
    reads: Mapping[str, Reads] = field(init=False)
    ungated: Mapping[str, str] = field(init=False)
    recorded: tuple[str, ...] = field(init=False)
    claim_figures: Mapping[str, str] = field(init=False)

    def __post_init__(self) -> None:
        parsed = {ref.rpartition(":")[2]: ref for ref in self.figures}
        if len(parsed) < len(self.figures):
            raise ValueError(f"{self.name}: two figures share a name: {self.figures}")
        refs = {**self.figure_refs, **{k: v for k, v in parsed.items() if ":" in v}}
        bare = [n for n in parsed if n not in refs]
        if bare:
            raise ValueError(
                f"{self.name}: figures {bare} name no module: declare each as "
                '"module:function" (e.g. "_l2:l2_forces")'
            )
        object.__setattr__(self, "figures", tuple(parsed))
        object.__setattr__(self, "figure_refs", refs)
        if callable(self.claims) or not all(isinstance(s, ClaimSpec) for s in self.claims):
            raise TypeError(f"{self.name}: claims must be a sequence of ClaimSpec")
        specs = tuple(self.claims)
        object.__setattr__(self, "claims", specs)
        ids = [s.id for s in specs]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"{self.name}: claim ids declared twice: {twice}")
        for s in specs:
            try:
                list(string.Formatter().parse(s.statement))
            except ValueError as e:
                raise ValueError(f"{self.name}: {s.id}'s statement: {e} (write {{{{ for {{)") from e
            if isinstance(s.gate, Reads) and not self.trains:
                raise ValueError(f"{self.name}: {s.id} reads a certificate but nothing trains")
            if s.figure is not None and s.figure not in refs:
                raise ValueError(f"{self.name}: {s.id} names figure {s.figure!r}, not declared")
            if isinstance(s.gate, Reads) and isinstance(self.measure, Measure):
                unwritten = [q for q in s.gate.names if not self.measure.writes(q)]
                if unwritten:
                    raise ValueError(f"{self.name}: {s.id} reads {unwritten}, not measured")
        object.__setattr__(
            self, "reads", {s.id: s.gate for s in specs if isinstance(s.gate, Reads)}
        )
        object.__setattr__(
            self, "ungated", {s.id: s.gate.why for s in specs if isinstance(s.gate, Ungated)}
        )
        own = [s.gate.reads for s in specs if isinstance(s.gate, Ungated) and s.gate.reads]
        object.__setattr__(
            self,
            "recorded",
            tuple(sorted({n for r in (*self.reads.values(), *own) for n in r.names})),
        )
        object.__setattr__(
            self, "claim_figures", {s.id: s.figure for s in specs if s.figure is not None}
        )

    @property
    def quantities(self) -> tuple[Quantity, ...]:
        """The declared quantities the claims read (`Reads`), in order of first use."""
        seen: dict[str, Quantity] = {}
        for r in self.reads.values():
            for q in r.quantities:
                seen.setdefault(q.name, q)
        return tuple(seen.values())

    @property
    def specs(self) -> tuple[ClaimSpec[C], ...]:
        """The declared claims."""
        return tuple(self.claims)

    def active(self, cfg: C) -> list[ClaimSpec[C]]:
        """The claims of config `cfg` (those whose `when` holds)."""
        return [s for s in self.specs if s.when is None or s.when(cfg)]

    def partition(
        self, cfg: C, points: Sequence[PointResult]
    ) -> list[tuple[str, list[PointResult]]]:
        """`(tag, points)` per value of `per` among `points` (values sorted; tag
        `"(lam=0.001)"`, or `""` with one value), or `[("", points)]` without `per`."""
        if self.per is None:
            return [("", list(points))]
        key, short = self.per, self.per.rpartition(".")[2]
        default = _config_value(cfg, key)
        value = lambda p: p.point.get(key, default)  # noqa: E731
        values = sorted({value(p) for p in points})
        if len(values) <= 1:
            return [("", list(points))]
        return [
            (f"({short}={_value_text(v)})", [p for p in points if value(p) == v]) for v in values
        ]

    def measured(self, cfg: C, points: Sequence[PointResult], tag: str = "") -> list[Claim]:
        """The claims of `cfg` measured on `points`, one value's points of `per` (ids
        tagged by `tag`, the statements' `{tag}` filled)."""
        out = []
        for s in self.active(cfg):
            o = s.outcome(cfg, points)
            if self.per is not None:
                o = o.with_facts(tag=f" ({tag[1:-1].replace('=', ' = ')})" if tag else "")
            out.append(s.claim(cfg, o, self.source, tag))
        return out

    def evaluate(self, cfg: C, points: Sequence[PointResult]) -> list[Claim]:
        """Every claim measured on `points` (before the verdict: `_verdicts.judge`)."""
        return [c for tag, pts in self.partition(cfg, points) for c in self.measured(cfg, pts, tag)]

    def spec_of(self, claim_id: str) -> ClaimSpec[C] | None:
        """The declared claim of a claim id (tagged or not), or None."""
        base = claim_id
        if self.per is not None:
            short = re.escape(self.per.rpartition(".")[2])
            base = re.sub(rf"\({short}=[^()]*\)$", "", claim_id)
        return next((s for s in self.specs if s.id == base), None)

    def reads_of(self, claim_id: str) -> Reads | None:
        """What claim `claim_id` reads (`None`: not gated by the certificate)."""
        spec = self.spec_of(claim_id)
        return spec.gate if spec is not None and isinstance(spec.gate, Reads) else None

    def is_ungated(self, claim_id: str) -> bool:
        """Whether `claim_id` is declared free of the certificate (`Ungated`)."""
        spec = self.spec_of(claim_id)
        return spec is not None and isinstance(spec.gate, Ungated)

    def figure_of(self, claim_id: str) -> str | None:
        """The figure that shows claim `claim_id` (`None` for an experiment without one)."""
        spec = self.spec_of(claim_id)
        if spec is not None and spec.figure is not None:
            return spec.figure
        return self.figures[0] if self.figures else None

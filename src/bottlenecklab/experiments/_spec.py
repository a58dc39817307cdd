"""What an experiment is: a declarative recipe (config, presets, grid, measurement, claims)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PRESETS", "Claim", "Experiment", "Measurement", "PointResult"]

PRESETS = ("smoke", "quick", "paper")


@dataclass(frozen=True)
class Claim:
    """A checkable statement of a paper, measured by a run (`claims.json` entry).

    Args:
        id: short identifier; source: document and figure/theorem (`"000 Fig 1a"`);
        statement: what is claimed; expected: the criterion with its tolerance;
        measured: the measured value(s); passed: whether `measured` meets `expected`;
        asserted: False for a number the spec asks only to report (no criterion): such a
            claim is shown as REPORTED and never counted as a pass or a failure.
    """

    id: str
    source: str
    statement: str
    expected: str | float
    measured: str | float | None
    passed: bool
    asserted: bool = True


@dataclass(frozen=True)
class Measurement:
    """What an experiment measures on one trained network.

    Args:
        scalars: named numbers (one row of the run's summary table).
        layers: per-layer rows (long tables for plots), may be empty.
        spectra: singular values only, long format `{"layer", "matrix", "index", "value"}`.
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
    """One grid point of a run: its swept values, status and measurements."""

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

    def figure_of(self, claim_id: str) -> str | None:
        """The figure that shows claim `claim_id` (`None` for an experiment without one)."""
        return self.claim_figures.get(claim_id, self.figures[0] if self.figures else None)

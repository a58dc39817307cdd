"""A measured quantity, declared once in the concept module that computes it.

A `Quantity` names one number a measurement writes for a trained network (one column of
a run's summary row) and says what it is: the function that computes it, what it is
computed over, its shape and units, and, for a rank, its rule. Experiments list the
quantities their claims read (`Reads((RANK_H_MEDIAN,), ...)`) and read them by object
(`points.values(RANK_H_MEDIAN)`), never by a retyped name.

    RANK_H_MEDIAN = Quantity(
        "rank_H_median",
        "median over layers of -(2/L~) H_l (paper 000, Thm 4)",
        function=hamiltonian_summary,
        over="the layer table of a leaky ResNet on the training set",
        units="rank units",
        kinked=True,
    )
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bottlenecklab.measure._rank_rule import RankRule

__all__ = ["Quantity"]


@dataclass(frozen=True)
class Quantity:
    """One measured number of a trained network (a column of a point's summary row).

    Args:
        name: the column's name, unique across the library (`"rank_H_median"`).
        doc: what it is, one line, with the paper's place of its formula.
        function: the `measure` (or `theory`) function whose result holds it.
        over: what it is computed over (`"the training set"`, `"the middle layers"`).
        units: its units (`"rank units"`, `"relative"`, `"count"`, `"nats"`).
        shape: `"scalar"` (one number per point) unless stated; a family of scalars
            indexed by a swept value (`"per width"`) is one declaration whose members
            are its columns `name + index` (`at`).
        rule: for a rank read off singular values, the `RankRule` they are counted by;
            None otherwise.
        kinked: discontinuous at ReLU kinks (momenta, the Hamiltonian, a gap ratio at a
            kink-dependent layer): a claim that reads it is gated at stationarity
            `<= KINK_THRESHOLD` (`experiments.Reads`).
    """

    name: str
    doc: str = field(repr=False)
    function: Callable[..., Any] = field(repr=False)
    over: str = field(repr=False)
    units: str = field(repr=False)
    shape: str = "scalar"
    rule: RankRule | None = None
    kinked: bool = False

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"a quantity's name is an identifier, got {self.name!r}")
        if not self.doc.strip():
            raise ValueError(f"quantity {self.name!r} needs its doc")

    def __str__(self) -> str:
        return self.name

    @property
    def family(self) -> bool:
        """Whether this declares a family of columns (`shape` other than `"scalar"`)."""
        return self.shape != "scalar"

    def at(self, index: object) -> Quantity:
        """The member of this family at `index`: the scalar column `name + str(index)`
        (`BEST_SPEED.at(64)` of `best_w` is `best_w64`), otherwise as declared."""
        if not self.family:
            raise ValueError(f"quantity {self.name!r} is a scalar, not a family")
        return dataclasses.replace(self, name=f"{self.name}{index}", shape="scalar")

    def holds(self, name: str) -> bool:
        """Whether column `name` is this quantity or, for a family, one of its members."""
        if not self.family:
            return name == self.name
        rest = name[len(self.name) :] if name.startswith(self.name) else ""
        return bool(rest) and "_" not in rest

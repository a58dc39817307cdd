"""Figure makers, found from the experiments' declarations: an experiment names each of
its figures as `"module:function"` (`Experiment.figures`, `figure_refs`), a function
`(RunRecord, folder) -> [png paths]` in a module of `bottlenecklab.report`."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bottlenecklab.experiments import RunRecord

__all__ = ["Maker", "figure_maker", "write_figures"]

Maker = Callable[["RunRecord", Path], list[Path]]

# Drawn for every trained experiment (the training curves behind its convergence gates).
SHARED = {"training_curves": "_training:training_curves"}


def _resolve(ref: str) -> Maker:
    module, _, name = ref.partition(":")
    if not module.startswith("bottlenecklab."):
        module = f"bottlenecklab.report.{module}"
    maker = getattr(importlib.import_module(module), name, None)
    if not callable(maker):
        raise LookupError(f"figure {ref!r}: no function {name!r} in {module}")
    return maker


def figure_maker(name: str, refs: dict[str, str] | None = None) -> Maker:
    """The function drawing figure `name`: by its `"module:function"` reference in `refs`
    (an experiment's `figure_refs`) or a shared figure (`training_curves`).

    Raises:
        LookupError: `name` is neither (an experiment declares each figure with its module).
    """
    ref = (refs or {}).get(name) or SHARED.get(name)
    if ref is None:
        raise LookupError(f'figure {name!r}: no "module:function" declared for it')
    return _resolve(ref)


def write_figures(record: RunRecord, names: tuple[str, ...]) -> list[Path]:
    """Draw the named figures of a run into `record.out / "figures"` (the makers the run's
    experiment declares)."""
    from bottlenecklab.experiments import EXPERIMENTS

    folder = record.out / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    exp = EXPERIMENTS.get(record.name)
    refs = dict(exp.figure_refs) if exp is not None else {}
    paths: list[Path] = []
    for name in names:
        paths.extend(figure_maker(name, refs)(record, folder))
    return paths

"""Figure makers, found from the experiments' declarations: an experiment names each of
its figures as `"module:function"` (`Experiment.figures`, `figure_refs`), a function
`(RunRecord, folder) -> [png paths]` in a module of `bottlenecklab.report`."""

from __future__ import annotations

import functools
import importlib
import pkgutil
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


@functools.cache
def _by_name(name: str) -> Maker:
    """A figure named without its module (legacy declarations): the function of that name
    in a figure module of `bottlenecklab.report` (exactly one)."""
    found = []
    for mod in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if mod.name.startswith("_") and mod.name not in ("_figures", "_html", "_summary"):
            module = importlib.import_module(f"bottlenecklab.report.{mod.name}")
            if callable(getattr(module, name, None)) and not name.startswith("_"):
                found.append(f"{mod.name}:{name}")
    if len(found) != 1:
        raise LookupError(f"figure {name!r}: found in {found or 'no report module'}")
    return _resolve(found[0])


def figure_maker(name: str, refs: dict[str, str] | None = None) -> Maker:
    """The function drawing figure `name`: by its `"module:function"` reference in `refs`
    (an experiment's `figure_refs`), a shared figure (`training_curves`), or else (legacy)
    the report function of that name."""
    ref = (refs or {}).get(name) or SHARED.get(name)
    return _resolve(ref) if ref else _by_name(name)


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

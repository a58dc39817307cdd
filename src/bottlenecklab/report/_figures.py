"""The registry of figure makers: name -> `(RunRecord, folder) -> [png paths]`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bottlenecklab.experiments import RunRecord
from bottlenecklab.report import _leaky_resnet

__all__ = ["FIGURES", "write_figures"]

FIGURES: dict[str, Callable[[RunRecord, Path], list[Path]]] = {
    "hamiltonian_vs_leak": _leaky_resnet.hamiltonian_vs_leak,
    "layer_portrait": _leaky_resnet.layer_portrait,
}


def write_figures(record: RunRecord, names: tuple[str, ...]) -> list[Path]:
    """Draw the named figures of a run into `record.out / "figures"`."""
    folder = record.out / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for name in names:
        paths.extend(FIGURES[name](record, folder))
    return paths

"""The registry of figure makers: name -> `(RunRecord, folder) -> [png paths]`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bottlenecklab.experiments import RunRecord
from bottlenecklab.report import (
    _l2,
    _leaky_resnet,
    _leaky_resnet_discretization,
    _leaky_resnet_theory,
)

__all__ = ["FIGURES", "write_figures"]

FIGURES: dict[str, Callable[[RunRecord, Path], list[Path]]] = {
    "hamiltonian_vs_leak": _leaky_resnet.hamiltonian_vs_leak,
    "layer_portrait": _leaky_resnet.layer_portrait,
    "hamiltonian_flow": _leaky_resnet_theory.hamiltonian_flow,
    "coi_minima": _leaky_resnet_theory.coi_minima,
    "error_vs_depth": _leaky_resnet_discretization.error_vs_depth,
    "discretization_spectra": _leaky_resnet_discretization.discretization_spectra,
    "pca_paths": _leaky_resnet_discretization.pca_paths,
    "path_bounds": _leaky_resnet_discretization.path_bounds,
    "l2_reformulation": _l2.l2_reformulation,
    "l2_counterexample": _l2.l2_counterexample,
    "l2_one_dim_pruning": _l2.l2_one_dim_pruning,
    "l2_width_plateau": _l2.l2_width_plateau,
    "l2_forces": _l2.l2_forces,
}


def write_figures(record: RunRecord, names: tuple[str, ...]) -> list[Path]:
    """Draw the named figures of a run into `record.out / "figures"`."""
    folder = record.out / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for name in names:
        paths.extend(FIGURES[name](record, folder))
    return paths

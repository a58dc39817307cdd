"""The registry of figure makers: name -> `(RunRecord, folder) -> [png paths]`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bottlenecklab.experiments import RunRecord
from bottlenecklab.report import (
    _depth_rank,
    _l2,
    _leaky_resnet,
    _leaky_resnet_discretization,
    _leaky_resnet_theory,
    _saddles,
    _talk,
    _training,
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
    "training_curves": _training.training_curves,
    "representation_cost": _depth_rank.representation_cost,
    "rank_vs_depth": _depth_rank.rank_vs_depth,
    "depth_spectra": _depth_rank.depth_spectra,
    "bottleneck_bounds": _depth_rank.bottleneck_bounds,
    "kernel_vs_depth": _talk.kernel_vs_depth,
    "tripoints": _talk.tripoints,
    "symmetry_dynamics": _talk.symmetry_dynamics,
    "newtonian_rollout": _talk.newtonian_rollout,
    "newtonian_modes": _talk.newtonian_modes,
    "circle_escape": _saddles.circle_escape,
    "escape_vs_depth": _saddles.escape_vs_depth,
    "plateau_time": _saddles.plateau_time,
    "mnist_plateaus": _saddles.mnist_plateaus,
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

"""Experiments of paper 000 (leaky ResNets, the Hamiltonian of feature learning)."""

from bottlenecklab.experiments.leaky_resnet import (
    coi_minima,
    discretization,
    hamiltonian_flow,
    hamiltonian_vs_depth,
    layer_portrait,
    path_bounds,
)

EXPERIMENTS = (
    hamiltonian_vs_depth.EXPERIMENT,
    layer_portrait.EXPERIMENT,
    discretization.EXPERIMENT,
    path_bounds.EXPERIMENT,
    hamiltonian_flow.EXPERIMENT,
    coi_minima.EXPERIMENT,
)

__all__ = ["EXPERIMENTS"]

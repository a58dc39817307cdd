"""Experiments of paper 004 (L2-regularized networks: reformulations, forces, sparsity)."""

from bottlenecklab.experiments.l2 import (
    attraction_repulsion,
    bipartite_sparsity,
    counterexample,
    one_dim_pruning,
    reformulation,
    width_plateau,
    width_plateau_digits,
)

EXPERIMENTS = (
    reformulation.EXPERIMENT,
    counterexample.EXPERIMENT,
    one_dim_pruning.EXPERIMENT,
    bipartite_sparsity.EXPERIMENT,
    attraction_repulsion.EXPERIMENT,
    width_plateau.EXPERIMENT,
    width_plateau_digits.EXPERIMENT,
)

__all__ = ["EXPERIMENTS"]

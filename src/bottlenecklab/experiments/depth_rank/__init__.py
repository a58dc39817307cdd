"""Experiments of papers 001/002 (representation cost, bottleneck rank and depth of deep
fully-connected networks)."""

from bottlenecklab.experiments.depth_rank import (
    bottleneck_bounds,
    rank_vs_depth,
    representation_cost,
    symmetry_dynamics,
)

EXPERIMENTS = (
    representation_cost.EXPERIMENT,
    bottleneck_bounds.EXPERIMENT,
    rank_vs_depth.EXPERIMENT,
    symmetry_dynamics.EXPERIMENT,
)

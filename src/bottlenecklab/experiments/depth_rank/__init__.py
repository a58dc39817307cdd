"""Experiments of papers 001/002 on fully-connected networks (depth and bottleneck rank)."""

from bottlenecklab.experiments.depth_rank import symmetry_dynamics

EXPERIMENTS = (symmetry_dynamics.EXPERIMENT,)

__all__ = ["EXPERIMENTS"]

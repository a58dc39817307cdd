"""Experiments of paper 002 (the talk on bottleneck structure: kernels vs depth,
classification tripoints, Newtonian mechanics with a circular CNN)."""

from bottlenecklab.experiments.talk import kernel_vs_depth, newtonian_cnn, tripoints

EXPERIMENTS = (kernel_vs_depth.EXPERIMENT, tripoints.EXPERIMENT, newtonian_cnn.EXPERIMENT)

__all__ = ["EXPERIMENTS"]

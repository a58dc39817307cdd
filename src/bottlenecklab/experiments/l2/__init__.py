"""Experiments of paper 004 (L2-regularized networks: reformulations, forces, sparsity)."""

from bottlenecklab.experiments.l2 import counterexample, reformulation

EXPERIMENTS = (reformulation.EXPERIMENT, counterexample.EXPERIMENT)

__all__ = ["EXPERIMENTS"]

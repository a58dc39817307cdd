"""Experiments of paper 000 (leaky ResNets, the Hamiltonian of feature learning)."""

from bottlenecklab.experiments.leaky_resnet import hamiltonian_vs_depth

EXPERIMENTS = (hamiltonian_vs_depth.EXPERIMENT,)

__all__ = ["EXPERIMENTS"]

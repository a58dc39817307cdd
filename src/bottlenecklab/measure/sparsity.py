"""Neuron counts of trained networks (paper 004, §4): merging of positively proportional
neurons, Prop 15's pruning on 1-D inputs, the bipartite pattern of Prop 13, the rays the
neurons lie on (Fig 1), and the width where the best loss stops improving.
"""

from bottlenecklab.measure._sparsity import (
    KERNEL_RANK_RULE,
    best_per_width,
    bipartite_pattern,
    kernel_rank,
    merge_chain,
    merge_neurons,
    plateau_start,
    prune_fcnn_one_dim,
)
from bottlenecklab.measure._views import count_rays, count_rays_2d

__all__ = [
    "KERNEL_RANK_RULE",
    "best_per_width",
    "bipartite_pattern",
    "count_rays",
    "count_rays_2d",
    "kernel_rank",
    "merge_chain",
    "merge_neurons",
    "plateau_start",
    "prune_fcnn_one_dim",
]

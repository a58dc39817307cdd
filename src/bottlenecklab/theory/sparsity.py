"""Sparsity of L2-regularized networks (paper 004, §4): merging positively proportional
neurons, Prop 15's pruning rule on 1-D inputs, and the closed forms of the bipartite task
(Prop 13-14, Remark 23).
"""

from bottlenecklab.theory._merging import MERGE_COSINE, merge_layer, prune_one_dim
from bottlenecklab.theory._sparsity import (
    bipartite_full_width_weights,
    bipartite_target,
    bipartite_wide_optimum,
    pair_directions,
)

__all__ = [
    "MERGE_COSINE",
    "bipartite_full_width_weights",
    "bipartite_target",
    "bipartite_wide_optimum",
    "merge_layer",
    "pair_directions",
    "prune_one_dim",
]

"""Neuron counts of trained networks (paper 004, §4): merging of positively proportional
neurons, Prop 15's pruning on 1-D inputs, the bipartite pattern of Prop 13, the rays the
neurons lie on (Fig 1), and the width where the best loss stops improving.
"""

from bottlenecklab.measure._sparsity import (
    merge_chain,
)

__all__ = [
    "merge_chain",
]

"""Jacobians of a fully-connected network (paper 001, Thm 3): input Jacobians `Jf(x)`, the
backward Jacobians `d f / d a~_l` of every layer, the Jacobians of every representation
`d a~_l / dx`, their singular values, ranks and log pseudo-determinants.
"""

from bottlenecklab.measure._jacobian import (
    RANK_REL,
    function_jacobians,
    input_jacobians,
    jacobian_rank_log_det,
    jacobian_singular_values,
    layer_jacobians,
    log_top_k,
    representation_jacobian_ranks,
    representation_jacobians,
)

__all__ = [
    "RANK_REL",
    "function_jacobians",
    "input_jacobians",
    "jacobian_rank_log_det",
    "jacobian_singular_values",
    "layer_jacobians",
    "log_top_k",
    "representation_jacobian_ranks",
    "representation_jacobians",
]

"""The neural tangent kernel of a fully-connected network from its layer Jacobians, without
the `[N d_out, P]` parameter Jacobian (paper 001, §4): the Gram matrix `Theta(X, X)`, its
trace, its largest eigenvalue (GD's stability edge) and both along training, read over GD's
oscillation.
"""

from bottlenecklab.measure._ntk import (
    ntk_lambda_max,
    ntk_matrix,
    ntk_trace,
)
from bottlenecklab.measure._representation import (
    ntk_trace_terms,
)

__all__ = [
    "ntk_lambda_max",
    "ntk_matrix",
    "ntk_trace",
    "ntk_trace_terms",
]

"""Quantities of one layer of any network from its representation `A` `[N, w]` and its
weight `W` `[n_out, n_in]`: spectra, centred spectra, ranks and costs of identity. The
layer-level core that the model tables and `bottlenecklab.probe` share; for large `N`,
`RepresentationAccumulator` streams the batches of `A`.
"""

from bottlenecklab.measure._representation import (
    MAX_ROWS,
    REASONS,
    RepresentationAccumulator,
    representation_quantities,
    weight_quantities,
)

__all__ = [
    "MAX_ROWS",
    "REASONS",
    "RepresentationAccumulator",
    "representation_quantities",
    "weight_quantities",
]

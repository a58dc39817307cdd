"""The cost of identity of a trained network's representations (paper 000, §1.4), as the
columns of its per-layer tables.

`coi_columns(A, svd)` gives a layer's `gamma = 0` cost of identity `||A||^2_K`, `K = S S^T`,
`S = sigma(A)`, with and without the bias column, and the part of `A` outside the range of
`S`; `GAMMA0` is the relative ridge of the relaxed `COI_gamma`. The formulas themselves
(`cost_of_identity`, `kernel_norm_sq`, `coi_residual`, `stable_rank`, `negative_mass`) are
defined once, in `theory.coi`: call them on a float64 tensor.
"""

from bottlenecklab.measure._representation import GAMMA0, coi_columns

__all__ = [
    "GAMMA0",
    "coi_columns",
]

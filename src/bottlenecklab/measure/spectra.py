"""Singular values of weight matrices in the one spectra schema (`k = 1` the largest,
`measure._spectra`): every layer's spectrum and its reader, the largest spectral gap
(paper 001, §5), the spikes above the Marchenko-Pastur edge of a random matrix of the
same shape, and the per-frequency spectra and modes of a circular convolution (paper 002,
slide 'Convolutional Networks').
"""

from bottlenecklab.measure._frequency import (
    layer_frequency_singular_values,
    layer_modes,
)
from bottlenecklab.measure._representation import (
    TW_MARGIN,
    mp_spikes,
)
from bottlenecklab.measure._spectra import (
    SPECTRUM_COLUMNS,
    gap_at,
    one_based,
    spectra_by_layer,
    spectrum_rows,
    weight_spectra,
)
from bottlenecklab.measure._symmetry import (
    largest_gap,
)

__all__ = [
    "SPECTRUM_COLUMNS",
    "TW_MARGIN",
    "gap_at",
    "largest_gap",
    "layer_frequency_singular_values",
    "layer_modes",
    "mp_spikes",
    "one_based",
    "spectra_by_layer",
    "spectrum_rows",
    "weight_spectra",
]

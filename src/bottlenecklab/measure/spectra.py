"""Singular values of weight matrices: every layer's spectrum, the top values per layer,
the largest spectral gap (paper 001, §5), the spikes above the Marchenko-Pastur edge of a
random matrix of the same shape, and the per-frequency spectra and modes of a circular
convolution (paper 002, slide 'Convolutional Networks').
"""

from bottlenecklab.measure._frequency import (
    frequency_spectra,
    layer_frequency_singular_values,
    layer_modes,
    mode_table,
)
from bottlenecklab.measure._layer_ranks import gap_at, weight_spectra
from bottlenecklab.measure._representation import TW_MARGIN, mp_spikes
from bottlenecklab.measure._saddles import layer_singular_values
from bottlenecklab.measure._symmetry import largest_gap

__all__ = [
    "TW_MARGIN",
    "frequency_spectra",
    "gap_at",
    "largest_gap",
    "layer_frequency_singular_values",
    "layer_modes",
    "layer_singular_values",
    "mode_table",
    "mp_spikes",
    "weight_spectra",
]

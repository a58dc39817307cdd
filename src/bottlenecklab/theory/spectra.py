"""The numerical rank of a matrix, and the singular values of a circular convolution per
frequency with its significant modes (paper 002, slide 'Convolutional Networks').
"""

from bottlenecklab.theory._frequency import (
    frequency_order,
    frequency_singular_values,
    significant_modes,
)
from bottlenecklab.theory._spectral import numerical_rank

__all__ = ["frequency_order", "frequency_singular_values", "numerical_rank", "significant_modes"]

"""Statistics of measured series and of repeated trials: least-squares lines and log-log
slopes (growth exponents), the Clopper-Pearson interval of a fraction, the z of a
logistic slope, and the z of the difference of adjacent fractions.
"""

from bottlenecklab.measure._fits import (
    fit_line,
    loglog_slope,
)

__all__ = [
    "fit_line",
    "loglog_slope",
]

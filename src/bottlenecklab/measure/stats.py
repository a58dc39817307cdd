"""Statistics of measured series: least-squares lines and log-log slopes (growth
exponents).
"""

from bottlenecklab.measure._fits import fit_line, loglog_slope

__all__ = ["fit_line", "loglog_slope"]

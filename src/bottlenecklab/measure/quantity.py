"""A measured quantity, declared once beside the code that computes it: its name (the column
of a point's summary row), what it is, its function, what it is computed over, its units
and shape, and for a rank its rule (`docs/add-a-quantity.md`). The declarations themselves
live in the concept modules (`RANK_H_MEDIAN` in `measure.geodesics`, `TEST_ERROR` in
`measure.evaluation`, ...).
"""

from bottlenecklab.measure._quantity import Quantity

__all__ = ["Quantity"]

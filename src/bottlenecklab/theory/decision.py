"""Tripoints of a labelled grid: where three classes meet (paper 002, slide 'Implications:
Classification').
"""

from bottlenecklab.theory._tripoints import tripoint_blocks

__all__ = ["tripoint_blocks"]

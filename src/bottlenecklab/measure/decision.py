"""Decision maps of a 2-D classifier, their tripoints and the accuracy (paper 002, slide
'Implications: Classification').
"""

from bottlenecklab.measure._decision import (
    tripoints,
)

__all__ = [
    "tripoints",
]

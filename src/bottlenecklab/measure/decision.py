"""Decision maps of a 2-D classifier, their tripoints and the accuracy (paper 002, slide
'Implications: Classification').
"""

from bottlenecklab.measure._decision import (
    TRAIN_ACCURACY,
    accuracy,
    tripoints,
)

__all__ = ["TRAIN_ACCURACY", "accuracy", "tripoints"]

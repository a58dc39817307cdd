"""Tasks with a known bottleneck rank (seeded synthetic teachers) and real image data
(scikit-learn's shipped digits)."""

from bottlenecklab.tasks._dataset import (
    COSTS,
    Dataset,
    Standardizer,
    cross_entropy_cost,
    data_cost,
)
from bottlenecklab.tasks._digits import class_balanced_split, digits_arrays
from bottlenecklab.tasks._l2_tasks import BipartiteTask, DigitsTask, ReluTeacherTask, SineTask
from bottlenecklab.tasks._teacher import TeacherConfig, compositional_teacher

__all__ = [
    "BipartiteTask",
    "COSTS",
    "Dataset",
    "DigitsTask",
    "ReluTeacherTask",
    "SineTask",
    "Standardizer",
    "TeacherConfig",
    "class_balanced_split",
    "compositional_teacher",
    "cross_entropy_cost",
    "data_cost",
    "digits_arrays",
]

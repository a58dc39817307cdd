"""Tasks with a known bottleneck rank: seeded synthetic teachers (and, later, image data)."""

from bottlenecklab.tasks._dataset import (
    COSTS,
    Dataset,
    Standardizer,
    cross_entropy_cost,
    data_cost,
)
from bottlenecklab.tasks._teacher import TeacherConfig, compositional_teacher

__all__ = [
    "COSTS",
    "Dataset",
    "Standardizer",
    "TeacherConfig",
    "compositional_teacher",
    "cross_entropy_cost",
    "data_cost",
]

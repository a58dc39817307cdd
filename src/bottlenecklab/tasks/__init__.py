"""Tasks with a known bottleneck rank: seeded synthetic teachers (and, later, image data)."""

from bottlenecklab.tasks._dataset import Dataset, Standardizer, data_cost
from bottlenecklab.tasks._teacher import TeacherConfig, compositional_teacher

__all__ = ["Dataset", "Standardizer", "data_cost", "TeacherConfig", "compositional_teacher"]

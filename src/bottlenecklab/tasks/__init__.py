"""Tasks with a known bottleneck rank (seeded synthetic teachers) and real image data
(scikit-learn's shipped digits)."""

from bottlenecklab.tasks._ball_gravity import BallGravityConfig, ball_frames, ball_gravity
from bottlenecklab.tasks._blobs import BlobsConfig, gaussian_blobs
from bottlenecklab.tasks._dataset import (
    COSTS,
    Dataset,
    Standardizer,
    cross_entropy_cost,
    data_cost,
)
from bottlenecklab.tasks._digits import class_balanced_split, digits_arrays
from bottlenecklab.tasks._idx import (
    MNIST_FILES,
    IDXError,
    ImageTask,
    mnist_arrays,
    read_idx,
    scalar_standardize,
)
from bottlenecklab.tasks._l2_tasks import (
    BipartiteTask,
    DigitsTask,
    GaussianTask,
    OrthogonalTask,
    PointsTask,
    ReluTeacherTask,
    SineTask,
)
from bottlenecklab.tasks._latent_teacher import LatentTeacherConfig, latent_teacher
from bottlenecklab.tasks._linear_teacher import (
    LinearTeacherConfig,
    linear_teacher,
    teacher_matrix,
)
from bottlenecklab.tasks._radial import RadialCompositionConfig, radial_composition
from bottlenecklab.tasks._symmetry_dynamics import (
    SymmetryDynamicsConfig,
    gd_path,
    symmetry_cost,
    symmetry_dynamics,
    symmetry_start,
)
from bottlenecklab.tasks._teacher import TeacherConfig, compositional_teacher

__all__ = [
    "COSTS",
    "MNIST_FILES",
    "BallGravityConfig",
    "BipartiteTask",
    "BlobsConfig",
    "Dataset",
    "DigitsTask",
    "GaussianTask",
    "IDXError",
    "ImageTask",
    "LatentTeacherConfig",
    "LinearTeacherConfig",
    "OrthogonalTask",
    "PointsTask",
    "RadialCompositionConfig",
    "ReluTeacherTask",
    "SineTask",
    "Standardizer",
    "SymmetryDynamicsConfig",
    "TeacherConfig",
    "ball_frames",
    "ball_gravity",
    "class_balanced_split",
    "compositional_teacher",
    "cross_entropy_cost",
    "data_cost",
    "digits_arrays",
    "gaussian_blobs",
    "gd_path",
    "latent_teacher",
    "linear_teacher",
    "mnist_arrays",
    "radial_composition",
    "read_idx",
    "scalar_standardize",
    "symmetry_cost",
    "symmetry_dynamics",
    "symmetry_start",
    "teacher_matrix",
]

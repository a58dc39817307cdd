"""Symmetry and bottleneck diagnostics of a network trained on `symmetry_dynamics`
(paper 001, §5 and Fig 2): crossings of the 2-D projected input paths, the invariance of a
layer to rotations about `w`, the invariant coordinates and how well they determine the
layer's state, the crossings
of its 2-D state's paths and its one-step self-consistency.
"""

from bottlenecklab.measure._symmetry import (
    curve_distances,
    haar_rotation_about,
    knn_r2,
    layer_paths,
    path_crossings,
    pca_path_crossings,
    pca_paths2d,
    pca_states,
    state_bijection_r2,
)

__all__ = [
    "curve_distances",
    "haar_rotation_about",
    "knn_r2",
    "layer_paths",
    "path_crossings",
    "pca_path_crossings",
    "pca_paths2d",
    "pca_states",
    "state_bijection_r2",
]

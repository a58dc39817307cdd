"""Symmetry and bottleneck diagnostics of a network trained on `symmetry_dynamics`
(paper 001, §5 and Fig 2): crossings of the 2-D projected input paths, the invariance of a
layer to rotations about `w`, the invariant coordinates and how well they determine the
layer's state, the crossings
of its 2-D state's paths and its one-step self-consistency.
"""

from bottlenecklab.measure._symmetry import (
    crossing_counts,
    curve_distances,
    gap_rank_rows,
    haar_rotation_about,
    invariant_coordinates,
    knn_r2,
    layer_distance_map,
    layer_paths,
    layer_state_r2,
    path_crossings,
    pca_path_crossings,
    pca_paths2d,
    pca_states,
    random_projection_crossings,
    rotation_ratio,
    state_bijection_r2,
    step_r2,
)

__all__ = [
    "crossing_counts",
    "curve_distances",
    "gap_rank_rows",
    "haar_rotation_about",
    "invariant_coordinates",
    "knn_r2",
    "layer_distance_map",
    "layer_paths",
    "layer_state_r2",
    "path_crossings",
    "pca_path_crossings",
    "pca_paths2d",
    "pca_states",
    "random_projection_crossings",
    "rotation_ratio",
    "state_bijection_r2",
    "step_r2",
]

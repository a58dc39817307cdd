"""Low-dimensional views of representations: the PCA of the representation paths (paper
000, Fig 2c), the uncentered PCA of data points and neurons and the nearest-centroid
accuracy (paper 004, Fig 1).
"""

from bottlenecklab.measure._views import nearest_centroid_accuracy, pca_paths, uncentered_pca

__all__ = ["nearest_centroid_accuracy", "pca_paths", "uncentered_pca"]

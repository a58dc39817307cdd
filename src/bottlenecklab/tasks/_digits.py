"""The 8x8 handwritten digits that ship with scikit-learn: real image data, no download.

The `quick` presets of papers 003 and 004 use them where the papers use MNIST (spec
`README.md`, Data sets); loaders for MNIST IDX files live beside this one.
"""

from __future__ import annotations

import numpy as np

__all__ = ["class_balanced_split", "digits_arrays"]


def digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    """All 1797 digits: pixels `[1797, 64]` (float64, raw values 0..16) and labels `[1797]`
    (int64, 0..9), in scikit-learn's order."""
    from sklearn.datasets import load_digits  # lazy: scikit-learn is slow to import

    d = load_digits()
    return d.data.astype(np.float64), d.target.astype(np.int64)


def class_balanced_split(
    labels: np.ndarray, per_class: int, classes: tuple[int, ...] | None = None, *, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Seeded indices of a class-balanced training subset and of the rest (the test set).

    Args:
        labels: `[n]` integer labels.
        per_class: training samples drawn from each class.
        classes: the classes to keep (default: all); samples of other classes are in
            neither subset.
        seed: the draw's seed.

    Returns:
        `(train_idx, test_idx)`, each sorted; `train_idx` has `per_class` per class.
    """
    rng = np.random.default_rng(seed)
    keep = sorted(set(labels.tolist())) if classes is None else list(classes)
    train = []
    for c in keep:
        idx = np.flatnonzero(labels == c)
        if len(idx) < per_class:
            raise ValueError(f"class {c} has {len(idx)} samples, fewer than {per_class}")
        train.append(rng.choice(idx, size=per_class, replace=False))
    train_idx = np.sort(np.concatenate(train))
    mask = np.isin(labels, keep)
    mask[train_idx] = False
    return train_idx, np.flatnonzero(mask)

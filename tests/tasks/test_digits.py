"""The shipped digits and the class-balanced split."""

from __future__ import annotations

import numpy as np
import pytest

from bottlenecklab.tasks import class_balanced_split, digits_arrays


def test_digits_are_the_real_8x8_images() -> None:
    x, y = digits_arrays()
    assert x.shape == (1797, 64) and x.dtype == np.float64 and y.shape == (1797,)
    assert x.min() == 0 and x.max() == 16 and set(y.tolist()) == set(range(10))


@pytest.mark.parametrize("classes", [None, (7, 8, 9)])
def test_split_is_balanced_disjoint_and_seeded(classes) -> None:
    _, y = digits_arrays()
    tr, te = class_balanced_split(y, 14, classes, seed=3)
    keep = set(range(10)) if classes is None else set(classes)
    assert not set(tr) & set(te)
    assert {c: int((y[tr] == c).sum()) for c in keep} == {c: 14 for c in keep}
    assert set(y[te].tolist()) == keep and len(tr) + len(te) == int(np.isin(y, list(keep)).sum())
    assert np.array_equal(tr, class_balanced_split(y, 14, classes, seed=3)[0])
    assert not np.array_equal(tr, class_balanced_split(y, 14, classes, seed=4)[0])


def test_split_refuses_more_than_a_class_has() -> None:
    with pytest.raises(ValueError, match="fewer than"):
        class_balanced_split(np.array([0, 0, 1]), 2)

"""Grid expansion over dotted keys and seeds."""

import pytest

from bottlenecklab.sweeps import expand_grid


def test_grid_is_row_major_with_seeds_innermost():
    pts = expand_grid({"a.b": [1, 2], "c": ["x", "y"]}, seeds=[0, 1])
    assert len(pts) == 8
    assert pts[0] == {"a.b": 1, "c": "x", "seed": 0}
    assert pts[1] == {"a.b": 1, "c": "x", "seed": 1}
    assert pts[-1] == {"a.b": 2, "c": "y", "seed": 1}


def test_empty_grid_is_one_point():
    assert expand_grid({}) == [{}]


def test_random_order_is_a_reproducible_permutation():
    grid = {"k": list(range(10))}
    a = expand_grid(grid, order="random", order_seed=3)
    assert a == expand_grid(grid, order="random", order_seed=3)
    assert a != expand_grid(grid)
    assert sorted(p["k"] for p in a) == list(range(10))


@pytest.mark.parametrize(
    "grid, seeds", [({"k": []}, None), ({"k": "abc"}, None), ({"seed": [1]}, [0])]
)
def test_bad_grids_are_refused(grid, seeds):
    with pytest.raises(ValueError):
        expand_grid(grid, seeds)

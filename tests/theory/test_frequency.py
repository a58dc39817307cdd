"""Per-frequency singular values of circular convolutions and their modes (paper 002)."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from bottlenecklab.theory import frequency_order, frequency_singular_values, significant_modes

EPS = torch.finfo(torch.float64).eps


def _conv_matrix(K: torch.Tensor) -> torch.Tensor:
    """The convolution `a -> K (*) a` as a dense `[c_out n^2, c_in n^2]` matrix."""
    c_out, c_in, n, _ = K.shape
    cols = []
    for c in range(c_in):
        for x in range(n):
            for y in range(n):
                delta = torch.zeros(c_in, n, n, dtype=K.dtype)
                delta[c, x, y] = 1.0
                # (K (*) delta)[o, z] = K[o, c, z - (x, y)]
                cols.append(torch.roll(K[:, c], shifts=(x, y), dims=(1, 2)).reshape(-1))
    return torch.stack(cols, dim=1)


def test_delta_kernel_has_all_singular_values_one():
    n, c = 6, 3
    K = torch.zeros(c, c, n, n, dtype=torch.float64)
    K[:, :, 0, 0] = torch.eye(c, dtype=torch.float64)
    s = frequency_singular_values(K)
    assert torch.allclose(s, torch.ones(n, n, c, dtype=torch.float64), atol=10 * EPS)


@given(st.integers(0, 1000), st.integers(3, 5), st.integers(1, 3), st.integers(1, 3))
@settings(max_examples=10, deadline=None)
def test_they_are_the_singular_values_of_the_convolution(seed, n, c_out, c_in):
    gen = torch.Generator().manual_seed(seed)
    K = torch.randn(c_out, c_in, n, n, generator=gen, dtype=torch.float64)
    s = frequency_singular_values(K).reshape(-1).sort(descending=True).values
    dense = torch.linalg.svdvals(_conv_matrix(K))[: s.numel()]
    assert torch.allclose(s, dense, atol=1e3 * EPS * float(dense[0]))


def test_frequency_order():
    o = frequency_order(6)
    assert o[0, 0] == 0 and o[1, 0] == 1 and o[5, 5] == 1 and o[3, 1] == 3 and o[2, 4] == 2


def test_significant_modes_count_each_conjugate_pair_once():
    n = 8
    s = torch.zeros(n, n, 2, dtype=torch.float64)
    for w in ((1, 0), (7, 0)):  # one pair +-(1, 0), mode i = 0
        s[w][0] = 1.0
    s[0, 0, 0] = 0.5  # self-conjugate frequency 0
    s[4, 4, 1] = 0.05  # below 0.1 x max
    modes = significant_modes(s, 0.1)
    assert [(m["w1"], m["w2"], m["i"], m["order"]) for m in modes] == [(1, 0, 0, 1), (0, 0, 0, 0)]

"""The library's rank rule (`measure.RankRule`), the weight spikes above the
Marchenko-Pastur edge and the numerically stable streaming of centred second moments."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab import measure

EPS = torch.finfo(torch.float64).eps


def _planted(k: int, cond: float, seed: int, n: int = 400, w: int = 24) -> torch.Tensor:
    """`F diag(d) G` `[n, w]` with non-negative, non-orthogonal factors `F` `[n, k]`, `G`
    `[k, w]` and `d` spread geometrically from 1 to `1 / cond`: exactly rank `k` once
    centred, its centred singular values spanning a condition number of about `cond`."""
    gen = torch.Generator().manual_seed(seed)
    F = torch.rand(n, k, generator=gen, dtype=torch.float64)
    G = torch.rand(k, w, generator=gen, dtype=torch.float64)
    d = torch.logspace(0, -np.log10(cond), k, dtype=torch.float64)
    return F @ torch.diag(d) @ G


def _centred_sv(A: torch.Tensor) -> torch.Tensor:
    return torch.linalg.svdvals(A - A.mean(0))


@pytest.mark.parametrize("k", [2, 3, 5, 8])
@pytest.mark.parametrize("cond", [100.0, 1e4])
@pytest.mark.parametrize("seed", range(3))
def test_exact_rule_reads_a_planted_rank_whatever_the_factors(k, cond, seed):
    A = _planted(k, cond, seed)
    s = _centred_sv(A)
    reading = measure.RANK_RULE_EXACT.read(s, tuple(A.shape))
    centred = (A - A.mean(0)).numpy()
    assert reading.rank == k == np.linalg.matrix_rank(centred) == reading.exact
    assert reading.clear and reading.gap > 1e6


def test_issue_example_the_relative_cut_was_wrong():
    """Issue 34: an exactly rank-3 layer with singular values 7.26, 0.42, 0.16, 0, ...: the
    former `s_i > 0.1 s_1` read rank 1."""
    s = torch.tensor([7.26, 0.42, 0.16] + [0.0] * 13, dtype=torch.float64)
    reading = measure.RANK_RULE.read(s, (500, 16))
    assert reading.rank == 3 and reading.at_rel[0.1] == 1 and reading.clear


# Issue 43: centred spectra (s / s_1) of a planted exact rank-3 layer and of the ReLU of a
# random linear map applied to it (12 values above 1e-3).
PLANTED_3 = [1.0, 0.055, 0.036] + [0.0] * 29
AFTER_3 = [1.0, 0.053, 0.029, 0.028, 0.012, 0.008, *np.geomspace(6e-3, 1.1e-3, 6), 5e-4]
AFTER_3 += [0.0] * (32 - len(AFTER_3))


def test_one_cutoff_reads_the_planted_layer_below_the_next():
    """The former rule took the largest ratio of each layer: 3 on the planted layer (its
    drop to round-off), 1 on the next (19 at k = 1), which became "the bottleneck"."""
    shape = (400, 32)
    planted = measure.RANK_RULE.read(torch.tensor(PLANTED_3, dtype=torch.float64), shape)
    after = measure.RANK_RULE.read(torch.tensor(AFTER_3, dtype=torch.float64), shape)
    assert planted.rank == 3 and planted.clear
    assert after.rank > planted.rank and after.at_rel[1e-3] == 12
    assert planted.cutoff == after.cutoff == measure.RANK_RULE.cutoff


@pytest.mark.parametrize("decades", [4.0, 6.0, 8.0])
def test_smooth_spectrum_is_not_clear(decades):
    """A spectrum decaying geometrically by less than 3 per value has no gap at any
    cutoff: its count is the number above `c s_1`, and it says it is not clear."""
    s = torch.tensor(np.geomspace(1.0, 10.0**-decades, 32), dtype=torch.float64)
    assert float(s[0] / s[1]) < measure.GAP
    reading = measure.RANK_RULE.read(s, (600, 32))
    assert not reading.clear
    assert reading.rank == int((s > measure.RANK_RULE.cutoff).sum())


def test_planted_rank_in_float32():
    """A representation computed in float32 has float32's floor: round-off does not count."""
    for k in (2, 4, 6):
        A32 = _planted(k, 100.0, seed=k).to(torch.float32)
        s = _centred_sv(A32.to(torch.float64))
        assert measure.RANK_RULE_EXACT.read(s, tuple(A32.shape), torch.float32).rank == k
        # float32 round-off: above float64's floor, below float32's
        reading = measure.RANK_RULE_EXACT.read(s, tuple(A32.shape), torch.float64)
        assert reading.exact > k == np.linalg.matrix_rank(A32.numpy() - A32.numpy().mean(0))


def test_the_three_kinds_and_their_descriptions():
    s = torch.tensor([1.0, 0.5, 0.08, 0.02, 1e-3, 0.0], dtype=torch.float64)
    shape = (100, 6)
    assert measure.RankRule.relative(0.05).read(s, shape).rank == 3
    fig1 = measure.RankRule.paper(0.1, "paper 001, Fig 1", absolute=True)
    assert fig1.read(10 * s, shape).rank == 4 and "paper 001, Fig 1" in fig1.describe()
    assert measure.RankRule.exact().read(s, shape).rank == 5
    assert "0.003 s_1" in measure.RANK_RULE.describe() == measure.RankRule().describe()
    with pytest.raises(ValueError, match="cites"):
        measure.RankRule("paper", 0.1)
    with pytest.raises(ValueError, match="kind"):
        measure.RankRule("gap")


def test_zero_matrix_has_rank_zero():
    reading = measure.RANK_RULE.read(torch.zeros(5, dtype=torch.float64), (10, 5))
    assert reading.rank == 0 and reading.exact == 0


@pytest.mark.parametrize("shape", [(64, 64), (48, 48), (44, 44), (44, 30), (5, 44)])
def test_random_gaussian_weights_full_rank_no_spikes(shape):
    """Issue 34: a random 64 x 64 layer read W_rank 56 and the old largest-gap W_spikes
    read 47 on 48 x 48 about half the time; WeightWatcher's matrix_rank reads 64 and its
    MP fit 0 spikes."""
    for seed in range(20):
        W = torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) / shape[1] ** 0.5
        q = measure.weight_quantities(W, precision=torch.float32)
        assert q["W_rank"] == min(shape) == np.linalg.matrix_rank(W.numpy())
        assert q["W_spikes"] == 0, (seed, q["W_top_sv"][:3], q["W_mp_edge"])


def test_planted_spikes_are_counted():
    gen = torch.Generator().manual_seed(0)
    W = torch.randn(48, 48, generator=gen, dtype=torch.float64) / 48**0.5
    u, v = (
        torch.randn(48, 2, generator=gen, dtype=torch.float64),
        torch.randn(2, 48, generator=gen, dtype=torch.float64),
    )
    W = W + 3.0 * (u / u.norm(dim=0)) @ (v / v.norm(dim=1, keepdim=True))
    assert measure.weight_quantities(W)["W_spikes"] == 2


def _streamed(A: torch.Tensor, batch: int, max_rows: int) -> dict:
    acc = measure.RepresentationAccumulator(max_rows)
    for i in range(0, len(A), batch):
        acc.update(A[i : i + batch])
    assert acc.rows is None  # the moments path
    return acc.quantities(top=A.shape[1])


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_streamed_centred_spectrum_survives_a_large_mean(sign):
    """Data whose mean is 1e6 times its spread: the streamed centred spectrum equals the
    exact one to 1e-8 of the top value (the former `A^T A - N mu mu^T` lost it)."""
    gen = torch.Generator().manual_seed(0)
    N, w = 3000, 12
    spread = torch.randn(N, w, generator=gen, dtype=torch.float64) @ torch.diag(
        torch.linspace(1.0, 0.2, w, dtype=torch.float64)
    )
    A = sign * 1e6 + spread
    exact = _centred_sv(A)
    q = _streamed(A, batch=256, max_rows=500)
    got = torch.tensor(q["top_sv_centered"], dtype=torch.float64)
    assert torch.all((got - exact).abs() <= 1e-8 * exact[0])
    assert q["rank_centered"] == w


def test_streamed_equals_rows_on_a_relu_layer():
    """Negative entries appear only in a later batch (the moments widen to relu(A))."""
    gen = torch.Generator().manual_seed(1)
    A = torch.rand(900, 6, generator=gen, dtype=torch.float64)
    A[700:] -= 0.5
    rows = measure.representation_quantities(A, top=6)
    q = _streamed(A, batch=100, max_rows=300)
    for key in ("top_sv", "top_sv_centered"):
        torch.testing.assert_close(
            torch.tensor(q[key]), torch.tensor(rows[key]), rtol=1e3 * EPS, atol=0.0
        )
    for key in ("coi_gamma", "coi_gamma_nobias"):
        assert q[key] == pytest.approx(rows[key], rel=1e3 * EPS**0.5)

"""The probe on planted structure: a rank-k middle layer, residual blocks, a model torch.fx
cannot trace (hooks), unsupported layers (skipped with a reason), no layer at all."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from bottlenecklab import measure
from bottlenecklab.probe import (
    BottleneckProbe,
    CaptureError,
    ProbeError,
    bottleneck_rank,
    merge_neurons,
    ntk_trace,
)

EPS = torch.finfo(torch.float64).eps
BOTH = pytest.mark.parametrize("method", ["fx", "hooks"])


def planted(k: int, seed: int = 0) -> nn.Sequential:
    """An MLP whose middle layer `2` is an exact rank-`k` map, marked by an Identity."""
    gen = torch.Generator().manual_seed(seed)
    mid = nn.Linear(16, 16, bias=False, dtype=torch.float64)
    with torch.no_grad():  # exactly rank k in float64 (not a float32 product cast up)
        U = torch.randn(16, k, generator=gen, dtype=torch.float64)
        V = torch.randn(k, 16, generator=gen, dtype=torch.float64)
        mid.weight.copy_(U @ V / 4)
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(8, 16),
        nn.ReLU(),
        mid,
        nn.Identity(),
        nn.ReLU(),
        nn.Linear(16, 16),
        nn.ReLU(),
        nn.Linear(16, 5),
    ).double()


@BOTH
@pytest.mark.parametrize("k", [1, 2, 4])
def test_planted_rank_k_is_the_bottleneck(method, k):
    X = torch.randn(300, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    probe = BottleneckProbe(planted(k), X, capture_method=method)
    table, summary = probe.analyze(), probe.summary()
    row = table.set_index("name").loc["3"]  # the Identity after the rank-k map
    assert row["rank"] == k and row["W_rank"] == k and row["W_rank_fig1"] <= k
    # layers downstream may read k too (a random ReLU layer after a rank-1 map has one
    # singular value 5x above the rest: the rank rule's gap), never less
    assert summary["bottleneck_rank"] == k and "3" in summary["bottleneck_layers"]
    assert summary["capture"] == method and summary["jacobian_rank"] <= k
    assert summary["verdicts"]["bottleneck"].startswith("bottleneck: rank")
    assert summary["certificate"] is None


class Block(nn.Module):
    def __init__(self, w: int) -> None:
        super().__init__()
        self.fc1, self.fc2, self.relu = nn.Linear(w, w), nn.Linear(w, w), nn.ReLU()

    def forward(self, x):
        return self.relu(x + self.fc2(self.relu(self.fc1(x))))


class ResNetMLP(nn.Module):
    def __init__(self, w: int = 12, blocks: int = 3) -> None:
        super().__init__()
        self.stem, self.act = nn.Linear(6, w), nn.ReLU()
        self.blocks = nn.Sequential(*[Block(w) for _ in range(blocks)])
        self.head = nn.Linear(w, 3)

    def forward(self, x):
        return self.head(self.blocks(self.act(self.stem(x))))


@BOTH
def test_residual_stack_is_captured_block_by_block(method):
    X = torch.randn(64, 6, dtype=torch.float64)
    table = BottleneckProbe(ResNetMLP().double(), X, capture_method=method).analyze()
    blocks = table[table["kind"] == "block"]
    assert blocks["name"].tolist() == ["blocks.0", "blocks.1", "blocks.2"]
    # each block's two ReLU calls are two layers, in depth order
    names = table["name"].tolist()
    assert (
        names.index("blocks.0.relu") < names.index("blocks.0.relu#2") < names.index("blocks.1.relu")
    )


class Untraceable(nn.Module):
    """Data-dependent control flow: `torch.fx` refuses it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(4, 10), nn.Linear(10, 10), nn.Linear(10, 2)
        self.act1, self.act2 = nn.ReLU(), nn.ReLU()

    def forward(self, x):
        h = self.act1(self.fc1(x))
        if h.sum() > 0:
            h = self.act2(self.fc2(h))
        return self.fc3(h)


def test_untraceable_model_falls_back_to_hooks():
    X = torch.randn(40, 4, dtype=torch.float64).abs()
    probe = BottleneckProbe(Untraceable().double(), X)
    s = probe.summary()
    assert s["capture"] == "hooks" and "TraceError" in s["fx_error"]
    assert probe.analyze()["name"].tolist() == ["input", "act1", "act2", "output"]
    assert s["jacobian_rank"] >= 1 and s["ntk_trace_mean"] > 0
    with pytest.raises(CaptureError):
        BottleneckProbe(Untraceable().double(), X, capture_method="fx").analyze()


class PairAct(nn.ReLU):
    def forward(self, x):
        return super().forward(x), x


class WithPair(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc, self.bn, self.act, self.pair = (
            nn.Linear(4, 6),
            nn.BatchNorm1d(6),
            nn.ReLU(),
            PairAct(),
        )
        self.out = nn.Linear(6, 2)

    def forward(self, x):
        h = self.act(self.bn(self.fc(x)))
        return self.out(self.pair(h)[0])


def test_unsupported_layers_are_listed_with_their_reason():
    X = torch.randn(30, 4, dtype=torch.float64)
    s = BottleneckProbe(WithPair().double(), X, capture_method="hooks").summary()
    reasons = {k["name"]: k["reason"] for k in s["skipped"]}
    assert "BatchNorm1d" in reasons["bn"]
    assert "not a [batch, ...] tensor" in reasons["pair"]
    assert "NTK trace needs every parameter" in s["ntk_trace_undefined"]


def test_no_layer_is_an_error():
    with pytest.raises(CaptureError, match="no activation"):
        BottleneckProbe(nn.Sequential(nn.Linear(3, 2)).double(), torch.randn(5, 3)).analyze()
    with pytest.raises(CaptureError, match="matches none"):
        BottleneckProbe(planted(2), torch.randn(5, 8), layers="nope*").analyze()


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_data_is_refused(bad):
    X = torch.randn(5, 8, dtype=torch.float64)
    X[2, 3] = bad
    with pytest.raises(ProbeError, match="NaN or infinite"):
        BottleneckProbe(planted(2), X)


def test_moments_equal_rows_and_loader_equals_tensor():
    """Beyond `max_rows` the quantities come from second moments: the same numbers, up to
    the moment form's conditioning (`sqrt(eps)` relative on the spectra's tail)."""
    X = torch.randn(400, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    exact = BottleneckProbe(planted(3), X).analyze()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X), batch_size=64)
    streamed = BottleneckProbe(planted(3), loader, max_rows=100).analyze()
    for col in ("rank_centered", "W_rank"):
        assert exact[col].fillna(-1).tolist() == streamed[col].fillna(-1).tolist()
    tol = 1e3 * math.sqrt(EPS)
    for col in ("stable_rank", "stable_rank_centered", "coi_gamma", "coi_gamma_nobias"):
        torch.testing.assert_close(
            torch.tensor(streamed[col].to_numpy()),
            torch.tensor(exact[col].to_numpy()),
            rtol=tol,
            atol=0.0,
        )
    assert streamed["coi"].isna().all() and exact["coi"].notna().all()


@pytest.mark.parametrize("conv,rows", [("flatten", 20), ("channel", 20 * 5 * 5)])
def test_conv_feature_maps_per_sample_or_per_channel(conv, rows):
    net = nn.Sequential(
        nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(75, 4)
    ).double()
    X = torch.randn(20, 2, 5, 5, dtype=torch.float64)
    table = BottleneckProbe(net, X, conv=conv).analyze().set_index("name")
    assert table.loc["1", "n_samples"] == rows and table.loc["1", "read_as"] == conv
    assert (table.loc["1", "N"], table.loc["1", "M"]) == (18, 3)  # [3, 2 x 3 x 3]


def test_merge_neurons_gives_a_smaller_equivalent_sequential():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).double()
    with torch.no_grad():  # neuron 1 = 2 x neuron 0: they merge
        net[0].weight[1] = 2 * net[0].weight[0]
        net[0].bias[1] = 2 * net[0].bias[0]
    X = torch.randn(50, 3, dtype=torch.float64)
    merged, counts = merge_neurons(net, X)
    assert counts[0] <= 3 and isinstance(merged, nn.Sequential)
    torch.testing.assert_close(merged(X), net(X), rtol=0, atol=1e3 * EPS)
    assert BottleneckProbe(net, X).summary()["min_hidden_rank"] >= 1
    assert ntk_trace(net, X).shape == (50,)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_equals_cpu():
    X = torch.randn(500, 8, dtype=torch.float64)
    cpu = BottleneckProbe(planted(2), X).analyze()
    gpu = BottleneckProbe(planted(2), X, device="cuda").analyze()
    assert cpu["rank_centered"].tolist() == gpu["rank_centered"].tolist()
    torch.testing.assert_close(
        torch.tensor(gpu["stable_rank"].to_numpy()),
        torch.tensor(cpu["stable_rank"].to_numpy()),
        rtol=1e4 * EPS,
        atol=0.0,
    )


# --- the rank rule across layers (issue 43) ---------------------------------------------


def planted_then_random(k: int, after: int, seed: int) -> nn.Sequential:
    """An MLP `16 -> 32` whose second layer `2` is an exact rank-`k` map with non-negative,
    non-orthogonal factors (its ReLU `3` is the identity on its non-negative input: exactly
    rank `k`), followed by `after` random `ReLU(Linear(32, 32))` layers and a `Linear(32,
    32)` output."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    mid = nn.Linear(32, 32, bias=False, dtype=torch.float64)
    with torch.no_grad():
        U = torch.rand(32, k, generator=gen, dtype=torch.float64)
        V = torch.rand(k, 32, generator=gen, dtype=torch.float64)
        mid.weight.copy_(U @ V)
    mods: list[nn.Module] = [nn.Linear(16, 32), nn.ReLU(), mid, nn.ReLU()]
    for _ in range(after):
        mods += [nn.Linear(32, 32), nn.ReLU()]
    return nn.Sequential(*mods, nn.Linear(32, 32)).double()


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("after", [1, 2, 3])
@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_planted_layer_is_the_bottleneck_at_one_cutoff(k, after, seed):
    """Issue 43: the former rule took each layer's largest gap and read a random ReLU layer
    after a planted rank-3 layer as rank 1 (11 of 24 initialisations). At one cutoff the
    planted layer is a bottleneck layer at its rank, clearly, and no layer after it reads
    less (a random layer after it may read `k` too: then both are bottleneck layers)."""
    X = torch.randn(400, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    table = BottleneckProbe(planted_then_random(k, after, seed), X).analyze()
    rows = table.set_index("name")
    assert rows.loc["3", "rank_centered"] == k and rows.loc["3", "rank_clear"]
    assert rows.loc["3", "bottleneck"]
    hidden = table[table["kind"] == "activation"]
    assert int(hidden["rank_centered"].min()) == k
    assert table.attrs["rank_cutoff"] == measure.RANK_RULE.cutoff


def test_no_clear_gap_makes_the_verdict_uncertain():
    """A middle layer whose spectrum decays geometrically by 2.5 per value across the
    cutoff: its count is read, and the verdict says it is uncertain, with the counts at
    1e-1, 1e-2 and 1e-3."""
    gen = torch.Generator().manual_seed(0)
    Q1, _ = torch.linalg.qr(torch.randn(32, 16, generator=gen, dtype=torch.float64))
    Q2, _ = torch.linalg.qr(torch.randn(16, 16, generator=gen, dtype=torch.float64))
    mid = nn.Linear(16, 32, bias=False, dtype=torch.float64)
    with torch.no_grad():
        mid.weight.copy_(Q1 @ torch.diag(2.5 ** -torch.arange(16.0, dtype=torch.float64)) @ Q2)
    net = nn.Sequential(mid, nn.Identity(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 32))
    X = torch.randn(2000, 16, dtype=torch.float64, generator=gen)
    probe = BottleneckProbe(net.double(), X)
    table, summary = probe.analyze(), probe.summary()
    row = table.set_index("name").loc["1"]
    assert not row["rank_clear"] and row["bottleneck"]
    assert summary["bottleneck_clear"] is False
    verdict = summary["verdicts"]["bottleneck"]
    assert verdict.startswith("bottleneck: rank") and "uncertain" in verdict
    assert f"{row['rank_at_1e-1']}, {row['rank_at_1e-2']}, {row['rank_at_1e-3']}" in verdict


def test_no_bottleneck_sets_no_bottleneck():
    """Issue 43: a "no bottleneck" verdict set `bottleneck_rank`, `bottleneck_layers` and
    marked a row; the smallest hidden rank is reported as such."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 8)).double()
    X = torch.randn(300, 8, dtype=torch.float64)
    probe = BottleneckProbe(net, X)
    table, summary = probe.analyze(), probe.summary()
    assert summary["verdicts"]["bottleneck"].startswith("no bottleneck")
    assert summary["bottleneck_rank"] is None and summary["bottleneck_layers"] == []
    assert not table["bottleneck"].any()
    assert summary["min_hidden_rank"] == 4 and summary["min_rank_layers"] == ["1"]
    assert bottleneck_rank(net, X) is None

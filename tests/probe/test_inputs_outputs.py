"""The probe's inputs and modes: bad `lam`/`device` refused in one line, evaluation in eval
mode on a copy (Dropout off, the user's model untouched), tuple/dict outputs of `forward`
analysed (the first tensor or the one named), a DataLoader's missing loss explained."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from bottlenecklab.probe import BottleneckProbe, ProbeError

GEN = torch.Generator().manual_seed(0)
X = torch.randn(60, 4, dtype=torch.float64, generator=GEN)
Y = torch.randn(60, 3, dtype=torch.float64, generator=GEN)


def _mlp(dropout: float = 0.0) -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(4, 8), nn.ReLU(), nn.Dropout(dropout), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3)
    ).double()


class Pair(nn.Module):
    """`forward` returns `(logits, features)`."""

    def __init__(self) -> None:
        super().__init__()
        self.body = _mlp()

    def forward(self, x):
        return self.body(x), self.body[1](self.body[0](x))


class Named(Pair):
    """`forward` returns `{"features": ..., "logits": ...}`."""

    def forward(self, x):
        logits, features = super().forward(x)
        return {"features": features, "logits": logits}


@pytest.mark.parametrize("lam", [-1.0, math.nan, math.inf])
def test_bad_lam_is_refused(lam):
    with pytest.raises(ProbeError, match="lam must be"):
        BottleneckProbe(_mlp(), X, Y, lam)


def test_unknown_device_is_refused():
    with pytest.raises(ProbeError, match="device must be"):
        BottleneckProbe(_mlp(), X, device="tpu")


def test_wrong_target_columns_are_refused():
    with pytest.raises(ProbeError, match="Y has 2 columns but the model's output has 3"):
        BottleneckProbe(_mlp(), X, Y[:, :2], 1e-3).analyze()


def test_train_mode_model_is_evaluated_in_eval_mode_on_a_copy():
    """Issue 34: a model left in train() with Dropout gave stationarity 10.7 and 14.9 on two
    identical calls."""
    net = _mlp(dropout=0.5).train()
    first = BottleneckProbe(net, X, Y, 1e-3).summary()
    second = BottleneckProbe(net, X, Y, 1e-3).summary()
    assert first["certificate"]["stationarity"] == second["certificate"]["stationarity"]
    assert first["loss"] == second["loss"]
    assert net.training and "train mode" in first["mode"]
    eval_net = _mlp(dropout=0.5).eval()
    same = BottleneckProbe(eval_net, X, Y, 1e-3).summary()
    assert same["certificate"]["stationarity"] == first["certificate"]["stationarity"]
    assert same["mode"] == "eval mode on a copy"


def test_tuple_output_analyses_the_first_tensor():
    probe = BottleneckProbe(Pair(), X, Y, 1e-3)
    table, s = probe.analyze(), probe.summary()
    ref = BottleneckProbe(_mlp(), X, Y, 1e-3)
    # body.1 runs twice (logits and features): its second call is a layer of its own
    assert table["name"].tolist() == ["input", "body.1", "body.4", "body.1#2", "output"]
    assert s["output_rank"] == ref.summary()["output_rank"] == 3
    assert "a tuple of 2: analysed 0" in s["output_read"]
    assert s["loss"] == ref.summary()["loss"]


def test_dict_output_by_name():
    s = BottleneckProbe(Named(), X, output="logits").summary()
    assert s["output_rank"] == 3 and "'logits' (asked)" in s["output_read"]
    with pytest.raises(ProbeError, match="not a tensor of the model's output"):
        BottleneckProbe(Named(), X, output="nope").analyze()


def test_dataloader_gives_loss_and_certificate_or_says_why():
    pairs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=16)
    s = BottleneckProbe(_mlp(), pairs, lam=1e-3).summary()
    ref = BottleneckProbe(_mlp(), X, Y, lam=1e-3).summary()
    assert s["loss"] == ref["loss"] and s["certificate"] == ref["certificate"]
    inputs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X), batch_size=16)
    s = BottleneckProbe(_mlp(), inputs, lam=1e-3).summary()
    assert s["loss"] is None and s["certificate"] is None
    assert "DataLoader yields no (x, y) pairs" in s["loss_undefined"]


def _exported(dynamic: bool) -> nn.Module:
    net = _mlp().float()
    shapes = {"input": {0: torch.export.Dim.DYNAMIC}} if dynamic else None
    program = torch.export.export(net, (torch.randn(4, 4),), dynamic_shapes=shapes)
    return program.module()


def test_exported_model_keeps_its_output_and_weights():
    """Issue 34: a .pt2 model lost its output row and listed every Linear as skipped."""
    X32, Y32 = X.float(), Y.float()
    probe = BottleneckProbe(_exported(dynamic=True), X32, Y32, 1e-3)
    table, s = probe.analyze(), probe.summary()
    ref = BottleneckProbe(_mlp().float(), X32, Y32, 1e-3)
    assert table["kind"].iloc[-1] == "output" and s["output_rank"] == 3
    assert s["skipped"] == [] and table["W_rank"].notna().sum() == 3
    cols = ["rank_centered", "W_rank", "W_spikes"]
    assert table[cols].fillna(-1).values.tolist() == ref.analyze()[cols].fillna(-1).values.tolist()


def test_fixed_batch_export_is_run_in_batches_of_its_size():
    """Issue 34: an export with a fixed batch of 4 failed with `Guard failed`."""
    X32, Y32 = X[:58].float(), Y[:58].float()  # 58 = 14 x 4 + 2: the last batch is padded
    fixed = BottleneckProbe(_exported(dynamic=False), X32, Y32, 1e-3)
    dynamic = BottleneckProbe(_exported(dynamic=True), X32, Y32, 1e-3)
    cols = ["n_samples", "rank_centered", "stable_rank_centered"]
    a, b = fixed.analyze()[cols], dynamic.analyze()[cols]
    assert a["n_samples"].tolist() == b["n_samples"].tolist() == [58] * len(a)
    assert a["rank_centered"].tolist() == b["rank_centered"].tolist()
    torch.testing.assert_close(
        torch.tensor(a["stable_rank_centered"].to_numpy()),
        torch.tensor(b["stable_rank_centered"].to_numpy()),
    )
    s = fixed.summary()
    assert "fixed batch of 4" in s["output_read"]
    f32 = 64 * torch.finfo(torch.float32).eps  # chunked vs whole-batch float32 sums
    assert s["loss"]["cost"] == pytest.approx(dynamic.summary()["loss"]["cost"], rel=f32)
    assert s["jacobian_rank"] == dynamic.summary()["jacobian_rank"]

"""The probe's inputs and modes: bad `lam`/`device` refused in one line, evaluation in eval
mode on a copy (Dropout off, the user's model untouched), tuple/dict outputs of `forward`
analysed (the first tensor or the one named), a DataLoader's missing loss explained."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from bottlenecklab import measure
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


# --- models the probe refused or misread (issue 43) ---------------------------------------


def test_integer_inputs_pass_unchanged():
    """Token ids were cast to float64: every model starting with nn.Embedding failed."""
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Embedding(50, 16), nn.Flatten(), nn.Linear(160, 32), nn.ReLU(), nn.Linear(32, 2)
    )
    ids = torch.randint(0, 50, (100, 10), generator=torch.Generator().manual_seed(0))
    probe = BottleneckProbe(net, ids)
    table, summary = probe.analyze(), probe.summary()
    assert table["name"].tolist() == ["input", "3", "output"]
    with torch.no_grad():
        hidden = net[:4].double()(ids)
    want = torch.linalg.svdvals(hidden - hidden.mean(0))[:10]
    torch.testing.assert_close(
        torch.tensor(table.loc[1, "top_sv_centered"], dtype=torch.float64), want
    )
    assert summary["jacobian_rank"] is None and "integers" in summary["jacobian_undefined"]


def test_class_labels_with_cross_entropy():
    """`[N]` labels with cost="cross_entropy" were accepted, then summary() crashed."""
    labels = torch.arange(60) % 3
    probe = BottleneckProbe(_mlp(), X, labels, lam=1e-3, cost="cross_entropy")
    s = probe.summary()
    want = nn.functional.cross_entropy(_mlp()(X), labels).item()
    assert s["loss"]["cost"] == pytest.approx(want, rel=1e-12)
    assert s["certificate"] is not None
    with pytest.raises(ProbeError, match="class labels"):
        BottleneckProbe(_mlp(), X, labels + 2, lam=1e-3, cost="cross_entropy").summary()


class SmallResNet(nn.Module):
    """Conv stem, one residual block, global average pooling, a linear head."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.stem = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU())
        self.conv = nn.Conv2d(8, 8, 3, padding=1)
        self.relu = nn.ReLU()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        h = self.stem(x)
        h = self.relu(self.conv(h) + h)
        return self.fc(torch.flatten(self.avgpool(h), 1))


@pytest.mark.parametrize("method", ["fx", "hooks"])
def test_pooled_features_are_a_layer(method):
    """A CNN's pooled features had no row and `layers="avgpool"` was refused."""
    net = SmallResNet().double()
    images = torch.rand(
        40, 1, 6, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0)
    )
    table = BottleneckProbe(net, images, capture_method=method).analyze()
    pooled = table.set_index("name").loc["avgpool"]
    assert pooled["kind"] == "pool" and pooled["width"] == 8
    with torch.no_grad():
        want = net.avgpool(net.relu(net.conv(net.stem(images)) + net.stem(images))).flatten(1)
    s = torch.linalg.svdvals(want - want.mean(0))
    assert pooled["rank_centered"] == int((s > measure.RANK_RULE.cutoff * s[0]).sum())
    assert pooled["top_sv_centered"] == pytest.approx(s.tolist(), rel=1e-12)
    only = BottleneckProbe(net, images, layers="avgpool", capture_method=method).analyze()
    assert only["name"].tolist() == ["input", "avgpool"]
    named = BottleneckProbe(net, images, layers=["stem.0"], capture_method=method).analyze()
    assert named["name"].tolist() == ["input", "stem.0"] and named.loc[1, "kind"] == "module"


class Tokens(nn.Module):
    """Token ids `[N, T]` -> embedding -> one encoder layer (which takes a padding mask)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(20, 16)
        layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.head = nn.Linear(16, 3)

    def forward(self, ids, src_key_padding_mask=None):
        h = self.enc(self.embed(ids), src_key_padding_mask=src_key_padding_mask)
        return self.head(h[:, 0])


def test_padded_tokens_are_dropped_and_the_mask_reaches_the_model():
    """Padded tokens were read as samples and the mask was ignored."""
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(1, 20, (12, 7), generator=gen)
    lengths = torch.randint(3, 8, (12,), generator=gen)
    pad = torch.arange(7)[None, :] >= lengths[:, None]  # True at padded positions
    ids[pad] = 0
    net = Tokens().double().eval()
    probe = BottleneckProbe(net, ids, padding_mask=pad, jacobian_points=4)
    table, summary = probe.analyze(), probe.summary()
    block = table.set_index("name").loc["enc.layers.0"]
    assert block["n_samples"] == int((~pad).sum()) and block["read_as"] == "tokens"
    with torch.no_grad():  # the stream after the block, with the mask, padded rows dropped
        stream = net.enc.layers[0](net.embed(ids), src_key_padding_mask=pad)[~pad]
    want = torch.linalg.svdvals(stream - stream.mean(0))[:10]
    torch.testing.assert_close(torch.tensor(block["top_sv_centered"], dtype=torch.float64), want)
    assert f"{int(pad.sum())} padded tokens" in summary["padding"]
    with pytest.raises(ProbeError, match="padding_mask"):
        BottleneckProbe(net, ids, padding_mask=pad[:, :3])

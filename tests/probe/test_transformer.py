"""Transformers (issue 34 item 7): PyTorch's `TransformerEncoder` (its fused fast path
bypassed) and a hand-written pre-norm block; the residual stream after each block, the MLP
hidden activations and each attention output, with tokens as samples."""

from __future__ import annotations

import warnings

import torch
from torch import nn

from bottlenecklab import measure
from bottlenecklab.probe import BottleneckProbe

N, T = 30, 6
X = torch.randn(N, T, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))


class Encoder(nn.Module):
    """The issue's model: `Linear(8, 32)`, 3 encoder layers with 4 heads, mean-pooled."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Linear(8, 32)
        layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
        self.head = nn.Linear(32, 5)

    def forward(self, x):
        return self.head(self.enc(self.embed(x)).mean(1))


class PreNorm(nn.Module):
    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class HandWritten(nn.Module):
    """Two pre-norm blocks on an embedding of planted rank 3, whose attention and MLP add
    nothing (zero output projections): the residual stream has rank 3 at every block."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Linear(8, 32)
        self.blocks = nn.Sequential(PreNorm(), PreNorm())
        self.head = nn.Linear(32, 5)
        gen = torch.Generator().manual_seed(1)
        with torch.no_grad():
            self.embed.weight.copy_(
                torch.randn(32, 3, generator=gen) @ torch.randn(3, 8, generator=gen)
            )
            for b in self.blocks:
                for lin in (b.attn.out_proj, b.mlp[2]):
                    lin.weight.zero_()
                    lin.bias.zero_()

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)).mean(1))


def test_encoder_layers_attention_mlp_and_stream():
    """Issue 34: this model gave `CaptureError: no activation ... found (capture: fx)`."""
    net = Encoder().double().eval()
    probe = BottleneckProbe(net, X, jacobian_points=4)
    table, s = probe.analyze(), probe.summary()
    by_kind = table.groupby("kind")["name"].apply(list).to_dict()
    assert by_kind["block"] == [f"enc.layers.{i}" for i in range(3)]
    assert by_kind["attention"] == [f"enc.layers.{i}.self_attn" for i in range(3)]
    assert by_kind["activation"] == [f"enc.layers.{i}.mlp" for i in range(3)]
    inner = table[table["kind"] != "output"]
    assert (inner["read_as"] == "tokens").all() and (inner["n_samples"] == N * T).all()
    assert torch.backends.mha.get_fastpath_enabled()  # restored after the run
    # the stream after block 0, computed by hand: the tokens of every input are the rows
    with torch.no_grad():
        stream = net.enc.layers[0](net.embed(X)).reshape(-1, 32)
    want = measure.representation_quantities(stream)["stable_rank_centered"]
    got = table.set_index("name").loc["enc.layers.0", "stable_rank_centered"]
    assert abs(got - want) <= 1e3 * torch.finfo(torch.float64).eps * want
    # post-norm: LayerNorm centres every token, the stream has rank 31 of 32: above the
    # output's 5, so no bottleneck (and none set)
    assert s["min_hidden_rank"] == 31 and "residual stream" in s["verdicts"]["bottleneck"]
    assert s["bottleneck_rank"] is None and s["verdicts"]["bottleneck"].startswith("no bottleneck")
    assert "tokens as samples" in s["bottleneck_over"]


def test_hand_written_pre_norm_block_shows_a_planted_stream_rank():
    probe = BottleneckProbe(HandWritten().double(), X, jacobian_points=4)
    table, s = probe.analyze(), probe.summary()
    blocks = table[table["kind"] == "block"]
    assert blocks["name"].tolist() == ["blocks.0", "blocks.1"]
    assert blocks["rank_centered"].tolist() == [3, 3]
    assert s["bottleneck_rank"] == 3 and s["bottleneck_layers"] == ["blocks.0", "blocks.1"]
    assert (table["kind"] == "attention").sum() == 2 and (table["op"] == "GELU").sum() == 2
    assert s["verdicts"]["bottleneck"].startswith("bottleneck: rank 3")


def test_tokens_flattened_per_sample_on_request():
    table = BottleneckProbe(Encoder().double().eval(), X, tokens="flatten").analyze()
    assert (table["n_samples"] == N).all() and "tokens" not in set(table["read_as"])


def test_no_vmap_performance_warning_reaches_the_user():
    """Issue 43: vmap's "performance drop" notice (attention's backward has no batching
    rule) leaked from the Jacobians; it is silenced there, and only it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        BottleneckProbe(Encoder().double().eval(), X, jacobian_points=4).summary()
        warnings.warn("a user's own warning", UserWarning, stacklevel=1)
    messages = [str(w.message) for w in caught]
    assert not any("performance drop" in m for m in messages)
    assert "a user's own warning" in messages

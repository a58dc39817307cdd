"""`bottlenecklab analyze`: the spec's safe formats end to end, and every bad input is one
line on stderr, exit status 2, nothing written."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from bottlenecklab.cli import main

FACTORY = textwrap.dedent(
    """
    from torch import nn

    def make_mlp():
        return nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 12), nn.ReLU(),
                             nn.Linear(12, 3))

    def make_linear():
        return nn.Sequential(nn.Linear(5, 3))

    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = make_mlp()

        def forward(self, x):
            return {"features": x, "logits": self.net(x)}

    def make_pair():
        return Pair()
    """
)


def _export(net: nn.Module):
    """A `torch.export` archive with a dynamic batch dimension (as users should save)."""
    batch = {"input": {0: torch.export.Dim.DYNAMIC}}
    return torch.export.export(net, (torch.randn(4, 5),), dynamic_shapes=batch)


@pytest.fixture
def user(tmp_path, monkeypatch):
    """A user's folder: a factory module, its weights, data files."""
    (tmp_path / "user_nets.py").write_text(FACTORY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 12), nn.ReLU(), nn.Linear(12, 3))
    torch.save(net.state_dict(), tmp_path / "w.pt")
    X = np.random.default_rng(0).standard_normal((40, 5))
    Y = np.random.default_rng(1).standard_normal((40, 3))
    np.savez(tmp_path / "d.npz", X=X, Y=Y)
    torch.export.save(_export(net), tmp_path / "m.pt2")
    return tmp_path


def _run(capsys, *argv) -> tuple[int, str]:
    rc = main(["analyze", *map(str, argv), "--quiet"])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize("model", ["m.pt2", "user_nets:make_mlp"])
def test_analyze_writes_table_summary_figures_report(user, capsys, model):
    extra = ["--weights", "w.pt"] if ":" in model else []
    rc, err = _run(capsys, model, "d.npz", *extra, "--lam", "0.01", "--out", "out")
    assert rc == 0, err
    out = user / "out"
    table = pd.read_parquet(out / "layers.parquet")
    summary = json.loads((out / "summary.json").read_text())
    assert len(table) >= 3 and summary["min_hidden_rank"] >= 1
    assert summary["loss"]["grad_norm"] >= 0
    cert = summary["certificate"]  # Y and lam given: the convergence certificate
    assert cert["stationarity"] <= cert["smooth_stationarity"] and cert["threshold"] > 0
    assert (out / "report.html").is_file() and len(list((out / "figures").glob("*.png"))) == 4


def test_outputs_have_normal_permissions(user, capsys):
    """Written as `open()` would (0666 less the umask), not `mkstemp`'s 0600."""
    rc, err = _run(capsys, "m.pt2", "d.npz", "--out", "out")
    assert rc == 0, err
    mask = os.umask(0o022)
    os.umask(mask)
    for name in ("summary.json", "layers.parquet", "report.html"):
        assert (user / "out" / name).stat().st_mode & 0o777 == 0o666 & ~mask


def test_dict_output_named_on_the_command_line(user, capsys):
    net_state = torch.load(user / "w.pt", weights_only=True)
    torch.save({f"net.{k}": v for k, v in net_state.items()}, user / "wp.pt")
    argv = ["user_nets:make_pair", "d.npz", "--weights", "wp.pt", "--out", "out"]
    rc, err = _run(capsys, *argv, "--output", "logits")
    assert rc == 0, err
    summary = json.loads((user / "out" / "summary.json").read_text())
    assert summary["output_rank"] == 3 and "'logits' (asked)" in summary["output_read"]
    rc, err = _run(capsys, *argv[:-1], "out2", "--output", "nope")
    assert rc == 2 and "not a tensor of the model's output" in err and err.count("\n") == 1


BAD = [
    (["missing.pt2", "d.npz"], "not a readable file"),
    (["junk.pt2", "d.npz"], "not a torch.export archive"),
    (["user_nets:make_mlp", "d.npz"], "needs --weights"),
    (["user_nets:nope", "d.npz", "--weights", "w.pt"], "cannot build"),
    (["user_nets:make_mlp", "d.npz", "--weights", "junk.pt"], "weights-only"),
    (["user_nets:make_linear", "d.npz", "--weights", "w.pt"], "does not fit"),
    (["m.pt2", "missing.npz"], "not a readable file"),
    (["m.pt2", "nan.npz"], "NaN"),
    (["m.pt2", "wide.npy"], "fails on X"),
    (["m.pt2", "d.txt"], "expected one of"),
    (["m.pt2", "d.npz", "--layers", "nothing*"], "matches none"),
    (["m.pt2", "x.npy", "--lam", "0.1"], "--lam needs targets"),
    (["m.pt2", "d.npz", "--device", "cuda:9" if torch.cuda.is_available() else "cuda"], "cuda"),
    (["m.pt2", "d.npz", "--lam", "nan"], "lam must be a finite number"),
    (["m.pt2", "d.npz", "--lam", "-1"], "lam must be >= 0"),
    (["m.pt2", "d.npz", "--device", "tpu"], "device must be cpu, cuda"),
    (["m.pt2", "wrongy.npz", "--lam", "0.1"], "Y has 4 columns but the model's output has 3"),
    (["user_nets:make_mlp", "d.npz", "--weights", "w.safetensors"], "optional dependency"),
    (["m.pt2", "d.npz", "--cost", "hinge"], "--cost must be mse or cross_entropy"),
    (["m.pt2", "labels.npz", "--lam", "0.1", "--cost", "cross_entropy"], "class labels Y"),
]


@pytest.mark.parametrize("argv,message", BAD, ids=[m for _, m in BAD])
def test_bad_input_is_one_line_exit_2_nothing_written(user, capsys, monkeypatch, argv, message):
    (user / "junk.pt2").write_bytes(b"not a zip")
    (user / "junk.pt").write_bytes(b"\x80\x04garbage")
    (user / "d.txt").write_text("1,2\n")
    X = np.ones((6, 5))
    X[1, 2] = np.nan
    np.savez(user / "nan.npz", X=X)
    np.save(user / "wide.npy", np.ones((6, 7)))
    np.save(user / "x.npy", np.ones((6, 5)))
    np.savez(user / "wrongy.npz", X=np.ones((6, 5)), Y=np.ones((6, 4)))
    np.savez(user / "labels.npz", X=np.ones((6, 5)), Y=np.array([0, 1, 2, 3, 0, 1]))
    (user / "w.safetensors").write_bytes(b"{}")
    monkeypatch.setitem(sys.modules, "safetensors", None)  # not installed: one line
    monkeypatch.setitem(sys.modules, "safetensors.torch", None)
    rc, err = _run(capsys, *argv, "--out", "out")
    assert rc == 2 and err.startswith("error:") and err.strip().count("\n") == 0, err
    assert message in err
    assert not (user / "out").exists()


def test_linear_model_has_no_layer(user, capsys):
    net = nn.Sequential(nn.Linear(5, 3))
    torch.save(net.state_dict(), user / "lin.pt")
    rc, err = _run(capsys, "user_nets:make_linear", "d.npz", "--weights", "lin.pt", "--out", "o")
    assert rc == 2 and "no activation" in err and not (user / "o").exists()


@settings(max_examples=15, deadline=None)
@given(blob=st.binary(max_size=200), suffix=st.sampled_from([".npz", ".npy", ".csv", ".pt"]))
def test_any_garbage_data_file_is_one_line(tmp_path_factory, blob, suffix):
    folder = tmp_path_factory.mktemp("garbage")
    net = nn.Sequential(nn.Linear(5, 4), nn.ReLU(), nn.Linear(4, 2))
    torch.export.save(_export(net), folder / "m.pt2")
    (folder / f"d{suffix}").write_bytes(blob)
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(
            [
                "analyze",
                str(folder / "m.pt2"),
                str(folder / f"d{suffix}"),
                "--out",
                str(folder / "out"),
                "--quiet",
            ]
        )
    if rc != 0:
        assert rc == 2 and err.getvalue().strip().count("\n") == 0, err.getvalue()
        assert not (folder / "out").exists()


def test_cross_entropy_with_class_labels(user, capsys):
    """Issue 43: the CLI had no --cost (a classifier got an MSE loss and certificate), and
    class labels [N] with cross_entropy crashed the summary."""
    X = np.random.default_rng(0).standard_normal((40, 5))
    np.savez(user / "cls.npz", X=X, Y=np.arange(40) % 3)
    argv = ["m.pt2", "cls.npz", "--lam", "0.01", "--out", "out"]
    rc, err = _run(capsys, *argv, "--cost", "cross_entropy")
    assert rc == 0, err
    summary = json.loads((user / "out" / "summary.json").read_text())
    net = user_net(user)
    logits = net(torch.from_numpy(X).float()).double()
    want = nn.functional.cross_entropy(logits, torch.arange(40) % 3).item()
    assert summary["loss"]["cost"] == pytest.approx(want, rel=1e-5)


def user_net(user) -> nn.Module:
    net = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 12), nn.ReLU(), nn.Linear(12, 3))
    net.load_state_dict(torch.load(user / "w.pt", weights_only=True))
    return net.eval()


class _Block(nn.Module):
    def __init__(self, w: int) -> None:
        super().__init__()
        self.lin, self.relu = nn.Linear(w, w), nn.ReLU()

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.lin(h))
        out += h  # an in-place residual join: aten.add_ in the archive
        return out


def _residual_bn() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(5, 8), nn.BatchNorm1d(8), nn.ReLU(), _Block(8), nn.ReLU(), nn.Linear(8, 3)
    )


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_archive_and_module_give_the_same_rows(tmp_path, mode):
    """Issue 43: the archive lost the in-place residual join (`aten.add_`), always reported
    train mode, and an archive exported in train mode ran on batch statistics."""
    from bottlenecklab.probe import BottleneckProbe, load_model

    net = _residual_bn()
    with torch.no_grad():  # running statistics unlike the batch's
        net[1].running_mean.fill_(3.0)
        net[1].running_var.fill_(0.25)
    getattr(net, mode)()
    batch = {"input": {0: torch.export.Dim.DYNAMIC}}
    torch.export.save(
        torch.export.export(net, (torch.randn(4, 5),), dynamic_shapes=batch), tmp_path / "m.pt2"
    )
    archive = load_model(str(tmp_path / "m.pt2"))
    X = torch.randn(64, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    a = BottleneckProbe(archive, X)
    b = BottleneckProbe(net, X)
    ta, tb = a.analyze(), b.analyze()
    assert list(ta["kind"]) == list(tb["kind"]) and "block" in set(ta["kind"])
    assert len(ta) == len(tb) == 6  # input, 2, 3.relu, 3 (the join), 4, output
    for col in ("rank_centered", "rank_exact"):
        assert list(ta[col]) == list(tb[col])
    for sa, sb in zip(ta["top_sv_centered"], tb["top_sv_centered"]):
        np.testing.assert_allclose(sa, sb, rtol=1e-9, atol=1e-12 * max(sb, default=1.0))
    assert f"an exported graph in {mode} mode" in a.mode

"""Shared set-ups of the training tests: a small leaky ResNet on a teacher, and a run that
crashes after a checkpoint and resumes (the second-order phases' bitwise-resume tests)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import bottlenecklab.training._trainer as trainer_module
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import TrainConfig, load_checkpoint, train


class Interrupted(Exception):
    pass


@pytest.fixture(scope="module")
def resnet_setup() -> tuple[Any, Callable[[], torch.nn.Module]]:
    """`(data, net)`: a teacher `(5, 2, 5)`, 40 points, and a fresh float64 leaky ResNet
    (width 8, depth 6, `L~ = 2`) per call of `net`, always from the same init."""
    data = TeacherConfig(dims=(5, 2, 5), n_train=40).build(seed=0)

    def net():
        cfg = LeakyResNetConfig(width=8, depth=6, leak=2.0)
        return cfg.build(data.d_in, data.d_out, seed=1, dtype=torch.float64)

    return data, net


@pytest.fixture
def crash_at(tmp_path, monkeypatch) -> Callable[..., Path]:
    """`(net, data, cfg, at) -> checkpoint path`: trains `net` on `data` with `cfg` and
    crashes right after the checkpoint of step `at` is written (what a killed run leaves)."""

    def run(net: torch.nn.Module, data: Any, cfg: TrainConfig, at: int) -> Path:
        real_save = trainer_module.save_checkpoint

        def save_then_crash(state, path):
            real_save(state, path)
            if state["steps"] == at:
                raise Interrupted

        ckpt = tmp_path / "checkpoint.pt"
        monkeypatch.setattr(trainer_module, "save_checkpoint", save_then_crash)
        with pytest.raises(Interrupted):
            train(net, data, cfg, progress=False, checkpoint=ckpt)
        monkeypatch.undo()
        return ckpt

    return run


@pytest.fixture
def crash_and_resume(resnet_setup, crash_at) -> Callable[..., dict[str, Any]]:
    """`(cfg, at) -> optimizer state saved at step at`: trains `cfg` straight, then again
    crashing right after the checkpoint of step `at`, resumes it, and asserts the resumed
    run ends bitwise where the straight one does, with the same logged rows."""
    data, net = resnet_setup

    def run(cfg: TrainConfig, at: int) -> dict[str, Any]:
        straight = net()
        ref = train(straight, data, cfg, progress=False)
        ckpt = crash_at(net(), data, cfg, at)
        saved = load_checkpoint(ckpt)["optimizer"]
        resumed = net()
        res = train(resumed, data, cfg, progress=False, checkpoint=ckpt, resume=True)
        for k, v in straight.state_dict().items():
            assert torch.equal(resumed.state_dict()[k], v)
        strip = [{k: v for k, v in r.items() if k != "wall_s"} for r in res.metrics]
        assert strip == [{k: v for k, v in r.items() if k != "wall_s"} for r in ref.metrics]
        return saved

    return run

"""Atomic checkpoints: write to a temporary file, then rename; damaged files are refused."""

from __future__ import annotations

import pickle

import pytest
import torch

from bottlenecklab.training import CheckpointError, load_checkpoint, save_checkpoint


def _state(value: float = 1.0) -> dict:
    return {"model": {"w": torch.full((2, 3), value)}, "phase": 0, "t": 5, "metrics": []}


def test_round_trip(tmp_path):
    path = tmp_path / "sub" / "checkpoint.pt"
    save_checkpoint(_state(2.0), path)
    state = load_checkpoint(path)
    assert torch.equal(state["model"]["w"], torch.full((2, 3), 2.0))
    assert state["t"] == 5


def test_no_temporary_files_are_left(tmp_path):
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(_state(1.0), path)
    save_checkpoint(_state(2.0), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]


class Crash(Exception):
    pass


def test_crash_mid_save_leaves_the_previous_checkpoint_intact(tmp_path, monkeypatch):
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(_state(1.0), path)
    before = path.read_bytes()

    def half_written_then_crash(obj, f, *args, **kwargs):
        f.write(b"PARTIAL")  # some bytes reach the temporary file, then the process "dies"
        raise Crash("disk full")

    monkeypatch.setattr(torch, "save", half_written_then_crash)
    with pytest.raises(Crash):
        save_checkpoint(_state(2.0), path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert torch.equal(load_checkpoint(path)["model"]["w"], torch.full((2, 3), 1.0))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]


def test_missing_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(tmp_path / "nope.pt")


@pytest.mark.parametrize(
    "content",
    [
        b"garbage, not a checkpoint",
        b"",
        "truncated",
        pickle.dumps([1, 2, 3]),
        "no-model-key",
    ],
)
def test_corrupted_checkpoint_raises_checkpoint_error(tmp_path, content):
    path = tmp_path / "checkpoint.pt"
    if content == "truncated":
        save_checkpoint(_state(), path)
        path.write_bytes(path.read_bytes()[:50])
    elif content == "no-model-key":
        torch.save({"weights": 1}, path)
    else:
        path.write_bytes(content)
    with pytest.raises(CheckpointError, match="corrupted") as info:
        load_checkpoint(path)
    assert "\n" not in str(info.value)

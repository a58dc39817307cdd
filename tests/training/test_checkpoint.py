"""Checkpoints: atomic, checksummed, the previous one kept, loaded as data only."""

from __future__ import annotations

import errno
import os
import pickle

import pytest
import torch

from bottlenecklab.files import WriteError
from bottlenecklab.training import (
    CheckpointError,
    load_checkpoint,
    previous_checkpoint,
    save_checkpoint,
)


def _state(value: float = 1.0) -> dict:
    return {"model": {"w": torch.full((2, 3), value)}, "phase": 0, "t": 5, "metrics": []}


def _w(state: dict) -> float:
    return float(state["model"]["w"][0, 0])


def test_round_trip(tmp_path):
    path = tmp_path / "sub" / "checkpoint.pt"
    save_checkpoint(_state(2.0), path)
    state = load_checkpoint(path)
    assert torch.equal(state["model"]["w"], torch.full((2, 3), 2.0))
    assert state["t"] == 5


def test_the_previous_checkpoint_is_kept_and_no_temporary_file_is_left(tmp_path):
    path = tmp_path / "checkpoint.pt"
    for v in (1.0, 2.0, 3.0):
        save_checkpoint(_state(v), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt", "checkpoint.pt.prev"]
    assert _w(load_checkpoint(path)) == 3.0
    assert _w(load_checkpoint(previous_checkpoint(path))) == 2.0


class Crash(Exception):
    pass


def test_crash_mid_save_leaves_a_good_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(_state(1.0), path)

    def crash(*args, **kwargs):
        raise Crash("the process dies while writing")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(Crash):
        save_checkpoint(_state(2.0), path)
    monkeypatch.undo()
    assert _w(load_checkpoint(path)) == 1.0  # the old one, still in place
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("damage", ["truncate", "flip-a-byte", "garbage"])
def test_a_damaged_checkpoint_falls_back_to_the_previous_one_in_one_line(tmp_path, damage):
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(_state(1.0), path)
    save_checkpoint(_state(2.0), path)
    blob = bytearray(path.read_bytes())
    if damage == "truncate":
        blob = blob[: len(blob) // 2]
    elif damage == "flip-a-byte":
        blob[-10] ^= 0xFF
    else:
        blob = bytearray(b"\x00garbage")
    path.write_bytes(bytes(blob))
    with pytest.warns(UserWarning, match="corrupted") as caught:
        assert _w(load_checkpoint(path)) == 1.0
    assert "\n" not in str(caught[0].message)


def test_missing_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(tmp_path / "nope.pt")


@pytest.mark.parametrize(
    "content", [b"garbage, not a checkpoint", b"", "truncated", pickle.dumps([1, 2, 3])]
)
def test_a_damaged_checkpoint_without_a_previous_one_is_an_error(tmp_path, content):
    path = tmp_path / "checkpoint.pt"
    if content == "truncated":
        save_checkpoint(_state(), path)
        path.write_bytes(path.read_bytes()[:50])
    else:
        path.write_bytes(content)
    with pytest.raises(CheckpointError, match="corrupted") as info:
        load_checkpoint(path)
    assert "\n" not in str(info.value)


class Payload:
    """Unpickling this runs `touch <marker>`: what a malicious checkpoint would do."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_malicious_pickle_is_refused_and_runs_nothing(tmp_path):
    """A checkpoint with a valid header and checksum whose payload would execute code on
    `torch.load(weights_only=False)` is refused, and the code never runs."""
    import hashlib
    import io

    marker = tmp_path / "pwned"
    buf = io.BytesIO()
    torch.save({"model": {}, "evil": Payload(str(marker))}, buf)
    payload = buf.getvalue()
    path = tmp_path / "checkpoint.pt"
    header = b"bottlenecklab-checkpoint 1 " + hashlib.sha256(payload).hexdigest().encode()
    path.write_bytes(header + b"\n" + payload)
    with pytest.raises(CheckpointError, match="refused") as info:
        load_checkpoint(path)
    assert not marker.exists() and "\n" not in str(info.value)


def test_a_full_disk_leaves_the_old_checkpoint_and_says_so_in_one_line(tmp_path, monkeypatch):
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(_state(1.0), path)

    def disk_full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(WriteError, match="no space left") as info:
        save_checkpoint(_state(2.0), path)
    monkeypatch.undo()
    assert "\n" not in str(info.value)
    assert _w(load_checkpoint(path)) == 1.0
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

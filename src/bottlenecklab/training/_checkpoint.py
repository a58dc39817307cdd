"""Checkpoints: atomic, checksummed, the previous good one kept, loaded as data only.

File layout: the line `bottlenecklab-checkpoint 1 <sha256 of the payload>`, then the payload
(`torch.save` bytes). Saving moves the current file to `<name>.prev` and writes the new one
atomically (`files.atomic_write`), so a crash at any moment leaves at least one good
checkpoint. Loading verifies the checksum and reads tensors and plain containers only
(`torch.load(weights_only=True)`: a file someone hands you cannot run code); a truncated or
corrupted file is reported in one line and the previous checkpoint is used instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import warnings
from pathlib import Path
from typing import Any

import torch

from bottlenecklab.files import atomic_write

__all__ = ["CheckpointError", "load_checkpoint", "previous_checkpoint", "save_checkpoint"]

_MAGIC = b"bottlenecklab-checkpoint 1 "


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, unreadable or does not belong to this run."""


def previous_checkpoint(path: Path) -> Path:
    """Where the checkpoint before the current one is kept (`checkpoint.pt.prev`)."""
    path = Path(path)
    return path.with_name(path.name + ".prev")


def save_checkpoint(state: dict[str, Any], path: Path) -> None:
    """Write `state` (tensors, numbers, strings, lists, dicts) to `path` atomically, keeping
    the checkpoint it replaces as `previous_checkpoint(path)`."""
    path = Path(path)
    buf = io.BytesIO()
    torch.save(state, buf)
    payload = buf.getvalue()
    digest = hashlib.sha256(payload).hexdigest().encode()
    if path.is_file():  # keep the current one as `.prev`; it stays at `path` until replaced
        prev = previous_checkpoint(path)
        link = prev.with_name(prev.name + ".link")
        with contextlib.suppress(FileNotFoundError):
            link.unlink()
        try:
            os.link(path, link)  # a second name for the same bytes: no copy
            os.replace(link, prev)
        except OSError:  # a file system without hard links
            atomic_write(prev, path.read_bytes())
    atomic_write(path, _MAGIC + digest + b"\n" + payload)


def _read(path: Path) -> dict[str, Any]:
    """One checkpoint file, verified; `CheckpointError` with the reason in one line."""
    try:
        blob = path.read_bytes()
    except OSError as e:
        raise CheckpointError(f"checkpoint {path} cannot be read ({e.strerror})") from None
    if not blob.startswith(_MAGIC):
        raise CheckpointError(f"checkpoint {path} is corrupted (not a bottlenecklab checkpoint)")
    header, _, payload = blob.partition(b"\n")
    if hashlib.sha256(payload).hexdigest().encode() != header[len(_MAGIC) :]:
        raise CheckpointError(f"checkpoint {path} is corrupted (checksum mismatch: truncated?)")
    try:
        state = torch.load(io.BytesIO(payload), map_location="cpu", weights_only=True)
    except Exception as e:  # an unpickler refusal or a damaged archive
        raise CheckpointError(
            f"checkpoint {path} was refused: it holds more than tensors and plain data "
            f"({type(e).__name__})"
        ) from None
    if not isinstance(state, dict) or "model" not in state:
        raise CheckpointError(f"checkpoint {path} is corrupted (unexpected content)")
    return state


def load_checkpoint(path: Path) -> dict[str, Any]:
    """Read the checkpoint at `path`, or the previous one if it is damaged (with a warning).

    Raises `CheckpointError` when neither is a good checkpoint.
    """
    path = Path(path)
    prev = previous_checkpoint(path)
    if not path.is_file() and not prev.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    try:
        return _read(path)
    except CheckpointError as e:
        if not prev.is_file():
            raise
        first = str(e) if path.is_file() else f"no checkpoint at {path}"
    state = _read(prev)
    warnings.warn(f"{first}; using the previous one ({prev.name})", stacklevel=2)
    return state

"""Reading a user's model and data for `bottlenecklab analyze` without running code from a
file (the checkpoints' rule): a `torch.export` archive, or a factory named on the command
line plus weights read as tensors only; data as `.npz`, `.npy`, `.csv` or weights-only
`.pt`."""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from bottlenecklab.probe._probe import ProbeError

__all__ = ["DATA_FORMATS", "load_data", "load_model"]

DATA_FORMATS = (".npz", ".npy", ".csv", ".pt")


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def _file(path: Path, what: str) -> Path:
    if not path.is_file():
        raise ProbeError(f"{what} {path} is not a readable file")
    return path


def _tensors(path: Path) -> Any:
    """A weights-only `torch.load` (tensors, dicts, lists, numbers: never code)."""
    try:
        with warnings.catch_warnings():  # torch's advice on pickle protocols: not for users
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise ProbeError(f"{path}: not a weights-only torch file ({_first_line(e)})") from None


def load_model(spec: str, weights: str | Path | None = None) -> nn.Module:
    """The model of `spec`: a `torch.export` archive `FILE.pt2`, or `package.module:factory`
    (called with no argument) with `weights` (`.safetensors`, or a state dict read with
    `weights_only=True`) loaded strictly.

    Raises:
        ProbeError: one line, for any file, name or weights that cannot be used.
    """
    if spec.endswith(".pt2"):
        path = _file(Path(spec), "model")
        if weights is not None:
            raise ProbeError("--weights goes with package.module:factory, not a .pt2 archive")
        try:
            with warnings.catch_warnings():  # torch-internal deprecations, not the user's
                warnings.simplefilter("ignore")
                return torch.export.load(path).module()
        except Exception as e:
            raise ProbeError(f"{path}: not a torch.export archive ({_first_line(e)})") from None
    if ":" not in spec or Path(spec).exists():
        raise ProbeError(
            f"MODEL {spec!r} must be a torch.export archive (.pt2) or package.module:factory "
            "with --weights FILE"
        )
    module_name, _, factory_name = spec.partition(":")
    if weights is None:
        raise ProbeError(f"{spec} needs --weights FILE (.safetensors or a state dict .pt)")
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")  # the current folder, as `python -m` has it
    try:
        factory = getattr(importlib.import_module(module_name), factory_name)
        model = factory()
    except Exception as e:
        raise ProbeError(f"cannot build the model from {spec} ({_first_line(e)})") from None
    if not isinstance(model, nn.Module):
        raise ProbeError(f"{spec}() returned a {type(model).__name__}, not an nn.Module")
    path = _file(Path(weights), "weights")
    if path.suffix == ".safetensors":
        try:
            from safetensors.torch import load_file
        except ImportError:
            raise ProbeError(
                "reading .safetensors needs the optional dependency safetensors: "
                "pip install 'bottlenecklab[safetensors]' (or give a state dict .pt)"
            ) from None
        try:
            state = load_file(str(path))
        except Exception as e:
            raise ProbeError(f"{path}: not a safetensors file ({_first_line(e)})") from None
    else:
        state = _tensors(path)
    if not isinstance(state, dict):
        raise ProbeError(f"{path} holds a {type(state).__name__}, not a state dict")
    try:
        model.load_state_dict(state, strict=True)
    except Exception as e:
        raise ProbeError(f"{path} does not fit {spec}: {_first_line(e)}") from None
    return model


def load_data(path: str | Path) -> tuple[np.ndarray | torch.Tensor, Any]:
    """`(X, Y or None)` from `.npz` (`X`, optional `Y`), `.npy` (X), `.csv` (X, numbers
    only, an optional header line) or `.pt` (a tensor, or a dict with `X` and optional `Y`,
    read with `weights_only=True`).

    Raises:
        ProbeError: one line, for a file that cannot be read or holds no `X`.
    """
    path = _file(Path(path), "data")
    suffix = path.suffix.lower()
    if suffix not in DATA_FORMATS:
        raise ProbeError(f"data {path}: expected one of {', '.join(DATA_FORMATS)}")
    try:
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as f:
                if "X" not in f:
                    raise ProbeError(f"{path} has no array X (found {sorted(f.files)})")
                return f["X"], (f["Y"] if "Y" in f else None)
        if suffix == ".npy":
            return np.load(path, allow_pickle=False), None
        if suffix == ".csv":
            try:
                return np.loadtxt(path, delimiter=",", ndmin=2), None
            except ValueError:
                return np.loadtxt(path, delimiter=",", ndmin=2, skiprows=1), None
    except ProbeError:
        raise
    except Exception as e:
        raise ProbeError(f"{path}: not readable as {suffix} ({_first_line(e)})") from None
    obj = _tensors(path)
    if isinstance(obj, torch.Tensor):
        return obj, None
    if isinstance(obj, dict) and isinstance(obj.get("X"), torch.Tensor):
        return obj["X"], obj.get("Y")
    raise ProbeError(f"{path} holds neither a tensor nor a dict with a tensor X")

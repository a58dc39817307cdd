"""Frozen, typed configuration: dotted overrides, (de)serialization and hashing.

Every configurable thing in Bottleneck Lab is a frozen dataclass whose fields carry type
hints (`int`, `float`, `bool`, `str`, `Literal[...]`, `tuple[T, ...]`, nested dataclasses,
tuples of dataclasses). This module knows nothing of the science: it turns
`key=value` strings into checked values, configs into JSON and back, and a config into a
short content hash (a run's id).
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

__all__ = [
    "ConfigError",
    "apply_overrides",
    "config_hash",
    "flatten",
    "from_dict",
    "parse_assignment",
    "to_dict",
]

C = TypeVar("C")


class ConfigError(ValueError):
    """A configuration value or key that cannot be accepted (message is one line)."""


def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def to_dict(cfg: Any) -> Any:
    """Nested plain-Python (JSON-ready) form of a config dataclass."""
    if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
        return {f.name: to_dict(getattr(cfg, f.name)) for f in dataclasses.fields(cfg)}
    if isinstance(cfg, tuple | list):
        return [to_dict(v) for v in cfg]
    if isinstance(cfg, Mapping):
        return {str(k): to_dict(v) for k, v in cfg.items()}
    return cfg


def from_dict(cls: type[C], data: Mapping[str, Any]) -> C:
    """Rebuild a config dataclass of type `cls` from `to_dict` output (checked)."""
    hints = _hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - names
    if unknown:
        raise ConfigError(f"unknown field(s) {sorted(unknown)} for {cls.__name__}")
    kwargs = {k: _coerce(v, hints[k], k) for k, v in data.items()}
    return cls(**kwargs)


def flatten(cfg: Any, prefix: str = "") -> dict[str, Any]:
    """`{"a.b.c": leaf}` for every leaf field of a config (tuples of dataclasses by index)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        key = prefix + f.name
        if dataclasses.is_dataclass(value):
            out.update(flatten(value, key + "."))
        elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            for i, item in enumerate(value):
                out.update(flatten(item, f"{key}.{i}."))
        else:
            out[key] = value
    return out


def config_hash(cfg: Any, length: int = 12) -> str:
    """Content hash of a config: equal configs give equal ids (used for caching/resume)."""
    blob = json.dumps(to_dict(cfg), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:length]


def parse_assignment(text: str) -> tuple[str, str]:
    """Split a command-line `key=value` into its two parts."""
    if "=" not in text:
        raise ConfigError(f"--set expects key=value, got {text!r}")
    key, value = text.split("=", 1)
    key = key.strip()
    if not key:
        raise ConfigError(f"--set expects key=value, got {text!r}")
    return key, value.strip()


def apply_overrides(cfg: C, overrides: Mapping[str, Any]) -> C:
    """Return `cfg` with dotted-key overrides applied, each checked against its field type.

    Values may be strings (from the command line; parsed by type) or Python values (from
    presets and sweep files; checked by type). Unknown keys fail with the valid ones.
    """
    for key, value in overrides.items():
        cfg = _set(cfg, key.split("."), value, key)
    return cfg


def _set(obj: Any, path: list[str], value: Any, full: str) -> Any:
    head, rest = path[0], path[1:]
    if isinstance(obj, tuple):
        if not head.isdigit() or int(head) >= len(obj):
            raise ConfigError(f"{full!r}: index {head!r} out of range (0..{len(obj) - 1})")
        i = int(head)
        # A whole item (`train.phases.1={...}`) is checked against the type of the one it replaces.
        new_item = _set(obj[i], rest, value, full) if rest else _coerce(value, type(obj[i]), full)
        return obj[:i] + (new_item,) + obj[i + 1 :]
    names = [f.name for f in dataclasses.fields(obj)]
    if head not in names:
        raise ConfigError(_unknown_key_message(full, obj, head))
    current = getattr(obj, head)
    if rest:
        if not (dataclasses.is_dataclass(current) or isinstance(current, tuple)):
            raise ConfigError(f"{full!r}: {head!r} is a value, not a group")
        new = _set(current, rest, value, full)
    else:
        hint = _hints(type(obj))[head]
        if dataclasses.is_dataclass(current) and not isinstance(value, Mapping):
            raise ConfigError(f"{full!r} is a group; set one of its fields ({_keys_of(current)})")
        new = _coerce(value, hint, full)
    try:
        return dataclasses.replace(obj, **{head: new})
    except ConfigError:
        raise
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{full!r}: {e}") from None


def _keys_of(obj: Any) -> str:
    return ", ".join(sorted(flatten(obj)))


def _unknown_key_message(full: str, obj: Any, head: str) -> str:
    names = [f.name for f in dataclasses.fields(obj)]
    close = difflib.get_close_matches(head, names, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return f"unknown key {full!r}{hint}; valid keys here: {', '.join(names)}"


def _coerce(value: Any, hint: Any, key: str) -> Any:
    """Check (and parse, for strings) `value` against the type hint `hint`."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        args = get_args(hint)
        if value is None or (isinstance(value, str) and value.lower() in ("none", "null")):
            if type(None) in args:
                return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(value, arg, key)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(errors[0] if errors else f"{key!r}: bad value {value!r}")
    if origin is Literal:
        choices = get_args(hint)
        if value not in choices:
            raise ConfigError(f"{key!r} must be one of {list(choices)}, got {value!r}")
        return value
    if origin is tuple:
        args = get_args(hint)
        items = _as_sequence(value, key)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(v, args[0], f"{key}[{i}]") for i, v in enumerate(items))
        if len(items) != len(args):
            raise ConfigError(f"{key!r} expects {len(args)} values, got {len(items)}")
        return tuple(_coerce(v, a, f"{key}[{i}]") for i, (v, a) in enumerate(zip(items, args)))
    if dataclasses.is_dataclass(hint):
        if dataclasses.is_dataclass(value):
            return value
        if isinstance(value, Mapping):
            return from_dict(hint, value)
        raise ConfigError(f"{key!r} expects a {hint.__name__} group, got {value!r}")
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on"):
            return True
        if isinstance(value, str) and value.lower() in ("false", "0", "no", "off"):
            return False
        raise ConfigError(f"{key!r} expects true/false, got {value!r}")
    if hint is int:
        if isinstance(value, bool):
            raise ConfigError(f"{key!r} expects an integer, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                pass
        raise ConfigError(f"{key!r} expects an integer, got {value!r}")
    if hint is float:
        if isinstance(value, bool):
            raise ConfigError(f"{key!r} expects a number, got {value!r}")
        if isinstance(value, int | float):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise ConfigError(f"{key!r} expects a number, got {value!r}")
    if hint is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{key!r} expects a string, got {value!r}")
    if hint is Any or hint is typing.Any:
        return value
    raise ConfigError(f"{key!r}: unsupported field type {hint!r}")


def _as_sequence(value: Any, key: str) -> list[Any]:
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        if text.startswith("(") and text.endswith(")"):
            text = text[1:-1]
        return [t.strip() for t in text.split(",") if t.strip()]
    raise ConfigError(f"{key!r} expects a list (comma-separated), got {value!r}")

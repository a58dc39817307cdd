"""`bottlenecklab.config`: typed dotted overrides, (de)serialization, content hashes."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Literal

import pytest

from bottlenecklab.config import (
    ConfigError,
    apply_overrides,
    config_hash,
    flatten,
    from_dict,
    parse_assignment,
    to_dict,
)
from bottlenecklab.experiments import EXPERIMENTS, get, resolve_config
from bottlenecklab.training import PhaseConfig

FLAGSHIP = "leaky-resnet/hamiltonian-vs-depth"


@dataclass(frozen=True)
class Inner:
    n: int = 3
    x: float = 0.5


@dataclass(frozen=True)
class Item:
    name: str = "a"
    rate: float = 1e-3


@dataclass(frozen=True)
class Toy:
    """One field of every supported kind."""

    count: int = 1
    scale: float = 1.0
    flag: bool = False
    mode: Literal["fast", "slow"] = "fast"
    dims: tuple[int, ...] = (2, 3)
    pair: tuple[int, float] = (1, 2.0)
    maybe: int | None = None
    inner: Inner = Inner()
    items: tuple[Item, ...] = (Item("a"), Item("b"))


@pytest.fixture
def flagship_cfg():
    return get(FLAGSHIP).config


# --- apply_overrides: parsing and type checks ------------------------------------------------


@pytest.mark.parametrize(
    "key, value, expected",
    [
        ("count", "7", 7),
        ("count", 7, 7),
        ("count", 7.0, 7),
        ("scale", "1e-3", 1e-3),
        ("scale", 2, 2.0),
        ("flag", "true", True),
        ("flag", "yes", True),
        ("flag", "0", False),
        ("flag", True, True),
        ("mode", "slow", "slow"),
        ("dims", "4,5,6", (4, 5, 6)),
        ("dims", "[4, 5]", (4, 5)),
        ("dims", "(7,)", (7,)),
        ("dims", [1, 2], (1, 2)),
        ("pair", "3,0.25", (3, 0.25)),
        ("maybe", "5", 5),
        ("maybe", "none", None),
        ("maybe", None, None),
        ("inner.n", "9", 9),
        ("inner.x", "0.25", 0.25),
        ("inner", {"n": 4, "x": 1.5}, Inner(4, 1.5)),
        ("items.1.rate", "0.5", 0.5),
        ("items.0.name", "z", "z"),
    ],
)
def test_override_parses_and_checks_type(key, value, expected):
    cfg = apply_overrides(Toy(), {key: value})
    got = cfg
    for part in key.split("."):
        got = got[int(part)] if part.isdigit() else getattr(got, part)
    assert got == expected
    assert type(got) is type(expected)


@pytest.mark.parametrize(
    "key, value, fragment",
    [
        ("count", "abc", "expects an integer"),
        ("count", "2.5", "expects an integer"),
        ("count", True, "expects an integer"),
        ("scale", "fast", "expects a number"),
        ("flag", "maybe", "true/false"),
        ("mode", "weird", "must be one of"),
        ("dims", "1,x", "expects an integer"),
        ("pair", "1,2,3", "expects 2 values"),
        ("maybe", "abc", "expects an integer"),
        ("inner", "3", "group"),
        ("inner.n.deeper", "3", "not a group"),
        ("items.5.rate", "1", "out of range"),
        ("items.x.rate", "1", "out of range"),
        ("items.1.rate", "fast", "expects a number"),
    ],
)
def test_override_rejects_wrong_type(key, value, fragment):
    with pytest.raises(ConfigError, match=fragment) as info:
        apply_overrides(Toy(), {key: value})
    assert "\n" not in str(info.value)


def test_override_returns_new_config_and_keeps_the_old():
    old = Toy()
    new = apply_overrides(old, {"inner.n": 8, "items.1.rate": 0.25})
    assert old == Toy()
    assert new.inner.n == 8 and new.items[1] == Item("b", 0.25) and new.items[0] == Item("a")


@pytest.mark.parametrize(
    "value", [{"name": "c", "rate": 0.5}, Item("c", 0.5)], ids=["mapping", "dataclass"]
)
def test_override_whole_tuple_item(value):
    """`items.1` replaced as a whole is checked and rebuilt as its dataclass."""
    cfg = apply_overrides(Toy(), {"items.1": value})
    assert cfg.items[1] == Item("c", 0.5)


@pytest.mark.parametrize("value", [{"name": "c", "nope": 1}, "3", 3])
def test_override_whole_tuple_item_rejects_bad_values(value):
    with pytest.raises(ConfigError):
        apply_overrides(Toy(), {"items.1": value})


def test_unknown_key_lists_valid_keys_and_suggests(flagship_cfg):
    with pytest.raises(ConfigError) as info:
        apply_overrides(flagship_cfg, {"model.widht": 3})
    msg = str(info.value)
    assert "model.widht" in msg
    assert "did you mean width" in msg
    for name in ("width", "depth", "leak", "schedule"):
        assert name in msg
    assert "\n" not in msg


def test_unknown_top_level_key_lists_groups(flagship_cfg):
    with pytest.raises(ConfigError) as info:
        apply_overrides(flagship_cfg, {"trian.lam": 1})
    assert "did you mean train" in str(info.value)
    assert "task" in str(info.value) and "model" in str(info.value)


@pytest.mark.parametrize(
    "key, value",
    [
        ("model.width", "-3"),
        ("model.width", 0),
        ("model.depth", "0"),
        ("model.leak", "-1"),
        ("model.schedule", "weird"),
        ("model.irregular_a", "1.5"),
        ("train.lam", "-1"),
        ("train.phases.0.steps", "-5"),
        ("train.phases.1.lr", "0"),
        ("train.log_every", "0"),
        ("train.dtype", "float16"),
        ("task.dims", "5"),
        ("task.n_train", "1"),
    ],
)
def test_out_of_range_values_raise_config_error(flagship_cfg, key, value):
    with pytest.raises(ConfigError) as info:
        apply_overrides(flagship_cfg, {key: value})
    assert "\n" not in str(info.value)


def test_phase_override_by_index(flagship_cfg):
    cfg = apply_overrides(flagship_cfg, {"train.phases.1.lr": "0.5", "train.phases.0.steps": 7})
    assert cfg.train.phases[1] == dataclasses.replace(flagship_cfg.train.phases[1], lr=0.5)
    assert cfg.train.phases[0].steps == 7
    assert isinstance(cfg.train.phases[1], PhaseConfig)


def test_phases_from_preset_dicts_become_phase_configs(flagship_cfg):
    cfg = apply_overrides(flagship_cfg, {"train.phases": ({"optimizer": "sgd", "steps": 3},)})
    assert cfg.train.phases == (PhaseConfig("sgd", 3),)


@pytest.mark.parametrize(
    "text, expected",
    [("a.b=3", ("a.b", "3")), (" a = x=y ", ("a", "x=y")), ("leaks=4,8", ("leaks", "4,8"))],
)
def test_parse_assignment(text, expected):
    assert parse_assignment(text) == expected


@pytest.mark.parametrize("text", ["novalue", "=3"])
def test_parse_assignment_rejects(text):
    with pytest.raises(ConfigError):
        parse_assignment(text)


# --- serialization and hashing -----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
@pytest.mark.parametrize("preset", ["smoke", "quick", "paper"])
def test_to_dict_from_dict_round_trip_through_json(name, preset):
    exp = get(name)
    cfg = resolve_config(exp, preset)
    data = json.loads(json.dumps(to_dict(cfg)))
    assert from_dict(type(cfg), data) == cfg


def test_round_trip_toy():
    cfg = apply_overrides(Toy(), {"maybe": 4, "items.1.rate": 0.3})
    assert from_dict(Toy, json.loads(json.dumps(to_dict(cfg)))) == cfg


def test_from_dict_rejects_unknown_and_badly_typed_fields():
    with pytest.raises(ConfigError, match="unknown field"):
        from_dict(Inner, {"n": 1, "zz": 2})
    with pytest.raises(ConfigError, match="expects an integer"):
        from_dict(Inner, {"n": "x"})


def test_flatten_indexes_tuples_of_dataclasses():
    flat = flatten(Toy())
    assert flat["inner.n"] == 3
    assert flat["items.1.name"] == "b"
    assert flat["dims"] == (2, 3)


def test_config_hash_is_stable():
    """A fixed value: the hash must not depend on the process, dict order or Python run."""
    assert config_hash(Toy()) == "1b84c2264b3c"
    assert config_hash(Toy()) == config_hash(from_dict(Toy, to_dict(Toy())))
    assert len(config_hash(Toy(), length=20)) == 20


def test_config_hash_of_dicts_ignores_key_order():
    assert config_hash({"a": 1, "b": Inner()}) == config_hash({"b": Inner(), "a": 1})


@pytest.mark.parametrize(
    "key, value",
    [
        ("model.width", 201),
        ("model.leak", 5.5),
        ("model.schedule", "irregular"),
        ("train.lam", 0.003),
        ("train.phases.1.lr", 2e-4),
        ("task.dims", (20, 4, 20)),
        ("task.teacher_seed", None),
        ("seed", 1),
        ("leaks", (2.0,)),
    ],
)
def test_config_hash_is_sensitive_to_every_change(flagship_cfg, key, value):
    assert config_hash(apply_overrides(flagship_cfg, {key: value})) != config_hash(flagship_cfg)

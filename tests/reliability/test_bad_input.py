"""Bad input, fuzzed: random `--set` keys and values, malformed sweep files, garbage run
configs and checkpoints, wrong paths. Every case exits 2 with one line on stderr naming
the problem, never a traceback, and writes nothing.

Cases tried per `make test`: 4 properties x 60 examples + 8 hand-made = 248.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bottlenecklab import cli
from bottlenecklab.config import flatten
from bottlenecklab.experiments import get, resolve_config

EXP = "leaky-resnet/coi-minima"  # trains nothing: a valid case would still be quick
VALID_KEYS = set(flatten(resolve_config(get(EXP), "smoke")))
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def assert_refused(argv: list[str], root: Path, capsys) -> str:
    """`argv` exits 2 with one stderr line and leaves `root` as it was; returns the line."""
    before = _files(root)
    code = cli.main(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, (argv, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), (argv, err)
    assert "Traceback" not in err
    assert _files(root) == before, argv
    return lines[0]


KEY = st.text(string.ascii_letters + string.digits + "._-", min_size=1, max_size=24)
NOT_A_NUMBER = st.text(string.ascii_letters + "!@#[]{}(),;:", min_size=1, max_size=12)


@FUZZ
@given(key=KEY, value=st.text(max_size=24).filter(lambda v: "\x00" not in v))
def test_unknown_set_keys(tmp_path, capsys, key, value):
    assume(key not in VALID_KEYS)
    out = tmp_path / "out"
    argv = ["run", EXP, "--preset", "smoke", "--out", str(out), "--quiet", "--set"]
    assert_refused([*argv, f"{key}={value}"], tmp_path, capsys)


@FUZZ
@given(key=st.sampled_from(["seed", "n", "w", "steps", "lr", "gamma0"]), value=NOT_A_NUMBER)
def test_wrong_values_for_known_keys(tmp_path, capsys, key, value):
    argv = ["run", EXP, "--preset", "smoke", "--out", str(tmp_path / "out"), "--quiet"]
    line = assert_refused([*argv, "--set", f"{key}={value}"], tmp_path, capsys)
    assert key in line


@pytest.mark.parametrize(
    "setting",
    ["batch_size=-3", "min_lr=-1", "steps=-5", "depth4_steps=-1"],
)
def test_out_of_range_training_settings_of_a_grid_experiment(tmp_path, capsys, setting):
    """Settings that only become a `TrainConfig` per grid point are refused up front."""
    out = tmp_path / "out"
    argv = ["run", "saddle/mnist-plateaus", "--preset", "smoke", "--out", str(out), "--quiet"]
    assert_refused([*argv, "--set", setting], tmp_path, capsys)


SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8))
YAML_VALUE = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEY, inner, max_size=3),
    max_leaves=8,
)
TOP = ["experiment", "base", "preset", "set", "grid", "seeds", "options", "surprise"]


@st.composite
def sweep_files(draw) -> bytes:
    kind = draw(st.sampled_from(["bytes", "yaml", "text"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "text":
        return draw(st.text(max_size=200)).encode()
    doc = draw(st.dictionaries(st.sampled_from(TOP), YAML_VALUE, max_size=5))
    return yaml.safe_dump(doc).encode()


@FUZZ
@given(content=sweep_files())
def test_malformed_sweep_files(tmp_path, capsys, content):
    spec = tmp_path / "sweep.yaml"
    spec.write_bytes(content)
    assert_refused(
        ["sweep", str(spec), "--out", str(tmp_path / "out"), "--quiet"], tmp_path, capsys
    )


@FUZZ
@given(config=st.one_of(st.binary(max_size=100), YAML_VALUE.map(lambda v: json.dumps(v).encode())))
def test_garbage_run_configs_on_resume(tmp_path, capsys, config):
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    (run / "config.json").write_bytes(config)
    assert_refused(["run", EXP, "--resume", "--out", str(run), "--quiet"], tmp_path, capsys)


@pytest.mark.parametrize(
    "make, argv",
    [
        (lambda d: (d / "f").write_text("x"), ["run", EXP, "--out", "{d}/f", "--preset", "smoke"]),
        (lambda d: (d / "f").write_text("x"), ["reproduce", "--out", "{d}/f"]),
        (lambda d: (d / "dir").mkdir(), ["sweep", "{d}/dir"]),
        (lambda d: None, ["sweep", "{d}/missing.yaml"]),
        (lambda d: None, ["report", "{d}/missing"]),
        (lambda d: (d / "empty").mkdir(), ["report", "{d}/empty"]),
        (lambda d: None, ["run", EXP, "--resume", "--out", "{d}/missing"]),
        (lambda d: None, ["run", EXP, "--preset", "nope", "--out", "{d}/o"]),
    ],
)
def test_wrong_paths(tmp_path, capsys, make, argv):
    make(tmp_path)
    assert_refused([a.format(d=tmp_path) for a in argv] + ["--quiet"], tmp_path, capsys)

"""The `bottlenecklab` command: `cli.main` called in this process from a temporary folder,
and `python -m bottlenecklab` in a real process for the entry point itself.

Contract (spec README): exit 0 when a run completes (claims may fail), 1 with `--strict`
and a failed claim, 2 with exactly one line on stderr (no traceback) on bad input.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from bottlenecklab import cli

FLAGSHIP = "leaky-resnet/hamiltonian-vs-depth"
SMOKE = ["run", FLAGSHIP, "--preset", "smoke", "--quiet"]
FAST = ["--set", "train.phases.0.steps=4", "--set", "train.phases.1.steps=2"]


@dataclass(frozen=True)
class Done:
    """What a call of the command left: its exit status and its output."""

    returncode: int
    stdout: str
    stderr: str


def bl(cwd: Path, *args: str) -> Done:
    """Run the command in this process (`cli.main(args)`) from `cwd`, capturing its output;
    an exception that escapes `main` fails the test (a real process would print a traceback)."""
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(list(args))
    finally:
        os.chdir(here)
    return Done(code, out.getvalue(), err.getvalue())


def bl_process(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """Run `python -m bottlenecklab` with the project's interpreter, from `cwd`."""
    return subprocess.run(
        [sys.executable, "-m", "bottlenecklab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_bad_input(proc: Done | subprocess.CompletedProcess, *fragments: str) -> str:
    """Exit 2, exactly one line on stderr, no traceback; returns that line."""
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> tuple[Path, Done]:
    cwd = tmp_path_factory.mktemp("cli")
    proc = bl(cwd, *SMOKE, "--out", "run")
    return cwd / "run", proc


@pytest.fixture
def run_copy(smoke_run, tmp_path) -> Path:
    """A private copy of the finished smoke run (for tests that change it)."""
    out, _ = smoke_run
    shutil.copytree(out, tmp_path / "run")
    return tmp_path / "run"


def test_list_in_a_real_process_shows_the_flagship(tmp_path):
    """The entry point itself: `python -m bottlenecklab list` in its own process."""
    proc = bl_process(tmp_path, "list")
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith(FLAGSHIP))
    assert "000 Fig 1a" in line


def test_smoke_run_exits_0_and_writes_the_run(smoke_run):
    out, proc = smoke_run
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    for name in ("config.json", "claims.json", "metrics.csv", "summary.md"):
        assert (out / name).is_file(), name
    assert list((out / "figures").glob("*.png"))
    assert " passed, " in proc.stderr and " not converged, " in proc.stderr
    meta = json.loads((out / "config.json").read_text())
    assert meta["preset"] == "smoke" and meta["experiment"] == FLAGSHIP


def test_strict_exits_1_exactly_when_a_claim_fails(run_copy):
    claims = json.loads((run_copy / "claims.json").read_text())
    expected = 0 if all(c["passed"] for c in claims) else 1  # smoke claims usually fail
    proc = bl(run_copy.parent, *SMOKE, "--out", "run", "--resume", "--strict")
    assert proc.returncode == expected, proc.stderr
    relaxed = bl(run_copy.parent, *SMOKE, "--out", "run", "--resume")
    assert relaxed.returncode == 0, relaxed.stderr


def test_resume_of_a_finished_run_trains_nothing(run_copy):
    ckpts = {p: p.read_bytes() for p in run_copy.glob("points/*/checkpoint.pt")}
    assert ckpts
    proc = bl(run_copy.parent, *SMOKE, "--out", "run", "--resume")
    assert proc.returncode == 0, proc.stderr
    assert {p: p.read_bytes() for p in ckpts} == ckpts


def test_out_pointing_at_an_existing_run_without_resume(smoke_run):
    out, _ = smoke_run
    assert_bad_input(bl(out.parent, *SMOKE, "--out", "run"), "already holds a run", "--resume")


def _unfinish(run_copy: Path) -> Path:
    """Make the first point of a finished run look interrupted; returns its folder."""
    point = sorted((run_copy / "points").iterdir())[0]
    for name in ("result.json", "status", "DONE"):
        (point / name).unlink(missing_ok=True)
    return point


def test_resume_refuses_a_corrupted_checkpoint_and_leaves_it(run_copy):
    """Garbage in a point's checkpoint and no previous one: exit 2, the file untouched."""
    point = _unfinish(run_copy)
    garbage = b"this is not a checkpoint \x00\x01"
    (point / "checkpoint.pt").write_bytes(garbage)
    (point / "checkpoint.pt.prev").unlink(missing_ok=True)
    proc = bl(run_copy.parent, *SMOKE, "--out", "run", "--resume")
    assert_bad_input(proc, "--resume", "corrupted")
    assert (point / "checkpoint.pt").read_bytes() == garbage


def test_resume_uses_the_previous_checkpoint_when_the_last_is_truncated(run_copy):
    """A truncated checkpoint is reported in one line and the kept previous one is used."""
    point = _unfinish(run_copy)
    assert (point / "checkpoint.pt.prev").is_file()
    blob = (point / "checkpoint.pt").read_bytes()
    (point / "checkpoint.pt").write_bytes(blob[: len(blob) // 2])
    proc = bl(run_copy.parent, *SMOKE, "--out", "run", "--resume")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    warned = [line for line in proc.stderr.splitlines() if "corrupted" in line]
    assert warned and "using the previous one" in warned[0]
    assert (point / "status").read_text().strip() == "DONE"


def test_resume_on_a_missing_folder(tmp_path):
    assert_bad_input(bl(tmp_path, *SMOKE, "--out", "nothing-here", "--resume"), "--resume")


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["run", "leaky-resnet/hamiltonian-vs-dept"], ["unknown experiment", FLAGSHIP]),
        ([*SMOKE, "--set", "model.widht=3"], ["unknown key", "did you mean width", "depth"]),
        ([*SMOKE, "--set", "nope=3"], ["unknown key", "valid keys", "model"]),
        ([*SMOKE, "--set", "model.width=abc"], ["model.width", "integer"]),
        ([*SMOKE, "--set", "model.width=-3"], ["model.width"]),
        ([*SMOKE, "--set", "train.lam=-1"], ["train.lam"]),
        ([*SMOKE, "--set", "model.schedule=weird"], ["model.schedule", "one of"]),
        ([*SMOKE, "--set", "model.leak=3"], ["model.leak", "swept", "leaks"]),
        ([*SMOKE, "--set", "novalue"], ["key=value"]),
        (["run", FLAGSHIP, "--preset", "nope"], ["--preset", "smoke"]),
        (["run", FLAGSHIP, "--device", "tpu"], ["--device"]),
        (["frobnicate"], ["invalid choice"]),
        (["run"], ["name"]),
    ],
    ids=[
        "unknown-experiment",
        "unknown-key-close",
        "unknown-key",
        "wrong-type",
        "negative-width",
        "negative-lam",
        "unknown-schedule",
        "swept-key",
        "no-equals",
        "unknown-preset",
        "unknown-device",
        "unknown-command",
        "missing-name",
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, args, fragments):
    assert_bad_input(bl(tmp_path, *args), *fragments)
    assert not (tmp_path / "runs").exists()  # nothing was started


@pytest.mark.parametrize(
    "args, fragments",
    [
        ([*SMOKE, "--set", "model.widht=3"], ["unknown key", "did you mean width", "depth"]),
        (["frobnicate"], ["invalid choice"]),
    ],
    ids=["config-error", "parser-error"],
)
def test_bad_input_in_a_real_process_exits_2_with_one_line(tmp_path, args, fragments):
    """The contract where a traceback would show: stderr of a real `python -m bottlenecklab`."""
    assert_bad_input(bl_process(tmp_path, *args), *fragments)
    assert not (tmp_path / "runs").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU")
def test_device_cuda_without_a_gpu(tmp_path):
    assert_bad_input(bl(tmp_path, *SMOKE, "--device", "cuda", "--out", "run"), "cuda")


def test_large_step_times_leak_warns_in_one_line(tmp_path, monkeypatch, capfd):
    """The two points train in a pool of worker processes: their warnings are read from
    the file descriptors they share with this process (`capfd`), as a terminal shows them."""
    monkeypatch.chdir(tmp_path)
    args = [*SMOKE, *FAST, "--set", "model.depth=2", "--set", "leaks=4,8", "--out", "run"]
    code = cli.main(args)
    err = capfd.readouterr().err
    assert code == 0, err
    warns = [ln for ln in err.splitlines() if ln.startswith("warning:")]
    assert warns and all("layer step times leak" in ln for ln in warns)
    assert all("use more layers" in ln for ln in warns)  # the whole message on its line
    assert "Traceback" not in err


@pytest.mark.parametrize("option", ["--jobs", "--threads"])
@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_jobs_and_threads_must_be_positive(option, value, capsys):
    assert cli.main(["run", "leaky-resnet/hamiltonian-vs-depth", option, value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and option in err[0] and "positive integer" in err[0]


@pytest.mark.parametrize("value", ["0", "-1.5", "lots", "nan"])
def test_job_memory_must_be_positive(value, capsys):
    assert cli.main(["reproduce", "--job-memory", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--job-memory" in err[0] and "> 0" in err[0]


@pytest.mark.parametrize("command", [["run", "leaky-resnet/hamiltonian-vs-depth"], ["reproduce"]])
@pytest.mark.parametrize("value", ["1", "-3", "many"])
def test_ensemble_size_is_zero_or_at_least_two(command, value, capsys):
    assert cli.main([*command, "--ensemble", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--ensemble" in err[0] and ">= 2" in err[0]


def test_reproduce_runs_the_experiments_of_several_globs_once(tmp_path, capsys):
    """`--only A,B` runs what either glob names; a second call trains nothing."""
    only = "leaky-resnet/coi-*,leaky-resnet/hamiltonian-flow"
    args = ["reproduce", "--preset", "smoke", "--only", only, "--out", str(tmp_path), "--quiet"]
    assert cli.main(args) == 0
    runs = sorted(p.parent.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("claims.json"))
    assert runs == ["leaky-resnet/coi-minima", "leaky-resnet/hamiltonian-flow"]
    assert (tmp_path / "report.html").is_file()
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("result.json")}
    assert len(stamps) >= 2
    assert cli.main(args) == 0
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("result.json")} == stamps

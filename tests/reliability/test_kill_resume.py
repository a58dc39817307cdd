"""Kill and resume: a run, a sweep or `reproduce` killed with SIGKILL at a random moment
after its first checkpoint, then run again, ends exactly as an uninterrupted one (bitwise
on the CPU, same thread count): parameters, metrics rows and claims; every run finishes
exactly once and no metrics row is duplicated or missing."""

from __future__ import annotations

import csv
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from bottlenecklab import cli
from bottlenecklab.training import load_checkpoint

FLAGSHIP = "leaky-resnet/hamiltonian-vs-depth"
# The flagship's smoke preset made long enough (~5 s a point) to be killed mid-training.
LONGER = [
    "--set",
    "train.phases.0.steps=1200",
    "--set",
    "train.checkpoint_every=50",
    "--set",
    "train.log_every=25",
]


def _cli(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "bottlenecklab", *args, "--quiet"],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(*args: str, cwd: Path) -> None:
    proc = _cli(*args, cwd=cwd)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err


def _finish_here(*args: str, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command run again after the kill, in this process (`cli.main`), for commands
    whose points train in a spawned pool of worker processes (as the killed run's did)."""
    with monkeypatch.context() as m:
        m.chdir(cwd)
        assert cli.main([*args, "--quiet"]) == 0


def _kill_after_first_checkpoint(proc: subprocess.Popen, points: Path, seed: int) -> None:
    """SIGKILL `proc` at a seeded random moment after a checkpoint appears under `points`."""
    deadline = time.monotonic() + 300
    while not list(points.rglob("checkpoint.pt")):
        assert proc.poll() is None, "the run ended before its first checkpoint"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(random.Random(seed).uniform(0.0, 1.5))
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def _rows(path: Path) -> list[dict[str, str]]:
    """A metrics.csv without its wall-clock column (the one thing allowed to differ)."""
    with open(path, newline="") as f:
        return [{k: v for k, v in r.items() if k != "wall_s"} for r in csv.DictReader(f)]


def _assert_same_run_folder(clean: Path, resumed: Path) -> None:
    for a in sorted(clean.glob("*/checkpoint.pt")):
        b = resumed / a.parent.name / "checkpoint.pt"
        pa, pb = load_checkpoint(a)["model"], load_checkpoint(b)["model"]
        assert pa.keys() == pb.keys() and all(torch.equal(pa[k], pb[k]) for k in pa)
        rows = _rows(b.parent / "metrics.csv")
        assert rows == _rows(a.parent / "metrics.csv")
        steps = [(r.get("model.leak"), r["step"]) for r in rows]
        assert len(steps) == len(set(steps))  # no duplicated row
        assert (b.parent / "status").read_text().strip() == "DONE"


RUN_LONGER = ["run", FLAGSHIP, "--preset", "smoke", "--jobs", "1", *LONGER]


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory) -> Path:
    """The uninterrupted run of `RUN_LONGER` (its own process, as the killed one), shared by
    the kill moments of `test_a_killed_run_resumes_bitwise`."""
    cwd = tmp_path_factory.mktemp("clean")
    _finish(*RUN_LONGER, "--out", "clean", cwd=cwd)
    return cwd / "clean"


@pytest.mark.parametrize("seed", [0, 1])
def test_a_killed_run_resumes_bitwise(tmp_path, clean_run, seed, monkeypatch):
    proc = _cli(*RUN_LONGER, "--out", "killed", cwd=tmp_path)
    _kill_after_first_checkpoint(proc, tmp_path / "killed" / "points", seed)
    # Resumed with 2 jobs (`--jobs` auto on 2 cores): its points in a pool of 2 processes.
    resume = ["run", FLAGSHIP, "--preset", "smoke", "--out", "killed", "--resume"]
    _finish_here(*resume, "--jobs", "2", cwd=tmp_path, monkeypatch=monkeypatch)
    _assert_same_run_folder(clean_run / "points", tmp_path / "killed" / "points")
    for name in ("claims.json",):
        assert json.loads((tmp_path / "killed" / name).read_text()) == json.loads(
            (clean_run / name).read_text()
        )


# Mini-batch SGD (batch 32, a seeded reshuffle per epoch, lr ||theta||^p) whose batch order
# must resume with the run: paper 003's smoke preset made long enough to be killed.
MINIBATCH = "saddle/mnist-plateaus"
MINIBATCH_LONGER = [
    "--set",
    "steps=3000",
    "--set",
    "checkpoint_every=100",
    "--set",
    "log_every=50",
    "--set",
    "svd_every=500",
]


def test_a_killed_minibatch_run_resumes_bitwise(tmp_path):
    """The killed run resumes mid-epoch from its checkpoint (the batch order is in it):
    the same parameters, metrics rows (traced spectra included) and claims."""
    args = ["run", MINIBATCH, "--preset", "smoke", "--jobs", "1", *MINIBATCH_LONGER]
    _finish(*args, "--out", "clean", cwd=tmp_path)
    proc = _cli(*args, "--out", "killed", cwd=tmp_path)
    _kill_after_first_checkpoint(proc, tmp_path / "killed" / "points", seed=4)
    _finish("run", MINIBATCH, "--preset", "smoke", "--out", "killed", "--resume", cwd=tmp_path)
    _assert_same_run_folder(tmp_path / "clean" / "points", tmp_path / "killed" / "points")
    assert json.loads((tmp_path / "killed" / "claims.json").read_text()) == json.loads(
        (tmp_path / "clean" / "claims.json").read_text()
    )


SWEEP = """
experiment: leaky-resnet/hamiltonian-vs-depth
preset: smoke
set:
  train.phases:
    - {optimizer: adam, steps: 450, lr: 0.01}
    - {optimizer: lbfgs, steps: 10, lr: 1.0}
  train.log_every: 25
  train.checkpoint_every: 50
grid:
  model.leak: [1.0, 2.0]
seeds: [0, 1]
options:
  threads: 1
"""


def _attempts(runs: Path) -> dict[str, int]:
    return {
        p.parent.name: json.loads(p.read_text()).get("attempts", 0)
        for p in runs.glob("*/meta.json")
    }


def test_a_killed_sweep_driver_leaves_no_orphan_and_every_run_finishes_once(tmp_path, monkeypatch):
    spec = tmp_path / "sweep.yaml"
    spec.write_text(SWEEP)
    # The clean sweep's driver runs in this process (its runs, as the killed sweep's, in a
    # pool of 2 spawned worker processes with one thread each).
    clean = ["sweep", str(spec), "--out", str(tmp_path / "clean"), "--jobs", "2", "--quiet"]
    assert cli.main(clean) == 0
    proc = _cli("sweep", str(spec), "--out", "killed", "--jobs", "2", cwd=tmp_path)
    runs = tmp_path / "killed" / "runs"
    _kill_after_first_checkpoint(proc, runs, seed=2)
    # The pool's workers died with their driver: nothing writes the run folders any more.
    time.sleep(1.0)
    before = {p: p.stat().st_mtime_ns for p in runs.glob("*/metrics.csv")}
    time.sleep(1.5)
    assert {p: p.stat().st_mtime_ns for p in runs.glob("*/metrics.csv")} == before
    done_before = {p.parent.name for p in runs.glob("*/status") if "DONE" in p.read_text()}
    attempts_before = _attempts(runs)
    again = ["sweep", str(spec), "--out", "killed", "--jobs", "2"]
    _finish_here(*again, cwd=tmp_path, monkeypatch=monkeypatch)
    attempts = _attempts(runs)
    assert len(attempts) == 4
    for rid in done_before:  # finished before the kill: never trained again
        assert attempts[rid] == attempts_before[rid] == 1
    _assert_same_run_folder(tmp_path / "clean" / "runs", runs)


# Four of paper 000's smoke presets, the 6-point `discretization` among them (so the kill
# lands with experiments still to run).
REPRODUCE = "leaky-resnet/coi-*,leaky-resnet/discretization,leaky-resnet/hamiltonian-*"


def test_a_killed_reproduce_finishes_every_point_once(tmp_path, monkeypatch):
    args = ["reproduce", "--preset", "smoke", "--only", REPRODUCE, "--out", "repro"]
    proc = _cli(*args, cwd=tmp_path)
    _kill_after_first_checkpoint(proc, tmp_path / "repro", seed=3)
    unfinished = [p for p in (tmp_path / "repro").rglob("claims.json")]
    _finish_here(*args, "--jobs", "2", cwd=tmp_path, monkeypatch=monkeypatch)
    trained = [p for p in (tmp_path / "repro").rglob("points") if p.is_dir()]
    assert len(unfinished) < 4 and len(list((tmp_path / "repro").rglob("claims.json"))) == 4
    for points in trained:
        assert {p.read_text().strip() for p in points.glob("*/status")} == {"DONE"}
        assert set(_attempts(points).values()) <= {1, 2}
        for metrics in points.glob("*/metrics.csv"):
            steps = [float(r["step"]) for r in _rows(metrics)]
            assert len(steps) == len(set(steps)) and steps == sorted(steps)

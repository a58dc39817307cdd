"""The run store: one folder per run, keyed by the hash of its resolved config.

    ROOT/<run_id>/
        request.json    the resolved config, swept labels, seed and payload of the run
        meta.json       library version, git commit, host, device, seed, attempts, timings
        status          DONE | FAILED | RUNNING (one word)
        metrics.csv     append-only, one row per logged step (never rewritten)
        checkpoint.pt   written by the run function (atomic); resumed from on a retry
        result.json     final scalars and long tables (`RunResult`), once finished
        traceback.txt   the error, once FAILED

A run is *finished* when it is `DONE`, or `FAILED` with a result: its run function ended
with an outcome other than `"done"` (e.g. training diverged: the result is measured on the
last good state, the reason is in `traceback.txt`). Such a failure is deterministic, so it
is not retried; a `FAILED` run without a result (an exception, a dead worker) is.

Every file but `metrics.csv` is written atomically, so a crash leaves a readable folder.
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bottlenecklab.files import atomic_write, write_json

__all__ = [
    "DONE",
    "FAILED",
    "RUNNING",
    "MetricsLog",
    "RunContext",
    "RunRequest",
    "RunResult",
    "RunStore",
]

DONE, FAILED, RUNNING = "DONE", "FAILED", "RUNNING"


@dataclass(frozen=True)
class RunRequest:
    """One run of a sweep, as the executors ship it to a worker (picklable, JSON-ready).

    Args:
        run_id: folder name in the store (hash of `config`, plus a repeat suffix).
        config: the fully resolved config (nested JSON-ready dict).
        labels: the swept values of this run (`{"train.lam": 0.01, "seed": 2}`).
        payload: what the run function needs besides the config (e.g. an experiment name).
    """

    run_id: str
    config: dict[str, Any]
    labels: dict[str, Any] = field(default_factory=dict)
    payload: dict[str, Any] = field(default_factory=dict)

    @property
    def seed(self) -> Any:
        """The run's seed (`config["seed"]`), when it has one."""
        return self.config.get("seed")


@dataclass
class RunResult:
    """What a run function returns.

    Args:
        scalars: final metrics (one `metric.<name>` column each in `summary.parquet`).
        tables: named long-format tables (`{"layers": [row, ...], "spectra": [...]}`), each
            collected into `<name>.parquet` with a `run_id` column.
        info: other per-run facts (`info.<name>` columns): outcome, message, steps...
    """

    scalars: dict[str, float] = field(default_factory=dict)
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


def _drop_torn_line(path: Path) -> None:
    """Cut a last line that a killed process left half-written (no final newline)."""
    with open(path, "rb+") as f:
        data = f.read()
        if data and not data.endswith(b"\n"):
            f.truncate(data.rfind(b"\n") + 1)


class MetricsLog:
    """Append-only `metrics.csv`: rows whose `step` is not past the last logged one are
    skipped, so a run that resumes from an older checkpoint logs no step twice."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.last_step: float = float("-inf")
        self.columns: list[str] | None = None
        if self.path.is_file():
            _drop_torn_line(self.path)
            with open(self.path, newline="") as f:
                reader = csv.DictReader(f)
                self.columns = list(reader.fieldnames or []) or None
                for row in reader:
                    if row.get("step") not in (None, ""):
                        self.last_step = max(self.last_step, float(row["step"]))

    def append(self, row: dict[str, Any]) -> None:
        """Append one row (the first row fixes the columns; unknown keys are dropped)."""
        step = row.get("step")
        if step is not None and float(step) <= self.last_step:
            return
        new = self.columns is None
        if new:
            self.columns = list(row)
        with open(self.path, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.columns, extrasaction="ignore")
            if new:
                w.writeheader()
            w.writerow(row)
            f.flush()
        if step is not None:
            self.last_step = float(step)


@dataclass(frozen=True)
class RunContext:
    """Where and how a run function works.

    Args:
        folder: the run's folder; checkpoint: the file to checkpoint to;
        resume: a checkpoint is there (an earlier attempt was interrupted): continue it;
        device: `cpu` or `cuda` (resolved on the worker); metrics: the append-only log;
        progress: whether to show per-step bars (`None`: on a terminal).
    """

    folder: Path
    checkpoint: Path
    resume: bool
    device: str
    metrics: MetricsLog
    progress: bool | None = False


class RunStore:
    """A folder of run folders (see the module docstring for the layout)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def folder(self, run_id: str) -> Path:
        """The folder of run `run_id` (not created)."""
        return self.root / run_id

    def checkpoint(self, run_id: str) -> Path:
        """The checkpoint file of run `run_id` (the run function writes it)."""
        return self.folder(run_id) / "checkpoint.pt"

    def status(self, run_id: str) -> str | None:
        """`DONE`, `FAILED`, `RUNNING`, or `None` for a run never started."""
        f = self.folder(run_id) / "status"
        return f.read_text().strip() if f.is_file() else None

    def set_status(self, run_id: str, status: str) -> None:
        """Record the run's status (atomic)."""
        self.folder(run_id).mkdir(parents=True, exist_ok=True)
        atomic_write(self.folder(run_id) / "status", status + "\n")

    def write_request(self, request: RunRequest) -> None:
        """Save the run's request (resolved config, labels, payload) once."""
        f = self.folder(request.run_id) / "request.json"
        if not f.is_file():
            write_json(f, asdict(request))

    def request(self, run_id: str) -> RunRequest:
        """The saved request of a run."""
        return RunRequest(**json.loads((self.folder(run_id) / "request.json").read_text()))

    def meta(self, run_id: str) -> dict[str, Any]:
        """The run's metadata (`{}` before its first attempt)."""
        f = self.folder(run_id) / "meta.json"
        return json.loads(f.read_text()) if f.is_file() else {}

    def update_meta(self, run_id: str, **fields: Any) -> dict[str, Any]:
        """Merge `fields` into `meta.json` (atomic) and return the new metadata."""
        meta = {**self.meta(run_id), **fields}
        write_json(self.folder(run_id) / "meta.json", meta)
        return meta

    def write_result(self, run_id: str, result: RunResult) -> str:
        """Save the run's result, then mark it (in that order): `DONE`, or `FAILED` with
        `"<outcome>: <message>"` as its error when `result.info["outcome"]` is not
        `"done"` (e.g. `"diverged"`). Returns the status."""
        write_json(self.folder(run_id) / "result.json", asdict(result))
        outcome = str(result.info.get("outcome", "done"))
        if outcome == "done":
            self.set_status(run_id, DONE)
            return DONE
        reason = f"{outcome}: {result.info.get('message', '')}".rstrip(": ")
        atomic_write(self.folder(run_id) / "traceback.txt", reason + "\n")
        self.set_status(run_id, FAILED)
        return FAILED

    def finished(self, run_id: str) -> bool:
        """`DONE`, or `FAILED` with a result (a deterministic outcome, never retried)."""
        status = self.status(run_id)
        return status == DONE or (
            status == FAILED and (self.folder(run_id) / "result.json").is_file()
        )

    def result(self, run_id: str) -> RunResult | None:
        """The result of a finished run, else `None`."""
        f = self.folder(run_id) / "result.json"
        if not self.finished(run_id) or not f.is_file():
            return None
        return RunResult(**json.loads(f.read_text()))

    def write_failure(self, run_id: str, text: str) -> None:
        """Save the traceback, then mark the run `FAILED` (no result: it will be retried)."""
        self.folder(run_id).mkdir(parents=True, exist_ok=True)
        (self.folder(run_id) / "result.json").unlink(missing_ok=True)
        atomic_write(self.folder(run_id) / "traceback.txt", text)
        self.set_status(run_id, FAILED)

    def error(self, run_id: str) -> str:
        """The last line of a failed run's traceback (`""` if none)."""
        f = self.folder(run_id) / "traceback.txt"
        lines = f.read_text().strip().splitlines() if f.is_file() else []
        return lines[-1] if lines else ""

    def run_ids(self) -> list[str]:
        """Every run folder that holds a request, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if (p / "request.json").is_file())

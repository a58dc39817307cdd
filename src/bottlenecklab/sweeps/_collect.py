"""`collect`: the run store as tidy tables (pyarrow / parquet).

    summary.parquet   one row per run: run_id, status, error, config.<key> (every leaf of
                      the resolved config), metric.<name> (final scalars), info.<name>,
                      meta.<name> (attempts, device, version, git commit, timings)
    <table>.parquet   one long table per name a run function returned (e.g. `layers`,
                      `spectra`), each row tagged with its run_id
    metrics.parquet   every run's `metrics.csv`, tagged with run_id

Plots read these tables only (`read_rows`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bottlenecklab.files import atomic_writer
from bottlenecklab.sweeps._store import RunStore

__all__ = ["collect", "flatten_dict", "read_rows", "to_table"]

_META_KEYS = (
    "attempts",
    "device",
    "threads",
    "version",
    "git_commit",
    "host",
    "created",
    "started",
    "finished",
    "last_attempt_s",
    "last_attempt_cpu_s",
    "peak_rss_mb",
    "worker_exit",
)


def flatten_dict(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """`{"a": {"b": 1}, "c": [{"d": 2}]}` -> `{"a.b": 1, "c.0.d": 2}` (lists of scalars kept)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten_dict(value, name + "."))
        elif isinstance(value, list | tuple) and value and isinstance(value[0], Mapping):
            for i, item in enumerate(value):
                out.update(flatten_dict(item, f"{name}.{i}."))
        else:
            out[name] = list(value) if isinstance(value, tuple) else value
    return out


def to_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """A table with the union of the rows' keys (missing cells null); a column whose values
    do not share a type is stored as JSON text."""
    columns = list(dict.fromkeys(k for r in rows for k in r))
    arrays = {}
    for c in columns:
        values = [r.get(c) for r in rows]
        try:
            arrays[c] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arrays[c] = pa.array([None if v is None else json.dumps(v) for v in values])
    return pa.table(arrays) if arrays else pa.table({"run_id": pa.array([], pa.string())})


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a parquet table as dicts (`[]` when the file is absent)."""
    path = Path(path)
    return pq.read_table(path).to_pylist() if path.is_file() else []


def _number(text: str) -> Any:
    try:
        value = float(text)
    except ValueError:
        return text if text != "" else None
    return int(value) if value.is_integer() and "." not in text and "e" not in text else value


def collect(store: RunStore, out: Path, run_ids: Sequence[str] | None = None) -> dict[str, Path]:
    """Write `summary.parquet`, one `<table>.parquet` per long table and `metrics.parquet`
    into `out`, for `run_ids` (default: every run in the store), in that order."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ids = list(run_ids) if run_ids is not None else store.run_ids()
    summary: list[dict[str, Any]] = []
    tables: dict[str, list[dict[str, Any]]] = {}
    metrics: list[dict[str, Any]] = []
    for rid in ids:
        req = store.request(rid)
        status = store.status(rid) or "QUEUED"
        row: dict[str, Any] = {"run_id": rid, "status": status, "error": None}
        if status == "FAILED":
            row["error"] = store.error(rid)
        row.update({f"config.{k}": v for k, v in flatten_dict(req.config).items()})
        result = store.result(rid)
        if result is not None:
            row.update({f"metric.{k}": v for k, v in result.scalars.items()})
            row.update({f"info.{k}": v for k, v in result.info.items()})
            for name, rows in result.tables.items():
                tables.setdefault(name, []).extend({"run_id": rid, **r} for r in rows)
        meta = store.meta(rid)
        row.update({f"meta.{k}": meta.get(k) for k in _META_KEYS})
        summary.append(row)
        mfile = store.folder(rid) / "metrics.csv"
        if mfile.is_file():
            with open(mfile, newline="") as f:
                metrics.extend(
                    {"run_id": rid, **{k: _number(v) for k, v in r.items()}}
                    for r in csv.DictReader(f)
                )
    written = {"summary": out / "summary.parquet"}
    _write_parquet(to_table(summary), written["summary"])
    for name, rows in {**tables, "metrics": metrics}.items():
        written[name] = out / f"{name}.parquet"
        _write_parquet(to_table(rows), written[name])
    return written


def _write_parquet(table: pa.Table, path: Path) -> None:
    """One parquet file, atomically (`files.atomic_writer`)."""
    with atomic_writer(path, "wb") as f:
        pq.write_table(table, f)

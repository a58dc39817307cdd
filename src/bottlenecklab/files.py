"""How the library writes files: atomically, and one writer per run folder.

Every file a run leaves (checkpoints, configs, claims, metrics, parquet tables, figures,
reports) goes through `atomic_writer`: the bytes go to a temporary file in the same folder,
which is flushed and fsynced, then renamed over the target (and the folder fsynced), so a
reader sees the old file or the new one, never half of one. On any error the temporary file
is removed, the old file is left as it was, and a `WriteError` names the file and the cause
in one line (disk full, read-only folder, ...).

`FolderLock` keeps a second process out of a folder a run or sweep is writing: a `.lock`
file holds the owner's pid and host; a lock whose process is gone (same host) is taken over.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import os
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "FolderLock",
    "FolderLocked",
    "WriteError",
    "atomic_write",
    "atomic_writer",
    "replace_between",
    "write_json",
]


class WriteError(OSError):
    """A file could not be written; the old file (if any) is intact."""

    def __str__(self) -> str:
        return str(self.args[0])


class FolderLocked(RuntimeError):
    """Another live process is writing this folder."""


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a folder be fsynced
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once, at import (os.umask sets it while reading it)


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w", **open_kw: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside `path` for writing; on success it replaces `path`.

    Args:
        path: the file to (re)write; its folder is created if missing.
        mode: `"w"` (text) or `"wb"` (bytes).
        open_kw: passed to `open` (e.g. `newline=""` for csv).
    """
    path = Path(path)
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_writer mode must be 'w' or 'wb', got {mode!r}")
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp's 0600 -> what open() would give
        with os.fdopen(fd, mode, **open_kw) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
        _fsync_dir(path.parent)
    except OSError as e:
        reason = e.strerror or type(e).__name__
        if e.errno == errno.ENOSPC:
            reason = "no space left on device"
        raise WriteError(f"cannot write {path}: {reason}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def atomic_write(path: str | Path, data: str | bytes) -> None:
    """Write `data` (text or bytes) to `path` atomically (`atomic_writer`)."""
    with atomic_writer(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def write_json(path: str | Path, obj: Any, default: Any = str) -> None:
    """Write `obj` as indented JSON atomically; `default` as in `json.dump`."""
    atomic_write(path, json.dumps(obj, indent=2, default=default) + "\n")


def replace_between(text: str, begin: str, end: str, section: str) -> str:
    """`text` with what lies between the markers `begin` and `end` replaced by `section`
    (the markers kept, each on its own line); `ValueError` when a marker is missing."""
    if begin not in text or end not in text:
        raise ValueError(f"no {begin} ... {end} markers")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{section}\n{end}{tail}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


class FolderLock:
    """One writer per folder: `with FolderLock(folder): ...` (re-entrant in one process).

    The lock file `folder/.lock` holds `{"pid", "host", "since"}`. A second process gets
    `FolderLocked` with the owner in one line; a lock left by a dead process on this host is
    taken over. A lock held by another host is never broken (its process cannot be checked).
    """

    _held: dict[Path, int] = {}  # folders this process holds, with nesting depth

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).resolve()
        self.path = self.folder / ".lock"

    def _owner(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return None

    def _create(self) -> bool:
        me = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": _dt.datetime.now().isoformat(timespec="seconds"),
        }
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as f:
            json.dump(me, f)
        return True

    def acquire(self) -> None:
        """Take the lock, or raise `FolderLocked` naming its owner."""
        if self.folder in self._held:
            self._held[self.folder] += 1
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for _ in range(5):  # a stale lock is removed, then created again (race-safe)
            if self._create():
                self._held[self.folder] = 1
                return
            owner = self._owner()
            if owner is None:  # its owner may be writing it this instant: look once more
                time.sleep(0.05)
                owner = self._owner()
            if owner is None or (
                owner.get("host") == socket.gethostname() and not _alive(int(owner.get("pid", -1)))
            ):
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()  # garbage, or left by a dead process: take it over
                continue
            here = owner.get("host") == socket.gethostname()
            raise FolderLocked(
                f"{self.folder} is in use by pid {owner.get('pid')} on {owner.get('host')} "
                f"(since {owner.get('since')}); wait for it to finish"
                + ("" if here else f", or remove {self.path} if that process is gone")
            )
        raise FolderLocked(f"could not lock {self.folder}: its lock file keeps changing")

    def release(self) -> None:
        """Give the lock back (the file is removed when the outermost holder leaves)."""
        depth = self._held.get(self.folder, 0)
        if depth > 1:
            self._held[self.folder] = depth - 1
            return
        self._held.pop(self.folder, None)
        owner = self._owner()
        if owner and owner.get("pid") == os.getpid():
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def __enter__(self) -> FolderLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

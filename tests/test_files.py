"""Atomic writes and one writer per folder (`bottlenecklab.files`)."""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bottlenecklab.files import FolderLock, FolderLocked, WriteError, atomic_write, write_json


def _no_temporaries(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "sub" / "claims.json"
    write_json(path, {"a": 1})
    write_json(path, {"a": 2})
    assert json.loads(path.read_text()) == {"a": 2}
    atomic_write(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert _no_temporaries(path.parent) and _no_temporaries(tmp_path)


class Boom(Exception):
    pass


def test_an_error_while_writing_leaves_the_old_file(tmp_path):
    path = tmp_path / "config.json"
    write_json(path, {"old": True})

    class Unserializable:
        def __repr__(self):
            raise Boom("cannot be written")

    with pytest.raises(Boom):
        write_json(path, {"x": Unserializable()}, default=repr)
    assert json.loads(path.read_text()) == {"old": True} and _no_temporaries(tmp_path)


@pytest.mark.parametrize(
    "where, code, words",
    [
        ("fsync", errno.ENOSPC, "no space left on device"),  # the disk fills while flushing
        ("mkstemp", errno.EROFS, "Read-only file system"),  # a read-only folder
        ("mkstemp", errno.EACCES, "Permission denied"),  # a folder we may not write
    ],
)
def test_a_failing_write_keeps_the_old_file_and_says_why_in_one_line(
    tmp_path, monkeypatch, where, code, words
):
    path = tmp_path / "claims.json"
    write_json(path, ["old"])

    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os if where == "fsync" else tempfile, where, fail)
    with pytest.raises(WriteError) as info:
        write_json(path, ["new"])
    monkeypatch.undo()
    message = str(info.value)
    assert str(path) in message and words in message and "\n" not in message
    assert json.loads(path.read_text()) == ["old"] and _no_temporaries(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_a_really_read_only_folder(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(WriteError, match="Permission denied"):
            atomic_write(folder / "x.txt", "x")
    finally:
        folder.chmod(0o755)


HOLD = """
import sys, time
from bottlenecklab.files import FolderLock
with FolderLock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(60)
"""


@pytest.fixture
def held(tmp_path):
    """A live process holding the lock of `tmp_path / "run"`."""
    folder = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "locked"
    yield folder, proc
    proc.kill()
    proc.wait()


def test_a_second_process_is_refused_in_one_line(held):
    folder, proc = held
    with pytest.raises(FolderLocked) as info:
        FolderLock(folder).acquire()
    assert f"pid {proc.pid}" in str(info.value) and "\n" not in str(info.value)


def test_the_cli_refuses_a_folder_in_use_with_exit_2(held, capsys):
    """The command (`cli.main`, in this process) on a folder the other process holds."""
    from bottlenecklab.cli import main

    folder, proc = held
    args = ["run", "leaky-resnet/coi-minima", "--preset", "smoke", "--out", str(folder)]
    assert main([*args, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert "in use by pid" in err and not (folder / "config.json").exists()


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / ".lock").write_text(
        json.dumps({"pid": dead.pid, "host": socket.gethostname(), "since": "earlier"})
    )
    with FolderLock(folder):
        assert json.loads((folder / ".lock").read_text())["pid"] == os.getpid()
    assert not (folder / ".lock").exists()


def test_garbage_in_the_lock_file_is_taken_over(tmp_path):
    (tmp_path / ".lock").write_text("not json")
    with FolderLock(tmp_path):
        assert json.loads((tmp_path / ".lock").read_text())["pid"] == os.getpid()


def test_a_lock_held_on_another_host_is_never_broken(tmp_path):
    (tmp_path / ".lock").write_text(json.dumps({"pid": 1, "host": "elsewhere", "since": "x"}))
    with pytest.raises(FolderLocked, match="remove .*lock if that process is gone"):
        FolderLock(tmp_path).acquire()


def test_the_lock_is_reentrant_in_one_process(tmp_path):
    with FolderLock(tmp_path), FolderLock(tmp_path):
        assert (tmp_path / ".lock").exists()
    assert not (tmp_path / ".lock").exists()

"""IDX reader and MNIST loader on tiny files written by the tests."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from bottlenecklab.tasks import MNIST_FILES, IDXError, mnist_arrays, read_idx, scalar_standardize

CODES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def _idx_bytes(a: np.ndarray, code: int) -> bytes:
    head = bytes([0, 0, code, a.ndim]) + b"".join(struct.pack(">I", d) for d in a.shape)
    return head + a.astype(CODES[code]).tobytes()


def _write(path, data: bytes, gz: bool = False):
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize("code", sorted(CODES))
@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 5)])
def test_roundtrip(tmp_path, code, gz, shape):
    rng = np.random.default_rng(code)
    a = rng.integers(-100 if code != 0x08 else 0, 100, size=shape).astype(CODES[code])
    if code in (0x0D, 0x0E):
        a = rng.standard_normal(shape).astype(CODES[code])
    out = read_idx(_write(tmp_path / "f.idx", _idx_bytes(a, code), gz))
    assert out.shape == shape
    assert out.dtype == np.dtype(CODES[code]).newbyteorder("=")
    np.testing.assert_array_equal(out, a)


def test_big_endian(tmp_path):
    a = np.array([1, 256, -2], dtype=">i2")
    raw = bytes([0, 0, 0x0B, 1, 0, 0, 0, 3]) + b"\x00\x01\x01\x00\xff\xfe"
    np.testing.assert_array_equal(read_idx(_write(tmp_path / "f", raw)), a)


@pytest.mark.parametrize(
    "raw, match",
    [
        (b"", "truncated IDX header"),
        (b"\x00\x00", "truncated IDX header"),
        (b"\x00\x00\x08\x02\x00\x00\x00\x02", "truncated IDX header"),
        (b"\x00\x00\x08\x01\x00\x00\x00\x05\x01\x02", "truncated IDX data"),
        (b"\x00\x00\x08\x01\x00\x00\x00\x01\x01\x02", "trailing bytes"),
        (b"PK\x03\x04garbage", "not an IDX file"),
        (b"\x00\x00\x07\x01\x00\x00\x00\x01\x01", "unknown IDX type code 0x07"),
    ],
)
def test_malformed(tmp_path, raw, match):
    with pytest.raises(IDXError, match=match) as err:
        read_idx(_write(tmp_path / "bad", raw))
    assert isinstance(err.value, ValueError) and "\n" not in str(err.value)


def test_truncated_gzip(tmp_path):
    data = gzip.compress(_idx_bytes(np.arange(100, dtype=np.uint8), 0x08))
    with pytest.raises(IDXError, match="gzip"):
        read_idx(_write(tmp_path / "t.gz", data[: len(data) // 2]))


def test_mnist_missing_names_files_and_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte") as err:
        mnist_arrays(tmp_path)
    assert str(tmp_path) in str(err.value) and "BOTTLENECKLAB_DATA" in str(err.value)


def test_mnist_from_env_folder(tmp_path, monkeypatch):
    sub = tmp_path / "mnist"
    sub.mkdir()
    rng = np.random.default_rng(0)
    for key, stem in MNIST_FILES.items():
        n = 6 if "train" in key else 4
        a = (
            rng.integers(0, 256, (n, 28, 28)) if key.startswith("x") else rng.integers(0, 10, n)
        ).astype(np.uint8)
        _write(sub / (stem + ".gz"), _idx_bytes(a, 0x08), gz=True)
    monkeypatch.setenv("BOTTLENECKLAB_DATA", str(tmp_path))
    d = mnist_arrays()
    assert d["x_train"].shape == (6, 784) and d["y_test"].shape == (4,)
    assert d["x_train"].dtype == np.float64 and d["y_train"].dtype == np.int64


def test_scalar_standardize():
    x = np.array([[0.0, 255.0], [255.0, 255.0]])
    tr, te = scalar_standardize(x, np.array([[0.0, 0.0]]))
    assert abs(tr.mean()) < 1e-12 and abs(tr.std() - 1) < 1e-12
    np.testing.assert_allclose(te, (0 - x.mean()) / x.std())

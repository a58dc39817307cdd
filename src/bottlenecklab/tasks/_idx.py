"""IDX files (the MNIST format), the MNIST loader from a local folder (no download), and
`ImageTask`: ten-class images (MNIST, or the 8x8 digits that ship with scikit-learn)."""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from bottlenecklab.tasks._dataset import Dataset
from bottlenecklab.tasks._digits import digits_arrays

__all__ = [
    "MNIST_FILES",
    "IDXError",
    "ImageTask",
    "mnist_arrays",
    "read_idx",
    "scalar_standardize",
]

# IDX type code -> big-endian numpy dtype
_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

MNIST_FILES = {
    "x_train": "train-images-idx3-ubyte",
    "y_train": "train-labels-idx1-ubyte",
    "x_test": "t10k-images-idx3-ubyte",
    "y_test": "t10k-labels-idx1-ubyte",
}


class IDXError(ValueError):
    """A truncated or malformed IDX file (one-line message naming the file)."""


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (plain or gzip-compressed) into an array of its own type and shape.

    Header: two zero bytes, the type code (`0x08` ubyte, `0x09` byte, `0x0B` int16, `0x0C`
    int32, `0x0D` float32, `0x0E` float64), the number of dimensions, then each dimension
    as a big-endian uint32; the data follow, big-endian, row-major.

    Raises:
        IDXError: truncated or malformed file (bad magic, unknown type, wrong length).
        FileNotFoundError: no such file.
    """
    path = Path(path)
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise IDXError(f"{path}: corrupt gzip stream ({e})") from None
    if len(raw) < 4:
        raise IDXError(f"{path}: truncated IDX header ({len(raw)} bytes)")
    if raw[0] != 0 or raw[1] != 0:
        raise IDXError(f"{path}: not an IDX file (magic {raw[:4].hex()}, expected 0000TTNN)")
    code, ndim = raw[2], raw[3]
    if code not in _TYPES:
        raise IDXError(f"{path}: unknown IDX type code 0x{code:02X}")
    head = 4 + 4 * ndim
    if len(raw) < head:
        raise IDXError(f"{path}: truncated IDX header ({len(raw)} of {head} bytes)")
    shape = tuple(int(d) for d in np.frombuffer(raw, ">u4", count=ndim, offset=4))
    dtype = np.dtype(_TYPES[code])
    need = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    have = len(raw) - head
    if have != need:
        what = "truncated" if have < need else "trailing bytes in"
        raise IDXError(
            f"{path}: {what} IDX data ({have} bytes for shape {shape} of {dtype.str}, "
            f"expected {need})"
        )
    return np.frombuffer(raw, dtype, offset=head).reshape(shape).astype(dtype.newbyteorder("="))


def _find(folder: Path, stem: str) -> Path | None:
    for name in (
        stem,
        stem + ".gz",
        stem.replace("-idx", ".idx"),
        stem.replace("-idx", ".idx") + ".gz",
    ):
        if (folder / name).is_file():
            return folder / name
    return None


def mnist_arrays(root: str | os.PathLike | None = None) -> dict[str, np.ndarray]:
    """MNIST from the IDX files in a local folder (no download).

    The folder is `root`, else `$BOTTLENECKLAB_DATA`, else `./data`; it may hold the files
    directly or in a `mnist/` sub-folder, plain or `.gz`: `train-images-idx3-ubyte`,
    `train-labels-idx1-ubyte`, `t10k-images-idx3-ubyte`, `t10k-labels-idx1-ubyte`.
    Returns `{"x_train": [60000, 784] float64 (0..255), "y_train": [60000] int64, "x_test":
    [10000, 784], "y_test": [10000]}`.

    Raises:
        FileNotFoundError: a file is missing (the message names the folder and files).
    """
    base = Path(root if root is not None else os.environ.get("BOTTLENECKLAB_DATA", "data"))
    folders = [base, base / "mnist"]
    out: dict[str, np.ndarray] = {}
    for key, stem in MNIST_FILES.items():
        found = next((p for f in folders if (p := _find(f, stem)) is not None), None)
        if found is None:
            names = ", ".join(f"{s}[.gz]" for s in MNIST_FILES.values())
            raise FileNotFoundError(
                f"MNIST file {stem}[.gz] not found in {base.resolve()} (or its mnist/ "
                f"sub-folder); put {names} there, or set data.root / BOTTLENECKLAB_DATA"
            )
        a = read_idx(found)
        out[key] = (
            a.reshape(a.shape[0], -1).astype(np.float64)
            if key.startswith("x")
            else a.astype(np.int64)
        )
    return out


def scalar_standardize(x_train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """`(x - mu) / sigma` with one scalar `mu`, `sigma` over every entry of `x_train`
    (dataset-wide; spec `saddles.md`: the inputs of paper 003, Fig 1). Applies the same
    map to `others`. Returns `[x_train, *others]` standardized (float64)."""
    mu, sigma = float(x_train.mean()), float(x_train.std())
    sigma = sigma if sigma > 0 else 1.0
    return [(np.asarray(x, dtype=np.float64) - mu) / sigma for x in (x_train, *others)]


@dataclass(frozen=True)
class ImageTask:
    """Ten-class images, pixels standardized with one scalar mean and deviation over the
    training set (`scalar_standardize`), labels one-hot (paper 003, Fig 1).

    Args:
        source: `mnist` (the IDX files in `root`, else `$BOTTLENECKLAB_DATA`, else `./data`:
            `mnist_arrays`) or `digits` (scikit-learn's 1797 8x8 digits, all of them for
            training, the first as a one-image test split).
        root: the MNIST folder (`None`: the environment or `./data`).
        n_train: the first `n_train` training images (`0`: all).
    """

    source: Literal["digits", "mnist"] = "mnist"
    root: str | None = None
    n_train: int = 0

    def build(self, seed: int = 0) -> Dataset:
        """`x` `[n, d]` (`d = 784` or `64`), `y` one-hot `[n, 10]`; `seed` is unused (the
        images are what they are)."""
        if self.source == "digits":
            x, y = digits_arrays()
            x_tr, y_tr, x_te, y_te = x, y, x[:1], y[:1]
        else:
            d = mnist_arrays(self.root)
            x_tr, y_tr, x_te, y_te = d["x_train"], d["y_train"], d["x_test"], d["y_test"]
        if self.n_train:
            x_tr, y_tr = x_tr[: self.n_train], y_tr[: self.n_train]
        x_tr, x_te = scalar_standardize(x_tr, x_te)
        eye = np.eye(10)
        return Dataset(x_tr, eye[y_tr], x_te, eye[y_te], info={"source": self.source})

"""A read-only sequence built on its first read.

The findings and awaiting registries (`_findings.FINDINGS`, `_awaiting.AWAITING`) name
their experiments and claims by the declared objects (`EXPERIMENT`, a `ClaimSpec`), so
building them imports those experiment modules; importing `bottlenecklab.experiments`
imports none (`tests/test_imports.py`). Each registry is a `Lazy` of the function that
imports the modules and returns the entries, called once, when the registry is first read:

    AWAITING: Sequence[Awaiting] = Lazy(_entries)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar, overload

__all__ = ["Lazy"]

T = TypeVar("T")


class Lazy(Sequence[T]):
    """The entries `build()` returns, as a tuple built once, on the first read (an index,
    a slice, iterating, `len`, `in`). Another thread reading meanwhile waits for it; when
    `build` raises, the next read calls it again.

    Args:
        build: `() -> Iterable[T]`, the entries in order.
    """

    def __init__(self, build: Callable[[], Iterable[T]]) -> None:
        self._build = build
        self._items: tuple[T, ...] | None = None
        self._lock = threading.Lock()

    def _entries(self) -> tuple[T, ...]:
        if self._items is None:
            with self._lock:
                if self._items is None:
                    self._items = tuple(self._build())
        return self._items

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        return self._entries()[index]

    def __len__(self) -> int:
        return len(self._entries())

    def __iter__(self) -> Iterator[T]:
        return iter(self._entries())

    def __repr__(self) -> str:
        if self._items is None:
            name = f"{self._build.__module__}.{self._build.__qualname__}"
            return f"<{name}: not yet built>"
        return repr(self._items)

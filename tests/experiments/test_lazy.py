"""`_lazy.Lazy`: a registry's entries are built once, on the first read, not when it is
declared (the findings and awaiting registries import experiments to build theirs)."""

from __future__ import annotations

import pytest

from bottlenecklab.experiments._lazy import Lazy


def test_entries_are_built_once_on_the_first_read() -> None:
    calls: list[int] = []

    def build() -> list[str]:
        calls.append(1)
        return ["a", "b", "c"]

    entries = Lazy(build)
    assert calls == [] and "not yet built" in repr(entries)
    assert entries[0] == "a" and calls == [1]
    assert list(entries) == ["a", "b", "c"] and len(entries) == 3 and "b" in entries
    assert entries[1:] == ("b", "c") and entries.index("c") == 2
    assert calls == [1] and repr(entries) == "('a', 'b', 'c')"


def test_a_failed_build_is_tried_again_on_the_next_read() -> None:
    tries: list[int] = []

    def build() -> tuple[int, ...]:
        tries.append(1)
        if len(tries) == 1:
            raise ImportError("first try")
        return (7,)

    entries = Lazy(build)
    with pytest.raises(ImportError):
        len(entries)
    assert list(entries) == [7] and len(tries) == 2

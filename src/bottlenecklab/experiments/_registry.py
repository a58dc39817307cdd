"""The registry of experiments: a read-only mapping from name to `Experiment`, filled by
discovery (`_discover`) the first time it is read, once.

Importing `bottlenecklab.experiments` imports no experiment module: `get(name)`,
`EXPERIMENTS[name]`, iterating, `len` or `in` discover them all first."""

from __future__ import annotations

import difflib
import threading
from collections.abc import Iterator, Mapping

from bottlenecklab.experiments._discover import discover
from bottlenecklab.experiments._spec import Experiment

__all__ = ["EXPERIMENTS", "Registry", "UnknownExperiment", "get", "register"]


class UnknownExperiment(KeyError):
    """No experiment of that name (the message suggests close names)."""

    def __str__(self) -> str:
        return str(self.args[0])


class Registry(Mapping[str, Experiment]):
    """Name -> `Experiment`: every experiment module under the area packages (found on the
    first read) and those added with `register`. Names are unique."""

    def __init__(self) -> None:
        self._items: dict[str, Experiment] = {}
        self._ready = False  # discovery done
        self._running = False  # discovery under way (in the thread holding the lock)
        self._lock = threading.RLock()

    def _ensure(self) -> dict[str, Experiment]:
        """The experiments, discovered first if this is the first read. Another thread
        waits for the discovery; the discovering thread itself (an experiment module
        reading the registry while it is imported) sees what is found so far."""
        if not self._ready:
            with self._lock:
                if not self._ready and not self._running:
                    self._running = True
                    try:
                        for found in discover():
                            self._add(found.experiment)
                        self._ready = True
                    finally:  # on an error, the next read tries again
                        self._running = False
        return self._items

    def _add(self, exp: Experiment) -> None:
        old = self._items.get(exp.name)
        if old is not None and old is not exp:
            raise ValueError(f"experiment {exp.name!r} registered twice")
        self._items[exp.name] = exp

    def register(self, exp: Experiment) -> Experiment:
        """Add `exp` (after discovery, so that a name clash with a discovered experiment
        is refused here).

        Raises:
            ValueError: another experiment of that name is registered.
        """
        with self._lock:
            self._ensure()
            self._add(exp)
        return exp

    def unregister(self, name: str) -> Experiment | None:
        """Remove the experiment `name` (one added with `register`, e.g. in a notebook or a
        test) and return it; None when there is none."""
        with self._lock:
            return self._ensure().pop(name, None)

    def __getitem__(self, name: str) -> Experiment:
        return self._ensure()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ensure())

    def __len__(self) -> int:
        return len(self._ensure())

    def __contains__(self, name: object) -> bool:
        return name in self._ensure()

    def __repr__(self) -> str:
        state = f"{len(self._items)} experiments" if self._ready else "not yet discovered"
        return f"<experiment registry: {state}>"


EXPERIMENTS = Registry()


def register(exp: Experiment) -> Experiment:
    """Add `exp` to the registry (names are unique; `ValueError` otherwise)."""
    return EXPERIMENTS.register(exp)


def get(name: str) -> Experiment:
    """The experiment called `name`, or `UnknownExperiment` naming the closest ones."""
    if name in EXPERIMENTS:
        return EXPERIMENTS[name]
    close = difflib.get_close_matches(name, list(EXPERIMENTS), n=3, cutoff=0.4)
    if not close:
        close = [n for n in EXPERIMENTS if name.split("/")[-1] in n][:3]
    hint = f"; did you mean {', '.join(close)}?" if close else "; see `bottlenecklab list`"
    raise UnknownExperiment(f"unknown experiment {name!r}{hint}")

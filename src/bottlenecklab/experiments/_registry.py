"""The registry of experiments: a plain dict from name to `Experiment`."""

from __future__ import annotations

import difflib

from bottlenecklab.experiments._spec import Experiment

__all__ = ["EXPERIMENTS", "UnknownExperiment", "get", "register"]

EXPERIMENTS: dict[str, Experiment] = {}


class UnknownExperiment(KeyError):
    """No experiment of that name (the message suggests close names)."""

    def __str__(self) -> str:
        return str(self.args[0])


def register(exp: Experiment) -> Experiment:
    """Add `exp` to the registry (names are unique)."""
    if exp.name in EXPERIMENTS:
        raise ValueError(f"experiment {exp.name!r} registered twice")
    EXPERIMENTS[exp.name] = exp
    return exp


def get(name: str) -> Experiment:
    """The experiment called `name`, or `UnknownExperiment` naming the closest ones."""
    if name in EXPERIMENTS:
        return EXPERIMENTS[name]
    close = difflib.get_close_matches(name, list(EXPERIMENTS), n=3, cutoff=0.4)
    if not close:
        close = [n for n in EXPERIMENTS if name.split("/")[-1] in n][:3]
    hint = f"; did you mean {', '.join(close)}?" if close else "; see `bottlenecklab list`"
    raise UnknownExperiment(f"unknown experiment {name!r}{hint}")

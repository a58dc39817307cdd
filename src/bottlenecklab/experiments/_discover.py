"""Areas and experiments are discovered, not listed: every sub-package of
`bottlenecklab.experiments` is an area (its folder name is the experiments' prefix, with
`_` for `-`), and every public module in it that defines `EXPERIMENT` is one experiment.
Adding an experiment is adding a module (see `docs/add-an-experiment.md`)."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from types import ModuleType

from bottlenecklab.experiments._spec import Experiment

__all__ = ["Found", "discover"]

PACKAGE = "bottlenecklab.experiments"


@dataclass(frozen=True)
class Found:
    """One discovered experiment: its area (folder), module and `Experiment`."""

    area: str
    module: ModuleType
    experiment: Experiment

    @property
    def prefix(self) -> str:
        """The experiment-name prefix the area's folder stands for (`leaky_resnet` ->
        `leaky-resnet`)."""
        return self.area.replace("_", "-")


def discover() -> list[Found]:
    """Every experiment module under the area packages, in folder and file order."""
    root = importlib.import_module(PACKAGE)
    found: list[Found] = []
    for area in sorted(pkgutil.iter_modules(root.__path__), key=lambda m: m.name):
        if not area.ispkg or area.name.startswith("_"):
            continue
        pkg = importlib.import_module(f"{PACKAGE}.{area.name}")
        for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
            if mod.name.startswith("_"):
                continue
            module = importlib.import_module(f"{PACKAGE}.{area.name}.{mod.name}")
            exp = getattr(module, "EXPERIMENT", None)
            if isinstance(exp, Experiment):
                found.append(Found(area.name, module, exp))
    return found

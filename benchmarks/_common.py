"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

__all__ = ["load", "timed"]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Wall seconds of one call of `fn`, and its value."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def load() -> str:
    """The 1/5/15-minute load averages, as text."""
    return "load avg " + "/".join(f"{x:.2f}" for x in os.getloadavg())

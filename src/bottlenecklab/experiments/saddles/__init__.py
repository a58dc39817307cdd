"""Experiments of paper 003 (saddle-to-saddle dynamics and escape directions)."""

from bottlenecklab.experiments.saddles import (
    circle_escape,
    escape_vs_depth,
    mnist_plateaus,
    plateau_time,
)

EXPERIMENTS = (
    circle_escape.EXPERIMENT,
    escape_vs_depth.EXPERIMENT,
    plateau_time.EXPERIMENT,
    mnist_plateaus.EXPERIMENT,
)

__all__ = ["EXPERIMENTS"]

"""Bottleneck Lab: train deep networks with a known bottleneck rank and measure the theory.

Sub-packages: `models`, `tasks`, `training`, `measure`, `theory`, `experiments`, `sweeps`,
`report`; the command line lives in `cli`.
"""

__version__ = "0.1.0"

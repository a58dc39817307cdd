"""Resident memory of runs: a run's peak, a worker's current and peak, what is available.

On Linux these read `/proc` (`VmHWM`, the resident high-water mark, which a process can
reset for itself: `reset_peak`, so a pool worker reports each run's own peak); elsewhere
`resource.getrusage` gives the process's lifetime peak and nothing is known of others.

    reset_peak()                 # at the start of a run
    ...
    peak_rss_mb()                # this process's peak since then, in MiB
"""

from __future__ import annotations

import os
import resource
import sys

__all__ = ["available_mb", "peak_rss_mb", "reset_peak", "rss_mb"]


def _status_kb(pid: int | str, field: str) -> float | None:
    """A `kB` field of `/proc/PID/status` (None where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def reset_peak() -> bool:
    """Reset this process's resident high-water mark (Linux `clear_refs`); whether it was."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb(pid: int | None = None) -> float | None:
    """The peak resident memory (MiB) of process `pid` (default: this one) since its start
    or its last `reset_peak`; None for another process where `/proc` is missing."""
    kb = _status_kb(pid or "self", "VmHWM")
    if kb is not None:
        return kb / 1024
    if pid is not None and pid != os.getpid():
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB (bytes on macOS)
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def rss_mb(pid: int | None = None) -> float | None:
    """The resident memory (MiB) of process `pid` now (None where `/proc` is missing)."""
    kb = _status_kb(pid or "self", "VmRSS")
    return None if kb is None else kb / 1024


def available_mb() -> float | None:
    """Memory available to new work (MiB): `MemAvailable` (Linux), else the free pages."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (ValueError, OSError, AttributeError):
        return None

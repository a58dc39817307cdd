"""Closed forms, constructions and bounds of the papers (no training, no measurement)."""

__all__: list[str] = []

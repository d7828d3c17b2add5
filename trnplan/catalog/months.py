"""Months as the specs write them (`YYYY-MM`): counting, naming, and the end of a window."""

from __future__ import annotations


def month_index(month: str) -> int:
    """Months since year 0: '2026-07' -> 2026 x 12 + 6."""
    year, mon = month.split("-")
    return int(year) * 12 + int(mon) - 1


def month_text(index: int) -> str:
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def window_end(first: str, horizon_years: int) -> str:
    """The month the window ends (exclusive): `horizon_years` after its first start."""
    return month_text(month_index(first) + 12 * horizon_years)

"""Numbers in one canonical form: the plan file's rounding, money to the cent, and integer cents.

Every module that writes or compares a number (plan files, BOM, diff, show --format json) uses these, so a
figure reads back exactly as it was written and two plans compare equal when their files do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

PLAN_DIGITS = 6
"""Decimals a plan file keeps for figures (economics keep ECONOMICS_DIGITS)."""
ECONOMICS_DIGITS = 15


def canon(value: Any, digits: int = PLAN_DIGITS) -> Any:
    """Canonical numbers: finite, rounded to `digits` decimals, whole floats as ints, no -0; mappings with
    sorted string keys, sequences as lists."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return canon_float(value, digits)
    if isinstance(value, dict):
        return {str(k): canon(v, digits) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [canon(v, digits) for v in value]
    raise TypeError(f"cannot write {type(value).__name__} to a plan")


def canon_float(value: float, digits: int = PLAN_DIGITS) -> float | int:
    """One float in canonical form (see `canon`); a non-finite number is refused."""
    if not math.isfinite(value):
        raise ValueError("non-finite number in plan")
    r = round(value, digits)
    if r == 0:
        return 0
    return int(r) if r.is_integer() and abs(r) < 2**53 else r


def usd(value: float) -> float:
    """Money to the cent."""
    return round(value + 0.0, 2)


def cents(value: float) -> int:
    """Money as whole cents, the unit every sum of money is taken in."""
    return round(value * 100)


# --- text for people: one family of formatters, shared by render, diff, bom and check ----------------


def fmt(value: Any, unit: str = "num", signed: bool = False) -> str:
    """One number as text, by unit.

    usd: $1,234,567 (cents under $100: $1.43); kw: 1,234 kW (from kW); mw: 12.3 MW (from kW);
    pct: a fraction as a percentage (0.97 -> 97%); int: 1,234; num: a plain number, trimmed;
    gbps, tbps, pflops, tflops, w, tb, gb: the number and its unit. `signed` adds a + to gains.
    """
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    v = float(value)
    sign = "+" if signed and v > 0 else ""
    if unit == "usd":
        return _usd_rounded(v, sign)
    if unit == "pct":
        return _pct(v * 100, sign)
    if unit == "mw":
        mw = v / 1000
        text = "0" if mw == 0 else f"{mw:,.1f}" if abs(mw) >= 1 else f"{mw:.3g}"
        return f"{sign}{text} MW"
    if unit == "int":
        return f"{sign}{round(v):,}"
    return f"{sign}{trimmed(v)}{UNIT_SUFFIX.get(unit, f' {unit}')}"


UNIT_SUFFIX = {
    "kw": " kW",
    "w": " W",
    "gbps": " Gb/s",
    "tbps": " TB/s",
    "pflops": " PF",
    "tflops": " TF",
    "tb": " TB",
    "gb": " GB",
    "num": "",
}


def _usd_rounded(v: float, sign: str) -> str:
    a = abs(v)
    if a >= 100 or a == 0 or float(a).is_integer():
        text = f"${a:,.0f}"
    elif a >= 1:
        text = f"${a:,.2f}"
    else:
        text = f"${a:.3g}"
    return f"{'-' if v < 0 else sign}{text}"


def _pct(p: float, sign: str) -> str:
    a = abs(p)
    if a == 0:
        return "0%"
    if a >= 0.1:
        digits = 0 if a >= 10 else 1 if a >= 1 else 2
        text = f"{p:,.{digits}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
    else:
        text = f"{p:.2g}"
    return f"{sign}{text}%"


def trimmed(v: float | str) -> str:
    """Whole numbers with separators; others trimmed to a readable precision; a month (a month range's end)
    as itself."""
    if isinstance(v, str):
        return v
    a = abs(v)
    if float(v).is_integer():
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:,.1f}".rstrip("0").rstrip(".")
    if a >= 0.01:
        return f"{v:.3f}".rstrip("0").rstrip(".")
    return f"{v:.3g}"


def plain(value: float, decimals: int = 2) -> str:
    """1,024 for whole numbers, else up to `decimals` decimals with trailing zeros dropped: 79.25."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.{decimals}f}".rstrip("0").rstrip(".")


def quantity_text(value: float) -> str:
    """A BOM quantity: 1,152, or up to six decimals (51.948)."""
    return plain(value, 6)


def usd_text(value: float) -> str:
    """$1,234.56, with the sign before the dollar."""
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value):,.2f}"


def _sig3(value: float) -> str:
    return f"{float(f'{value:.3g}'):g}"


def money_short(value: float) -> str:
    """$2.77B, $970M, $12.3K, $812.50: three significant figures for headlines."""
    sign = "-" if value < 0 else ""
    v = abs(value)
    if v < 1000:
        return f"{sign}${v:,.2f}" if v % 1 else f"{sign}${v:,.0f}"
    v = float(f"{v:.3g}")
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if v >= div:
            return f"{sign}${_sig3(v / div)}{suffix}"
    return f"{sign}${v:,.0f}"  # pragma: no cover


def shortest(value: float | None) -> str:
    """Shortest text that reads back as the same float: 64, 72.5, 0.992248; '' for none (CSV cells)."""
    if value is None:
        return ""
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def signed(text: str, value: float) -> str:
    """`text` with the sign of `value`: +$1.2M, -$3K."""
    if value > 0:
        return "+" + text
    if value < 0:
        return "-" + text.lstrip("-")
    return text


def risk_of(values: Sequence[float], level: float | None) -> float:
    """The mean of equally likely TCOs, or their CVaR at `level`: the mean of the worst 1 - level share."""
    if level is None:
        return sum(values) / len(values)
    weight, left, total = 1 / len(values), 1 - level, 0.0
    for value in sorted(values, reverse=True):
        take = min(weight, left)
        total += take * value
        left -= take
        if left <= 1e-12:
            break
    return total / (1 - level)

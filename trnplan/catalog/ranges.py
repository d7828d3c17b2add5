"""`ranges: {FIELD: [LOW, HIGH]}` on an entity: how far an estimate may be off.

A range names a number field (nested as `dense_tflops.fp8` or `hbm.stack_gb`), one entry of a step
schedule (`unit_usd.2027-01`: the price from 2027-01 on, the other entries kept), or a month field
(`available_from: [2026-07, 2027-04]`, whole months); the entity's own value must lie inside it, and a
number range's ends inside the field's plausible range. `trnplan sweep --sample`, `sweep --tornado` and
`optimize --futures` draw in them (a month range in whole months).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel, Discriminator, Tag

from trnplan.catalog.base import MONTH_PATTERN, PROVENANCE, Month, Plausible
from trnplan.catalog.months import month_index
from trnplan.catalog.schedules import schedule_arm
from trnplan.catalog.shape import unwrap


def _end_tag(value: Any) -> str:
    return "@month" if isinstance(value, str) else "@number"


RangeEnd = Annotated[
    Annotated[float, Tag("@number")] | Annotated[Month, Tag("@month")], Discriminator(_end_tag)
]
"""One end of a range: a number, or a month (YYYY-MM) for a month field."""


@dataclass(frozen=True)
class NumberField:
    """A field a range may name: whole numbers or not, its plausible range (None if none), whether it holds
    months (YYYY-MM) rather than numbers, and whether it is one entry of a step schedule."""

    integer: bool
    plausible: Plausible | None
    month: bool = False
    entry: bool = False


def _plausible(meta: list[Any]) -> Plausible | None:
    return next((m for m in meta if isinstance(m, Plausible)), None)


def number_field(model: type[BaseModel], path: str) -> NumberField | None:
    """The number field `path` names in `model` (`unit_usd`, `dense_tflops.fp8`), or None when it names
    no number field (unknown, text, a list, a provenance field)."""
    parts = path.split(".")
    if not all(parts) or parts[0] in PROVENANCE:
        return None
    tp: Any = model
    meta: list[Any] = []
    entry = False
    for i, part in enumerate(parts):
        tp, _ = unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            info = tp.model_fields.get(part)
            if info is None:
                return None
            declared = Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation
            if i + 2 == len(parts) and _scheduled(declared) and _is_month(parts[-1]):
                tp, meta = unwrap(declared)  # FIELD.YYYY-MM: one entry of a step schedule
                entry = True
                break
            tp, meta = unwrap(declared)
        elif get_origin(tp) is dict:
            tp, meta = unwrap(get_args(tp)[1])
        else:
            return None
    if tp is str and any(getattr(m, "pattern", None) == MONTH_PATTERN for m in meta) and not entry:
        return NumberField(integer=False, plausible=None, month=True)
    if tp is bool or tp not in (int, float):
        return None
    return NumberField(integer=tp is int, plausible=_plausible(meta), entry=entry)


def _scheduled(declared: Any) -> bool:
    """Whether a declared type takes a step schedule (`catalog.schedules.scheduled`)."""
    tp: Any = declared
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return schedule_arm(tuple(a for a in get_args(tp) if a is not type(None))) is not None


def _is_month(text: str) -> bool:
    return re.fullmatch(MONTH_PATTERN, text) is not None


def as_number(value: Any) -> float:
    """A range end or a drawn value as a number: a month as months since year 0 (so months can be averaged
    and ranked), a number as itself."""
    return float(month_index(value)) if isinstance(value, str) else float(value)


def value_at(entity: BaseModel, path: str) -> Any:
    """The entity's value at `path` (None when it has none: an optional field left out, a missing key)."""
    node: Any = entity
    for part in path.split("."):
        if isinstance(node, BaseModel):
            node = getattr(node, part, None)
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            return None
    return node


def range_problems(entity: BaseModel) -> list[str]:
    """What is wrong with an entity's `ranges` in itself, in words (empty when nothing is). Whether each
    range holds its field's value is `outside_values`: a `--set` what-if may move a value out of it."""
    problems = []
    for path, bounds in sorted(getattr(entity, "ranges", {}).items()):
        problem = _one_range(entity, path, bounds)
        if problem:
            problems.append(f"{path} {problem}")
    return problems


def _one_range(entity: BaseModel, path: str, bounds: list[Any]) -> str | None:
    low, high = bounds
    found = number_field(type(entity), path)
    if found is None:
        return ("is not a number field of this entity (nor a month field or a schedule's entry); a range "
                "names one (e.g. unit_usd, dense_tflops.fp8, unit_usd.2027-01, available_from)")
    months = [isinstance(end, str) for end in bounds]
    if found.month and not all(months):
        return f"range [{end_text(low)}, {end_text(high)}]: {path} is a month; give both ends as YYYY-MM"
    if not found.month and any(months):
        return f"range [{end_text(low)}, {end_text(high)}]: {path} is a number; give both ends as numbers"
    if value_at(entity, path) is None and not found.entry:
        return "has no value here to range around; give the field a value first"
    if not low <= high:
        return f"range [{end_text(low)}, {end_text(high)}]: LOW must not exceed HIGH"
    if found.month:
        return None
    p = found.plausible
    if p is not None and not (p.lo <= low and high <= p.hi):
        return f"range [{low:g}, {high:g}] leaves the plausible range {p.lo:g} to {p.hi:g} {p.unit}"
    return None


def end_text(end: Any) -> str:
    """A range end or a drawn value in words: a month as itself, a number in its shortest form."""
    return end if isinstance(end, str) else f"{end:g}"


def outside_values(entity: BaseModel) -> list[tuple[str, str]]:
    """(field, message) of each range that does not hold the entity's value of its field: a value outside
    it, a schedule entry the schedule does not have, or a whole schedule (a range names one entry)."""
    found = []
    for path, (low, high) in sorted(getattr(entity, "ranges", {}).items()):
        value = value_at(entity, path)
        field = number_field(type(entity), path)
        if field is not None and field.entry and value is None:
            whole = value_at(entity, path.rpartition(".")[0])
            entries = ", ".join(sorted(whole)) if isinstance(whole, dict) else None
            found.append((path, f"{path.rpartition('.')[0]} has no entry {path.rpartition('.')[2]}"
                          + (f" (its entries: {entries})" if entries else " (it is one number, not a "
                             "schedule)")))
        elif isinstance(value, dict) and field is not None and not field.entry:
            entries = ", ".join(f"{path}.{m}" for m in sorted(value))
            found.append((path, f"{path} is a step schedule here; a range names one of its entries: "
                          f"{entries}"))
        elif isinstance(value, (int, float, str)) and not low <= value <= high:
            found.append((path, f"range [{end_text(low)}, {end_text(high)}] must hold the value of {path}, "
                          f"{end_text(value)}"))
    return found

"""`ranges: {FIELD: [LOW, HIGH]}` on an entity: how far an estimate may be off.

A range names a number field (nested as `dense_tflops.fp8` or `hbm.stack_gb`); the entity's own value must
lie inside it, and both ends inside the field's plausible range. `trnplan sweep --sample` draws in them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel

from trnplan.catalog.base import PROVENANCE, Plausible
from trnplan.catalog.shape import unwrap


@dataclass(frozen=True)
class NumberField:
    """A number field a range may name: whole numbers or not, and its plausible range (None if none)."""

    integer: bool
    plausible: Plausible | None


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
    for part in parts:
        tp, _ = unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            info = tp.model_fields.get(part)
            if info is None:
                return None
            declared = Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation
            tp, meta = unwrap(declared)
        elif get_origin(tp) is dict:
            tp, meta = unwrap(get_args(tp)[1])
        else:
            return None
    if tp is bool or tp not in (int, float):
        return None
    return NumberField(integer=tp is int, plausible=_plausible(meta))


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


def _one_range(entity: BaseModel, path: str, bounds: list[float]) -> str | None:
    low, high = bounds
    found = number_field(type(entity), path)
    if found is None:
        return "is not a number field of this entity; a range names one (e.g. unit_usd, dense_tflops.fp8)"
    if value_at(entity, path) is None:
        return "has no value here to range around; give the field a value first"
    if not low <= high:
        return f"range [{low:g}, {high:g}]: LOW must not exceed HIGH"
    p = found.plausible
    if p is not None and not (p.lo <= low and high <= p.hi):
        return f"range [{low:g}, {high:g}] leaves the plausible range {p.lo:g} to {p.hi:g} {p.unit}"
    return None


def outside_values(entity: BaseModel) -> list[tuple[str, str]]:
    """(field, message) of each range that does not hold the entity's value of its field."""
    found = []
    for path, (low, high) in sorted(getattr(entity, "ranges", {}).items()):
        value = value_at(entity, path)
        if isinstance(value, (int, float)) and not low <= value <= high:
            found.append((path, f"range [{low:g}, {high:g}] must hold the value of {path}, {value:g}"))
    return found

"""Step schedules: a site figure given as a number or as `{YYYY-MM: value}`, and reading one at a month.

A schedule's value at a month is the entry with the latest month <= it; before its first entry it is 0 (the
hall is not open). A spec field that takes a schedule is declared `Scheduled[X]`: a discriminated union of X
and a non-empty mapping month -> X, whose tags ("@value", "@schedule") never reach a user's message (the
spec errors drop loc parts that start with "@")."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar, Union, get_args

from pydantic import Discriminator, Field, Tag

from trnplan.catalog.base import Month

TAG_PREFIX = "@"
T = TypeVar("T")


def _tag(value: Any) -> str:
    return "@schedule" if isinstance(value, dict) else "@value"


def scheduled(tp: Any) -> Any:
    """The type of a field that takes `tp` or a step schedule of `tp` values."""
    return Annotated[
        Union[  # noqa: UP007 - a runtime union of annotated arms, as pydantic's tagged unions need
            Annotated[tp, Tag("@value")],
            Annotated[dict[Month, tp], Field(min_length=1), Tag("@schedule")],
        ],
        Discriminator(_tag),
    ]


def schedule_arm(args: tuple[Any, ...]) -> Any | None:
    """The value arm of a `scheduled` union's arguments (None when they are not one)."""
    tags = [next((m.tag for m in getattr(a, "__metadata__", ()) if isinstance(m, Tag)), None) for a in args]
    if tags == ["@value", "@schedule"]:
        return args[0]
    return None


def value_at(schedule: dict[str, float], month: str, before: float = 0.0) -> float:
    """The step schedule's value at `month`: the latest entry on or before it; `before` (0: the hall is not
    open) before the first."""
    found = before
    for start in sorted(schedule):
        if start <= month:
            found = schedule[start]
    return found


def last_value(schedule: dict[str, float]) -> float:
    """A schedule read without a month: its last entry."""
    return schedule[max(schedule)]


__all__ = ["TAG_PREFIX", "last_value", "schedule_arm", "scheduled", "value_at", "get_args"]

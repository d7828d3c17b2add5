"""The declared shape of the spec models, for did-you-mean on field names and for `--set` paths that
reach into id-keyed mappings."""

from __future__ import annotations

import types
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

from trnplan.catalog.schedules import schedule_arm
from trnplan.errors import KeyPath


def unwrap(tp: Any) -> tuple[Any, list[Any]]:
    """`Annotated[X, m...]` -> (X, [m...]) and `X | None` -> X, repeatedly: the type and its metadata."""
    meta: list[Any] = []
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            meta.extend(tp.__metadata__)
            tp = get_args(tp)[0]
            continue
        if origin is Union or origin is types.UnionType:
            args = [a for a in get_args(tp) if a is not type(None)]
            if len(args) == 1:
                tp = args[0]
                continue
            arm = schedule_arm(tuple(args))  # a number or a step schedule: the number's shape
            if arm is not None:
                tp = arm
                continue
        return tp, meta


def strip_type(tp: Any) -> Any:
    """`Annotated[X, ...]` -> X, `X | None` -> X."""
    return unwrap(tp)[0]


def is_model(tp: Any) -> bool:
    """Whether `tp` is a pydantic model class (a mapping of named fields)."""
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def type_at(model: type[BaseModel], rel: KeyPath) -> Any:
    """The declared type at `rel` inside `model` (None when `rel` leaves the declared shape)."""
    tp: Any = model
    for part in rel:
        tp = strip_type(tp)
        if is_model(tp):
            info = tp.model_fields.get(part) if isinstance(part, str) else None
            if info is None:
                return None
            tp = info.annotation
        elif get_origin(tp) in (list, dict):
            tp = get_args(tp)[-1]
        else:
            return None
    return strip_type(tp)


def fields_at(model: type[BaseModel], rel: KeyPath) -> list[str]:
    """The field names of the model declared at `rel` inside `model` (none when it is not a model)."""
    tp = type_at(model, rel)
    return list(tp.model_fields) if is_model(tp) else []

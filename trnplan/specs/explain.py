"""Validate a raw entity with its pydantic model, turning each validation error into a located `Problem`
in words (the field's file:line:col, what was expected, and a hint when the mistake is a common one).

`explain_error` is the one translation of a pydantic error into those words; plan files use it too
(`trnplan.plan.file`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import Any

from pydantic import BaseModel, ValidationError

from trnplan.catalog import ID_PATTERN, MODELS, MONTH_PATTERN
from trnplan.catalog.shape import fields_at
from trnplan.errors import Problem, did_you_mean
from trnplan.specs.entities import ID_RE, ID_RULE, SINGULAR, RawEntity
from trnplan.specs.yamlsafe import KeyPath, describe

_EXPECTED = {
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "string_type": "text",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping of fields",
    "model_attributes_type": "a mapping of fields",
}
_BOUNDS = {
    "greater_than": ("gt", "more than {}"),
    "greater_than_equal": ("ge", "{} or more"),
    "less_than": ("lt", "less than {}"),
    "less_than_equal": ("le", "{} or less"),
}
_UNIT_TEXT = re.compile(r"^\s*[-+]?(\d[\d_,]*\.?\d*|\.\d+)([eE][-+]?\d+)?\s*[A-Za-z/%$]+")


def _expected_message(kind: str, value: Any) -> str:
    """A wrong-type error in words, with a hint when YAML or a unit is the likely cause."""
    message = f"expected {_EXPECTED[kind]}, got {describe(value)}"
    if isinstance(value, bool) and kind.startswith("string"):
        message += "; YAML reads yes/no/on/off/true/false as booleans, quote it to mean text"
    elif isinstance(value, date) and kind.startswith("string"):
        message += "; quote it to mean text, and write months as YYYY-MM"
    elif isinstance(value, str) and _EXPECTED[kind] in ("a number", "a whole number"):
        if _UNIT_TEXT.match(value):
            message += "; write a bare number, the unit is in the field name"
        elif re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", value):
            message += "; write numbers without quotes"
    elif isinstance(value, float) and _EXPECTED[kind] == "a whole number":
        message = f"expected a whole number, got {value!r}"
    return message


def pattern_message(value: Any, pattern: str, what: str) -> str:
    """A pattern mismatch in words: the id rule (with a fixed-up suggestion) or the month format."""
    if pattern == ID_PATTERN:
        message = f"'{value}' is not a valid {what}: {ID_RULE}"
        if isinstance(value, str):
            fixed = re.sub(r"[^a-z0-9.-]+", "-", value.strip().lower()).strip("-.")
            if fixed and ID_RE.fullmatch(fixed):
                message += f"; did you mean '{fixed}'?"
        return message
    if pattern == MONTH_PATTERN:
        return f"'{value}' is not a month: write YYYY-MM, e.g. 2026-06"
    return f"'{value}' does not match the pattern {pattern}"


def _humanize(err: dict[str, Any], is_key: bool) -> str:
    """The message of one pydantic error, in the words of the spec rather than of pydantic."""
    kind = err["type"]
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind in ("value_error", "assertion_error"):
        error = ctx.get("error")
        if error is not None and str(error):
            return str(error)
        return re.sub(r"^(Value error|Assertion failed), ", "", err["msg"])
    if kind in _EXPECTED:
        return _expected_message(kind, value)
    if kind in _BOUNDS:
        name, words = _BOUNDS[kind]
        bound = ctx.get(name)
        shown = f"{bound:g}" if isinstance(bound, float) else str(bound)
        return f"expected {words.format(shown)}, got {describe(value)}"
    if kind == "literal_error":
        options = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        message = f"expected {ctx.get('expected', 'one of the listed values')}, got {describe(value)}"
        return message + (did_you_mean(value, options) if isinstance(value, str) else "")
    if kind == "string_pattern_mismatch":
        return pattern_message(value, ctx.get("pattern", ""), "key" if is_key else "id")
    if kind == "too_short":
        n = ctx.get("min_length", 1)
        return f"needs at least {n} item{'' if n == 1 else 's'}"
    if kind == "too_long":
        return f"has more than {ctx.get('max_length')} items"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "string_too_long":
        return f"is longer than {ctx.get('max_length')} characters"
    if kind == "missing":
        return "missing required field"
    return str(err.get("msg", kind))


def error_path(err: dict[str, Any]) -> tuple[KeyPath, bool]:
    """The key path in the file of one pydantic error, and whether the error is about a mapping's key
    (an id) rather than a value there."""
    # the tags of a tagged union ("@value", "@schedule": `catalog.schedules`) are no part of the spec's paths
    # (an unknown field's own name is kept even when it starts with "@": it is the user's key, not a tag)
    raw = tuple(err["loc"])
    unknown = err["type"] == "extra_forbidden"
    loc: KeyPath = tuple(
        p for i, p in enumerate(raw)
        if not (isinstance(p, str) and p.startswith("@") and not (unknown and i == len(raw) - 1))
    )
    # an unknown field named `[key]` (`--set 'chips.trn3.[key]=1'`) is a field, not pydantic's key marker
    is_key = bool(loc) and loc[-1] == "[key]" and err["type"] != "extra_forbidden"
    return (loc[:-1] if is_key else loc), is_key


def explain_error(
    model: type[BaseModel], err: dict[str, Any], located: Callable[[KeyPath], bool] = lambda _: False
) -> tuple[KeyPath, str]:
    """One pydantic error of `model` in words: the key path to report it at (a missing field: its
    mapping's) and the message (`expected a number, got the text 'lots'`, `unknown field 'tdp'; did you
    mean 'tdp_w'?`). `located` says whether the file has a key path, so a whole-model check that names a
    field is reported at that field."""
    loc, is_key = error_path(err)
    kind = err["type"]
    if kind == "missing":
        return loc[:-1], f"missing required field '{loc[-1]}'"
    if kind == "extra_forbidden":
        name = str(loc[-1])
        fields = fields_at(model, loc[:-1])
        hint = did_you_mean(name, fields) or (f" (fields: {', '.join(fields)})" if fields else "")
        return loc, f"unknown field '{name}'{hint}"
    message = _humanize(err, is_key)
    if kind in ("value_error", "assertion_error") and fields_at(model, loc):
        # A whole-model check ("domain_chips 96 must divide the unit ..."): point at the field it names.
        first = re.match(r"[a-z_][a-z0-9_]*", message)
        if first and first.group(0) in fields_at(model, loc) and located(loc + (first.group(0),)):
            loc = loc + (first.group(0),)
    return loc, message


def _explain(entity: RawEntity, model: type[BaseModel], err: dict[str, Any]) -> Problem | None:
    """One pydantic error as a located problem, or None when yamlsafe already reported its value."""
    if entity.is_bad(error_path(err)[0]):
        return None
    loc, message = explain_error(model, err, lambda path: path in entity.marks)
    return entity.problem(loc, message)


def validate_entity(entity: RawEntity) -> tuple[BaseModel | None, list[Problem]]:
    """The validated model of `entity` (None when it has any problem) and every problem found in it."""
    model = MODELS[entity.kind]
    problems: list[Problem] = []
    if not ID_RE.fullmatch(entity.id):
        problems.append(entity.problem((), pattern_message(entity.id, ID_PATTERN, "id")))
    try:
        value = model.model_validate(entity.data)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            problem = _explain(entity, model, dict(err))
            if problem is not None:
                problems.append(problem)
        return None, problems
    except Exception as exc:  # a validator bug must still end in a located message, not a traceback
        problems.append(
            entity.problem((), f"cannot validate this {SINGULAR[entity.kind]} ({type(exc).__name__}: {exc})")
        )
        return None, problems
    return (None if problems else value), problems

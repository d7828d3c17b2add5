"""`--set PATH=VALUE`: change one value of the merged raw entities before validation.

PATH is `KIND.ID.FIELD...` (ids and id-keyed mappings may contain dots: the longest name that exists is
taken); VALUE is read as YAML. Problems are located at `--set:N:col`, N the override's 1-based position.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from trnplan.catalog import KINDS, MODELS
from trnplan.catalog.shape import is_model, type_at
from trnplan.errors import Problem, SpecError, did_you_mean
from trnplan.specs.entities import SINGULAR, Entities, RawEntity
from trnplan.specs.yamlsafe import KeyPath, YamlDoc, describe, dotted, parse_yaml

SET_FILE = "--set"


class _Refusal(Exception):
    """An override that cannot apply: the column on its `--set` line, the key path it names, and why."""

    def __init__(self, col: int, path: KeyPath, message: str) -> None:
        super().__init__(message)
        self.col = col
        self.path = path
        self.message = message


@dataclass(frozen=True)
class _SetPath:
    """The PATH of an override split at its dots, with the 1-based column where each segment starts."""

    segments: list[str]
    starts: list[int]


def _split_path(path_text: str) -> _SetPath:
    """PATH split into segments; an empty segment (`a..b`, a trailing dot) is refused."""
    segments = path_text.strip().split(".")
    lead = len(path_text) - len(path_text.lstrip())
    starts = [lead + 1 + sum(len(s) + 1 for s in segments[:i]) for i in range(len(segments))]
    if "" in segments:
        raise _Refusal(starts[segments.index("")], (), f"empty name in path {path_text.strip()!r}")
    return _SetPath(segments, starts)


def _check_kind(path: _SetPath) -> str:
    """The collection PATH starts with, refused unless it is known and followed by an id."""
    kind = path.segments[0]
    if kind not in KINDS:
        message = f"unknown collection '{kind}' (expected {', '.join(KINDS)})" + did_you_mean(kind, KINDS)
        raise _Refusal(1, (kind,), message)
    if len(path.segments) < 2:
        raise _Refusal(path.starts[0], (kind,), f"name a {SINGULAR[kind]} and a field: {kind}.ID.FIELD=VALUE")
    return kind


def _find_entity(kind: str, path: _SetPath, entities: Entities) -> tuple[RawEntity, int]:
    """The entity PATH names and the index of the first segment after its id."""
    segments = path.segments
    ids = sorted(entity_id for (k, entity_id) in entities if k == kind)
    # Ids may contain dots: take the longest that exists.
    for end in range(len(segments), 1, -1):
        entity_id = ".".join(segments[1:end])
        if entity_id in ids:
            return entities[(kind, entity_id)], end
    hint = ""
    for end in range(len(segments), 1, -1):
        hint = did_you_mean(".".join(segments[1:end]), ids)
        if hint:
            break
    raise _Refusal(path.starts[1], (kind, segments[1]), f"unknown {SINGULAR[kind]} '{segments[1]}'{hint}")


def _parse_value(text: str) -> tuple[YamlDoc | None, list[Problem]]:
    """VALUE read as YAML, or None and the problems of reading it (located within VALUE alone)."""
    try:
        doc = parse_yaml(text, file=SET_FILE)
    except SpecError as exc:
        return None, exc.problems
    return (None, doc.problems) if doc.problems else (doc, [])


def _dict_key(
    node: dict[str, Any], rest: list[str], i: int, model: type[BaseModel], rel: KeyPath
) -> tuple[str, int]:
    """The key that segments `rest[i:]` name in mapping `node`, and the index of the segment after it."""
    for j in range(len(rest), i, -1):
        key = ".".join(rest[i:j])
        if key in node:
            return key, j
    # A new key: a field name is one segment; an id-keyed mapping takes the rest (ids have dots).
    declared = type_at(model, rel)
    j = i + 1 if declared is None or is_model(declared) else len(rest)
    return ".".join(rest[i:j]), j


def _list_index(node: list[Any], segment: str, col: int, at: KeyPath, rel: KeyPath) -> int:
    """The item number `segment` names in list `node`, refused unless it is one of its items."""
    if not (segment.isascii() and segment.isdigit()) or int(segment) >= len(node):
        n = len(node)
        span = f"0 to {n - 1}" if n else "none: it is empty"
        message = f"{rel[-1] if rel else 'this'} is a list of {n} item{'' if n == 1 else 's'}; "
        raise _Refusal(col, at + rel + (segment,), message + f"item numbers are {span}")
    return int(segment)


_ABSENT = object()
"""What an override replaced where the specs had nothing."""


def _place(entity: RawEntity, rest: list[str], starts: list[int], value: Any) -> tuple[Any, KeyPath, Any]:
    """A copy of the entity's data with `value` at `rest` (empty mappings made on the way), the key path
    it went to, and what was there before (`_ABSENT` when nothing was); the entity is left as it was."""
    if not rest:
        return value, (), entity.data
    data = copy.deepcopy(entity.data)
    if data is None:
        data = {}
    if not isinstance(data, (dict, list)):
        raise _Refusal(
            starts[0], entity.path, f"this {SINGULAR[entity.kind]} is {describe(data)}, not a mapping"
        )
    model = MODELS[entity.kind]
    node: Any = data
    rel: KeyPath = ()
    i = 0
    while True:
        key: str | int
        if isinstance(node, dict):
            key, j = _dict_key(node, rest, i, model, rel)
        else:
            key, j = _list_index(node, rest[i], starts[i], entity.path, rel), i + 1
        rel = rel + (key,)
        if j == len(rest):
            before = node.get(key, _ABSENT) if isinstance(node, dict) else node[key]
            node[key] = value
            return data, rel, before
        child = node.get(key) if isinstance(node, dict) else node[key]
        if child is None:
            child = node[key] = {}
        i = j
        if not isinstance(child, (dict, list)):
            raise _Refusal(
                starts[i],
                entity.path + rel,
                f"{rel[-1]} holds {describe(child)}; there is no '{rest[i]}' inside it",
            )
        node = child


def _commit(entity: RawEntity, data: Any, rel: KeyPath, doc: YamlDoc, line: int, value_col: int) -> None:
    """Store the new data, and re-mark what it replaced as written on the `--set` line."""
    entity.data = data
    n = len(rel)
    entity.marks = {p: loc for p, loc in entity.marks.items() if p[:n] != rel}
    entity.bad = {p for p in entity.bad if p[:n] != rel}
    for sub, (mline, mcol) in doc.marks.items():
        entity.marks[rel + sub] = (SET_FILE, line, value_col + mcol - 1 if mline == 1 else value_col)
    if not rel:
        entity.origin = (SET_FILE, line, value_col)


def _apply(line: int, text: str, entities: Entities) -> tuple[list[Problem], Any]:
    """Apply the override `text` of `--set` line `line`; returns the problems of its VALUE and what it
    replaced (`_ABSENT`: nothing), raises `_Refusal` for a problem in its PATH."""
    path_text, eq, value_text = text.partition("=")
    if not eq or not path_text.strip():
        raise _Refusal(1, (), f"expected PATH=VALUE (e.g. sites.iad-a.it_power_mw=40), got {text!r}")
    path = _split_path(path_text)
    value_col = len(path_text) + 2
    kind = _check_kind(path)
    entity, end = _find_entity(kind, path, entities)
    rest = path.segments[end:]
    doc, found = _parse_value(value_text)
    if doc is None:
        where = dotted(entity.path + tuple(rest))
        problems = [Problem(SET_FILE, line, value_col + max(p.col, 1) - 1, where, p.message) for p in found]
        return problems, _ABSENT
    data, rel, before = _place(entity, rest, path.starts[end:], doc.data)
    _commit(entity, data, rel, doc, line, value_col)
    return [], before


def value_text(value: Any) -> str:
    """A spec value as one line of YAML flow text, as a `--set` VALUE would write it: `0.05`,
    `{2026-01: 20, 2027-01: 40}`, `[air, liquid]`."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {value_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def apply_override(index: int, text: str, entities: Entities) -> tuple[list[Problem], str | None]:
    """Apply one `--set PATH=VALUE` to the merged entities: the problems (located at `--set:N:col`) and
    the value it replaced as text (`value_text`; None where the specs had none)."""
    line = index + 1
    try:
        problems, before = _apply(line, text, entities)
    except _Refusal as refusal:
        return [Problem(SET_FILE, line, refusal.col, dotted(refusal.path), refusal.message)], None
    return problems, None if before is _ABSENT or problems else value_text(before)

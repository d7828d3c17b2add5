"""Load spec directories into a validated `Catalog`, reporting every problem with its file:line:col.

Stages: find the YAML files of each directory (sorted) -> read each safely (`yamlsafe`) -> collect the
entities of each directory (an id defined twice in one directory is an error) -> layer directories
(a later directory replaces an entity of an earlier one as a whole) -> apply `--set` overrides ->
validate each entity with its pydantic model -> check references between entities -> `Catalog`.
Nothing stops at the first problem: all of them are raised together in one `SpecError`.
"""

from __future__ import annotations

import copy
import os
import re
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

import trnplan
from trnplan.catalog import ID_PATTERN, KINDS, MODELS, MONTH_PATTERN, Catalog, Origin, Scenario
from trnplan.catalog import inputs_digest as catalog_inputs_digest
from trnplan.errors import Problem, SpecError, did_you_mean
from trnplan.yamlsafe import KeyPath, describe, dotted, parse_yaml, read_yaml

SPEC_SUFFIXES = (".yaml", ".yml")
SKIPPED_DIRS = ("plans", "__pycache__", "node_modules")  # plan files live beside specs, not in them
SET_FILE = "--set"

SINGULAR = {
    "chips": "chip",
    "forms": "form",
    "switches": "switch",
    "cooling": "cooling type",
    "sites": "site",
    "scenarios": "scenario",
}

_ID_RE = re.compile(ID_PATTERN.removeprefix("^").removesuffix("$"))
_ID_RULE = "ids use lowercase letters, digits, '.' and '-', and start with a letter or digit"

Loc = tuple[str, int, int]  # file, line, col


# ---------------------------------------------------------------------------------------------------
# Where specs come from


def bundled_specs_dir() -> Path:
    """The shipped catalog: `trnplan/_specs` in a wheel, the repo's `specs/` in a source checkout."""
    package = Path(trnplan.__file__).parent
    bundled = package / "_specs"
    return bundled if bundled.is_dir() else package.parent / "specs"


def default_spec_dirs() -> list[Path]:
    """`./specs` when it exists, else the bundled catalog."""
    local = Path("specs")
    return [local] if local.is_dir() else [bundled_specs_dir()]


def _display(path: Path) -> str:
    """`path` relative to the working directory when it lies inside it, else as given."""
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    if absolute == cwd or absolute.startswith(cwd.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, cwd)
    return str(path)


def _spec_files(root: Path) -> tuple[list[Path], list[Problem]]:
    """The `*.yaml`/`*.yml` files under `root` (a directory, recursively, or one file), in sorted order.

    Hidden entries are skipped; directory symlinks are followed once (loops are cut by inode).
    """
    name = _display(root)
    try:
        exists, is_dir = root.exists(), root.is_dir()
    except OSError as exc:
        return [], [Problem(name, 0, 0, "", f"cannot read: {exc.strerror or exc}")]
    if not exists:
        if root.is_symlink():
            return [], [Problem(name, 0, 0, "", "spec directory is a broken symlink or a symlink loop")]
        return [], [Problem(name, 0, 0, "", "spec directory not found")]
    if not is_dir:
        return [root], []  # one spec file named directly
    files: list[Path] = []
    problems: list[Problem] = []
    seen: set[tuple[int, int]] = set()

    def walk(directory: Path) -> None:
        try:
            info = directory.stat()
            if (info.st_dev, info.st_ino) in seen:
                return
            seen.add((info.st_dev, info.st_ino))
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError as exc:
            problems.append(Problem(_display(directory), 0, 0, "", f"cannot list: {exc.strerror or exc}"))
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name not in SKIPPED_DIRS:
                    walk(Path(entry.path))
            elif entry.name.endswith(SPEC_SUFFIXES):
                files.append(Path(entry.path))

    walk(root)
    if not files and not problems:
        problems.append(Problem(name, 0, 0, "", "no spec files (*.yaml, *.yml) in this directory"))
    return files, problems


# ---------------------------------------------------------------------------------------------------
# Entities as read, before validation


@dataclass
class _Entity:
    """One entity's raw data and where each of its key paths was written."""

    kind: str
    id: str
    data: Any
    origin: Loc
    marks: dict[KeyPath, Loc] = field(default_factory=dict)  # relative to the entity
    bad: set[KeyPath] = field(default_factory=set)  # values yamlsafe refused (already reported)

    @property
    def path(self) -> KeyPath:
        return (self.kind, self.id)

    def locate(self, rel: KeyPath) -> Loc:
        """The mark of `rel`, or of its nearest written parent (a missing field points at its parent)."""
        for n in range(len(rel), 0, -1):
            loc = self.marks.get(rel[:n])
            if loc is not None:
                return loc
        return self.origin

    def problem(self, rel: KeyPath, message: str, at: KeyPath | None = None) -> Problem:
        file, line, col = self.locate(rel if at is None else at)
        return Problem(file, line, col, dotted(self.path + rel), message)


def _read_dir(root: Path, problems: list[Problem]) -> tuple[dict[tuple[str, str], _Entity], bool]:
    """Entities of one spec directory; the flag says whether every file could be read."""
    files, found = _spec_files(root)
    problems.extend(found)
    complete = not found
    entities: dict[tuple[str, str], _Entity] = {}
    for path in files:
        name = _display(path)
        try:
            doc = read_yaml(path, display=name)
        except SpecError as exc:
            problems.extend(exc.problems)
            complete = False
            continue
        problems.extend(doc.problems)
        data = doc.data
        if data is None:
            continue  # an empty file (or comments only) defines nothing
        if not isinstance(data, dict):
            line, col = doc.marks.get((), (1, 1))
            problems.append(
                Problem(
                    name,
                    line,
                    col,
                    "",
                    f"a spec file is a mapping of {', '.join(KINDS)}; got {describe(data)}",
                )
            )
            continue
        rel_marks: dict[tuple[str, str], dict[KeyPath, Loc]] = {}
        for key_path, (line, col) in doc.marks.items():
            if len(key_path) >= 3:
                kind, entity_id = str(key_path[0]), str(key_path[1])
                rel_marks.setdefault((kind, entity_id), {})[key_path[2:]] = (name, line, col)
        for kind, collection in data.items():
            line, col = doc.marks[(kind,)]
            if kind not in KINDS:
                problems.append(
                    Problem(
                        name,
                        line,
                        col,
                        kind,
                        f"unknown collection '{kind}' (expected {', '.join(KINDS)})"
                        + did_you_mean(kind, KINDS),
                    )
                )
                continue
            if collection is None:
                continue
            if not isinstance(collection, dict):
                if (kind,) not in doc.bad:
                    problems.append(
                        Problem(
                            name,
                            line,
                            col,
                            kind,
                            f"expected a mapping of id -> {SINGULAR[kind]}, got {describe(collection)}",
                        )
                    )
                continue
            for entity_id, entity_data in collection.items():
                eline, ecol = doc.marks[(kind, entity_id)]
                earlier = entities.get((kind, entity_id))
                if earlier is not None:
                    file, fline, fcol = earlier.origin
                    problems.append(
                        Problem(
                            name,
                            eline,
                            ecol,
                            f"{kind}.{entity_id}",
                            f"{SINGULAR[kind]} '{entity_id}' is defined twice in this spec directory; "
                            f"first at {file}:{fline}:{fcol}",
                        )
                    )
                    continue
                entities[(kind, entity_id)] = _Entity(
                    kind,
                    entity_id,
                    entity_data,
                    (name, eline, ecol),
                    rel_marks.get((kind, entity_id), {}),
                    {p[2:] for p in doc.bad if p[:2] == (kind, entity_id)},
                )
    return entities, complete


# ---------------------------------------------------------------------------------------------------
# Model introspection (for did-you-mean on fields and for `--set` paths into id-keyed mappings)


def _strip(tp: Any) -> Any:
    """`Annotated[X, ...]` -> X, `X | None` -> X."""
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
            continue
        if origin is Union or origin is types.UnionType:
            args = [a for a in get_args(tp) if a is not type(None)]
            if len(args) == 1:
                tp = args[0]
                continue
        return tp


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _type_at(model: type[BaseModel], rel: KeyPath) -> Any:
    """The declared type at `rel` inside `model` (None when `rel` leaves the declared shape)."""
    tp: Any = model
    for part in rel:
        tp = _strip(tp)
        if _is_model(tp):
            info = tp.model_fields.get(part) if isinstance(part, str) else None
            if info is None:
                return None
            tp = info.annotation
        elif get_origin(tp) in (list, dict):
            tp = get_args(tp)[-1]
        else:
            return None
    return _strip(tp)


def _fields_at(model: type[BaseModel], rel: KeyPath) -> list[str]:
    tp = _type_at(model, rel)
    return list(tp.model_fields) if _is_model(tp) else []


# ---------------------------------------------------------------------------------------------------
# Validation errors in words

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
_UNIT_TEXT = re.compile(r"^\s*[-+]?(\d[\d_,]*\.?\d*|\.\d+)([eE][-+]?\d+)?\s*[A-Za-z/%$]+")


def _expected_message(kind: str, value: Any) -> str:
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


def _pattern_message(value: Any, pattern: str, what: str) -> str:
    if pattern == ID_PATTERN:
        message = f"'{value}' is not a valid {what}: {_ID_RULE}"
        if isinstance(value, str):
            fixed = re.sub(r"[^a-z0-9.-]+", "-", value.strip().lower()).strip("-.")
            if fixed and _ID_RE.fullmatch(fixed):
                message += f"; did you mean '{fixed}'?"
        return message
    if pattern == MONTH_PATTERN:
        return f"'{value}' is not a month: write YYYY-MM, e.g. 2026-06"
    return f"'{value}' does not match the pattern {pattern}"


def _humanize(err: dict[str, Any], is_key: bool) -> str:
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
    if kind == "literal_error":
        options = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        message = f"expected {ctx.get('expected', 'one of the listed values')}, got {describe(value)}"
        return message + (did_you_mean(value, options) if isinstance(value, str) else "")
    if kind == "string_pattern_mismatch":
        return _pattern_message(value, ctx.get("pattern", ""), "key" if is_key else "id")
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


def _explain(entity: _Entity, model: type[BaseModel], err: dict[str, Any]) -> Problem | None:
    loc: KeyPath = tuple(err["loc"])
    is_key = bool(loc) and loc[-1] == "[key]"
    if is_key:
        loc = loc[:-1]
    if any(loc[: len(bad)] == bad for bad in entity.bad):
        return None  # yamlsafe already reported this value
    kind = err["type"]
    if kind == "missing":
        return entity.problem(loc[:-1], f"missing required field '{loc[-1]}'")
    if kind == "extra_forbidden":
        name = str(loc[-1])
        fields = _fields_at(model, loc[:-1])
        hint = did_you_mean(name, fields) or (f" (fields: {', '.join(fields)})" if fields else "")
        return entity.problem(loc, f"unknown field '{name}'{hint}")
    message = _humanize(err, is_key)
    if kind in ("value_error", "assertion_error") and _fields_at(model, loc):
        # A whole-model check ("domain_chips 96 must divide the unit ..."): point at the field it names.
        first = re.match(r"[a-z_][a-z0-9_]*", message)
        if first and first.group(0) in _fields_at(model, loc) and loc + (first.group(0),) in entity.marks:
            loc = loc + (first.group(0),)
    return entity.problem(loc, message)


def _validate(entity: _Entity) -> tuple[BaseModel | None, list[Problem]]:
    model = MODELS[entity.kind]
    problems: list[Problem] = []
    if not _ID_RE.fullmatch(entity.id):
        problems.append(entity.problem((), _pattern_message(entity.id, ID_PATTERN, "id")))
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


# ---------------------------------------------------------------------------------------------------
# --set PATH=VALUE


def _apply_override(index: int, text: str, entities: dict[tuple[str, str], _Entity]) -> list[Problem]:
    """Apply one `--set PATH=VALUE` to the merged entities; problems are located at `--set:N:col`."""
    line = index + 1

    def problem(col: int, path: KeyPath, message: str) -> list[Problem]:
        return [Problem(SET_FILE, line, col, dotted(path), message)]

    path_text, eq, value_text = text.partition("=")
    if not eq or not path_text.strip():
        return problem(1, (), f"expected PATH=VALUE (e.g. sites.iad-a.it_power_mw=40), got {text!r}")
    segments = path_text.strip().split(".")
    lead = len(path_text) - len(path_text.lstrip())
    starts = [lead + 1 + sum(len(s) + 1 for s in segments[:i]) for i in range(len(segments))]
    value_col = len(path_text) + 2
    if "" in segments:
        return problem(starts[segments.index("")], (), f"empty name in path {path_text.strip()!r}")
    kind = segments[0]
    if kind not in KINDS:
        return problem(
            1,
            (kind,),
            f"unknown collection '{kind}' (expected {', '.join(KINDS)})" + did_you_mean(kind, KINDS),
        )
    if len(segments) < 2:
        return problem(starts[0], (kind,), f"name a {SINGULAR[kind]} and a field: {kind}.ID.FIELD=VALUE")
    ids = sorted(entity_id for (k, entity_id) in entities if k == kind)
    for end in range(len(segments), 1, -1):  # ids may contain dots: take the longest that exists
        entity_id = ".".join(segments[1:end])
        if entity_id in ids:
            break
    else:
        hint = ""
        for end in range(len(segments), 1, -1):
            hint = did_you_mean(".".join(segments[1:end]), ids)
            if hint:
                break
        return problem(starts[1], (kind, segments[1]), f"unknown {SINGULAR[kind]} '{segments[1]}'{hint}")
    entity = entities[(kind, entity_id)]
    rest = segments[end:]
    rest_starts = starts[end:]

    try:
        doc = parse_yaml(value_text, file=SET_FILE)
        found = doc.problems
    except SpecError as exc:
        found = exc.problems
    if found:
        where = dotted(entity.path + tuple(rest))
        return [Problem(SET_FILE, line, value_col + max(p.col, 1) - 1, where, p.message) for p in found]
    value = doc.data

    model = MODELS[kind]
    data = copy.deepcopy(entity.data)
    rel: KeyPath = ()
    if not rest:
        data = value
    else:
        if data is None:
            data = {}
        if not isinstance(data, (dict, list)):
            return problem(
                rest_starts[0], entity.path, f"this {SINGULAR[kind]} is {describe(data)}, not a mapping"
            )
        node: Any = data
        i = 0
        while True:
            child: Any
            if isinstance(node, dict):
                for j in range(len(rest), i, -1):
                    key = ".".join(rest[i:j])
                    if key in node:
                        break
                else:
                    # New key: a field name is one segment; an id-keyed mapping takes the rest (ids have dots)
                    declared = _type_at(model, rel)
                    j = i + 1 if declared is None or _is_model(declared) else len(rest)
                    key = ".".join(rest[i:j])
                rel = rel + (key,)
                if j == len(rest):
                    node[key] = value
                    break
                child = node.get(key)
                if child is None:
                    child = node[key] = {}
                i = j
            elif isinstance(node, list):
                segment = rest[i]
                if not (segment.isascii() and segment.isdigit()) or int(segment) >= len(node):
                    n = len(node)
                    span = f"0 to {n - 1}" if n else "none: it is empty"
                    return problem(
                        rest_starts[i],
                        entity.path + rel + (segment,),
                        f"{rel[-1] if rel else 'this'} is a list of {n} item{'' if n == 1 else 's'}; "
                        f"item numbers are {span}",
                    )
                rel = rel + (int(segment),)
                if i + 1 == len(rest):
                    node[int(segment)] = value
                    break
                child = node[int(segment)]
                if child is None:
                    child = node[int(segment)] = {}
                i += 1
            if not isinstance(child, (dict, list)):
                return problem(
                    rest_starts[i],
                    entity.path + rel,
                    f"{rel[-1]} holds {describe(child)}; there is no '{rest[i]}' inside it",
                )
            node = child
    entity.data = data
    n = len(rel)
    entity.marks = {p: loc for p, loc in entity.marks.items() if p[:n] != rel}
    entity.bad = {p for p in entity.bad if p[:n] != rel}
    for sub, (mline, mcol) in doc.marks.items():
        entity.marks[rel + sub] = (SET_FILE, line, value_col + mcol - 1 if mline == 1 else value_col)
    if not rel:
        entity.origin = (SET_FILE, line, value_col)
    return []


# ---------------------------------------------------------------------------------------------------
# References between entities


def _strings(value: Any) -> list[tuple[int, str]]:
    """The text items of a list, with their positions (other items are validation's business)."""
    return (
        [(i, item) for i, item in enumerate(value) if isinstance(item, str)]
        if isinstance(value, list)
        else []
    )


def _check_references(entity: _Entity, merged: dict[tuple[str, str], _Entity]) -> list[Problem]:
    """References from `entity` to others, checked on the raw data so that an entity with other problems
    still reports its dangling references; each is located at the referencing key, with did-you-mean."""
    data = entity.data
    if not isinstance(data, dict):
        return []
    problems: list[Problem] = []

    def ref(rel: KeyPath, target: Any, kinds: Sequence[str], what: str | None = None) -> bool:
        if not isinstance(target, str) or not _ID_RE.fullmatch(target):
            return False  # not an id at all: validation reports that
        if any(rel[: len(bad)] == bad for bad in entity.bad):
            return False
        if any((kind, target) in merged for kind in kinds):
            return True
        choices = sorted(entity_id for (kind, entity_id) in merged if kind in kinds)
        label = what or SINGULAR[kinds[0]]
        problems.append(entity.problem(rel, f"unknown {label} '{target}'" + did_you_mean(target, choices)))
        return False

    def sub(name: str) -> dict[str, Any]:
        value = data.get(name)
        return value if isinstance(value, dict) else {}

    if entity.kind == "forms":
        ref(("chip",), data.get("chip"), ["chips"])
        for i, cooling in _strings(data.get("cooling")):
            ref(("cooling", i), cooling, ["cooling"])
        options = data.get("scale_up")
        for i, option in enumerate(options if isinstance(options, list) else []):
            switch = option.get("switch") if isinstance(option, dict) else None
            if isinstance(switch, str) and ref(("scale_up", i, "switch"), switch, ["switches"]):
                raw = merged[("switches", switch)].data
                role = raw.get("role") if isinstance(raw, dict) else None
                if isinstance(role, str) and role != "scale_up":
                    message = f"switch '{switch}' is a {role} switch; scale_up options need a scale_up switch"
                    problems.append(entity.problem(("scale_up", i, "switch"), message))
    elif entity.kind == "sites":
        coolings = [cooling for _i, cooling in _strings(data.get("cooling"))]
        for i, cooling in _strings(data.get("cooling")):
            ref(("cooling", i), cooling, ["cooling"])
        for cooling in sub("cooling_fixed_usd"):
            if cooling not in coolings and _ID_RE.fullmatch(cooling):
                listed = ", ".join(coolings) or "none listed"
                message = f"'{cooling}' is not among this site's cooling ({listed})" + did_you_mean(
                    cooling, coolings
                )
                problems.append(entity.problem(("cooling_fixed_usd", cooling), message))
    elif entity.kind == "scenarios":
        for i, site in _strings(data.get("sites")):
            ref(("sites", i), site, ["sites"])
        for i, chip in _strings(data.get("chips")):
            ref(("chips", i), chip, ["chips"])
        for i, form in _strings(data.get("forms")):
            ref(("forms", i), form, ["forms"])
        for key in sub("supply"):
            ref(("supply", key), key, ["chips", "forms", "switches"], "chip, form or switch")
        fabric = data.get("fabric", {})
        if isinstance(fabric, dict) and "cooling" in fabric:
            ref(("fabric", "cooling"), fabric["cooling"], ["cooling"])
        elif isinstance(fabric, dict):
            default = Scenario.model_fields["fabric"].default.cooling
            if ("cooling", default) not in merged:
                message = (
                    f"the scale-out fabric is cooled by '{default}' unless fabric.cooling says otherwise, "
                    f"and there is no cooling type '{default}'"
                )
                problems.append(entity.problem(("fabric",), message))
    return problems


# ---------------------------------------------------------------------------------------------------
# The loader


def load_specs(dirs: Sequence[str | Path] | None = None, overrides: Sequence[str] = ()) -> Catalog:
    """Load, layer, override, validate and cross-check spec directories into a `Catalog`.

    `dirs` defaults to `default_spec_dirs()`; a later directory replaces an earlier one's entities id by id.
    `overrides` are `PATH=VALUE` strings (`sites.iad-a.it_power_mw=40`), VALUE read as YAML.
    Raises `SpecError` with every problem found, sorted by file, line and column.
    """
    if isinstance(dirs, str | Path):
        dirs = [dirs]  # one directory given bare, not a sequence of one-letter paths
    if isinstance(overrides, str):
        overrides = [overrides]
    roots = default_spec_dirs() if dirs is None else [Path(d) for d in dirs]
    problems: list[Problem] = []
    if not roots:
        raise SpecError([Problem("--specs", 0, 0, "", "no spec directory given")])
    merged: dict[tuple[str, str], _Entity] = {}
    replaced: set[tuple[str, str]] = set()
    complete = True
    for root in roots:
        entities, read_all = _read_dir(root, problems)
        complete = complete and read_all
        replaced.update(key for key in entities if key in merged)
        merged.update(entities)

    for index, text in enumerate(overrides):
        problems.extend(_apply_override(index, text, merged))

    models: dict[tuple[str, str], BaseModel] = {}
    for key in sorted(merged):
        value, found = _validate(merged[key])
        problems.extend(found)
        if value is not None:
            models[key] = value
        if key in replaced and any("missing required field" in p.message for p in found):
            # A partial entity in an override directory: say why its other fields went missing.
            problems.append(
                merged[key].problem(
                    (),
                    "replaces the entity of an earlier --specs directory as a whole; "
                    "repeat its other fields, or change single values with --set",
                )
            )
    if complete:  # with a file unreadable, an "unknown" reference may just live in that file
        for key in sorted(merged):
            problems.extend(_check_references(merged[key], merged))
    if problems:
        raise SpecError(problems)

    collections: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
    origins: dict[tuple[str, str], Origin] = {}
    for (kind, entity_id), value in sorted(models.items()):
        collections[kind][entity_id] = value
        origins[(kind, entity_id)] = Origin(*merged[(kind, entity_id)].origin)
    return Catalog(**collections, origins=origins)


def inputs_digest(catalog: Catalog, scenario_id: str) -> str:
    """`sha256:` + hex digest of the canonical JSON of a scenario, its sites, and every chip, form, switch
    and cooling type, what a plan of it was computed from (`catalog.inputs_digest`: one formula)."""
    if scenario_id not in catalog.scenarios:
        message = f"unknown scenario '{scenario_id}'" + did_you_mean(scenario_id, catalog.scenarios)
        raise SpecError([Problem("scenarios", 0, 0, "", message)])
    return catalog_inputs_digest(catalog, scenario_id)

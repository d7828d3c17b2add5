"""Load spec directories into a validated `Catalog`, reporting every problem with its file:line:col.

Stages: find the YAML files of each directory (sorted) -> read each safely (`yamlsafe`) -> collect the
entities of each directory (an id defined twice in one directory is an error) -> layer directories
(a later directory replaces an entity of an earlier one as a whole) -> apply `--set` overrides ->
validate each entity with its pydantic model -> check references between entities -> `Catalog`.
Nothing stops at the first problem: all of them are raised together in one `SpecError`.
The stages after layering live beside this module: `overrides` (`--set`), `spec_errors` (validation
in words) and `references`; `entities` holds the raw entity they all work on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import trnplan
from trnplan.catalog import KINDS, Catalog, Origin, SiteSpec, Sources, catalog_entity
from trnplan.catalog import inputs_digest as catalog_inputs_digest
from trnplan.catalog.ranges import outside_values
from trnplan.errors import Problem, SpecError, did_you_mean
from trnplan.specs.entities import SINGULAR, Entities, EntityKey, Loc, RawEntity
from trnplan.specs.explain import validate_entity
from trnplan.specs.overrides import SET_FILE, apply_override
from trnplan.specs.references import check_references
from trnplan.specs.yaml_words import plain_syntax
from trnplan.specs.yamlsafe import KeyPath, YamlDoc, describe, read_yaml

SPEC_SUFFIXES = (".yaml", ".yml")
SKIPPED_DIRS = ("plans", "__pycache__", "node_modules")  # plan files live beside specs, not in them
BUNDLED = "@catalog"
"""`--specs @catalog` names the catalog bundled with trnplan, so a user's folder can be layered over it."""


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


def unread_spec_files() -> list[str]:
    """Spec files in the working directory that the default rule leaves unread: with no `./specs`, the
    bundled catalog is read, so the files of a folder made by `trnplan init` (named as the catalog's) are
    not, unless `--specs .` names it. Empty where `./specs` exists or no file has a catalog file's name."""
    if Path("specs").is_dir():
        return []
    try:
        if Path.cwd().resolve() == bundled_specs_dir().resolve():
            return []
        names = {path.name for path in bundled_specs_dir().glob("*.yaml")}
        return sorted(path.name for path in Path(".").glob("*.yaml") if path.name in names and path.is_file())
    except OSError:
        return []


_SPEC_LINE = re.compile(rb"^(" + "|".join(KINDS).encode() + rb")\s*:", re.MULTILINE)


def _holds_specs(folder: Path, limit: int = 64) -> list[Path]:
    """The first spec files (a top-level key a spec collection) in `folder` and its sub-folders, sorted;
    at most `limit` files are looked at, and only their first 64 KiB."""
    found = []
    for n, path in enumerate(sorted(p for s in SPEC_SUFFIXES for p in folder.rglob(f"*{s}"))):
        if n >= limit:
            break
        try:
            with path.open("rb") as handle:
                if _SPEC_LINE.search(handle.read(65536)):
                    found.append(path)
        except OSError:
            continue
    return found


def unread_spec_folders(read: Sequence[str]) -> list[tuple[str, list[Path]]]:
    """The folders of the working directory that hold spec files but were not read (`read`: the catalog's
    source names), each with those files; hidden folders and `plans/` are left out."""
    folders = []
    try:
        for entry in sorted(Path(".").iterdir()):
            if entry.name.startswith(".") or entry.name in SKIPPED_DIRS or not entry.is_dir():
                continue
            if source_name(entry) in read or entry.resolve() == bundled_specs_dir().resolve():
                continue
            files = _holds_specs(entry)
            if files:
                folders.append((f"{entry.name}/", files))
    except OSError:
        return folders
    return folders


def _mentions(files: list[Path], key: str) -> bool:
    pattern = re.compile(rb"^\s+" + re.escape(key.encode()) + rb"\s*:", re.MULTILINE)
    for path in files:
        try:
            with path.open("rb") as handle:
                if pattern.search(handle.read(65536)):
                    return True
        except OSError:
            continue
    return False


def unknown_scenario(scenario_id: str, catalog: Catalog) -> str:
    """`unknown scenario 'x'` with a did-you-mean (or the known ones), and, when the default specs were
    read while folders of the working directory hold specs, which were read and how to layer one of the
    others over them (the one that defines the scenario, if one does): `--specs @catalog --specs mine/`."""
    hint = did_you_mean(scenario_id, catalog.scenarios)
    known = "" if hint else f" (known: {', '.join(sorted(catalog.scenarios)) or 'none'})"
    message = f"unknown scenario '{scenario_id}'{hint}{known}"
    if not catalog.sources.default:
        return message
    folders = unread_spec_folders(catalog.sources.specs)
    if not folders:
        return message
    read = catalog.sources.specs
    what = "the catalog bundled with it" if read == (BUNDLED,) else " and ".join(f"./{r}" for r in read)
    holding = [name for name, files in folders if _mentions(files, scenario_id)]
    shown = holding[:1] or [name for name, _ in folders][:3]
    if holding:
        where = f"{shown[0]} defines '{scenario_id}'"
    else:
        where = f"{', '.join(shown)} hold{'s' if len(shown) == 1 else ''} specs too"
    layers = " ".join(f"--specs {name}" for name in (*read, shown[0]))
    return f"{message}\ntrnplan read only {what}; {where}\nto layer {shown[0]} over it: {layers}"


def spec_dir(name: str | Path) -> Path:
    """The directory a `--specs` value names: `@catalog` is the bundled catalog, anything else a path."""
    return bundled_specs_dir() if str(name) == BUNDLED else Path(name)


def source_name(path: Path) -> str:
    """How a plan records a spec directory: `@catalog` for the bundled one, else a path relative to the
    working directory (the same on every machine that runs from the repository's root)."""
    try:
        if path.resolve() == bundled_specs_dir().resolve():
            return BUNDLED
        return Path(os.path.relpath(path.resolve(), Path.cwd().resolve())).as_posix()
    except (OSError, ValueError):  # another drive, an unreadable path: as given
        return str(path)


def _sources(
    dirs: Sequence[str | Path] | None, roots: list[Path], overrides: Sequence[str], replaced: dict[str, str]
) -> Sources:
    names = tuple(source_name(root) for root in roots)
    default = dirs is None or names == tuple(source_name(d) for d in default_spec_dirs())
    return Sources(names, tuple(overrides), default, tuple(sorted(replaced.items())))


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
# Reading one spec directory into raw entities


def _entity_marks(name: str, doc: YamlDoc) -> dict[EntityKey, dict[KeyPath, Loc]]:
    """The marks of one file grouped by entity, each relative to its entity."""
    rel_marks: dict[EntityKey, dict[KeyPath, Loc]] = {}
    for key_path, (line, col) in doc.marks.items():
        if len(key_path) >= 3:
            kind, entity_id = str(key_path[0]), str(key_path[1])
            rel_marks.setdefault((kind, entity_id), {})[key_path[2:]] = (name, line, col)
    return rel_marks


def _file_entities(name: str, doc: YamlDoc, problems: list[Problem]) -> Iterator[RawEntity]:
    """The entities one read spec file defines; problems with its layout are added as they are met."""
    data = doc.data
    if data is None:
        return  # an empty file (or comments only) defines nothing
    if not isinstance(data, dict):
        line, col = doc.marks.get((), (1, 1))
        message = f"a spec file is a mapping of {', '.join(KINDS)}; got {describe(data)}"
        problems.append(Problem(name, line, col, "", message))
        return
    rel_marks = _entity_marks(name, doc)
    for kind, collection in data.items():
        line, col = doc.marks[(kind,)]
        if kind not in KINDS:
            message = f"unknown collection '{kind}' (expected {', '.join(KINDS)})" + did_you_mean(kind, KINDS)
            problems.append(Problem(name, line, col, kind, message))
        elif isinstance(collection, dict):
            for entity_id, entity_data in collection.items():
                eline, ecol = doc.marks[(kind, entity_id)]
                yield RawEntity(
                    kind,
                    entity_id,
                    entity_data,
                    (name, eline, ecol),
                    rel_marks.get((kind, entity_id), {}),
                    {p[2:] for p in doc.bad if p[:2] == (kind, entity_id)},
                )
        elif collection is not None and (kind,) not in doc.bad:  # a refused value is reported already
            message = f"expected a mapping of id -> {SINGULAR[kind]}, got {describe(collection)}"
            problems.append(Problem(name, line, col, kind, message))


def _add_entity(entities: Entities, entity: RawEntity, problems: list[Problem]) -> None:
    """Add `entity` to those of its directory, unless an earlier file of the directory defined it."""
    earlier = entities.get((entity.kind, entity.id))
    if earlier is None:
        entities[(entity.kind, entity.id)] = entity
        return
    name, line, col = entity.origin
    file, fline, fcol = earlier.origin
    message = (
        f"{SINGULAR[entity.kind]} '{entity.id}' is defined twice in this spec directory; "
        f"first at {file}:{fline}:{fcol}"
    )
    problems.append(Problem(name, line, col, f"{entity.kind}.{entity.id}", message))


def _read_dir(root: Path, problems: list[Problem]) -> tuple[Entities, bool]:
    """Entities of one spec directory; the flag says whether every file could be read."""
    files, found = _spec_files(root)
    problems.extend(found)
    complete = not found
    entities: Entities = {}
    for path in files:
        name = _display(path)
        try:
            doc = read_yaml(path, display=name)
        except SpecError as exc:
            problems.extend(exc.problems)
            complete = False
            continue
        problems.extend(doc.problems)
        for entity in _file_entities(name, doc, problems):
            _add_entity(entities, entity, problems)
    return entities, complete


# ---------------------------------------------------------------------------------------------------
# The loader


_UNKNOWN = re.compile(
    r"^unknown (chip|form|switch|cooling type|site|scenario|workload|power chain) '([a-z0-9][a-z0-9.-]*)'"
)


def _bundled_hint(problems: list[Problem], roots: list[Path], merged: Entities) -> list[Problem]:
    """When the user's folders have no chips (or no cooling, ...) at all, and refer to ones the bundled
    catalog has, one more problem, beside the first such reference, says how to use it:
    `--specs @catalog --specs DIR`. (A folder whose chips file is broken gets no such hint.)"""
    if any(root.resolve() == bundled_specs_dir().resolve() for root in roots):
        return []
    kinds = {singular: kind for kind, singular in SINGULAR.items()}
    present = {kind for kind, _ in merged} | {p.path for p in problems}  # a broken collection is there
    unknown = [(p, m) for p in sorted(problems) if (m := _UNKNOWN.match(p.message))]
    unknown = [(p, m) for p, m in unknown if kinds[m[1]] not in present]
    if not unknown:
        return []
    bundled = _layer([bundled_specs_dir()], []).merged
    hits = [(p, m) for p, m in unknown if (kinds[m[1]], m[2]) in bundled]
    if not hits:
        return []
    found = sorted({f"{m[1]} {m[2]}" for _, m in hits})
    dirs = " ".join(f"--specs {_display(root)}" for root in roots)
    first = hits[0][0]
    message = (
        f"{', '.join(found)} {'is' if len(found) == 1 else 'are'} in the catalog bundled with trnplan; "
        f"layer these folders over it: --specs {BUNDLED} {dirs}"
    )
    return [Problem(first.file, first.line, first.col, first.path, message)]


@dataclass
class _Layers:
    """The entities of all spec directories, layered; which of them replaced an earlier directory's, and
    whether every file could be read."""

    merged: Entities = field(default_factory=dict)
    replaced: set[EntityKey] = field(default_factory=set)
    complete: bool = True


def _roots(dirs: Sequence[str | Path] | str | Path | None) -> list[Path]:
    """The spec directories to read, in layering order; none at all is refused."""
    if isinstance(dirs, str | Path):
        dirs = [dirs]  # one directory given bare, not a sequence of one-letter paths
    roots = default_spec_dirs() if dirs is None else [spec_dir(d) for d in dirs]
    if not roots:
        raise SpecError([Problem("--specs", 0, 0, "", "no spec directory given")])
    return roots


def _layer(roots: list[Path], problems: list[Problem]) -> _Layers:
    """Read every directory; a later one replaces an earlier one's entities id by id."""
    layers = _Layers()
    for root in roots:
        entities, read_all = _read_dir(root, problems)
        layers.complete = layers.complete and read_all
        layers.replaced.update(key for key in entities if key in layers.merged)
        layers.merged.update(entities)
    return layers


def _validate_all(layers: _Layers, problems: list[Problem]) -> dict[EntityKey, BaseModel]:
    """The models of the entities that validate, by key; problems of the others are added."""
    models: dict[EntityKey, BaseModel] = {}
    for key in sorted(layers.merged):
        value, found = validate_entity(layers.merged[key])
        problems.extend(found)
        if value is not None:
            models[key] = value
        if key in layers.replaced and any("missing required field" in p.message for p in found):
            # A partial entity in an override directory: say why its other fields went missing.
            problems.append(
                layers.merged[key].problem(
                    (),
                    "replaces the entity of an earlier --specs directory as a whole; "
                    "repeat its other fields, or change single values with --set",
                )
            )
    return models


def _ranges_off(models: dict[EntityKey, BaseModel], merged: Entities) -> list[Problem]:
    """Each range must hold its field's value as the specs give it; a value a `--set` moved (the field, or
    the schedule a range names an entry of) is a what-if, free to leave the range."""
    found = []
    for key, model in sorted(models.items()):
        entity = merged[key]
        for path, message in outside_values(model):
            parts = tuple(path.split("."))
            marks = [entity.marks.get(parts[:n]) for n in range(1, len(parts) + 1)]  # the field or an entry
            if not any(mark is not None and mark[0] == SET_FILE for mark in marks):
                found.append(entity.problem(("ranges", path), message))
    return found


def _unread(models: dict[EntityKey, BaseModel], merged: Entities) -> tuple[Problem, ...]:
    """Warnings for figures no plan reads: an owned site's rent (it pays none)."""
    found = []
    for key, model in sorted(models.items()):
        if isinstance(model, SiteSpec) and model.owned_with_rent:
            message = "an owned site pays no rent: this figure is not read (leave it out, or lease the site)"
            found.append(merged[key].problem(("colocation_usd_per_kw_month",), message))
    return tuple(found)


def _catalog(models: dict[EntityKey, BaseModel], merged: Entities, sources: Sources) -> Catalog:
    """The `Catalog` of validated models, each with the origin of its raw entity, and the warnings."""
    collections: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
    origins: dict[EntityKey, Origin] = {}
    for (kind, entity_id), value in sorted(models.items()):
        collections[kind][entity_id] = catalog_entity(kind, value)
        origins[(kind, entity_id)] = Origin(*merged[(kind, entity_id)].origin)
    return Catalog(**collections, origins=origins, sources=sources, warnings=_unread(models, merged))


def load_specs(dirs: Sequence[str | Path] | None = None, overrides: Sequence[str] = ()) -> Catalog:
    """Load, layer, override, validate and cross-check spec directories into a `Catalog`.

    `dirs` defaults to `default_spec_dirs()`; a later directory replaces an earlier one's entities id by id;
    `@catalog` names the catalog bundled with trnplan. `overrides` are `PATH=VALUE` strings
    (`sites.iad-a.it_power_mw=40`), VALUE read as YAML.
    Raises `SpecError` with every problem found, sorted by file, line and column.
    """
    if isinstance(overrides, str):
        overrides = [overrides]
    roots = _roots(dirs)
    problems: list[Problem] = []
    layers = _layer(roots, problems)
    replaced: dict[str, str] = {}
    for index, text in enumerate(overrides):
        found, before = apply_override(index, text, layers.merged)
        problems.extend(found)
        path = text.partition("=")[0].strip()
        if before is not None and path not in replaced:
            replaced[path] = before
    models = _validate_all(layers, problems)
    problems.extend(_ranges_off(models, layers.merged))
    if layers.complete:  # with a file unreadable, an "unknown" reference may just live in that file
        for key in sorted(layers.merged):
            problems.extend(check_references(layers.merged[key], layers.merged))
        problems.extend(_bundled_hint(problems, roots, layers.merged))
    if problems:
        raise SpecError(replace(p, message=plain_syntax(p.message)) for p in problems)
    if isinstance(dirs, str | Path):
        dirs = [dirs]
    return _catalog(models, layers.merged, _sources(dirs, roots, overrides, replaced))


def inputs_digest(catalog: Catalog, scenario_id: str) -> str:
    """`sha256:` + hex digest of the canonical JSON of a scenario, its sites, and every chip, form, switch
    and cooling type, what a plan of it was computed from (`catalog.inputs_digest`: one formula)."""
    if scenario_id not in catalog.scenarios:
        raise SpecError([Problem("scenarios", 0, 0, "", unknown_scenario(scenario_id, catalog))])
    return catalog_inputs_digest(catalog, scenario_id)

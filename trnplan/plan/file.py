"""Plan files: canonical YAML text (sorted keys, stable numbers), read and validated once into `Plan`,
written atomically.

A plan file is read by the spec loader's rules: `trnplan.readfile` (a regular file only, also behind a
symlink, at most MAX_PLAN_BYTES, checked before parsing; opening never blocks on a FIFO) and
`trnplan.yamlsafe` (duplicate keys, tags other than the plain ones and aliases refused, numbers read as
YAML 1.2 reads them, every key located). The data is validated into the strict `Plan` (types, finite and
bounded numbers, ids, an optimal plan's gap 0) and recomputed against itself (`self_check`: totals from
deployments, sites and BOM lines). Every refusal is a `PlanError` (an InputError, exit 3) whose lines
each name `FILE:LINE:COL` of the key at fault.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trnplan.errors import InputError, Problem, SpecError, visible
from trnplan.files import write_text_atomic
from trnplan.plan.model import PHASED_FORMAT, PLAN_FORMAT, Plan
from trnplan.readfile import Unreadable, human_size, read_regular
from trnplan.yaml12 import dump_yaml
from trnplan.yamlsafe import KeyPath, describe, dotted, parse_yaml

MAX_PLAN_BYTES = 4 * 1024 * 1024
"""Largest plan file read (the spec files' limit), checked before parsing: a plan takes about 3.4 KB a site
(plans/trn3-100k.yaml: 10 KB for 3 sites), so this is over a thousand sites."""
MAX_PLAN_NODES = 250_000
"""Most YAML nodes in a plan file: a plan has about 250 a site (845 for trn3-100k's 3 sites), so this too
is a thousand sites. The pure-Python parser takes some 16 us a node; the cap bounds the time and memory a
file of tiny nodes (`[1,1,1,...]`: 2 bytes a node) could take under the byte limit."""
PLAN_MAX_DEPTH = 32
"""Plans nest about six levels deep; the limit keeps hostile files away from PyYAML's recursion limit."""
MAX_LISTED = 20
"""Problems listed for one plan file; the rest are counted."""
NO_ALIASES = "an alias (*name); plans written by trnplan have none"


class PlanNotFoundError(InputError):
    """The ref names no plan: no such file, or no such path at that git revision."""


class PlanError(InputError):
    """A plan file refused, with every problem found in it, each located where the file allows."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        lines = [str(p) for p in self.problems[:MAX_LISTED]]
        if len(self.problems) > MAX_LISTED:
            lines.append(f"... and {len(self.problems) - MAX_LISTED} more problems")
        super().__init__("\n".join(lines))


def plan_to_yaml(plan: Plan) -> str:
    """The plan's file text: canonical, so the same plan is always the same bytes."""
    return dump_yaml(plan.to_dict())


def _check_format(data: Any, source: str) -> None:
    if not isinstance(data, dict) or "format" not in data:
        raise InputError(
            visible(f"{source}: not a trnplan plan file, or a truncated one (no 'format: {PLAN_FORMAT}' key)")
        )
    fmt = data.get("format")
    if fmt in (PLAN_FORMAT, PHASED_FORMAT):
        return
    if isinstance(fmt, str) and fmt.startswith("trnplan-plan/"):
        raise InputError(
            visible(
                f"{source}: plan format '{fmt}' is not readable by this trnplan "
                f"(it reads {PLAN_FORMAT} and {PHASED_FORMAT})"
            )
        )
    raise InputError(visible(f"{source}: not a trnplan plan file (format {fmt!r})"))


def _locate(marks: Mapping[KeyPath, tuple[int, int]], path: Iterable[Any]) -> tuple[int, int]:
    """The (line, col) of the longest prefix of `path` the file has (a missing key: its parent's)."""
    key = tuple(p if isinstance(p, int) else str(p) for p in path)
    for n in range(len(key), -1, -1):
        if key[:n] in marks:
            return marks[key[:n]]
    return 0, 0


def _validation_message(error: Any) -> str:
    """One pydantic error in words, with the value the file has."""
    where = dotted(tuple(error["loc"]))
    message = "unknown key" if error["type"] == "extra_forbidden" else str(error["msg"])
    message = message.removeprefix("Value error, ")
    value = error.get("input")
    if error["type"] not in ("missing", "extra_forbidden") and not isinstance(value, dict | list):
        message += f" (the file has {describe(value)})"
    return f"{where}: {message}" if where else message


def plan_from_dict(
    data: Any, source: str = "<plan>", marks: Mapping[KeyPath, tuple[int, int]] | None = None
) -> Plan:
    """Validate a plan file's data into a Plan and check it against itself; PlanError naming `source` (and
    the line and column of each problem, from `marks`, the key positions `yamlsafe` read) if it is not a
    plan or does not add up."""
    from trnplan.plan.consistency import self_check

    marks = marks or {}
    _check_format(data, source)
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        raise PlanError(
            [
                Problem(source, *_locate(marks, e["loc"]), "", "malformed or truncated plan file: " + text)
                for e in exc.errors(include_url=False)
                for text in [_validation_message(e)]
            ]
        ) from None
    inconsistent = self_check(plan)
    if inconsistent:
        raise PlanError(
            [
                Problem(
                    source,
                    *_locate(marks, m.path),
                    "",
                    f"plan file does not add up (edited or damaged?): {m}",
                )
                for m in inconsistent
            ]
        )
    return plan


def _yaml_refusal(exc: SpecError, source: str) -> PlanError:
    """A fatal YAML problem (syntax, nesting, an alias, a control character) in plan terms."""
    problems = []
    for p in exc.problems:
        detail = p.message if p.message.startswith("YAML") else f"YAML: {p.message}"
        problems.append(Problem(source, p.line, p.col, "", f"not a readable plan file ({detail})"))
    return PlanError(problems)


def parse_plan(text: str, source: str = "<plan>") -> Plan:
    """Read and validate a plan file's text; anything else raises InputError (PlanError) naming `source`."""
    try:
        doc = parse_yaml(
            text,
            file=source,
            max_nodes=MAX_PLAN_NODES,
            max_depth=PLAN_MAX_DEPTH,
            no_aliases=NO_ALIASES,
            what="plan files",
        )
    except SpecError as exc:
        raise _yaml_refusal(exc, source) from None
    if doc.problems:  # duplicate keys, tags, unreadable values: refused, never guessed at
        raise PlanError(
            [
                Problem(
                    p.file,
                    p.line,
                    p.col,
                    "",
                    f"not a readable plan file: {p.path + ': ' if p.path else ''}{p.message}",
                )
                for p in doc.problems
            ]
        )
    return plan_from_dict(doc.data, source, doc.marks)


def read_plan_text(path: str | Path) -> str:
    """The text of the plan file at `path`, by the spec loader's rules (a regular file, also behind a
    symlink; at most MAX_PLAN_BYTES; UTF-8); PlanNotFoundError when there is none, InputError otherwise."""
    p = Path(path)
    shown = visible(str(p))  # a name is text on a terminal too: controls written as escapes
    try:
        raw = read_regular(p, MAX_PLAN_BYTES)
    except Unreadable as exc:
        if exc.kind == Unreadable.MISSING:
            raise PlanNotFoundError(f"{shown}: no such plan file") from None
        if exc.kind == Unreadable.BROKEN_LINK:
            raise PlanNotFoundError(f"{shown}: no such plan file (a broken symlink)") from None
        if exc.kind == Unreadable.DIRECTORY:
            raise InputError(f"{shown}: is a directory, not a plan file") from None
        if exc.kind == Unreadable.TOO_LARGE:
            size = f"{human_size(exc.size)}, " if exc.size is not None else ""
            raise InputError(
                f"{shown}: file is {size}over the {human_size(MAX_PLAN_BYTES)} limit for a plan file"
            ) from None
        raise InputError(f"{shown}: cannot read plan file: {exc.message}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{shown}: not a plan file (not UTF-8 text)") from None


def read_plan(path: str | Path) -> Plan:
    """Read and validate a plan file."""
    return parse_plan(read_plan_text(path), str(Path(path)))


def write_plan(plan: Plan, path: str | Path) -> None:
    """Write a plan's canonical text atomically."""
    write_text_atomic(path, plan_to_yaml(plan))

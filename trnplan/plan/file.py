"""Plan files: canonical YAML text (sorted keys, stable numbers), read and validated once into `Plan`,
written atomically.

A plan file is read by the spec loader's rules: `trnplan.specs.readfile` (a regular file only, also behind a
symlink, at most MAX_PLAN_BYTES, checked before parsing; opening never blocks on a FIFO) and
`trnplan.specs.yamlsafe` (duplicate keys, tags other than the plain ones and aliases refused, numbers read as
YAML 1.2 reads them, every key located). The data is validated into the strict `Plan` (types, finite and
bounded numbers, ids, an optimal plan's gap 0) and recomputed against itself (`self_check`: totals from
deployments, sites and BOM lines). Every refusal is a `PlanError` (an InputError, exit 3) whose lines
each name `FILE:LINE:COL` of the key at fault, in the words of spec-file errors (`trnplan.specs.explain`); a
file cut off before its end is said to be, at the line where it ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from trnplan.errors import InputError, Problem, SpecError, visible
from trnplan.files import write_text_atomic
from trnplan.plan.consistency import self_check
from trnplan.plan.model import PHASED_FORMAT, PLAN_FORMAT, Plan
from trnplan.specs.explain import explain_error
from trnplan.specs.readfile import Unreadable, human_size, read_regular
from trnplan.specs.yaml12 import dump_yaml
from trnplan.specs.yamlsafe import KeyPath, dotted, parse_yaml

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
MAX_CUT_NAMED = 8
"""Keys a cut-off file's message names; the rest are counted."""
CUT_OFF = "the file looks cut off here"


class TextEnd(NamedTuple):
    """Where a file's text ends: just past its last character that is not a space (1-based line, column),
    and whether it ends with a line break, as every file trnplan writes does."""

    line: int
    col: int
    newline: bool

    @classmethod
    def of(cls, text: str) -> TextEnd:
        body = text.rstrip()
        line = body.count("\n") + 1
        return cls(line, len(body) - (body.rfind("\n") + 1) + 1, text.endswith("\n"))


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


def _looks_like_a_plan(data: Any) -> bool:
    """A mapping of nothing but a plan's top-level keys (a plan cut off before its `format` key)."""
    return isinstance(data, dict) and bool(data) and all(key in Plan.model_fields for key in data)


def _check_format(
    data: Any, source: str, marks: Mapping[KeyPath, tuple[int, int]], end: TextEnd | None
) -> None:
    if not isinstance(data, dict) or "format" not in data:
        if _looks_like_a_plan(data):
            return  # a plan's keys without its format: `_validation_problems` says what is missing, and where
        raise InputError(
            visible(f"{source}: not a trnplan plan file, or a truncated one (no 'format: {PLAN_FORMAT}' key)")
        )
    fmt = data.get("format")
    if fmt in (PLAN_FORMAT, PHASED_FORMAT):
        return
    # both formats start "trnplan-plan/": the format a cut ends in is the start of either
    cut = fmt is None or (isinstance(fmt, str) and PHASED_FORMAT.startswith(fmt))
    if cut and _last_key(marks) == ("format",):
        line, col = (end.line, end.col) if end else marks[("format",)]
        shown = "no value" if fmt is None else f"'{fmt}'"
        raise PlanError(
            [
                Problem(
                    source,
                    line,
                    col,
                    "",
                    f"malformed or truncated plan file: {CUT_OFF}, inside its format ({shown}, not "
                    f"'{PLAN_FORMAT}' or '{PHASED_FORMAT}'); re-plan it or restore it",
                )
            ]
        )
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
    key = _key(path)
    for n in range(len(key), -1, -1):
        if key[:n] in marks:
            return marks[key[:n]]
    return 0, 0


def _key(path: Iterable[Any]) -> KeyPath:
    return tuple(p if isinstance(p, int) else str(p) for p in path)


def _validation_message(error: Any, marks: Mapping[KeyPath, tuple[int, int]]) -> tuple[KeyPath, str]:
    """One pydantic error in the words of spec-file errors: where to report it (a missing key: at its
    mapping) and `key.path: message` (`totals.chips: expected a whole number, got the text 'many'`)."""
    loc, message = explain_error(Plan, dict(error), lambda path: path in marks)
    where = dotted(loc)
    return loc, f"{where}: {message}" if where else message


def _last_key(marks: Mapping[KeyPath, tuple[int, int]]) -> KeyPath:
    """The key path of the last key or list item in the file: a text cut at its end was inside it and each
    of its parents."""
    return max(marks, key=lambda path: (marks[path], len(path))) if marks else ()


def _cut_off(data: Any, parent: KeyPath, key: str, open_paths: set[KeyPath]) -> bool:
    """Whether missing `parent.key` was cut off: `parent` was still open where the text ends and `key` sorts
    after every key it has (trnplan writes keys sorted, so a cut loses the last ones)."""
    if parent not in open_paths:
        return False
    value = data
    for part in parent:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return False
    return isinstance(value, dict) and all(str(k) < key for k in value)


_CONTAINERS = ("dict_type", "list_type", "model_type", "model_attributes_type")


def _no_value(error: Any) -> bool:
    """Whether a pydantic error is about a value a cut took away: none (`sites:` as the last line), or the
    start of its first key read as text (`totals:` then `  capex_u`)."""
    value = error.get("input")
    return value is None or (isinstance(value, str) and error["type"] in _CONTAINERS)


def _validation_problems(
    data: Any,
    errors: list[Any],
    source: str,
    marks: Mapping[KeyPath, tuple[int, int]],
    end: TextEnd | None,
) -> list[Problem]:
    """Every validation problem located and in words; what a cut took away (the keys missing from the
    mappings still open at the end of the text, the value of its last key) is one problem at the end of
    the text, which says the file looks cut off."""
    if "format" not in data:  # the model defaults it; a plan file always has it
        errors = [{"type": "missing", "loc": ("format",), "msg": "", "input": data}, *errors]
    last = _last_key(marks)
    open_paths = {last[:n] for n in range(len(last) + 1)}
    problems, cut = [], []
    for e in errors:
        loc = _key(e["loc"])
        missing = e["type"] == "missing" and bool(loc) and _cut_off(data, loc[:-1], str(loc[-1]), open_paths)
        if missing or (bool(loc) and loc == last and _no_value(e)):
            cut.append(dotted(loc))
            continue
        at, text = _validation_message(e, marks)
        problems.append(Problem(source, *_locate(marks, at), "", "malformed or truncated plan file: " + text))
    if cut:
        named = ", ".join(sorted(cut)[:MAX_CUT_NAMED])
        more = f" and {len(cut) - MAX_CUT_NAMED} more" if len(cut) > MAX_CUT_NAMED else ""
        line, col = (end.line, end.col) if end else max(marks.values(), default=(1, 1))
        problems.append(
            Problem(
                source,
                line,
                col,
                "",
                f"malformed or truncated plan file: {CUT_OFF}, before {named}{more} (a plan file has them); "
                "re-plan it or restore it",
            )
        )
    return sorted(problems, key=lambda p: (p.line, p.col))


def _at_the_cut(line: int, end: TextEnd | None) -> str:
    """A hint for a problem on the last line of a text that does not end with a line break."""
    if end is None or end.newline or line != end.line:
        return ""
    return " (the file ends on this line, without a line break: is it cut off?)"


def plan_from_dict(
    data: Any,
    source: str = "<plan>",
    marks: Mapping[KeyPath, tuple[int, int]] | None = None,
    *,
    end: TextEnd | None = None,
) -> Plan:
    """Validate a plan file's data into a Plan and check it against itself; PlanError naming `source` (and
    the line and column of each problem, from `marks`, the key positions `yamlsafe` read) if it is not a
    plan or does not add up. `end`, where the file's text ends, locates a cut."""
    marks = marks or {}
    _check_format(data, source, marks, end)
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        errors = list(exc.errors(include_url=False))
        raise PlanError(_validation_problems(data, errors, source, marks, end)) from None
    if "format" not in data:
        raise PlanError(_validation_problems(data, [], source, marks, end))
    inconsistent = self_check(plan)
    if inconsistent:

        def line_of(path: KeyPath) -> int | None:
            mark = marks.get(_key(path))
            return mark[0] if mark else None

        problems = []
        for m in inconsistent:
            line, col = _locate(marks, m.path)
            text = m.located(line_of) + _at_the_cut(line, end)
            problems.append(
                Problem(source, line, col, "", f"plan file does not add up (edited or damaged?): {text}")
            )
        raise PlanError(problems)
    return plan


def _yaml_refusal(exc: SpecError, source: str, end: TextEnd) -> PlanError:
    """A fatal YAML problem (syntax, nesting, an alias, a control character) in plan terms; a syntax error
    where the text ends (an unclosed quote or bracket, a key without its value) says the file looks cut
    off there."""
    problems = []
    for p in exc.problems:
        detail = p.message if p.message.startswith("YAML") else f"YAML: {p.message}"
        at_end = (p.line, p.col) >= (end.line, end.col - 1) or "end of stream" in p.message
        cut = p.message.startswith("YAML syntax") and (at_end or "<stream end>" in p.message)
        hint = f"; {CUT_OFF}" if cut else ""
        problems.append(Problem(source, p.line, p.col, "", f"not a readable plan file ({detail}){hint}"))
    return PlanError(problems)


def parse_plan(text: str, source: str = "<plan>") -> Plan:
    """Read and validate a plan file's text; anything else raises InputError (PlanError) naming `source`."""
    end = TextEnd.of(text)
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
        raise _yaml_refusal(exc, source, end) from None
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
    return plan_from_dict(doc.data, source, doc.marks, end=end)


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

"""Plan files: canonical YAML text (sorted keys, stable numbers), read and validated once into `Plan`,
written atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from trnplan.errors import InputError
from trnplan.files import write_text_atomic
from trnplan.plan.model import PLAN_FORMAT, Plan

MAX_PLAN_BYTES = 32 * 1024 * 1024
PLAN_MAX_DEPTH = 32
"""Plans nest about six levels deep; the limit keeps hostile files away from PyYAML's recursion limit."""


def plan_to_yaml(plan: Plan) -> str:
    """The plan's file text: canonical, so the same plan is always the same bytes."""
    text: str = yaml.safe_dump(
        plan.to_dict(), sort_keys=True, allow_unicode=True, default_flow_style=False, width=1000
    )
    return text


def _check_format(data: Any, source: str) -> None:
    if not isinstance(data, dict) or "format" not in data:
        raise InputError(
            f"{source}: not a trnplan plan file, or a truncated one (no 'format: {PLAN_FORMAT}' key)"
        )
    fmt = data.get("format")
    if fmt == PLAN_FORMAT:
        return
    if isinstance(fmt, str) and fmt.startswith("trnplan-plan/"):
        raise InputError(
            f"{source}: plan format '{fmt}' is not readable by this trnplan (it reads {PLAN_FORMAT})"
        )
    raise InputError(f"{source}: not a trnplan plan file (format {fmt!r})")


def plan_from_dict(data: Any, source: str = "<plan>") -> Plan:
    """Validate a plan file's data into a Plan and check it against itself; InputError if it is not a plan."""
    from trnplan.plan.check import self_check

    _check_format(data, source)
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[:5]
        details = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in first)
        raise InputError(f"{source}: malformed or truncated plan file: {details}") from None
    inconsistent = self_check(plan)
    if inconsistent:
        raise InputError(
            f"{source}: plan file does not add up (edited or damaged?): " + "; ".join(inconsistent)
        )
    return plan


class _PlanLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types
    """SafeLoader for plan files, which trnplan writes about six levels deep and without aliases: an alias
    (a possible alias bomb, which later code would walk 9^9 times) or nesting deeper than
    PLAN_MAX_DEPTH (which would exhaust the recursive composer) is refused before anything is built."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            message = "an alias (*name); plans written by trnplan have none"
            raise yaml.composer.ComposerError(None, None, message, mark)
        self._depth += 1
        try:
            if self._depth > PLAN_MAX_DEPTH:
                mark = self.peek_event().start_mark
                message = f"nesting deeper than {PLAN_MAX_DEPTH} levels"
                raise yaml.composer.ComposerError(None, None, message, mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def parse_plan(text: str, source: str = "<plan>") -> Plan:
    """Read and validate a plan file's text; anything else raises InputError naming `source`."""
    loader = None
    try:
        loader = _PlanLoader(text)  # refuses control characters as it starts reading
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise InputError(f"{where}: not a readable plan file (YAML: {exc.problem})") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{source}: not a readable plan file ({exc})") from None
    finally:
        if loader is not None:
            loader.dispose()
    return plan_from_dict(data, source)


def read_plan(path: str | Path) -> Plan:
    """Read and validate a plan file."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_PLAN_BYTES:
            raise InputError(f"{p}: {p.stat().st_size} bytes is too large for a plan file")
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such plan file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, not a plan file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read plan file: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{p}: not a plan file (not UTF-8 text)") from None
    return parse_plan(text, str(p))


def write_plan(plan: Plan, path: str | Path) -> None:
    """Write a plan's canonical text atomically."""
    write_text_atomic(path, plan_to_yaml(plan))

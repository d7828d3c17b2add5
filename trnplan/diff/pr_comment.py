"""The CI's view of a change: every scenario's plan diff against the plans committed at a base revision,
and one pull-request comment (plus its JSON twin) for them all.

A scenario missing at the base shows as all added, a plan committed at the base but no longer produced
shows as all removed. The comment starts with a single MARKER, so a bot can find and update it in place.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from trnplan.diff.compare import diff_plans
from trnplan.diff.guardrails import Guardrail, breached
from trnplan.diff.json_form import diff_to_dict
from trnplan.diff.markdown import GITHUB_COMMENT_MAX_CHARS, MARKER, diff_to_markdown, headline, plural
from trnplan.diff.model import PlanDiff
from trnplan.gitref import PlanNotFoundError, plan_names_at, read_plan_ref
from trnplan.plan.file import read_plan
from trnplan.plan.model import Plan
from trnplan.safetext import md_code, md_text

DIFF_SET_FORMAT = "trnplan-diff-set/1"
SEPARATOR = "\n\n---\n\n"


@dataclass(frozen=True)
class ScenarioDiff:
    """A scenario's diff and whether it exists at the base and in the head."""

    name: str
    diff: PlanDiff
    in_base: bool
    in_head: bool


def _scenario_diff(rev: str, folder: str, name: str, fresh: Path | None, cwd: Path) -> ScenarioDiff:
    """Base `REV:FOLDER/NAME` against `FRESH/NAME`; a side that is absent (no fresh folder, no file at the
    revision) is the empty plan."""
    base_ref = f"{rev}:{folder}/{name}"
    try:
        base: Plan | None = read_plan_ref(base_ref, cwd=cwd)
    except PlanNotFoundError:
        base = None
    head = read_plan(fresh / name) if fresh is not None else None
    scenario = name.removesuffix(".yaml")
    if head is not None:
        scenario = head.scenario
    elif base is not None:
        scenario = base.scenario
    d = diff_plans(
        base if base is not None else Plan.empty(scenario),
        head if head is not None else Plan.empty(scenario),
        base_ref if base is not None else f"{base_ref} (none)",
        f"{folder}/{name} (re-planned)" if head is not None else "(no longer planned)",
    )
    return ScenarioDiff(name, d, base is not None, head is not None)


def collect_diffs(
    rev: str, fresh: Path, plans_dir: str = "plans", cwd: Path | None = None
) -> list[ScenarioDiff]:
    """One diff per plan file, sorted by name: base `REV:plans/NAME.yaml` against `FRESH/NAME.yaml`."""
    cwd = cwd or Path.cwd()
    folder = plans_dir.rstrip("/")
    head_names = {p.name for p in fresh.glob("*.yaml")}
    names = sorted(head_names | set(plan_names_at(rev, folder, cwd)))
    return [_scenario_diff(rev, folder, n, fresh if n in head_names else None, cwd) for n in names]


def scenario_breaches(diffs: Iterable[ScenarioDiff], rules: list[Guardrail]) -> list[str]:
    """Every breached rule of every scenario, as `` `scenario`: message ``."""
    return [f"{md_code(s.diff.scenario)}: {msg}" for s in diffs for msg in breached(s.diff, rules)]


def _counts_line(diffs: list[ScenarioDiff], rev: str) -> str:
    """`4 scenarios compared with `main`: 3 changed, 1 unchanged, 1 new, 1 removed.`"""
    if not diffs:
        return f"No plans at {md_code(rev)} or in this change."
    changed = sum(1 for s in diffs if s.diff.different)
    new = sum(1 for s in diffs if s.in_head and not s.in_base)
    gone = sum(1 for s in diffs if s.in_base and not s.in_head)
    parts = [f"{changed} changed", f"{len(diffs) - changed} unchanged"]
    parts += [f"{new} new"] if new else []
    parts += [f"{gone} removed"] if gone else []
    return f"{plural(len(diffs), 'scenario')} compared with {md_code(rev)}: {', '.join(parts)}."


def _overview(diffs: list[ScenarioDiff], rev: str, breaches: list[str]) -> list[str]:
    """The marker, the title, how many scenarios changed, each changed one's headline, the breaches."""
    changed = [s for s in diffs if s.diff.different]
    top = [MARKER, "## trnplan plan diff", "", _counts_line(diffs, rev)]
    if changed:
        top += [""] + [f"- {md_code(s.diff.scenario)}: {headline(s.diff)}" for s in changed]
    if breaches:
        top += ["", "**Guardrails breached:**", ""] + [f"- {b}" for b in breaches]
    return top


def _closing(diffs: list[ScenarioDiff]) -> list[str]:
    """The unchanged scenarios (and their notes) on one line, then the plan line over all scenarios."""
    same = [s for s in diffs if not s.diff.different]
    total = {k: sum(s.diff.counts()[k] for s in diffs) for k in ("add", "change", "remove")}
    plan_total = (
        f"Plan: {total['add']} to add, {total['change']} to change, {total['remove']} to remove "
        "(all scenarios)."
    )
    if not same:
        return [plan_total]
    tail = ["No change in plan: " + ", ".join(md_code(s.diff.scenario) for s in same) + "."]
    tail += sorted({f"- {md_code(s.diff.scenario)}: {md_text(n)}" for s in same for n in s.diff.notes})
    return [*tail, "", plan_total]


def _changed_sections(changed: list[ScenarioDiff], used: int, max_chars: int) -> str:
    """Each changed scenario's diff, sharing what `max_chars` leaves after `used`; the ones that no longer
    fit are named by count."""
    room = max_chars - used - len(SEPARATOR) * len(changed)
    budget = max(1000, room // max(1, len(changed)))
    out = ""
    for i, s in enumerate(changed):
        section = diff_to_markdown(s.diff, budget, marker=False).rstrip("\n") + SEPARATOR
        if used + len(out) + len(section) > max_chars:
            left = len(changed) - i
            return out + (
                f"*{left} more changed scenario{'s' if left != 1 else ''} not shown to fit {max_chars:,} "
                "characters: run `trnplan diff` locally.*" + SEPARATOR
            )
        out += section
    return out


def comment_body(
    diffs: list[ScenarioDiff],
    rev: str,
    max_chars: int = GITHUB_COMMENT_MAX_CHARS,
    breaches: list[str] | None = None,
) -> str:
    """One comment for all scenarios: the marker, an overview line with each changed scenario's TCO headline,
    each changed scenario's diff (headline and summary first, details trimmed to share `max_chars`), then
    the unchanged ones named on one line."""
    head_text = "\n".join(_overview(diffs, rev, breaches or [])) + "\n\n"
    tail_text = "\n".join(_closing(diffs)) + "\n"
    changed = [s for s in diffs if s.diff.different]
    return head_text + _changed_sections(changed, len(head_text) + len(tail_text), max_chars) + tail_text


def diff_set_to_json(diffs: list[ScenarioDiff], rev: str, breaches: list[str]) -> str:
    """Every scenario's diff as JSON: `{"format": "trnplan-diff-set/1", "base_rev", "diffs", "breaches"}`."""
    data = {
        "format": DIFF_SET_FORMAT,
        "base_rev": rev,
        "diffs": [diff_to_dict(s.diff) for s in diffs],
        "breaches": breaches,
    }
    return json.dumps(data, sort_keys=True, indent=2) + "\n"

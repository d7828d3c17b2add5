"""The CI's view of a change: every scenario's plan diff against the plans committed at a base revision,
and one pull-request comment (plus its JSON twin) for them all.

A scenario missing at the base shows as all added, a plan committed at the base but no longer produced
shows as all removed. The comment starts with a single MARKER, so a bot can find and update it in place.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
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


UNCHANGED_SHARE = 4
"""Beside changed scenarios, the unchanged ones' names and notes get at most 1/UNCHANGED_SHARE of the room
the breaches and headlines leave."""


def _kept(items: list[str], room: int, joiner: str, more: Callable[[int], str]) -> list[str]:
    """The most leading `items` that fit `room` characters joined by `joiner`, then `more(n)` when n are
    left out (all of them when even one would not fit with the note); every item when all fit."""
    if len(joiner.join(items)) <= room:
        return items
    kept: list[str] = []
    size = 0
    for i, item in enumerate(items):
        grown = size + len(joiner) * bool(kept) + len(item)
        if grown + len(joiner) + len(more(len(items) - i - 1)) > room:
            break
        kept.append(item)
        size = grown
    return [*kept, more(len(items) - len(kept))]


def _left_out(what: str, max_chars: int) -> Callable[[int], str]:
    return lambda n: f"*… and {n:,} more {what} not shown to fit {max_chars:,} characters*"


def _plan_total(diffs: list[ScenarioDiff]) -> str:
    total = {k: sum(s.diff.counts()[k] for s in diffs) for k in ("add", "change", "remove")}
    return (f"Plan: {total['add']} to add, {total['change']} to change, {total['remove']} to remove "
            "(all scenarios).")


@dataclass
class _Room:
    """What is left of the comment's characters as its parts are laid out, most important first."""

    left: int

    def take(self, text: str) -> str:
        self.left -= len(text)
        return text


def _listed(title: list[str], items: list[str], room: _Room, more: Callable[[int], str], reserve: int) -> str:
    """`title` lines then `items` as a list, as many as fit the room less `reserve`; '' without items."""
    if not items:
        return ""
    head = "".join(line + "\n" for line in title)
    kept = _kept([f"- {item}" for item in items], room.left - reserve - len(head) - 2, "\n",
                 lambda n: f"- {more(n)}")
    return room.take(head + "\n".join(kept) + "\n\n")


def _changed_sections(changed: list[ScenarioDiff], room: _Room, max_chars: int) -> str:
    """Each changed scenario's diff, sharing the room left; the ones that no longer fit are named by
    count (room for that line is kept)."""
    notice = _sections_notice(len(changed), max_chars)
    budget = max(1000, (room.left - len(notice)) // max(1, len(changed)) - len(SEPARATOR))
    out = ""
    for i, s in enumerate(changed):
        section = diff_to_markdown(s.diff, budget, marker=False).rstrip("\n") + SEPARATOR
        if len(out) + len(section) + (len(notice) if i < len(changed) - 1 else 0) > room.left:
            return room.take(out + _sections_notice(len(changed) - i, max_chars))
        out += section
    return room.take(out)


def _sections_notice(left: int, max_chars: int) -> str:
    return (f"*{left:,} more changed scenario{'s' if left != 1 else ''} not shown to fit {max_chars:,} "
            "characters: run `trnplan diff` locally.*" + SEPARATOR)


def comment_body(
    diffs: list[ScenarioDiff],
    rev: str,
    max_chars: int = GITHUB_COMMENT_MAX_CHARS,
    breaches: list[str] | None = None,
) -> str:
    """One comment for all scenarios, at most `max_chars` long: the marker and how many scenarios changed,
    each changed scenario's TCO headline, the guardrails breached, each changed scenario's diff (headline and
    summary first, details trimmed to share the room), the unchanged ones named on one line (and their
    notes), then the plan line over all scenarios.

    Over `max_chars`, the parts give way in this order, each saying how many it left out: the diffs of the
    changed scenarios, the unchanged names (which never take more than a quarter), the headlines, and last
    the breaches. The marker, the counts and the plan line are never cut."""
    changed = [s for s in diffs if s.diff.different]
    same = [s for s in diffs if not s.diff.different]
    top = "\n".join([MARKER, "## trnplan plan diff", "", _counts_line(diffs, rev)]) + "\n\n"
    total = _plan_total(diffs) + "\n"
    notice = _sections_notice(len(changed), max_chars) if changed else ""
    room = _Room(max_chars - len(top) - len(total) - len(notice))  # the sections' notice is kept room for
    # each part keeps room for the parts below it to say what they leave out
    least_unchanged = len(_unchanged(same[:1], _Room(0), max_chars, len(same))) if same else 0
    least_headlines = len(_left_out("changed scenarios", max_chars)(len(changed))) + 4 if changed else 0
    breach_text = _listed(["**Guardrails breached:**", ""], breaches or [], room,
                          _left_out("breaches", max_chars), least_headlines + least_unchanged)
    headlines = _listed([], [f"{md_code(s.diff.scenario)}: {headline(s.diff)}" for s in changed], room,
                        _left_out("changed scenarios", max_chars), least_unchanged)
    share = room.left // UNCHANGED_SHARE if changed else room.left
    unchanged = _unchanged(same, _Room(max(share, least_unchanged)), max_chars)
    room.take(unchanged)
    room.left += len(notice)
    sections = _changed_sections(changed, room, max_chars)
    body = top + headlines + breach_text + sections + unchanged + total
    if len(body) > max_chars:  # not even the breaches' note fitted beside the parts never cut
        body = top + _left_out("lines", max_chars)(len(body.splitlines())) + "\n\n" + total
    return body


def _unchanged(same: list[ScenarioDiff], room: _Room, max_chars: int, scenarios: int | None = None) -> str:
    """`No change in plan: `a`, `b`, … and N more.` and the unchanged scenarios' notes, in `room` (the
    least it can be: with `room` 0, and `scenarios` for how many names it may have to leave out)."""
    if not same:
        return ""
    names = [md_code(s.diff.scenario) for s in same] + [""] * ((scenarios or len(same)) - len(same))
    shown = _kept(names, room.left - 24, ", ", lambda n: f"… and {n:,} more")
    line = "No change in plan: " + ", ".join(shown)
    notes = sorted({f"- {md_code(s.diff.scenario)}: {md_text(n)}" for s in same for n in s.diff.notes})
    kept = _kept(notes, room.left - len(line) - 4, "\n", lambda n: "- " + _left_out("notes", max_chars)(n))
    return room.take("\n".join([line + ".", *kept]) + "\n\n")


def diff_set_to_json(diffs: list[ScenarioDiff], rev: str, breaches: list[str]) -> str:
    """Every scenario's diff as JSON: `{"format": "trnplan-diff-set/1", "base_rev", "diffs", "breaches"}`."""
    data = {
        "format": DIFF_SET_FORMAT,
        "base_rev": rev,
        "diffs": [diff_to_dict(s.diff) for s in diffs],
        "breaches": breaches,
    }
    return json.dumps(data, sort_keys=True, indent=2) + "\n"

"""Drift of committed plans: whether a plan file on disk is the plan a fresh solve gives (`optimize --check`).

Pure functions of texts and files; the CLI prints the results. A corrupt, truncated, foreign or
future-format file on disk is bad input (it gets the same message `bom` and `diff` give), not drift; the
same plan from another build of the solver (only `solver.version` differs) is not drift either, nor is the
same plan from the same specs named another way (only the recorded `inputs` differ: `--specs specs/`
against the default, say).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trnplan.errors import EXIT_DIFFERENT, EXIT_INVALID, EXIT_OK, InputError, SpecError
from trnplan.numbers import fmt
from trnplan.plan.file import (
    MAX_PLAN_NODES,
    NO_ALIASES,
    PLAN_MAX_DEPTH,
    PlanNotFoundError,
    parse_plan,
    read_plan_text,
)
from trnplan.specs.yamlsafe import parse_yaml

PHASED_MARK = "format: trnplan-plan/2"
MAX_PERIOD_FIELDS = 4
"""Differing fields a drift message names per period (the unified diff below it has them all)."""


class DriftState(enum.Enum):
    UP_TO_DATE = "up to date"
    OTHER_SOLVER_BUILD = "up to date, from another solver build"
    OTHER_INPUTS = "up to date, with other recorded inputs"
    MISSING = "missing"
    OUT_OF_DATE = "out of date"
    UNREADABLE = "unreadable"  # not a plan file: not checked


@dataclass(frozen=True)
class Drift:
    """How a plan file compares with a fresh solve: its state, the unified diff (on disk -> fresh) when it
    is out of date, the two solver versions when only they differ, the reading error when unreadable."""
    path: Path
    state: DriftState
    diff: list[str] = field(default_factory=list)
    versions: tuple[str, str] | None = None
    error: InputError | None = None
    periods: list[str] = field(default_factory=list)
    """A phased plan: up to date, its periods (`4 periods from 2026-01`); out of date, what differs in
    which period (`in 2026-07: sites.ind-new.deployments.0.units 21 -> 25`)."""
    @property
    def exit_code(self) -> int:
        """0 up to date, 1 drift (missing or out of date), 3 unreadable."""
        if self.state is DriftState.UNREADABLE:
            return EXIT_INVALID
        if self.state in (DriftState.MISSING, DriftState.OUT_OF_DATE):
            return EXIT_DIFFERENT
        return EXIT_OK


def _data(text: str) -> Any:
    """A plan text's data as plans are read (YAML 1.2 numbers, bounded, no aliases), or None."""
    try:
        doc = parse_yaml(text, max_nodes=MAX_PLAN_NODES, max_depth=PLAN_MAX_DEPTH, no_aliases=NO_ALIASES)
    except SpecError:
        return None
    return doc.data


def solver_versions(on_disk: str, fresh: str) -> tuple[str, str] | None:
    """(old, new) solver versions when two plan texts differ in nothing else, else None."""
    try:
        old, new = _data(on_disk), _data(fresh)
        old_version, new_version = old["solver"].pop("version"), new["solver"].pop("version")
    except (KeyError, TypeError, AttributeError):
        return None
    return (str(old_version), str(new_version)) if old == new else None


def only_inputs_differ(on_disk: str, fresh: str) -> bool:
    """Whether two plan texts differ only in their recorded `inputs` (where the same specs came from)."""
    try:
        old, new = _data(on_disk), _data(fresh)
        old.pop("inputs", None), new.pop("inputs", None)
    except (TypeError, AttributeError):
        return False
    return bool(old == new)


def check_drift(fresh: str, path: str | Path) -> Drift:
    """Compare a freshly solved plan's file text with the file at `path`."""
    path = Path(path)
    try:
        on_disk = read_plan_text(path)  # a regular file within the size cap, never a FIFO or device
    except PlanNotFoundError:
        return Drift(path, DriftState.MISSING)
    except InputError as exc:
        return Drift(path, DriftState.UNREADABLE, error=exc)
    if on_disk == fresh:
        return Drift(path, DriftState.UP_TO_DATE, periods=period_span(fresh))
    try:
        parse_plan(on_disk, str(path))
    except InputError as exc:
        return Drift(path, DriftState.UNREADABLE, error=exc)
    versions = solver_versions(on_disk, fresh)
    if versions is not None:
        return Drift(path, DriftState.OTHER_SOLVER_BUILD, versions=versions)
    if only_inputs_differ(on_disk, fresh):
        return Drift(path, DriftState.OTHER_INPUTS)
    import difflib  # only on drift

    lines = difflib.unified_diff(
        on_disk.splitlines(),
        fresh.splitlines(),
        f"{path} (on disk)",
        f"{path} (fresh solve)",
        n=1,
        lineterm="",
    )
    return Drift(path, DriftState.OUT_OF_DATE, diff=list(lines), periods=period_drift(on_disk, fresh))


def _load(text: str) -> dict[str, Any]:
    data = _data(text)
    return data if isinstance(data, dict) else {}


def _starts(plan: dict[str, Any]) -> list[str]:
    return [str(p.get("start")) for p in plan.get("periods") or [] if isinstance(p, dict)]


def period_span(text: str) -> list[str]:
    """`['4 periods from 2026-01 to 2027-07']` for a phased plan's text; [] for any other plan."""
    if PHASED_MARK not in text:
        return []
    starts = _starts(_load(text))
    return [f"{len(starts)} periods from {starts[0]} to {starts[-1]}"] if starts else []


def _keyed(value: Any) -> Any:
    """A list of deployments as a mapping by `form/cooling/scale_up_switch`, so a message names the option."""
    if isinstance(value, list) and value and all(isinstance(d, dict) and "form" in d for d in value):
        return {f"{d.get('form')}/{d.get('cooling')}/{d.get('scale_up_switch')}": d for d in value}
    return value


def _changed(old: Any, new: Any, path: str = "") -> list[str]:
    """The leaves where two plan parts differ, as `path old -> new` (a list of another length as one)."""
    old, new = _keyed(old), _keyed(new)
    if isinstance(old, dict) and isinstance(new, dict):
        return [
            c
            for k in sorted(set(old) | set(new), key=str)
            for c in _changed(old.get(k), new.get(k), f"{path}.{k}".lstrip("."))
        ]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        pairs = enumerate(zip(old, new, strict=True))
        return [c for i, (a, b) in pairs for c in _changed(a, b, f"{path}.{i}")]
    if old == new:
        return []
    if isinstance(old, (dict, list)) or isinstance(new, (dict, list)):
        return [f"{path} differs"]
    return [f"{path} {'-' if old is None else old} -> {'-' if new is None else new}"]


def _usd(value: Any) -> str:

    return fmt(value, "usd") if isinstance(value, (int, float)) else "-"


def _sites(period: Any) -> dict[str, Any]:
    sites = period.get("sites") if isinstance(period, dict) else None
    return sites if isinstance(sites, dict) else {}


def _site_changes(site: str, a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """One site's units per option and its fabric, on disk against fresh (a side without the site: {})."""
    out = []
    deps_a = _keyed(a.get("deployments") or []) or {}
    deps_b = _keyed(b.get("deployments") or []) or {}
    for key in sorted(set(deps_a) | set(deps_b)):
        units = [(d or {}).get("units", 0) for d in (deps_a.get(key), deps_b.get(key))]
        if units[0] != units[1]:
            out.append(f"{site} {key} units {units[0]} -> {units[1]}")
    fabric_a, fabric_b = a.get("scale_out") or {}, b.get("scale_out") or {}
    for name in ("switch", "tiers"):
        if fabric_a.get(name) != fabric_b.get(name):
            out.append(f"{site} scale-out {name} {fabric_a.get(name, '-')} -> {fabric_b.get(name, '-')}")
    return out


def _period_changes(old: Any, new: Any) -> list[str]:
    """What a planner reads first of a period's change: units per site and option, each site's fabric,
    the capex bought (`iad-air trn3-nl32x2/air/pcie6-320 units 8 -> 15`)."""
    old_sites, new_sites = _sites(old), _sites(new)
    out = []
    for site in sorted(set(old_sites) | set(new_sites)):
        out += _site_changes(site, old_sites.get(site) or {}, new_sites.get(site) or {})
    totals = [(p.get("totals") or {}).get("capex_bought_usd") for p in (old, new)]
    if out and totals[0] != totals[1]:
        out.append(f"capex bought {_usd(totals[0])} -> {_usd(totals[1])}")
    return out


def _bom_by_period(plan: dict[str, Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for line in plan.get("bom") or []:
        if isinstance(line, dict):
            out.setdefault(str(line.get("period")), []).append(line)
    return out


def period_drift(on_disk: str, fresh: str) -> list[str]:
    """Where a phased plan on disk and a fresh solve differ, period by period, in words; [] when neither
    is phased. A change of format (the scenario gained or lost periods) or of the periods is said first."""
    if PHASED_MARK not in on_disk and PHASED_MARK not in fresh:
        return []
    old, new = _load(on_disk), _load(fresh)
    if old.get("format") != new.get("format"):
        gained = new.get("format") == "trnplan-plan/2"
        return [
            f"the scenario {'gained' if gained else 'lost'} periods: the file is {old.get('format')}, "
            f"a fresh solve gives {new.get('format')}"
        ]
    old_starts, new_starts = _starts(old), _starts(new)
    if old_starts != new_starts:
        return [
            f"periods changed: the file has {', '.join(old_starts) or 'none'}; "
            f"a fresh solve gives {', '.join(new_starts) or 'none'}"
        ]
    out = []
    old_bom, new_bom = _bom_by_period(old), _bom_by_period(new)
    for a, b, start in zip(old["periods"], new["periods"], new_starts, strict=True):
        changes = _period_changes(a, b) or _changed(a, b)
        if old_bom.get(start) != new_bom.get(start):
            changes.append("its purchases (BOM lines)")
        if changes:
            more = len(changes) - MAX_PERIOD_FIELDS
            shown = "; ".join(changes[:MAX_PERIOD_FIELDS]) + (f"; and {more} more" if more > 0 else "")
            out.append(f"in {start}: {shown}")
    return out


def stale_plans(plans: Path, scenario_ids: Iterable[str]) -> list[Path]:
    """Plan files in the folder `plans` whose scenario the specs no longer define, sorted."""
    if not plans.is_dir():
        return []
    known = set(scenario_ids)
    return [path for path in sorted(plans.glob("*.yaml")) if path.stem not in known]

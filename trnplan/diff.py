"""What changed between two plans: totals, per-site choices, deployments, BOM lines and where the TCO went.

Pure functions of two plan files (no catalog, no solver): `diff_plans` builds a `PlanDiff`; `diff_to_json`
and `diff_to_markdown` print it for machines and for pull-request comments; guardrails turn it into a
pass/fail. `read_plan_ref` reads a plan from a path or from git (`REV:path`), so `trnplan diff
main:plans/x.yaml plans/x.yaml` needs no checkout.

Money is compared in integer cents, so deltas negate exactly when the plans swap and the TCO attribution
sums to the TCO delta to the cent.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from trnplan.costs import cents
from trnplan.errors import InputError, UsageError, did_you_mean
from trnplan.plan import MAX_PLAN_BYTES, PLAN_FORMAT, Plan, canon, parse_plan, read_plan

DIFF_FORMAT = "trnplan-diff/1"
MARKER = "<!-- trnplan-diff -->"
GITHUB_COMMENT_MAX_CHARS = 65000  # GitHub refuses comments over 65,536 characters
TRIMMED_NOTE = (
    "*Note: details trimmed to fit {max_chars:,} characters; run `trnplan diff --format json` "
    "for the full diff.*"
)
HOURS_PER_YEAR = 8760

# (metric, unit, label) in the order the summary shows them.
SUMMARY_METRICS: tuple[tuple[str, str, str], ...] = (
    ("tco_usd", "USD", "TCO"),
    ("capex_usd", "USD", "Capex"),
    ("opex_usd_per_year", "USD/year", "Opex per year"),
    ("it_power_kw", "kW", "IT power"),
    ("facility_power_kw", "kW", "Facility power"),
    ("chips", "chips", "Chips"),
    ("fp8_pflops", "PFLOPs", "FP8 PFLOPs"),
    ("racks", "racks", "Compute racks"),
    ("usd_per_pflop_hour", "USD/PFLOP-hour", "$ per PFLOP-hour"),
)
MONEY_METRICS = frozenset(
    m for m, unit, _ in SUMMARY_METRICS if unit.startswith("USD") and m != "usd_per_pflop_hour"
)
METRIC_ALIASES = {
    "tco": "tco_usd",
    "capex": "capex_usd",
    "opex": "opex_usd_per_year",
    "power": "it_power_kw",
    "it_power": "it_power_kw",
    "facility_power": "facility_power_kw",
    "pflops": "fp8_pflops",
}
CHOICE_FIELDS = ("form", "cooling", "scale_up_switch", "scale_out_switch")
DEPLOYMENT_FIELDS = ("units", "racks", "chips", "it_power_kw", "capex_usd")
OPEX_CATEGORIES = ("energy", "colocation")


class PlanNotFoundError(InputError):
    """The ref names no plan: no such file, or no such path at that git revision."""


# --- reading plans from paths and git ---------------------------------------------------------------


_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def read_plan_ref(ref: str, *, cwd: str | Path | None = None) -> Plan:
    """Read a plan from a file path, or from git as `REV:path` (`main:plans/x.yaml`, `HEAD~1:plans/x.yaml`).

    An existing file wins over the git reading, so `C:\\plans\\x.yaml` is a path. A git path is relative
    to the repository root (`REV:./x.yaml` for the current folder), as with `git show`. Raises
    PlanNotFoundError when there is no such file or no such path at the revision, InputError for every
    other failure (no git, not a repository, unknown revision, not a plan), naming the ref.
    """
    base = Path(cwd) if cwd is not None else Path.cwd()
    path = Path(ref) if Path(ref).is_absolute() else base / ref
    if path.exists() or ":" not in ref or _DRIVE.match(ref):
        if not path.exists():
            raise PlanNotFoundError(f"{ref}: no such plan file")
        return read_plan(path if cwd is not None else ref)
    rev, _, rel = ref.partition(":")
    if rev.startswith("-"):
        raise InputError(f"{ref}: a git revision cannot start with '-'")
    if not rel:
        raise InputError(f"{ref}: no path after the revision (write REV:path, e.g. main:plans/x.yaml)")
    text = _git_show(ref, rev, rel, base)
    return parse_plan(text, source=ref)


def _git_show(ref: str, rev: str, rel: str, cwd: Path) -> str:
    try:
        proc = subprocess.run(
            ["git", "show", "--no-textconv", f"{rev}:{rel}"],
            capture_output=True,
            cwd=cwd,
            check=False,
            env={**os.environ, "LC_ALL": "C"},  # git's messages are matched below; keep them in English
        )
    except FileNotFoundError:
        raise InputError(
            f"{ref}: no such file, and git is not installed to read it from a revision"
        ) from None
    except OSError as exc:
        raise InputError(f"{ref}: cannot run git: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        low = err.lower()
        if "not a git repository" in low:
            raise InputError(f"{ref}: no such file, and {cwd} is not in a git repository to read it from")
        if "does not exist in" in low or "exists on disk, but not in" in low:
            raise PlanNotFoundError(f"{ref}: no file '{rel}' at revision '{rev}'")
        if "invalid object name" in low or "unknown revision" in low or "bad revision" in low:
            raise InputError(f"{ref}: unknown git revision '{rev}' (and no such file)")
        first = err.splitlines()[0] if err else f"git exited with {proc.returncode}"
        raise InputError(f"{ref}: cannot read it from git: {first}")
    if len(proc.stdout) > MAX_PLAN_BYTES:
        raise InputError(f"{ref}: {len(proc.stdout)} bytes is too large for a plan file")
    if proc.stdout.startswith(b"tree "):
        raise InputError(f"{ref}: is a directory at revision '{rev}', not a plan file")
    try:
        return proc.stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{ref}: not a plan file (not UTF-8 text)") from None


def empty_plan(scenario: str) -> Plan:
    """A plan with nothing in it: the base of a scenario that is new, or the head of one that is gone."""
    totals = {m: 0 for m, _, _ in SUMMARY_METRICS}
    totals.update(energy_usd_per_year=0, colocation_usd_per_year=0)
    return Plan(
        scenario=scenario,
        inputs_digest="",
        solver={},
        objective={},
        totals=totals,
        sites={},
        bom=[],
        format=PLAN_FORMAT,
    )


# --- the diff ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricDelta:
    """A summary figure in both plans; delta = new - old; pct = 100 x delta / old (None when old is 0)."""

    metric: str
    unit: str
    old: float
    new: float
    delta: float
    pct: float | None


@dataclass(frozen=True)
class ChoiceChange:
    """A per-site choice that differs; old (new) is None when the site is new (gone) in head."""

    site: str
    field: str
    old: str | None
    new: str | None


@dataclass(frozen=True)
class DeploymentChange:
    """`+` added, `-` removed, `~` changed; key is `form/cooling/scale_up_switch`; fields map to (old, new),
    all of them for `+`/`-` (the absent side None), only the changed ones for `~`."""

    sign: str
    site: str
    key: str
    fields: dict[str, tuple[Any, Any]]


@dataclass(frozen=True)
class BomDelta:
    """A BOM line (site, category, item) whose quantity or cost differs; the absent side is None."""

    sign: str
    site: str
    category: str
    item: str
    old_qty: float | None
    new_qty: float | None
    old_usd: float | None
    new_usd: float | None
    delta_usd: float


@dataclass(frozen=True)
class CategoryDelta:
    """TCO attributed to a category in each plan (BOM categories, then energy and colocation)."""

    category: str
    old_usd: float
    new_usd: float
    delta_usd: float


@dataclass(frozen=True)
class PlanDiff:
    """Everything that differs between a base and a head plan; `different` is False iff nothing does.

    A change of inputs digest or solver with an identical plan is *not* a difference: it is reported in
    `notes` (and in the Markdown), but `different` stays False, so `--exit-code` fails only on real change.
    """

    base_label: str
    head_label: str
    base_digest: str
    head_digest: str
    base_solver: str
    head_solver: str
    different: bool
    summary: list[MetricDelta]
    choices: list[ChoiceChange]
    deployments: list[DeploymentChange]
    bom: list[BomDelta]
    attribution: list[CategoryDelta]
    scenario: str = ""
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Deployments to add, change and remove (the `Plan: ...` line)."""
        return {
            "add": sum(1 for d in self.deployments if d.sign == "+"),
            "change": sum(1 for d in self.deployments if d.sign == "~"),
            "remove": sum(1 for d in self.deployments if d.sign == "-"),
        }

    def metric(self, name: str) -> MetricDelta:
        for m in self.summary:
            if m.metric == name:
                return m
        raise KeyError(name)


def _num(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return value


def _clean(value: float, digits: int = 6) -> float:
    """Round away float noise and -0.0; keep ints as ints."""
    r = round(value, digits)
    if r == 0:
        return 0
    return int(r) if float(r).is_integer() and abs(r) < 2**53 else r


def _delta(old: float, new: float, money: bool) -> float:
    if money:
        return (cents(new) - cents(old)) / 100
    return _clean(new - old)


def _pct(old: float, delta: float) -> float | None:
    return round(delta / old * 100, 6) if old else None


def solver_text(solver: dict[str, Any]) -> str:
    """`HiGHS 1.16.0 (optimal, gap 0)`; '' for a plan without a solver."""
    if not solver:
        return ""
    name = f"{solver.get('name', '?')} {solver.get('version', '')}".strip()
    extra = [str(solver["status"])] if "status" in solver else []
    if "mip_gap" in solver:
        extra.append(f"gap {solver['mip_gap']:g}" if isinstance(solver["mip_gap"], (int, float)) else "gap ?")
    return f"{name} ({', '.join(extra)})" if extra else name


def _summary(base: Plan, head: Plan) -> list[MetricDelta]:
    out = []
    for metric, unit, _ in SUMMARY_METRICS:
        old, new = _num(base.totals.get(metric, 0)), _num(head.totals.get(metric, 0))
        delta = _delta(old, new, metric in MONEY_METRICS)
        out.append(MetricDelta(metric, unit, old, new, delta, _pct(old, delta)))
    return out


def _joined(values: Iterable[Any]) -> str:
    return " + ".join(sorted({str(v) for v in values}))


def site_choices(plan: Plan) -> dict[str, dict[str, str]]:
    """Per site, what it chose: forms, coolings and scale-up switches in use (joined with ` + `) and the
    scale-out switch."""
    out = {}
    for site, s in plan.sites.items():
        deps = s.get("deployments") or []
        out[site] = {
            "form": _joined(d.get("form") for d in deps),
            "cooling": _joined(d.get("cooling") for d in deps),
            "scale_up_switch": _joined(d.get("scale_up_switch") for d in deps),
            "scale_out_switch": str((s.get("scale_out") or {}).get("switch", "")),
        }
    return out


def _choices(base: Plan, head: Plan) -> list[ChoiceChange]:
    old, new = site_choices(base), site_choices(head)
    out = []
    for site in sorted(set(old) | set(new)):
        for f in CHOICE_FIELDS:
            a = old[site][f] if site in old else None
            b = new[site][f] if site in new else None
            if a != b:
                out.append(ChoiceChange(site, f, a, b))
    return out


def _deployment_rows(plan: Plan) -> dict[tuple[str, str], dict[str, float]]:
    """(site, form/cooling/scale_up_switch) -> the deployment's figures; capex summed in cents."""
    acc: dict[tuple[str, str], dict[str, float]] = {}
    for site, s in plan.sites.items():
        for d in s.get("deployments") or []:
            key = (site, f"{d.get('form')}/{d.get('cooling')}/{d.get('scale_up_switch')}")
            row = acc.setdefault(key, dict.fromkeys(DEPLOYMENT_FIELDS, 0))
            for f in DEPLOYMENT_FIELDS:
                row[f] += cents(_num(d.get(f, 0))) if f == "capex_usd" else _num(d.get(f, 0))
    return {
        key: {f: row[f] / 100 if f == "capex_usd" else _clean(row[f]) for f in DEPLOYMENT_FIELDS}
        for key, row in acc.items()
    }


def _deployments(base: Plan, head: Plan) -> list[DeploymentChange]:
    old, new = _deployment_rows(base), _deployment_rows(head)
    out = []
    for key in sorted(set(old) | set(new)):
        site, name = key
        if key not in old:
            out.append(DeploymentChange("+", site, name, {f: (None, new[key][f]) for f in DEPLOYMENT_FIELDS}))
        elif key not in new:
            out.append(DeploymentChange("-", site, name, {f: (old[key][f], None) for f in DEPLOYMENT_FIELDS}))
        else:
            changed = {f: (old[key][f], new[key][f]) for f in DEPLOYMENT_FIELDS if old[key][f] != new[key][f]}
            if changed:
                out.append(DeploymentChange("~", site, name, changed))
    return out


def _bom_rows(plan: Plan) -> dict[tuple[str, str, str], tuple[float, int]]:
    """(site, category, item) -> (quantity, cents); lines that share a key are summed."""
    qty: dict[tuple[str, str, str], float] = defaultdict(float)
    usd: dict[tuple[str, str, str], int] = defaultdict(int)
    for line in plan.bom:
        key = (str(line.get("site")), str(line.get("category")), str(line.get("item")))
        qty[key] += _num(line.get("quantity", 0))
        usd[key] += cents(_num(line.get("extended_usd", 0)))
    return {k: (_clean(qty[k]), usd[k]) for k in qty}


def _bom(base: Plan, head: Plan) -> list[BomDelta]:
    old, new = _bom_rows(base), _bom_rows(head)
    out = []
    for key in sorted(set(old) | set(new)):
        site, category, item = key
        if key not in old:
            q, c = new[key]
            out.append(BomDelta("+", site, category, item, None, q, None, c / 100, c / 100))
        elif key not in new:
            q, c = old[key]
            out.append(BomDelta("-", site, category, item, q, None, c / 100, None, -c / 100))
        elif old[key] != new[key]:
            (q0, c0), (q1, c1) = old[key], new[key]
            out.append(BomDelta("~", site, category, item, q0, q1, c0 / 100, c1 / 100, (c1 - c0) / 100))
    return out


def _horizon_years(plan: Plan) -> float | None:
    """The plan's horizon: economics.horizon_years, else recovered from $/chip-hour (older plans)."""
    h = plan.economics.get("horizon_years")
    if isinstance(h, (int, float)) and not isinstance(h, bool) and h > 0:
        return h
    t = plan.totals
    tco, chips, per_chip_hour = _num(t.get("tco_usd")), _num(t.get("chips")), _num(t.get("usd_per_chip_hour"))
    if tco and chips and per_chip_hour:
        years = round(tco / (chips * per_chip_hour * HOURS_PER_YEAR))
        return years if years >= 1 else None
    return None


def _split(total: int, weights: dict[str, int]) -> dict[str, int]:
    """Split integer `total` over keys in proportion to non-negative integer weights, exactly (largest
    remainder; ties by key), so the parts sum to `total`."""
    keys = sorted(weights)
    wsum = sum(weights[k] for k in keys)
    if wsum <= 0:
        keys = keys or ["capex"]
        share = {k: Fraction(total, len(keys)) for k in keys}
    else:
        share = {k: Fraction(total * weights[k], wsum) for k in keys}
    floor = {k: math.floor(share[k]) for k in keys}
    left = total - sum(floor.values())
    for k in sorted(keys, key=lambda k: (-(share[k] - floor[k]), k))[:left]:
        floor[k] += 1
    return floor


def tco_parts_cents(plan: Plan) -> dict[str, int] | None:
    """The plan's TCO in cents by category, summing exactly to cents(totals.tco_usd); None when the plan
    lacks the figures (totals.energy_usd_per_year, colocation_usd_per_year, a horizon).

    TCO = capex-driven part + horizon_years x (energy + colocation) per year; the capex-driven part
    (capex x (CRF + maintenance_rate) x horizon) is the remainder, split over BOM categories in proportion
    to their capex.
    """
    tco = cents(_num(plan.totals.get("tco_usd", 0)))
    capex_by_category: dict[str, int] = defaultdict(int)
    for line in plan.bom:
        capex_by_category[str(line.get("category"))] += cents(_num(line.get("extended_usd", 0)))
    if tco == 0 and not plan.bom:
        return {c: 0 for c in OPEX_CATEGORIES}
    if "energy_usd_per_year" not in plan.totals or "colocation_usd_per_year" not in plan.totals:
        return None
    years = _horizon_years(plan)
    if years is None:
        return None
    opex = {
        "energy": round(years * cents(_num(plan.totals["energy_usd_per_year"]))),
        "colocation": round(years * cents(_num(plan.totals["colocation_usd_per_year"]))),
    }
    capex_part = tco - opex["energy"] - opex["colocation"]
    return {**_split(capex_part, dict(capex_by_category)), **opex}


def _attribution(base: Plan, head: Plan) -> list[CategoryDelta] | None:
    old, new = tco_parts_cents(base), tco_parts_cents(head)
    if old is None or new is None:
        return None
    capex_cats = sorted((set(old) | set(new)) - set(OPEX_CATEGORIES))
    return [
        CategoryDelta(c, old.get(c, 0) / 100, new.get(c, 0) / 100, (new.get(c, 0) - old.get(c, 0)) / 100)
        for c in [*capex_cats, *OPEX_CATEGORIES]
    ]


def diff_plans(base: Plan, head: Plan, base_label: str = "base", head_label: str = "head") -> PlanDiff:
    """Compare two plans: summary metrics, per-site choices, deployments (keyed by site and
    form/cooling/scale_up_switch), BOM lines (keyed by site, category, item) and the TCO delta by category."""
    summary = _summary(base, head)
    choices = _choices(base, head)
    deployments = _deployments(base, head)
    bom = _bom(base, head)
    attribution = _attribution(base, head)
    different = bool(choices or deployments or bom or any(m.delta != 0 for m in summary))
    notes = []
    if base.scenario != head.scenario and base.sites and head.sites:
        notes.append(f"comparing different scenarios: '{base.scenario}' and '{head.scenario}'")
    if base.inputs_digest and head.inputs_digest and base.inputs_digest != head.inputs_digest:
        if not different:
            notes.append("the inputs digest changed but the plan did not")
    base_solver, head_solver = solver_text(base.solver), solver_text(head.solver)
    if base_solver and head_solver and base_solver != head_solver:
        notes.append(f"solved by {base_solver} in base and {head_solver} in head")
    if base.binding and head.binding and base.binding != head.binding and not different:
        notes.append("what holds the plan back (binding constraints) changed, the plan did not")
    if attribution is None:
        notes.append(
            "TCO attribution needs totals.energy_usd_per_year, totals.colocation_usd_per_year and "
            "economics.horizon_years in both plans; re-plan to get it"
        )
    return PlanDiff(
        base_label=base_label,
        head_label=head_label,
        base_digest=base.inputs_digest,
        head_digest=head.inputs_digest,
        base_solver=base_solver,
        head_solver=head_solver,
        different=different,
        summary=summary,
        choices=choices,
        deployments=deployments,
        bom=bom,
        attribution=attribution or [],
        scenario=head.scenario if head.sites or not base.sites else base.scenario,
        notes=notes,
    )


# --- JSON ------------------------------------------------------------------------------------------


def diff_to_dict(d: PlanDiff) -> dict[str, Any]:
    def pair(old: Any, new: Any) -> dict[str, Any]:
        return {"old": old, "new": new}

    return canon(
        {
            "format": DIFF_FORMAT,
            "scenario": d.scenario,
            "base": {"label": d.base_label, "inputs_digest": d.base_digest, "solver": d.base_solver},
            "head": {"label": d.head_label, "inputs_digest": d.head_digest, "solver": d.head_solver},
            "different": d.different,
            "counts": d.counts(),
            "summary": [
                {
                    "metric": m.metric,
                    "unit": m.unit,
                    "old": m.old,
                    "new": m.new,
                    "delta": m.delta,
                    "pct": m.pct,
                }
                for m in d.summary
            ],
            "choices": [{"site": c.site, "field": c.field, "old": c.old, "new": c.new} for c in d.choices],
            "deployments": [
                {
                    "sign": c.sign,
                    "site": c.site,
                    "key": c.key,
                    "fields": {f: pair(*v) for f, v in c.fields.items()},
                }
                for c in d.deployments
            ],
            "bom": [
                {
                    "sign": b.sign,
                    "site": b.site,
                    "category": b.category,
                    "item": b.item,
                    "old_qty": b.old_qty,
                    "new_qty": b.new_qty,
                    "old_usd": b.old_usd,
                    "new_usd": b.new_usd,
                    "delta_usd": b.delta_usd,
                }
                for b in d.bom
            ],
            "attribution": [
                {"category": a.category, "old_usd": a.old_usd, "new_usd": a.new_usd, "delta_usd": a.delta_usd}
                for a in d.attribution
            ],
            "notes": d.notes,
        }
    )  # type: ignore[no-any-return]


def diff_to_json(d: PlanDiff) -> str:
    """Stable machine form: `{"format": "trnplan-diff/1", ...}`, sorted keys, canonical numbers."""
    return json.dumps(diff_to_dict(d), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# --- Markdown --------------------------------------------------------------------------------------


def _sig3(value: float) -> str:
    return f"{float(f'{value:.3g}'):g}"


def money_short(value: float) -> str:
    """$2.77B, $970M, $12.3K, $812.50: three significant figures for headlines."""
    sign = "-" if value < 0 else ""
    v = abs(value)
    if v < 1000:
        return f"{sign}${v:,.2f}" if v % 1 else f"{sign}${v:,.0f}"
    v = float(f"{v:.3g}")
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if v >= div:
            return f"{sign}${_sig3(v / div)}{suffix}"
    return f"{sign}${v:,.0f}"  # pragma: no cover


def _signed(text: str, value: float) -> str:
    if value > 0:
        return "+" + text
    if value < 0:
        return "-" + text.lstrip("-")
    return text


def _plain(value: float, decimals: int = 2) -> str:
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.{decimals}f}".rstrip("0").rstrip(".")


def format_metric(metric: str, value: float) -> str:
    """A summary value in its unit, for tables: $1,234,567 (cents under $1,000), 79.2 kW, 1,024 chips."""
    if metric in MONEY_METRICS:
        v = abs(value)
        text = f"${v:,.0f}" if v >= 1000 or float(v).is_integer() else f"${v:,.2f}"
        return ("-" if value < 0 else "") + text
    if metric == "usd_per_pflop_hour":
        if value == 0:
            return "$0"
        return ("-" if value < 0 else "") + f"${abs(value):,.4f}"
    if metric in ("it_power_kw", "facility_power_kw"):
        return f"{_plain(value, 1)} kW"
    if metric == "fp8_pflops":
        return _plain(value, 1)
    return _plain(value, 3)


def format_delta(metric: str, delta: float) -> str:
    if delta == 0:
        return format_metric(metric, 0)
    return _signed(format_metric(metric, abs(delta)), delta)


def format_pct(m: MetricDelta) -> str:
    if m.pct is None:
        return "new" if m.new else ""
    return f"{m.pct:+.1f}%"


def headline(d: PlanDiff) -> str:
    """`**TCO** $2.77B → $3.74B (+$970M, +35.0%)`."""
    m = d.metric("tco_usd")
    change = _signed(money_short(abs(m.delta)), m.delta) if m.delta else "no change"
    pct = f", {m.pct:+.1f}%" if m.pct is not None and m.delta else ""
    return f"**TCO** {money_short(m.old)} → {money_short(m.new)} ({change}{pct})"


def plan_line(d: PlanDiff) -> str:
    c = d.counts()
    return f"Plan: {c['add']} to add, {c['change']} to change, {c['remove']} to remove."


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _field_value(name: str, value: Any) -> str:
    if value is None:
        return "—"
    if name == "capex_usd":
        return format_metric("capex_usd", value)
    if name == "it_power_kw":
        return _plain(value, 1)
    return _plain(value, 3)


def _arrow(name: str, old: Any, new: Any) -> str:
    if old is None:
        return _field_value(name, new)
    if new is None:
        return _field_value(name, old)
    if old == new:
        return _field_value(name, new)
    return f"{_field_value(name, old)} → {_field_value(name, new)}"


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def _summary_table(d: PlanDiff) -> list[str]:
    labels = {m: label for m, _, label in SUMMARY_METRICS}
    rows = ["| Metric | Base | Head | Change | % |", "|---|--:|--:|--:|--:|"]
    for m in d.summary:
        old, new = format_metric(m.metric, m.old), format_metric(m.metric, m.new)
        rows.append(
            _row(labels.get(m.metric, m.metric), old, new, format_delta(m.metric, m.delta), format_pct(m))
        )
    return rows


def _choice_rows(d: PlanDiff) -> tuple[list[str], list[str]]:
    head = ["| Site | Choice | Base | Head |", "|---|---|---|---|"]
    return head, [f"| {_cell(c.site)} | {c.field} | {_cell(c.old)} | {_cell(c.new)} |" for c in d.choices]


def _deployment_rows_md(d: PlanDiff) -> tuple[list[str], list[str]]:
    head = [
        "| | Site | Deployment | Units | Racks | Chips | IT kW | Capex |",
        "|---|---|---|--:|--:|--:|--:|--:|",
    ]
    rows = []
    for c in d.deployments:
        cells = []
        for f in DEPLOYMENT_FIELDS:
            old, new = c.fields.get(f, (None, None))
            cells.append(_arrow(f, old, new) if f in c.fields else "")
        rows.append(f"| `{c.sign}` | {_cell(c.site)} | {_cell(c.key)} | " + " | ".join(cells) + " |")
    return head, rows


def _bom_rows_md(d: PlanDiff) -> tuple[list[str], list[str]]:
    head = ["| | Site | Category | Item | Quantity | USD | Change |", "|---|---|---|---|--:|--:|--:|"]
    rows = [
        _row(
            f"`{b.sign}`",
            _cell(b.site),
            _cell(b.category),
            _cell(b.item),
            _arrow("quantity", b.old_qty, b.new_qty),
            _arrow("capex_usd", b.old_usd, b.new_usd),
            format_delta("capex_usd", b.delta_usd),
        )
        for b in d.bom
    ]
    return head, rows


def _attribution_rows(d: PlanDiff) -> tuple[list[str], list[str]]:
    head = ["| Category | Base TCO | Head TCO | Change |", "|---|--:|--:|--:|"]
    rows = [
        _row(
            _cell(a.category),
            format_metric("tco_usd", a.old_usd),
            format_metric("tco_usd", a.new_usd),
            format_delta("tco_usd", a.delta_usd),
        )
        for a in d.attribution
    ]
    if rows:
        m = d.metric("tco_usd")
        rows.append(
            f"| **total** | **{format_metric('tco_usd', m.old)}** | **{format_metric('tco_usd', m.new)}** "
            f"| **{format_delta('tco_usd', m.delta)}** |"
        )
    return head, rows


def _details(summary: str, intro: list[str], table_head: list[str], rows: list[str], keep: int) -> str:
    shown = rows[:keep]
    body = [f"<details><summary>{summary}</summary>", ""]
    if shown or not rows:
        body += intro
    if shown:
        body += [*table_head, *shown, ""]
    if len(rows) > keep:
        more = len(rows) - keep
        body += [
            f"*… {more} {'more ' if keep else ''}row{'s' if more != 1 else ''} trimmed; "
            "see `trnplan diff --format json` for all*",
            "",
        ]
    body.append("</details>")
    return "\n".join(body)


def _short_digest(digest: str) -> str:
    if not digest:
        return "—"
    algo, _, hexpart = digest.partition(":")
    return f"`{algo}:{hexpart[:12]}`" if hexpart else f"`{digest[:19]}`"


def _provenance(d: PlanDiff) -> list[str]:
    return [
        "| | Plan | Inputs digest | Solver |",
        "|---|---|---|---|",
        _row("Base", f"`{_cell(d.base_label)}`", _short_digest(d.base_digest), _cell(d.base_solver or None)),
        _row("Head", f"`{_cell(d.head_label)}`", _short_digest(d.head_digest), _cell(d.head_solver or None)),
    ]


def diff_to_markdown(
    d: PlanDiff, max_chars: int = GITHUB_COMMENT_MAX_CHARS, *, marker: bool = True, heading: str = "###"
) -> str:
    """A pull-request comment: the marker, a TCO headline and the summary table first, then collapsible
    details (choices, deployments, BOM lines, TCO by category), both plans' digests and solvers, and a last
    line `Plan: N to add, N to change, N to remove.`

    Over `max_chars`, detail rows are trimmed (BOM lines first, then deployments, choices, attribution)
    and the comment says so; the headline, summary and last line are never cut. With no difference the
    body is a short "No change in plan".
    """
    title = f"{heading} Plan diff: `{_cell(d.scenario or '?')}`"
    top = [MARKER] if marker else []
    notes = [f"- {n}" for n in d.notes]
    if not d.different:
        body = [
            *top,
            title,
            "",
            "No change in plan.",
            *([""] + notes if notes else []),
            "",
            *_provenance(d),
            "",
            plan_line(d),
        ]
        return "\n".join(body) + "\n"

    head_part = "\n".join([*top, title, "", headline(d), "", *_summary_table(d)])
    tail_part = "\n".join([*_provenance(d), "", plan_line(d)])
    c = d.counts()
    sections: dict[str, tuple[str, list[str], list[str], list[str]]] = {}
    if d.choices:
        sites = len({ch.site for ch in d.choices})
        sections["choices"] = (
            f"Choices: {len(d.choices)} change{'s' if len(d.choices) != 1 else ''} "
            f"at {sites} site{'s' if sites != 1 else ''}",
            [],
            *_choice_rows(d),
        )
    if d.deployments:
        sections["deployments"] = (
            f"Deployments: {c['add']} to add, {c['change']} to change, {c['remove']} to remove",
            ["`+` added, `-` removed, `~` changed (base → head)", ""],
            *_deployment_rows_md(d),
        )
    if d.bom:
        sections["bom"] = (
            f"BOM: {len(d.bom)} line{'s' if len(d.bom) != 1 else ''} changed",
            [],
            *_bom_rows_md(d),
        )
    if d.attribution:
        sections["attribution"] = (
            "TCO change by category",
            [
                "Capex-driven TCO (capex x (CRF + maintenance) x horizon) split by each category's capex, "
                "plus energy and colocation over the horizon; the changes sum to the TCO change.",
                "",
            ],
            *_attribution_rows(d),
        )
    if notes:
        sections["notes"] = ("Notes", notes, [], [])
    order = ["choices", "deployments", "bom", "attribution", "notes"]
    keep = {k: len(v[3]) for k, v in sections.items()}

    def render(trimmed: bool) -> str:
        parts = [head_part]
        if trimmed:
            parts.append(TRIMMED_NOTE.format(max_chars=max_chars))
        parts += [
            _details(sections[k][0], sections[k][1], sections[k][2], sections[k][3], keep[k])
            for k in order
            if k in sections
        ]
        parts.append(tail_part)
        return "\n\n".join(parts) + "\n"

    text = render(False)
    if len(text) <= max_chars:
        return text
    # Trim the largest, least decisive tables first; binary-search how many rows of each still fit.
    for k in ("bom", "deployments", "choices", "attribution"):
        if k not in sections:
            continue
        lo, hi = 0, keep[k]
        keep[k] = 0
        if len(render(True)) > max_chars:
            continue
        while lo < hi:
            mid = (lo + hi + 1) // 2
            keep[k] = mid
            if len(render(True)) <= max_chars:
                lo = mid
            else:
                hi = mid - 1
        keep[k] = lo
        return render(True)
    text = render(True)
    if len(text) <= max_chars:
        return text
    # Even empty tables do not fit: keep only what may never be cut.
    return "\n\n".join([head_part, TRIMMED_NOTE.format(max_chars=max_chars), tail_part]) + "\n"


# --- guardrails -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Guardrail:
    """A rule on a summary metric's change: `tco>+5%` is breached when TCO rises by more than 5%."""

    metric: str
    op: str
    amount: float
    percent: bool
    text: str = ""


_GUARDRAIL = re.compile(
    r"^\s*(?P<metric>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op>>=|<=|>|<)\s*(?P<num>[+-]?\s*\$?[0-9][0-9_,]*(?:\.[0-9]+)?)"
    r"\s*(?P<suffix>[kKMB]?)\s*(?P<unit>MW|kW|mw|kw)?\s*(?P<pct>%?)\s*$"
)
_SUFFIX = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9}
_POWER_UNIT_KW = {"kw": 1, "mw": 1000}


def metric_names() -> list[str]:
    return [m for m, _, _ in SUMMARY_METRICS]


def _valid_names() -> str:
    aliases: dict[str, list[str]] = defaultdict(list)
    for alias, metric in METRIC_ALIASES.items():
        aliases[metric].append(alias)
    return ", ".join(f"{m} ({', '.join(aliases[m])})" if m in aliases else m for m in metric_names())


def parse_guardrail(text: str) -> Guardrail:
    """`METRIC OP [+|-]NUMBER[k|M|B][%]`, OP one of > >= < <=: `tco>+5%`, `it_power_kw>+500`,
    `capex_usd>+1000000`, `capex>1.5M`, `chips<-10%`; power metrics also take kW or MW
    (`it_power>+2MW`). Raises UsageError naming the valid metrics."""
    m = _GUARDRAIL.match(text)
    if not m:
        raise UsageError(
            f"guardrail '{text}': expected METRIC OP [+|-]NUMBER[%], e.g. 'tco>+5%' or 'it_power_kw>+500'; "
            f"metrics: {_valid_names()}"
        )
    name = m["metric"].lower()
    metric = METRIC_ALIASES.get(name, name)
    if metric not in metric_names():
        hint = did_you_mean(name, [*metric_names(), *METRIC_ALIASES])
        raise UsageError(
            f"guardrail '{text}': unknown metric '{m['metric']}'{hint}; metrics: {_valid_names()}"
        )
    if m["pct"] and (m["suffix"] or m["unit"]):
        raise UsageError(f"guardrail '{text}': a percentage takes no k/M/B suffix or unit")
    if m["unit"] and m["suffix"]:
        raise UsageError(f"guardrail '{text}': write the power as kW or MW, without a k/M/B multiplier")
    if m["unit"] and not metric.endswith("_kw"):
        raise UsageError(
            f"guardrail '{text}': {metric} is not a power; kW and MW apply to it_power_kw, facility_power_kw"
        )
    number = m["num"].replace(" ", "").replace("$", "").replace("_", "").replace(",", "")
    amount = float(number) * _SUFFIX[m["suffix"]] * _POWER_UNIT_KW.get((m["unit"] or "kw").lower(), 1)
    return Guardrail(metric=metric, op=m["op"], amount=amount, percent=bool(m["pct"]), text=text.strip())


def _compare(value: float, op: str, amount: float) -> bool:
    return {">": value > amount, ">=": value >= amount, "<": value < amount, "<=": value <= amount}[op]


def breached(d: PlanDiff, guardrails: Iterable[Guardrail]) -> list[str]:
    """A message per breached rule, e.g. `tco_usd rose +35.0% (+$970M): breaches tco>+5%`.

    A percentage rule on a metric that was 0 in base counts the change as infinitely large in its
    direction (a new scenario breaches `tco>+5%`).
    """
    out = []
    for g in guardrails:
        m = d.metric(g.metric)
        if g.percent:
            if m.pct is not None:
                hit = _compare(m.pct, g.op, g.amount)
            else:
                hit = m.delta != 0 and _compare(math.copysign(math.inf, m.delta), g.op, g.amount)
        else:
            hit = _compare(m.delta, g.op, g.amount)
        if hit:
            verb = "rose" if m.delta > 0 else "fell" if m.delta < 0 else "did not change"
            pct = format_pct(m) or "n/a"
            rule = g.text or f"{g.metric}{g.op}{g.amount:+g}{'%' if g.percent else ''}"
            out.append(
                f"{m.metric} {verb} {pct} ({format_delta(m.metric, m.delta)}, "
                f"{format_metric(m.metric, m.old)} → {format_metric(m.metric, m.new)}): breaches {rule}"
            )
    return out

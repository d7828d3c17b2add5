"""A plan diff in its stable machine form: `{"format": "trnplan-diff/1", ...}`, sorted keys, canonical
numbers, so the same two plans always give the same bytes."""

from __future__ import annotations

import json
from typing import Any

from trnplan.diff.model import PeriodsDiff, PlanDiff
from trnplan.numbers import canon

DIFF_FORMAT = "trnplan-diff/1"


def diff_to_dict(d: PlanDiff) -> dict[str, Any]:
    """The diff as plain data: provenance, counts, summary, choices, deployments, BOM, attribution, notes."""
    data = {
        "format": DIFF_FORMAT,
        "scenario": d.scenario,
        "base": {"label": d.base_label, "inputs_digest": d.base_digest, "solver": d.base_solver},
        "head": {"label": d.head_label, "inputs_digest": d.head_digest, "solver": d.head_solver},
        "different": d.different,
        "counts": d.counts(),
        "summary": [
            {"metric": m.metric, "unit": m.unit, "old": m.old, "new": m.new, "delta": m.delta, "pct": m.pct}
            for m in d.summary
        ],
        "choices": [{"site": c.site, "field": c.field, "old": c.old, "new": c.new} for c in d.choices],
        "deployments": [
            {
                "sign": c.sign,
                "site": c.site,
                "key": c.key,
                "fields": {f: {"old": old, "new": new} for f, (old, new) in c.fields.items()},
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
        "inputs": [{"name": c.name, "old": c.old, "new": c.new} for c in d.inputs],
    }
    if d.periods is not None:
        data["periods"] = _periods_to_dict(d.periods)
    out: dict[str, Any] = canon(data)
    return out


def _periods_to_dict(p: PeriodsDiff) -> dict[str, Any]:
    """The JSON form of the periods of a diff."""
    return {
        "kind": p.kind,
        "base_starts": p.base_starts,
        "head_starts": p.head_starts,
        "periods": [
            {
                "start": d.start,
                "in_base": d.in_base,
                "in_head": d.in_head,
                "figures": [
                    {"metric": f.metric, "unit": f.unit, "old": f.old, "new": f.new, "delta": f.delta}
                    for f in d.figures
                ],
                "options": [
                    {"sign": o.sign, "site": o.site, "key": o.key,
                     "units": {"old": o.old_units, "new": o.new_units},
                     "bought": {"old": o.old_bought, "new": o.new_bought}}
                    for o in d.options
                ],
                "fabric": [{"site": f.site, "field": f.field, "old": f.old, "new": f.new} for f in d.fabric],
            }
            for d in p.periods
        ],
    }


def diff_to_json(d: PlanDiff) -> str:
    """Stable machine form: `{"format": "trnplan-diff/1", ...}`, sorted keys, canonical numbers."""
    return json.dumps(diff_to_dict(d), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"

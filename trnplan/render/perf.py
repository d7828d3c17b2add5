"""`trnplan perf`: what a workload's job gets on each form and scale-up option, as a table and as data."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trnplan.numbers import canon, fmt
from trnplan.render.tables import Col, Grid

if TYPE_CHECKING:
    from trnplan.perf import Performance

Rows = list[tuple[str, str, "Performance | None"]]


def _layout_text(p: Performance) -> str:
    lay = p.layout
    parts = [f"tp{lay.tp}", f"ep{lay.ep}", f"pp{lay.pp}", f"dp{lay.dp}"]
    if lay.cp > 1:
        parts.append(f"cp{lay.cp}")
    return " ".join(parts)


def _s(seconds: float) -> str:
    return f"{seconds:.3g} s"


def render_perf(workload_id: str, name: str, rows: Rows) -> Grid:
    """One row per form and scale-up option: layout, step time by part, MFU, goodput, efficiency."""
    # At 80 columns the step's parts are left out first (memory and bubble, then compute, then the
    # collectives), then the step itself: what the optimizer plans with (efficiency, PF/chip) and its
    # two factors stay.
    heads = {"step": 1, "compute": 3, "scale-up": 2, "scale-out": 2, "bubble": 4, "memory": 4, "MFU": 0,
             "goodput": 0, "efficiency": 0, "PF/chip": 0}
    t = Grid(
        f"Workload {workload_id}: {name}",
        [Col("form"), Col("scale-up"), Col("layout", wrap=True, min_width=12)]
        + [Col(h, right=True, priority=rank) for h, rank in heads.items()],
        keys=2,
        stack=[(0, 1), (2,), (3, 4), (5, 6), (7, 8), (9, 10), (11, 12)],
        caption="efficiency = MFU x (job-precision peak / FP8 peak) x goodput, of dense FP8 peak; "
        "PF/chip: effective FP8 PFLOPs per chip",
    )
    for form, switch, p in rows:
        if p is None:
            t.add_row(form, switch, "does not fit", *(["-"] * len(heads)))
            continue
        s = p.step
        t.add_row(
            form, switch, _layout_text(p),
            _s(s.step_s), _s(s.compute_s), _s(s.scale_up_s), _s(s.scale_out_s), _s(s.bubble_s),
            _s(s.memory_s),
            fmt(p.mfu, "pct"), fmt(p.goodput, "pct"), fmt(p.efficiency, "pct"),
            fmt(p.effective_pflops_per_chip, "num"),
        )
    return t


def perf_data(rows: Rows) -> list[dict[str, Any]]:
    """The JSON form: one object per form and scale-up option (design.md's fields); `fits` false and no
    figures where the job fits no layout."""
    out: list[dict[str, Any]] = []
    for form, switch, p in rows:
        if p is None:
            out.append({"form": form, "scale_up_switch": switch, "fits": False})
            continue
        s, lay = p.step, p.layout
        out.append({
            "form": form,
            "scale_up_switch": switch,
            "fits": True,
            "layout": {"tp": lay.tp, "ep": lay.ep, "pp": lay.pp, "dp": lay.dp, "cp": lay.cp,
                       "interleave": lay.interleave},
            "step_s": s.step_s,
            "breakdown": {"compute_s": s.compute_s, "scale_up_s": s.scale_up_s, "scale_out_s": s.scale_out_s,
                          "bubble_s": s.bubble_s, "memory_s": s.memory_s},
            "mfu": p.mfu,
            "goodput": p.goodput,
            "efficiency": p.efficiency,
            "effective_pflops_per_chip": p.effective_pflops_per_chip,
            "hbm_used_gb": s.hbm_used_bytes / 1e9,
        })
    return canon(out)  # type: ignore[no-any-return]

"""How a command's outcomes read: infeasibility explanations, warnings about unproven plans, the drift
report of `optimize --check`, and failures as JSON objects for `--format json`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trnplan.errors import (
    EXIT_INTERRUPTED,
    InfeasibleError,
    InputError,
    SolverError,
    SpecError,
    TrnplanError,
    UsageError,
)

if TYPE_CHECKING:
    from trnplan.plan.model import Plan

ERROR_FORMAT = "trnplan-error/1"

_KINDS: tuple[tuple[type[TrnplanError], str], ...] = (
    (SpecError, "invalid_specs"),
    (InfeasibleError, "infeasible"),
    (SolverError, "solver"),
    (UsageError, "usage"),
    (InputError, "invalid_input"),
)


def explanation_groups(explanation: list[str]) -> list[dict[str, Any]]:
    """An explanation's lines as groups: each unindented line and the indented details under it."""
    groups: list[dict[str, Any]] = []
    for line in explanation:
        if line[:1].isspace() and groups:
            groups[-1]["details"].append(line.strip())
        else:
            groups.append({"what": line.strip(), "details": []})
    return groups


def error_data(exc: BaseException, scenario: str | None = None) -> dict[str, Any]:
    """A failure as a JSON object: `{"format": "trnplan-error/1", "error": {"kind", "message", "exit_code",
    ...}}`, with what must give for an infeasible scenario and every located problem for invalid specs."""
    if isinstance(exc, KeyboardInterrupt):
        kind, code, message = "interrupted", EXIT_INTERRUPTED, "interrupted"
    elif isinstance(exc, TrnplanError):
        kind = next((name for cls, name in _KINDS if isinstance(exc, cls)), "error")
        code, message = exc.exit_code, str(exc).split("\n")[0]
    else:
        kind, code, message = "internal", 1, f"{type(exc).__name__}: {exc}"
    error: dict[str, Any] = {"kind": kind, "message": message, "exit_code": code}
    if isinstance(exc, InfeasibleError):
        error["scenario"] = exc.scenario
        error["must_give"] = explanation_groups(exc.explanation)
    elif scenario is not None:
        error["scenario"] = scenario
    if isinstance(exc, SpecError):
        error["problems"] = [
            {"file": p.file, "line": p.line, "col": p.col, "path": p.path, "message": p.message}
            for p in exc.problems
        ]
    return {"format": ERROR_FORMAT, "error": error}


def infeasible_text(exc: InfeasibleError) -> str:
    """The explanation as a list; an indented line is a detail of the line above it."""
    lines = [f"error: scenario '{exc.scenario}' is infeasible: no plan meets it."]
    for line in exc.explanation:
        if line[:1].isspace():
            lines.append("      " + line.strip())
        else:
            lines.append("  - " + line)
    return "\n".join(lines)


def unproven_warning(scenario_id: str, plan: Plan, checking: bool = False) -> str | None:
    """The warning for a plan the solver did not prove optimal, nor within the gap asked for (it stopped
    at the time limit). Where no gap was asked, it suggests one, which proves sooner: not for
    max_perf_per_tco (its ratio steps are proven optimal whatever the gap) nor under `--check` (`checking`:
    the plan file's own gap is what is compared)."""
    if plan.solver is None or plan.solver.status == "optimal" or plan.solver.within_target:
        return None
    from trnplan.numbers import fmt

    gap = plan.solver.mip_gap
    gap_text = "unknown" if gap is None else fmt(gap, "pct")
    ratio = plan.objective is not None and plan.objective.kind == "max_perf_per_tco"
    suggestion = "" if plan.solver.gap_target or ratio or checking else (
        " Or ask for less: --gap 0.0001 (a plan proven within 0.01%) is proven sooner."
    )
    return (
        f"WARNING: '{scenario_id}': the solver stopped at the time limit; this plan is feasible but "
        f"NOT proven optimal (status {plan.solver.status}, gap {gap_text}). "
        f"Raise --time-limit to prove it.{suggestion}"
    )


def _better(kind: str, value: float, than: float) -> bool:
    return value < than * (1 - 1e-12) if kind == "min_tco" else value > than * (1 + 1e-12)


def better_alternatives(plan: Plan) -> str | None:
    """Alternatives whose objective beats a plan not proven optimal: the search stopped before it found
    them, at the time limit or at the gap asked for (`--gap`)."""
    if plan.solver is None or plan.solver.status == "optimal" or plan.objective is None:
        return None
    kind, value, unit = plan.objective.kind, plan.objective.value, plan.objective.unit
    better = [
        (i, alt)
        for i, alt in enumerate(plan.alternatives, 1)
        if alt.objective is not None and _better(kind, alt.objective, value)
    ]
    if not better:
        return None
    from trnplan.numbers import fmt

    def show(v: float) -> str:
        return fmt(v, "usd") if kind == "min_tco" else f"{fmt(v)} {unit}"

    listed = "; ".join(f"#{i} without {alt.without}: {show(alt.objective or 0.0)}" for i, alt in better)
    if plan.solver.within_target:  # it stopped at the gap asked for: raising the time limit changes nothing
        return (
            f"NOTE: '{plan.scenario}': {len(better)} alternative{'s' if len(better) != 1 else ''} beat this "
            f"plan ({kind} {show(value)}), {plan.solver.proof}: {listed}. Both are within the gap asked "
            "for; --gap 0 proves the optimum."
        )
    return (
        f"NOTE: '{plan.scenario}': {len(better)} alternative{'s' if len(better) != 1 else ''} beat this "
        f"unproven plan ({kind} {show(value)}): {listed}. The search stopped before it found "
        f"{'them' if len(better) != 1 else 'it'}; raise --time-limit."
    )

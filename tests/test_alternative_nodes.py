"""Alternatives' searches end at a node limit (`alternatives.ALTERNATIVE_NODES`, HiGHS's `mip_max_nodes`),
so a command without a time limit ends, at the same place on every machine; an alternative that a limit
stopped before its gap was proven says so, with the gap it reached, in the plan file, the terminal's
table and the report."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from trnplan.optimize import alternatives, optimize, progress
from trnplan.optimize.accelerate import relaxed
from trnplan.optimize.solution import Termination
from trnplan.optimize.solve import highs_copy, node_limit
from trnplan.plan import plan_scenario, read_plan, write_plan
from trnplan.plan.model import Alternative
from trnplan.plan.tables import stopped_text
from trnplan.render import Trimmed, render_plan
from trnplan.report.page import _alternatives as report_alternatives
from trnplan.specs.load import load_specs
from trnplan.testkit.portfolio import load_portfolio, phased_portfolio_specs

REPO = Path(__file__).resolve().parents[1]


def printed(renderable: Any, width: int = 120) -> str:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None, highlight=False, soft_wrap=False).print(
        Trimmed(renderable))
    return out.getvalue()


def test_a_copy_made_under_a_node_limit_has_it_and_a_lower_limit_of_its_own_stays() -> None:
    catalog = load_portfolio(phased_portfolio_specs(3, 2, 0))
    (scenario_id,) = catalog.scenarios
    from trnplan.optimize import build_model, set_objective

    model = build_model(catalog, scenario_id, start=False)
    set_objective(model, model.scenario.objective)

    def nodes(**kw: Any) -> int:
        return int(highs_copy(model.prob, 1e-4, **kw).h.getOptionValue("mip_max_nodes")[1])

    unlimited = nodes()
    with node_limit(300):
        assert nodes() == 300
        assert nodes(options=relaxed.LEAN_SEARCH) == relaxed.LEAN_NODES  # 20: lower, kept
        with node_limit(7):
            assert nodes(options=relaxed.LEAN_SEARCH) == 7
        assert nodes() == 300
    assert nodes() == unlimited > 10**9  # outside the block: no limit


@pytest.fixture(scope="module")
def stopped_plan() -> Any:
    """trn3-life with 3 alternatives, each search allowed one node: those HiGHS does not prove at its root
    are stopped there (with the default, every one is proven: the committed plan)."""
    catalog = load_specs([REPO / "specs"])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(alternatives, "ALTERNATIVE_NODES", 1)
        return plan_scenario(catalog, "trn3-life", alternatives=3)


def test_an_alternative_stopped_at_its_node_limit_says_so_with_its_gap(stopped_plan: Any) -> None:
    plan = stopped_plan
    committed = read_plan(REPO / "plans" / "trn3-life.yaml")
    assert all(a.stopped is None and a.mip_gap is None for a in committed.alternatives)
    stopped = [a for a in plan.alternatives if a.stopped]
    assert stopped, "no alternative of trn3-life proved at its root: the node limit was not applied"
    for alt in stopped:
        assert alt.stopped == "node limit" and alt.status == "feasible"
        assert alt.mip_gap is not None and alt.mip_gap > alternatives.ALTERNATIVE_GAP
    for alt in plan.alternatives:
        if not alt.stopped:
            assert alt.mip_gap is None


def test_the_plan_file_keeps_what_stopped_it(stopped_plan: Any, tmp_path: Path) -> None:
    write_plan(stopped_plan, tmp_path / "p.yaml")
    text = (tmp_path / "p.yaml").read_text()
    assert "stopped: node limit" in text
    again = read_plan(tmp_path / "p.yaml")
    assert [(a.stopped, a.mip_gap) for a in again.alternatives] == [
        (a.stopped, a.mip_gap) for a in stopped_plan.alternatives]
    with pytest.raises(ValueError):
        Alternative(without="form x", choice="c", status="feasible", stopped="bored")  # type: ignore[arg-type]


@pytest.mark.parametrize("fields", [
    {"status": "optimal", "tco_usd": 1.0, "stopped": "node limit"},  # proven, yet stopped
    {"status": "infeasible", "stopped": "time limit"},  # no plan, yet stopped
    {"status": "feasible", "tco_usd": 1.0, "mip_gap": 0.001},  # a gap without a limit
    {"status": "feasible", "tco_usd": 1.0, "stopped": "node limit", "mip_gap": -0.1},
])
def test_a_plan_file_that_contradicts_itself_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Alternative(without="form x", choice="c", **fields)


def test_a_stopped_alternative_is_never_merged_into_a_proven_ones_row(stopped_plan: Any) -> None:
    """Two choices whose best plans are the same plan share a row, unless a limit stopped either search:
    its row must carry its own mark."""
    from trnplan.plan.tables import alternative_rows

    alt = next(a for a in stopped_plan.alternatives if a.stopped)
    proven = alt.model_copy(update={"without": "form other", "stopped": None, "mip_gap": None})
    plan = stopped_plan.model_copy(update={"alternatives": [proven, alt]})
    rows = alternative_rows(plan)
    assert [w for w, _a in rows] == [["form other"], [alt.without]]
    twin = proven.model_copy(update={"without": "form third"})
    merged = alternative_rows(stopped_plan.model_copy(update={"alternatives": [proven, twin]}))
    assert [w for w, _a in merged] == [["form other", "form third"]]  # as before, when both are proven


def test_the_table_marks_it_and_says_why_and_the_report_too(stopped_plan: Any) -> None:
    plan = stopped_plan
    text = printed(render_plan(plan), 200)
    marked = [line for line in text.splitlines() if line.rstrip().endswith("%*")]
    assert len(marked) == len([a for a in plan.alternatives if a.stopped])
    flat = " ".join(text.split())
    for i, alt in enumerate(plan.alternatives, 1):
        if alt.stopped:
            assert f"#{i} {stopped_text(alt)}" in flat
    assert "*: not proven: #" in flat
    html = report_alternatives(plan)
    assert "stopped at the node limit, within" in html
    proven = read_plan(REPO / "plans" / "trn3-life.yaml")
    assert "not proven" not in " ".join(printed(render_plan(proven), 200).split())


def test_stopped_text_names_the_limit_and_the_gap() -> None:
    alt = Alternative(without="form x", choice="c", status="feasible", tco_usd=1.0, stopped="time limit",
                      mip_gap=0.000383)
    assert stopped_text(alt) == "stopped at the time limit, within 0.038% of its bound"
    alt = Alternative(without="form x", choice="c", status="feasible", tco_usd=1.0, stopped="interrupted")
    assert stopped_text(alt) == "interrupted, gap unknown"
    assert stopped_text(Alternative(without="form x", choice="c", status="feasible")) == ""


def test_a_large_phased_models_alternatives_stop_at_the_limit_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The path of the first plans (lean and HiGHS's searches, `relaxed.search`): both searches of an
    alternative have the limit, the plan's have none."""
    monkeypatch.setattr(relaxed, "FIRST_PLAN_MIN_SITE_PERIODS", 0)
    monkeypatch.setattr(alternatives, "ALTERNATIVE_NODES", 1)
    monkeypatch.setattr(relaxed.highs, "TOGETHER_THREADS", 2)  # the searches on threads, as on 2 cores
    catalog = load_portfolio(phased_portfolio_specs(5, 3, 1))
    (scenario_id,) = catalog.scenarios
    solve = sys.modules["trnplan.optimize.solve"]  # (the package's `solve` is the function)
    limits: list[tuple[str, int]] = []  # each search as it is armed (HiGHS's, the lean one), by stage
    stage = [""]
    real = solve.armed

    def armed(model: Any, *args: Any) -> Any:
        limits.append((stage[0], int(model.h.getOptionValue("mip_max_nodes")[1])))
        return real(model, *args)

    first_plans: list[tuple[str, int]] = []  # the first plans' MILPs, run on the caller's thread
    run = relaxed.highs.run

    def noted(h: Any) -> None:
        if "a first plan" in stage[0]:
            first_plans.append((stage[0], int(h.getOptionValue("mip_max_nodes")[1])))
        run(h)

    monkeypatch.setattr(solve, "armed", armed)
    monkeypatch.setattr(relaxed, "armed", armed)
    monkeypatch.setattr(relaxed.highs, "run", noted)
    with progress.watch(lambda p: stage.__setitem__(0, p.stage)):
        solution = optimize(catalog, scenario_id, alternatives=2, gap=1e-4)
    of_plan = sorted(n for s, n in limits if s.startswith("solving"))
    of_alternatives = [n for s, n in limits if s.startswith("alternative")]
    assert of_plan[0] == relaxed.LEAN_NODES and of_plan[-1] > 10**9  # the lean search's own, and none
    assert len(of_alternatives) >= len(solution.alternatives) and all(n <= 1 for n in of_alternatives)
    assert {n for s, n in first_plans if s.startswith("solving")} == {2147483647}  # the plan's: none
    assert {n for s, n in first_plans if s.startswith("alternative")} == {1}


def test_a_ratio_step_stopped_at_its_node_limit_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """max_perf_per_tco: the best plan may be an earlier step's (each proven for its own ratio); when a
    later step is stopped unconverged, what stopped that step is what the result says, not "optimal"."""
    from dataclasses import replace

    import trnplan.optimize as optimize_pkg
    from trnplan.optimize import build_model, solve_objective
    from trnplan.optimize.solution import SolveStatus

    catalog = load_specs([REPO / "specs"])
    model = build_model(catalog, "perf-per-tco")
    steps: list[Any] = []
    real = optimize_pkg.solve

    def second_stopped(prob: Any, *args: Any, **kw: Any) -> Any:
        """Step 1 solved; step 2 stopped at its node limit holding step 1's plan (no better ratio)."""
        if not steps:
            steps.append((real(prob, *args, **kw), {v.name: v.varValue for v in prob.variables()}))
            return steps[0][0]
        first, values = steps[0]
        for v in prob.variables():
            v.varValue = values[v.name]
        steps.append(None)
        return replace(first, status=SolveStatus.FEASIBLE, termination=Termination.SOLUTION_LIMIT)

    monkeypatch.setattr(optimize_pkg, "solve", second_stopped)
    result, _decisions, iterations = solve_objective(model, "highs", None)
    assert iterations == 2 and result.status is SolveStatus.FEASIBLE
    assert result.termination is Termination.SOLUTION_LIMIT


def test_ratio_steps_the_deadline_stopped_say_time_limit() -> None:
    """The deadline passes during step 1 (proven): the steps stop unconverged, at the time limit."""
    import trnplan.optimize as optimize_pkg
    from trnplan.optimize import build_model, solve_objective
    from trnplan.optimize.progress import Deadline
    from trnplan.optimize.solution import SolveStatus

    model = build_model(load_specs([REPO / "specs"]), "perf-per-tco")
    now = [0.0]
    real = optimize_pkg.solve

    def slow(*args: Any, **kw: Any) -> Any:
        result = real(*args, **kw)
        now[0] += 1000.0
        return result

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(optimize_pkg, "solve", slow)
        deadline = Deadline(100.0, clock=lambda: now[0])
        result, _decisions, _iterations = solve_objective(model, "highs", deadline)
    assert result.status is SolveStatus.FEASIBLE and result.termination is Termination.TIME_LIMIT


def test_small_choices_mark_an_alternative_that_was_stopped() -> None:
    """moe-144 puts a few units on the 320-lane switch; were its alternative stopped, its row says so."""
    from trnplan.plan.tables import small_choices

    plan = read_plan(REPO / "plans" / "moe-144.yaml")
    small = small_choices(plan)
    assert small and not any(c.stopped for c in small)
    without = small[0].without
    alternatives_ = [a.model_copy(update={"stopped": "node limit", "mip_gap": 0.0003}) if a.without == without
                     else a for a in plan.alternatives]
    marked = plan.model_copy(update={"alternatives": alternatives_})
    text = " ".join(printed(render_plan(marked), 200).split())
    assert f"without {without}: stopped at the node limit, within 0.03% of its bound" in text
    before = " ".join(printed(render_plan(plan), 200).split())
    assert "not proven" not in before

"""Issue 17's machinery is exact: capacity cuts, the MIP start and its reduced-cost fixings change how
fast the proof comes, never the optimum.

- The property tests' drawn worlds are solved with every piece forced on as one of their drawn switches
  (tests/test_property_enumeration.py, tests/test_property_phased.py: `machinery_on`): the optimum
  equals brute-force enumeration, `check_plan` is clean, the status is optimal.
- A hand-worked capacity cut, and a start on a generated portfolio checked row by row: feasible, no
  better than the optimum, its bound no worse, and nothing it fixes off is used by the first model's
  optimum, which the new machinery returns to the cent with the same decisions.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trnplan.costs import evaluate
from trnplan.optimize import build_model, solve_objective
from trnplan.optimize.accelerate.start import mip_start, tightened
from trnplan.optimize.model import set_objective
from trnplan.testkit.builders import base_specs, catalog_from_dict


def _cut_world() -> dict[str, Any]:
    """Site a: air only, 1 MW, positions to spare. air8 = 8 PFLOPs and 10 kW per unit, 8 ports of
    100 Gb/s; switch sw radix 64: one tier serves 64 ports = 8 units = 64 PFLOPs; two tiers serve the
    100 units (800 PFLOPs) that 1 MW powers. No fabric, no units (every unit needs ports)."""
    data = base_specs()
    data["sites"]["a"].update(cooling=["air"], rack_positions=1000)
    data["scenarios"]["s"]["demand"] = {"fp8_pflops": 8}
    return data


def test_capacity_cut_by_hand() -> None:
    model = build_model(catalog_from_dict(_cut_world()), "s")
    sm = model.sites[0]
    assert [o.form for o in sm.options] == ["air8"] and sorted(sm.y) == [("sw", 1), ("sw", 2)]
    cut = {c.name: c for c in model.prob.constraints()}["capcut_0_fp8_pflops"]
    n_coef = cut[sm.n[0]]
    # 8 n <= 64 y1 + 800 y2 (scaled; W a hair high): per unit of n, y1 carries 8 units, y2 100.
    assert -cut[sm.y[("sw", 1)]] / n_coef == pytest.approx(8, rel=1e-6)
    assert -cut[sm.y[("sw", 2)]] / n_coef == pytest.approx(100, rel=1e-6)
    assert -cut.constant / n_coef == pytest.approx(0, abs=1e-5)  # W0: nothing without a fabric
    first = build_model(catalog_from_dict(_cut_world()), "s", cuts=False)
    assert "capcut_0_fp8_pflops" not in {c.name for c in first.prob.constraints()}


def test_capacity_cut_never_cuts_the_optimum() -> None:
    """The first model's optimum satisfies every cut (on a generated portfolio with many modes)."""
    catalog, scenario_id = _portfolio(6)
    first = build_model(catalog, scenario_id, cuts=False, start=False)
    result, _decisions, _ = solve_objective(first, "highs", None)
    assert result.status.value == "optimal"
    values = {v.name: v.value() or 0.0 for v in first.prob.variables()}
    cuts = {
        c.name: c for c in build_model(catalog, scenario_id).prob.constraints() if c.name.startswith("capcut")
    }
    assert cuts
    for name, row in cuts.items():
        assert sum(coef * values[v.name] for v, coef in row.items()) + row.constant <= 1e-9, name


def _portfolio(n: int, seed: int = 0) -> tuple[Any, str]:
    from trnplan.testkit.portfolio import portfolio_specs

    data = portfolio_specs(n, seed)
    return catalog_from_dict(data), f"portfolio-{n}"


def _feasible(model: Any, values: dict[str, float]) -> list[str]:
    bad = []
    for v in model.prob.variables():
        x = values[v.name]
        if (v.lowBound is not None and x < v.lowBound - 1e-6) or (
            v.upBound is not None and x > v.upBound + 1e-6
        ):
            bad.append(v.name)
        if v.cat == "Integer" and abs(x - round(x)) > 1e-6:
            bad.append(v.name)
    for row in model.prob.constraints():
        name = row.name
        lhs = sum(coef * values[v.name] for v, coef in row.items()) + row.constant
        scale = 1e-6 * max(1.0, abs(row.constant))
        if (row.sense <= 0 and lhs > scale) or (row.sense >= 0 and lhs < -scale):
            bad.append(name)
    return bad


def test_start_by_hand_on_a_portfolio() -> None:
    """A 10-site portfolio (start forced on): the start is a feasible plan, bound <= optimum <= start,
    its fixings spare the first model's optimum, and the machinery returns that optimum: same decisions,
    TCO to the cent."""
    catalog, scenario_id = _portfolio(10)
    scenario = catalog.scenarios[scenario_id]
    first = build_model(catalog, scenario_id, cuts=False, start=False)
    ref, ref_decisions, _ = solve_objective(first, "highs", None)
    assert ref.status.value == "optimal" and ref.objective is not None and ref_decisions is not None
    used = {v.name for sm in first.sites for v in sm.y.values() if round(v.value() or 0) == 1}
    optimum = {v.name: v.value() or 0.0 for v in first.prob.variables()}

    model = build_model(catalog, scenario_id, start=True)
    assert model.use_start
    set_objective(model, "min_tco")
    start = mip_start(model)
    assert start is not None
    assert _feasible(model, start.values) == []
    assert start.bound <= ref.objective + 1e-6 <= start.objective + 2e-6
    assert start.fix_off and not used & {v.name for v in start.fix_off}
    # one reduced-cost row per site; the start and the first model's optimum both meet every one
    assert len(start.rows) == len(model.sites)
    for terms, upper in start.rows:
        assert sum(c * start.values[name] for name, c in terms) <= upper + 1e-9
        assert sum(c * optimum.get(name, 0.0) for name, c in terms) <= upper + 1e-9
    bounds = [v.upBound for v in start.fix_off]
    with tightened(start):
        assert all(v.upBound == 0 for v in start.fix_off)
    assert [v.upBound for v in start.fix_off] == bounds  # undone after the solve

    result, decisions, _ = solve_objective(model, "highs", None)
    assert result.status.value == "optimal" and decisions is not None
    assert decisions == ref_decisions
    tco = evaluate(catalog, scenario, decisions.deployments, dict(decisions.scale_out)).totals.tco_usd
    ref_tco = evaluate(
        catalog, scenario, ref_decisions.deployments, dict(ref_decisions.scale_out)
    ).totals.tco_usd
    assert round(tco, 2) == round(ref_tco, 2)


def test_polish_frees_the_counts_when_the_fixed_ones_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """The polish fixes the unit counts of the sites the master took one plan of whole; when those plans
    cannot make a plan together (here: every site held at the empty plan, against a positive demand), it
    frees the counts and still returns a feasible plan, no cheaper than the optimum."""
    import trnplan.optimize.accelerate.start as start_module

    catalog, scenario_id = _portfolio(10)
    first = build_model(catalog, scenario_id, cuts=False, start=False)
    ref, _, _ = solve_objective(first, "highs", None)
    assert ref.objective is not None
    choose, polish = start_module._choose, start_module._polish
    fixed_polishes: list[Any] = []

    def empty_plans(pricings: Any, index: Any, x: Any) -> Any:
        chosen = choose(pricings, index, x)
        return [(mode, pr.columns[0]) for pr, (mode, _plan) in zip(pricings, chosen, strict=True)]

    def record(model: Any, full: Any, pricings: Any, chosen: Any, fix: bool, start: Any = None) -> Any:
        values = polish(model, full, pricings, chosen, fix, start)
        if fix:
            assert all(plan is pr.columns[0] for pr, (_m, plan) in zip(pricings, chosen, strict=True))
            fixed_polishes.append(values)
        return values

    monkeypatch.setattr(start_module, "_choose", empty_plans)
    monkeypatch.setattr(start_module, "_polish", record)
    model = build_model(catalog, scenario_id, start=True)
    set_objective(model, "min_tco")
    start = mip_start(model)
    assert len(fixed_polishes) == 1 and fixed_polishes[0] is not None
    values = dict(zip((v.name for v in model.prob.variables()), fixed_polishes[0], strict=True))
    assert _feasible(model, values) == []
    assert sum(round(values[v.name]) for sm in model.sites for v in sm.n) > 0
    assert start is not None and _feasible(model, start.values) == []
    assert start.objective >= ref.objective - 1e-6


def test_start_within_a_gap_skips_its_second_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """At gap 0 the start looks for a second plan (its margin columns, a second master and polish); within
    a gap its bound already proves the first plan within, that search is skipped and the first plan is the
    start, and `solve_objective` returns it as the plan: within the gap of the optimum, with that bound."""
    import trnplan.optimize.accelerate.start as start_module

    catalog, scenario_id = _portfolio(10)
    ref, _, _ = solve_objective(build_model(catalog, scenario_id, cuts=False, start=False), "highs", None)
    assert ref.objective is not None
    calls: list[str] = []
    plan, margin = start_module._integer_plan, start_module.margin_columns

    def planned(*args: Any, **kwargs: Any) -> Any:
        calls.append("plan")
        return plan(*args, **kwargs)

    def margins(*args: Any, **kwargs: Any) -> Any:
        calls.append("margin")
        return margin(*args, **kwargs)

    monkeypatch.setattr(start_module, "_integer_plan", planned)
    monkeypatch.setattr(start_module, "margin_columns", margins)
    starts = {}
    for gap in (0.0, 0.1):
        calls.clear()
        model = build_model(catalog, scenario_id, start=True)
        set_objective(model, "min_tco")
        starts[gap] = (mip_start(model, gap), list(calls), model)
    exact, loose = starts[0.0], starts[0.1]
    assert exact[1] == ["plan", "margin", "plan"]
    assert loose[1] == ["plan"]
    start, _, model = loose
    assert start is not None and start.prices is not None and _feasible(model, start.values) == []
    within = start_module.relative_gap(model, start.objective, start.bound)
    assert 0 <= within <= 0.1
    result, decisions, _ = solve_objective(model, "highs", None, gap=0.1)
    assert result.status.value == "feasible" and decisions is not None and result.objective is not None
    assert result.bound is not None and result.bound <= ref.objective + 1e-6
    # the gap said is the plan's distance to that bound, in the objective's own terms (its constant in)
    said = (result.objective - result.bound) / abs(result.objective)
    assert result.mip_gap == pytest.approx(said, rel=1e-9)
    assert result.mip_gap == pytest.approx(within)
    assert ref.objective - 1e-6 <= result.objective <= ref.objective * 1.1


def test_machinery_is_deterministic() -> None:
    catalog, scenario_id = _portfolio(8, seed=1)
    runs = []
    for _ in range(2):
        model = build_model(catalog, scenario_id, start=True)
        assert model.use_start
        set_objective(model, "min_tco")
        start = mip_start(model)
        assert start is not None
        runs.append(
            (
                sorted(start.values.items()),
                [v.name for v in start.fix_off],
                solve_objective(model, "highs", None)[1],
            )
        )
    assert runs[0] == runs[1]


def test_the_benches_say_whether_a_target_is_met_and_by_how_much() -> None:
    from trnplan.testkit.portfolio import speedup_verdict, time_verdict

    assert time_verdict(30, 29.9, True) == "< 30 s: met"
    assert time_verdict(30, 91.5, True) == "< 30 s: **missed** by 61.5 s (3.0x over)"
    assert time_verdict(30, 30.0, True).startswith("< 30 s: **missed** by 0.0 s")
    assert time_verdict(30, 200.0, False) == "< 30 s: **missed** (no proof in 200 s)"
    assert speedup_verdict(10.0, True) == "10x: met"
    assert speedup_verdict(2.4, True) == "10x: **missed** (2.4x, 4.2x short)"
    # the first model unproven at its limit: its ratio is a lower bound
    assert speedup_verdict(12.5, False) == "10x: met (>= 12.5x)"
    assert speedup_verdict(4.4, False).startswith("10x: not shown (>= 4.4x")


def test_the_phased_bench_fits_80_columns_and_reports_a_tree_that_fails(tmp_path: Any) -> None:
    """`bench/phased.py`'s table is read at 80 columns; a `--base` tree whose worker fails is a "crashed"
    row with the end of what it said, not a KeyError that ends the run."""
    broken = tmp_path / "trnplan"
    broken.mkdir()
    (broken / "__init__.py").write_text('raise SystemExit("this tree is broken on purpose")\n')
    bench = Path(__file__).resolve().parents[1] / "bench" / "phased.py"
    done = subprocess.run([sys.executable, str(bench), "--cases", "3x2", "--models", "today", "--gaps",
                           "0.0001", "--limit", "60", "--base", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, lines
    today, base = (line.split() for line in lines[2:4])
    assert today[:4] == ["3x2", "0", "0.0001", "today"] and today[4] in ("optimal", "feasible")
    assert base[3:5] == ["base", "crashed"]
    assert lines[4].strip() == "this tree is broken on purpose"

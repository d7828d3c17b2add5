"""A plan across futures (`trnplan.optimize.futures`, `trnplan.futures`): the extensive form against a
brute force over tiny worlds (two periods, two or three futures, a few units: every plan of each future
enumerated through the cost model, grouped by the shared first-period purchases), VSS >= 0 and EVPI >= 0
in every test, and one future giving the deterministic plan.

The world: the builders' tiny one made phased (2026-01 and 2027-01 over a two-year window; 16 chips, then
32), few rack positions; the futures move the chip's price, the liquid cooling's PUE and capex and the
power price.
"""

from __future__ import annotations

import copy
from typing import Any

import conftest
import pytest

from trnplan.futures import plan_across_futures
from trnplan.numbers import risk_of
from trnplan.optimize.futures import shared_periods
from trnplan.plan.build import plan_scenario
from trnplan.testkit.builders import base_specs, catalog_from_dict
from trnplan.testkit.futures_oracle import best_across_futures, shared_key_of


def phased_world() -> dict[str, Any]:
    world = base_specs()
    scenario = world["scenarios"]["s"]
    scenario.update(periods=["2026-01", "2027-01"], horizon_years=2,
                    demand={"2026-01": {"chips": 16}, "2027-01": {"chips": 32}})
    world["sites"]["a"].update(rack_positions=4)
    world["sites"]["b"] = {**world["sites"]["a"], "electricity_usd_per_kwh": 0.3, "cooling": ["air"],
                           "rack_positions": 3}
    scenario["sites"] = ["a", "b"]
    return world


def future(world: dict[str, Any], **changes: float) -> dict[str, Any]:
    out = copy.deepcopy(world)
    for path, value in changes.items():
        kind, entity, field = path.split("__")
        out[kind][entity][field] = value
    return out


FUTURES = {
    "two: chip price": [dict(chips__x__unit_usd=6000), dict(chips__x__unit_usd=16000)],
    "two: liquid dear or cheap": [dict(cooling__liquid__capex_usd_per_kw=3000, cooling__liquid__pue=1.4),
                                  dict(cooling__liquid__capex_usd_per_kw=0, cooling__liquid__pue=1.05)],
    "three: power and chips": [dict(sites__a__electricity_usd_per_kwh=0.05),
                               dict(sites__a__electricity_usd_per_kwh=0.6, chips__x__unit_usd=12000),
                               dict(sites__b__electricity_usd_per_kwh=0.02, cooling__air__pue=1.9)],
}


def mean_world(world: dict[str, Any], changes: list[dict[str, float]]) -> dict[str, Any]:
    """Each changed input at its mean over the futures (its base value where a future leaves it)."""
    paths = sorted({p for c in changes for p in c})
    means = {}
    for path in paths:
        kind, entity, field = path.split("__")
        means[path] = sum(c.get(path, world[kind][entity][field]) for c in changes) / len(changes)
    return future(world, **means)


@pytest.mark.parametrize("risk", [None, 0.5], ids=["expected", "cvar"])
@pytest.mark.parametrize("name", sorted(FUTURES))
def test_the_plan_across_futures_is_the_brute_force_optimum(name: str, risk: float | None) -> None:
    world = phased_world()
    catalogs = [catalog_from_dict(future(world, **c)) for c in FUTURES[name]]
    average = catalog_from_dict(mean_world(world, FUTURES[name]))
    shared = shared_periods(catalogs[0], "s")
    assert shared == 1
    outcome = plan_across_futures(catalogs, average, "s", shared, risk=risk)
    truth = best_across_futures(catalogs, "s", shared, risk)
    assert truth is not None
    value, _key, scores = truth
    assert outcome.status == "optimal"
    assert outcome.objective_usd == pytest.approx(value, rel=1e-9)
    # the plan's shared purchases reach the optimum: its futures' TCOs are the brute force's for them
    key = shared_key_of(outcome.decisions[0], ["a", "b"], shared)
    for d in outcome.decisions[1:]:
        assert shared_key_of(d, ["a", "b"], shared) == key
    assert risk_of(list(outcome.tco_usd), risk) == pytest.approx(value, rel=1e-9)
    assert len(scores) == len(catalogs)
    assert outcome.vss_usd is not None and outcome.vss_usd >= -1e-6
    assert outcome.evpi_usd >= -1e-6
    if name == "two: liquid dear or cheap" and risk is None:
        # hedging pays here: the plan made for the average future costs more across the futures
        assert outcome.vss_usd > 1000 and outcome.evpi_usd > 1000


def test_one_future_is_the_deterministic_plan() -> None:
    catalog = catalog_from_dict(phased_world())
    outcome = plan_across_futures([catalog], catalog, "s", 1)
    plan = plan_scenario(catalog, "s", alternatives=0)
    assert outcome.objective_usd == pytest.approx(plan.totals.tco_usd, abs=0.01)
    assert outcome.vss_usd == pytest.approx(0, abs=0.01) and outcome.evpi_usd == pytest.approx(0, abs=0.01)


def ranged_world() -> dict[str, Any]:
    world = phased_world()
    world["chips"]["x"]["ranges"] = {"unit_usd": [6000, 16000]}
    world["cooling"]["liquid"]["ranges"] = {"capex_usd_per_kw": [0, 3000], "pue": [1.05, 1.4]}
    return world


@pytest.fixture()
def specs(tmp_path) -> Any:
    return conftest.spec_folder(tmp_path, ranged_world())


def test_optimize_futures_writes_the_plan_file(specs, tmp_path) -> None:
    from conftest import run

    from trnplan.plan.file import read_plan

    out = tmp_path / "hedged.yaml"
    result = run("optimize", "s", "--specs", str(specs), "--futures", "3", "--seed", "1", "--workers", "1",
                 "--out", str(out), columns=80)
    assert result.exit_code == 0, result.stderr
    assert "Across 3 futures (seed 1)" in result.stdout
    assert max(map(len, result.stdout.splitlines())) <= 80
    plan = read_plan(out)
    part = plan.futures
    assert part is not None and plan.periods is not None
    assert (part.n, part.seed, part.decide, part.risk) == (3, 1, "2026-01", None)
    assert len(plan.periods) == 1 and [p.start for p in part.runs[0].periods] == ["2026-01", "2027-01"]
    assert part.expected_tco_usd == pytest.approx(sum(r.tco_usd for r in part.runs) / 3, abs=0.02)
    assert part.vss_usd is not None and part.vss_usd >= -0.01 and part.evpi_usd >= -0.01
    # the draws are sweep --sample's: the same seed draws the same inputs (as the plan file's figures keep
    # them)
    from trnplan.specs.load import load_specs
    from trnplan.sweep.grid import ranged_fields, sample_runs

    runs = sample_runs(ranged_fields(load_specs([specs]), "s"), 3, 1)
    assert [r.set for r in part.runs] == [pytest.approx(r.set, rel=1e-6) for r in runs]
    # every future buys what the top level holds in the shared period
    def first(periods: list) -> dict:
        return {(s, d.key): d.units for s, site in periods[0].sites.items() for d in site.deployments}

    for r in part.runs:
        assert first(r.periods) == first(plan.periods)
    again = tmp_path / "again.yaml"
    assert run("optimize", "s", "--specs", str(specs), "--futures", "3", "--seed", "1", "--out",
               str(again)).exit_code == 0
    assert again.read_bytes() == out.read_bytes()


def test_optimize_futures_with_cvar(specs, tmp_path) -> None:
    from conftest import run

    result = run("optimize", "s", "--specs", str(specs), "--futures", "4", "--risk", "cvar:0.5", "-f", "json")
    assert result.exit_code == 0, result.stderr
    import json

    part = json.loads(result.stdout)["futures"]
    tcos = sorted((r["tco_usd"] for r in part["runs"]), reverse=True)
    assert part["risk"] == "cvar:0.5"
    assert part["risk_tco_usd"] == pytest.approx(sum(tcos[:2]) / 2, abs=0.02)
    assert part["vss_usd"] >= -0.01 and part["evpi_usd"] >= -0.01


@pytest.mark.parametrize("args, said", [
    (["--futures", "2", "--risk", "cvar:1.5"], "--risk takes cvar:A"),
    (["--futures", "2", "--risk", "var:0.5"], "--risk takes cvar:A"),
    (["--risk", "cvar:0.5"], "go with --futures"),
])
def test_bad_futures_options(specs, args, said) -> None:
    from conftest import run

    result = run("optimize", "s", "--specs", str(specs), *args)
    assert result.exit_code == 2 and said in result.stderr


def test_futures_need_a_phased_min_tco_scenario(tmp_path) -> None:
    import yaml
    from conftest import run

    world = base_specs()
    folder = tmp_path / "flat"
    folder.mkdir()
    (folder / "w.yaml").write_text(yaml.safe_dump(world))
    result = run("optimize", "s", "--specs", str(folder), "--futures", "2")
    assert result.exit_code == 2 and "needs a phased scenario" in result.stderr


def test_decide_must_be_a_period_start(tmp_path) -> None:
    import yaml
    from conftest import run

    world = phased_world()
    world["scenarios"]["s"]["decide"] = "2026-05"
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "w.yaml").write_text(yaml.safe_dump(world))
    result = run("optimize", "s", "--specs", str(folder))
    assert result.exit_code == 3 and "decide 2026-05 is not a period start" in result.stderr


def test_report_and_diff_show_the_futures(specs, tmp_path) -> None:
    from conftest import run

    hedged, single = tmp_path / "hedged.yaml", tmp_path / "single.yaml"
    assert run("optimize", "s", "--specs", str(specs), "--futures", "2", "--out", str(hedged)).exit_code == 0
    assert run("optimize", "s", "--specs", str(specs), "--alternatives", "0", "--out",
               str(single)).exit_code == 0
    page = tmp_path / "r.html"
    result = run("report", str(hedged), "--out", str(page))
    assert result.exit_code == 0, result.stderr
    text = page.read_text(encoding="utf-8")
    assert "<h2>Across futures</h2>" in text and "value of the stochastic solution" in text
    shown = run("diff", str(single), str(hedged), "-f", "markdown")
    said = " ".join(shown.stdout.split())
    assert "head: across 2 futures (seed 0, shared to 2026-01): expected TCO" in said


@pytest.fixture(scope="module")
def hedged(tmp_path_factory) -> tuple[Any, Any]:
    """The ranged tiny world's plan across 3 futures (seed 1), solved once: (spec folder, plan file)."""
    from conftest import run

    root = tmp_path_factory.mktemp("hedged")
    specs = conftest.spec_folder(root, ranged_world())
    out = root / "hedged.yaml"
    result = run("optimize", "s", "--specs", str(specs), "--futures", "3", "--seed", "1", "--workers", "1",
                 "--out", str(out))
    assert result.exit_code == 0, result.stderr
    return specs, out


def _future_catalogs(specs: Any, plan: Any) -> list[Any]:
    """Each run's catalog: the specs with the inputs it drew."""
    import json

    from trnplan.specs.load import load_specs

    return [load_specs([specs], [f"{p}={json.dumps(v)}" for p, v in run.set.items()])
            for run in plan.futures.runs]


def test_totals_are_the_expected_figures(hedged) -> None:
    """Every figure of `totals` is the mean over the futures of that future's own (its periods priced in
    its catalog): TCO, capex, opex, energy, per-hour figures; counts rounded to whole numbers."""
    from trnplan.costs import evaluate_decisions
    from trnplan.plan.body import plan_body
    from trnplan.plan.check import check_plan, plan_decisions
    from trnplan.plan.file import read_plan

    specs, out = hedged
    plan = read_plan(out)
    catalogs = _future_catalogs(specs, plan)
    each = []
    for c, r in zip(catalogs, plan.futures.runs, strict=True):
        decisions = plan_decisions(plan.model_copy(update={"periods": r.periods}))
        each.append(plan_body(evaluate_decisions(c, "s", decisions))[0])
    for key in ("tco_usd", "capex_usd", "opex_usd_per_year", "energy_usd_per_year", "usd_per_pflop_hour",
                "fp8_pflop_years", "it_power_kw"):
        mean = sum(t.figure(key) for t in each) / len(each)
        assert plan.totals.figure(key) == pytest.approx(mean, rel=1e-9, abs=0.02), key
    assert plan.totals.racks == round(sum(t.racks for t in each) / len(each))
    assert plan.totals.tco_usd == plan.futures.expected_tco_usd
    assert plan.objective is not None and plan.objective.value == pytest.approx(plan.totals.tco_usd, abs=0.01)
    # the shared purchases are not the whole window: the expected TCO is not the top level's own
    shared_capex = plan.periods[-1].totals.capex_usd
    assert plan.totals.capex_usd > shared_capex
    assert check_plan(plan, load_specs_of(specs), catalogs) == []


def load_specs_of(specs: Any) -> Any:
    from trnplan.specs.load import load_specs

    return load_specs([specs])


def _edited(out: Any, tmp_path: Any, old: str, new: str, after: str) -> Any:
    """A copy of the plan file with the first `old` after the line `after` replaced by `new`."""
    text = out.read_text()
    at = text.index(after)
    i = text.index(old, at)
    edited = tmp_path / "edited.yaml"
    edited.write_text(text[:i] + new + text[i + len(old):])
    return edited


def test_a_tampered_futures_period_is_refused_on_read(hedged, tmp_path) -> None:
    """Reading a plan across futures checks each future's periods as it checks its own: a future's period
    whose installed capex is not what it bought is refused, located at its line (`optimize --check` says
    the same, and report or diff too)."""
    import re

    from conftest import run

    from trnplan.errors import InputError
    from trnplan.plan.file import read_plan

    specs, out = hedged
    text = out.read_text()
    start = "\n  runs:\n"  # the first future's first period is the first after it
    bought = re.search(r"capex_bought_usd: ([0-9.]+)", text[text.index(start):]).group(0)
    value = float(bought.split(": ")[1])
    edited = _edited(out, tmp_path, bought, f"capex_bought_usd: {value + 1000:.2f}", start)
    with pytest.raises(InputError) as caught:
        read_plan(edited)
    message = str(caught.value)
    assert "futures.runs.0.periods.0.totals.capex_usd" in message and "edited.yaml:" in message, message
    result = run("optimize", "s", "--specs", str(specs), "--futures", "3", "--seed", "1", "--workers", "1",
                 "--check", "--out", str(edited))
    assert result.exit_code != 0 and "futures.runs.0.periods.0" in result.stderr
    assert run("optimize", "s", "--specs", str(specs), "--futures", "3", "--seed", "1", "--workers", "1",
               "--check", "--out", str(out)).exit_code == 0


def test_a_future_priced_other_than_its_draw_fails_the_re_check(hedged) -> None:
    """A forgery consistent in itself (a run's drawn chip price changed, its periods left as priced) passes
    the read but not `check_plan` against the future it names: its periods' capex is not that future's."""
    from trnplan.plan.check import check_plan
    from trnplan.plan.file import read_plan

    specs, out = hedged
    plan = read_plan(out)
    runs = list(plan.futures.runs)
    drawn = dict(runs[2].set)
    drawn["chips.x.unit_usd"] = 6000.0 if drawn["chips.x.unit_usd"] > 11000 else 16000.0
    runs[2] = runs[2].model_copy(update={"set": drawn})
    forged = plan.model_copy(update={"futures": plan.futures.model_copy(update={"runs": runs})})
    problems = check_plan(forged, load_specs_of(specs), _future_catalogs(specs, forged))
    assert any(p.startswith("futures.runs.2.periods.0.") and "capex" in p for p in problems), problems
    assert not any(p.startswith(("futures.runs.0.", "futures.runs.1.")) for p in problems)


def test_the_futures_bench_skips_the_per_future_solves_at_zero() -> None:
    """`bench/futures.py --per-future 0` times the extensive form only (it crashed with a UsageError)."""
    import subprocess
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[1] / "bench" / "futures.py"
    done = subprocess.run([sys.executable, str(bench), "--sizes", "2", "--per-future", "0"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "| 2 | optimal" in done.stdout and "Per-future" not in done.stdout
    bad = subprocess.run([sys.executable, str(bench), "--sizes", "2", "--per-future", "-1"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def dated_world() -> dict[str, Any]:
    """The phased world with a price path and a switch date in doubt: chip x costs 10,000 from 2026-01 and
    8,000 from 2027-01 (that step ranged 6,000 to 9,000); the scale-up switch of the liquid form ships
    2026-06 (ranged 2025-10 to 2027-01: in time for the first purchases, or a year late)."""
    world = phased_world()
    world["chips"]["x"]["unit_usd"] = {"2026-01": 10000, "2027-01": 8000}
    world["chips"]["x"]["ranges"] = {"unit_usd.2027-01": [6000, 9000]}
    world["switches"]["up"].update(available_from="2026-06", unit_usd=2000,
                                   ranges={"available_from": ["2025-10", "2027-01"]})
    return world


DATED = {
    "switch early or late": [['switches.up.available_from="2025-10"'],
                             ['switches.up.available_from="2027-01"']],
    "dates and price path": [['switches.up.available_from="2025-12"', "chips.x.unit_usd.2027-01=6000"],
                             ['switches.up.available_from="2026-11"', "chips.x.unit_usd.2027-01=9000"],
                             ["chips.x.unit_usd.2027-01=7000"]],
}


@pytest.mark.parametrize("name", sorted(DATED))
def test_drawn_dates_and_price_paths_are_priced_exactly(name: str, tmp_path) -> None:
    """Futures that differ in when a switch ships and in a later step of the chip's price path: the
    extensive form equals the brute force over them (each future's path and dates priced in its own
    catalog), and VSS, EVPI >= 0."""
    from trnplan.specs.load import load_specs

    specs = conftest.spec_folder(tmp_path, dated_world())
    catalogs = [load_specs([specs], sets) for sets in DATED[name]]
    assert catalogs[0].chips["x"].schedules["unit_usd"]["2026-01"] == 10000
    outcome = plan_across_futures(catalogs, load_specs([specs]), "s", 1)
    truth = best_across_futures(catalogs, "s", 1, None)
    assert truth is not None
    value, key, _scores = truth
    assert outcome.status == "optimal"
    assert outcome.objective_usd == pytest.approx(value, rel=1e-9)
    assert all(shared_key_of(d, ["a", "b"], 1) == key for d in outcome.decisions)
    assert outcome.vss_usd is not None and outcome.vss_usd >= -0.01 and outcome.evpi_usd >= -0.01


def test_optimize_futures_draws_months_and_schedule_entries(tmp_path) -> None:
    """`optimize --futures` draws the switch date in whole months and the price path's entry; the plan
    file records them, reads back, and re-checks in each future's catalog; the average future's date is
    the mean month."""
    import json

    from conftest import run

    from trnplan.cli.futures import _mean_overrides
    from trnplan.plan.check import check_plan
    from trnplan.plan.file import read_plan
    from trnplan.specs.load import load_specs
    from trnplan.sweep.grid import ranged_fields, sample_runs

    specs = conftest.spec_folder(tmp_path, dated_world())
    out = tmp_path / "dated.yaml"
    result = run("optimize", "s", "--specs", str(specs), "--futures", "4", "--seed", "2", "--workers", "1",
                 "--out", str(out))
    assert result.exit_code == 0, result.stderr
    plan = read_plan(out)
    months = [r.set["switches.up.available_from"] for r in plan.futures.runs]
    assert all(isinstance(m, str) and "2025-10" <= m <= "2027-01" for m in months)
    assert all(6000 <= r.set["chips.x.unit_usd.2027-01"] <= 9000 for r in plan.futures.runs)
    catalogs = [load_specs([specs], [f"{p}={json.dumps(v)}" for p, v in r.set.items()])
                for r in plan.futures.runs]
    assert check_plan(plan, load_specs([specs]), catalogs) == []
    fields = ranged_fields(load_specs([specs]), "s")
    runs = sample_runs(fields, 4, 2)
    from trnplan.catalog.months import month_index, month_text

    mean = month_text(round(sum(month_index(r.set["switches.up.available_from"]) for r in runs) / 4))
    assert f'switches.up.available_from="{mean}"' in _mean_overrides(fields, runs)

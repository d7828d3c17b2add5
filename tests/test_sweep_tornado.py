"""`trnplan sweep --tornado` (exact one-at-a-time re-solves) and the Monte Carlo summary's ranking of the
inputs by SALib (`trnplan.sweep.ranking`).

The world is the builders' tiny one (chip x, forms air8/liq16, scenario s: 64 chips) with a second,
air-only site b, a range on the chip's price, the liquid PUE and the scale-out switch's price, and two
ranged inputs no option of the scenario reads: a cooling type no site has, and a chip no form holds.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import conftest
import pytest
from conftest import run

from trnplan.plan.build import plan_scenario
from trnplan.specs.load import load_specs
from trnplan.sweep.ranking import MIN_RUNS, rank_inputs
from trnplan.sweep.report import tornado_to_csv, tornado_to_markdown
from trnplan.sweep.tornado import is_tornado

pytest.importorskip("distributed")

USED = {"chips.x.unit_usd": (8000, 12000), "cooling.liquid.pue": (1.05, 1.6),
        "switches.sw.unit_usd": (500, 1500)}
UNUSED = ["chips.y.unit_usd", "cooling.rear.pue"]


def world_data() -> dict:
    world = conftest.ranged_two_sites()
    world["chips"]["y"] = {**world["chips"]["x"], "ranges": {"unit_usd": [1, 3]}, "unit_usd": 2}
    world["cooling"]["liquid"]["ranges"] = {"pue": [1.05, 1.6]}
    world["cooling"]["rear"] = {"max_rack_kw": 60, "pue": 1.2, "capex_usd_per_kw": 0,
                                "ranges": {"pue": [1.1, 1.3]}}
    world["switches"]["sw"]["ranges"] = {"unit_usd": [500, 1500]}
    return world


@pytest.fixture()
def specs(tmp_path) -> Path:
    return conftest.spec_folder(tmp_path, world_data())


def choices(plan) -> dict[str, list[str]]:
    return {s: sorted({f"{d.form}/{d.cooling}/{d.scale_up_switch}/{site.scale_out.switch}"
                       for d in site.deployments})
            for s, site in plan.sites.items() if site.deployments}


def test_each_bar_is_the_re_solve_at_that_end_to_the_cent(specs, tmp_path):
    out = tmp_path / "rows.jsonl"
    result = run("sweep", "s", "--specs", str(specs), "--tornado", "--workers", "2", "--out", str(out),
                 "-f", "json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    base = plan_scenario(load_specs([specs]), "s", alternatives=0)
    assert round(summary["base_tco_usd"] * 100) == round(base.totals.tco_usd * 100)
    # an input no allowed option reads is listed as unused, and is no bar
    assert summary["unused"] == UNUSED
    bars = {b["input"]: b for b in summary["tornado"]}
    assert set(bars) == set(USED)
    for path, (low, high) in USED.items():
        bar = bars[path]
        assert (bar["low"], bar["high"]) == (low, high)
        ends = [plan_scenario(load_specs([specs], [f"{path}={v}"]), "s", alternatives=0) for v in (low, high)]
        assert round(bar["tco_low_usd"] * 100) == round(ends[0].totals.tco_usd * 100)
        assert round(bar["tco_high_usd"] * 100) == round(ends[1].totals.tco_usd * 100)
        assert bar["swing_usd"] == pytest.approx(bar["tco_high_usd"] - bar["tco_low_usd"])
        assert bar["choices_changed"] == any(choices(p) != choices(base) for p in ends)
    # the chip price moves TCO by 64 chips x $4,000: the widest bar, on top
    assert summary["tornado"][0]["input"] == "chips.x.unit_usd"
    assert summary["tornado"][0]["swing_usd"] == pytest.approx(64 * 4000)
    swings = [abs(b["swing_usd"]) for b in summary["tornado"]]
    assert swings == sorted(swings, reverse=True)
    # and what `trnplan optimize --set` prints at one end, to the cent
    shown = run("optimize", "s", "--specs", str(specs), "--set", "cooling.liquid.pue=1.6", "-f", "json")
    assert shown.exit_code == 0, shown.stderr
    assert round(json.loads(shown.stdout)["totals"]["tco_usd"] * 100) == round(
        bars["cooling.liquid.pue"]["tco_high_usd"] * 100)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 1 + 2 * len(USED) and is_tornado(rows)


def test_the_tornado_reads_in_every_format(specs):
    for fmt, key in (("table", "chips.x.unit_usd"), ("csv", "cooling.rear.pue,,,,,,,false"),
                     ("markdown", "| chips.x.unit_usd |")):
        result = run("sweep", "s", "--specs", str(specs), "--tornado", "--workers", "1", "-f", fmt,
                     columns=80)
        assert result.exit_code == 0, result.stderr
        assert key in result.stdout
        if fmt == "table":
            assert "cannot use" in result.stdout and max(map(len, result.stdout.splitlines())) <= 80


def test_tornado_takes_no_grid_or_sample(specs):
    result = run("sweep", "s", "--specs", str(specs), "--tornado", "--sample", "4")
    assert result.exit_code == 2 and "--tornado alone" in result.stderr


def test_csv_and_markdown_of_a_summary_dict():
    summary = {"scenario": "s", "method": "m", "base_tco_usd": 10.0, "unused": ["a.b.c"],
               "tornado": [{"input": "x.y.z", "low": 1, "high": 2, "tco_low_usd": 9.0, "tco_high_usd": 12.5,
                            "swing_usd": 3.5, "choices_changed": True}],
               "failed": [{"input": "p.q.r", "status": ["infeasible", "optimal"]}]}
    assert "x.y.z,1,2,9,12.5,3.5,true,true" in tornado_to_csv(summary)
    text = tornado_to_markdown(summary)
    assert "| x.y.z | 1 | 2 | $9 | $12.50 | $3.50 | changes |" in text and "p.q.r: infeasible" in text


def rows_of(n: int, tco, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        drawn = {"a": rng.uniform(0, 1), "b": rng.uniform(0, 1), "c": rng.uniform(0, 1)}
        rows.append({"run": i, "set": drawn, "status": "optimal", "tco_usd": tco(drawn, rng)})
    return rows


def test_a_known_dominant_input_is_ranked_first():
    """TCO = 100 a + 5 b + noise: a explains nearly all of its variance."""
    found = rank_inputs(rows_of(200, lambda d, r: 100 * d["a"] + 5 * d["b"] + r.gauss(0, 1)), ["a", "b", "c"])
    assert [i["path"] for i in found["inputs"]][0] == "a"
    assert found["inputs"][0]["told_apart"] and found["ranked"] >= 1
    assert "warning" not in found
    assert found["inputs"][0]["s1"] > 0.8


def test_a_drawn_month_is_ranked_as_months():
    """A month input (a switch's drawn date, YYYY-MM) is ranked like a number: months since year 0."""
    from trnplan.catalog.months import month_index, month_text

    rows = rows_of(200, lambda d, r: 1e6 * d["a"] + 5 * d["b"] + r.gauss(0, 1))
    for row in rows:
        row["set"]["a"] = month_text(month_index("2026-01") + round(row["set"]["a"] * 15))
        row["tco_usd"] = 1e6 * month_index(row["set"]["a"]) + 5 * row["set"]["b"]
    found = rank_inputs(rows, ["a", "b"])
    assert [i["path"] for i in found["inputs"]][0] == "a" and found["inputs"][0]["told_apart"]


def test_too_few_samples_say_so():
    few = rank_inputs(rows_of(MIN_RUNS - 1, lambda d, r: 100 * d["a"]), ["a", "b", "c"])
    assert few["ranked"] == 0 and few["inputs"] == [] and "too few samples" in few["warning"]
    # enough runs to estimate, too few to tell two equal inputs apart from each other
    close = rank_inputs(rows_of(12, lambda d, r: d["a"] + d["b"] + r.gauss(0, 0.3)), ["a", "b", "c"])
    assert close["ranked"] == 0 and "too few samples to rank" in close["warning"]


def test_the_ranking_is_the_same_every_time_and_leaves_numpy_alone():
    """SALib seeds numpy only for a truthy seed: the default seed 0 must still give the same intervals (a
    sweep's summary is deterministic), and the caller's global generator is given back as it was."""
    np = pytest.importorskip("numpy")
    rows = rows_of(12, lambda d, r: d["a"] + d["b"] + r.gauss(0, 0.3))
    np.random.seed(12345)
    expected_next = np.random.random()
    np.random.seed(12345)
    firsts = [rank_inputs(rows, ["a", "b", "c"]) for _ in range(4)]
    assert np.random.random() == expected_next
    assert all(f == firsts[0] for f in firsts[1:])
    assert firsts[0] != rank_inputs(rows, ["a", "b", "c"], seed=1)


def test_a_sampled_sweep_ranks_the_chip_price_first(specs):
    result = run("sweep", "s", "--specs", str(specs), "--sample", "60", "--workers", "2", "-f", "json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert "tornado" not in summary
    found = summary["sensitivity"]
    assert found["runs"] == 60 and found["inputs"][0]["path"] == "chips.x.unit_usd"
    assert found["inputs"][0]["told_apart"]
    # an unused input is not drawn, so not ranked
    assert not {i["path"] for i in found["inputs"]} & set(UNUSED)
    few = run("sweep", "s", "--specs", str(specs), "--sample", "5", "--workers", "1", columns=80)
    assert few.exit_code == 0, few.stderr
    assert "too few samples to rank the inputs" in " ".join(few.stdout.split())


def test_a_month_range_and_a_price_path_entry_are_bars_at_their_ends(tmp_path):
    """A switch's `available_from` ranged in months is a bar at its low and high month, and a later step of
    the chip's price path at its two ends; each end is `optimize --set` there, to the cent."""
    from test_futures import dated_world

    specs = conftest.spec_folder(tmp_path, dated_world())
    result = run("sweep", "s", "--specs", str(specs), "--tornado", "--workers", "1", "-f", "json")
    assert result.exit_code == 0, result.stderr
    bars = {b["input"]: b for b in json.loads(result.stdout)["tornado"]}
    assert set(bars) == {"switches.up.available_from", "chips.x.unit_usd.2027-01"}
    date = bars["switches.up.available_from"]
    assert (date["low"], date["high"]) == ("2025-10", "2027-01")
    for path, bar, ends in (("switches.up.available_from", date, ('"2025-10"', '"2027-01"')),
                            ("chips.x.unit_usd.2027-01", bars["chips.x.unit_usd.2027-01"], ("6000", "9000"))):
        tcos = [plan_scenario(load_specs([specs], [f"{path}={v}"]), "s", alternatives=0).totals.tco_usd
                for v in ends]
        assert [round(bar["tco_low_usd"] * 100), round(bar["tco_high_usd"] * 100)] == [
            round(t * 100) for t in tcos]
    # the switch a year late costs the first hall its liquid racks; 16 chips are bought at the 2027 price,
    # charged for the year left of the two-year window (no cost of capital): half their price
    assert date["swing_usd"] > 0 and date["choices_changed"]
    assert bars["chips.x.unit_usd.2027-01"]["swing_usd"] == pytest.approx(16 * 3000 / 2, rel=1e-6)
    table = run("sweep", "s", "--specs", str(specs), "--tornado", "--workers", "1", columns=80)
    assert "2025-10" in table.stdout and "2027-01" in table.stdout

"""Why this choice (`trnplan options`, `trnplan.optimize.choices`): each option at each site priced per chip
as the optimizer prices it, marked chosen, allowed, dominated or ruled out with the reasons; and in a plan's
tables, identical alternatives as one row and small choices with what doing without them costs."""

from __future__ import annotations

import json
import re

import pytest
from conftest import PLANS, SPECS, run
from rich.cells import cell_len

from trnplan.errors import EXIT_USAGE
from trnplan.numbers import fmt
from trnplan.optimize.choices import site_option_costs
from trnplan.plan import read_plan
from trnplan.plan.tables import alternative_rows, small_choices
from trnplan.render import render_plan
from trnplan.render.tables import Trimmed
from trnplan.specs.load import load_specs


def _by_key(sites, site: str) -> dict:  # type: ignore[no-untyped-def]
    (s,) = [s for s in sites if s.site == site]
    return {o.key: o for o in s.options}


def test_each_option_is_priced_as_the_plan_prices_it_and_says_what_rules_it_out() -> None:
    """trn3-100k: the deployed options are chosen, at the plan's capex per chip; in the air-only Virginia
    hall the liquid racks are ruled out by its cooling and rack limit, the 320-lane switch by as_of."""
    plan = read_plan(PLANS / "trn3-100k.yaml")
    chosen = [(s, d.form, d.cooling, d.scale_up_switch) for s, part in plan.sites.items()
              for d in part.deployments]
    sites = site_option_costs(load_specs([SPECS]), "trn3-100k", chosen)
    assert [s.site for s in sites] == sorted(plan.sites)
    for site, part in plan.sites.items():
        options = _by_key(sites, site)
        for d in part.deployments:
            o = options[d.key]
            assert o.status == "chosen"
            assert o.capex_usd_per_chip == pytest.approx(d.capex_usd / d.chips, rel=1e-9)
            assert o.tco_usd_per_chip > o.capex_usd_per_chip + 5 * o.opex_usd_per_chip_year * 0.9
    iad = _by_key(sites, "iad-air")
    liquid = iad["trn3-nl72x2/liquid/pcie6-160"]
    assert liquid.status == "ruled out"
    assert "site iad-air has no liquid cooling" in liquid.reasons
    assert any("45 kW per rack" in r for r in liquid.reasons)
    assert iad["trn3-nl32x2/air/pcie6-320"].reasons == [
        "switch pcie6-320 is available from 2026-07, after as_of 2026-06"]
    # cheaper per chip, yet not allowed: the view says why the plan pays more
    later, now = iad["trn3-nl32x2/air/pcie6-320"], iad["trn3-nl32x2/air/pcie6-160"]
    assert later.tco_usd_per_chip < now.tco_usd_per_chip
    wa = sites[-1]
    assert wa.site == "wa-remote" and wa.one_off_usd["liquid"] > 0


def test_a_phased_scenario_says_from_when_and_which_options_are_dominated() -> None:
    sites = site_option_costs(load_specs([SPECS]), "trn3-life")
    ind = _by_key(sites, "ind-phased")
    assert ind["trn3-nl32x2/air/pcie6-320"].from_period == "2026-07"
    assert ind["trn3-nl32x2/air/pcie6-160"].from_period == "2026-01"
    ualink = ind["trn3-nl32x2/air/ualink-200g"]
    assert ualink.status == "dominated" and ualink.dominated_by == "trn3-nl32x2/air/pcie6-160"
    assert "dominated by trn3-nl32x2/air/pcie6-160" in ualink.why()


@pytest.mark.parametrize("columns", [80, 120])
def test_the_options_command_fits_and_marks_the_plans_choices(columns: int) -> None:
    r = run("options", "trn3-100k", "--specs", SPECS, "--plan", PLANS / "trn3-100k.yaml", columns=columns)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert max(cell_len(line) for line in lines) <= columns
    at = lines.index("iad-air")
    option = ["trn3-nl32x2", "air", "pcie6-160"]
    row = next(i for i in range(at, len(lines)) if lines[i].split()[:3] == option)
    assert lines[row + 1].strip() == "chosen"
    hidden = r"\d+ options of forms or chips the scenario does not list are not shown"
    assert re.search(hidden, " ".join(lines))


def test_the_options_command_as_json_and_its_mistakes() -> None:
    r = run("options", "trn3-life", "--specs", SPECS, "--site", "ind-phased", "--format", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["format"] == "trnplan-options/1" and list(data["sites"]) == ["ind-phased"]
    first = data["sites"]["ind-phased"]["options"][0]
    assert {"capex_usd_per_chip", "tco_usd_per_chip", "usd_per_effective_pflop_hour", "status", "reasons",
            "from_period"} <= set(first)
    every = json.loads(run("options", "trn3-life", "--specs", SPECS, "--all", "--format", "json").stdout)
    assert len(every["sites"]["ind-phased"]["options"]) > len(data["sites"]["ind-phased"]["options"])
    bad = run("options", "trn3-life", "--specs", SPECS, "--site", "ind-phase")
    assert bad.exit_code == EXIT_USAGE and "did you mean 'ind-phased'" in bad.stderr
    other = run("options", "trn3-life", "--specs", SPECS, "--plan", PLANS / "trn3-100k.yaml")
    assert other.exit_code == EXIT_USAGE and "a plan of 'trn3-100k'" in other.stderr


def _printed(plan_name: str, width: int) -> list[str]:
    import io

    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=width, color_system=None, soft_wrap=False).print(
        Trimmed(render_plan(read_plan(PLANS / f"{plan_name}.yaml"))))
    return out.getvalue().splitlines()


def test_identical_alternatives_are_one_row() -> None:
    """max-perf-1b: the best plan without air cooling is the best plan without the only air form, the same
    plan: one row naming both, and the caption says what such a row means."""
    plan = read_plan(PLANS / "max-perf-1b.yaml")
    rows = alternative_rows(plan)
    assert len(rows) == len(plan.alternatives) - 1
    assert ["cooling air", "form trn3-nl32x2"] in [w for w, _ in rows]
    lines = _printed("max-perf-1b", 120)
    start = lines.index("Alternatives: the best plan without each choice made")
    table = lines[start:]  # the last table of this plan
    assert [line.split()[0] for line in table[3:] if line[:1].isdigit()] == ["1", "2"]
    assert "several without: the same plan is the best without each of them" in " ".join(table)


def test_a_small_choice_says_what_doing_without_it_costs() -> None:
    """moe-144 buys 15 units on the 320-lane switch (4.5% of its chips): the plan's tables say the best
    plan without that switch costs that much more."""
    plan = read_plan(PLANS / "moe-144.yaml")
    (small,) = small_choices(plan)
    alt = next(a for a in plan.alternatives if a.without == "scale-up switch pcie6-320")
    assert small.without == "scale-up switch pcie6-320" and small.units == 15
    assert small.delta_usd == pytest.approx((alt.tco_usd or 0) - plan.totals.tco_usd)
    for width in (80, 120):
        lines = _printed("moe-144", width)
        (row,) = [line for line in lines if line.startswith("scale-up switch pcie6-320 ")]
        change = fmt((alt.delta_pct or 0.0) / 100, "pct", signed=True)
        assert row.split()[3:] == ["15", fmt(small.chips, "int"), fmt(small.share, "pct"),
                                   f"+{fmt(small.delta_usd, 'usd')}", change]
    assert not small_choices(read_plan(PLANS / "trn3-100k.yaml"))


def test_a_small_choice_whose_alternative_came_out_cheaper_shows_a_minus() -> None:
    """A plan proven within a gap can have an alternative, proven within its own, that is cheaper: the
    table shows the minus (it showed "+-$65,457") and its caption says why one can appear."""
    import io

    from rich.console import Console

    plan = read_plan(PLANS / "moe-144.yaml")
    less = {"tco_usd": plan.totals.tco_usd - 65_457.2}
    cheaper = [a.model_copy(update=less) if a.without.endswith("pcie6-320") else a for a in plan.alternatives]
    plan = plan.model_copy(update={"alternatives": cheaper})
    out = io.StringIO()
    Console(file=out, width=200, color_system=None, soft_wrap=False).print(Trimmed(render_plan(plan)))
    lines = out.getvalue().splitlines()
    (row,) = [line for line in lines if line.startswith("scale-up switch pcie6-320 ")]
    assert "-$65,457" in row.split() and "+-" not in row
    assert "a minus: the best plan without it came out that much cheaper" in " ".join(lines)

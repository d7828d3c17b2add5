"""Bill of materials: totals equal the plan's capex to the cent; CSV, JSON and Markdown forms."""

from __future__ import annotations

import csv
import io
import json

import pytest
from conftest import PLANS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_pairs import head_specs, solved

from trnplan.bom import CSV_FIELDS, Bom, bom_to_csv, bom_to_json, bom_to_markdown, build_bom
from trnplan.errors import InputError
from trnplan.numbers import cents
from trnplan.plan import BomLine, Plan, plan_from_dict, plan_scenario, read_plan
from trnplan.testkit.builders import base_specs, catalog_from_dict


def _variant(name: str) -> Plan:
    """Small variations of the tiny catalog: prices with cents, fractional kW, fit-out, two sites."""
    d = base_specs()
    if name == "cents":
        d["chips"]["x"]["unit_usd"] = 10000.37
        d["forms"]["liq16"]["rack_bom"].append(
            {"item": "pdu", "qty": 3, "unit_usd": 412.19, "category": "power"}
        )
    elif name == "fractional-kw":
        d["forms"]["liq16"]["rack_overhead_kw"] = 2.35
        d["cooling"]["liquid"]["capex_usd_per_kw"] = 123.45
    elif name == "fit-out":
        d["sites"]["a"]["cooling_fixed_usd"] = {"liquid": 250000.5, "air": 1000.25}
        d["cooling"]["air"]["capex_usd_per_kw"] = 99.99
    elif name == "two-sites":
        d = head_specs()
    return plan_scenario(catalog_from_dict(d), "s")


VARIANTS = ["base", "cents", "fractional-kw", "fit-out", "two-sites"]


@pytest.fixture(scope="module", params=VARIANTS)
def plan(request: pytest.FixtureRequest) -> Plan:
    return _variant(request.param)


def test_total_equals_capex_exactly(plan: Plan) -> None:
    bom = build_bom(plan)
    assert cents(bom.total_usd) == cents(plan.totals.capex_usd)
    assert bom.total_usd == bom.capex_usd
    assert sum(cents(line.extended_usd) for line in bom.lines) == cents(bom.capex_usd)
    assert len(bom.lines) == len(plan.bom)


def test_lines_sorted_and_shares(plan: Plan) -> None:
    bom = build_bom(plan)
    keys = [(line.site, line.category, line.item) for line in bom.lines]
    assert keys == sorted(keys)
    assert all(0 <= bom.share(line) <= 1 for line in bom.lines)
    assert sum(bom.share(line) for line in bom.lines) == pytest.approx(1, abs=1e-5)
    assert all(line.it_kw is None or line.category == "cooling" for line in bom.lines)


def test_subtotals_sum_to_total(plan: Plan) -> None:
    bom = build_bom(plan)
    for subtotals in (bom.by_site(), bom.by_category()):
        assert sum(cents(v) for v in subtotals.values()) == cents(bom.total_usd)
    assert set(bom.by_site()) == set(plan.sites)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chip_cents=st.integers(100, 5_000_000),
    kit_cents=st.integers(0, 500_000),
    kw_cents=st.integers(0, 50_000),
    overhead_kw=st.sampled_from([2, 2.25, 1.7, 3.33]),
    chips=st.sampled_from([16, 40, 64, 72]),
)
def test_total_equals_capex_for_generated_prices(
    chip_cents: int, kit_cents: int, kw_cents: int, overhead_kw: float, chips: int
) -> None:
    d = base_specs()
    d["chips"]["x"]["unit_usd"] = chip_cents / 100
    for form in d["forms"].values():
        form["rack_bom"][0]["unit_usd"] = kit_cents / 100
        form["rack_overhead_kw"] = overhead_kw
    for cooling in d["cooling"].values():
        cooling["capex_usd_per_kw"] = kw_cents / 100
    d["scenarios"]["s"]["demand"] = {"chips": chips}
    plan = plan_scenario(catalog_from_dict(d), "s", alternatives=0)
    bom = build_bom(plan)
    assert cents(bom.total_usd) == cents(plan.totals.capex_usd)
    rows = list(csv.DictReader(io.StringIO(bom_to_csv(bom))))
    assert sum(cents(float(r["extended_usd"])) for r in rows) == cents(plan.totals.capex_usd)


def test_csv_round_trips(plan: Plan) -> None:
    bom = build_bom(plan)
    text = bom_to_csv(bom)
    assert text.splitlines()[0] == "site,form,racks,category,item,quantity,unit_usd,extended_usd,share,it_kw"
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(bom.lines)
    for row, line in zip(rows, bom.lines, strict=True):
        assert tuple(row) == CSV_FIELDS
        assert (row["site"], row["category"], row["item"]) == (line.site, line.category, line.item)
        for key in ("quantity", "unit_usd", "extended_usd"):
            assert float(row[key]) == getattr(line, key)
        assert float(row["share"]) == bom.share(line)
        assert (float(row["it_kw"]) if row["it_kw"] else None) == line.it_kw


def test_csv_quotes_awkward_items() -> None:
    item = 'kit, "deluxe"\nv2'
    line = BomLine(site="a", category="rack", item=item, quantity=2, unit_usd=0.1, extended_usd=0.2)
    bom = Bom("s", [line], 0.2, 0.2)
    (row,) = list(csv.DictReader(io.StringIO(bom_to_csv(bom))))
    assert row["item"] == 'kit, "deluxe"\nv2'
    assert float(row["unit_usd"]) == 0.1 and float(row["extended_usd"]) == 0.2
    assert float(row["share"]) == 1.0


def test_json_shape(plan: Plan) -> None:
    bom = build_bom(plan)
    text = bom_to_json(bom)
    data = json.loads(text)
    assert data["format"] == "trnplan-bom/1"
    assert data["scenario"] == plan.scenario
    assert cents(data["total_usd"]) == cents(plan.totals.capex_usd)
    assert list(data) == sorted(data)
    keys = {"site", "category", "item", "quantity", "unit_usd", "extended_usd", "share", "it_kw"}
    assert all(set(line) == keys for line in data["lines"])
    assert sum(cents(line["extended_usd"]) for line in data["lines"]) == cents(data["total_usd"])
    assert text == bom_to_json(build_bom(plan))  # stable


def test_markdown_has_subtotals_and_total() -> None:
    plan = solved("head")
    text = bom_to_markdown(build_bom(plan))
    lines = text.splitlines()
    assert lines[0] == "### Bill of materials: `s`"
    assert "| **a** |  | **site subtotal** |  |  | **$682,400.00** | 58.4% |" in lines
    assert "| **b** |  | **site subtotal** |  |  | **$486,000.00** | 41.6% |" in lines
    assert "| **total** |  |  |  |  | **$1,168,400.00** | 100.0% |" in lines
    assert "| a | rack | *subtotal* |  |  | *$4,000.00* | 0.3% |" in lines
    assert "| chips | $1,152,000.00 | 98.6% |" in lines
    assert lines[-1] == "Total equals the plan's capex: $1,168,400.00."


def _with_bom(plan: Plan, bom: list[BomLine], **totals: float) -> Plan:
    """The plan with other BOM lines and totals, unchecked (as a library caller could build it)."""
    return plan.model_copy(update={"bom": bom, "totals": plan.totals.model_copy(update=totals)})


def test_corrupt_total_is_an_input_error() -> None:
    plan = solved("base")
    bad = _with_bom(plan, plan.bom, capex_usd=plan.totals.capex_usd + 0.01)
    with pytest.raises(
        InputError, match=r"BOM lines sum to \$645,000.00 but totals.capex_usd is \$645,000.01"
    ):
        build_bom(bad)


def test_mispriced_line_is_an_input_error() -> None:
    plan = solved("base")
    lines = list(plan.bom)
    lines[0] = lines[0].model_copy(update={"extended_usd": lines[0].extended_usd + 5})
    with pytest.raises(InputError, match=r"bom\[0\] \(X \(x\)\).*not the extended"):
        build_bom(_with_bom(plan, lines, capex_usd=plan.totals.capex_usd + 5))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"quantity": "many"}, r"bom\.0\.quantity: expected a number, got the text 'many'"),
        ({"site": None}, r"bom\.0\.site: expected text, got null \(an empty value\)"),
        (
            {"extended_usd": float("nan")},
            r"bom\.0\.extended_usd: expected a finite number, got the number nan",
        ),
    ],
)
def test_malformed_line_is_an_input_error(change: dict, message: str) -> None:
    """A malformed line never reaches build_bom: the plan reader refuses it, naming the line and field."""
    data = solved("base").to_dict()
    data["bom"][0].update(change)
    with pytest.raises(InputError, match=message):
        plan_from_dict(data, "s.yaml")


def test_empty_bom() -> None:
    plan = _with_bom(solved("base"), [], capex_usd=0)
    bom = build_bom(plan)
    assert bom.lines == [] and bom.total_usd == 0
    assert bom_to_csv(bom) == ",".join(CSV_FIELDS) + "\n"
    assert "**total**" in bom_to_markdown(bom)


def test_csv_names_the_form_and_the_racks_each_line_is_for() -> None:
    """trn3-100k: at a site of one form every compute line (chips, rack kit, copper, scale-up switches,
    cooling used by no network) names that form and its racks; at ind-new (two forms, one chip) each
    rack kit line names its own form and the shared chips line none; fabric lines name none."""
    plan = read_plan(PLANS / "trn3-100k.yaml")
    rows = list(csv.DictReader(io.StringIO(bom_to_csv(build_bom(plan)))))
    racks = {(site, d.form): d.racks for site, s in plan.sites.items() for d in s.deployments}
    for row in rows:
        if row["category"] in ("network", "optics", "scale_out", "site"):
            assert row["form"] == "" and row["racks"] == "", row
        if row["form"]:
            assert int(row["racks"]) == racks[(row["site"], row["form"])], row
    by = {(r["site"], r["category"], r["form"]) for r in rows}
    assert ("iad-air", "chips", "trn3-nl32x2") in by and ("iad-air", "scale_up", "trn3-nl32x2") in by
    assert ("ind-new", "chips", "") in by
    assert {("ind-new", "compute", "trn3-nl32x2"), ("ind-new", "compute", "trn3-nl72x2"),
            ("ind-new", "cooling", "trn3-nl72x2")} <= by  # liquid: the NL72x2 racks' alone
    assert sum(cents(float(r["extended_usd"])) for r in rows) == cents(plan.totals.capex_usd)


def test_a_schedule_csv_counts_the_racks_bought_in_each_period() -> None:
    plan = read_plan(PLANS / "trn3-life.yaml")
    assert plan.periods is not None
    rows = list(csv.DictReader(io.StringIO(bom_to_csv(build_bom(plan)))))
    assert list(rows[0])[:4] == ["period", "site", "form", "racks"]
    for period in plan.periods:
        for site, ps in period.sites.items():
            for d in ps.deployments:
                if d.bought and d.form == "trn3-nl72x2":
                    (kit,) = [r for r in rows if r["period"] == period.start and r["site"] == site
                              and r["category"] == "rack" and r["form"] == d.form]
                    assert int(kit["racks"]) == d.bought * d.racks // d.units

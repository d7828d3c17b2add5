"""Plan diffs: the laws (self-diff empty, mirror, attribution sums to the TCO delta), Markdown, JSON,
guardrails and reading plans from git."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import run
from hypothesis import given, settings
from hypothesis import strategies as st
from plan_pairs import git, golden_pair, solved, synthetic_plan

from trnplan.costs import crf
from trnplan.diff import (
    MARKER,
    SUMMARY_METRICS,
    Guardrail,
    PlanDiff,
    PlanNotFoundError,
    breached,
    diff_plans,
    diff_to_json,
    diff_to_markdown,
    metric_label,
    parse_guardrail,
    read_plan_ref,
    tco_parts_cents,
)
from trnplan.errors import InputError, UsageError
from trnplan.numbers import cents, money_short
from trnplan.plan import Plan, write_plan

GOLDEN = Path(__file__).parent / "golden" / "diff.md"
FLIP = {"+": "-", "-": "+", "~": "~"}


# --- generated plans --------------------------------------------------------------------------------

SITES = ["a", "b", "c"]
OPTIONS = ["air8/air/none", "liq16/liquid/up", "nl72/liquid/ualink"]
ITEMS = [
    ("chips", "X (x)"),
    ("rack", "kit (air8)"),
    ("rack", "kit (liq16)"),
    ("cooling", "liquid kW"),
    ("scale_out", "sw (sw)"),
    ("site", "liquid fit-out"),
]


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    deployments = draw(
        st.dictionaries(
            st.tuples(st.sampled_from(SITES), st.sampled_from(OPTIONS)), st.integers(1, 6), max_size=5
        )
    )
    sites = sorted({s for s, _ in deployments}) or ["a"]
    bom_keys = st.tuples(st.sampled_from(sites), st.sampled_from(ITEMS)).map(lambda t: (t[0], *t[1]))
    bom = draw(st.dictionaries(bom_keys, st.tuples(st.integers(1, 500), st.integers(0, 10**8)), max_size=8))
    return synthetic_plan(
        "s",
        deployments,
        bom,
        energy_cents=draw(st.integers(0, 10**9)),
        colocation_cents=draw(st.integers(0, 10**9)),
        horizon_years=draw(st.integers(1, 10)),
        capex_factor=draw(st.floats(1.0, 2.0)),  # horizon x (CRF + maintenance): at least 1
        scale_out={s: draw(st.sampled_from(["sw", "th5"])) for s in SITES},
    )


def real_plans() -> list[Plan]:
    return [solved("base"), solved("head"), Plan.empty("s")]


def assert_mirror(ab: PlanDiff, ba: PlanDiff) -> None:
    assert ab.different == ba.different
    assert (ab.base_label, ab.head_label, ab.base_digest, ab.head_digest, ab.base_solver, ab.head_solver) == (
        ba.head_label,
        ba.base_label,
        ba.head_digest,
        ba.base_digest,
        ba.head_solver,
        ba.base_solver,
    )
    for m, r in zip(ab.summary, ba.summary, strict=True):
        assert (m.metric, m.unit, m.old, m.new, m.delta) == (r.metric, r.unit, r.new, r.old, -r.delta)
    assert [(c.site, c.field, c.old, c.new) for c in ab.choices] == [
        (c.site, c.field, c.new, c.old) for c in ba.choices
    ]
    assert [(d.sign, d.site, d.key, d.fields) for d in ab.deployments] == [
        (FLIP[d.sign], d.site, d.key, {f: (new, old) for f, (old, new) in d.fields.items()})
        for d in ba.deployments
    ]
    assert [
        (b.sign, b.site, b.category, b.item, b.old_qty, b.new_qty, b.old_usd, b.new_usd, b.delta_usd)
        for b in ab.bom
    ] == [
        (FLIP[b.sign], b.site, b.category, b.item, b.new_qty, b.old_qty, b.new_usd, b.old_usd, -b.delta_usd)
        for b in ba.bom
    ]
    assert [(a.category, a.old_usd, a.new_usd, a.delta_usd) for a in ab.attribution] == [
        (a.category, a.new_usd, a.old_usd, -a.delta_usd) for a in ba.attribution
    ]
    assert ab.counts() == {
        "add": ba.counts()["remove"],
        "change": ba.counts()["change"],
        "remove": ba.counts()["add"],
    }


def assert_attribution_sums(d: PlanDiff, base: Plan, head: Plan) -> None:
    tco = d.metric("tco_usd")
    assert d.attribution, "both plans carry the figures attribution needs"
    assert sum(cents(a.delta_usd) for a in d.attribution) == cents(tco.delta)
    assert sum(cents(a.old_usd) for a in d.attribution) == cents(base.totals.tco_usd)
    assert sum(cents(a.new_usd) for a in d.attribution) == cents(head.totals.tco_usd)
    assert [a.category for a in d.attribution][-2:] == ["energy", "colocation"]


def assert_self_diff_empty(d: PlanDiff) -> None:
    assert not d.different
    assert d.choices == [] and d.deployments == [] and d.bom == []
    assert all(m.delta == 0 for m in d.summary)
    assert all(a.delta_usd == 0 for a in d.attribution)
    assert d.counts() == {"add": 0, "change": 0, "remove": 0}


@settings(max_examples=200, deadline=None)
@given(plans())
def test_self_diff_is_empty(a: Plan) -> None:
    assert_self_diff_empty(diff_plans(a, a))


@settings(max_examples=200, deadline=None)
@given(plans(), plans())
def test_diff_mirrors_and_attribution_sums(a: Plan, b: Plan) -> None:
    ab, ba = diff_plans(a, b, "A", "B"), diff_plans(b, a, "B", "A")
    assert_mirror(ab, ba)
    assert_attribution_sums(ab, a, b)
    assert_attribution_sums(ba, b, a)
    assert ab.different == (decisions(a) != decisions(b) or ab.bom != [] or any(m.delta for m in ab.summary))


def decisions(plan: Plan) -> dict[str, object]:
    """The sites' choices and figures, without their yearly money (a split of the same opex between energy
    and colocation is not a change of plan; the totals and the attribution show it)."""
    money = ("energy_usd_per_year", "colocation_usd_per_year", "opex_usd_per_year")
    return {
        site: {k: v for k, v in section.items() if k not in money}
        for site, section in plan.to_dict()["sites"].items()
    }


@pytest.mark.parametrize("i", range(3))
@pytest.mark.parametrize("j", range(3))
def test_laws_on_solved_plans(i: int, j: int) -> None:
    a, b = real_plans()[i], real_plans()[j]
    ab, ba = diff_plans(a, b, "A", "B"), diff_plans(b, a, "B", "A")
    assert_mirror(ab, ba)
    assert_attribution_sums(ab, a, b)
    if i == j:
        assert_self_diff_empty(ab)
    else:
        assert ab.different


def test_tco_parts_sum_to_tco_in_cents() -> None:
    for plan in real_plans():
        parts = tco_parts_cents(plan)
        assert parts is not None
        assert sum(parts.values()) == cents(plan.totals.tco_usd)
    head = solved("head")
    parts = tco_parts_cents(head)
    assert parts is not None and head.economics is not None and head.totals.energy_usd_per_year is not None
    years = head.economics.horizon_years
    assert parts["energy"] == years * cents(head.totals.energy_usd_per_year)
    # the capex-driven part is capex x horizon x (CRF + maintenance), give or take rounding to the cent
    # (not economics.tco_per_capex_usd, which the plan file rounds to 6 decimals)
    econ = head.economics
    capex_part = sum(v for k, v in parts.items() if k not in ("energy", "colocation"))
    expected = head.totals.capex_usd * years * (crf(econ.cost_of_capital, years) + econ.maintenance_rate)
    assert abs(capex_part - expected * 100) <= 2 + years


# --- the golden pair ------------------------------------------------------------------------------------


def test_golden_pair_changes() -> None:
    base, head = golden_pair()
    d = diff_plans(base, head, "main:plans/s.yaml", "plans/s.yaml")
    assert d.different and d.scenario == "s"
    assert [(c.sign, c.site, c.key) for c in d.deployments] == [
        ("+", "a", "air8/air/none"),
        ("~", "a", "liq16/liquid/up"),
        ("+", "b", "air8/air/none"),
    ]
    assert d.deployments[1].fields == {
        "units": (4, 3),
        "racks": (4, 3),
        "chips": (64, 48),
        "it_power_kw": (72, 54),
        "capex_usd": (644000, 584400),
    }
    assert ("a", "form", "liq16", "air8 + liq16") in [(c.site, c.field, c.old, c.new) for c in d.choices]
    assert ("b", "scale_out_switch", None, "sw") in [(c.site, c.field, c.old, c.new) for c in d.choices]
    assert [m.metric for m in d.summary] == [m for m, _, _ in SUMMARY_METRICS]
    assert [metric_label(m.metric) for m in d.summary] == [label for _, _, label in SUMMARY_METRICS]
    assert metric_label("hbm_tb") == "hbm_tb"  # not a summary metric: its own name
    chips = d.metric("chips")
    assert (chips.old, chips.new, chips.delta, chips.pct) == (64, 96, 32, 50.0)


def test_markdown_golden() -> None:
    base, head = golden_pair()
    text = diff_to_markdown(diff_plans(base, head, "main:plans/s.yaml", "plans/s.yaml"))
    if os.environ.get("TRNPLAN_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8"), "run with TRNPLAN_UPDATE_GOLDEN=1 to accept the change"


def test_markdown_layout() -> None:
    base, head = golden_pair()
    lines = diff_to_markdown(diff_plans(base, head)).splitlines()
    assert lines[0] == MARKER
    assert lines.count(MARKER) == 1
    assert lines[3] == "**TCO** $801K → $2.04M (+$1.24M, +155.3%)"
    assert lines[5] == "| Metric | Base | Head | Change | % |"
    assert lines.index("| TCO | $800,779 | $2,044,712 | +$1,243,933 | +155.3% |") < min(
        i for i, line in enumerate(lines) if line.startswith("<details>")
    )
    assert lines[-1] == "Plan: 2 to add, 1 to change, 0 to remove."


def test_markdown_trims_details_but_never_the_summary() -> None:
    base, head = golden_pair()
    d = diff_plans(base, head)
    full = diff_to_markdown(d)
    summary_end = full.index("<details>")
    for max_chars in (len(full) - 1, 3000, 2000, 100):
        text = diff_to_markdown(d, max_chars=max_chars)
        assert text.startswith(full[:summary_end])  # marker, headline and summary table intact
        assert "details trimmed to fit" in text
        assert text.rstrip().endswith("Plan: 2 to add, 1 to change, 0 to remove.")
        if max_chars >= 2000:
            assert len(text) <= max_chars
    assert "details trimmed" not in full
    trimmed = diff_to_markdown(d, max_chars=len(full) - 1)
    assert "more rows trimmed" in trimmed and "| `~` | a | liq16/liquid/up |" in trimmed  # BOM cut first


def test_markdown_trims_a_large_diff_under_the_github_limit() -> None:
    big_bom = {(f"s{i:03d}", "rack", f"kit {j}"): (i + 1, 100 * j + 1) for i in range(60) for j in range(20)}
    a = synthetic_plan("big", {}, {}, 0, 0, 5, 1.0)
    b = synthetic_plan(
        "big", {(f"s{i:03d}", "air8/air/none"): 1 for i in range(60)}, big_bom, 10**6, 10**6, 5, 1.5
    )
    d = diff_plans(a, b)
    assert len(d.bom) == 1200
    text = diff_to_markdown(d)
    assert len(text) <= 65000
    assert "details trimmed to fit" in text
    assert "Plan: 60 to add, 0 to change, 0 to remove." in text


def test_no_change_body() -> None:
    """Two identical plans: the marker (for the bot that updates the comment) and one line."""
    base, _ = golden_pair()
    text = diff_to_markdown(diff_plans(base, base))
    assert text.splitlines() == [MARKER, f"`{base.scenario}`: no changes."]
    assert diff_to_markdown(diff_plans(base, base), marker=False) == f"`{base.scenario}`: no changes.\n"


def test_digest_or_solver_change_alone_is_not_a_difference_but_is_reported() -> None:
    base, _ = golden_pair()
    assert base.solver is not None
    solver = base.solver.model_copy(update={"version": "2.0"})
    other = base.model_copy(update={"inputs_digest": "sha256:" + "c" * 64, "solver": solver})
    d = diff_plans(base, other)
    assert not d.different
    assert (d.base_digest, d.head_digest) == (base.inputs_digest, other.inputs_digest)
    assert "the inputs digest changed but the plan did not" in d.notes
    assert any("HiGHS 2.0" in n for n in d.notes)
    text = diff_to_markdown(d)
    assert "No change in plan." in text and "`sha256:cccccccccccc`" in text and "HiGHS 2.0" in text


def test_new_scenario_is_all_added() -> None:
    head = solved("head")
    d = diff_plans(Plan.empty("s"), head, "main:plans/s.yaml (none)", "plans/s.yaml")
    assert d.different
    assert {c.sign for c in d.deployments} == {"+"} and {b.sign for b in d.bom} == {"+"}
    assert all(c.old is None for c in d.choices)
    assert d.metric("tco_usd").pct is None
    assert "**TCO** $0 → $2.04M (+$2.04M)" in diff_to_markdown(d)


def test_attribution_needs_the_figures() -> None:
    base, head = golden_pair()
    old = base.model_copy(
        update={"economics": None, "totals": base.totals.model_copy(update={"energy_usd_per_year": None})}
    )
    d = diff_plans(old, head)
    assert d.attribution == [] and any("attribution needs" in n for n in d.notes)
    # without economics the horizon comes from $/chip-hour
    no_econ = head.model_copy(update={"economics": None})
    assert tco_parts_cents(no_econ) == tco_parts_cents(head)


def test_money_short() -> None:
    assert money_short(2.77e9) == "$2.77B"
    assert money_short(970e6) == "$970M"
    assert money_short(999.7e6) == "$1B"
    assert money_short(12345) == "$12.3K"
    assert money_short(-1243933) == "-$1.24M"
    assert money_short(812.5) == "$812.50"
    assert money_short(0) == "$0"


# --- JSON -------------------------------------------------------------------------------------------


def test_json_is_stable_and_complete() -> None:
    base, head = golden_pair()
    d = diff_plans(base, head, "main:plans/s.yaml", "plans/s.yaml")
    text = diff_to_json(d)
    assert text == diff_to_json(diff_plans(base, head, "main:plans/s.yaml", "plans/s.yaml"))
    data = json.loads(text)
    assert data["format"] == "trnplan-diff/1"
    assert data["different"] is True
    assert data["counts"] == {"add": 2, "change": 1, "remove": 0}
    assert data["base"] == {
        "label": "main:plans/s.yaml",
        "inputs_digest": "sha256:" + "a" * 64,
        "solver": "HiGHS 1.x (proven optimal)",
    }
    assert data["deployments"][1]["fields"]["units"] == {"old": 4, "new": 3}
    assert sum(cents(a["delta_usd"]) for a in data["attribution"]) == cents(data["summary"][0]["delta"])
    assert text == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


# --- guardrails -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("tco>+5%", Guardrail("tco_usd", ">", 5.0, True, "tco>+5%")),
        ("it_power_kw>+500", Guardrail("it_power_kw", ">", 500.0, False, "it_power_kw>+500")),
        ("capex_usd>+1000000", Guardrail("capex_usd", ">", 1e6, False, "capex_usd>+1000000")),
        ("chips<-10%", Guardrail("chips", "<", -10.0, True, "chips<-10%")),
        ("power >= 250", Guardrail("it_power_kw", ">=", 250.0, False, "power >= 250")),
        ("capex>1.5M", Guardrail("capex_usd", ">", 1.5e6, False, "capex>1.5M")),
        ("it_power>+2MW", Guardrail("it_power_kw", ">", 2000.0, False, "it_power>+2MW")),
        (
            "facility_power_kw > 750 kW",
            Guardrail("facility_power_kw", ">", 750.0, False, "facility_power_kw > 750 kW"),
        ),
        ("capex>$2,000,000", Guardrail("capex_usd", ">", 2e6, False, "capex>$2,000,000")),
        (
            "usd_per_pflop_hour<=-0.5%",
            Guardrail("usd_per_pflop_hour", "<=", -0.5, True, "usd_per_pflop_hour<=-0.5%"),
        ),
    ],
)
def test_parse_guardrail(text: str, expected: Guardrail) -> None:
    assert parse_guardrail(text) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "tcoo>+5%",
            r"unknown metric 'tcoo'; did you mean 'tco'\?; metrics: tco_usd \(tco\), capex_usd \(capex\)",
        ),
        ("cost>5", r"unknown metric 'cost'.*it_power_kw \(power, it_power\)"),
        ("tco+5%", r"expected METRIC OP \[\+\|-\]NUMBER\[%\].*metrics: tco_usd"),
        ("tco>", "expected METRIC OP"),
        ("tco>5k%", "a percentage takes no k/M/B suffix"),
        ("tco>5MW", "tco_usd is not a power"),
        ("power>2kMW", "without a k/M/B multiplier"),
        ("", "expected METRIC OP"),
    ],
)
def test_bad_guardrails_are_usage_errors(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_guardrail(text)


def test_breached() -> None:
    base, head = golden_pair()
    d = diff_plans(base, head)
    rules = [
        parse_guardrail(r)
        for r in (
            "tco>+5%",
            "tco>+200%",
            "it_power_kw>+500",
            "it_power_kw>+40",
            "chips<-10%",
            "racks>=+5",
            "capex>+500K",
            "usd_per_pflop_hour<-40%",
        )
    ]
    messages = breached(d, rules)
    assert messages == [
        "tco_usd rose 155.3% (+$1,243,933, $800,779 → $2,044,712): breaches tco>+5%",
        "it_power_kw rose 58.3% (+42 kW, 72 kW → 114 kW): breaches it_power_kw>+40",
        "racks rose 125.0% (+5, 4 → 9): breaches racks>=+5",
        "capex_usd rose 81.1% (+$523,400, $645,000 → $1,168,400): breaches capex>+500K",
        "usd_per_pflop_hour fell 43.3% (-$0.6179, $1.4283 → $0.8105): breaches usd_per_pflop_hour<-40%",
    ]
    assert breached(diff_plans(head, base), [parse_guardrail("chips<-10%")]) == [
        "chips fell 33.3% (-32, 96 → 64): breaches chips<-10%"
    ]
    assert breached(diff_plans(base, base), rules) == []


def test_percent_guardrail_on_a_new_scenario() -> None:
    d = diff_plans(Plan.empty("s"), solved("head"))
    assert len(breached(d, [parse_guardrail("tco>+5%")])) == 1
    assert breached(d, [parse_guardrail("tco<-5%")]) == []


# --- reading plans from git -----------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repo with two commits of plans/s.yaml: the base plan, then the head plan."""
    base, head = golden_pair()
    git(tmp_path, "init", "-q", "-b", "main")
    write_plan(base, tmp_path / "plans" / "s.yaml")
    git(tmp_path, "add", "plans")
    git(tmp_path, "commit", "-q", "-m", "base")
    write_plan(head, tmp_path / "plans" / "s.yaml")
    git(tmp_path, "commit", "-q", "-am", "head")
    return tmp_path


def test_read_plan_ref_from_git(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base, head = golden_pair()
    monkeypatch.chdir(repo)
    assert read_plan_ref("HEAD~1:plans/s.yaml") == base
    assert read_plan_ref("main:plans/s.yaml") == head
    assert read_plan_ref("plans/s.yaml") == head
    (repo / "sub").mkdir()
    assert read_plan_ref("HEAD~1:plans/s.yaml", cwd=repo / "sub") == base  # paths are from the repo root
    assert read_plan_ref("HEAD~1:./../plans/s.yaml", cwd=repo / "sub") == base  # ./ is from the cwd


def test_rev_path_is_read_from_git_even_when_a_file_of_that_name_exists(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A committed file literally named `HEAD~1:plans/s.yaml` cannot stand in for git's base: REV:path is
    git's; a file whose name holds a colon is named with ./ (or an absolute path)."""
    base, head = golden_pair()
    monkeypatch.chdir(repo)
    (repo / "HEAD~1:plans").mkdir()
    write_plan(head, repo / "HEAD~1:plans" / "s.yaml")  # the forged base
    assert read_plan_ref("HEAD~1:plans/s.yaml") == base
    assert read_plan_ref("./HEAD~1:plans/s.yaml") == head
    assert read_plan_ref(str(repo / "HEAD~1:plans" / "s.yaml")) == head
    write_plan(head, repo / "HEAD~1:odd.yaml")
    with pytest.raises(PlanNotFoundError, match=r"no file 'odd.yaml' at revision 'HEAD~1' \(to read the"):
        read_plan_ref("HEAD~1:odd.yaml")  # git has no such path, and the file of that name is not read
    assert read_plan_ref("./HEAD~1:odd.yaml") == head
    with pytest.raises(InputError, match=r"unknown git revision 'nobranch' \(for a file of that name, write"):
        read_plan_ref("nobranch:odd.yaml")


def test_a_file_named_like_rev_path_does_not_turn_git_show_into_a_pathspec(repo: Path) -> None:
    """`git show HEAD:odd.yaml` with a file of that name on disk shows a commit (the name read as a
    pathspec); the blob is read by object name only."""
    (repo / "HEAD:odd.yaml").write_text("format: trnplan-plan/1\n")
    with pytest.raises(PlanNotFoundError, match=r"HEAD:odd.yaml: no file 'odd.yaml' at revision 'HEAD'"):
        read_plan_ref("HEAD:odd.yaml", cwd=repo)


@pytest.mark.parametrize(
    "ref, error, message",
    [
        (
            "HEAD~1:plans/nope.yaml",
            PlanNotFoundError,
            r"HEAD~1:plans/nope.yaml: no file 'plans/nope.yaml' at revision 'HEAD~1'",
        ),
        ("nobranch:plans/s.yaml", InputError, r"nobranch:plans/s.yaml: unknown git revision 'nobranch'"),
        ("HEAD:plans", InputError, r"HEAD:plans: is a directory at revision 'HEAD'"),
        ("HEAD:", InputError, r"no path after the revision"),
        ("--output=x:plans/s.yaml", InputError, r"cannot start with '-'"),
        ("plans/missing.yaml", PlanNotFoundError, r"plans/missing.yaml: no such plan file"),
    ],
)
def test_read_plan_ref_errors(repo: Path, ref: str, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        read_plan_ref(ref, cwd=repo)


def test_read_plan_ref_not_a_plan(repo: Path) -> None:
    (repo / "notes.yaml").write_text("hello: world\n")
    git(repo, "add", "notes.yaml")
    git(repo, "commit", "-q", "-m", "notes")
    with pytest.raises(InputError, match=r"HEAD:notes.yaml: not a trnplan plan file"):
        read_plan_ref("HEAD:notes.yaml", cwd=repo)


def test_read_plan_ref_outside_a_repo(tmp_path: Path) -> None:
    with pytest.raises(
        InputError, match=r"main:plans/s.yaml: no such file, and .* is not in a git repository"
    ):
        read_plan_ref("main:plans/s.yaml", cwd=tmp_path)


def test_read_plan_ref_without_git(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(repo / "no-bin-here"))
    with pytest.raises(InputError, match=r"main:plans/s.yaml: no such file, and git is not installed"):
        read_plan_ref("main:plans/s.yaml", cwd=repo)


def test_only_gitref_runs_subprocesses() -> None:
    package = Path(__file__).resolve().parent.parent / "trnplan"
    users = sorted(
        str(p.relative_to(package))
        for p in package.rglob("*.py")
        if re.search(r"^\s*(import subprocess|from subprocess import)", p.read_text(encoding="utf-8"), re.M)
    )
    assert users == ["gitref.py"]


def test_diff_help_says_rev_path_is_git_and_how_to_name_a_file_with_a_colon() -> None:
    result = run("diff", "--help", columns=200)
    text = " ".join(result.stdout.split())
    assert "REV:path is always read from git, even if a file of that name exists" in text
    assert "with ./ (./odd:name.yaml)" in text


# --- phased diffs: a change once, inputs with their base values, readable deployment fields ----------


def _phased_world(tmp_path: Path, first_chips: int) -> Path:
    """The testkit's one-site world over four half-year periods, `first_chips` from 2026-01 and 48 from
    2027-01 (liq16: 16 chips a rack)."""
    import yaml

    from trnplan.testkit.builders import base_specs

    data = base_specs()
    data["scenarios"]["s"].update(
        {
            "periods": ["2026-01", "2026-07", "2027-01", "2027-07"],
            "horizon_years": 2,
            "demand": {"2026-01": {"chips": first_chips}, "2027-01": {"chips": 48}},
        }
    )
    folder = tmp_path / f"specs-{first_chips}"
    folder.mkdir()
    (folder / "world.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def _planned(specs: Path, *overrides: str) -> Plan:
    from trnplan.plan import plan_scenario
    from trnplan.specs.load import load_specs

    return plan_scenario(load_specs([specs], list(overrides)), "s", alternatives=0)


def test_a_phased_diff_lists_a_cumulative_change_once_where_it_starts(tmp_path: Path) -> None:
    """Head buys a second liq16 in 2026-01 (32 chips instead of 16), so its installed base is one unit
    larger in every later period, where both bought the same: the change is listed in 2026-01 only (and in
    2027-01, where head bought one unit fewer to reach 48)."""
    base = _planned(_phased_world(tmp_path, 16))
    head = _planned(_phased_world(tmp_path, 32))
    d = diff_plans(base, head)
    assert d.periods is not None
    listed = [(p.start, o.key, o.old_units, o.new_units, o.old_bought, o.new_bought)
              for p in d.periods.periods for o in p.options]
    assert listed == [
        ("2026-01", "liq16/liquid/up", 1, 2, 1, 2),
        ("2027-01", "liq16/liquid/up", 3, 3, 2, 1),
    ]
    assert [p.start for p in d.periods.periods if p.changed] == ["2026-01", "2026-07", "2027-01"]
    md = diff_to_markdown(d).splitlines()
    rows = [line.split(" | ")[0] for line in md if "| liq16/liquid/up |" in line]
    assert rows == ["| 2026-01", "| 2027-01"]


def test_an_override_on_one_side_shows_the_value_it_replaced(tmp_path: Path) -> None:
    """head re-planned with `--set` of a figure the specs state (0.1 $/kWh) and of one they leave out
    (max_rack_kw): the first reads `0.1` → `0.2`, the second — → `50`."""
    specs = _phased_world(tmp_path, 16)
    base = _planned(specs)
    head = _planned(specs, "sites.a.electricity_usd_per_kwh=0.2", "sites.a.max_rack_kw=50")
    assert head.inputs is not None and head.inputs.replaced == {"sites.a.electricity_usd_per_kwh": "0.1"}
    md = diff_to_markdown(diff_plans(base, head))
    assert "- `--set sites.a.electricity_usd_per_kwh`: `0.1` → `0.2`" in md
    assert "- `--set sites.a.max_rack_kw`: — → `50`" in md
    back = diff_to_markdown(diff_plans(head, base))  # the other way round: the value comes back
    assert "- `--set sites.a.electricity_usd_per_kwh`: `0.2` → `0.1`" in back
    assert "- `--set sites.a.max_rack_kw`: `50` → —" in back


def test_a_deployment_change_reads_in_words_not_field_names(tmp_path: Path) -> None:
    from test_render_tables import printed

    from trnplan.render import render_diff

    d = diff_plans(_planned(_phased_world(tmp_path, 16)), _planned(_phased_world(tmp_path, 64)))
    for width in (80, 120):
        text = printed(render_diff(d), width)
        assert "IT power" in text and "capex" in text
        assert "it_power_kw" not in text and "capex_usd" not in text

"""Hostile plan files: bad numbers, duplicate keys, hand edits and hostile paths are refused with exit 3 and
`FILE:LINE:COL` of the key at fault, by `bom`, `diff` (either side) and `optimize --check`; never a
traceback, never a hang, never "internal error".

The seeds are the committed plans/trn3-100k.yaml (three sites, alternatives, economics; library level)
and a plan of the builders' tiny world solved once (through the real commands, where `optimize --check`
needs specs). Each edit is made to the file's text at the line of one key, found with yamlsafe's marks.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import conftest
import pytest
import yaml

from trnplan.errors import EXIT_DIFFERENT, EXIT_INVALID, EXIT_OK, InputError
from trnplan.plan.file import PlanError, PlanNotFoundError, parse_plan, read_plan
from trnplan.specs.yamlsafe import KeyPath, dotted, parse_yaml
from trnplan.testkit.builders import base_specs

run = partial(conftest.run, columns=200)
"""The CLI in-process (tests/conftest.py), 200 columns wide."""

REPO = Path(__file__).resolve().parents[1]
SHIPPED = (REPO / "plans" / "trn3-100k.yaml").read_text(encoding="utf-8")


@lru_cache(maxsize=8)
def marks_of(text: str) -> dict[KeyPath, tuple[int, int]]:
    return parse_yaml(text).marks


@lru_cache(maxsize=8)
def data_of(text: str) -> Any:
    return yaml.safe_load(text)


def mark(text: str, path: KeyPath) -> tuple[int, int]:
    return marks_of(text)[path]


def set_value(text: str, path: KeyPath, value: str) -> str:
    """`text` with the value of the key at `path` (a block mapping entry, value on its line) replaced."""
    line, col = mark(text, path)
    lines = text.split("\n")
    lines[line - 1] = lines[line - 1][: col - 1] + f"{path[-1]}: {value}"
    return "\n".join(lines)


def refusal(text: str, source: str = "p.yaml") -> list[str]:
    with pytest.raises(PlanError) as info:
        parse_plan(text, source)
    return str(info.value).split("\n")


def assert_located(text: str, path: KeyPath, edited: str, words: str) -> None:
    """Reading `edited` is refused, its first problem on the line of `path` in `text`, saying `words`."""
    line, _ = mark(text, path)
    first = refusal(edited)[0]
    assert re.match(rf"p\.yaml:{line}:\d+: ", first), (first, line)
    assert words in first, first


# --- bad numbers and types ------------------------------------------------------------------------------

FIELDS: list[KeyPath] = [
    ("totals", "capex_usd"),
    ("totals", "chips"),
    ("totals", "it_power_kw"),
    ("totals", "tco_usd"),
    ("sites", "iad-air", "capex_usd"),
    ("sites", "ind-new", "scale_out", "switches"),
    ("economics", "horizon_years"),
    ("economics", "crf"),
    ("objective", "value"),
    ("solver", "mip_gap"),
]
BAD_VALUES = [
    ".inf",
    "-.inf",
    ".nan",
    "null",
    "1e400",
    "1.0e+300",
    "1.7e+308",
    "-5",
    "lots",
    "true",
    "[1]",
    "{a: 1}",
]


@pytest.mark.parametrize("value", BAD_VALUES)
@pytest.mark.parametrize("path", FIELDS, ids=dotted)
def test_a_bad_number_is_refused_at_its_line(path: KeyPath, value: str) -> None:
    assert_located(SHIPPED, path, set_value(SHIPPED, path, value), dotted(path))


@pytest.mark.parametrize("value", ["-5", "0", "1.5", "'78'", "99999999999999999999999"])
def test_deployment_units_must_be_a_whole_number_of_at_least_one(value: str) -> None:
    path = ("sites", "iad-air", "deployments", 0, "units")
    assert_located(SHIPPED, path, set_value(SHIPPED, path, value), "units")


@pytest.mark.parametrize("value", ["-5", ".nan", "lots", "1.0e+300"])
@pytest.mark.parametrize("key", ["quantity", "unit_usd", "extended_usd"])
def test_a_bad_bom_figure_is_refused_at_its_line(key: str, value: str) -> None:
    path = ("bom", 0, key)
    assert_located(SHIPPED, path, set_value(SHIPPED, path, value), f"bom.0.{key}")


def test_an_optimal_plan_with_a_gap_is_refused_and_a_feasible_one_read() -> None:
    """`status: optimal` claims a proof; a gap says there is none. A feasible plan may have any gap."""
    edited = set_value(SHIPPED, ("solver", "mip_gap"), "0.5")
    assert_located(SHIPPED, ("solver", "mip_gap"), edited, "a plan marked optimal has gap 0, not 0.5")
    feasible = set_value(edited, ("solver", "status"), "feasible")
    assert parse_plan(feasible).status == "feasible"
    assert_located(
        SHIPPED, ("solver", "status"), set_value(SHIPPED, ("solver", "status"), "proven"), "status"
    )


@pytest.mark.parametrize("years", ["0", "-1", "0.5", "101"])
def test_an_impossible_horizon_is_refused(years: str) -> None:
    path = ("economics", "horizon_years")
    assert_located(SHIPPED, path, set_value(SHIPPED, path, years), "economics.horizon_years")


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("sites", "iad-air", "deployments", 0, "form"), "'[red]x[/]'"),
        (("sites", "iad-air", "scale_out", "switch"), "TH4"),
        (("bom", 0, "site"), "'iad air'"),
    ],
)
def test_ids_in_a_plan_are_spec_ids(path: KeyPath, value: str) -> None:
    assert_located(SHIPPED, path, set_value(SHIPPED, path, value), dotted(path))


def test_an_unknown_key_is_refused_at_its_line() -> None:
    edited = SHIPPED.replace("totals:\n", "totals:\n  chips_bonus: 5\n")
    line = SHIPPED.split("\n").index("totals:") + 2
    first = refusal(edited)[0]
    assert first == (
        f"p.yaml:{line}:3: malformed or truncated plan file: "
        "totals.chips_bonus: unknown field 'chips_bonus'; did you mean 'chips'?"
    )


def test_every_problem_is_listed_each_at_its_line() -> None:
    edited = set_value(SHIPPED, ("totals", "chips"), "many")
    edited = set_value(edited, ("totals", "racks"), "-1")
    lines = refusal(edited)
    assert [re.match(r"p\.yaml:(\d+):", x).group(1) for x in lines] == [  # type: ignore[union-attr]
        str(mark(SHIPPED, ("totals", "chips"))[0]),
        str(mark(SHIPPED, ("totals", "racks"))[0]),
    ]


# --- duplicate keys -------------------------------------------------------------------------------------


SHIPPED_IT_KW = yaml.safe_load(SHIPPED)["totals"]["it_power_kw"]
SHIPPED_IAD_UNITS = yaml.safe_load(SHIPPED)["sites"]["iad-air"]["deployments"][0]["units"]


@pytest.mark.parametrize(
    ("anchor", "duplicate"),
    [
        ("format: trnplan-plan/1\n", "format: trnplan-plan/1\n"),
        (f"  it_power_kw: {SHIPPED_IT_KW}\n", f"  it_power_kw: {SHIPPED_IT_KW - 100_000:.3f}\n"),
        (f"      units: {SHIPPED_IAD_UNITS}\n", f"      units: {SHIPPED_IAD_UNITS // 10}\n"),
        ("  mip_gap: 0\n", "  mip_gap: 0.5\n"),
    ],
)
def test_a_duplicate_key_is_refused_not_the_last_one_kept(anchor: str, duplicate: str) -> None:
    assert SHIPPED.count(anchor) == 1
    edited = SHIPPED.replace(anchor, anchor + duplicate)
    line = SHIPPED[: SHIPPED.index(anchor)].count("\n") + 2
    key = duplicate.strip().split(":")[0]
    first = refusal(edited)[0]
    assert re.match(
        rf"p\.yaml:{line}:\d+: not a readable plan file: .*duplicate key '{key}' \(first at line", first
    )


# --- hand edits: every recomputable figure ------------------------------------------------------------


def scaled(text: str, path: KeyPath, factor: float = 1.01, plus: float = 1) -> str:
    value = data_of(text)
    for part in path:
        value = value[part]
    new = round(value * factor + plus) if isinstance(value, int) else value * factor + plus * 0.5
    return set_value(text, path, repr(new))


TOTALS = [
    "chips",
    "units",
    "racks",
    "domains",
    "network_racks",
    "fp8_pflops",
    "it_power_kw",
    "facility_power_kw",
    "capex_usd",
    "opex_usd_per_year",
    "energy_usd_per_year",
    "colocation_usd_per_year",
    "maintenance_usd_per_year",
    "tco_usd",
    "usd_per_pflop_hour",
    "usd_per_chip_hour",
]


@pytest.mark.parametrize("key", TOTALS)
def test_an_edited_total_is_refused_at_its_line(key: str) -> None:
    path = ("totals", key)
    assert_located(SHIPPED, path, scaled(SHIPPED, path), "does not add up")


def test_it_power_cut_by_100_mw_is_refused() -> None:
    path = ("totals", "it_power_kw")
    cut = SHIPPED_IT_KW - 100_000
    edited = set_value(SHIPPED, path, f"{cut:.3f}")
    shown = f"{cut:,.3f}".rstrip("0").rstrip(".")
    sites = ", ".join(
        str(mark(SHIPPED, ("sites", s, "it_power_kw"))[0]) for s in ("iad-air", "ind-new", "wa-remote")
    )
    words = (
        f"totals.it_power_kw {shown} at line {mark(SHIPPED, path)[0]} is not the sum of its sites' "
        f"it_power_kw ({SHIPPED_IT_KW:,}: lines {sites})"
    )
    assert_located(SHIPPED, path, edited, words)


@pytest.mark.parametrize(
    "path",
    [
        ("sites", "iad-air", "racks"),
        ("sites", "iad-air", "it_power_kw"),
        ("sites", "ind-new", "capex_usd"),
        ("sites", "ind-new", "opex_usd_per_year"),
        ("sites", "ind-new", "deployments", 1, "it_power_kw"),
        ("sites", "ind-new", "deployments", 1, "chips"),
        ("sites", "ind-new", "deployments", 1, "capex_usd"),
        ("sites", "iad-air", "scale_out", "it_power_kw"),
        ("sites", "iad-air", "scale_out", "network_racks"),
        ("bom", 3, "extended_usd"),
        ("economics", "cost_of_capital"),
        ("economics", "tco_per_capex_usd"),
        ("economics", "maintenance_rate"),
        ("objective", "value"),
        ("alternatives", 0, "delta_pct"),
    ],
    ids=dotted,
)
def test_an_edited_part_shows_in_what_it_adds_up_to(path: KeyPath) -> None:
    """An edit of a part is refused where a stated figure no longer agrees with it (maybe its sum's line)."""
    lines = refusal(scaled(SHIPPED, path))
    assert all(
        re.match(r"p\.yaml:\d+:\d+: plan file does not add up \(edited or damaged\?\): ", x) for x in lines
    )


def test_a_site_below_its_own_it_power_and_a_stray_bom_line_are_refused() -> None:
    path = ("sites", "iad-air", "facility_power_kw")
    edited = set_value(SHIPPED, path, "6000")
    assert any("less than its IT power" in x for x in refusal(edited))
    edited = set_value(SHIPPED, ("bom", 0, "site"), "elsewhere")
    assert any("bom line 1 is for site elsewhere" in x for x in refusal(edited))


def test_yaml_1_1_octal_in_a_plan_is_read_as_yaml_1_2_and_then_does_not_add_up() -> None:
    """`units: 0116` would be 78 to YAML 1.1 (octal), so an edit could hide; it is 116, which its racks and
    its totals contradict: the refusal is at the edited line, and the total's names it."""
    path = ("sites", "iad-air", "deployments", 0, "units")
    assert oct(78) == "0o116"
    line, edited = mark(SHIPPED, path)[0], set_value(SHIPPED, path, "0116")
    assert_located(SHIPPED, path, edited, f"units 116 at line {line} is not its racks")
    total = mark(SHIPPED, ("totals", "units"))[0]
    assert any(x.startswith(f"p.yaml:{total}:") and f"lines {line}, " in x for x in refusal(edited))
    assert_located(SHIPPED, path, set_value(SHIPPED, path, "1:18"), "units")  # text, not 78 (base 60)


def test_the_committed_plans_read_back_unchanged() -> None:
    from trnplan.plan.file import plan_to_yaml

    for path in sorted((REPO / "plans").glob("*.yaml")):
        assert plan_to_yaml(read_plan(path)) == path.read_text(encoding="utf-8")


def test_a_string_a_yaml_1_2_reader_takes_for_a_number_is_quoted() -> None:
    from trnplan.plan.file import plan_to_yaml

    plan = read_plan(REPO / "plans" / "trn3-100k.yaml")
    odd = plan.model_copy(update={"scenario": "0o17", "inputs_digest": "09"})
    text = plan_to_yaml(odd)
    assert "scenario: '0o17'" in text and "inputs_digest: '09'" in text
    assert parse_plan(text) == odd
    assert yaml.safe_load(text)["scenario"] == "0o17"  # and YAML 1.1 readers agree


# --- through the commands -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, Path]:
    """(spec folder, plan file) of the builders' tiny world, solved once."""
    root = tmp_path_factory.mktemp("tiny")
    (root / "specs").mkdir()
    (root / "specs" / "world.yaml").write_text(yaml.safe_dump(base_specs(), sort_keys=False))
    plan = root / "s.yaml"
    result = run("optimize", "s", "--specs", str(root / "specs"), "--out", str(plan), "--alternatives", "0")
    assert result.exit_code == EXIT_OK, result.output
    return root / "specs", plan


def refused_by_every_command(specs: Path, good: Path, path: Path, expected: str) -> None:
    """`bom`, `diff` either side and `optimize --check` all refuse `path` with exit 3 and `expected` (a
    regex; FILE stands for the path) on stderr's first line, leaving the file as it was."""
    before = path.read_bytes() if path.is_file() else None
    check = ["optimize", "s", "--specs", str(specs), "--out", str(path), "--check", "--alternatives", "0"]
    for args in (["bom", str(path)], ["diff", str(good), str(path)], ["diff", str(path), str(good)], check):
        result = run(*args)
        output = result.stdout + result.stderr
        assert "Traceback" not in output and "internal error" not in output, output
        assert result.exit_code == EXIT_INVALID, (args, result.exit_code, output)
        first = result.stderr.split("\n")[0].removeprefix("error: ")
        assert re.match(expected.replace("FILE", re.escape(str(path))), first), (args, first)
    assert (path.read_bytes() if path.is_file() else None) == before


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("totals", "capex_usd"), ".inf", "malformed or truncated plan file: totals.capex_usd: "),
        (("totals", "chips"), "null", "malformed or truncated plan file: totals.chips: "),
        (("totals", "it_power_kw"), "1e400", "malformed or truncated plan file: totals.it_power_kw: "),
        (
            ("totals", "it_power_kw"),
            "1",
            r"plan file does not add up .*: totals.it_power_kw 1 at line \d+ is not the sum of its sites' ",
        ),
        (("sites", "a", "deployments", 0, "units"), "-5", "malformed .*: sites.a.deployments.0.units: "),
        (("solver", "mip_gap"), "0.5", "malformed .*: solver.mip_gap: a plan marked optimal has gap 0"),
        (("economics", "horizon_years"), "0", "malformed .*: economics.horizon_years: "),
    ],
)
def test_commands_refuse_bad_numbers_at_their_line(tiny, tmp_path: Path, path, value, message) -> None:
    specs, good = tiny
    text = good.read_text()
    bad = tmp_path / "s.yaml"
    bad.write_text(set_value(text, path, value))
    line, _ = mark(text, path)
    refused_by_every_command(specs, good, bad, rf"FILE:{line}:\d+: {message}")


def test_commands_refuse_duplicate_keys(tiny, tmp_path: Path) -> None:
    specs, good = tiny
    text = good.read_text()
    bad = tmp_path / "s.yaml"
    bad.write_text(text.replace("totals:\n", "totals:\n  chips: 1000000\n"))
    refused_by_every_command(
        specs, good, bad, r"FILE:\d+:3: not a readable plan file: totals.chips: duplicate"
    )


def test_a_guardrail_cannot_be_dodged_by_editing_the_plan(tiny, tmp_path: Path) -> None:
    """The head plan (80 chips, not 64) uses more IT power; stating the base's instead is refused."""
    specs, good = tiny
    world = base_specs()
    world["scenarios"]["s"]["demand"]["chips"] = 80
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "w.yaml").write_text(yaml.safe_dump(world))
    head = tmp_path / "head.yaml"
    grown = run(
        "optimize", "s", "--specs", str(tmp_path / "specs"), "--out", str(head), "--alternatives", "0"
    )
    assert grown.exit_code == EXIT_OK, grown.output
    honest = run("diff", str(good), str(head), "--fail-if", "it_power_kw>+10")
    assert honest.exit_code == EXIT_DIFFERENT and "guardrail breached" in honest.stderr
    base_kw = yaml.safe_load(good.read_text())["totals"]["it_power_kw"]
    head.write_text(set_value(head.read_text(), ("totals", "it_power_kw"), str(base_kw)))
    dodged = run("diff", str(good), str(head), "--fail-if", "it_power_kw>+10")
    assert dodged.exit_code == EXIT_INVALID, dodged.output
    assert "does not add up" in dodged.stderr and "internal error" not in dodged.stderr


# --- in the words of spec files -----------------------------------------------------------------------

PREFIX = "malformed or truncated plan file: "
IAD_UNITS = ("sites", "iad-air", "deployments", 0, "units")


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("totals", "chips"), "lots", "totals.chips: expected a whole number, got the text 'lots'"),
        (
            ("totals", "capex_usd"),
            "'12 USD'",
            "totals.capex_usd: expected a number, got the text '12 USD'; write a bare number, the unit is in "
            "the field name",
        ),
        (
            ("totals", "capex_usd"),
            "'1270245374.25'",
            "totals.capex_usd: expected a number, got the text '1270245374.25'; write numbers without quotes",
        ),
        (("totals", "tco_usd"), ".inf", "totals.tco_usd: expected a finite number, got the number inf"),
        (IAD_UNITS, "1.5", "sites.iad-air.deployments.0.units: expected a whole number, got 1.5"),
        (IAD_UNITS, "-5", "sites.iad-air.deployments.0.units: expected 1 or more, got the whole number -5"),
        (
            ("economics", "horizon_years"),
            "101",
            "economics.horizon_years: expected 100 or less, got the whole number 101",
        ),
        (
            ("economics", "utilization"),
            "0",
            "economics.utilization: expected more than 0, got the whole number 0",
        ),
        (("solver", "mip_gap"), "0.5", "solver.mip_gap: a plan marked optimal has gap 0, not 0.5"),
        (
            ("objective", "kind"),
            "min_cost",
            "objective.kind: expected 'min_tco', 'max_perf' or 'max_perf_per_tco', got the text 'min_cost'; "
            "did you mean 'min_tco'?",
        ),
        (
            ("bom", 0, "site"),
            "IAD-AIR",
            "bom.0.site: 'IAD-AIR' is not a valid id: ids use lowercase letters, digits, '.' and '-', and "
            "start with a letter or digit; did you mean 'iad-air'?",
        ),
        (
            ("scenario",),
            "yes",
            "scenario: expected text, got the boolean true; YAML reads yes/no/on/off/true/false as booleans, "
            "quote it to mean text",
        ),
        (("totals", "units"), "[1350]", "totals.units: expected a whole number, got a list of 1 item"),
    ],
    ids=lambda x: dotted(x) if isinstance(x, tuple) else None,
)
def test_a_wrong_value_is_worded_as_in_a_spec_file(path: KeyPath, value: str, message: str) -> None:
    """The words of `trnplan validate` (specs.explain), not pydantic's, at the key's line and column."""
    line, col = mark(SHIPPED, path)
    assert refusal(set_value(SHIPPED, path, value)) == [f"p.yaml:{line}:{col}: {PREFIX}{message}"]


def test_no_pydantic_wording_reaches_the_reader() -> None:
    for path in [*FIELDS, IAD_UNITS, ("bom", 0, "quantity"), ("objective", "kind")]:
        for value in BAD_VALUES:
            for line in refusal(set_value(SHIPPED, path, value)):
                assert not re.search(
                    r"Input should|Value error|Field required|Extra inputs|String should|valid dictionary",
                    line,
                ), line


def delete_key(text: str, path: KeyPath) -> str:
    """`text` without the line of the key at `path` (a key whose value is on its line)."""
    lines = text.split("\n")
    del lines[mark(text, path)[0] - 1]
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("path", "at"),
    [
        (("totals", "units"), ("totals",)),
        (("sites", "iad-air", "deployments", 0, "form"), ("sites", "iad-air", "deployments", 0)),
        (("sites", "ind-new", "scale_out", "switch"), ("sites", "ind-new", "scale_out")),
        (("solver", "version"), ("solver",)),
        (("format",), ()),
        (("scenario",), ()),
    ],
    ids=lambda x: dotted(x) or "top",
)
def test_a_missing_key_is_refused_at_the_line_of_its_mapping(path: KeyPath, at: KeyPath) -> None:
    """A nested key at its mapping's line (a list item's: where the item starts); a top-level key at 1:1."""
    line, col = mark(SHIPPED, at) if at else (1, 1)
    where = f"{dotted(at)}: " if at else ""
    assert refusal(delete_key(SHIPPED, path)) == [
        f"p.yaml:{line}:{col}: {PREFIX}{where}missing required field '{path[-1]}'"
    ]


# --- cut off: where it ends, and that it looks cut off -------------------------------------------------

CUT_HERE = "the file looks cut off here"


def line_of(text: str, path: KeyPath) -> str:
    """The line of the key at `path` (its value on that line), as the shipped plan writes it."""
    return text.split("\n")[mark(text, path)[0] - 1]


LAST_BOM = ("bom", len(yaml.safe_load(SHIPPED)["bom"]) - 1, "unit_usd")
"""The last key of the last BOM line: the line before `economics`."""


def first_lines(text: str, n: int) -> str:
    return "\n".join(text.split("\n")[:n]) + "\n"


def end_of(text: str) -> tuple[int, int]:
    body = text.rstrip()
    return body.count("\n") + 1, len(body) - body.rfind("\n")


@pytest.mark.parametrize(
    ("last", "missing"),
    [
        (line_of(SHIPPED, LAST_BOM), "format, inputs_digest, objective, scenario, sites, solver, totals"),
        ("objective:", "scenario, sites, solver, totals"),
        ("sites:", "sites, solver, totals"),
        (
            line_of(SHIPPED, ("sites", "iad-air", "scale_out", "ports")),
            "sites.iad-air.scale_out.switch, solver, totals",
        ),
        ("- category: cooling", "bom.2.extended_usd, bom.2.item, bom.2.quantity, bom.2.site, bom.2.unit_usd"),
        (line_of(SHIPPED, ("totals", "energy_usd_per_year")), "totals.facility_power_kw, totals.fp8_pflops"),
    ],
)
def test_a_plan_cut_at_a_line_says_it_looks_cut_off_where_it_ends(last: str, missing: str) -> None:
    """Cut before its `format` key, or with later top-level keys or a mapping's last keys gone: one problem,
    at the end of the text, naming what is missing."""
    n = SHIPPED.split("\n").index(last) + 1
    cut = first_lines(SHIPPED, n)
    (problem,) = refusal(cut)
    line, col = end_of(cut)
    assert (line, col) == (n, len(last) + 1)
    assert problem.startswith(f"p.yaml:{n}:{col}: {PREFIX}{CUT_HERE}, before {missing}"), problem
    assert problem.endswith("(a plan file has them); re-plan it or restore it"), problem


@pytest.mark.parametrize(
    ("after", "keep", "words"),
    [
        ("choice: 'iad-air", 12, "not a readable plan file (YAML syntax: found unexpected end of stream"),
        (
            line_of(SHIPPED, ("totals", "units")),
            4,
            "not a readable plan file (YAML syntax: could not find expected ':'",
        ),
        (
            "format: trnplan-plan/1",
            12,
            f"{PREFIX}{CUT_HERE}, inside its format ('trnp', not 'trnplan-plan/1'",
        ),
        (
            line_of(SHIPPED, ("totals", "tco_usd")),
            12,
            f"{PREFIX}{CUT_HERE}, before totals.units, totals.usd_per_chip_hour",
        ),
    ],
)
def test_a_plan_cut_inside_a_line_says_it_looks_cut_off_there(after: str, keep: int, words: str) -> None:
    cut = SHIPPED[: SHIPPED.index(after) + keep]
    line, col = end_of(cut)
    problems = refusal(cut)
    assert any(p.startswith(f"p.yaml:{line}:") and words in p and CUT_HERE in p for p in problems), problems


def test_a_last_value_cut_short_is_refused_with_a_hint_that_the_file_ends_there() -> None:
    """`usd_per_pflop_hour: 0.3` (of 0.31736) is a number; only the sums and the missing line break tell."""
    assert SHIPPED.endswith("  usd_per_pflop_hour: 0.31736\n")
    cut = SHIPPED[: -len("1736\n")]
    (problem,) = refusal(cut)
    assert problem.startswith(f"p.yaml:{end_of(cut)[0]}:3: plan file does not add up (edited or damaged?): ")
    assert problem.endswith("(the file ends on this line, without a line break: is it cut off?)"), problem


def test_every_cut_at_a_line_end_says_where_the_file_looks_cut_off() -> None:
    lines = SHIPPED.split("\n")
    for n in [*range(1, len(lines) - 2, 2), len(lines) - 2]:  # every other line, and the last but one
        cut = first_lines(SHIPPED, n)
        line, col = end_of(cut)
        problems = refusal(cut)
        assert any(p.startswith(f"p.yaml:{line}:{col}: ") and CUT_HERE in p for p in problems), (n, problems)


def test_commands_say_a_cut_off_plan_looks_cut_off(tiny, tmp_path: Path) -> None:
    specs, good = tiny
    text = good.read_text()
    n = text.split("\n").index("economics:")
    bad = tmp_path / "s.yaml"
    bad.write_text(first_lines(text, n))
    expected = (
        rf"FILE:{n}:\d+: {PREFIX}{CUT_HERE}, before format, inputs_digest, .*; re-plan it or restore it"
    )
    refused_by_every_command(specs, good, bad, expected)


# --- what disagrees: each figure with its line, and the lines of its parts -----------------------------


DATA = yaml.safe_load(SHIPPED)
DEPLOYMENTS: list[KeyPath] = [
    ("sites", site, "deployments", i)
    for site, section in sorted(DATA["sites"].items())
    for i in range(len(section["deployments"]))
]
DOES_NOT_ADD_UP = "plan file does not add up (edited or damaged?): "


def line_list(paths: list[KeyPath]) -> str:
    return ", ".join(str(n) for n in sorted(mark(SHIPPED, p)[0] for p in paths))


def test_an_edited_units_is_refused_at_its_own_line_and_its_total_names_every_part() -> None:
    """The user trial's edit: one deployment's `units` -> 386. Refused at that line (its racks are
    not 386 x 2, the racks per unit of the form in its other deployments, whose lines are named), and the
    total names the line of each deployment's units, the edited one among them."""
    units, total = mark(SHIPPED, IAD_UNITS)[0], mark(SHIPPED, ("totals", "units"))[0]
    others = [
        (*d, "units")
        for d in DEPLOYMENTS
        if d != IAD_UNITS[:-1] and DATA["sites"][d[1]]["deployments"][d[3]]["form"] == "trn3-nl32x2"
    ]
    assert len(others) == 2
    parts = line_list([(*IAD_UNITS[:-1], "racks"), *others])
    dep = DATA["sites"]["iad-air"]["deployments"][0]
    racks, had, all_units = dep["racks"], dep["units"], DATA["totals"]["units"]
    assert refusal(set_value(SHIPPED, IAD_UNITS, "386")) == [
        f"p.yaml:{units}:7: {DOES_NOT_ADD_UP}sites.iad-air.deployments.0.units 386 at line {units} is not "
        f"its racks / 2, the racks per unit of trn3-nl32x2 in its other deployments ({racks} / 2 = {had}: "
        f"lines {parts})",
        f"p.yaml:{total}:3: {DOES_NOT_ADD_UP}totals.units {all_units:,} at line {total} is not the sum of "
        f"its deployments' units ({all_units - had + 386:,}: "
        f"lines {line_list([(*d, 'units') for d in DEPLOYMENTS])})",
    ]


def test_units_edited_with_its_total_is_still_refused_at_the_units_line() -> None:
    """The sums agree again, but 386 units are not the deployment's racks of a two-rack unit."""
    had, all_units = DATA["sites"]["iad-air"]["deployments"][0]["units"], DATA["totals"]["units"]
    edited = set_value(set_value(SHIPPED, IAD_UNITS, "386"), ("totals", "units"), str(all_units - had + 386))
    assert_located(SHIPPED, IAD_UNITS, edited, "units 386 at line")
    assert len(refusal(edited)) == 1


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("racks", "770", "racks 770 at line {line} is not its units x 2, the racks per unit of trn3-nl32x2"),
        (
            "chips",
            "24330",
            "chips 24,330 at line {line} is not its racks x 32, the chips per rack of trn3-nl32x2",
        ),
        ("units", "190", "units 190 at line {line} is not its racks / 2, the racks per unit of trn3-nl32x2"),
    ],
)
def test_the_edited_count_of_a_deployment_is_the_one_blamed(key: str, value: str, words: str) -> None:
    """Racks, chips and units are whole multiples of each other; the one whose sum also disagrees (or, with
    every sum agreeing, the units) is the one blamed, at its line. 190 x 4 = 760 is a whole number of
    racks, but the form's other deployments have 2 racks a unit."""
    path = IAD_UNITS[:-1] + (key,)
    line = mark(SHIPPED, path)[0]
    assert_located(SHIPPED, path, set_value(SHIPPED, path, value), words.format(line=line))


def findable(text: str, path: KeyPath, problems: list[str]) -> bool:
    """Whether the line of `path` is where a problem is, or is named in one (`at line N`, `lines ...`)."""
    line = mark(text, path)[0]
    for problem in problems:
        if problem.startswith(f"p.yaml:{line}:") or re.search(rf"\bline {line}\b", problem):
            return True
        if any(str(line) in re.findall(r"\d+", named) for named in re.findall(r"lines ([\d, .]+)", problem)):
            return True
    return False


def refused_figures(text: str, heads: tuple[str, ...]) -> list[KeyPath]:
    """The number figures under `heads` whose edit the reader refuses."""
    data = data_of(text)

    def value(path: KeyPath) -> object:
        v = data
        for part in path:
            v = v[part]
        return v

    found = []
    for path in marks_of(text):
        if path and path[0] in heads and isinstance(path[-1], str):
            v = value(path)
            if isinstance(v, int | float) and not isinstance(v, bool):
                found.append(path)
    return found


def test_every_refused_edit_of_a_figure_is_findable_from_the_messages() -> None:
    """Edit any number of a deployment, a site, the totals or a BOM line: if the reader refuses it, the
    edited line is where a problem is or among the lines a problem names."""
    refused = 0
    for path in refused_figures(SHIPPED, ("sites", "totals", "bom")):
        try:
            parse_plan(scaled(SHIPPED, path), "p.yaml")
            continue  # a figure the plan cannot recompute by itself (fabric sizing): `optimize --check`'s
        except PlanError as exc:
            problems = str(exc).split("\n")
        refused += 1
        assert findable(SHIPPED, path, problems), (path, problems)
    assert refused >= 150


def test_lines_text_lists_every_line_up_to_twelve() -> None:
    from trnplan.plan.consistency import lines_text

    assert lines_text([7]) == "line 7"
    assert lines_text([25, 12, 12]) == "lines 12, 25"
    assert lines_text(range(1, 13)) == "lines " + ", ".join(map(str, range(1, 13)))
    assert lines_text(range(1, 41)) == "lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ... 40 (40 lines)"


# --- plan paths that are not regular files ------------------------------------------------------------


def special(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / "plans" / "s.yaml"
    path.parent.mkdir()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev zero":
        os.symlink("/dev/zero", path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "link to a directory":
        os.symlink(tmp_path, path)
    elif kind == "symlink loop":
        os.symlink("s.yaml", path)
    elif kind == "30 MB":
        with open(path, "wb") as handle:
            handle.truncate(30 * 1000 * 1000)
    return path


SPECIAL = {
    "fifo": r"FILE: cannot read plan file: not a regular file \(a pipe, socket or device\?\)",
    "dev zero": r"FILE: cannot read plan file: not a regular file \(a pipe, socket or device\?\)",
    "directory": r"FILE: is a directory, not a plan file",
    "link to a directory": r"FILE: is a directory, not a plan file",
    "symlink loop": r"FILE: cannot read plan file: symlink loop \(too many levels of symbolic links\)",
    "30 MB": r"FILE: file is 28\.6 MiB, over the 4\.0 MiB limit for a plan file",
}


@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_library_refuses_plan_paths_that_are_not_regular_files(kind: str, tmp_path: Path) -> None:
    path = special(tmp_path, kind)
    with pytest.raises(InputError) as info:
        read_plan(path)
    assert re.fullmatch(SPECIAL[kind].replace("FILE", re.escape(str(path))), str(info.value)), str(info.value)


PYTHON_M = [sys.executable, "-m", "trnplan"]


@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_commands_refuse_plan_paths_that_are_not_regular_files_without_hanging(
    kind: str, tiny, tmp_path: Path
) -> None:
    """In subprocesses with a timeout: a FIFO read would block forever, /dev/zero never end."""
    specs, good = tiny
    path = special(tmp_path, kind)
    check = ["optimize", "s", "--specs", str(specs), "--out", str(path), "--check", "--alternatives", "0"]
    expected = SPECIAL[kind].replace("FILE", re.escape(str(path)))
    for args in (["bom", str(path)], ["diff", str(good), str(path)], check):
        proc = subprocess.run(
            [*PYTHON_M, *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=os.environ | {"NO_COLOR": "1"},
        )
        assert proc.returncode == EXIT_INVALID, (args, proc.returncode, proc.stderr)
        assert re.match("error: " + expected, proc.stderr), (args, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_a_broken_symlink_is_no_plan_and_a_link_to_a_plan_is_read(tiny, tmp_path: Path) -> None:
    specs, good = tiny
    dangling = tmp_path / "gone.yaml"
    os.symlink(tmp_path / "nowhere.yaml", dangling)
    with pytest.raises(PlanNotFoundError, match=r"no such plan file \(a broken symlink\)"):
        read_plan(dangling)
    result = run(
        "optimize", "s", "--specs", str(specs), "--out", str(dangling), "--check", "--alternatives", "0"
    )
    assert result.exit_code == EXIT_DIFFERENT and "missing (drift)" in result.stdout
    linked = tmp_path / "linked.yaml"
    os.symlink(good, linked)
    assert run("bom", str(linked)).exit_code == EXIT_OK


def test_terminal_control_characters_in_a_plan_are_shown_not_obeyed(tmp_path: Path) -> None:
    """An ESC sequence in a BOM item (written `\\e` in a quoted YAML string) reaches the table as the text
    `\\x1b[2J`, never as a raw escape that would clear the reader's terminal."""
    text = (REPO / "plans" / "trn3-100k.yaml").read_text(encoding="utf-8")
    assert "item: Trainium3 (trn3)\n" in text
    path = tmp_path / "esc.yaml"
    path.write_text(text.replace("item: Trainium3 (trn3)\n", 'item: "Trainium3 \\e[2J (trn3)"\n'), "utf-8")
    result = run("bom", path)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout
    assert "Trainium3 \\x1b[2J (trn3)" in result.stdout

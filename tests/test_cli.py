"""The `trnplan` command end to end: exit codes and key lines of every command, with a fixed-width,
colourless console (NO_COLOR=1, COLUMNS=120).

Most tests run on the builders' tiny world written to `tmp_path/specs/` (chip x, forms air8 and liq16,
site a, scenario s: 64 chips). Its optimum, worked out in trnplan/testkit/builders.py: four liq16 racks
(64 chips, 72 kW), capex $645,000 (64 x $10,000 chips + 4 x $1,000 kits + one $1,000 switch), TCO $800,779.20.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import run, tiny_world

from trnplan.errors import EXIT_DIFFERENT, EXIT_INFEASIBLE, EXIT_INVALID, EXIT_OK, EXIT_USAGE

REPO = Path(__file__).resolve().parents[1]
BAD_SPECS = REPO / "tests" / "fixtures" / "bad_specs"


@pytest.fixture()
def world(tmp_path, monkeypatch) -> Path:
    """A project folder with ./specs (the tiny world) and no plans yet; the current directory."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "world.yaml").write_text(yaml.safe_dump(tiny_world(), sort_keys=False))
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- top level --------------------------------------------------------------------------------------


def test_help_lists_every_command() -> None:
    r = run("--help")
    assert r.exit_code == 0
    for command in ("validate", "show", "optimize", "options", "bom", "diff", "schema"):
        assert command in r.stdout


@pytest.mark.parametrize("command", ["validate", "show", "optimize", "options", "bom", "diff", "schema"])
def test_every_command_has_help_with_an_example(command: str) -> None:
    r = run(command, "--help")
    assert r.exit_code == 0
    assert "Example" in r.stdout
    assert f"trnplan {command}" in r.stdout


def test_unknown_command_and_option_are_usage_errors() -> None:
    assert run("optimise").exit_code == EXIT_USAGE
    assert run("show", "forms", "--colour").exit_code == EXIT_USAGE


def test_version() -> None:
    r = run("--version")
    assert r.exit_code == 0 and r.stdout.startswith("trnplan ")


# --- validate ---------------------------------------------------------------------------------------


def test_validate_shipped_specs() -> None:
    r = run("validate", "--specs", str(REPO / "specs"))
    assert r.exit_code == EXIT_OK, r.output
    assert r.stdout.strip().endswith(": OK")
    assert "chips" in r.stdout and "forms" in r.stdout and "scenarios" in r.stdout


def test_validate_counts(world) -> None:
    r = run("validate")
    assert r.exit_code == 0
    assert r.stdout.strip() == "1 chip, 2 forms, 2 switches, 2 cooling types, 1 site, 2 scenarios: OK"


def test_validate_bad_specs_reports_every_problem_located() -> None:
    r = run("validate", "--specs", str(BAD_SPECS))
    assert r.exit_code == EXIT_INVALID
    assert r.stdout == ""
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    located = [line for line in lines if ".yaml:" in line]
    assert len(located) >= 5
    for line in located:
        path, lineno, col, rest = line.split(":", 3)
        assert path.endswith(".yaml") and lineno.isdigit() and col.isdigit() and rest.strip()
    def position(line: str) -> tuple[str, int, int]:
        path, lineno, col = line.split(":")[:3]
        return path, int(lineno), int(col)

    assert located == sorted(located, key=position)
    assert any("did you mean 'tdp_w'" in line for line in located)
    assert lines[-1].endswith("problems found")
    assert "Traceback" not in r.output


def test_validate_bad_override_is_invalid_input(world) -> None:
    r = run("validate", "--set", "sites.a.it_power_mw=lots")
    assert r.exit_code == EXIT_INVALID
    assert "sites.a.it_power_mw" in r.stderr


def test_validate_missing_spec_dir_is_invalid_input(world) -> None:
    r = run("validate", "--specs", "no-such-dir")
    assert r.exit_code == EXIT_INVALID
    assert "no-such-dir" in r.stderr
    assert "Traceback" not in r.output


# --- show -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["chips", "forms", "switches", "cooling", "sites", "scenarios"])
def test_show_each_kind_on_shipped_specs(kind: str) -> None:
    r = run("show", kind, "--specs", str(REPO / "specs"))
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(kind)
    assert "\x1b[" not in r.stdout  # NO_COLOR: no ANSI escapes


def test_show_forms_is_the_rosetta_stone() -> None:
    r = run("show", "forms", "--specs", str(REPO / "specs"), columns=160)
    assert r.exit_code == 0
    for text in ("trn3-nl72x2", "Trn3 UltraServer", "Teton3 MAX", "NL72x2", "72 x 2", "144", "liquid",
                 "pcie6-160"):
        assert text in r.stdout
    assert "* estimate" in r.stdout  # the shipped catalog marks its estimates


def test_show_marks_estimates_only_where_listed(world) -> None:
    r = run("show", "chips")
    assert "* estimate" not in r.stdout  # the tiny world lists no estimates
    world_data = tiny_world()
    world_data["chips"]["x"]["estimates"] = ["tdp_w"]
    (world / "specs" / "world.yaml").write_text(yaml.safe_dump(world_data))
    r = run("show", "chips")
    assert "1,000*" in r.stdout
    assert "* estimate" in r.stdout


def test_show_chips_json_has_derived_figures() -> None:
    r = run("show", "chips", "--format", "json", "--specs", str(REPO / "specs"))
    assert r.exit_code == 0
    items = json.loads(r.stdout)
    trn3 = next(item for item in items if item["id"] == "trn3")
    assert trn3["tdp_w"] == 1000 and trn3["hbm"]["stacks"] == 4
    d = trn3["derived"]
    assert set(d) == {"hbm_capacity_gb", "hbm_bandwidth_tbps", "scale_up_tbps"}
    assert d["hbm_capacity_gb"] == 144
    assert d["hbm_bandwidth_tbps"] == pytest.approx(4.9152)
    assert d["scale_up_tbps"] == pytest.approx(1.152)
    assert [item["id"] for item in items] == sorted(item["id"] for item in items)


def test_show_forms_json_has_rack_kw_per_option() -> None:
    r = run("show", "forms", "-f", "json", "--specs", str(REPO / "specs"))
    items = {item["id"]: item for item in json.loads(r.stdout)}
    d = items["trn3-nl72x2"]["derived"]
    assert set(d) == {"unit_chips", "domain_chips", "domain_fp8_pflops", "domain_hbm_tb",
                      "domain_hbm_bandwidth_tbps", "rack_it_kw"}
    assert d["unit_chips"] == 144 and d["domain_chips"] == 144
    assert d["domain_fp8_pflops"] == pytest.approx(362.448)
    assert d["domain_hbm_bandwidth_tbps"] == pytest.approx(144 * 4.9152)
    assert set(d["rack_it_kw"]) == {o["switch"] for o in items["trn3-nl72x2"]["scale_up"]}


def test_show_json_is_stable_and_yaml_matches(world) -> None:
    first = run("show", "forms", "--format", "json")
    second = run("show", "forms", "--format", "json")
    assert first.stdout == second.stdout
    as_yaml = yaml.safe_load(run("show", "forms", "--format", "yaml").stdout)
    assert as_yaml == json.loads(first.stdout)
    liq16 = next(item for item in as_yaml if item["id"] == "liq16")
    assert liq16["derived"]["rack_it_kw"] == {"up": 18}
    sites = json.loads(run("show", "sites", "-f", "json").stdout)
    assert sites[0]["id"] == "a" and sites[0]["derived"] == {}


def test_show_bad_kind_is_a_usage_error_naming_the_choices(world) -> None:
    r = run("show", "racks")
    assert r.exit_code == EXIT_USAGE
    assert "chips" in r.stderr and "scenarios" in r.stderr


@pytest.mark.parametrize(("kind", "said"), [
    ("bogus", "error: unknown kind 'bogus' (kinds: chips, forms, switches, cooling, sites, scenarios, "
              "workloads, power_chains)"),
    ("chip", "error: unknown kind 'chip'; did you mean 'chips'?"),
])
def test_show_unknown_kind_is_said_like_an_unknown_scenario(world, kind: str, said: str) -> None:
    """One line, as for `optimize` of an unknown scenario, not the parser's boxed 'Value error, ...'."""
    r = run("show", kind)
    assert r.exit_code == EXIT_USAGE
    assert r.stderr == said + "\n" and r.stdout == ""
    data = json.loads(run("show", kind, "--format", "json").stdout)
    assert data["error"]["kind"] == "usage" and data["error"]["message"] == said.removeprefix("error: ")


def test_piped_messages_are_one_line_each_whatever_columns_says(world) -> None:
    """Wrapping is for terminals: to a pipe, a file or a CI log each message is one greppable line, even
    with COLUMNS set narrow (BAD_SPECS's problems are longer than 40 columns)."""
    r = run("show", "bogus", env={"COLUMNS": "40"})
    assert len(r.stderr.splitlines()) == 1
    r = run("validate", "--specs", str(BAD_SPECS), env={"COLUMNS": "40"})
    lines = r.stderr.splitlines()
    assert max(len(line) for line in lines) > 40
    assert all(line.split(":")[1].isdigit() for line in lines[:-1]), lines
    r = run("optimize", "s", "--set", "sites.a.it_power_mw=81", env={"COLUMNS": "40"})
    assert "what-if (--set): plans/s.yaml not written; add --out FILE to keep this plan\n" in r.stderr


def test_sweep_help_is_whole_at_80_columns() -> None:
    """No folded metavar (`PATH=LOW:HIG` / `H:N`) and no cut example (`it_power_…`): the forms of --vary
    and the formats are in the help text, whole."""
    r = run("sweep", "--help", env={"COLUMNS": "80"})
    assert r.exit_code == 0
    assert "…" not in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 80
    words = [w for w in r.stdout.split() if w != "│"]  # the panel's borders
    for word in ("PATH=VALUES", "PATH=V1,V2", "PATH=LOW:HIGH:N", "FORMAT", "sites.ind-new.it_power_mw=80."):
        assert word in words, word
    assert "table, json, csv or markdown." in " ".join(words)


def test_show_bad_format_is_a_usage_error(world) -> None:
    assert run("show", "forms", "--format", "csv").exit_code == EXIT_USAGE


@pytest.mark.parametrize(("args", "said"), [
    (("show", "forms", "--format", "jsn"), "Invalid value for '--format' / '-f': 'jsn' is not one of "
                                           "table, json, yaml; did you mean 'json'?"),
    (("bom", "p.yaml", "-f", "xml"), "Invalid value for '--format' / '-f': 'xml' is not one of "
                                     "table, csv, json, markdown"),
    (("optimize", "s", "--solver", "glpk"), "Invalid value for '--solver': 'glpk' is not one of highs, cbc"),
])
def test_a_value_outside_an_options_choices_names_them_in_plain_words(world, args, said) -> None:
    """Said as any other bad option is (exit 2, nothing on stdout), not with typer's 'Value error, '."""
    words = usage_error_words(*args)
    assert said in words and "Value error" not in words


def usage_error_words(*args: str) -> str:
    """The words of a command's usage error (exit 2, nothing on stdout), out of rich's error box."""
    r = run(*args)
    assert r.exit_code == EXIT_USAGE and r.stdout == ""
    return " ".join(w for w in r.stderr.split() if w not in "│╭╮╰╯─" and set(w) - set("─╭╮╰╯"))


@pytest.mark.parametrize(("args", "said"), [
    (("optimize", "s", "--time-limit", "-3"), "Invalid value for '--time-limit': '-3' must be at least 0.01"),
    (("optimize", "s", "--time-limit", "soon"), "Invalid value for '--time-limit': 'soon' is not a number"),
    (("optimize", "s", "--time-limit", "nan"), "'nan' is not a finite number"),
    (("optimize", "s", "--alternatives", "51"), "'51' must be a whole number from 0 to 50"),
    (("optimize", "s", "--alternatives", "1.5"), "'1.5' is not a whole number"),
    (("sweep", "s", "--workers", "0"), "'--workers': '0' must be a whole number, at least 1"),
    (("sweep", "s", "--seed", "x"), "Invalid value for '--seed': 'x' is not a whole number"),
])
def test_a_number_outside_an_options_range_is_said_in_plain_words(world, args, said) -> None:
    """Not in a validation library's words ("Input should be ..."), whichever typer is installed."""
    words = usage_error_words(*args)
    assert said in words and "Input should" not in words
    assert not (world / "plans").exists()


def test_numbers_in_range_are_taken(world) -> None:
    r = run("optimize", "s", "--alternatives", "0", "--time-limit", "30", "--format", "json")
    assert r.exit_code == EXIT_OK, r.output
    assert json.loads(r.stdout)["alternatives"] == []


def test_choices_are_taken_in_any_case(world) -> None:
    r = run("show", "forms", "--format", "JSON")
    assert r.exit_code == EXIT_OK and json.loads(r.stdout)


# --- optimize ---------------------------------------------------------------------------------------


def test_optimize_writes_a_plan_and_prints_it(world) -> None:
    r = run("optimize", "s")
    assert r.exit_code == EXIT_OK, r.output
    plan_file = world / "plans" / "s.yaml"
    assert plan_file.exists()
    assert "wrote plans/s.yaml" in r.stderr
    out = r.stdout
    for text in ("Plan for s", "$645,000", "$800,779", "liq16", "Deployments", "Scale-out fabric",
                 "Power and cost", "What binds", "Alternatives", "optimal"):
        assert text in out, text
    data = yaml.safe_load(plan_file.read_text())
    assert data["totals"]["capex_usd"] == 645000
    assert data["totals"]["tco_usd"] == pytest.approx(800779.2)


def test_optimize_twice_is_byte_identical_and_check_passes(world) -> None:
    assert run("optimize", "s").exit_code == 0
    first = (world / "plans" / "s.yaml").read_bytes()
    assert run("optimize", "s").exit_code == 0
    assert (world / "plans" / "s.yaml").read_bytes() == first
    r = run("optimize", "s", "--check")
    assert r.exit_code == EXIT_OK, r.output
    assert "up to date" in r.stdout
    assert (world / "plans" / "s.yaml").read_bytes() == first


def test_optimize_check_reports_drift_after_an_edit(world) -> None:
    """An edit that still reads as a plan (an alternative's TCO; an edited total would not add up, and is
    refused as unreadable) is drift, shown as a diff."""
    run("optimize", "s")
    path = world / "plans" / "s.yaml"
    edited = path.read_text().replace("tco_usd: 850120", "tco_usd: 850121", 1)
    path.write_text(edited)
    r = run("optimize", "s", "--check")
    assert r.exit_code == EXIT_DIFFERENT, r.output
    assert "out of date" in r.stdout
    lines = r.stdout.splitlines()
    assert any(line.startswith("-") and "tco_usd: 850121" in line for line in lines)
    assert any(line.startswith("+") and "tco_usd: 850120" in line for line in lines)
    assert path.read_text() == edited  # --check never writes


def test_optimize_check_missing_file_is_drift(world) -> None:
    r = run("optimize", "s", "--check")
    assert r.exit_code == EXIT_DIFFERENT
    assert "missing" in r.stdout
    assert not (world / "plans" / "s.yaml").exists()


def test_optimize_all_check_flags_a_plan_without_a_scenario(world) -> None:
    assert run("optimize", "--all").exit_code == 0
    (world / "plans" / "gone.yaml").write_text((world / "plans" / "s.yaml").read_text())
    r = run("optimize", "--all", "--check")
    assert r.exit_code == EXIT_DIFFERENT
    assert "gone.yaml: no scenario 'gone'" in r.stdout


def test_optimize_out_writes_one_file(world) -> None:
    r = run("optimize", "t", "--out", "elsewhere/t-plan.yaml", "--format", "yaml")
    assert r.exit_code == 0, r.output
    assert (world / "elsewhere" / "t-plan.yaml").exists()
    assert not (world / "plans").exists()
    assert yaml.safe_load(r.stdout)["totals"]["chips"] == 16


def test_optimize_all_solves_every_scenario_and_plans_dir(world) -> None:
    r = run("optimize", "--all", "--plans", "out", "--format", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert sorted(data) == ["s", "t"]
    assert sorted(p.name for p in (world / "out").iterdir()) == ["s.yaml", "t.yaml"]


def test_optimize_json_is_the_plan_and_nothing_else(world) -> None:
    r = run("optimize", "s", "--format", "json", "--alternatives", "0")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data["format"] == "trnplan-plan/1"
    assert data["alternatives"] == []
    assert data == yaml.safe_load((world / "plans" / "s.yaml").read_text())


def test_optimize_infeasible_explains_and_writes_nothing(world) -> None:
    r = run("optimize", "s", "--set", "scenarios.s.demand.chips=1000000")
    assert r.exit_code == EXIT_INFEASIBLE
    assert "infeasible" in r.stderr
    assert "1,000,000 chips" in r.stderr or "short" in r.stderr or "must give" in r.stderr
    assert "no plan written" in r.stderr
    assert not (world / "plans").exists()
    assert "Traceback" not in r.output


def test_optimize_all_exits_with_the_worst_code(world) -> None:
    data = tiny_world()
    data["scenarios"]["t"]["demand"] = {"chips": 1000000}
    (world / "specs" / "world.yaml").write_text(yaml.safe_dump(data))
    r = run("optimize", "--all")
    assert r.exit_code == EXIT_INFEASIBLE
    assert (world / "plans" / "s.yaml").exists()  # the feasible one is still written
    assert not (world / "plans" / "t.yaml").exists()


def test_optimize_unknown_scenario_is_a_usage_error(world) -> None:
    """Naming a scenario the specs do not define is a usage error (2), with a suggestion."""
    r = run("optimize", "ss")
    assert r.exit_code == EXIT_USAGE
    assert "unknown scenario 'ss'" in r.stderr and "did you mean 's'" in r.stderr


def test_optimize_needs_exactly_one_of_scenario_or_all(world) -> None:
    assert run("optimize").exit_code == EXIT_USAGE
    assert run("optimize", "s", "--all").exit_code == EXIT_USAGE
    assert run("optimize", "--all", "--out", "x.yaml").exit_code == EXIT_USAGE
    assert run("optimize", "s", "--solver", "gurobi").exit_code == EXIT_USAGE
    assert run("optimize", "s", "--time-limit", "0").exit_code == EXIT_USAGE


def test_optimize_bad_specs_exit_3(world) -> None:
    (world / "specs" / "broken.yaml").write_text("chips:\n  y: {name: Y}\n")
    r = run("optimize", "s")
    assert r.exit_code == EXIT_INVALID
    assert "broken.yaml:2:" in r.stderr


# --- bom ----------------------------------------------------------------------------------------------


def test_bom_table_total_equals_capex(tiny_solved) -> None:
    r = run("bom", str(tiny_solved / "plans" / "s.yaml"))
    assert r.exit_code == 0, r.output
    assert "total" in r.stdout and "$645,000" in r.stdout
    assert "plan capex $645,000" in r.stdout


def test_bom_csv_json_markdown(tiny_solved) -> None:
    path = str(tiny_solved / "plans" / "s.yaml")
    csv_out = run("bom", path, "--format", "csv")
    assert csv_out.exit_code == 0
    header, *rows = csv_out.stdout.strip().splitlines()
    assert header.startswith("site,form,racks,category,item,quantity")
    assert len(rows) >= 3
    data = json.loads(run("bom", path, "--format", "json").stdout)
    assert data["capex_usd"] == 645000
    assert sum(line["extended_usd"] for line in data["lines"]) == pytest.approx(645000)
    md = run("bom", path, "--format", "markdown")
    assert md.exit_code == 0 and "|" in md.stdout


def test_bom_missing_or_bad_plan_is_invalid_input(tmp_path) -> None:
    r = run("bom", str(tmp_path / "nope.yaml"))
    assert r.exit_code == EXIT_INVALID and "no such plan file" in r.stderr
    (tmp_path / "x.yaml").write_text("chips: {}\n")
    r = run("bom", str(tmp_path / "x.yaml"))
    assert r.exit_code == EXIT_INVALID and "not a trnplan plan file" in r.stderr


# --- diff ---------------------------------------------------------------------------------------------


def test_diff_identical_plans(tiny_solved) -> None:
    s = str(tiny_solved / "plans" / "s.yaml")
    r = run("diff", s, s, "--exit-code")
    assert r.exit_code == EXIT_OK, r.output
    assert " ".join(r.stdout.split()) == f"{s} -> {s}: no changes"  # one line (a long path may wrap it)
    md = run("diff", s, s, "--format", "markdown")
    assert md.stdout.splitlines() == ["<!-- trnplan-diff -->", "`s`: no changes."]


def test_diff_different_plans(tiny_solved) -> None:
    s, t = str(tiny_solved / "plans" / "s.yaml"), str(tiny_solved / "plans" / "t.yaml")
    r = run("diff", s, t)
    assert r.exit_code == EXIT_OK  # differences alone do not fail without --exit-code
    out = r.stdout
    assert out.index("Summary") < out.index("Deployments") < out.index("BOM lines") < out.index("Provenance")
    assert "sha256:" in out and "HiGHS" in out
    assert run("diff", s, t, "--exit-code").exit_code == EXIT_DIFFERENT
    md = run("diff", s, t, "--format", "markdown")
    assert md.exit_code == 0 and md.stdout.startswith("<!-- trnplan-diff -->")
    data = json.loads(run("diff", s, t, "--format", "json").stdout)
    assert data["different"] is True


def test_diff_guardrails(tiny_solved) -> None:
    s, t = str(tiny_solved / "plans" / "s.yaml"), str(tiny_solved / "plans" / "t.yaml")
    r = run("diff", t, s, "--fail-if", "capex>+5%")  # 16 -> 64 chips: capex rises ~4x
    assert r.exit_code == EXIT_DIFFERENT
    assert "guardrail breached" in r.stderr
    assert run("diff", s, t, "--fail-if", "capex>+5%").exit_code == EXIT_OK  # capex falls
    bad = run("diff", s, t, "--fail-if", "capex is big")
    assert bad.exit_code == EXIT_USAGE


def test_diff_missing_plan_is_invalid_input(tiny_solved, tmp_path) -> None:
    r = run("diff", str(tmp_path / "a.yaml"), str(tiny_solved / "plans" / "s.yaml"))
    assert r.exit_code == EXIT_INVALID


# --- schema -------------------------------------------------------------------------------------------


def test_schema_prints_and_writes(tmp_path) -> None:
    r = run("schema")
    assert r.exit_code == 0
    schema = json.loads(r.stdout)
    assert "chips" in json.dumps(schema)
    out = tmp_path / "schema.json"
    r = run("schema", "--out", str(out))
    assert r.exit_code == 0 and json.loads(out.read_text()) == schema


# --- processes: python -m, lazy imports, clean JSON through a pipe ---------------------------------


def _subprocess_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    env["NO_COLOR"] = "1"
    return env


def test_python_m_trnplan_help() -> None:
    proc = subprocess.run([sys.executable, "-m", "trnplan", "--help"], capture_output=True, text=True,
                          env=_subprocess_env(), check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Usage: trnplan" in proc.stdout


def test_help_show_bom_diff_do_not_import_the_solver(tiny_solved) -> None:
    """PuLP and highspy are imported only by `optimize`, so the other commands start fast."""
    plan = str(tiny_solved / "plans" / "s.yaml")
    code = f"""
import sys
from typer.testing import CliRunner
from trnplan.cli import app
runner = CliRunner()
for args in (["--help"], ["show", "forms"], ["validate"], ["bom", {plan!r}], ["diff", {plan!r}, {plan!r}]):
    result = runner.invoke(app, args)
    assert result.exit_code == 0, (args, result.output)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("pulp", "highspy"))
print(",".join(loaded))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                          env=_subprocess_env(), check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_optimize_json_through_a_pipe_is_clean(world) -> None:
    """The HiGHS banner and any status line stay off stdout: the output parses as JSON."""
    proc = subprocess.run([sys.executable, "-m", "trnplan", "optimize", "s", "--format", "json"],
                          capture_output=True, text=True, cwd=world, env=_subprocess_env(), check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["scenario"] == "s"
    assert "\x1b[" not in proc.stdout


def test_piped_table_output_is_plain(world) -> None:
    env = _subprocess_env()
    env.pop("NO_COLOR")
    proc = subprocess.run([sys.executable, "-m", "trnplan", "show", "forms"], capture_output=True, text=True,
                          cwd=world, env=env, check=False)
    assert proc.returncode == 0
    assert "\x1b[" not in proc.stdout and "liq16" in proc.stdout


# --- error mapping: solver outcomes, interrupts, bugs ---------------------------------------------------


def _unproven(plan_file: Path):
    from trnplan.plan import read_plan

    plan = read_plan(plan_file)
    solver = plan.solver.model_copy(update={"status": "feasible", "mip_gap": 0.0123})
    return plan.model_copy(update={"solver": solver})


def test_optimize_unproven_plan_is_written_with_a_loud_warning(world, tiny_solved, monkeypatch) -> None:
    import trnplan.plan.build

    plan = _unproven(tiny_solved / "plans" / "s.yaml")
    monkeypatch.setattr(trnplan.plan.build, "plan_scenario", lambda *a, **k: plan)
    r = run("optimize", "s", "--time-limit", "1")
    assert r.exit_code == EXIT_OK
    assert "NOT proven optimal" in r.stderr and "1.2%" in r.stderr
    assert "feasible" in r.stdout
    assert yaml.safe_load((world / "plans" / "s.yaml").read_text())["solver"]["status"] == "feasible"


def test_optimize_solver_failure_exits_5(world, monkeypatch) -> None:
    import trnplan.plan.build
    from trnplan.errors import EXIT_SOLVER, SolverError

    def fail(*args, **kwargs):
        raise SolverError("the HiGHS solver stopped at the time limit (1 s) with no feasible plan")

    monkeypatch.setattr(trnplan.plan.build, "plan_scenario", fail)
    r = run("optimize", "s")
    assert r.exit_code == EXIT_SOLVER
    assert "no feasible plan" in r.stderr
    assert not (world / "plans").exists()


def test_interrupt_exits_130_and_a_bug_exits_1_in_one_line(world, monkeypatch) -> None:
    import trnplan.plan.build

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(trnplan.plan.build, "plan_scenario", interrupt)
    r = run("optimize", "s")
    assert r.exit_code == 130 and r.stderr.strip() == "interrupted"

    def bug(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(trnplan.plan.build, "plan_scenario", bug)
    r = run("optimize", "s")
    assert r.exit_code == 1
    assert r.stderr.startswith("internal error: ZeroDivisionError: division by zero")
    assert "Traceback" not in r.stderr and "TRNPLAN_DEBUG" in r.stderr


def test_futures_take_no_csv() -> None:
    r = run("optimize", "trn3-hedge", "--futures", "2", "--format", "csv")
    assert r.exit_code == EXIT_USAGE and "--format csv is for plans without --futures" in r.stderr

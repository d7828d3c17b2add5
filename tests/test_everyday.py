"""Everyday use of the command: what-ifs that never overwrite a committed plan, plans that record their
inputs and diffs that show them, one time limit for a whole command, Ctrl-C keeping the best plan, the
bundled catalog as a layer (`--specs @catalog`, `trnplan init`), failures as JSON, and the help text.

The world is the builders' tiny one (see tests/test_cli.py): scenario s is 64 chips, four liq16 racks,
TCO $800,779.20; t is 16 chips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from conftest import run, tiny_world

from trnplan.cli.common import set_typo
from trnplan.cli.outcomes import better_alternatives, error_data, explanation_groups
from trnplan.errors import EXIT_INFEASIBLE, EXIT_INVALID, EXIT_OK, EXIT_SOLVER, EXIT_USAGE, InfeasibleError
from trnplan.plan import Plan, read_plan
from trnplan.specs.load import bundled_specs_dir, load_specs
from trnplan.testkit.builders import base_specs, catalog_from_dict

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "world.yaml").write_text(yaml.safe_dump(tiny_world(), sort_keys=False))
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- what-ifs do not overwrite committed plans ---------------------------------------------------------


def test_a_what_if_without_out_writes_nothing_and_says_so(world: Path) -> None:
    assert run("optimize", "s").exit_code == 0
    committed = (world / "plans" / "s.yaml").read_bytes()
    r = run("optimize", "s", "--set", "chips.x.unit_usd=9000")
    assert r.exit_code == EXIT_OK, r.output
    assert "Plan for s" in r.stdout  # printed
    assert "what-if (--set): plans/s.yaml not written; add --out FILE to keep this plan" in r.stderr
    assert "wrote" not in r.stderr
    assert (world / "plans" / "s.yaml").read_bytes() == committed
    r = run("optimize", "--all", "--set", "chips.x.unit_usd=9000", "--format", "json")
    assert r.exit_code == EXIT_OK and sorted(json.loads(r.stdout)) == ["s", "t"]
    assert not (world / "plans" / "t.yaml").exists()


def test_a_what_if_with_out_is_written_and_records_its_inputs(world: Path) -> None:
    r = run("optimize", "s", "--set", "chips.x.unit_usd=9000", "--out", "what-if.yaml")
    assert r.exit_code == EXIT_OK, r.output
    plan = read_plan(world / "what-if.yaml")
    assert plan.inputs is not None
    assert (plan.inputs.specs, plan.inputs.overrides) == ([], ["chips.x.unit_usd=9000"])
    written = yaml.safe_load((world / "what-if.yaml").read_text())["inputs"]
    assert written == {  # the default specs: no folders; and what the override replaced
        "overrides": ["chips.x.unit_usd=9000"], "specs": [], "replaced": {"chips.x.unit_usd": "10000"}
    }
    assert not (world / "plans").exists()


def test_a_plan_of_the_default_specs_records_no_inputs(world: Path) -> None:
    """Committed plans keep their bytes: no `inputs` part for the default specs and no overrides, also
    when the default folder is named (`--specs specs`)."""
    assert run("optimize", "s").exit_code == 0
    assert run("optimize", "t", "--specs", "specs").exit_code == 0
    for name in ("s", "t"):
        assert "inputs:" not in (world / "plans" / f"{name}.yaml").read_text()
    assert read_plan(world / "plans" / "s.yaml").inputs is None


def test_plans_record_layered_spec_folders_relative_to_where_trnplan_ran(world: Path) -> None:
    (world / "more").mkdir()
    (world / "more" / "site.yaml").write_text(yaml.safe_dump({"sites": {"a": tiny_world()["sites"]["a"]}}))
    r = run("optimize", "s", "--specs", str(world / "specs"), "--specs", "more", "--out", "x.yaml")
    assert r.exit_code == 0, r.output
    inputs = read_plan(world / "x.yaml").inputs
    assert inputs is not None and (inputs.specs, inputs.overrides) == (["specs", "more"], [])


def test_check_with_other_recorded_inputs_but_the_same_plan_is_up_to_date(world: Path) -> None:
    assert run("optimize", "s").exit_code == 0
    (world / "same").mkdir()
    (world / "same" / "world.yaml").write_text((world / "specs" / "world.yaml").read_text())
    r = run("optimize", "s", "--specs", "same", "--check")
    assert r.exit_code == EXIT_OK, r.output
    assert "up to date (the same plan; only the recorded inputs differ)" in r.stdout


def test_the_check_hint_keeps_plans_and_specs(world: Path) -> None:
    r = run("optimize", "s", "--check", "--plans", "elsewhere", "--specs", "specs")
    assert r.exit_code == 1
    assert "run `trnplan optimize s --specs specs --plans elsewhere` and commit the plan" in r.stdout


# --- diff and the PR comment show what input changed ---------------------------------------------------


@pytest.fixture()
def what_if_pair(world: Path) -> tuple[str, str]:
    assert run("optimize", "s").exit_code == 0
    r = run("optimize", "s", "--set", "sites.a.it_power_mw=2", "--set", "chips.x.unit_usd=9000",
            "--out", "w.yaml")
    assert r.exit_code == 0, r.output
    return "plans/s.yaml", "w.yaml"


def test_diff_shows_the_inputs_that_changed(what_if_pair: tuple[str, str]) -> None:
    base, head = what_if_pair
    table = run("diff", base, head)
    assert "Inputs" in table.stdout
    assert "--set chips.x.unit_usd" in table.stdout and "9000" in table.stdout
    md = run("diff", base, head, "--format", "markdown").stdout
    assert "**Inputs changed:**" in md
    assert "- `--set chips.x.unit_usd`: `10000` → `9000`" in md  # the base value, from what head replaced
    assert "- `--set sites.a.it_power_mw`: `1` → `2`" in md
    data = json.loads(run("diff", base, head, "--format", "json").stdout)
    assert {"name": "--set chips.x.unit_usd", "old": "10000", "new": "9000"} in data["inputs"]
    assert "specs" not in {row["name"] for row in data["inputs"]}  # both from the default specs
    assert "`specs`" not in md
    assert json.loads(run("diff", base, base, "--format", "json").stdout)["inputs"] == []


def test_diff_shows_a_change_of_spec_folders(world: Path) -> None:
    """Specs that really changed folder are an input change; a what-if of the default specs is not."""
    assert run("optimize", "s").exit_code == 0
    (world / "more").mkdir()
    (world / "more" / "site.yaml").write_text(yaml.safe_dump({"sites": {"a": tiny_world()["sites"]["a"]}}))
    assert run("optimize", "s", "--specs", "specs", "--specs", "more", "--out", "x.yaml").exit_code == 0
    data = json.loads(run("diff", "plans/s.yaml", "x.yaml", "--format", "json").stdout)
    assert data["inputs"] == [{"name": "specs", "old": "default", "new": "specs, more"}]


def test_a_breached_guardrail_is_in_the_markdown(what_if_pair: tuple[str, str]) -> None:
    base, head = what_if_pair
    r = run("diff", head, base, "--format", "markdown", "--fail-if", "capex>+5%")
    assert r.exit_code == 1
    md = r.stdout
    assert "**Guardrails breached:**" in md
    assert md.index("**Guardrails breached:**") < md.index("| Metric |")  # above the summary, never trimmed
    assert "breaches capex>+5%" in md
    clean = run("diff", base, head, "--format", "markdown", "--fail-if", "capex>+5%")
    assert clean.exit_code == 0 and "Guardrails breached" not in clean.stdout


# --- one time limit for the whole command --------------------------------------------------------------


class Clock:
    """A clock each solve moves on by `step` seconds."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        return self.now


def test_the_alternatives_get_what_the_search_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    """--time-limit 10 with every solve taking 4 s, the alternatives solved in turn: the search gets 10 s,
    the alternatives 6 s and 2 s, and the rest are not searched (each is listed only if it was found in
    time; a choice the LP shows cannot be done without is listed anyway: it needs no MILP)."""
    import trnplan.optimize as optimize_pkg
    from trnplan.optimize import alternatives
    from trnplan.optimize.progress import Deadline

    monkeypatch.setattr(alternatives, "together", lambda *_: False)
    clock = Clock(4.0)
    limits: list[float | None] = []
    real_solve = optimize_pkg.solve

    def timed(prob: Any, solver: str, time_limit: float | None, *rest: Any, **kw: Any) -> Any:
        limits.append(time_limit)
        clock.now += clock.step
        return real_solve(prob, solver, None, *rest, **kw)

    monkeypatch.setattr(optimize_pkg, "solve", timed)
    solution = optimize_pkg.optimize(catalog_from_dict(base_specs()), "s", time_limit=Deadline(10, clock),
                                     alternatives=3)
    assert limits == [10, 6, 2]
    searched = [a for a in solution.alternatives if a.decisions is not None]
    assert len(searched) == 2
    assert [a.without for a in solution.alternatives if a.decisions is None] == ["scale-out switch sw"]


def test_a_round_of_alternatives_gets_what_the_search_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    """--time-limit 10 and the search taking 4 s: the three alternatives, solved in one round, each have
    the 6 s it left (each in its own HiGHS instance, at once; none begun ahead of the plan, whose solves
    are bounded by the same deadline: `test_optimize_gap`)."""
    import trnplan.optimize as optimize_pkg
    from trnplan.optimize import alternatives
    from trnplan.optimize.progress import Deadline

    monkeypatch.setattr(optimize_pkg, "begin_ahead", lambda *a: None)

    clock = Clock(4.0)
    real_solve, real_start = optimize_pkg.solve, alternatives.start_highs
    limits: list[float | None] = []

    def timed(prob: Any, solver: str, time_limit: float | None, *rest: Any, **kw: Any) -> Any:
        limits.append(time_limit)
        clock.now += clock.step
        return real_solve(prob, solver, None, *rest, **kw)

    def started(prob: Any, time_limit: float | None, *rest: Any, **kw: Any) -> Any:
        limits.append(time_limit)
        return real_start(prob, None, *rest, **kw)

    monkeypatch.setattr(optimize_pkg, "solve", timed)
    monkeypatch.setattr(alternatives, "start_highs", started)
    solution = optimize_pkg.optimize(catalog_from_dict(base_specs()), "s", time_limit=Deadline(10, clock),
                                     alternatives=3)
    assert limits == [10, 6, 6, 6]
    assert len(solution.alternatives) == 3


def test_optimize_all_shares_one_deadline(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--all --time-limit 10, each scenario taking 6 s: s gets 10 s, t the 4 s left, u none (exit 5)."""
    import trnplan.optimize.progress as progress
    import trnplan.plan.build as build

    data = tiny_world()
    data["scenarios"]["u"] = {**data["scenarios"]["s"], "demand": {"chips": 8}}
    (world / "specs" / "world.yaml").write_text(yaml.safe_dump(data))
    clock = Clock(6.0)
    monkeypatch.setattr(progress, "time", SimpleNamespace(monotonic=clock))  # the deadlines' clock only
    limits: list[float | None] = []
    real = build.plan_scenario

    def planned(catalog: Any, scenario_id: str, **kwargs: Any) -> Plan:
        limits.append(kwargs["time_limit"].remaining())  # the run's one Deadline
        clock.now += clock.step
        return real(catalog, scenario_id, **{**kwargs, "time_limit": None})

    monkeypatch.setattr(build, "plan_scenario", planned)
    r = run("optimize", "--all", "--time-limit", "10")
    assert limits == [pytest.approx(10, abs=1), pytest.approx(4, abs=1)]  # less what loading took
    assert r.exit_code == EXIT_SOLVER
    assert "'u' not solved: the time limit (10 s) was used up before its solve began" in r.stderr
    assert (world / "plans" / "s.yaml").exists() and not (world / "plans" / "u.yaml").exists()


def test_an_alternative_better_than_an_unproven_plan_is_pointed_out(world: Path) -> None:
    assert run("optimize", "s").exit_code == 0
    plan = read_plan(world / "plans" / "s.yaml")
    assert plan.solver is not None and plan.objective is not None
    better = plan.alternatives[0].model_copy(update={"objective": plan.objective.value - 1000})
    unproven = plan.model_copy(update={
        "solver": plan.solver.model_copy(update={"status": "feasible", "mip_gap": 0.01}),
        "alternatives": [better, *plan.alternatives[1:]],
    })
    note = better_alternatives(unproven)
    assert note is not None
    assert note.startswith("NOTE: 's': 1 alternative beat this unproven plan (min_tco $800,779):")
    assert f"#1 without {better.without}: $799,779" in note and "raise --time-limit" in note
    assert better_alternatives(plan) is None  # proven optimal: nothing can beat it
    reached = {"status": "feasible", "mip_gap": 0.00009, "gap_target": 0.0001}
    within = unproven.model_copy(update={"solver": plan.solver.model_copy(update=reached)})
    note = better_alternatives(within)  # stopped at the gap asked for: no time limit to raise
    assert note is not None and "raise --time-limit" not in note
    assert "beat this plan (min_tco $800,779), proven within 0.01% (gap 0.009%)" in note
    assert note.endswith("Both are within the gap asked for; --gap 0 proves the optimum.")


def test_the_ratio_objective_shows_in_the_alternatives(world: Path) -> None:
    data = tiny_world()
    data["scenarios"]["s"].update(objective="max_perf_per_tco", demand={"at_most": {"chips": 32}})
    (world / "specs" / "world.yaml").write_text(yaml.safe_dump(data))
    r = run("optimize", "s")
    assert r.exit_code == 0, r.output
    assert "PF per $M" in r.stdout and "the ratio optimised" in r.stdout
    plan = read_plan(world / "plans" / "s.yaml")
    assert all(f"{a.objective:,.3f}" in r.stdout for a in plan.alternatives if a.objective is not None)


# --- progress, and Ctrl-C keeping the best plan (in-process; a real terminal: tests/test_terminal.py) -----


def test_progress_reports_each_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    from trnplan.optimize import optimize
    from trnplan.optimize.progress import watch

    seen = []
    with watch(seen.append):
        optimize(catalog_from_dict(base_specs()), "s", alternatives=2)
    stages = [p.stage for p in seen]
    assert stages[0] == "solving s"
    # choices: liquid, liq16, sw, up; without sw nothing can be built (the LP says so: no MILP)
    assert "alternatives 1-2 (2 asked), at once" in stages  # the first two solved together
    assert all(p.elapsed_s >= 0 for p in seen)


def test_ctrl_c_in_a_terminal_keeps_the_best_plan_unwritten(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during the search, with an incumbent: the plan is printed marked feasible, nothing written,
    exit 130. (The Ctrl-C is simulated where the solve loop would catch it.)"""
    import trnplan.cli.solve as cli_solve
    import trnplan.optimize as optimize_pkg
    from trnplan.optimize import progress

    real_solve = optimize_pkg.solve

    def ctrl_c(prob: Any, solver: str, time_limit: float | None, *rest: Any) -> Any:
        result = real_solve(prob, solver, time_limit, *rest)
        session = progress.current()
        assert session is not None and session.keep_best_on_interrupt
        session.interrupted = True
        return result

    monkeypatch.setattr(optimize_pkg, "solve", ctrl_c)
    monkeypatch.setattr(cli_solve, "stderr_is_terminal", lambda: True)
    r = run("optimize", "s")
    assert r.exit_code == 130, r.output
    assert "Plan for s" in r.stdout and "feasible" in r.stdout
    assert ("interrupted: above is the best plan found so far for 's' (feasible, NOT proven optimal); "
            "it was not written") in r.stderr
    assert not (world / "plans").exists()


# --- the bundled catalog as a layer ------------------------------------------------------------------


MINE = {
    "sites": {"hall": {"it_power_mw": 5, "rack_positions": 200, "cooling": ["air", "liquid"],
                       "electricity_usd_per_kwh": 0.07, "colocation_usd_per_kw_month": 150}},
    "scenarios": {"mine": {"sites": ["hall"], "chips": ["trn3"], "demand": {"chips": 1000},
                           "as_of": "2026-06", "horizon_years": 5, "cost_of_capital": 0.08,
                           "utilization": 0.8, "maintenance_rate": 0.03}},
}


def test_specs_at_catalog_layers_a_users_folder_over_the_bundled_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "mine.yaml").write_text(yaml.safe_dump(MINE))
    alone = run("validate", "--specs", "mine")
    assert alone.exit_code == EXIT_INVALID
    hint = ("chip trn3, cooling type air, cooling type liquid are in the catalog bundled with trnplan; "
            "layer these folders over it: --specs @catalog --specs mine")
    (line,) = [line for line in alone.stderr.splitlines() if hint in line]
    assert line.startswith("mine/mine.yaml:")  # located beside the first reference it explains
    layered = run("validate", "--specs", "@catalog", "--specs", "mine")
    assert layered.exit_code == 0, layered.output
    catalog = load_specs(["@catalog", "mine"])
    assert "trn3" in catalog.chips and "mine" in catalog.scenarios
    assert catalog.sources.specs == ("@catalog", "mine")
    r = run("optimize", "mine", "--specs", "@catalog", "--specs", "mine", "--alternatives", "0")
    assert r.exit_code == 0, r.output
    inputs = read_plan(tmp_path / "plans" / "mine.yaml").inputs
    assert inputs is not None and inputs.specs == ["@catalog", "mine"]


def test_init_copies_the_bundled_catalog_and_never_overwrites(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = run("init", "start")
    assert r.exit_code == 0, r.output
    shipped = sorted(p.name for p in bundled_specs_dir().glob("*.yaml"))
    assert sorted(p.name for p in (tmp_path / "start").iterdir()) == sorted([*shipped, "trnplan.schema.json"])
    first = (tmp_path / "start" / "chips.yaml").read_text()
    assert first.startswith("# yaml-language-server: $schema=trnplan.schema.json")
    assert run("validate", "--specs", "start").exit_code == 0
    (tmp_path / "start" / "chips.yaml").write_text(first + "# my edit\n")
    again = run("init", "start")
    assert again.exit_code == EXIT_INVALID
    assert "already holds chips.yaml" in again.stderr and "nothing written" in again.stderr
    assert (tmp_path / "start" / "chips.yaml").read_text().endswith("# my edit\n")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "sites.yaml").write_text("sites: {}\n")
    assert run("init", "half").exit_code == EXIT_INVALID
    assert sorted(p.name for p in (tmp_path / "half").iterdir()) == ["sites.yaml"]  # all or nothing


def test_inside_an_init_folder_a_note_says_its_files_are_not_read(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`trnplan init DIR` puts the spec files in DIR itself; run from there with no `--specs`, the default
    rule reads the bundled catalog, so a broken edit would pass unseen: a note says so, and what to do."""
    monkeypatch.chdir(tmp_path)
    assert run("init", "mine").exit_code == 0
    monkeypatch.chdir(tmp_path / "mine")
    sites = Path("sites.yaml")
    sites.write_text(sites.read_text().replace("it_power_mw: ", "it_power_mw: x", 1))
    quiet = run("validate")
    assert quiet.exit_code == EXIT_OK  # the bundled catalog, as the design's default rule says
    said = "note: no ./specs folder here, so trnplan reads its bundled catalog, not this folder's"
    assert said in quiet.stderr
    assert "chips.yaml, cooling.yaml, forms.yaml, ...; add `--specs .` to read them" in quiet.stderr
    assert run("validate", "--specs", ".").exit_code == EXIT_INVALID  # the note's advice finds the edit
    monkeypatch.chdir(tmp_path)  # beside the folder, not in it: nothing to say
    assert "note:" not in run("validate").stderr
    Path("specs").mkdir()
    (Path("specs") / "chips.yaml").write_text(Path("mine/chips.yaml").read_text())
    monkeypatch.chdir(tmp_path / "mine")
    assert "note:" in run("show", "chips").stderr  # every command that reads the default specs says it
    monkeypatch.chdir(tmp_path)
    assert "note:" not in run("validate").stderr  # ./specs exists: that is what is read


# --- failures as JSON ----------------------------------------------------------------------------------


def test_an_infeasible_run_prints_a_json_error_with_what_must_give(world: Path) -> None:
    r = run("optimize", "s", "--set", "scenarios.s.demand.chips=1200", "--format", "json")
    assert r.exit_code == EXIT_INFEASIBLE
    data = json.loads(r.stdout)
    assert data["format"] == "trnplan-error/1"
    error = data["error"]
    assert (error["kind"], error["exit_code"], error["scenario"]) == ("infeasible", 4, "s")
    assert error["message"] == "scenario 's' is infeasible: no plan meets it."
    assert error["must_give"][0] == {"what": "with the current choices, capacity must give:",
                                      "details": ["a IT power: needs 0.35 MW more (1.00 MW -> 1.35 MW)"]}
    assert "infeasible" in r.stderr  # people still read it on stderr


def test_invalid_specs_and_solver_failures_are_json_errors_too(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = run("optimize", "s", "--set", "sites.a.it_power_mw=lots", "--format", "json")
    assert bad.exit_code == EXIT_INVALID
    error = json.loads(bad.stdout)["error"]
    assert error["kind"] == "invalid_specs" and error["problems"][0]["file"] == "--set"
    assert error["problems"][0]["path"] == "sites.a.it_power_mw"
    import trnplan.plan.build as build
    from trnplan.errors import SolverError

    def fail(*args: Any, **kwargs: Any) -> Plan:
        raise SolverError("the HiGHS solver stopped at the time limit (1 s) with no feasible plan")

    monkeypatch.setattr(build, "plan_scenario", fail)
    r = run("optimize", "--all", "--format", "json")
    assert r.exit_code == EXIT_SOLVER
    data = json.loads(r.stdout)
    assert sorted(data) == ["s", "t"]
    assert data["s"]["error"]["kind"] == "solver" and data["s"]["error"]["exit_code"] == 5
    unknown = run("optimize", "nope", "--format", "json")
    assert unknown.exit_code == EXIT_USAGE and json.loads(unknown.stdout)["error"]["kind"] == "usage"


def test_error_data_groups_an_explanation() -> None:
    exc = InfeasibleError("s", ["choices must change:", "  lift: x", "  lift: y", "levers:", "  demand"])
    assert explanation_groups(exc.explanation) == [
        {"what": "choices must change:", "details": ["lift: x", "lift: y"]},
        {"what": "levers:", "details": ["demand"]},
    ]
    assert error_data(KeyboardInterrupt())["error"] == {"kind": "interrupted", "message": "interrupted",
                                                        "exit_code": 130}


# --- help, completion, --set typos ---------------------------------------------------------------------


def test_a_set_without_its_equals_sign_gets_a_path_value_hint() -> None:
    assert set_typo(["optimize", "s", "--set", "sites.a.it_power_mw", "80"]) == (
        "error: --set takes PATH=VALUE as one argument, got 'sites.a.it_power_mw'; write "
        "--set sites.a.it_power_mw=80"
    )
    assert "--set sites.a.x=VALUE" in (set_typo(["validate", "--set=sites.a.x"]) or "")
    assert set_typo(["optimize", "s", "--set", "sites.a.it_power_mw=80"]) is None
    args = ["optimize", "s", "--set", "sites.a.it_power_mw", "80"]
    proc = subprocess.run([sys.executable, "-m", "trnplan", *args], capture_output=True, text=True,
                          check=False, cwd=REPO)
    assert proc.returncode == EXIT_USAGE
    assert "write --set sites.a.it_power_mw=80" in proc.stderr


def test_help_lists_examples_on_their_own_lines_without_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {**os.environ, "TYPER_USE_RICH": "0", "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "trnplan", "optimize", "--help"], capture_output=True,
                          text=True, check=False, env=env)
    lines = [line.strip() for line in proc.stdout.splitlines()]
    assert "trnplan optimize trn3-100k" in lines
    assert "trnplan optimize --all --check" in lines


def test_flags_show_no_type_and_completion_is_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    # With shellingham installed, typer's --show-completion is a flag for the shell it finds among this
    # process's parents: none under a launcher without a shell (an xdist worker started by a CI runner),
    # and the command would fail with "Shell  not supported". Run as from bash, whatever started pytest.
    monkeypatch.setattr("typer.completion._get_shell_name", lambda: "bash")
    r = run("optimize", "--help")
    assert "<bool>" not in r.stdout
    assert "--check" in r.stdout and "<table|json|yaml|csv>" in r.stdout  # options with values keep theirs
    top = run("--help")
    assert "--install-completion" in top.stdout and "--show-completion" in top.stdout
    shown = run("--show-completion", "bash")
    assert shown.exit_code == 0 and "trnplan" in shown.stdout


# --- diff: no rounding noise, inputs in the PR comment ---------------------------------------------------


@pytest.fixture(scope="module")
def shipped_pair() -> tuple[Plan, Plan]:
    """The shipped trn3-100k plan and the README's 1,400-position what-if of it."""
    from trnplan.plan import plan_scenario

    overrides = ["sites.ind-new.rack_positions=1400"]
    head = plan_scenario(load_specs([REPO / "specs"], overrides), "trn3-100k", alternatives=0)
    return read_plan(REPO / "plans" / "trn3-100k.yaml"), head


def test_a_category_whose_capex_did_not_change_shows_no_cent_of_tco_change(shipped_pair) -> None:
    """The 1,400-position what-if leaves the chips' capex as it is ($536M): its TCO share used to move by
    +$0.01 (the largest-remainder split of the capex-driven TCO); now 0, and the changes still sum to the
    TCO's."""
    from trnplan.diff import diff_plans, diff_to_markdown

    base, head = shipped_pair
    d = diff_plans(base, head)
    capex = {p: {} for p in ("base", "head")}
    for side, plan in (("base", base), ("head", head)):
        for line in plan.bom:
            capex[side][line.category] = capex[side].get(line.category, 0) + round(line.extended_usd * 100)
    steady = [c for c in capex["base"] if capex["base"][c] == capex["head"].get(c)]
    assert "chips" in steady
    for cat in d.attribution:
        if cat.category in steady:
            assert cat.delta_usd == 0, cat
    total = sum(round(cat.delta_usd * 100) for cat in d.attribution)
    assert total == round(d.metric("tco_usd").delta * 100)
    assert "+$0.01" not in diff_to_markdown(d) and "-$0.01" not in diff_to_markdown(d)


def test_the_pr_comment_shows_what_input_changed(shipped_pair) -> None:
    from trnplan.diff import ScenarioDiff, comment_body, diff_plans

    base, head = shipped_pair
    d = diff_plans(base, head, "main:plans/trn3-100k.yaml", "plans/trn3-100k.yaml (re-planned)")
    body = comment_body([ScenarioDiff("trn3-100k.yaml", d, True, True)], "main")
    assert "**Inputs changed:**" in body
    assert "- `--set sites.ind-new.rack_positions`: `1000` → `1400`" in body


# --- YAML syntax errors in plain words ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("chips:\n  x: {a: 1\n", "a '{' mapping opened at line 2 is never closed: add the '}'"),
        ("chips:\n  x: [1, 2\n", "a '[' list opened at line 2 is never closed: add the ']'"),
        ("chips:\n\tx: 1\n", "a tab: YAML indents with spaces only; replace the tab with spaces"),
        ("chips:\n  x: a: b\n", "a second ':' on this line: quote the value"),
        ("chips:\n  x: 'abc\n", "a quote opened at line 2 is never closed: add the closing quote"),
        ("chips:\n  x: @foo\n", "a value cannot start with '@': put the value in quotes"),
        ("chips:\n  x: *ref\n", "'*ref' refers to an anchor '&ref' that is not defined"),
        ("a: 1\n---\nb: 2\n", "a second document ('---'): a spec file holds one document"),
    ],
)
def test_yaml_syntax_errors_read_in_plain_words(tmp_path: Path, text: str, words: str) -> None:
    from trnplan.errors import SpecError

    (tmp_path / "a.yaml").write_text(text)
    with pytest.raises(SpecError) as info:
        load_specs([tmp_path])
    (problem,) = info.value.problems
    assert problem.message.startswith(f"YAML syntax: {words}"), problem.message
    assert "(the parser: " in problem.message  # the parser's own words stay, at the end

"""Solver trouble through the command: a time limit that ends with an incumbent writes the plan marked
`feasible` with its gap and says so; without one, exit 5 naming the time limit and nothing written;
highspy missing (or too old) names the fix and `--solver cbc`, exit 5.

HiGHS cannot be made to stop at a time limit at a chosen point on every machine, so the two outcomes are
pinned down by HiGHS options (`objective_target`: stop at the first incumbent; a zero time limit: stop
before any), and one real run with a short `--time-limit` on a 40-site portfolio accepts either outcome,
each with its own message. test_optimize_solvers.py covers the same statuses at the `solve` level.
"""

from __future__ import annotations

import functools
import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import conftest
import pytest
import yaml
from conftest import TERMINAL
from test_optimize_solvers import awkward_specs

import trnplan.optimize as optimize_pkg
from trnplan.errors import EXIT_OK, EXIT_SOLVER, SolverError
from trnplan.optimize import build as optimize_model
from trnplan.optimize import optimize
from trnplan.optimize.solve import SolveStatus, check_solver_available, solve
from trnplan.testkit.builders import base_specs, catalog_from_dict
from trnplan.testkit.portfolio import write_portfolio

solve_module = importlib.import_module("trnplan.optimize.solve")  # the package's `solve` is the function
run = functools.partial(conftest.run, columns=200)
"""The CLI in-process (tests/conftest.py), 200 columns wide."""

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def no_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """No MIP start: these tests are about what HiGHS itself does when stopped before or at its own first
    incumbent, and the primal heuristic (from START_MIN_SITES sites on) would hand it one."""
    monkeypatch.setattr(optimize_model, "START_MIN_SITES", 10**6)


def write_awkward(tmp_path: Path) -> Path:
    """30 awkward sites as a spec folder: HiGHS needs a search to prove the optimum, so it can be stopped
    before."""
    specs = tmp_path / "specs"
    specs.mkdir()
    world = awkward_specs(n_sites=30, chips=1500)
    for site in world["sites"].values():  # as files, the specs must also pass the loader's cross-checks
        if "liquid" not in site["cooling"]:
            site.pop("cooling_fixed_usd")
    (specs / "world.yaml").write_text(yaml.safe_dump(world))
    return specs


@pytest.fixture()
def awkward(tmp_path: Path, no_start: None) -> Path:
    """The awkward sites, without the MIP start."""
    return write_awkward(tmp_path)


def stopped_at_first_incumbent(specs: Path, plans: Path):
    """`optimize s --time-limit 60` on `specs`, with HiGHS told (objective_target, patched by the caller) to
    stop at its first incumbent, as a time limit would after finding one."""
    return run(
        "optimize",
        "s",
        "--specs",
        str(specs),
        "--plans",
        str(plans),
        "--alternatives",
        "0",
        "--time-limit",
        "60",
    )


def test_a_stopped_solve_with_an_incumbent_writes_the_plan_marked_feasible_with_its_gap(
    awkward: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HiGHS stops at its first incumbent (objective_target), as a time limit would after finding one."""
    monkeypatch.setitem(solve_module.HIGHS_OPTIONS, "objective_target", 1e9)
    plans = tmp_path / "plans"
    result = stopped_at_first_incumbent(awkward, plans)
    assert result.exit_code == EXIT_OK, result.output
    plan = yaml.safe_load((plans / "s.yaml").read_text())
    assert plan["solver"]["status"] == "feasible"
    gap = plan["solver"]["mip_gap"]
    assert gap > 0
    assert (
        "WARNING: 's': the solver stopped at the time limit; this plan is feasible but NOT proven optimal "
        "(status feasible, gap " in result.stderr
    )
    assert "Raise --time-limit to prove it." in result.stderr
    assert "Or ask for less: --gap 0.0001" in " ".join(result.stderr.split())  # gap 0 was asked
    assert "feasible" in result.stdout  # the plan's headline says it too


def test_a_search_stopped_at_the_mip_start_is_still_marked_feasible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the primal heuristic's start (30 sites >= START_MIN_SITES), HiGHS stopped at its first
    incumbent may have no bound yet: the plan is still written `feasible`, its gap null (unknown, never 0),
    and the warning is as loud."""
    assert optimize_model.START_MIN_SITES <= 30
    specs = write_awkward(tmp_path)
    monkeypatch.setitem(solve_module.HIGHS_OPTIONS, "objective_target", 1e9)
    plans = tmp_path / "plans"
    result = stopped_at_first_incumbent(specs, plans)
    assert result.exit_code == EXIT_OK, result.output
    solver = yaml.safe_load((plans / "s.yaml").read_text())["solver"]
    assert solver["status"] == "feasible"
    assert solver["mip_gap"] is None or solver["mip_gap"] > 0
    assert "this plan is feasible but NOT proven optimal" in result.stderr


def test_a_time_limit_with_no_incumbent_exits_5_naming_the_limit_and_writes_nothing(
    awkward: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--time-limit 60`, with HiGHS held to 0 s so that it stops before any incumbent on any machine
    (the limit counts from the command's start: loading the specs, building the model, then the search)."""
    monkeypatch.setitem(solve_module.HIGHS_OPTIONS, "time_limit", 0.0)  # whatever --time-limit says
    plans = tmp_path / "plans"
    result = run("optimize", "s", "--specs", str(awkward), "--plans", str(plans), "--time-limit", "60")
    assert result.exit_code == EXIT_SOLVER, result.output
    assert result.stderr == (
        "error: the HiGHS solver stopped at the time limit (60 s) with no feasible plan; "
        "raise --time-limit\n"
        "no plan written for 's'\n"
    )
    assert not plans.exists()


@pytest.fixture(scope="module")
def portfolio(tmp_path_factory) -> tuple[Path, str]:
    specs = tmp_path_factory.mktemp("portfolio") / "specs"
    return specs, write_portfolio(40, specs)


@TERMINAL  # its 0.2 s covers loading the specs too: on a busy worker it could be spent before the solve
def test_a_real_short_time_limit_ends_in_one_of_the_two_honest_outcomes(portfolio, tmp_path: Path) -> None:
    specs, scenario = portfolio
    plans = tmp_path / "plans"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "trnplan",
            "optimize",
            scenario,
            "--specs",
            str(specs),
            "--plans",
            str(plans),
            "--time-limit",
            "0.2",
            "--alternatives",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in result.stderr
    if result.returncode == EXIT_SOLVER:
        # the 0.2 s ran out in the search, in a stage before it (building the model, the start), or (on a
        # busy machine) before the solve began: each says so
        assert (
            "stopped at the time limit (0.2 s) with no feasible plan; raise --time-limit" in result.stderr
            or "the time limit (0.2 s) was used up before its solve began" in result.stderr
            or "the time limit (0.2 s) was used up during " in result.stderr
        ), result.stderr
        assert not plans.exists()
        return
    assert result.returncode == EXIT_OK, result.stderr
    status = yaml.safe_load((plans / f"{scenario}.yaml").read_text())["solver"]
    if status["status"] == "feasible":
        assert "NOT proven optimal" in result.stderr
    else:
        assert status == {**status, "status": "optimal", "mip_gap": 0}


def test_no_solution_without_a_time_limit_is_a_solver_failure_not_a_crash(
    monkeypatch: pytest.MonkeyPatch, no_start: None
) -> None:
    """HiGHS stopping with no solution when no limit was asked for (here forced through its own time_limit
    option) is reported as a failure, not as a time-out: the message used to format a missing limit."""
    monkeypatch.setitem(solve_module.HIGHS_OPTIONS, "time_limit", 0.0)
    catalog = catalog_from_dict(awkward_specs(n_sites=30, chips=1500))
    assert solve(optimize_pkg.build_model(catalog, "s").prob, "highs").status is SolveStatus.ERROR
    with pytest.raises(SolverError, match=r"the HiGHS solver failed on scenario 's' \(error\)"):
        optimize(catalog, "s", alternatives=0)


# --- highspy missing -------------------------------------------------------------------------------------

WITHOUT_HIGHSPY = """
    import sys
    sys.modules["highspy"] = None  # as if it were not installed: `import highspy` raises ImportError
    from trnplan.cli import main
    main(sys.argv[1:])
"""


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "world.yaml").write_text(yaml.safe_dump(base_specs()))
    return specs


def without_highspy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(WITHOUT_HIGHSPY), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )


def test_highspy_missing_names_the_fix_and_cbc_and_exits_5(tiny: Path, tmp_path: Path) -> None:
    result = without_highspy("optimize", "s", "--specs", str(tiny), "--plans", str(tmp_path / "plans"))
    assert result.returncode == EXIT_SOLVER, result.stderr
    assert result.stderr == (
        "error: the HiGHS solver (Python package 'highspy') is not installed; install it with "
        "`pip install 'highspy>=1.15'`, or solve with `--solver cbc`\n"
        "no plan written for 's'\n"
    )
    assert not (tmp_path / "plans").exists()


def test_the_suggested_cbc_works_without_highspy(tiny: Path, tmp_path: Path) -> None:
    try:
        check_solver_available("cbc")
    except SolverError:
        pytest.skip("no CBC here (PuLP 4 does not bundle it)")
    result = without_highspy(
        "optimize",
        "s",
        "--specs",
        str(tiny),
        "--plans",
        str(tmp_path / "plans"),
        "--solver",
        "cbc",
        "--alternatives",
        "0",
    )
    assert result.returncode == EXIT_OK, result.stderr
    assert yaml.safe_load((tmp_path / "plans" / "s.yaml").read_text())["solver"]["name"] == "CBC"


def test_a_too_old_highspy_names_the_upgrade(monkeypatch: pytest.MonkeyPatch) -> None:
    import trnplan.optimize.solve  # noqa: F401

    solve_module = sys.modules["trnplan.optimize.solve"]
    monkeypatch.setattr(solve_module, "_highspy_version", lambda: (1, 14))
    with pytest.raises(SolverError) as info:
        check_solver_available("highs")
    assert str(info.value) == (
        "highspy 1.14 is too old (1.14 has a MIP presolve bug); upgrade it with "
        "`pip install -U 'highspy>=1.15'`, or solve with `--solver cbc`"
    )
    assert info.value.exit_code == EXIT_SOLVER

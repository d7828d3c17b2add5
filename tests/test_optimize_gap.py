"""A stated optimality target (`--gap`, a scenario's `gap`), what a plan records of its proof, and
alternatives priced for what they are: only the MILPs the top k needs, each at its own gap, counted as
they are solved."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import conftest
import pytest
import yaml

from trnplan.cli.outcomes import unproven_warning
from trnplan.diff import solver_text
from trnplan.optimize import alternatives as alternatives_module
from trnplan.optimize import optimize, progress, solve_objective
from trnplan.optimize.alternatives import ALTERNATIVE_GAP, find_alternatives
from trnplan.optimize.build import build_model
from trnplan.optimize.solution import SolveStatus
from trnplan.optimize.solve import proven, solve
from trnplan.plan import plan_scenario
from trnplan.plan.model import Plan, SolverInfo
from trnplan.render import solver_line
from trnplan.testkit.builders import base_specs, catalog_from_dict

run = functools.partial(conftest.run, columns=120)


def many_choices() -> dict[str, Any]:
    """base_specs with a dearer second scale-out switch: without `sw` the plan is nearly as cheap (on
    `sw2`), without liq16, liquid or `up` it is air8's, dearer; so the top 1 needs one MILP, not four."""
    specs = base_specs()
    specs["switches"]["sw2"] = {**specs["switches"]["sw"], "unit_usd": 2000}
    return specs


def _plan_with(**solver: Any) -> Plan:
    """The tiny world's plan with its solver record replaced."""
    plan = plan_scenario(catalog_from_dict(base_specs()), "s", alternatives=0)
    assert plan.solver is not None
    info = SolverInfo.model_validate({**plan.solver.model_dump(), **solver})
    return plan.model_copy(update={"solver": info})


# --- issue 37 item 14: an unknown gap is not 0 -------------------------------------------------------------


def test_a_plan_cut_short_with_an_unknown_gap_does_not_say_gap_0() -> None:
    plan = _plan_with(status="feasible", mip_gap=None)
    line = solver_line(plan)
    assert "gap unknown" in line
    assert "0%" not in line
    assert "gap unknown" in solver_text(plan.solver)


def test_a_known_gap_and_a_proof_read_as_such() -> None:
    assert solver_line(_plan_with(status="feasible", mip_gap=0.021)).endswith("feasible, gap 2.1%")
    assert solver_line(_plan_with(status="optimal", mip_gap=0.0)).endswith("proven optimal")


# --- the gap asked for ---------------------------------------------------------------------------


def test_a_plan_within_the_gap_asked_says_proven_within_and_no_warning() -> None:
    plan = _plan_with(status="feasible", mip_gap=3e-5, gap_target=1e-4, bound=1.0)
    assert solver_line(plan).endswith("proven within 0.01% (gap 0.003%)")
    assert "proven within 0.01%" in solver_text(plan.solver)
    assert unproven_warning("s", plan) is None
    # the same target missed (a time limit cut it) is unproven, and says so
    missed = _plan_with(status="feasible", mip_gap=3e-3, gap_target=1e-4, bound=1.0)
    assert "feasible, gap 0.3%" in solver_line(missed)
    warning = unproven_warning("s", missed)
    assert warning is not None and "--gap" not in warning  # a gap was asked: no need to suggest one


def test_the_unproven_warning_suggests_a_gap_only_where_one_would_help() -> None:
    stopped = _plan_with(status="feasible", mip_gap=3e-3)  # gap 0 asked, cut short
    assert "--gap 0.0001" in (unproven_warning("s", stopped) or "")
    assert "--gap" not in (unproven_warning("s", stopped, checking=True) or "-")  # the file's gap compared
    assert stopped.objective is not None
    kind = stopped.objective.model_copy(update={"kind": "max_perf_per_tco"})
    ratio = stopped.model_copy(update={"objective": kind})
    assert "--gap" not in (unproven_warning("s", ratio) or "-")  # its steps are proven optimal at any gap


def test_a_solver_optimal_with_a_gap_left_is_proven_within_not_optimal() -> None:
    """HiGHS says "optimal" once within its mip_rel_gap: that is a plan proven within the gap."""
    assert proven(SolveStatus.OPTIMAL, 4e-5, 1e-4) == (SolveStatus.FEASIBLE, 4e-5)
    assert proven(SolveStatus.OPTIMAL, 1e-12, 1e-4) == (SolveStatus.OPTIMAL, 0.0)
    assert proven(SolveStatus.FEASIBLE, None, 0.0) == (SolveStatus.FEASIBLE, None)


def test_optimal_asked_at_gap_0_is_optimal_whatever_relative_gap_is_reported() -> None:
    """Asked for gap 0, HiGHS stops "optimal" only within its absolute tolerance; Dinkelbach's last step has
    an objective at 0, so the relative gap it reports can be anything (the phased property test drew a
    max_perf_per_tco world whose plan came out "feasible" at the optimum)."""
    assert proven(SolveStatus.OPTIMAL, 0.5, 0.0) == (SolveStatus.OPTIMAL, 0.0)
    assert proven(SolveStatus.OPTIMAL, None, 0.0) == (SolveStatus.OPTIMAL, 0.0)


def test_solve_records_its_target_and_a_bound_no_better_than_the_plan() -> None:
    model = build_model(catalog_from_dict(base_specs()), "s")
    from trnplan.optimize.model import set_objective

    set_objective(model, "min_tco")
    result = solve(model.prob, "highs", gap=0.05)
    assert result.target == 0.05
    assert result.objective is not None and result.bound is not None
    assert result.bound <= result.objective * (1 + 1e-9)
    assert result.mip_gap is not None and result.mip_gap <= 0.05


def test_gap_on_the_command_line_and_in_the_scenario_reach_the_plan(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "world.yaml").write_text(yaml.safe_dump(base_specs()))
    out = tmp_path / "s.yaml"
    result = run("optimize", "s", "--specs", specs, "--out", out, "--gap", "1e-4", "--alternatives", "0")
    assert result.exit_code == 0, result.stderr
    written = yaml.safe_load(out.read_text())
    assert written["solver"]["gap_target"] == 1e-4
    # --check compares like with like: the file's target, without --gap
    check = run("optimize", "s", "--specs", specs, "--out", out, "--check", "--alternatives", "0")
    assert check.exit_code == 0, check.stdout + check.stderr
    # the scenario's field: the same target
    data = base_specs()
    data["scenarios"]["s"]["gap"] = 1e-4
    plan = plan_scenario(catalog_from_dict(data), "s", alternatives=0)
    assert plan.solver is not None and plan.solver.gap_target == 1e-4
    # default: proven optimal, nothing recorded of a target (committed plans unchanged)
    plain = plan_scenario(catalog_from_dict(base_specs()), "s", alternatives=0)
    assert plain.solver is not None and plain.solver.gap_target is None and plain.solver.bound is None
    assert "gap_target" not in plain.to_dict()["solver"]


@pytest.mark.parametrize("bad", ["-0.1", "0.5", "abc"])
def test_a_bad_gap_is_a_usage_error(bad: str) -> None:
    result = run("optimize", "s", "--gap", bad)
    assert result.exit_code == 2
    assert "--gap" in result.stderr


# --- alternatives --------------------------------------------------------------------------------


def _counting(calls: list[dict[str, Any]]) -> Any:
    def search(model: Any, solver: str, deadline: Any, start: float = 0.0, **kw: Any) -> Any:
        calls.append(kw)
        return solve_objective(model, solver, deadline, start, **kw)

    return search


def test_alternatives_solve_only_what_the_top_k_needs_and_keep_its_answer() -> None:
    """With k=1, a choice whose LP bound is above the best alternative found cannot enter the top 1: it is
    not solved, and the top 1 is the one of solving every choice."""
    catalog = catalog_from_dict(many_choices())
    best = optimize(catalog, "s", alternatives=0).decisions
    every: list[dict[str, Any]] = []
    full = find_alternatives(catalog, "s", best, 50, "highs", None, _counting(every))
    few: list[dict[str, Any]] = []
    top = find_alternatives(catalog, "s", best, 1, "highs", None, _counting(few))
    assert [a.without for a in top] == [a.without for a in full[:1]]
    assert top[0].objective == pytest.approx(full[0].objective, rel=1e-4)
    assert len(few) < len(best.chosen_items())
    assert len(few) < len(every) or len(every) < len(best.chosen_items())


def test_each_alternative_is_solved_at_its_own_gap() -> None:
    catalog = catalog_from_dict(base_specs())
    best = optimize(catalog, "s", alternatives=0).decisions
    calls: list[dict[str, Any]] = []
    find_alternatives(catalog, "s", best, 3, "highs", None, _counting(calls))
    assert calls and all(kw["gap"] == ALTERNATIVE_GAP for kw in calls)


def test_a_choice_the_lp_shows_cannot_be_done_without_costs_no_milp(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the only scale-out switch nothing can be built: the LP says so, no MILP is solved for it."""
    catalog = catalog_from_dict(base_specs())
    best = optimize(catalog, "s", alternatives=0).decisions
    calls: list[dict[str, Any]] = []
    found = find_alternatives(catalog, "s", best, 10, "highs", None, _counting(calls))
    infeasible = [a for a in found if a.decisions is None]
    assert [a.without for a in infeasible] == ["scale-out switch sw"]
    assert len(calls) == len(best.chosen_items()) - 1


def test_progress_counts_the_alternatives_really_solved() -> None:
    stages: list[str] = []

    def heard(p: progress.Progress) -> None:
        if p.stage.startswith("alternative") and p.stage not in stages:
            stages.append(p.stage)

    catalog = catalog_from_dict(many_choices())
    with progress.watch(heard):
        solution = optimize(catalog, "s", alternatives=1)
    solved = len([s for s in stages])
    assert solved >= 1
    for i, stage in enumerate(stages, 1):
        assert stage.startswith(f"alternative {i} (1 asked): without ")
    assert solved < len(solution.decisions.chosen_items())
    assert alternatives_module.ALTERNATIVE_GAP == 1e-4


# --- alternatives solved at once, in rounds ------------------------------------------------------------


def _alternatives_of(found: list[Any]) -> list[tuple[str, Any, Any]]:
    return [(a.without, a.objective, a.decisions) for a in found]


@pytest.mark.parametrize("specs", [base_specs, many_choices])
def test_alternatives_at_once_are_the_ones_solved_in_turn(specs: Any) -> None:
    """The same MILPs (same bounds, start, gap): the same alternatives, in the same order."""
    catalog = catalog_from_dict(specs())
    best = optimize(catalog, "s", alternatives=0).decisions
    for k in (1, 2, 3, 10):
        in_turn = find_alternatives(catalog, "s", best, k, "highs", None, solve_objective)
        at_once = find_alternatives(catalog, "s", best, k, "highs", None, solve_objective, at_once=True)
        assert _alternatives_of(at_once) == _alternatives_of(in_turn)
        assert len(at_once) == min(k, len(best.chosen_items()))


def test_a_round_of_alternatives_is_named_as_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """k = 2 and three choices that may enter: the first two in one round (HiGHS runs them together),
    the third skipped by its bound or in a round of its own (nothing begun ahead of the plan, which
    would run the first round's solves itself)."""
    import trnplan.optimize as optimize_pkg

    monkeypatch.setattr(optimize_pkg, "begin_ahead", lambda *a: None)
    sizes: list[int] = []
    real = alternatives_module._run_round

    def run(jobs: list[Any], deadline: Any) -> None:
        sizes.append(len(jobs))
        real(jobs, deadline)

    monkeypatch.setattr(alternatives_module, "_run_round", run)
    stages: list[str] = []

    def heard(p: progress.Progress) -> None:
        if p.stage.startswith("alternative") and p.stage not in stages:
            stages.append(p.stage)

    with progress.watch(heard):
        solution = optimize(catalog_from_dict(base_specs()), "s", alternatives=2)
    assert stages[0] == "alternatives 1-2 (2 asked), at once"
    assert sizes[0] == 2 and all(n <= 2 for n in sizes)
    assert len(solution.alternatives) == 2


class Instance:
    """A stand-in for a HiGHS instance: runs at once, records being asked to stop."""

    def __init__(self) -> None:
        self.cancelled = False
        self.HandleUserInterrupt = False

    def run(self) -> None:
        return None

    def getOptionValue(self, name: str) -> tuple[Any, Any]:  # noqa: N802 (highspy's name)
        assert name == "threads"  # `highs.run_here` asks how many threads it runs on
        return None, 1

    def cancelSolve(self) -> None:  # noqa: N802 (highspy's name)
        self.cancelled = True


def test_ctrl_c_during_a_round_stops_every_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while a round runs: every instance is asked to stop; outside a session that keeps the best
    plan the KeyboardInterrupt goes on, inside it the session is marked interrupted."""
    import concurrent.futures

    from trnplan.optimize.highs import Background

    def run_round(hs: list[Instance]) -> None:
        with Background(len(hs)) as background:
            background.wait([(h, background.submit(h)) for h in hs])

    real_wait = concurrent.futures.wait
    pressed = {"done": False}

    def wait(futures: Any, timeout: float | None = None) -> Any:
        if not pressed["done"]:
            pressed["done"] = True
            raise KeyboardInterrupt
        return real_wait(futures, timeout=timeout)

    monkeypatch.setattr(concurrent.futures, "wait", wait)
    hs = [Instance(), Instance()]
    with pytest.raises(KeyboardInterrupt):
        run_round(hs)
    assert all(h.cancelled and h.HandleUserInterrupt for h in hs)
    pressed["done"] = False
    hs = [Instance(), Instance()]
    with progress.watch(keep_best_on_interrupt=True) as session:
        run_round(hs)
        assert session.interrupted
    assert all(h.cancelled for h in hs)


def test_a_released_solve_is_told_to_stop_and_not_waited_for() -> None:
    """`Background.release` (the lean search proved: HiGHS's own is not read): the solves not kept are
    told to stop and leaving the `with` does not wait for them; each ends on its own thread (here: once
    the test lets it), the kept one untouched."""
    import threading

    from trnplan.optimize.highs import Background

    begun, go = threading.Event(), threading.Event()

    def solving() -> bool:  # a solve that has begun and not noticed yet
        begun.set()
        return go.wait(60)

    kept, dropped = Instance(), Instance()
    with Background(2) as background:
        done = background.submit(kept)
        held = background.submit(dropped, work=solving)
        done.result()
        assert begun.wait(60)
        background.release(keep=[kept])
        assert dropped.cancelled and not kept.cancelled
    assert not held.done()  # not waited for
    go.set()
    assert held.result(timeout=60)


# --- the first round begun while the plan is solved ----------------------------------------------------


def _recording_ahead(monkeypatch: pytest.MonkeyPatch, cores: int = 2) -> list[Any]:
    """Record each Ahead that `optimize` begins (on a machine said to have `cores` cores)."""
    import trnplan.optimize as optimize_pkg

    monkeypatch.setattr(alternatives_module.os, "cpu_count", lambda: cores)
    begun: list[Any] = []
    real = alternatives_module.begin_ahead

    def begin(*args: Any) -> Any:
        ahead = real(*args)
        begun.append(ahead)
        return ahead

    monkeypatch.setattr(optimize_pkg, "begin_ahead", begin)
    return begun


@pytest.mark.parametrize("specs", [base_specs, many_choices])
def test_alternatives_begun_ahead_are_the_ones_of_the_rounds(
    specs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `ahead` begins before the plan is known is the first round's own solve (no start, the same
    gap): the alternatives are those of the rounds begun after the plan, and every guess is stopped or
    taken by the time `optimize` returns."""
    import trnplan.optimize as optimize_pkg

    catalog = catalog_from_dict(specs())
    for k in (1, 2, 3):
        with monkeypatch.context() as patch:
            patch.setattr(optimize_pkg, "begin_ahead", lambda *a: None)
            after = optimize(catalog, "s", alternatives=k).alternatives
        stages: list[str] = []

        def heard(p: progress.Progress, stages: list[str] = stages) -> None:
            if p.stage.startswith("alternative") and p.stage not in stages:
                stages.append(p.stage)

        with monkeypatch.context() as patch, progress.watch(heard):
            begun = _recording_ahead(patch)
            ahead = optimize(catalog, "s", alternatives=k).alternatives
        assert _alternatives_of(list(ahead)) == _alternatives_of(list(after))
        first = f"alternatives 1-{k} ({k} asked), at once" if k > 1 else "alternative 1 (1 asked): without "
        assert stages[0].startswith(first)
        (guess,) = begun
        assert guess is not None and guess.background.started  # something was begun ahead
        assert all(f.done() for _h, f in guess.background.started)


def test_a_guess_the_plan_does_not_make_costs_time_not_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The LP's guess names `sw2`, which the plan does not choose, and leaves out the plan's own choices:
    the solve begun for it is stopped, the round solves the plan's, and the answer is unchanged."""
    import trnplan.optimize as optimize_pkg

    catalog = catalog_from_dict(many_choices())
    with monkeypatch.context() as patch:
        patch.setattr(optimize_pkg, "begin_ahead", lambda *a: None)
        after = optimize(catalog, "s", alternatives=2).alternatives
    begun = _recording_ahead(monkeypatch)
    monkeypatch.setattr(alternatives_module, "_lp_choices", lambda model: [("scale-out switch", "sw2")])
    ahead = optimize(catalog, "s", alternatives=2).alternatives
    assert _alternatives_of(list(ahead)) == _alternatives_of(list(after))
    assert all("sw2" not in a.without for a in ahead)
    (guess,) = begun
    assert list(guess.jobs) == [("scale-out switch", "sw2")]  # never taken
    assert all(f.done() for _h, f in guess.background.started)


def test_nothing_is_begun_ahead_on_one_core_or_without_alternatives(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = catalog_from_dict(base_specs())
    begun = _recording_ahead(monkeypatch, cores=1)
    optimize(catalog, "s", alternatives=2)
    optimize(catalog, "s", alternatives=0)
    assert begun == [None, None]


def test_ctrl_c_during_the_plan_stops_what_was_begun_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    import trnplan.optimize as optimize_pkg

    begun = _recording_ahead(monkeypatch)

    def pressed(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(optimize_pkg, "solve_objective", pressed)
    with pytest.raises(KeyboardInterrupt):
        optimize(catalog_from_dict(many_choices()), "s", alternatives=3)
    (guess,) = begun
    assert guess is not None and guess.background.started
    assert all(f.done() for _h, f in guess.background.started)
    assert guess.background.pool._shutdown


def test_what_is_begun_ahead_keeps_to_the_commands_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """--time-limit 10: a guess begun with the plan has the 10 s then left; one the round begins after a
    4 s search has the 6 s left then, not the 10 s it was made with."""
    from trnplan.optimize.highs import Background
    from trnplan.optimize.progress import Deadline

    class Clock:
        now = 0.0

        def __call__(self) -> float:
            return self.now

    clock = Clock()
    deadline = Deadline(10, clock)
    monkeypatch.setattr(alternatives_module, "AHEAD_THREADS", 1)
    model = build_model(catalog_from_dict(many_choices()), "s")
    ahead = alternatives_module.begin_ahead(model, 3, "highs", deadline, ALTERNATIVE_GAP)
    assert ahead is not None and len(ahead.jobs) >= 2
    first, *rest = ahead.jobs.values()
    assert first.model.h.getOptionValue("time_limit")[1] == pytest.approx(10)
    clock.now = 4.0
    limits: list[float] = []
    real = Background.submit

    def submit(self: Any, h: Any, *args: Any, **kwargs: Any) -> Any:
        limits.append(h.getOptionValue("time_limit")[1])
        return real(self, h, *args, **kwargs)

    monkeypatch.setattr(Background, "submit", submit)
    ahead.run([(p, None) for p in ahead.jobs.values()], deadline)
    ahead.close()
    assert limits == [pytest.approx(6)] * len(rest)


# --- alternatives started from the plan, repaired ------------------------------------------------------


def _phased_world() -> tuple[Any, str]:
    from trnplan.testkit.portfolio import load_portfolio, phased_portfolio_specs

    catalog = load_portfolio(phased_portfolio_specs(3, 3, 0))
    (scenario_id,) = catalog.scenarios
    return catalog, scenario_id


def test_an_alternative_starts_from_the_plan_repaired(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three sites over three quarters: an alternative whose choice some sites' plans do without starts
    from a repair of the plan (those sites' unit counts held, the rest re-solved without the choice).
    The repair is a plan of the model without the choice, holds what it says it holds, and the
    alternative found from it is within the alternatives' gap of the one found cold."""
    catalog, scenario_id = _phased_world()
    repairs: list[tuple[Any, tuple[str, str], dict[str, float], Any]] = []
    real_repair, real_repaired = alternatives_module._repair, alternatives_module._repaired

    def repair(model: Any, choice: tuple[str, str], plan: Any, deadline: Any) -> Any:
        sub = real_repair(model, choice, plan, deadline)
        if sub is not None:
            repairs.append((model, choice, dict(plan), sub))
        return sub

    values: dict[int, dict[str, float] | None] = {}

    def repaired(sub: Any) -> Any:
        values[id(sub)] = real_repaired(sub)
        return values[id(sub)]

    monkeypatch.setattr(alternatives_module, "_repair", repair)
    monkeypatch.setattr(alternatives_module, "_repaired", repaired)
    warm = optimize(catalog, scenario_id, alternatives=3).alternatives
    assert repairs, "no alternative was repaired: the test world no longer exercises the repair"
    for model, choice, plan, sub in repairs:
        got = values[id(sub)]
        assert got is not None
        touched = alternatives_module._exclude(model, *choice)
        try:
            for v in model.prob.variables():
                x = got[v.name]
                assert v.lowBound is None or x >= v.lowBound - 1e-6
                assert v.upBound is None or x <= v.upBound + 1e-6, (choice, v.name, x)
                if v.cat == "Integer":
                    assert abs(x - round(x)) < 1e-6
                v.varValue = x
            for c in model.prob.constraints():
                row, slack = c.name, c.value()
                scale = 1e-6 * max(1.0, abs(c.constant), *(abs(a) for a in c.values()))
                assert (c.sense != 1 or slack >= -scale) and (c.sense != -1 or slack <= scale), row
                assert c.sense != 0 or abs(slack) <= scale, row
        finally:
            for var, upper in touched:
                var.upBound = upper
        names = {var.name for var, _ in touched}
        free = {sm.site for pm in model.periods for sm in pm.sites
                for v in [*sm.n, *sm.y.values()] if v.name in names and plan[v.name] > 0.5}
        held = [v for pm in model.periods for sm in pm.sites if sm.site not in free for v in sm.n]
        assert held and all(got[v.name] == pytest.approx(round(plan[v.name])) for v in held)
    monkeypatch.setattr(alternatives_module, "_repair", lambda *a: None)
    cold = optimize(catalog, scenario_id, alternatives=3).alternatives
    assert [a.without for a in warm] == [a.without for a in cold]
    for a, b in zip(warm, cold, strict=True):
        assert a.result.objective == pytest.approx(b.result.objective, rel=ALTERNATIVE_GAP)


def test_repaired_alternatives_are_the_same_begun_ahead_or_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """With repairs in the first round, what `ahead` begins cold is used only for a choice the round
    solves cold: the answers are the same with and without it."""
    import trnplan.optimize as optimize_pkg

    catalog, scenario_id = _phased_world()
    with monkeypatch.context() as patch:
        patch.setattr(optimize_pkg, "begin_ahead", lambda *a: None)
        after = optimize(catalog, scenario_id, alternatives=3).alternatives
    _recording_ahead(monkeypatch)
    ahead = optimize(catalog, scenario_id, alternatives=3).alternatives
    assert _alternatives_of(list(ahead)) == _alternatives_of(list(after))


def test_stopping_a_solve_stops_its_repair_too() -> None:
    """A solve submitted with the instances its work also runs (a repair): Ctrl-C, or a round that does
    not take a guess, asks each of them to stop, and spares those it keeps."""
    from trnplan.optimize.highs import Background

    kept, dropped, repair = Instance(), Instance(), Instance()
    with Background(2) as background:
        background.submit(kept)
        background.submit(dropped, work=lambda: None, also=[repair])
        background.stop(keep=[kept])
        assert not kept.cancelled and dropped.cancelled and repair.cancelled
        assert repair.HandleUserInterrupt

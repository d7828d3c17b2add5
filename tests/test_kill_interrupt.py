"""Killed and interrupted runs: a plan file holds its old text or its new one, never a part; Ctrl-C during a
solve exits 130 at once and leaves nothing behind.

- SIGKILL while a plan is being written (deterministically: the child stops inside fsync, after writing
  the temporary file and before the rename; and at random moments of a loop of 8 MB writes): the file
  is old or new, byte for byte. A killed write may leave its hidden `.NAME.PID.XXXX.tmp`; the next write
  of the same file removes it (its writer is gone). A clean run leaves none.
- SIGINT while `trnplan optimize` solves a 40-site portfolio (half a second into HiGHS): exit 130,
  "interrupted", no plan and no temporary file; and while PuLP imports highspy (PuLP's bare `except:`
  used to swallow it). HiGHS runs in C; `solve` runs it in highspy's worker thread
  and stops it through its interrupt callback, so Ctrl-C takes effect at once instead of after the solve.
  A market-split instance that HiGHS cannot finish in minutes shows the stop is real.

Subprocesses, POSIX signals; no timing asserts (timeouts only guard against hangs).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml
from conftest import TERMINAL

from trnplan.files import write_text_atomic
from trnplan.testkit.builders import base_specs
from trnplan.testkit.portfolio import write_portfolio

REPO = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.skipif(os.name != "posix", reason="POSIX signals"), TERMINAL]


def python(code: str, *args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        **kwargs,
    )


def wait_for_line(proc: subprocess.Popen, expected: str) -> None:
    line = proc.stdout.readline() if proc.stdout else ""
    assert line.strip() == expected, (line, proc.stderr.read() if proc.stderr else "")


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# --- SIGKILL mid-write -----------------------------------------------------------------------------------

STALL_IN_FSYNC = """
    import os, sys, time
    from trnplan.files import write_text_atomic
    real_fsync = os.fsync
    def stalled_fsync(fd):
        real_fsync(fd)
        print("in fsync", flush=True)  # the new text is in the temporary file; the rename has not happened
        time.sleep(60)
    os.fsync = stalled_fsync
    write_text_atomic(sys.argv[1], sys.argv[2] * 100_000)
"""


def test_sigkill_inside_a_write_leaves_the_old_file_and_the_next_write_cleans_up(tmp_path: Path) -> None:
    plan = tmp_path / "s.yaml"
    plan.write_text("old plan\n")
    proc = python(STALL_IN_FSYNC, str(plan), "new plan\n")
    wait_for_line(proc, "in fsync")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert plan.read_text() == "old plan\n"
    (stray,) = temp_files(tmp_path)  # the killed writer's, hidden: `.s.yaml.PID.XXXX.tmp`
    assert stray.startswith(f".s.yaml.{proc.pid}.")
    assert (tmp_path / stray).read_text() == "new plan\n" * 100_000  # complete, never renamed

    write_text_atomic(plan, "newer plan\n")
    assert plan.read_text() == "newer plan\n"
    assert sorted(os.listdir(tmp_path)) == ["s.yaml"]  # the stale temporary file is gone


def test_a_temp_file_of_a_live_writer_is_left_alone(tmp_path: Path) -> None:
    """Two writers of one plan: the second must not delete the first's temporary file mid-write."""
    plan = tmp_path / "s.yaml"
    proc = python(STALL_IN_FSYNC, str(plan), "first\n")
    try:
        wait_for_line(proc, "in fsync")
        write_text_atomic(plan, "second\n")
        (live,) = temp_files(tmp_path)
        assert live.startswith(f".s.yaml.{proc.pid}.")
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_an_old_temp_file_without_a_writer_id_is_removed_after_an_hour(tmp_path: Path) -> None:
    plan = tmp_path / "s.yaml"
    old = tmp_path / ".s.yaml.k2j4abcd.tmp"  # the naming of earlier versions: no PID
    fresh = tmp_path / ".s.yaml.q9x7wxyz.tmp"
    old.write_text("x")
    fresh.write_text("x")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    write_text_atomic(plan, "plan\n")
    assert sorted(os.listdir(tmp_path)) == [fresh.name, "s.yaml"]


WRITE_LOOP = """
    import sys
    from trnplan.files import write_text_atomic
    path, n = sys.argv[1], 8 * 1024 * 1024
    for i in range(10_000):
        write_text_atomic(path, ("AB"[i % 2] * (n - 1)) + "\\n")
        if i == 0:
            print("wrote once", flush=True)
"""


@pytest.mark.parametrize("delay", [0.0, 0.013, 0.05, 0.11, 0.31])
def test_sigkill_at_any_moment_of_a_write_loop_leaves_old_or_new_text(delay: float, tmp_path: Path) -> None:
    plan = tmp_path / "s.yaml"
    proc = python(WRITE_LOOP, str(plan))
    wait_for_line(proc, "wrote once")
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    text = plan.read_text()
    assert len(text) == 8 * 1024 * 1024 and text.rstrip("\n") in (
        "A" * (len(text) - 1),
        "B" * (len(text) - 1),
    )
    assert len(temp_files(tmp_path)) <= 1
    write_text_atomic(plan, "next\n")
    assert sorted(os.listdir(tmp_path)) == ["s.yaml"]


def test_sigkill_of_trnplan_optimize_while_it_writes_keeps_the_committed_plan(tmp_path: Path) -> None:
    """The real command, stopped inside the plan's fsync: the committed plan is untouched."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "world.yaml").write_text(yaml.safe_dump(base_specs()))
    plan = tmp_path / "plans" / "s.yaml"
    plan.parent.mkdir()
    plan.write_text("the committed plan\n")
    code = """
        import os, sys, time
        real_fsync = os.fsync
        def stalled_fsync(fd):
            real_fsync(fd)
            print("in fsync", flush=True)
            time.sleep(60)
        os.fsync = stalled_fsync
        from trnplan.cli import main
        main(sys.argv[1:])
    """
    proc = python(code, "optimize", "s", "--specs", str(specs), "--out", str(plan), "--format", "json")
    wait_for_line(proc, "in fsync")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert plan.read_text() == "the committed plan\n"


def test_a_clean_run_of_trnplan_optimize_leaves_no_temp_file(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "world.yaml").write_text(yaml.safe_dump(base_specs()))
    plans = tmp_path / "plans"
    result = subprocess.run(
        [sys.executable, "-m", "trnplan", "optimize", "s", "--specs", str(specs), "--plans", str(plans)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert os.listdir(plans) == ["s.yaml"]


# --- Ctrl-C during a solve ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def portfolio(tmp_path_factory) -> tuple[Path, str]:
    specs = tmp_path_factory.mktemp("portfolio") / "specs"
    return specs, write_portfolio(40, specs)


ANNOUNCE_SOLVE = """
    import importlib, sys
    highs_module = importlib.import_module("trnplan.optimize.highs")
    run_highs = highs_module.run
    def announced(*args, **kwargs):
        if not getattr(announced, "done", False):
            announced.done = True
            print("solving", flush=True)  # the only change: say when HiGHS is about to run
        return run_highs(*args, **kwargs)
    highs_module.run = announced
    from trnplan.cli import main
    main(sys.argv[1:])
"""


def test_ctrl_c_during_a_solve_exits_130_at_once_and_writes_nothing(portfolio, tmp_path: Path) -> None:
    """The real command (its entry point `main`) on a 40-site portfolio, Ctrl-C half a second into HiGHS."""
    specs, scenario = portfolio
    plans = tmp_path / "plans"
    plans.mkdir()
    proc = python(ANNOUNCE_SOLVE, "optimize", scenario, "--specs", str(specs), "--plans", str(plans))
    wait_for_line(proc, "solving")
    time.sleep(0.5)
    assert proc.poll() is None, "the solve ended before it could be interrupted: use a bigger portfolio"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)  # uninterrupted, the solve and its alternatives take far longer
    assert proc.returncode == 130, (proc.returncode, err)
    assert err == "interrupted\n" and out == ""
    assert os.listdir(plans) == []  # no plan, no temporary file


CTRL_C_IN_HIGHSPY_IMPORT = """
    import importlib.abc, os, signal, sys
    class CtrlCDuringImport(importlib.abc.MetaPathFinder):
        lookups = 0
        def find_spec(self, name, path=None, target=None):
            if name == "highspy":
                CtrlCDuringImport.lookups += 1
                if CtrlCDuringImport.lookups == 2:  # 1: PuLP's probe; 2: its `try: import highspy except:`
                    sys.meta_path.remove(self)
                    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C lands inside that import
            return None
    sys.meta_path.insert(0, CtrlCDuringImport())
    from trnplan.cli import main
    main(sys.argv[1:])
"""


def test_ctrl_c_while_pulp_imports_highspy_is_not_swallowed(tmp_path: Path) -> None:
    """PuLP imports its solvers in `try: import highspy except:`, which caught the KeyboardInterrupt: the run
    went on and failed with exit 1 ("PulpSolverError: HiGHS: Not Available") or, when the signal came
    later in the import, exit 5 ("highspy cannot be imported"). Now it exits 130 and writes nothing."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "world.yaml").write_text(yaml.safe_dump(base_specs()))
    proc = python(
        CTRL_C_IN_HIGHSPY_IMPORT, "optimize", "s", "--specs", str(specs), "--plans", str(tmp_path / "p")
    )
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (130, "interrupted\n")
    assert not (tmp_path / "p").exists()


MARKET_SPLIT = """
    import random, pulp
    from trnplan.optimize.solve import solve
    # Cornuejols-Dawande market split, 5 x 40: branch and bound needs far more than minutes.
    rng = random.Random(7)
    a = [[rng.randint(0, 99) for _ in range(40)] for _ in range(5)]
    prob = pulp.LpProblem("market_split", pulp.LpMinimize)
    x = [prob.add_variable(f"x{j}", 0, 1, pulp.LpBinary) for j in range(40)]
    over = [prob.add_variable(f"o{i}", 0, None, pulp.LpContinuous) for i in range(5)]
    under = [prob.add_variable(f"u{i}", 0, None, pulp.LpContinuous) for i in range(5)]
    prob += pulp.lpSum(over) + pulp.lpSum(under)
    for i in range(5):
        prob += pulp.lpSum(a[i][j] * x[j] for j in range(40)) + under[i] - over[i] == sum(a[i]) // 2
    print("solving", flush=True)
    try:
        solve(prob, "highs")
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        raise SystemExit(130)
    print("finished", flush=True)
"""


def test_ctrl_c_stops_a_highs_solve_that_would_run_for_minutes() -> None:
    proc = python(MARKET_SPLIT)
    wait_for_line(proc, "solving")
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert out == "interrupted\n", (out, err)


ANNOUNCE_FUTURES = """
    import importlib, sys
    stage = sys.argv.pop(1)
    if stage == "extensive form":  # the one MILP that holds every future
        module = importlib.import_module("trnplan.optimize.highs")
        name = "run"
    else:  # the per-future solves on Dask (wait-and-see, the average future's plan)
        module = importlib.import_module("distributed").Client
        name = "gather"
    real = getattr(module, name)
    def announced(*args, **kwargs):
        if not getattr(announced, "done", False):
            announced.done = True
            print("solving", flush=True)
        return real(*args, **kwargs)
    setattr(module, name, announced)
    from trnplan.cli import main
    main(sys.argv[1:])
"""


@pytest.mark.parametrize("stage", ["extensive form", "per-future solves"])
def test_ctrl_c_during_futures_exits_130_and_writes_no_plan(stage: str, tmp_path: Path) -> None:
    """`optimize --futures` on the shipped trn3-hedge, Ctrl-C once the extensive form's HiGHS starts, or once
    the per-future solves are handed to Dask: exit 130, "interrupted", no plan file, no temporary file."""
    pytest.importorskip("distributed")
    out = tmp_path / "hedged.yaml"
    proc = python(ANNOUNCE_FUTURES, stage, "optimize", "trn3-hedge", "--futures", "5", "--workers", "1",
                  "--out", str(out))
    wait_for_line(proc, "solving")
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    stdout, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, err)
    assert err.endswith("interrupted\n") and stdout == "", err
    assert os.listdir(tmp_path) == []  # no plan, no temporary file

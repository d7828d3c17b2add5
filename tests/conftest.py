"""What the tests share: the one way to run the CLI, the environment it runs in, plans solved once per
session, one Dask cluster, and the process state every test may rely on.

- `run(*args)`: the CLI in-process (typer's `CliRunner`), no colour, a fixed width (120 columns unless a
  test asks for another: `run(..., columns=200)`), `TRNPLAN_DEBUG` unset, exceptions raised (unless
  `catch_exceptions=True`).
  `result.stdout` and `result.stderr` are kept apart.
- `REPO`, `FIXTURES`, `SPECS`, `PLANS`: where things are.
- `hidden_words(renderable, width)`: the words only the columns a narrow terminal leaves out hold (what a
  test of "every word whole" may miss at that width).
- Session fixtures: the tiny world solved once (`tiny_solved`), the phased fixture's plan
  (`phased_plan`), a Dask cluster (`dask_address`).
- Ctrl-C reaches the processes the tests start: a pytest started with SIGINT ignored (a background job of
  a non-interactive shell, `nohup`, some CI runners) passes that on to every child, and the tests that
  send Ctrl-C would see it ignored. Each pytest process (the xdist workers too) restores Python's handler
  at start-up.
- Tests that need a real terminal or signals are in the xdist group `terminal` (`--dist loadgroup` runs
  them one after the other on one worker, so their timing is not fought over by the others).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

from trnplan.cli import app
from trnplan.plan import Plan, plan_scenario
from trnplan.specs.load import load_specs
from trnplan.testkit.builders import base_specs

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
SPECS = REPO / "specs"
PLANS = REPO / "plans"

ENV: dict[str, str | None] = {"NO_COLOR": "1", "COLUMNS": "120", "TRNPLAN_DEBUG": None}
"""The CLI's environment in-process: no colour, 120 columns, no debug tracebacks."""

TERMINAL = pytest.mark.xdist_group("terminal")
"""Tests that need a real terminal, signals or their own processes' timing: one worker runs them, one at a
time (`--dist loadgroup`; their ids end in `@terminal`). pytest-xdist 3.8 groups by renaming `item._nodeid`,
which pytest 9.2 no longer reads: the test extra pins pytest below 9.2, and
`test_conftest::test_terminal_tests_share_one_worker` fails if the groups stop being applied."""


def run(
    *args: str | Path,
    env: dict[str, str | None] | None = None,
    columns: int = 120,
    catch_exceptions: bool = False,
) -> Result:
    """The CLI in-process, as a user would type it; `result.stdout` and `result.stderr` are kept apart.
    An exception is raised, unless `catch_exceptions` (the fuzzers look at `result.exception`)."""
    return CliRunner().invoke(
        app,
        [str(a) for a in args],
        env={**ENV, "COLUMNS": str(columns), **(env or {})},
        catch_exceptions=catch_exceptions,
    )


def _narrowed(renderable: Any, width: int) -> Any:
    """A renderable as `width` shows it: each table less the columns its narrow layout leaves out."""
    from rich.console import Group

    from trnplan.render.tables import Grid

    if isinstance(renderable, Grid):
        return renderable.narrowed(width)
    if isinstance(renderable, Group):
        return Group(*(_narrowed(part, width) for part in renderable.renderables))
    return renderable


def _words(renderable: Any, width: int) -> set[str]:
    import io

    from rich.console import Console

    from trnplan.render import Trimmed

    out = io.StringIO()
    Console(file=out, width=width, color_system=None, highlight=False, soft_wrap=False).print(
        Trimmed(renderable))
    return {w for line in out.getvalue().splitlines() if set(line) - set("─ ") for w in line.split()}


def hidden_words(renderable: Any, width: int) -> set[str]:
    """The words (at 250 columns) that only the columns left out at `width` hold."""
    return _words(renderable, 250) - _words(_narrowed(renderable, width), 250)


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as a user's terminal has it, in this process and so in every process a test starts."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# --- worlds and plans solved once per session ------------------------------------------------------------


def tiny_world() -> dict[str, Any]:
    """The builders' tiny world with a second scenario, so `--all` has more than one thing to solve:
    s is 64 chips (four liq16 racks), t is 16 chips (one liq16 rack)."""
    world = base_specs()
    world["scenarios"]["t"] = {**world["scenarios"]["s"], "demand": {"chips": 16}}
    return world


def ranged_two_sites() -> dict[str, Any]:
    """The sweeps' world: the tiny world with a second, air-only site of dearer power, its chip price and
    liquid PUE ranged."""
    world = base_specs()
    world["sites"]["b"] = {**world["sites"]["a"], "electricity_usd_per_kwh": 0.3, "cooling": ["air"]}
    world["scenarios"]["s"]["sites"] = ["a", "b"]
    world["chips"]["x"]["ranges"] = {"unit_usd": [8000, 12000]}
    world["cooling"]["liquid"]["ranges"] = {"pue": [1.05, 1.6]}
    return world


def spec_folder(tmp_path: Path, world: dict[str, Any]) -> Path:
    """`tmp_path/specs` holding `world` as one spec file."""
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    return folder


@pytest.fixture(scope="session")
def tiny_solved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the tiny world solved once: specs/world.yaml, plans/s.yaml and plans/t.yaml
    (session-scoped: read it, do not change it)."""
    root = tmp_path_factory.mktemp("tiny-solved")
    specs = root / "specs"
    specs.mkdir()
    (specs / "world.yaml").write_text(yaml.safe_dump(tiny_world(), sort_keys=False))
    r = run("optimize", "--all", "--specs", specs, "--plans", root / "plans")
    assert r.exit_code == 0, r.output
    return root


@pytest.fixture(scope="session")
def phased_plan() -> Plan:
    """The ramp-3 plan of tests/fixtures/phased over the bundled catalog (a hall opening in stages, three
    periods), solved once per session."""
    return plan_scenario(load_specs(["@catalog", str(FIXTURES / "phased")]), "ramp-3", alternatives=0)


# --- one Dask cluster ---------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the dask scheduler exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"no dask scheduler on port {port} after {timeout} s")


def _wait_for_workers(address: str, n: int, timeout: float = 120) -> None:
    """Until `n` workers have joined the scheduler: a sweep gives up on a scheduler that has none within its
    --connect-timeout, and workers importing trnplan on a loaded machine take a while to join."""
    from distributed import Client

    with Client(address, timeout=timeout) as client:
        client.wait_for_workers(n, timeout=timeout)


@pytest.fixture(scope="session")
def dask_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Dask scheduler and two one-thread workers, started once per session (per xdist worker) as
    processes of their own: `tcp://127.0.0.1:PORT`. They import trnplan from this checkout. The sweep tests
    that want a cluster of their own (a LocalCluster, Ctrl-C) start one themselves."""
    dask = shutil.which("dask", path=str(Path(sys.executable).parent))
    if dask is None:
        pytest.skip("the dask extra is not installed")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    scratch = tmp_path_factory.mktemp("dask")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    # Each worker (one thread) holds only the task it runs, so a task that kills its worker takes no other
    # with it; and such a task is given up after its second death (Dask's default: the fourth).
    scheduler_env = {**env, "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION": "1.0",
                     "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1"}
    scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                  "--no-dashboard"], cwd=scratch, env=scheduler_env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = None
    try:
        _wait_for_port(port, scheduler)
        worker = subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--nworkers", "2",
                                   "--no-dashboard", "--local-directory", str(scratch)], cwd=scratch,
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_for_workers(address, 2)
        yield address
    finally:
        for proc in (worker, scheduler):
            if proc is not None:
                proc.terminate()
        for proc in (worker, scheduler):
            if proc is not None:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()

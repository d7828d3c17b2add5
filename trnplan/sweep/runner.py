"""Solve a sweep's runs on a Dask cluster: the only module that uses Dask.

Each task carries the spec directories, the base `--set` overrides and the run's own, never a pickled
model: the worker loads the specs with those overrides and calls `plan_scenario` (alternatives 0), the
path `trnplan optimize --set ...` takes, so a row's figures are that command's to the cent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trnplan.errors import InfeasibleError, SolverError, SpecError, UsageError
from trnplan.plan.build import plan_scenario
from trnplan.specs.load import load_specs
from trnplan.sweep.rows import Row, failed_row, plan_row, stamped

if TYPE_CHECKING:
    from trnplan.sweep.grid import Run

INSTALL_HINT = 'trnplan sweep needs Dask: pip install "trnplan[dask]"'


@dataclass(frozen=True)
class Task:
    """What a worker needs to solve one run: the specs (directories), the overrides, the solver."""
    scenario: str
    dirs: tuple[str, ...]
    base: tuple[str, ...]
    run: Run
    solver: str = "highs"
    time_limit: float | None = None
    base_digest: str = ""  # inputs_digest of the scenario with `base` alone: every row carries it


def solve_run(task: Task) -> Row:
    """Load the specs with the run's overrides and solve the scenario: the run's row (a failed run's too),
    stamped with the sweep's scenario and base digest."""
    return stamped(_solve_run(task), task.scenario, task.base_digest)


def _solve_run(task: Task) -> Row:

    try:
        catalog = load_specs(list(task.dirs), [*task.base, *task.run.overrides])
    except SpecError as exc:
        return failed_row(task.run, "invalid", "; ".join(str(p) for p in exc.problems))
    try:
        plan = plan_scenario(
            catalog, task.scenario, solver=task.solver, time_limit=task.time_limit, alternatives=0
        )
    except InfeasibleError as exc:
        return failed_row(task.run, "infeasible", str(exc))
    except SolverError as exc:
        return failed_row(task.run, "error", str(exc))
    return plan_row(task.run, plan)


def _distributed() -> Any:
    """The `distributed` module, untyped (it ships no complete types)."""
    import importlib

    return importlib.import_module("distributed")


def dask_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


@contextmanager
def cluster(workers: int, scheduler: str | None, timeout: float) -> Iterator[Any]:
    """A client of the scheduler named, or of a local cluster of `workers` one-thread processes."""
    if not dask_available():
        raise UsageError(INSTALL_HINT)
    distributed = _distributed()
    Client, LocalCluster = distributed.Client, distributed.LocalCluster  # noqa: N806

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        try:
            with quiet_cancel():
                yield client
        finally:
            client.close()
        return
    with _workers_ignore_ctrl_c():
        local = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
    try:
        with Client(local) as client, quiet_cancel():
            client.run(quiet_worker_heartbeat)
            try:
                yield client
            finally:
                _quiet_shutdown()
    finally:
        local.close()


def _quiet_shutdown() -> None:
    """Closing the local cluster after a Ctrl-C may log a callback that failed mid-cancel (tornado's
    "Exception in callback ..." with its traceback); nothing there is the user's to act on, and every row
    is already kept, so shutdown logs nothing below CRITICAL."""
    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


class _Noise(logging.Filter):
    """Drops the records whose message holds `text`; every other record passes."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()


HEARTBEAT_NOISE = "communicate with scheduler during heartbeat"
"""A local worker's "Failed to communicate with scheduler during heartbeat." (logged with a traceback): the
local cluster's scheduler runs in the sweep's own process, so it is gone only when the sweep stops (Ctrl-C
on a loaded machine: the scheduler closes while a heartbeat is on its way; seen in CI). A task's own
failure still reaches the sweep through its future."""

CANCEL_NOISE = "sync.<locals>.cancel"
"""Tornado's "Exception in callback ... sync.<locals>.cancel": Ctrl-C while the sweep waits on Dask makes
distributed cancel that wait on its event loop, and on a loaded machine the cancel can fail there and be
logged with a traceback at once, in the loop's thread, before any shutdown code runs. The Ctrl-C goes on as
usual."""


def quiet_worker_heartbeat() -> None:
    """Run on each local worker (`Client.run`): its heartbeat failing at shutdown logs nothing
    (`HEARTBEAT_NOISE`)."""
    logging.getLogger("distributed.worker").addFilter(_Noise(HEARTBEAT_NOISE))


@contextmanager
def quiet_cancel() -> Iterator[None]:
    """While a sweep talks to Dask: no traceback for the cancelled wait of a Ctrl-C (`CANCEL_NOISE`)."""
    logger, noise = logging.getLogger("tornado.application"), _Noise(CANCEL_NOISE)
    logger.addFilter(noise)
    try:
        yield
    finally:
        logger.removeFilter(noise)


@contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """Start worker processes with SIGINT ignored (a child inherits that): Ctrl-C in a terminal reaches the
    whole process group, and the sweep, not each worker, decides what stops (every worker printed a
    traceback otherwise). Only from the main thread, where signals can be set."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def solve_all(client: Any, tasks: list[Task], on_row: Callable[[Row], None]) -> None:
    """Submit every task, and hand each row to `on_row` as its run finishes. On Ctrl-C (or any failure),
    the runs not yet finished are cancelled and the exception goes on: every row handed over is kept."""
    futures: list[Any] = client.map(solve_run, tasks, pure=False)
    try:
        for future in _distributed().as_completed(futures):
            on_row(future.result())
    except BaseException:
        client.cancel(futures)
        raise

"""Solve a sweep's runs on a Dask cluster: the only module that uses Dask.

Each task carries the spec directories, the base `--set` overrides and the run's own, never a pickled
model: the worker loads the specs with those overrides and calls `plan_scenario` (alternatives 0), the
path `trnplan optimize --set ...` takes, so a row's figures are that command's to the cent.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trnplan.errors import InfeasibleError, SolverError, SpecError, UsageError, visible
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
    """A client of the scheduler named (checked to speak Dask and to have a worker within `timeout`), or
    of a local cluster of `workers` one-thread processes."""
    if not dask_available():
        raise UsageError(INSTALL_HINT)
    distributed = _distributed()
    Client, LocalCluster = distributed.Client, distributed.LocalCluster  # noqa: N806

    if scheduler is not None:
        address = scheduler_address(scheduler)
        probe_scheduler(address, timeout)
        try:
            client = Client(address, timeout=timeout)
        except Exception as exc:  # noqa: BLE001  # whatever the endpoint sent: not the user's bug, nor ours
            raise UsageError(_unreachable(scheduler, exc)) from None
        try:
            _wait_for_a_worker(client, scheduler, timeout)
            with quiet_cancel():
                yield client
        finally:
            client.close()
        return
    with _workers_ignore_ctrl_c():
        try:
            with _silent("distributed"):  # a worker that cannot start is logged with a traceback: said below
                local = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.CRITICAL,  # what fails reaches the sweep: a row, an error
                )
        except Exception as exc:  # noqa: BLE001  # a worker process that could not start ("Nanny failed")
            raise SolverError(f"cannot start the local Dask cluster: {_said(exc)}{_cause(exc)}") from None
    try:
        with Client(local) as client, quiet_cancel():
            client.run(quiet_worker_heartbeat)
            try:
                yield client
            finally:
                _quiet_shutdown()
    finally:
        local.close()


SCHEMES = ("tcp",)
"""Schedulers are reached over plain TCP: tls:// needs certificates, ucx:// and ws:// their own packages and
settings, none of which `sweep` takes."""


def scheduler_address(text: str) -> str:
    """`tcp://HOST:PORT` (or `HOST:PORT`) as Dask takes it; UsageError for any other form."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    form = f"--scheduler takes tcp://HOST:PORT, got {visible(text)!r}"
    if scheme.lower() not in SCHEMES:
        raise UsageError(f"{form}: {visible(scheme)}:// is not supported (tls, ucx and ws need settings "
                         "trnplan does not take); reach the scheduler over tcp://")
    host, colon, port = rest.rpartition(":")
    if not colon or not host or not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise UsageError(f"{form}: name a host and a port from 1 to 65535")
    return f"tcp://{rest}"


def probe_scheduler(address: str, timeout: float) -> None:
    """Connect to `address` and read its Dask handshake, all within `timeout` seconds (Dask's own connect
    waits for the handshake without a limit, and takes any 8 bytes an HTTP server answers for the length of
    a frame to allocate): UsageError unless a Dask server answered."""
    import asyncio

    connect = _distributed().comm.connect

    async def handshake() -> Any:
        comm = await connect(address, timeout=timeout)
        try:
            return comm.remote_info
        finally:
            comm.abort()

    try:
        with _silent("distributed"):
            info = asyncio.run(asyncio.wait_for(handshake(), timeout))
    except TimeoutError:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: no Dask answer within {timeout:g} s "
                         "(--connect-timeout); is it a Dask scheduler's address?") from None
    except Exception as exc:  # noqa: BLE001  # whatever the endpoint sent: not the user's bug, nor ours
        raise UsageError(_unreachable(address, exc)) from None
    if not isinstance(info, dict) or "compression" not in info:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: it did not answer as Dask does")


@contextmanager
def _silent(name: str) -> Iterator[None]:
    """No log records from this logger and those below it meanwhile: Dask logs what it cannot read from a
    stranger with a traceback, and the error said in words follows."""
    logger = logging.getLogger(name)
    before = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(before)


def _cause(exc: BaseException) -> str:
    """The first exception that led to `exc`, said in brackets ("" when none)."""
    first = exc
    seen = {id(exc)}
    while (nxt := first.__cause__ or first.__context__) is not None and id(nxt) not in seen:
        seen.add(id(nxt))
        first = nxt
    return "" if first is exc else f" ({type(first).__name__}: {_said(first)})"


def _said(exc: BaseException) -> str:
    text = visible(str(exc)) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "..."


def _unreachable(scheduler: str, exc: BaseException) -> str:
    hint = ("" if isinstance(exc, OSError) else
            "; is it a Dask scheduler's address (an HTTP server or another service answers otherwise)?")
    return f"cannot reach the Dask scheduler at {visible(scheduler)}: {_said(exc)}{hint}"


def _wait_for_a_worker(client: Any, scheduler: str, timeout: float) -> None:
    """UsageError when the scheduler has no worker after `timeout` seconds: nothing would ever run."""
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise UsageError(
            f"the Dask scheduler at {visible(scheduler)} has no workers after {timeout:g} s "
            f"(--connect-timeout); start some (dask worker {visible(scheduler)}) or wait longer"
        ) from None
    except Exception as exc:  # noqa: BLE001  # the endpoint went away or answered oddly
        raise UsageError(_unreachable(scheduler, exc)) from None


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


def solve_all(client: Any, tasks: Iterable[Task], on_row: Callable[[Row], None]) -> int:
    """Solve every task, handing each row to `on_row` as its run finishes; the number of runs that failed.

    Tasks are taken from `tasks` as they are needed: at most IN_FLIGHT per worker thread wait on the
    cluster at once, so a large sweep grows neither this process nor the scheduler. A run whose worker
    died (killed, out of memory: Dask's KilledWorker after its allowed retries) or whose task failed on the
    cluster gets a row of status `failed` saying why, and the other runs go on. On Ctrl-C (or any failure
    here), the runs not yet finished are cancelled and the exception goes on: every row handed over is kept.
    """
    distributed = _distributed()
    threads = sum(client.nthreads().values()) or 1
    todo = iter(tasks)
    waiting: dict[Any, Task] = {}
    done = distributed.as_completed()
    failed = 0

    def submit(n: int) -> None:
        for task in itertools.islice(todo, n):
            future = client.submit(solve_run, task, pure=False)
            waiting[future] = task
            done.add(future)

    try:
        submit(IN_FLIGHT * threads)
        for future in done:
            task = waiting.pop(future)
            if future.status == "finished":
                on_row(future.result())
            else:
                failed += 1
                on_row(stamped(failed_row(task.run, "failed", _failure(future)), task.scenario,
                               task.base_digest))
            submit(1)
    except BaseException:
        client.cancel(list(waiting))
        raise
    return failed


IN_FLIGHT = 4
"""Runs submitted ahead per worker thread: enough to keep every worker busy between two answers."""


def _failure(future: Any) -> str:
    """Why a run's task failed on the cluster, in words."""
    try:
        exc = future.exception()
    except BaseException as cancelled:  # noqa: BLE001  # cancelled: the scheduler dropped it
        return f"its task was cancelled on the cluster ({_said(cancelled)})"
    if type(exc).__name__ == "KilledWorker":
        return f"the worker solving it died {exc.allowed_failures + 1} times (killed, or out of memory?)"
    return f"it failed on its worker: {type(exc).__name__}: {_said(exc)}"

"""One time limit for a whole command, and what a long search reports while it runs.

`Deadline` turns `--time-limit SECONDS` into one moment shared by every solve of a command: the main
search, each Dinkelbach step, the alternatives and the explanations each get what is left of it.

A `Session` (entered with `watch`) is how a caller that prints (the CLI) hears from the solver without the
library printing: HiGHS's callbacks record the incumbent, the bound and the gap; the solve loop hands them to
`Session.progress` a few times a second, in the caller's thread. A session may also ask that Ctrl-C stop
the search and keep the best plan found so far (`keep_best_on_interrupt`) instead of ending the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


class Deadline:
    """A moment `seconds` from now, less what was `spent` before (the command's own start-up: loading its
    specs); never, for None. `remaining()` is what is left of it."""

    def __init__(
        self, seconds: float | None, clock: Callable[[], float] | None = None, spent: float = 0.0
    ) -> None:
        self.seconds = seconds
        self._clock: Callable[[], float] = clock or time.monotonic
        self._end = None if seconds is None else self._clock() + seconds - spent

    @classmethod
    def of(cls, limit: float | Deadline | None) -> Deadline:
        """A deadline as given, or one starting now for a number of seconds (or none)."""
        return limit if isinstance(limit, Deadline) else cls(limit)

    def remaining(self) -> float | None:
        """Seconds left (0 once passed); None when there is no limit."""
        if self._end is None:
            return None
        return max(0.0, self._end - self._clock())

    @property
    def expired(self) -> bool:
        left = self.remaining()
        return left is not None and left <= 0


class OutOfTime(Exception):
    """The command's deadline passed while `stage` ran ('building the model', 'the start heuristic')."""

    def __init__(self, stage: str) -> None:
        super().__init__(stage)
        self.stage = stage


_DEADLINE: ContextVar[Deadline | None] = ContextVar("trnplan_deadline", default=None)


@contextmanager
def limited(deadline: Deadline) -> Iterator[Deadline]:
    """Make `deadline` the one every stage inside checks (`check_time`, `current_deadline`)."""
    token = _DEADLINE.set(deadline)
    try:
        yield deadline
    finally:
        _DEADLINE.reset(token)


def current_deadline() -> Deadline | None:
    """The deadline every stage checks now (`limited`), if any."""
    return _DEADLINE.get()


def check_time(stage: str) -> None:
    """Raise OutOfTime when the current deadline (`limited`) has passed; stages call it between steps,
    so each stops within one step of it (a site, a period, a pricing round)."""
    deadline = _DEADLINE.get()
    if deadline is not None and deadline.expired:
        raise OutOfTime(stage)


@dataclass(frozen=True)
class Progress:
    """Where a search stands: `stage` in words, the best plan's objective (`incumbent`) and the bound on
    the optimum in the stage's `unit` (USD for TCO, PFLOPs; '' for a Dinkelbach step), the relative gap,
    and the seconds since the session began."""

    stage: str
    incumbent: float | None
    bound: float | None
    gap: float | None
    elapsed_s: float
    unit: str = ""


ProgressCallback = Callable[[Progress], None]


@dataclass
class Session:
    """What the current command wants to hear (`progress`) and how Ctrl-C should end a search."""

    progress: ProgressCallback | None = None
    keep_best_on_interrupt: bool = False
    started: float = field(default_factory=time.monotonic)
    stage: str = "solving"
    step: str = ""  # a part of the stage: "ratio step 2"
    scale: float = 1.0  # objective value x scale = figure in `unit`
    unit: str = ""
    interrupted: bool = False

    def report(self, incumbent: float | None, bound: float | None, gap: float | None) -> None:
        if self.progress is None:
            return
        scaled = [None if v is None else v * self.scale for v in (incumbent, bound)]
        elapsed = time.monotonic() - self.started
        label = f"{self.stage}, {self.step}" if self.step else self.stage
        self.progress(Progress(label, scaled[0], scaled[1], gap, elapsed, self.unit))


_SESSION: ContextVar[Session | None] = ContextVar("trnplan_solve_session", default=None)


def current() -> Session | None:
    """The session of the command running now, if any."""
    return _SESSION.get()


@contextmanager
def watch(
    progress: ProgressCallback | None = None, *, keep_best_on_interrupt: bool = False
) -> Iterator[Session]:
    """Run solves inside a session: progress is reported to `progress`; with `keep_best_on_interrupt`,
    Ctrl-C stops the search and the optimizer raises `SearchInterrupted` with the best plan so far."""
    session = Session(progress=progress, keep_best_on_interrupt=keep_best_on_interrupt)
    token = _SESSION.set(session)
    try:
        yield session
    finally:
        _SESSION.reset(token)


@contextmanager
def stage(label: str) -> Iterator[None]:
    """Name what the solves inside are doing, for progress: 'solving trn3-100k', 'alternative 2 of 5'."""
    session = current()
    if session is None:
        yield
        return
    saved = session.stage
    session.stage = label
    session.report(None, None, None)  # say what starts now, before the first figures come
    try:
        yield
    finally:
        session.stage = saved


@contextmanager
def reading(scale: float, unit: str, step: str = "") -> Iterator[None]:
    """How the objective of the solves inside reads: value x `scale` in `unit` ('' for none), and the
    step of the stage they are ('ratio step 2')."""
    session = current()
    if session is None:
        yield
        return
    saved = (session.scale, session.unit, session.step)
    session.scale, session.unit, session.step = scale, unit, step
    try:
        yield
    finally:
        session.scale, session.unit, session.step = saved


def interrupted() -> bool:
    """Whether Ctrl-C stopped a search of the current session (it asked to keep the best plan)."""
    session = current()
    return session is not None and session.interrupted


class SearchInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped the search; `solution` is the best found so far (None when there was none yet).
    A KeyboardInterrupt, so whoever does not look for the solution still exits as interrupted."""

    def __init__(self, solution: object | None) -> None:
        super().__init__()
        self.solution = solution

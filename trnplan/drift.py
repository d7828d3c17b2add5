"""Drift of committed plans: whether a plan file on disk is the plan a fresh solve gives (`optimize --check`).

Pure functions of texts and files; the CLI prints the results. A corrupt, truncated, foreign or
future-format file on disk is bad input (it gets the same message `bom` and `diff` give), not drift; the
same plan from another build of the solver (only `solver.version` differs) is not drift either, nor is the
same plan from the same specs named another way (only the recorded `inputs` differ: `--specs specs/`
against the default, say).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from trnplan.errors import EXIT_DIFFERENT, EXIT_INVALID, EXIT_OK, InputError


class DriftState(enum.Enum):
    UP_TO_DATE = "up to date"
    OTHER_SOLVER_BUILD = "up to date, from another solver build"
    OTHER_INPUTS = "up to date, with other recorded inputs"
    MISSING = "missing"
    OUT_OF_DATE = "out of date"
    UNREADABLE = "unreadable"  # not a plan file: not checked


@dataclass(frozen=True)
class Drift:
    """How a plan file compares with a fresh solve: its state, the unified diff (on disk -> fresh) when it
    is out of date, the two solver versions when only they differ, the reading error when unreadable."""

    path: Path
    state: DriftState
    diff: list[str] = field(default_factory=list)
    versions: tuple[str, str] | None = None
    error: InputError | None = None

    @property
    def exit_code(self) -> int:
        """0 up to date, 1 drift (missing or out of date), 3 unreadable."""
        if self.state is DriftState.UNREADABLE:
            return EXIT_INVALID
        if self.state in (DriftState.MISSING, DriftState.OUT_OF_DATE):
            return EXIT_DIFFERENT
        return EXIT_OK


def solver_versions(on_disk: str, fresh: str) -> tuple[str, str] | None:
    """(old, new) solver versions when two plan texts differ in nothing else, else None."""
    import yaml

    try:
        old, new = yaml.safe_load(on_disk), yaml.safe_load(fresh)
        old_version, new_version = old["solver"].pop("version"), new["solver"].pop("version")
    except (yaml.YAMLError, KeyError, TypeError, AttributeError):
        return None
    return (str(old_version), str(new_version)) if old == new else None


def only_inputs_differ(on_disk: str, fresh: str) -> bool:
    """Whether two plan texts differ only in their recorded `inputs` (where the same specs came from)."""
    import yaml

    try:
        old, new = yaml.safe_load(on_disk), yaml.safe_load(fresh)
        old.pop("inputs", None), new.pop("inputs", None)
    except (yaml.YAMLError, TypeError, AttributeError):
        return False
    return bool(old == new)


def check_drift(fresh: str, path: str | Path) -> Drift:
    """Compare a freshly solved plan's file text with the file at `path`."""
    from trnplan.plan.file import PlanNotFoundError, parse_plan, read_plan_text

    path = Path(path)
    try:
        on_disk = read_plan_text(path)  # a regular file within the size cap, never a FIFO or device
    except PlanNotFoundError:
        return Drift(path, DriftState.MISSING)
    except InputError as exc:
        return Drift(path, DriftState.UNREADABLE, error=exc)
    if on_disk == fresh:
        return Drift(path, DriftState.UP_TO_DATE)
    try:
        parse_plan(on_disk, str(path))
    except InputError as exc:
        return Drift(path, DriftState.UNREADABLE, error=exc)
    versions = solver_versions(on_disk, fresh)
    if versions is not None:
        return Drift(path, DriftState.OTHER_SOLVER_BUILD, versions=versions)
    if only_inputs_differ(on_disk, fresh):
        return Drift(path, DriftState.OTHER_INPUTS)
    import difflib  # only on drift

    lines = difflib.unified_diff(
        on_disk.splitlines(),
        fresh.splitlines(),
        f"{path} (on disk)",
        f"{path} (fresh solve)",
        n=1,
        lineterm="",
    )
    return Drift(path, DriftState.OUT_OF_DATE, diff=list(lines))


def stale_plans(plans: Path, scenario_ids: Iterable[str]) -> list[Path]:
    """Plan files in the folder `plans` whose scenario the specs no longer define, sorted."""
    if not plans.is_dir():
        return []
    known = set(scenario_ids)
    return [path for path in sorted(plans.glob("*.yaml")) if path.stem not in known]

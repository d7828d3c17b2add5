"""The runs of a sweep: a grid (`--vary`, the product of every axis) or Monte Carlo draws (`--sample`,
every field the specs give a range, uniformly within it). A run is an override set, as `--set` takes it."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

from trnplan.catalog import KINDS, MODELS, Catalog
from trnplan.catalog.months import month_index, month_text
from trnplan.catalog.ranges import number_field
from trnplan.errors import SpecError, UsageError
from trnplan.specs.yamlsafe import parse_yaml
from trnplan.sweep.rows import MAX_RUNS
from trnplan.sweep.usable import usable_ids

WILDCARD = "*"


@dataclass(frozen=True)
class Axis:
    """One varied input: the PATH as given (maybe `sites.*.FIELD`), the paths it sets, and its values."""

    path: str
    paths: tuple[str, ...]
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Run:
    """One run: its number, what it sets (PATH as given -> value) and the `--set` overrides that do it."""

    run: int
    set: dict[str, Any]
    overrides: tuple[str, ...]


def expand(path: str, catalog: Catalog) -> tuple[str, ...]:
    """`KIND.*.FIELD` as one path per entity of KIND (sorted); any other path as itself."""
    kind, _, rest = path.partition(".")
    entity, dot, field = rest.partition(".")
    if entity != WILDCARD:
        return (path,)
    if not dot or not field:
        raise UsageError(f"'{path}': name a field after the wildcard, e.g. {kind}.*.FIELD")
    try:
        ids = sorted(catalog.of(kind))
    except AttributeError:
        raise UsageError(f"'{path}': unknown collection '{kind}' (expected {', '.join(KINDS)})") from None
    if not ids:
        raise UsageError(f"'{path}': the specs define no {kind}")
    return tuple(f"{kind}.{i}.{field}" for i in ids)


def _number(text: str, what: str) -> float | int:
    try:
        value = json.loads(text.strip())
    except ValueError:
        value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{what}: '{text}' is not a number")
    return value


def _evenly(low: float | int, high: float | int, n: int) -> list[Any]:
    """n evenly spaced values from low to high, both ends included (whole numbers stay whole if they can)."""
    if n == 1:
        return [low]
    values = [low + (high - low) * i / (n - 1) for i in range(n)]
    whole = isinstance(low, int) and isinstance(high, int) and (high - low) % (n - 1) == 0
    return [round(v) if whole else float(f"{v:.12g}") for v in values]


def _scalar(text: str, what: str) -> Any:
    """One `--vary` value read as `--set` reads a VALUE (YAML 1.2: `0700` is 700, `0x384` 900, `1_000`
    1000): a number, text, true/false or null."""
    try:
        doc = parse_yaml(text, file=what)
    except SpecError as exc:
        raise UsageError(f"{what}: '{text.strip()}': {exc.problems[0].message}") from None
    if doc.problems:
        raise UsageError(f"{what}: '{text.strip()}': {doc.problems[0].message}")
    if isinstance(doc.data, (dict, list)):
        raise UsageError(f"{what}: '{text.strip()}' is not one value (a number, text, true/false or null)")
    return doc.data


def parse_vary(text: str, catalog: Catalog) -> Axis:
    """`PATH=V1,V2,...` or `PATH=LOW:HIGH:N` as an axis (values read as `--set` reads a VALUE); at most
    MAX_RUNS values, checked before any is made."""
    path, eq, spec = text.partition("=")
    path = path.strip()
    if not eq or not path:
        raise UsageError(f"--vary takes PATH=V1,V2 or PATH=LOW:HIGH:N, got '{text}'")
    what = f"--vary {path}"
    parts = spec.split(":")
    if len(parts) == 3:
        low, high = _number(parts[0], what), _number(parts[1], what)
        n = _number(parts[2], what)
        if not isinstance(n, int) or n < 1:
            raise UsageError(f"{what}: N in LOW:HIGH:N must be a whole number, at least 1; got {parts[2]}")
        if n > MAX_RUNS:
            raise UsageError(f"{what}: N is {n:,}, more than the {MAX_RUNS:,} runs a sweep may have")
        if low > high:
            raise UsageError(f"{what}: LOW {low:g} is above HIGH {high:g}")
        values = _evenly(low, high, n)
    elif ":" in spec:
        raise UsageError(f"{what}: write LOW:HIGH:N (three parts) or V1,V2,...; got '{spec}'")
    else:
        texts = [v for v in spec.split(",") if v.strip()]
        if len(texts) > MAX_RUNS:
            raise UsageError(f"{what}: {len(texts):,} values, more than the {MAX_RUNS:,} runs a sweep may "
                             "have")
        values = [_scalar(v, what) for v in texts]
        if not values:
            raise UsageError(f"{what}: no values (an empty grid); give V1,V2,... or LOW:HIGH:N")
    return Axis(path, expand(path, catalog), tuple(values))


def _text(value: Any) -> str:
    return json.dumps(value)


def grid_size(axes: list[Axis]) -> int:
    """How many runs the axes' grid has; UsageError past MAX_RUNS (before any run is made)."""
    size = math.prod(len(axis.values) for axis in axes)
    if size > MAX_RUNS:
        raise UsageError(f"the grid has {size:,} runs, more than {MAX_RUNS:,}; vary fewer values")
    return size


class Runs(Sequence[Run]):
    """A sweep's runs, each made when asked for (run i from i alone): a large sweep takes no memory for the
    runs it has not reached."""

    def __init__(self, size: int):
        self.size = size

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, i: int) -> Run: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Run]: ...
    def __getitem__(self, i: int | slice) -> Run | Sequence[Run]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.size))]
        if not 0 <= i < self.size:
            raise IndexError(i)
        return self.run(i)

    def run(self, i: int) -> Run:
        raise NotImplementedError


class GridRuns(Runs):
    """Every combination of the axes' values (the first axis varies slowest), numbered from 0."""

    def __init__(self, axes: list[Axis]):
        super().__init__(grid_size(axes))
        self.axes = axes

    def run(self, i: int) -> Run:
        picked: list[Any] = []
        rest = i
        for axis in reversed(self.axes):
            rest, k = divmod(rest, len(axis.values))
            picked.append(axis.values[k])
        combo = picked[::-1]
        sets = {a.path: v for a, v in zip(self.axes, combo, strict=True)}
        overrides = tuple(f"{p}={_text(v)}" for a, v in zip(self.axes, combo, strict=True) for p in a.paths)
        return Run(i, sets, overrides)


def grid_runs(axes: list[Axis]) -> GridRuns:
    """Every combination of the axes' values (the first axis varies slowest), numbered from 0; made one at
    a time as they are asked for."""
    return GridRuns(axes)


@dataclass(frozen=True)
class Ranged:
    """A field the specs give a range: its path, bounds, whether it holds whole numbers, and whether it
    holds months (`YYYY-MM` bounds, drawn in whole months)."""

    path: str
    low: Any
    high: Any
    integer: bool
    month: bool = False

    def draw(self, rng: random.Random) -> Any:
        """One value drawn uniformly within the range: a whole month, a whole number, or a number (9
        significant figures)."""
        if self.month:
            return month_text(rng.randint(month_index(self.low), month_index(self.high)))
        if self.integer:
            return rng.randint(round(self.low), round(self.high))
        return min(max(float(f"{rng.uniform(self.low, self.high):.9g}"), self.low), self.high)


def ranged_fields(catalog: Catalog, scenario_id: str | None = None) -> list[Ranged]:
    """Every `ranges` entry as `KIND.ID.FIELD` (sorted); with a scenario, only those of entities it can use
    (`trnplan.sweep.usable.usable_ids`) and, of a schedule, only the entries in effect at a month it reads,
    so that no draw of an input the plan cannot read is ranked."""
    usable = None if scenario_id is None else usable_ids(catalog, scenario_id)
    found = []
    for kind in KINDS:
        for entity_id, entity in sorted(catalog.of(kind).items()):
            if usable is not None and entity_id not in usable.get(kind, {entity_id}):
                continue
            for field, (low, high) in sorted(getattr(entity, "ranges", {}).items()):
                number = number_field(MODELS[kind], field)
                if scenario_id is not None and number is not None and number.entry and not _entry_read(
                        entity, field, catalog.scenarios[scenario_id]):
                    continue
                integer, month = bool(number and number.integer), bool(number and number.month)
                found.append(Ranged(f"{kind}.{entity_id}.{field}", low, high, integer, month))
    return found


def _entry_read(entity: Any, path: str, scenario: Any) -> bool:
    """Whether the scenario reads the schedule entry `FIELD.YYYY-MM` of the entity: in effect at one of its
    periods' starts (at its `as_of` without periods; the last entry without either)."""
    field, _, month = path.rpartition(".")
    entries = sorted(getattr(entity, "schedules", {}).get(field, {}))
    if month not in entries:
        return False
    read = scenario.periods or ([scenario.as_of] if scenario.as_of else [])
    if not read:
        return bool(month == entries[-1])
    return any(month == max((e for e in entries if e <= m), default=entries[0]) for m in read)


class SampleRuns(Runs):
    """Run i draws every ranged field uniformly within its range (a month range in whole months), from the
    seed and i alone, so a resumed sweep draws the same values."""

    def __init__(self, fields: list[Ranged], n: int, seed: int):
        super().__init__(n)
        self.fields, self.seed = fields, seed

    def run(self, i: int) -> Run:
        rng = random.Random(f"{self.seed}:{i}")
        sets: dict[str, Any] = {f.path: f.draw(rng) for f in self.fields}
        return Run(i, sets, tuple(f"{p}={_text(v)}" for p, v in sets.items()))


def sample_runs(fields: list[Ranged], n: int, seed: int) -> SampleRuns:
    """n runs, each drawing every ranged field uniformly within its range (made as they are asked for);
    at most MAX_RUNS."""
    if not fields:
        raise UsageError(
            "--sample: the specs give no field a range (ranges: {FIELD: [LOW, HIGH]}); "
            "nothing to draw: an empty sweep"
        )
    if not 1 <= n <= MAX_RUNS:
        raise UsageError(f"--sample N must be 1 to {MAX_RUNS:,}, got {n:,}")
    return SampleRuns(fields, n, seed)

"""Fuzzing plan files: whatever a hand edit, a bad merge, a cut-off copy or a hostile PR does to a plan file,
`bom`, `diff` (either side) and `optimize --check` end in a result (exit 0 or 1) or a refusal (exit 3)
whose message names the file, and a line that exists in it when it gives one. Never another exception,
never "internal error", never a traceback.

Each case edits a seed plan *as text*: a value swapped for a hostile one (non-finite, huge, negative, of
another type, a YAML 1.1 octal or base-60 form, a tag, an alias, rich markup, control and bidi
characters, 5,000 characters), a number nudged (x0, x-1, x1.01, +1), a key renamed or duplicated, a
line deleted, duplicated, swapped or re-indented, a hostile line inserted, the file cut at any byte or
bytes overwritten; two edits in one case about a third of the time.

- in process (hypothesis): the commands' library path on the four committed plans: `read_plan`, the
  BOM in all four formats, `diff_plans` against the seed both ways with its table, Markdown, JSON and a
  guardrail, and `check_drift` against the seed's text; 2,500 cases (slow) + 150 in the quick run;
- through the real CLI (CliRunner): `bom`, `diff` both ways and `optimize --check` on a plan of the
  builders' tiny world (which `--check` solves each time); 300 cases (slow).

Counts scale with TRNPLAN_FUZZ_SCALE (default 1):

    python -m pytest tests/test_plan_fuzz.py --hypothesis-show-statistics
    TRNPLAN_FUZZ_SCALE=0.1 python -m pytest tests/test_plan_fuzz.py      # a quick local run
"""

from __future__ import annotations

import atexit
import io
import re
import shutil
import tempfile
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import pytest
import yaml
from conftest import run
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from trnplan.bom import bom_to_csv, bom_to_json, bom_to_markdown, build_bom
from trnplan.diff import breached, diff_plans, diff_to_json, diff_to_markdown, parse_guardrail
from trnplan.drift import DriftState, check_drift
from trnplan.errors import EXIT_DIFFERENT, EXIT_INVALID, EXIT_OK, InputError
from trnplan.plan import Plan
from trnplan.plan.file import read_plan
from trnplan.render import render_bom, render_diff
from trnplan.testkit.builders import base_specs
from trnplan.testkit.fuzzing import event, examples

REPO = Path(__file__).resolve().parents[1]
SEEDS = {p.name: p.read_text(encoding="utf-8") for p in sorted((REPO / "plans").glob("*.yaml"))}
GUARDRAILS = [parse_guardrail(rule) for rule in ("capex>+5%", "it_power_kw>+2000", "chips<-1")]


# --- where edits land ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spot:
    kind: str  # "value" (a scalar value), "key"
    start: int
    end: int
    numeric: bool


SPOT_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml where PyYAML has it: where an edit lands needs only the nodes' offsets, found five times faster."""


@lru_cache(maxsize=16)
def spots(text: str) -> list[Spot]:
    """Every key and scalar value of `text`; none when it no longer parses (after an earlier edit)."""
    found: list[Spot] = []
    seen: set[int] = set()

    def walk(node: Node) -> None:
        if id(node) in seen:  # an alias (`a: &a [*a]` contains itself)
            return
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            numeric = node.tag.endswith((":int", ":float"))
            found.append(Spot("value", node.start_mark.index, node.end_mark.index, numeric))
        elif isinstance(node, MappingNode):
            for key, value in node.value:
                found.append(Spot("key", key.start_mark.index, key.end_mark.index, False))
                walk(value)
        elif isinstance(node, SequenceNode):
            for item in node.value:
                walk(item)

    try:
        root = yaml.compose(text, Loader=SPOT_LOADER)
    except (yaml.YAMLError, RecursionError):
        return []
    if root is not None:
        walk(root)
    return found


HOSTILE_VALUES = [
    ".inf",
    "-.inf",
    ".nan",
    "null",
    "~",
    "1e400",
    "-1e400",
    "1.0e+300",
    "1.7e+308",
    "-1.7e+308",
    "1e16",
    "-5",
    "0",
    "-0.0",
    "1e-320",
    "99999999999999999999999",
    "9223372036854775807",
    "lots",
    "''",
    "true",
    "no",
    "[]",
    "{}",
    "[1, 2]",
    "{a: 1}",
    "0700",
    "0o17",
    "09",
    "1:30",
    "0x1f",
    "2025-01-01",
    "=",
    "!!python/object/apply:os.system ['true']",
    "!!binary aGk=",
    "!!set {a}",
    "!local x",
    "&a 1",
    "*a",
    "'[/]'",
    "'[bold red]x[/bold red]'",
    "'[link=x]y'",
    '"\\u202eevil"',
    '"\\x07\\x1b[31m"',
    '"\\0"',
    "'\u200b'",
    "'\ufeff'",
    "'x\u2028y'",
    "'" + "x" * 5000 + "'",
    "'unterminated",
    '"unterminated',
    "[1,",
    "{a:",
    "@x",
    "`x",
    "%x",
    "|\n  block",
    ">-\n  folded",
    "? x",
    "- item",
    "a: b",
    "#",
    "''''",
    "*undefined",
]
HOSTILE_KEYS = [
    "[key]",
    "{a: 1}",
    "1",
    "yes",
    "null",
    "''",
    "a b",
    "x\u200b",
    "<<",
    "chips",
    "it_power_kw",
    "'0700'",
]
HOSTILE_LINES = [
    "extra: 1",
    "  extra: 1",
    "    extra: 1",
    "- x",
    "<<: {a: 1}",
    "? [k]\n: 1",
    "\t",
    "---",
    "...",
    "%YAML 1.1",
    "format: trnplan-plan/2",
    "x: !!python/name:os.system",
    "a: &a [*a]",
    "x: " + "[" * 200 + "]" * 200,
    "lol: &l [x, x, x, x, x, x, x, x, x]\nlol2: [*l, *l, *l, *l, *l, *l, *l, *l, *l]",
    "<<<<<<< HEAD",
    "=======",
    "totals: {}",
    "sites: []",
    "bom: null",
    "  - category: x",
    "\x85",
    "\u2028",
]
NUDGES = [0.0, -1.0, 0.5, 0.99, 1.000001, 1.01, 2.0, 1e6]


def _numeric_text(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


@st.composite
def one_edit(draw: st.DrawFn, text: str) -> str:
    kind = draw(
        st.sampled_from(
            ["value", "value", "nudge", "nudge", "key", "line", "line", "insert", "unicode", "cut", "bytes"]
        )
    )
    event(f"edit: {kind}")
    wanted = {"value": "value", "nudge": "value", "unicode": "value", "key": "key"}.get(kind)
    candidates = [s for s in spots(text) if s.kind == wanted and (kind != "nudge" or s.numeric)]
    if candidates:
        spot = draw(st.sampled_from(candidates))
        old = text[spot.start : spot.end]
        if kind == "value":
            new = draw(st.sampled_from(HOSTILE_VALUES))
        elif kind == "key":
            new = draw(st.sampled_from(HOSTILE_KEYS))
        elif kind == "nudge":
            number = _numeric_text(old) or 0.0
            factor = draw(st.sampled_from(NUDGES))
            plus = draw(st.sampled_from([0, 1, -1]))
            value = number * factor + plus
            new = str(int(value)) if old.lstrip("-").isdigit() and value.is_integer() else repr(value)
        else:
            odd = draw(
                st.sampled_from(["\u202e", "\u200b", "\x07", "\x1b", "\u2028", "\ufffe", "[/]", "\U0001f600"])
            )
            at = draw(st.integers(0, len(old)))
            new = old[:at] + odd + old[at:]
        return text[: spot.start] + new + text[spot.end :]
    lines = text.split("\n")
    if kind == "line" and len(lines) > 2:
        i = draw(st.integers(0, len(lines) - 2))
        how = draw(st.sampled_from(["delete", "duplicate", "swap", "indent", "dedent"]))
        event(f"line: {how}")
        if how == "delete":
            del lines[i]
        elif how == "duplicate":
            lines.insert(i, lines[i])
        elif how == "swap":
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif how == "indent":
            lines[i] = " " * draw(st.integers(1, 3)) + lines[i]
        else:
            lines[i] = lines[i][draw(st.integers(1, 2)) :]
        return "\n".join(lines)
    if kind == "insert":
        i = draw(st.integers(0, len(lines)))
        lines.insert(i, draw(st.sampled_from(HOSTILE_LINES)))
        return "\n".join(lines)
    return text  # "cut" and "bytes" are made on the bytes


@st.composite
def mutated(draw: st.DrawFn, seeds: dict[str, str]) -> tuple[str, bytes]:
    """(seed name, the edited file's bytes)."""
    name = draw(st.sampled_from(sorted(seeds)))
    text = seeds[name]
    edits = draw(st.integers(1, 2)) if draw(st.booleans()) else 1
    raw: bytes | None = None
    for _ in range(edits):
        kind = draw(st.sampled_from(["text"] * 8 + ["cut", "bytes"]))
        data = text.encode("utf-8")
        if kind == "cut":
            event("edit: cut")
            raw = data[: draw(st.integers(0, len(data)))]
        elif kind == "bytes":
            event("edit: bytes")
            at = draw(st.integers(0, max(0, len(data) - 1)))
            junk = draw(st.binary(min_size=1, max_size=8))
            raw = data[:at] + junk + data[at + len(junk) :]
        else:
            text = draw(one_edit(text))
            raw = text.encode("utf-8")
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            break
    assert raw is not None
    return name, raw


# --- what the commands do, in process -----------------------------------------------------------------


def assert_named(exc: InputError, path: Path, raw: bytes) -> None:
    """A refusal names the file; a line it gives exists in the file; every line is visible text."""
    message = str(exc)
    lines = message.split("\n")
    for line in lines:
        if line.startswith("... and "):
            continue
        assert line.startswith(str(path)), message
        where = re.match(re.escape(str(path)) + r":(\d+):(\d+): ", line)
        if where:
            assert 1 <= int(where.group(1)) <= raw.count(b"\n") + 1, line
        assert line.isprintable(), repr(line)


@cache
def seed_plan(name: str) -> Plan:
    return read_plan(REPO / "plans" / name)


def render(renderable: object) -> str:
    out = io.StringIO()
    Console(file=out, width=100, color_system=None).print(renderable)
    return out.getvalue()


def library_outcome(name: str, raw: bytes, path: Path) -> str:
    """What bom, diff and optimize --check make of the file, in process: "read" or "refused"."""
    path.write_bytes(raw)
    drift = check_drift(SEEDS[name], path)  # optimize --check, with the seed as the fresh solve
    if drift.state is DriftState.UNREADABLE:
        assert drift.error is not None
        assert_named(drift.error, path, raw)
    try:
        plan = read_plan(path)
    except InputError as exc:
        assert_named(exc, path, raw)
        assert drift.state is DriftState.UNREADABLE, drift.state
        event("outcome: refused")
        return "refused"
    assert drift.state is not DriftState.UNREADABLE
    the_bom = build_bom(plan)
    for text in (
        bom_to_csv(the_bom),
        bom_to_json(the_bom),
        bom_to_markdown(the_bom),
        render(render_bom(the_bom)),
    ):
        assert text
    good = seed_plan(name)
    for d in (diff_plans(good, plan, "base", str(path)), diff_plans(plan, good, str(path), "head")):
        assert render(render_diff(d)) and diff_to_markdown(d) and diff_to_json(d)
        breached(d, GUARDRAILS)
    event(f"outcome: read ({drift.state.value})")
    return "read"


WORK = Path(tempfile.mkdtemp(prefix="trnplan-plan-fuzz-"))  # hypothesis tests cannot take tmp_path
atexit.register(shutil.rmtree, WORK, ignore_errors=True)


def _library_case(case: tuple[str, bytes]) -> None:
    name, raw = case
    library_outcome(name, raw, WORK / "plans" / name)


(WORK / "plans").mkdir()


SHARDS = 4
"""The slow fuzzers run as shards of their cases, so that xdist's workers share them (each draws its own)."""


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
@examples(2500 // SHARDS)
@given(case=mutated(SEEDS))
def test_mutated_plans_in_process(shard: int, case: tuple[str, bytes]) -> None:
    _library_case(case)


@examples(150)
@given(mutated(SEEDS))
def test_mutated_plans_in_process_quick(case: tuple[str, bytes]) -> None:
    _library_case(case)


def test_the_seeds_themselves_read_and_are_up_to_date() -> None:
    for name in SEEDS:
        assert library_outcome(name, SEEDS[name].encode(), WORK / "plans" / name) == "read"
        assert check_drift(SEEDS[name], WORK / "plans" / name).state is DriftState.UP_TO_DATE


# --- through the real CLI ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, Path, str]:
    """(spec folder, plan file, plan text) of the builders' tiny world."""
    root = tmp_path_factory.mktemp("tiny")
    (root / "specs").mkdir()
    (root / "specs" / "world.yaml").write_text(yaml.safe_dump(base_specs(), sort_keys=False))
    plan = root / "s.yaml"
    result = run("optimize", "s", "--specs", root / "specs", "--out", plan, "--alternatives", "0",
                 catch_exceptions=True)
    assert result.exit_code == EXIT_OK, result.output
    return root / "specs", plan, plan.read_text()


def assert_clean(result, allowed: set[int], args: list[str]) -> None:
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "internal error" not in output, (args, output)
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, result.exception)
    assert result.exit_code in allowed, (args, result.exit_code, output)
    assert all(line.isprintable() for line in result.stderr.splitlines()), (args, result.stderr)  # no escapes


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS // 2))
@examples(300 // (SHARDS // 2))
@given(data=st.data())
def test_mutated_plans_through_the_cli(tiny, shard: int, data: st.DataObject) -> None:
    """Each case runs four commands on the edited file: bom, diff either way, optimize --check."""
    specs, good, text = tiny
    _, raw = data.draw(mutated({"s.yaml": text}))
    path = good.parent / "edited" / "s.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(raw)
    i = data.draw(st.integers(0, 11))
    commands = [
        ["bom", str(path), "--format", ["table", "csv", "json", "markdown"][i % 4]],
        ["diff", str(good), str(path), "--format", ["table", "markdown", "json"][i % 3], "--exit-code"],
        ["diff", str(path), str(good), "--fail-if", "it_power_kw>+2000"],
        ["optimize", "s", "--specs", str(specs), "--out", str(path), "--check", "--alternatives", "0"],
    ]
    for args in commands:
        result = run(*args, catch_exceptions=True)
        assert_clean(result, {EXIT_OK, EXIT_DIFFERENT, EXIT_INVALID}, args)
        event(f"{args[0]}: exit {result.exit_code}")
    assert path.read_bytes() == raw  # --check never writes

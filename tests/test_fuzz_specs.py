"""Fuzzing the loader with the shipped specs as seeds: whatever a hand edit, a bad merge or a cut-off copy
does to `specs/`, loading ends in a Catalog or in a SpecError whose every problem names its file and,
inside a file, a real line and column, on one line of visible text. Never another exception.

Each case copies the six shipped files into a temporary directory and edits one or two of them *as text*,
keeping comments and layout, the way a person or a tool breaks a file: a value swapped for another type,
a number made NaN, infinite, huge, negative or tiny, a key deleted, duplicated or renamed, a value nested
hundreds deep, odd Unicode (bidi overrides, zero-width and non-breaking spaces, line separators, C0/C1
controls, noncharacters, astral characters, other scripts' digits) in values and ids, indentation
broken, the file cut at a random byte (mid-UTF-8 sequences included) or bytes overwritten.

Counts (explicit `max_examples`, scaled by TRNPLAN_FUZZ_SCALE, default 1): 2,000 text edits + 1,200
truncations + 1,000 Unicode edits + 800 numbers and nesting + 300 through the real `trnplan validate`
= 5,300 cases, about two minutes. Unchanged files are parsed once and their parse reused (the parse is a
pure function of the bytes); the edited file is always parsed afresh.

    python -m pytest tests/test_fuzz_specs.py --hypothesis-show-statistics
    TRNPLAN_FUZZ_SCALE=0.1 python -m pytest tests/test_fuzz_specs.py      # a quick local run
"""

from __future__ import annotations

import math
import pickle
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from conftest import run
from hypothesis import given
from hypothesis import strategies as st
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

import trnplan.specs.load
from trnplan.catalog import Catalog
from trnplan.errors import EXIT_INVALID, EXIT_OK, Problem, SpecError
from trnplan.specs.load import load_specs
from trnplan.specs.yamlsafe import read_yaml
from trnplan.testkit.fuzzing import event, examples

pytestmark = pytest.mark.slow  # fuzzing: minutes; `-m "not slow"` leaves it out

REPO = Path(__file__).resolve().parents[1]
SEEDS: dict[str, str] = {
    p.name: p.read_text(encoding="utf-8") for p in sorted((REPO / "specs").glob("*.yaml"))
}
SEEDS_RAW = {name: text.encode("utf-8") for name, text in SEEDS.items()}


# --- where edits can land: every key, value and list item of every seed file, with its text span -------


@dataclass(frozen=True)
class Spot:
    """A place in a seed file: `start`..`end` are character offsets of the node's text."""

    kind: str  # "scalar" (a value), "key", "entry" (key and value), "item" (a list item), "collection"
    start: int
    end: int
    flow: bool  # inside a flow collection ({...} / [...]) rather than block layout
    numeric: bool = False
    depth: int = 0


def _spots(text: str) -> list[Spot]:
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    found: list[Spot] = []

    def value(node: Node, flow: bool, depth: int) -> None:
        if isinstance(node, ScalarNode):
            numeric = node.tag.endswith((":int", ":float"))
            found.append(Spot("scalar", node.start_mark.index, node.end_mark.index, flow, numeric, depth))
            return
        inner_flow = flow or bool(node.flow_style)
        found.append(Spot("collection", node.start_mark.index, node.end_mark.index, flow, False, depth))
        if isinstance(node, MappingNode):
            for key, child in node.value:
                found.append(Spot("key", key.start_mark.index, key.end_mark.index, inner_flow, False, depth))
                found.append(
                    Spot("entry", key.start_mark.index, child.end_mark.index, inner_flow, False, depth)
                )
                value(child, inner_flow, depth + 1)
        elif isinstance(node, SequenceNode):
            for child in node.value:
                found.append(
                    Spot("item", child.start_mark.index, child.end_mark.index, inner_flow, False, depth)
                )
                value(child, inner_flow, depth + 1)

    if root is not None:
        value(root, False, 0)
    return found


SPOTS = {name: _spots(text) for name, text in SEEDS.items()}


def _line_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Whole lines covering start..end (through the newline that ends the last)."""
    first = text.rfind("\n", 0, start) + 1
    if end > 0 and text[end - 1] == "\n":
        return first, end
    last = text.find("\n", end)
    return first, len(text) if last < 0 else last + 1


# --- the edits ----------------------------------------------------------------------------------------

TYPED = [
    "true",
    "no",
    "off",
    "null",
    "~",
    "''",
    "'text'",
    '"1000"',
    "[1, 2]",
    "{a: 1}",
    "[]",
    "{}",
    "2026-13",
    "2026-06-01",
    "2026-02-30",
    "0x1F",
    "0o17",
    "1_000",
    "1e3",
    "12 kW",
    "40 MW",
    "1,000",
    "-",
    "=",
    "!!str 5",
    "!!int five",
    "!!float x",
    "!!binary aGk=",
    "!!set {a}",
    "!!python/name:os.system",
    "trn3",
    "trn9",
    "TRN3",
    "air",
    "liquid",
    "pcie6-320",
    "|\n  block text",
    ">-\n  folded",
    "&anchor 5",
    "*nowhere",
]
NUMBERS = [
    ".nan",
    ".NaN",
    ".inf",
    "-.inf",
    "+.inf",
    ".Inf",
    "1e308",
    "1e309",
    "-1e308",
    "1e-320",
    "5e-324",
    "-1",
    "-0.0",
    "0",
    "0.0",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551616",
    "9" * 24,
    "9" * 25,
    "1" + "0" * 400,
    "1e15",
    "1e16",
    "-1e16",
    "123456789.123456789",
    "1e-9",
    "0.0000001",
    "1_0_0",
    "+5",
    "0b101",
    "017",
    "1:30",
    "1.5e+3",
    "12e",
]
ODD_CHARS = [
    "\u202e",
    "\u202d",
    "\u2066",
    "\u200f",
    "\u200e",
    "\u200b",
    "\u200d",
    "\u2060",
    "\ufeff",
    "\u00ad",
    "\u00a0",
    "\u2007",
    "\u3000",
    "\u0085",
    "\u2028",
    "\u2029",
    "\u0301",
    "\u0338",
    "\ufffd",
    "\ufffe",
    "\uffff",
    "\ue000",
    "\U0001f600",
    "\U0010ffff",
    "\U000e0001",
    "\u0130",
    "\u00df",
    "\ufb01",
    "\uff11\uff12",
    "\u0661\u0660\u0660",
    "\u05e9\u05dc\u05d5\u05dd",
    "\u0645\u0631\u062d\u0628\u0627",
    "\u4e2d\u6587",
    "\u00e9",
    "e\u0301",
    "\x01",
    "\x07",
    "\x08",
    "\x0b",
    "\x0c",
    "\x0e",
    "\x1b",
    "\x1f",
    "\x7f",
    "\x80",
    "\x9b",
    "\x9f",
    "\t",
    "\r",
    "\r\n",
    "\\",
    "'",
    '"',
    "#",
    ": ",
    "- ",
    "&",
    "*",
    "!",
    "%",
    "@",
    "`",
    "|",
    ">",
    "{",
    "}",
    "[",
    "]",
    ",",
    "?",
]
ODD_TEXT = st.one_of(
    st.sampled_from(ODD_CHARS),
    st.lists(st.sampled_from(ODD_CHARS), min_size=2, max_size=5).map("".join),
    # Any valid UTF-8 text: no surrogates (they cannot be encoded), no NUL (binary: its own test).
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1, max_size=6),
)


def _number_text(draw: st.DrawFn) -> str:
    return draw(
        st.one_of(
            st.sampled_from(NUMBERS),
            st.floats(allow_nan=True, allow_infinity=True).map(repr),
            st.integers(min_value=-(2**80), max_value=2**80).map(str),
            st.floats(min_value=-1e6, max_value=1e6).map(lambda f: f"{f:.3g}"),
        )
    )


def _nested(draw: st.DrawFn) -> str:
    depth = draw(st.one_of(st.integers(1, 8), st.integers(60, 70), st.integers(100, 400)))
    inner = draw(st.sampled_from(["1", "x", "{}", "[]", ".nan"]))
    style = draw(st.sampled_from(["seq", "map", "mixed"]))
    if style == "seq":
        return "[" * depth + inner + "]" * depth
    if style == "map":
        return "{a: " * depth + inner + "}" * depth
    return (
        "".join("[" if i % 2 else "{k: " for i in range(depth))
        + inner
        + "".join("]" if i % 2 else "}" for i in reversed(range(depth)))
    )


class Edit:
    """One text edit of one file: replace `start`..`end` with `text`."""

    __slots__ = ("start", "end", "text", "label")

    def __init__(self, start: int, end: int, text: str, label: str):
        self.start, self.end, self.text, self.label = start, end, text, label


def _pick(
    draw: st.DrawFn, name: str, kinds: tuple[str, ...], pred: Callable[[Spot], bool] = lambda s: True
) -> Spot:
    choices = [s for s in SPOTS[name] if s.kind in kinds and pred(s)]
    return draw(st.sampled_from(choices))


def _edit(draw: st.DrawFn, name: str, op: str) -> Edit:
    text = SEEDS[name]
    if op == "swap":
        spot = _pick(draw, name, ("scalar", "collection"), lambda s: s.depth > 0)
        new = draw(st.sampled_from(TYPED))
        if spot.kind == "collection" and not spot.flow:
            # A block collection ends where the next key starts: keep that key's indentation.
            indent = spot.end - (text.rfind("\n", 0, spot.end) + 1)
            new = new.replace("\n", " ") + "\n" + " " * indent
        elif spot.flow:
            new = new.replace("\n", " ")
        return Edit(
            spot.start, spot.end, new, f"swap {spot.kind} for {new.split()[0] if new.split() else new!r}"
        )
    if op == "number":
        spot = _pick(draw, name, ("scalar",), lambda s: s.numeric)
        return Edit(spot.start, spot.end, _number_text(draw), "number")
    if op == "delete":
        spot = _pick(draw, name, ("entry", "item"))
        if spot.flow:
            end = spot.end
            while end < len(text) and text[end] in ", ":
                end += 1
            return Edit(spot.start, end, "", f"delete flow {spot.kind}")
        start, end = _line_span(text, spot.start, spot.end)
        if spot.kind == "item":
            start = text.rfind("-", 0, spot.start)
            start = text.rfind("\n", 0, start) + 1
        return Edit(start, end, "", f"delete {spot.kind} at depth {spot.depth}")
    if op == "duplicate":
        spot = _pick(draw, name, ("entry",))
        if spot.flow:
            return Edit(spot.end, spot.end, ", " + text[spot.start : spot.end], "duplicate flow key")
        start, end = _line_span(text, spot.start, spot.end)
        return Edit(
            end,
            end,
            text[start:end] if text[start:end].endswith("\n") else "\n" + text[start:end],
            f"duplicate key at depth {spot.depth}",
        )
    if op == "rename":
        spot = _pick(draw, name, ("key",))
        old = text[spot.start : spot.end]
        new = draw(
            st.one_of(
                st.sampled_from(
                    [
                        old + "s",
                        old[:-1],
                        old.upper(),
                        old.replace("_", "-"),
                        "<<",
                        "''",
                        "'a b'",
                        "chips",
                        "tdp_w",
                        "sources",
                        "x" * 600,
                        "1",
                        "null",
                        "yes",
                        "2026-01-01",
                    ]
                ),
                ODD_TEXT.map(lambda t: old + t),
            )
        )
        return Edit(spot.start, spot.end, new, "rename key")
    if op == "nest":
        spot = _pick(draw, name, ("scalar",), lambda s: s.depth > 0)
        return Edit(spot.start, spot.end, _nested(draw), "deep nesting")
    if op == "unicode":
        spot = _pick(draw, name, ("scalar", "key"), lambda s: s.end > s.start)
        at = draw(st.integers(spot.start, spot.end))
        return Edit(at, at, draw(ODD_TEXT), f"odd unicode in a {spot.kind}")
    if op == "indent":
        spot = _pick(draw, name, ("key",), lambda s: not s.flow)
        line = text.rfind("\n", 0, spot.start) + 1
        return Edit(line, line, draw(st.sampled_from([" ", "  ", "\t", " \t"])), "indentation")
    raise AssertionError(op)


def _apply(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits from the end backwards (overlapping ones are dropped)."""
    done_from = len(text) + 1
    for e in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        if e.end > done_from:
            continue
        text = text[: e.start] + e.text + text[e.end :]
        done_from = e.start
    return text


OPS = ("swap", "number", "delete", "duplicate", "rename", "nest", "unicode", "indent")


@st.composite
def edited_specs(draw: st.DrawFn, ops: tuple[str, ...] = OPS) -> dict[str, bytes]:
    """The shipped specs with one or two files edited 1-3 times each."""
    files = {name: text.encode("utf-8") for name, text in SEEDS.items()}
    names = [draw(st.sampled_from(sorted(SEEDS)))]
    if draw(st.integers(0, 3)) == 0:  # a quarter of the cases edit a second file too
        names.append(draw(st.sampled_from(sorted(set(SEEDS) - set(names)))))
    for name in names:
        edits = [_edit(draw, name, draw(st.sampled_from(ops))) for _ in range(draw(st.integers(1, 3)))]
        for e in edits:
            event(e.label)
        files[name] = _apply(SEEDS[name], edits).encode("utf-8")
    return files


@st.composite
def truncated_specs(draw: st.DrawFn) -> dict[str, bytes]:
    """One file cut at a random byte; often after odd Unicode was put in it, so cuts land mid-character."""
    files = {name: text.encode("utf-8") for name, text in SEEDS.items()}
    name = draw(st.sampled_from(sorted(SEEDS)))
    text = SEEDS[name]
    if draw(st.booleans()):
        spot = _pick(draw, name, ("scalar",), lambda s: not s.numeric and s.end > s.start)
        wide = draw(st.sampled_from(["\u00e9", "\u4e2d\u6587", "\U0001f600", "\u20ac\u00e9\U0001f680"]))
        at = draw(st.integers(spot.start, spot.end))
        text = text[:at] + wide + text[at:]
        raw = text.encode("utf-8")
        wide_at = len(text[:at].encode("utf-8"))
        cut = draw(
            st.one_of(st.integers(wide_at, wide_at + len(wide.encode("utf-8"))), st.integers(0, len(raw)))
        )
    else:
        raw = text.encode("utf-8")
        cut = draw(st.integers(0, len(raw)))
    tail = draw(st.sampled_from([b""] * 5 + [b"\n", b"\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\x80"]))
    files[name] = raw[:cut] + tail
    try:
        (raw[:cut] + tail).decode("utf-8")
        event("cut: valid UTF-8")
    except UnicodeDecodeError:
        event("cut: mid-character or invalid byte")
    return files


@st.composite
def overwritten_specs(draw: st.DrawFn) -> dict[str, bytes]:
    """One file with a few bytes overwritten or inserted (NUL-free: a NUL makes it binary, tested apart)."""
    files = {name: text.encode("utf-8") for name, text in SEEDS.items()}
    name = draw(st.sampled_from(sorted(SEEDS)))
    raw = bytearray(files[name])
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(raw)))
        junk = draw(st.binary(min_size=1, max_size=4)).replace(b"\0", b"\x01")
        if draw(st.booleans()):
            raw[at : at + len(junk)] = junk
        else:
            raw[at:at] = junk
    files[name] = bytes(raw)
    return files


# --- running a case --------------------------------------------------------------------------------------

_PARSED: dict[str, bytes] = {}
_real_read_yaml = read_yaml


def _read_yaml_reusing_seeds(path: str | Path, *, display: str | None = None, **limits: Any) -> Any:
    """`read_yaml`, but an unchanged seed file's parse is reused (a copy), not redone: the same result
    (a seed parses without problems, so nothing in it names the file), five times faster."""
    name = Path(path).name
    if limits or name not in SEEDS or not Path(path).is_file() or Path(path).read_bytes() != SEEDS_RAW[name]:
        return _real_read_yaml(path, display=display, **limits)
    if name not in _PARSED:
        doc = _real_read_yaml(path, display=display)
        assert not doc.problems
        _PARSED[name] = pickle.dumps(doc, protocol=pickle.HIGHEST_PROTOCOL)
    return pickle.loads(_PARSED[name])  # a fresh copy, ten times faster than copy.deepcopy


@contextmanager
def spec_dir(files: dict[str, bytes]) -> Iterator[Path]:
    with (
        tempfile.TemporaryDirectory(prefix="fuzz-") as tmp,
        mock.patch.object(trnplan.specs.load, "read_yaml", _read_yaml_reusing_seeds),
    ):
        directory = Path(tmp)
        for name, raw in files.items():
            (directory / name).write_bytes(raw)
        yield directory


# Messages of the loader's last-resort handlers: seeing one means a case escaped the real checks.
CATCH_ALL = ("cannot validate this", "YAML: cannot read this text", "unexpected YAML node")
FATAL = ("YAML syntax", "character U+", "not UTF-8", "nesting deeper", "more than", "this value expands")
FILE_LEVEL = (
    "file is ",
    "cannot read",
    "not a regular file",
    "broken symlink",
    "symlink loop",
    "is a directory",
)


def assert_located(problem: Problem, directory: Path, files: dict[str, bytes]) -> None:
    """A problem names a spec file of the case (or the directory); inside a file, a line and a column that
    exist in it; and it is one line of visible text with no sign of an internal failure."""
    assert problem.message.strip(), problem
    text = str(problem)
    assert "\n" not in text and "\r" not in text and text.isprintable(), repr(text)
    assert not any(phrase in problem.message for phrase in CATCH_ALL), problem
    assert "Traceback" not in text and " object at 0x" not in text, problem
    if problem.file == str(directory):
        return
    name = Path(problem.file).name
    assert Path(problem.file).parent == directory and name in files, problem
    if problem.line == 0:
        assert problem.col == 0 and problem.message.startswith(FILE_LEVEL), problem
        return
    lines = files[name].decode("utf-8", errors="replace").split("\n")
    assert 1 <= problem.line <= len(lines), (problem, len(lines))
    assert 1 <= problem.col <= len(lines[problem.line - 1]) + 1, (problem, lines[problem.line - 1])


def assert_whole(catalog: Catalog) -> None:
    """A catalog that loads has every reference resolved and only finite numbers."""
    for form in catalog.forms.values():
        assert form.chip in catalog.chips and all(c in catalog.cooling for c in form.cooling)
    for scenario in catalog.scenarios.values():
        assert all(site in catalog.sites for site in scenario.sites)

    def finite(value: Any) -> None:
        if isinstance(value, float):
            assert math.isfinite(value), value
        elif isinstance(value, dict):
            for v in value.values():
                finite(v)
        elif isinstance(value, list):
            for v in value:
                finite(v)

    for kind in ("chips", "forms", "switches", "cooling", "sites", "scenarios"):
        for entity in catalog.of(kind).values():
            finite(entity.model_dump())


def check_case(files: dict[str, bytes]) -> None:
    with spec_dir(files) as directory:
        try:
            catalog = load_specs([directory])
        except SpecError as exc:
            assert exc.problems
            for problem in exc.problems:
                assert_located(problem, directory, files)
            event(
                "refused: "
                + (
                    "the file as a whole"
                    if any(p.line == 0 or p.message.startswith(FATAL) for p in exc.problems)
                    else "values, keys, references"
                )
            )
            return
    assert_whole(catalog)
    event("loaded")


# --- the properties ----------------------------------------------------------------------------------------


def test_the_seeds_load_and_every_edit_has_somewhere_to_land() -> None:
    check_case({name: text.encode("utf-8") for name, text in SEEDS.items()})
    for name in SEEDS:
        kinds = {s.kind for s in SPOTS[name]}
        assert {"scalar", "key", "entry", "collection"} <= kinds, name
        assert any(s.numeric for s in SPOTS[name]), name


@examples(2000)
@given(edited_specs(("swap", "delete", "duplicate", "rename", "indent", "number", "nest", "unicode")))
def test_edited_shipped_specs_load_or_fail_located(files: dict[str, bytes]) -> None:
    check_case(files)


@examples(800)
@given(edited_specs(("number", "nest")))
def test_absurd_numbers_and_deep_nesting_load_or_fail_located(files: dict[str, bytes]) -> None:
    check_case(files)


@examples(1000)
@given(st.one_of(edited_specs(("unicode", "rename")), overwritten_specs()))
def test_odd_unicode_and_overwritten_bytes_load_or_fail_located(files: dict[str, bytes]) -> None:
    check_case(files)


@examples(1200)
@given(truncated_specs())
def test_truncated_shipped_specs_load_or_fail_located(files: dict[str, bytes]) -> None:
    check_case(files)


@examples(300)
@given(st.one_of(edited_specs(), truncated_specs(), overwritten_specs()))
def test_validate_command_exits_0_or_3_without_a_traceback(files: dict[str, bytes]) -> None:
    """The same cases through the real command: exit 0 with a summary, or 3 with located lines and a count."""
    with spec_dir(files) as directory:
        result = run("validate", "--specs", directory, columns=200, catch_exceptions=True)
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "internal error" not in output, output
    assert result.exit_code in (EXIT_OK, EXIT_INVALID), (result.exit_code, output, result.exception)
    if result.exit_code == EXIT_OK:
        assert result.stdout.rstrip().endswith(": OK")
        event("validate: OK")
        return
    lines = result.stderr.rstrip("\n").split("\n")
    assert lines[-1].endswith(("problem found", "problems found")), lines[-1]
    assert int(lines[-1].split()[0]) == len(lines) - 1
    for line in lines[:-1]:
        assert line.startswith(str(directory)), line
    event("validate: exit 3")

"""Fuzzing sweep rows: whatever an edit, a forger, a killed sweep or a huge row does to a sweep's `--out`,
a resumed `trnplan sweep` and `trnplan report --sweep` end in a result or a refusal with an exit code from
0 to 4, never "internal error", never a traceback; and a sweep that refuses the file (or cannot start)
leaves it as it was.

Each case starts from whole rows as a sweep writes them and edits them: a field's value swapped for a
hostile one (other types, null, NaN, 1e308, +-1.7e308, 10^30, negative run numbers, text of 20,000
characters, `{"a": "xyz"}` as choices), a field deleted, a row made huge (thousands of choices or inputs),
rows duplicated or dropped, a hostile line inserted (garbage bytes, JSON nested 100,000 deep, a bare
array), the file cut at any byte (a torn last row) or bytes overwritten; up to three edits a case.

- resume: `sweep s --vary ... --out FILE` against a scheduler port nothing listens on, so that a file
  that passes every check ends in exit 2 (cannot reach it), or 0 when every run is there already, with
  nothing written; 100 cases;
- `report PLAN --sweep FILE`: exit 0 (the page written) or 3; 40 cases (a page drawn takes seconds).

Cases are drawn the same way each run (derandomized). Counts scale with TRNPLAN_FUZZ_SCALE (default 1):

    python -m pytest tests/test_sweep_fuzz.py --hypothesis-show-statistics
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import yaml
from conftest import REPO, run
from hypothesis import given, settings
from hypothesis import strategies as st

from trnplan.specs.load import inputs_digest, load_specs
from trnplan.testkit.builders import base_specs
from trnplan.testkit.fuzzing import event, examples

pytest.importorskip("distributed")
pytest.importorskip("matplotlib", reason='the report needs the extra: pip install "trnplan[report]"')

GRID = ["--vary", "chips.x.unit_usd=5000,15000", "--vary", "sites.*.electricity_usd_per_kwh=0.05:0.2:2"]
SETS = [{"chips.x.unit_usd": u, "sites.*.electricity_usd_per_kwh": e}
        for u in (5000, 15000) for e in (0.05, 0.2)]
PLAN = REPO / "plans" / "trn3-100k.yaml"
HOSTILE = [None, True, False, "abc", "", "x" * 20_000, 1e308, -1.7e308, 1.7e308, 10**30, -1, 0, 2**63, 1.5,
           float("nan"), float("inf"), [], {}, [1], ["a", 1], {"a": "xyz"}, {"a": [1]}, {"a": ["x"] * 3},
           {"": None}, "optimal", "failed", "0" * 64]
FIELDS = ["run", "set", "status", "tco_usd", "capex_usd", "objective", "choices", "scenario",
          "base_inputs_digest", "message", "effective_fp8_pflops"]
LINES = [b"\x00\xff\xfe garbage", b"{", b"[]", b"null", b"[" * 100_000 + b"]" * 100_000, b'{"run": 1}',
         b"\xef\xbb\xbf{}", b'{"run": 1e400, "set": {}}', b"   "]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """The tiny world (a second site b) and the four rows its grid's sweep writes, figures made up."""
    folder = tmp_path_factory.mktemp("sweep-fuzz") / "specs"
    folder.mkdir()
    data = base_specs()
    data["sites"]["b"] = {**data["sites"]["a"], "electricity_usd_per_kwh": 0.3, "cooling": ["air"]}
    data["scenarios"]["s"]["sites"] = ["a", "b"]
    (folder / "world.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    digest = inputs_digest(load_specs([folder]), "s")
    rows = [{"run": n, "set": values, "status": "optimal", "tco_usd": 1e9 + n, "capex_usd": 5e8,
             "objective": 1e9 + n, "choices": {"a": ["liq16/liquid/sw/so"]}, "scenario": "s",
             "base_inputs_digest": digest} for n, values in enumerate(SETS)]
    return folder, rows


@st.composite
def edited(draw: st.DrawFn, rows: list[dict]) -> bytes:
    """The rows as a sweep writes them, edited (see the module docstring)."""
    rows = [dict(r) for r in rows]
    lines: list[bytes] | None = None
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["value", "delete", "huge", "rows", "line", "cut", "bytes"]))
        event(kind)
        if kind in ("value", "delete", "huge", "rows") and lines is None and rows:
            i = draw(st.integers(0, len(rows) - 1))
            if kind == "value":
                rows[i][draw(st.sampled_from(FIELDS))] = draw(st.sampled_from(HOSTILE))
            elif kind == "delete":
                rows[i].pop(draw(st.sampled_from(FIELDS)), None)
            elif kind == "huge":
                n = draw(st.sampled_from([1_000, 10_001, 20_000]))
                if draw(st.booleans()):
                    rows[i]["choices"] = {"a": [f"f{k}/l/u/s" for k in range(n)]}
                else:
                    rows[i]["set"] = {f"chips.c{k}.unit_usd": k for k in range(n // 10)}
            elif draw(st.booleans()):
                rows.append(dict(rows[i]))
            else:
                rows.pop(i)
            continue
        if lines is None:
            lines = [json.dumps(r, sort_keys=True).encode() + b"\n" for r in rows]
        text = b"".join(lines)
        if kind == "line":
            lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(LINES)) + b"\n")
        elif kind == "cut" and text:
            lines = [text[:draw(st.integers(0, len(text) - 1))]]
        elif kind == "bytes" and text:
            at = draw(st.integers(0, len(text) - 1))
            lines = [text[:at] + draw(st.binary(min_size=1, max_size=4)) + text[at + 4:]]
    if lines is None:
        lines = [json.dumps(r, sort_keys=True).encode() + b"\n" for r in rows]
    return b"".join(lines)


def assert_no_crash(result, allowed: set[int]) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in allowed, (result.exit_code, result.output)
    assert "internal error" not in result.output and "Traceback" not in result.output, result.output


@settings(examples(100), derandomize=True)
@given(data=st.data())
def test_resume_takes_only_rows_of_this_sweep(world, tmp_path_factory, data):
    specs, rows = world
    text = data.draw(edited(rows))
    out = tmp_path_factory.mktemp("resume") / "rows.jsonl"
    out.write_bytes(text)
    result = run("sweep", "s", "--specs", str(specs), *GRID, "--scheduler", f"tcp://127.0.0.1:{closed_port()}",
                 "--connect-timeout", "0.1", "--out", str(out), catch_exceptions=True)
    assert_no_crash(result, {0, 2, 3})  # 0: every run there already, nothing to solve
    event(f"exit {result.exit_code}")
    assert out.read_bytes() == text  # refused, or the cluster never answered: nothing written


@settings(examples(40), derandomize=True)
@given(data=st.data())
def test_report_takes_only_sweep_rows(world, tmp_path_factory, data):
    _, rows = world
    text = data.draw(edited([{k: v for k, v in r.items() if k not in ("scenario", "base_inputs_digest")}
                             for r in rows]))
    folder = tmp_path_factory.mktemp("report")
    (folder / "runs.jsonl").write_bytes(text)
    result = run("report", str(PLAN), "--sweep", str(folder / "runs.jsonl"), "--out", str(folder / "r.html"),
                 catch_exceptions=True)
    assert_no_crash(result, {0, 3})
    event(f"exit {result.exit_code}")
    assert (folder / "r.html").exists() == (result.exit_code == 0)

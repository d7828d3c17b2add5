"""Hostile text from specs in what trnplan writes: CSV a spreadsheet would run, Markdown that breaks out of
a pull-request comment's table, escape sequences a terminal obeys, labels matplotlib reads as maths; and
hostile numbers and paths on the way out (a cost of capital of 5e-324, a full disk, `--set` keys).

The reproductions use the fixture specs (`trn3-10k`), one form's `rack_bom` made hostile and the chip
renamed, solved once for the module.
"""

from __future__ import annotations

import csv
import io
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURES, TERMINAL, run
from test_terminal import in_pty_bytes

from trnplan.safetext import FORMULA_LEADS

BREAKOUT_ITEM = (
    "tray\r</details>\r\r**Guardrails breached:** none.\r\r![x](https://evil.example/x.png) "
    "[click](https://evil.example) @acme/team <img src=x>"
)
"""A CR ends a Markdown table row (and the `<details>` block): what follows it showed at the top level."""
ESCAPES_ITEM = "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ \x1b[2J\x1b]0;owned\x07 \x9b31m"
"""An OSC 8 link, a screen clear, a window title, a BEL and a one-byte CSI."""
FORMULA_NAME = '=HYPERLINK("https://x/?"&A1,"Trainium3")'
HOSTILE_ITEMS = (BREAKOUT_ITEM, ESCAPES_ITEM, "+1+cmd", "-2+3", "@SUM(A1:A9)", "\t=1", "\r=1")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with `specs/` (the fixture specs, the form's rack_bom carrying HOSTILE_ITEMS, the chip
    named FORMULA_NAME), its plan `plan.yaml`, and `base.yaml`, the fixture specs' own plan."""
    root = tmp_path_factory.mktemp("hostile-out")
    specs = root / "specs"
    shutil.copytree(FIXTURES / "tiny_specs", specs)
    forms = yaml.safe_load((specs / "forms.yaml").read_text())
    form = next(iter(forms["forms"].values()))
    form["rack_bom"] += [{"item": it, "qty": 1, "unit_usd": 1, "category": "power"} for it in HOSTILE_ITEMS]
    (specs / "forms.yaml").write_text(yaml.safe_dump(forms, sort_keys=False, allow_unicode=True))
    r = run("optimize", "trn3-10k", "--specs", specs, "--set", f"chips.trn3.name={FORMULA_NAME}",
            "--out", root / "plan.yaml")
    assert r.exit_code == 0, r.output
    r = run("optimize", "trn3-10k", "--specs", FIXTURES / "tiny_specs", "--out", root / "base.yaml")
    assert r.exit_code == 0, r.output
    return root


# --- CSV ---------------------------------------------------------------------------------------------


def test_bom_csv_neutralises_formulas_and_quotes_returns(hostile: Path) -> None:
    """Every record has all its fields (a CR no longer splits one), no text cell starts a formula, the
    items read back with a quote in front, and the numbers are numbers (-2+3 is text, not a number)."""
    r = run("bom", hostile / "plan.yaml", "--format", "csv")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout, newline="")))
    assert all(None not in row and None not in row.values() for row in rows)  # no record split or short
    items = {row["item"] for row in rows}
    assert "'" + FORMULA_NAME + " (trn3)" in items
    for item in HOSTILE_ITEMS:
        shown = ("'" if item.startswith(FORMULA_LEADS) else "") + item + " (trn3-nl72x2)"
        assert shown in items
    for row in rows:
        assert not any(cell.startswith(FORMULA_LEADS) for cell in (row["site"], row["category"], row["item"]))
        assert all(float(row[k]) == float(row[k]) for k in ("quantity", "unit_usd", "extended_usd", "share"))
    # split as a spreadsheet that ends lines at CR would: still nine fields per line once quotes are honoured
    assert r.stdout.count("\r") == BREAKOUT_ITEM.count("\r") + 1


def test_tiny_cost_of_capital_plans(tmp_path: Path) -> None:
    """cost_of_capital 5e-324 (1 + r is 1): the CRF is its limit 1/n, not a ZeroDivisionError."""
    specs = FIXTURES / "tiny_specs"
    for rate in ("1e-17", "1e-300", "5e-324"):
        out = tmp_path / f"{rate}.yaml"
        r = run("optimize", "trn3-10k", "--specs", specs,
                "--set", f"scenarios.trn3-10k.cost_of_capital={rate}", "--out", out)
        assert r.exit_code == 0, r.output
        assert run("bom", out).exit_code == 0


# --- Markdown: a pull-request comment's table cannot be left -------------------------------------------

OWN_HTML = re.compile(r"<details><summary>[^<]*</summary>|</details>|<!-- trnplan-diff -->")


def _breakouts(markdown: str, cells_only: bool = True) -> list[str]:
    """What a CommonMark reading (markdown-it-py, rich's parser, with GFM tables) of `markdown` finds that
    text from a spec put there: HTML other than the comment's own `<details>` and marker, a link, an image,
    a raw `@mention`, a line end inside a cell, or `evil.example` (only in BREAKOUT_ITEM and ESCAPES_ITEM)
    outside a table cell (unless not `cells_only`). [] when the text stayed text in its cell."""
    from markdown_it import MarkdownIt

    controls = (("CR", "\r"), ("NEL", "\x85"), ("LS", "\u2028"), ("ESC", "\x1b"))
    found = [f"raw {name}" for name, ch in controls if ch in markdown]
    depth = 0
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        depth += {"table_open": 1, "table_close": -1}.get(token.type, 0)
        if token.type == "html_block" and OWN_HTML.sub("", token.content).strip():
            found.append(f"HTML block {token.content!r}")
        children = token.children or []
        for child in children:
            if child.type in ("html_inline", "link_open", "image") and not OWN_HTML.fullmatch(child.content):
                found.append(f"{child.type} {child.content or child.attrs!r}")
            if child.type in ("softbreak", "hardbreak") and depth:
                found.append("a line break in a cell")
            if child.type == "text" and re.search(r"@[A-Za-z]", child.content):
                found.append(f"a mention in {child.content!r}")
        if token.type == "inline" and "evil.example" in token.content and not depth and cells_only:
            found.append(f"spec text outside a table: {token.content!r}")
    return found


def test_markdown_of_a_hostile_plan_stays_in_its_cells(hostile: Path) -> None:
    """The reproduction: a CR in a form's `rack_bom` item ended the BOM table and the `<details>` block,
    then showed a forged `**Guardrails breached:** none.`, a remote image, a link and a team @mention at
    the top level. In the BOM's and the diff's Markdown and the pull-request comment, it stays in its
    cell: no HTML, link, image or mention of its own, no line end (the CR shows as `\\r`)."""
    from trnplan.bom import bom_to_markdown, build_bom
    from trnplan.diff import ScenarioDiff, comment_body, diff_plans, diff_to_markdown
    from trnplan.plan import read_plan

    base, head = read_plan(hostile / "base.yaml"), read_plan(hostile / "plan.yaml")
    d = diff_plans(base, head, "HEAD~1:plans/trn3-10k.yaml", "plans/trn3-10k.yaml")
    outputs = {
        "bom": bom_to_markdown(build_bom(head)),
        "diff": diff_to_markdown(d),
        "comment": comment_body([ScenarioDiff("trn3-10k.yaml", d, True, True)], "main"),
        "cli bom": run("bom", hostile / "plan.yaml", "--format", "markdown").stdout,
        "cli diff": run("diff", hostile / "base.yaml", hostile / "plan.yaml", "--format", "markdown").stdout,
    }
    for name, text in outputs.items():
        assert "evil.example" in text, name
        assert _breakouts(text) == [], name
        assert r"\\r\\r\*\*Guardrails breached:\*\* none." in text, name  # shown, as text
        assert not re.search(r"^\*\*Guardrails breached", text, re.M), name


def test_markdown_cells_and_code_spans() -> None:
    """`md_text` escapes what Markdown, GFM and GitHub read (an `_` inside a word is left); `md_code`
    shows anything literally, fenced past its backquotes."""
    from trnplan.safetext import md_code, md_text

    assert md_text("scale_up") == "scale_up"
    hostile = "_x_ *y* <b> [a](b) ![i](j) | `c` ~~s~~ &amp; $x$ #1 \\"
    assert md_text(hostile) == (
        r"\_x\_ \*y\* \<b\> \[a\](b) \!\[i\](j) \| \`c\` \~\~s\~\~ \&amp; \$x\$ \#1 \\")
    assert md_text("@acme/team a@b.c") == "@&#8203;acme/team a@&#8203;b.c"
    assert md_text("a\rb\nc\u202ed") == "a\\\\rb\\\\nc\\\\u202ed"
    assert md_code("a`b") == "``a`b``" and md_code("`x") == "`` `x ``"
    assert md_code("a|b", in_table=True) == "`a\\|b`"
    for text in ("x</details>", "@acme", "[l](u)", "a\rb", "`x``"):
        assert _breakouts(f"| a |\n|---|\n| {md_code(text, in_table=True)} |\n") == []
        assert _breakouts(f"| a |\n|---|\n| {md_text(text)} |\n") == []


def test_sweep_markdown_escapes_rows_text() -> None:
    """The sweep's Markdown: a site, a choice, a status and a `set` path from (forged) rows stay text."""
    from trnplan.sweep.report import summary_to_markdown

    evil = BREAKOUT_ITEM
    bar = {"path": evil, "low": 1, "high": 2, "tco_low_usd": 1.0, "tco_high_usd": 2.0, "swing_usd": 1.0}
    summary = {"scenario": evil, "runs": 1, "finished": 1, "status": {evil: 1}, "objective_kind": evil,
               "objective": None, "tco_usd": None,
               "choices": {evil: [{"choice": evil, "runs": 1, "share": 1.0}]},
               "tornado": {"method": "one at a time", "inputs": [bar]}}
    text = summary_to_markdown(summary)
    assert _breakouts(text, cells_only=False) == []
    assert "\r" not in text and not re.search(r"(?<!\\)<img", text)


# --- terminals ---------------------------------------------------------------------------------------

TRNPLAN = Path(sys.executable).with_name("trnplan")
TERMINAL_COMMANDS = [
    ("bom", "plan.yaml", "--format", "csv"),
    ("bom", "plan.yaml", "--format", "markdown"),
    ("bom", "plan.yaml", "--format", "json"),
    ("bom", "plan.yaml"),
    ("diff", "base.yaml", "plan.yaml", "--format", "markdown"),
    ("diff", "base.yaml", "plan.yaml"),
]


@TERMINAL
@pytest.mark.skipif(os.name != "posix" or not TRNPLAN.exists(), reason="the installed trnplan in a pty")
@pytest.mark.parametrize("args", TERMINAL_COMMANDS, ids=" ".join)
def test_no_escape_sequence_from_a_spec_reaches_a_terminal(hostile: Path, args: tuple[str, ...]) -> None:
    """An OSC 8 link, a screen clear, a window title, a BEL, a one-byte CSI and a CR from a BOM item reach
    the terminal as visible escapes (`\\x1b]8;;`), in every format; nothing writes ESC but rich's styles
    (colour, bold: `ESC[1m`), which are no spec's."""
    code, raw = in_pty_bytes(list(args), 120, hostile)
    assert code in (0, 1), raw.decode(errors="replace")
    assert b"evil.example" in raw
    for sequence in (b"\x1b]", b"\x1b[2J", b"\x07", b"\xc2\x9b"):
        assert sequence not in raw
    assert b"\x1b" not in re.sub(rb"\x1b\[[0-9;]*m", b"", raw)
    assert b"owned" in raw


def test_a_pipe_gets_the_data_as_it_is(hostile: Path) -> None:
    """To a pipe or a file, CSV carries the spec's characters exactly (a program reads it, not a
    terminal): click no longer drops the CSI sequences (`ESC[2J`) and keeps the rest."""
    csv_text = run("bom", hostile / "plan.yaml", "--format", "csv").stdout
    assert ESCAPES_ITEM + " (trn3-nl72x2)" in csv_text


# --- `--set` keys ------------------------------------------------------------------------------------


def test_set_a_field_named_key_in_brackets() -> None:
    """`--set 'chips.trn3.[key]=1'` was `internal error: IndexError`: an unknown field, located, exit 3."""
    r = run("validate", "--specs", FIXTURES / "tiny_specs", "--set", "chips.trn3.[key]=1")
    assert r.exit_code == 3
    assert "--set:1:18: chips.trn3.[key]: unknown field '[key]'" in r.stderr
    assert "internal error" not in r.output


# --- write errors ------------------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/full").exists() or not TRNPLAN.exists(), reason="/dev/full, trnplan")
@pytest.mark.parametrize("args", [("bom", "plan.yaml"), ("bom", "plan.yaml", "--format", "csv"),
                                  ("bom", "plan.yaml", "--format", "json"), ("show", "chips"),
                                  ("diff", "base.yaml", "plan.yaml", "--format", "markdown")], ids=" ".join)
def test_a_full_disk_under_stdout_is_an_io_error(hostile: Path, args: tuple[str, ...]) -> None:
    """`> /dev/full` (every write: no space left) was `internal error: OSError`: exit 3 naming where
    stdout goes and why, and nothing more said when Python exits (the buffered text is not retried)."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run([str(TRNPLAN), *args], stdout=full, stderr=subprocess.PIPE, text=True,
                              cwd=hostile, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr == "error: cannot write the output to /dev/full (stdout): No space left on device\n"


@pytest.mark.skipif(not TRNPLAN.exists(), reason="the installed trnplan")
def test_a_closed_pipe_ends_quietly(hostile: Path) -> None:
    """A reader that left (`| head -0`) was `internal error: BrokenPipeError`: exit 3, nothing said."""
    proc = subprocess.Popen([str(TRNPLAN), "bom", "plan.yaml", "--format", "csv"], cwd=hostile,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    assert proc.wait(timeout=120) == 3
    assert proc.stderr.read() == b""


def test_a_sweep_on_a_full_disk_is_an_io_error(hostile: Path, tmp_path: Path, dask_address: str) -> None:
    """Rows onto a disk that fills (a file size limit of 800 bytes: a row is ~350) were `internal error`:
    exit 3 naming the file and the reason; the whole rows written stay, and a later run resumes."""
    out = tmp_path / "rows.jsonl"
    args = [str(TRNPLAN), "sweep", "trn3-10k", "--specs", str(FIXTURES / "tiny_specs"),
            "--vary", "chips.trn3.unit_usd=5000:9000:4", "--scheduler", dask_address, "--out", str(out)]

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (800, 800))

    proc = subprocess.run(args, capture_output=True, text=True, timeout=300,
                          preexec_fn=limit)
    assert proc.returncode == 3, proc.stderr
    assert f"error: {out}: cannot write the sweep's rows: File too large" in proc.stderr
    assert "internal error" not in proc.stderr
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert len(out.read_text().splitlines()) == 4

"""Tables fit 80 and 120 columns with every id and number whole (in-process, `COLUMNS` set as a terminal's
width sets it); the installed `trnplan` in a real pseudo-terminal: progress shows while a long search runs,
Ctrl-C there shows the best plan found so far (piped, Ctrl-C just stops: tests/test_kill_interrupt.py), and
messages wrap at the terminal's width.

Each terminal run forks a pty (python's `pty`), sets its window size with TIOCSWINSZ and leaves COLUMNS
unset, so the width comes from the terminal as it does for a user. Output is read back with the escape
codes removed. The token check: every whitespace-separated word of the same command printed 250 columns
wide (nothing wraps there) must appear as a whole word at the narrow width, so no id or number was cut,
folded or ellipsized; and no line may be wider than the terminal.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
import yaml
from conftest import TERMINAL, hidden_words, run
from rich.cells import cell_len
from rich.console import RenderableType

from trnplan.bom import build_bom
from trnplan.diff import diff_plans
from trnplan.numbers import fmt
from trnplan.plan import read_plan
from trnplan.render import render_bom, render_catalog, render_diff, render_plan
from trnplan.specs.load import load_specs
from trnplan.testkit.portfolio import write_portfolio

REPO = Path(__file__).resolve().parents[1]
TRNPLAN = Path(sys.executable).with_name("trnplan")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
RULE = re.compile(r"^[─━═\-\s]+$")

T = TypeVar("T")


def installed(test: T) -> T:
    """A test that runs the installed command (in a pseudo-terminal, or piped): POSIX, the command beside
    this python, and in the xdist group of the terminal tests."""
    for mark in (
        pytest.mark.skipif(os.name != "posix", reason="POSIX pseudo-terminals"),
        pytest.mark.skipif(not TRNPLAN.exists(), reason="trnplan is not installed beside this python"),
        TERMINAL,
    ):
        test = mark(test)
    return test


def in_pty(args: list[str], cols: int, cwd: Path, interrupt_when: str | None = None,
           timeout: float = 300) -> tuple[int, str]:
    """Run the installed trnplan in a pty `cols` wide; SIGINT it once `interrupt_when` has been printed.
    Returns the exit code and what the terminal shows (stdout and stderr both go to it; see `screen`)."""
    code, raw = in_pty_raw(args, cols, cwd, interrupt_when, timeout)
    return code, screen(raw)


def in_pty_raw(args: list[str], cols: int, cwd: Path, interrupt_when: str | None = None,
               timeout: float = 300) -> tuple[int, str]:
    """`in_pty`, with the output as written: every progress line, escapes removed."""
    code, raw = in_pty_bytes(args, cols, cwd, interrupt_when, timeout)
    return code, ANSI.sub("", raw.decode(errors="replace"))


def in_pty_bytes(args: list[str], cols: int, cwd: Path, interrupt_when: str | None = None,
                 timeout: float = 300) -> tuple[int, bytes]:
    """`in_pty`, with the bytes the terminal got, escapes and all."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "TERM")}
    env["TERM"] = "xterm-256color"
    pid, fd = pty.fork()
    if pid == 0:  # the child: its terminal gets the size before anything reads it
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
        os.chdir(cwd)
        os.execve(str(TRNPLAN), [str(TRNPLAN), *args], env)
    raw = b""
    deadline = time.monotonic() + timeout
    sent = False
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            raw += chunk
        if interrupt_when and not sent and interrupt_when in ANSI.sub("", raw.decode(errors="replace")):
            time.sleep(0.3)
            os.kill(pid, signal.SIGINT)
            sent = True
    else:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), raw


def screen(text: str) -> str:
    """What the terminal shows: escapes removed, and a carriage return going back to the line's start (a
    progress line rewritten in place leaves only its last text, or nothing once it is cleared)."""
    lines = []
    for line in ANSI.sub("", text).split("\n"):
        lines.append(line.rstrip("\r").rsplit("\r", 1)[-1])
    return "\n".join(lines)


def words(text: str) -> set[str]:
    return {w for line in text.splitlines() if not RULE.match(line) for w in line.split()}


def assert_fits(text: str, cols: int) -> None:
    wide = [line for line in text.splitlines() if cell_len(line) > cols]
    assert not wide, f"{len(wide)} lines wider than {cols}: {wide[:3]}"


def plan_tokens(plan_file: Path) -> set[str]:
    """Every id and number of a plan as the tables print them: sites, forms, coolings, switches, and the
    figures of each deployment, each site's fabric and the totals."""
    plan = read_plan(plan_file)
    tokens = set()
    for site_id, s in plan.sites.items():
        f = s.scale_out
        tokens |= {site_id, f.switch, fmt(f.ports, "int"), fmt(f.switches, "int"), fmt(f.optics, "int"),
                   fmt(f.capex_usd, "usd")}
        for d in s.deployments:
            tokens |= {d.form, d.cooling, d.scale_up_switch, fmt(d.units, "int"), fmt(d.racks, "int"),
                       fmt(d.chips, "int"), fmt(d.capex_usd, "usd")}
    t = plan.totals
    tokens |= {fmt(t.capex_usd, "usd"), fmt(t.tco_usd, "usd"), fmt(t.opex_usd_per_year, "usd")}
    for alt in plan.alternatives:
        if alt.tco_usd is not None:
            tokens.add(fmt(alt.tco_usd, "usd"))
    return tokens


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder with the shipped specs and plans (copied, so nothing in the repository changes)."""
    root = tmp_path_factory.mktemp("shipped")
    for folder in ("specs", "plans"):
        (root / folder).mkdir()
        for path in (REPO / folder).glob("*.yaml"):
            (root / folder / path.name).write_bytes(path.read_bytes())
    return root


@pytest.fixture(scope="module")
def printed(shipped: Path) -> Callable[[str, int], tuple[int, str]]:
    """`printed(name, cols)`: the exit code and output (stdout, then stderr) of `COMMANDS[name]` run
    in-process in `shipped` at `cols` columns, each (name, cols) run once."""
    seen: dict[tuple[str, int], tuple[int, str]] = {}

    def get(name: str, cols: int) -> tuple[int, str]:
        if (name, cols) not in seen:
            with contextlib.chdir(shipped):
                result = run(*COMMANDS[name], columns=cols)
            seen[name, cols] = result.exit_code, result.stdout + result.stderr
        return seen[name, cols]

    return get


COMMANDS = {
    "optimize": ["optimize", "trn3-100k", "--out", "out/trn3-100k.yaml"],
    "bom": ["bom", "plans/trn3-100k.yaml"],
    "diff": ["diff", "plans/trn3-100k.yaml", "plans/moe-144.yaml"],
    **{f"show {k}": ["show", k] for k in ("chips", "forms", "switches", "cooling", "sites", "scenarios")},
}


def tables_of(name: str, shipped: Path) -> RenderableType:
    """What `COMMANDS[name]` prints, built in-process: to know which words its narrowed columns hold."""
    plan = read_plan(shipped / "plans" / "trn3-100k.yaml")
    if name == "optimize":
        return render_plan(read_plan(shipped / "out" / "trn3-100k.yaml"))
    if name == "bom":
        return render_bom(build_bom(plan))
    if name == "diff":
        return render_diff(diff_plans(plan, read_plan(shipped / "plans" / "moe-144.yaml")))
    return render_catalog(name.removeprefix("show "), load_specs([shipped / "specs"]))


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_tables_fit_the_terminal_with_every_word_whole(
    name: str, cols: int, shipped: Path, printed: Callable[[str, int], tuple[int, str]]
) -> None:
    """No line wider than the terminal, and every word of a 250-column run still there whole, but for
    the columns a narrow terminal leaves out (named under their table, with `--wide`)."""
    code, text = printed(name, cols)
    assert code == 0, text[-2000:]
    assert_fits(text, cols)
    hidden = hidden_words(tables_of(name, shipped), cols)
    missing = sorted(words(printed(name, 250)[1]) - words(text) - hidden)
    assert not missing, f"cut or folded at {cols} columns: {missing[:12]}"
    assert "…" not in text


@pytest.mark.parametrize("cols", [80, 120])
def test_every_id_and_number_of_the_plan_is_printed_whole(
    cols: int, shipped: Path, printed: Callable[[str, int], tuple[int, str]]
) -> None:
    code, text = printed("optimize", cols)
    assert code == 0, text[-2000:]
    printed = words(text)
    hidden = hidden_words(tables_of("optimize", shipped), cols)
    missing = sorted(plan_tokens(shipped / "out" / "trn3-100k.yaml") - printed - hidden)
    assert not missing, f"not printed whole at {cols} columns: {missing}"


@installed
def test_a_terminal_run_writes_the_same_plan_as_a_piped_one(shipped: Path, tmp_path: Path) -> None:
    """Progress callbacks (on in a terminal) do not change the search: the same bytes as a piped run."""
    code, text = in_pty(["optimize", "trn3-100k", "--out", str(tmp_path / "tty.yaml")], 80, shipped)
    assert code == 0, text[-2000:]
    piped = subprocess.run([str(TRNPLAN), "optimize", "trn3-100k", "--out", str(tmp_path / "pipe.yaml")],
                           cwd=shipped, capture_output=True, text=True, check=False)
    assert piped.returncode == 0, piped.stderr
    assert (tmp_path / "tty.yaml").read_bytes() == (tmp_path / "pipe.yaml").read_bytes()


@installed
def test_piped_tables_have_no_trailing_spaces(shipped: Path) -> None:
    for args in (*COMMANDS.values(), ["optimize", "--help"], ["--help"]):
        out = subprocess.run([str(TRNPLAN), *args], cwd=shipped, capture_output=True, text=True, check=False)
        padded = [line for line in out.stdout.splitlines() if line != line.rstrip()]
        assert not padded, (args, padded[:3])


# --- a long search: progress, and Ctrl-C keeping the best plan ----------------------------------------


@pytest.fixture(scope="module")
def portfolio(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("portfolio")
    return root, write_portfolio(40, root / "specs")


@pytest.mark.slow
@installed
def test_ctrl_c_in_a_terminal_shows_the_best_plan_so_far_and_writes_nothing(
    portfolio: tuple[Path, str],
) -> None:
    """A 40-site portfolio runs for minutes; its progress line shows the incumbent, bound and gap, and
    Ctrl-C once an incumbent is there prints that plan, marked feasible, exit 130, no file written."""
    root, scenario = portfolio
    code, raw = in_pty_raw(["optimize", scenario], 120, root, interrupt_when="gap ")
    text = screen(raw)
    assert code != 0, "the search ended before it could be interrupted: use a bigger portfolio"
    assert code == 130, text[-3000:]
    assert re.search(rf"solving {scenario}: best \$[0-9.]+[KMBT]?, bound \$[0-9.]+[KMBT]?, gap [0-9.]+%", raw)
    assert f"Plan for {scenario}" in text
    assert re.search(r"solver +HiGHS [0-9.]+, feasible, gap [0-9.]+%", text), text[:3000]
    assert "interrupted: above is the best plan found so far" in text and "it was not written" in text
    assert not (root / "plans").exists()


@installed
def test_progress_is_not_shown_on_a_pipe(shipped: Path) -> None:
    args = ["optimize", "trn3-100k", "--out", "out/p.yaml", "--alternatives", "0"]
    proc = subprocess.run([str(TRNPLAN), *args], cwd=shipped, capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    assert "solving" not in proc.stderr and "\r" not in proc.stderr
    assert yaml.safe_load((shipped / "out" / "p.yaml").read_text())["scenario"] == "trn3-100k"


# --- messages on stderr: wrapped in a terminal, one line each elsewhere -------------------------------


@installed
def test_an_error_wraps_at_the_terminal_width_keeping_each_fix_whole(shipped: Path) -> None:
    """The infeasible explanation at 80 columns: no line wider, each wrapped line indented under its own,
    every word of the piped (unwrapped) message still there, each `--set` fix on one line."""
    args = ["optimize", "trn3-100k", "--set", "scenarios.trn3-100k.demand.chips=150000",
            "--out", "out/x.yaml"]
    code, text = in_pty(args, 80, shipped)
    assert code == 4, text[-2000:]
    assert_fits(text, 80)
    piped = subprocess.run([str(TRNPLAN), *args], cwd=shipped, capture_output=True, text=True, check=False)
    assert piped.returncode == 4
    assert max(len(line) for line in piped.stderr.splitlines()) > 80  # so there was something to wrap
    assert text.split() == piped.stderr.split()
    lines = text.splitlines()
    for fix in ("--set scenarios.trn3-100k.demand.chips=118784", "--set scenarios.trn3-100k.as_of=2026-10"):
        assert any(line.rstrip().endswith(fix) for line in lines), fix
    assert "        chips): --set scenarios.trn3-100k.demand.chips=118784" in lines


@installed
def test_spec_problems_wrap_with_each_location_first_on_its_line(shipped: Path) -> None:
    bad = REPO / "tests" / "fixtures" / "bad_specs"
    code, text = in_pty(["validate", "--specs", str(bad)], 100, shipped)
    assert code == 3, text
    piped = subprocess.run([str(TRNPLAN), "validate", "--specs", str(bad)], cwd=shipped, capture_output=True,
                           text=True, check=False)
    located = [line for line in piped.stderr.splitlines() if ".yaml:" in line]
    assert max(len(line) for line in located) > 100
    lines = text.splitlines()
    assert_fits(text, 100)
    for problem in located:
        where = ":".join(problem.split(":")[:3]) + ":"
        (first,) = [line for line in lines if line.startswith(where)]
        at = lines.index(first)
        rest = [line for line in lines[at + 1:at + 4] if line.startswith("  ")]
        shown = " ".join([first, *(line.strip() for line in rest)]).split()
        assert shown[:len(problem.split())] == problem.split()

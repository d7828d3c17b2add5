"""Status and error lines on stderr, wrapped to a terminal's width.

Only a terminal gets them wrapped: a pipe, a file or a CI log keeps one line per message, as written, so
scripts and tests can grep whole messages. Each line of a message is broken at its spaces, each wrapped
line after the first indented two more than its own (a hanging indent). What someone copies is never
broken: a leading `file:line:col:` location, a `backquoted` command, an option and its value
(`--set sites.a.it_power_mw=80`) and any text the caller names (a path) stay on one line, even where
that line is then wider than the terminal.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator

from rich.cells import cell_len
from rich.text import Text

HANG = 2
"""How much further than its first line a message line's wrapped lines are indented."""

_LOCATION = re.compile(r"(?:[a-z][a-z ()-]*: )?((?:(?!: )\S|(?<=\S) (?=\S))+?:\d+(?::\d+)?:)(?= |$)")
"""A leading location (`specs/chips.yaml:3:5:`, also after a label such as `error: `)."""
_BACKQUOTED = re.compile(r"`[^`\n]+`")
_OPTION = re.compile(r"(?<!\S)--?[A-Za-z][\w-]*( +)(?=[^\s-])")
"""An option and the space before its value: `--set x=1`, `--out FILE`."""


def message_width() -> int | None:
    """The width stderr messages are wrapped at: the terminal's (COLUMNS, where set, overrides it), or
    None when stderr is not a terminal."""
    from trnplan.render import _isatty, console

    if not _isatty(sys.stderr):
        return None
    return max(20, console(stderr=True).width)


def fit_message(text: str, keep: Iterable[str] = ()) -> str:
    """`text` wrapped for a terminal's stderr (see the module docstring); as it is elsewhere."""
    width = message_width()
    return text if width is None else wrap_message(text, width, keep)


def wrap_message(text: str, width: int, keep: Iterable[str] = ()) -> str:
    """Each line of `text` broken at its spaces into lines of at most `width` cells with a hanging
    indent; a location, a backquoted command, an option with its value and each `keep` string whole."""
    return wrap_text(Text(text), width, keep).plain


def wrap_text(text: Text, width: int, keep: Iterable[str] = ()) -> Text:
    """`wrap_message` for styled text: the styles go with the words."""
    kept = [k for k in keep if k and " " in k]
    lines = [out for line in text.split("\n", allow_blank=True) for out in _wrap_line(line, width, kept)]
    return Text("\n").join(lines)


def _wrap_line(line: Text, width: int, keep: list[str]) -> Iterator[Text]:
    plain = line.plain
    if cell_len(plain) <= width:
        yield line
        return
    indent = len(plain) - len(plain.lstrip(" "))
    words = list(_words(plain, indent, keep))
    if not words:
        yield line
        return
    current = Text(" " * indent)
    filled = False
    for start, end, space in words:
        word = line[start:end]
        room = width - cell_len(current.plain)
        if filled and cell_len(space) + cell_len(word.plain) > room:
            yield current
            current = Text(" " * (indent + HANG))
            filled = False
        if filled:
            current.append(space)
        current.append_text(word)
        filled = True
    yield current


def _words(plain: str, indent: int, keep: list[str]) -> Iterator[tuple[int, int, str]]:
    """(start, end, the spaces before it) of each unbreakable run of `plain` after its indent."""
    glued = [False] * len(plain)

    def glue(start: int, end: int) -> None:
        for i in range(start, end):
            glued[i] = True

    location = _LOCATION.match(plain, indent)
    if location:  # with the label before it: the location stays on the message's first line
        glue(location.start(), location.end(1))
    for m in _BACKQUOTED.finditer(plain):
        glue(m.start(), m.end())
    for m in _OPTION.finditer(plain):
        glue(m.start(1), m.end(1))
    for k in keep:
        at = plain.find(k)
        while at >= 0:
            glue(at, at + len(k))
            at = plain.find(k, at + len(k))
    i = indent
    space = ""
    while i < len(plain):
        if plain[i] == " " and not glued[i]:
            j = i
            while j < len(plain) and plain[j] == " " and not glued[j]:
                j += 1
            space, i = plain[i:j], j
            continue
        j = i
        while j < len(plain) and (plain[j] != " " or glued[j]):
            j += 1
        yield i, j, space
        i = j

"""PyYAML's syntax errors in plain words: what is wrong on the line, and the usual fix.

`plain_syntax("YAML syntax: mapping values are not allowed here")` says that a second `:` needs quotes.
The parser's own words stay at the end, in parentheses, for whoever knows them; a message this module does
not know is left as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFIX = "YAML syntax: "

_STARTED = r"(?: \(while [a-z -]+?(?: started at line (?P<line>\d+))?\))?"

_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern + _STARTED + r"$"), words)
    for pattern, words in (
        (r"expected ',' or '\}', but got '<stream end>'",
         "a '{{' mapping opened{at} is never closed: add the '}}'"),
        (r"expected ',' or '\]', but got '<stream end>'",
         "a '[' list opened{at} is never closed: add the ']'"),
        (r"expected ',' or '\}', but got '(?P<got>[^']*)'",
         "inside the '{{ }}' mapping opened{at}, items are separated by ',' (found '{got}')"),
        (r"expected ',' or '\]', but got '(?P<got>[^']*)'",
         "inside the '[ ]' list opened{at}, items are separated by ',' (found '{got}'); quote an item "
         "that holds a ':'"),
        (r"expected <block end>, but found '<block mapping start>'",
         "this line is indented more than the keys above it, but the line before holds a value: line "
         "the keys of one mapping up in one column, or put the value on its own lines"),
        (r"expected <block end>, but found '\?'",
         "this line mixes a key with list items ('- ...'): a list and a mapping cannot share a block"),
        (r"expected <block end>, but found '-'",
         "a list item ('- ...') where the block{at} holds keys: indent the list under its key"),
        (r"expected <block end>, but found '(?P<got>[^']*)'",
         "'{got}' does not fit the indentation of the block{at}: check the indentation and brackets"),
        (r"found character '\\t' that cannot start any token",
         "a tab: YAML indents with spaces only; replace the tab with spaces"),
        (r"found character '(?P<got>[^']*)' that cannot start any token",
         "a value cannot start with '{got}': put the value in quotes"),
        (r"mapping values are not allowed here",
         "a second ':' on this line: quote the value (key: \"a: b\") or put the key on a line of its own"),
        (r"found unexpected end of stream",
         "a quote opened{at} is never closed: add the closing quote"),
        (r"found undefined alias '(?P<got>[^']*)'",
         "'*{got}' refers to an anchor '&{got}' that is not defined; to mean a '*', quote the value"),
        (r"found unknown escape character '(?P<got>[^']*)'",
         "'\\{got}' is not an escape in a double-quoted value: use single quotes, or write '\\\\{got}'"),
        (r"expected a single document in the stream, but found another document",
         "a second document ('---'): a spec file holds one document; split it into two files"),
        (r"expected the node content, but found '<stream end>'",
         "the file ends where a value was expected"),
        (r"could not find expected ':'",
         "a key without its ':' (or an unclosed quote before it)"),
    )
)


def plain_syntax(message: str) -> str:
    """A `YAML syntax: ...` message in plain words, the parser's words kept in parentheses."""
    if not message.startswith(PREFIX):
        return message
    original = message[len(PREFIX):]
    for pattern, words in _RULES:
        match = pattern.match(original)
        if match:
            line = match.groupdict().get("line")
            fields = {"at": f" at line {line}" if line else "", "got": match.groupdict().get("got") or ""}
            return f"{PREFIX}{words.format(**fields)} (the parser: {original})"
    return message


# --- Indentation: which key is out of line, and where it belongs --------------------------------------

_KEY_LINE = re.compile(
    r"^(?P<lead> *(?:- +)*)"
    r"(?P<key>[^\s#:'\"\[\]{}|>&*!%@`-][^:#]*?|'[^']*'|\"[^\"]*\") *:(?: +(?P<rest>.*))?$"
)


@dataclass(frozen=True)
class _KeyLine:
    line: int  # 1-based
    col: int  # 0-based column where the key starts (after any '- ' of a list item)
    key: str
    holds_value: bool  # a value on the line itself, not a block under it

    def at(self) -> str:
        return f"'{self.key}' on line {self.line}"


def _key_line(lines: list[str], line: int) -> _KeyLine | None:
    if len(lines[line - 1]) > 500:  # no hand-written key line is this long; spare the regex a huge one
        return None
    match = _KEY_LINE.match(lines[line - 1].rstrip())
    if not match:
        return None
    rest = (match.group("rest") or "").strip()
    holds = bool(rest) and not rest.startswith(("#", "|", ">")) and not re.fullmatch(r"&\S+", rest)
    return _KeyLine(line, len(match.group("lead")), match.group("key").strip(), holds)


def _before(lines: list[str], line: int) -> int:
    """The 1-based number of the last line before `line` that holds more than a comment (0: none)."""
    for n in range(line - 1, 0, -1):
        text = lines[n - 1].strip()
        if text and not text.startswith("#"):
            return n
    return 0


def _parent(lines: list[str], line: int, col: int) -> _KeyLine | None:
    """The nearest key above `line` that starts left of column `col`."""
    for n in range(line - 1, 0, -1):
        found = _key_line(lines, n)
        if found and found.col < col:
            return found
    return None


def _spaces(n: int) -> str:
    return f"{n} space{'' if n == 1 else 's'}"


def _over_indented(here: _KeyLine, above: _KeyLine) -> str:
    return (
        f"'{here.key}' is {_spaces(here.col - above.col)} right of {above.at()}, which holds a value, so "
        f"YAML reads it as more of that value: start it in column {above.col + 1}, as '{above.key}'"
    )


def _dedented_between(here: _KeyLine, above: _KeyLine, parent: _KeyLine | None) -> str:
    words = f"'{here.key}' is indented less than {above.at()} (column {above.col + 1})"
    if parent is None:
        return words + f": start it in column {above.col + 1}, beside '{above.key}'"
    return (
        f"{words} and more than {parent.at()} (column {parent.col + 1}), so it belongs with neither: start "
        f"it in column {above.col + 1}, beside '{above.key}', or in column {parent.col + 1}, beside "
        f"'{parent.key}'"
    )


def _dedented_in_place(odd: _KeyLine, above: _KeyLine, below: _KeyLine) -> str:
    return (
        f"'{odd.key}' is indented less than the keys around it ({above.at()}, '{below.key}' on line "
        f"{below.line}), which ends their mapping: start it in column {above.col + 1}, as they do"
    )


def misplaced_key(text: str, line: int, col: int, problem: str) -> tuple[int, int, str] | None:
    """A syntax error that comes of a key indented a few spaces off, in words: the (line, col) of the key
    that is out of line (which may be a line above the one the parser stopped at) and the fix; None when
    the error is not that (the parser's words then go through `plain_syntax`).

    The parser stops where the text stops making sense, not where the slip is: a key one space too far
    right after `key: value` reads as more of that value ("mapping values are not allowed here"), and a
    key dedented to its parent's column closes the mapping, so the parser complains of the next line.
    """
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return None
    here = _key_line(lines, line)
    previous = _before(lines, line)
    above = _key_line(lines, previous) if previous else None
    if here is None or above is None:
        return None
    if problem.startswith("mapping values are not allowed here"):
        colon = lines[line - 1].find(":", here.col + len(here.key))
        if colon + 1 == col and above.holds_value and here.col > above.col:
            return _right_of_a_value(lines, here, above)
        return None
    if not problem.startswith("expected <block end>, but found '<block mapping start>'"):
        return None
    if here.col < above.col:
        return line, here.col + 1, _dedented_between(here, above, _parent(lines, line, here.col))
    if here.col > above.col and above.holds_value:
        return _right_of_a_value(lines, here, above)
    return None


def _right_of_a_value(lines: list[str], here: _KeyLine, above: _KeyLine) -> tuple[int, int, str]:
    """`here` starts right of `above`, a key with a value on its line: `above` is the one out of line
    when the key before it is in `here`'s column (dedented in place, to its parent's column), else `here`
    is (indented too far)."""
    earlier = _before(lines, above.line)
    outer = _key_line(lines, earlier) if earlier else None
    if outer is not None and outer.col == here.col:
        return above.line, above.col + 1, _dedented_in_place(above, outer, here)
    return here.line, here.col + 1, _over_indented(here, above)

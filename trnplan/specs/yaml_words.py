"""PyYAML's syntax errors in plain words: what is wrong on the line, and the usual fix.

`plain_syntax("YAML syntax: mapping values are not allowed here")` says that a second `:` needs quotes.
The parser's own words stay at the end, in parentheses, for whoever knows them; a message this module does
not know is left as it is.
"""

from __future__ import annotations

import re

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

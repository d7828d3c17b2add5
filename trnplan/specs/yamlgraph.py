"""The YAML node graph of one text, bounded: composed from libyaml's events where the two parsers read alike,
from PyYAML's own parser where they may not, with the same nodes, marks and refusals either way.

PyYAML's pure-Python scanner and parser spend some 80% of a spec's or plan's reading time; libyaml (PyYAML's C
binding, `yaml._yaml.CParser`) gives the same events about five times faster. The composer stays PyYAML's
Python one in both cases, bounded in depth, node count and aliases (`_Bounded`), so what a hostile file
meets is the same. libyaml is used only for a text with none of the characters it reads otherwise
(`_NOT_PLAIN`: its marks are then PyYAML's), and only up to an event it may read otherwise (`_Differs`); a
refusal of the bounds is raised as found, and a text libyaml cannot read is read again by the pure-Python
parser, whose messages are the ones users see. tests/test_yamlgraph.py compares the two readings on the
shipped specs and plans, on texts where the parsers differ and on fuzzed texts; bench/yaml_read.py measures
them.
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.nodes import MappingNode, Node, SequenceNode

from trnplan.specs.yaml12 import Yaml12Loader


def _libyaml_parser() -> Any:
    """libyaml's parser, or None where PyYAML was built without libyaml."""
    try:
        from yaml._yaml import CParser
    except ImportError:
        return None
    return CParser


_CParser = _libyaml_parser()


class Refused(Exception):
    """A fatal problem found while composing or measuring the node graph."""

    def __init__(self, line: int, col: int, message: str):
        super().__init__(message)
        self.line = line
        self.col = col
        self.message = message


class _Bounded:
    """A composer bounded in depth and node count (it recurses), that refuses aliases when `no_aliases`
    says why; mixed into a SafeLoader that reads numbers as YAML 1.2 does (`specs.yaml12`)."""

    peek_event: Any  # the parser's (PyYAML's or libyaml's), found after this class in the loader's MRO
    check_event: Any

    def bound(self, max_nodes: int, max_depth: int, no_aliases: str | None) -> None:
        self._max_nodes = max_nodes
        self._max_depth = max_depth
        self._no_aliases = no_aliases
        self._nodes = 0
        self._depth = 0

    def _next_mark(self) -> Any:
        return self.peek_event().start_mark

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self._depth += 1
        self._nodes += 1
        try:
            if self._no_aliases and self.check_event(yaml.AliasEvent):
                raise Refused(*where(self._next_mark()), self._no_aliases)
            if self._depth > self._max_depth:
                raise Refused(*where(self._next_mark()), f"nesting deeper than {self._max_depth} levels")
            if self._nodes > self._max_nodes:
                raise Refused(*where(self._next_mark()), f"more than {self._max_nodes} YAML nodes")
            return super().compose_node(parent, index)  # type: ignore[misc, no-any-return]
        finally:
            self._depth -= 1


def node_mark(node: Node) -> tuple[int, int]:
    return where(node.start_mark)


def where(mark: yaml.Mark) -> tuple[int, int]:
    """1-based line and column of a PyYAML mark, counting only \\n as a line break.

    PyYAML (YAML 1.1) also breaks lines at a lone \\r, NEL, LS and PS; editors, `grep -n` and `sed` do
    not, so after one of those every line number would point one line too early.
    """
    starts = _line_starts(mark.buffer) if isinstance(mark.buffer, str) else None
    if starts is None:
        return mark.line + 1, mark.column + 1
    line = bisect.bisect_right(starts, mark.index) - 1
    return line + 1, mark.index - starts[line] + 1


@functools.lru_cache(maxsize=1)  # the text being parsed (PyYAML's marks share its buffer)
def _line_starts(buffer: str) -> list[int] | None:
    """Where each \\n-delimited line starts, or None when PyYAML's own count is the same."""
    if not any(ch in buffer for ch in "\x85\u2028\u2029") and buffer.count("\r") == buffer.count("\r\n"):
        return None
    return [0] + [m.end() for m in re.finditer("\n", buffer)]


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [child for pair in node.value for child in pair]
    return []


def measure(root: Node, max_nodes: int, max_depth: int) -> None:
    """Refuse a graph whose expansion (aliases repeated at every use) is too big, too deep or cyclic.

    Sizes and heights are memoised per node, so this costs one visit per distinct node however many
    times aliases repeat it: a billion-laughs file is refused after a few hundred steps.
    """
    sizes: dict[int, int] = {}
    heights: dict[int, int] = {}
    active: set[int] = set()

    def visit(node: Node, depth: int) -> int:
        key = id(node)
        if key in sizes:
            if depth + heights[key] - 1 > max_depth:
                raise Refused(*node_mark(node), f"nesting deeper than {max_depth} levels (through aliases)")
            return sizes[key]
        if key in active:
            raise Refused(*node_mark(node), "recursive alias: this collection contains itself")
        if depth > max_depth:
            raise Refused(*node_mark(node), f"nesting deeper than {max_depth} levels (through aliases)")
        active.add(key)
        total, height = 1, 1
        for child in _children(node):
            total += visit(child, depth + 1)
            height = max(height, 1 + heights[id(child)])
            if total > max_nodes:
                raise Refused(
                    *node_mark(node),
                    f"this value expands to more than {max_nodes} YAML nodes through aliases "
                    "(*name repeats &name); refusing it (an alias bomb?)",
                )
        active.discard(key)
        sizes[key] = total
        heights[key] = height
        return total

    visit(root, 1)


class _PurePython(_Bounded, Yaml12Loader):
    """PyYAML's own scanner and parser."""

    def __init__(self, text: str, max_nodes: int, max_depth: int, no_aliases: str | None):
        Yaml12Loader.__init__(self, text)
        self.bound(max_nodes, max_depth, no_aliases)


if _CParser is not None:

    class _Libyaml(_Bounded, _CParser, Yaml12Loader):  # type: ignore[misc, valid-type]
        """libyaml's scanner and parser (the events), PyYAML's Python composer and constructors."""

        def __init__(self, text: str, max_nodes: int, max_depth: int, no_aliases: str | None):
            _CParser.__init__(self, text)
            Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self.bound(max_nodes, max_depth, no_aliases)

        # CParser composes in C too; the Python composer is the one bounded
        get_single_node = Composer.get_single_node
        compose_document = Composer.compose_document

        def compose_node(self, parent: Node | None, index: Any) -> Node | None:
            event = self.peek_event()
            if getattr(event, "tag", None) not in (None, "!"):
                raise _Differs  # the two end a tag at different characters: `!!str,` in a flow collection
            if isinstance(event, yaml.ScalarEvent) and not event.style and "?" in event.value:
                if getattr(parent, "flow_style", False):  # libyaml (YAML 1.2) reads `{capex_u?d: 1}`
                    raise _Differs
            return super().compose_node(parent, index)


class _Differs(Exception):
    """An event PyYAML may read otherwise than libyaml (an explicit tag; specs seldom have one, or a plain
    scalar with a `?` in a flow collection, which PyYAML refuses): the text is read again by PyYAML, from
    the start, and libyaml's reading stops here."""


_NOT_PLAIN = re.compile(
    "[^\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
"""A character libyaml reads otherwise than PyYAML (a tab, a BOM inside the text, a line break other than
\n or \r\n) or refuses with another message (a control character): a text with one is read by PyYAML."""


_HEADER_THEN_COMMENT = re.compile(r"[|>][-+0-9]*#")
"""A block scalar's header with a `#` right after it (`|#`, `>-#`): libyaml takes the `#` for a comment,
PyYAML refuses it (a comment needs a space before it). Matched anywhere, so a few other texts go to PyYAML
too."""


def _plain(text: str) -> bool:
    return (
        _NOT_PLAIN.search(text) is None
        and text.count("\r") == text.count("\r\n")
        and _HEADER_THEN_COMMENT.search(text) is None
    )


def compose(
    text: str, max_nodes: int, max_depth: int, no_aliases: str | None = None
) -> tuple[Any, Node | None]:
    """The loader (for its constructors: the caller disposes of it) and the root node of `text`'s one
    document. Refusals raise `Refused`; syntax errors PyYAML's own `MarkedYAMLError` or `ReaderError` (a
    text libyaml cannot read is read again by PyYAML, for its message)."""
    if _CParser is not None and _plain(text):
        fast = _Libyaml(text, max_nodes, max_depth, no_aliases)
        try:
            return fast, fast.get_single_node()
        except Refused:  # the same events so far, so the same refusal at the same place
            fast.dispose()
            raise
        except Exception:  # noqa: BLE001, S110  # _Differs, or libyaml cannot read it: PyYAML's reading
            pass
        fast.dispose()
    slow = _PurePython(text, max_nodes, max_depth, no_aliases)
    try:
        return slow, slow.get_single_node()
    except BaseException:
        slow.dispose()
        raise

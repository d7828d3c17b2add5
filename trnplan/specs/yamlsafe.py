"""Safe YAML reading: plain data plus the line/col of every key, with hostile input refused cleanly.

PyYAML's SafeLoader composes the node graph; this module walks it itself instead of calling the
constructor on collections, so that it can

- report duplicate keys (PyYAML silently keeps the last one),
- accept only the standard tags (`!!python/...`, `!!binary`, `!!set` and local tags are refused),
- refuse alias bombs and deep nesting before materialising anything (the expanded size and depth of
  the node graph are measured first, with shared nodes counted once per use),
- keep going after a bad key or value, so that a file reports every problem at once.

Syntax errors, encoding errors, size and nesting limits are fatal for the file (`SpecError`); problems in
keys and values are returned in `YamlDoc.problems`, with the refused values replaced by `None` and their
paths listed in `YamlDoc.bad` so that later checks can skip them instead of reporting them twice.
Lines and columns are 1-based.

Numbers are read as YAML 1.2 reads them (and as editors and their schema checks do), where PyYAML's
YAML 1.1 reading differs and would silently change a value:

- a leading zero does not make octal: `0700` is 700 (YAML 1.1: 448); octal is written `0o700`;
- there is no base 60: `1:30` is the text '1:30' (YAML 1.1: the number 90), and `1:30.5` too;
- `1e9` (an exponent without a dot) is a number (YAML 1.1: text).

Forms that mean the same in either reading are kept: digits grouped with `_` (`1_000`), `0x1f`, `0b101`,
`.inf`, `.nan` (refused later as not finite where a figure is expected). PyYAML's YAML 1.1 booleans are
kept too: `yes`/`no`/`on`/`off` are booleans, and a key written so is refused as not text. `yaml12.dump_yaml`
writes text that reads back the same under both readings (a string either would read as a number is
quoted).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from trnplan.errors import KeyPath as KeyPath  # re-exported
from trnplan.errors import Problem, SpecError
from trnplan.specs.readfile import Unreadable, human_size, read_regular
from trnplan.specs.yaml_words import PREFIX, misplaced_key
from trnplan.specs.yamlgraph import Refused, compose, measure, node_mark, where

MAX_BYTES = 4 * 1024 * 1024
"""Largest spec file read; the pure-Python parser needs seconds per MiB, and a hand-written spec is KiBs."""
MAX_NODES = 100_000
"""Most YAML nodes composed, or materialised once aliases expand (a spec has thousands; at the limit the
pure-Python parser needs some 60 MB and a few seconds)."""
MAX_DEPTH = 64
"""Deepest nesting of collections, aliases included; specs nest about 6 deep."""
MAX_INT = 2**63 - 1

_STD = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_STD + name for name in ("null", "bool", "int", "float", "str", "timestamp")}
_SCALAR_WORDS = {
    _STD + "null": "null",
    _STD + "bool": "a boolean",
    _STD + "int": "a whole number",
    _STD + "float": "a number",
    _STD + "str": "text",
    _STD + "timestamp": "a date",
}
_MAP_TAG = _STD + "map"
_SEQ_TAG = _STD + "seq"
_MERGE_TAG = _STD + "merge"
_VALUE_TAG = _STD + "value"  # PyYAML resolves a bare `=` to this tag; it is plain text to us


@dataclass(frozen=True)
class YamlDoc:
    """Plain data read from one YAML text, the 1-based (line, col) of each key path, and the
    non-fatal problems found (values refused are `None` in `data` and listed in `bad`).

    A mapping entry's mark is where its key starts; a list item's mark is where the item starts.
    """

    data: Any
    marks: dict[KeyPath, tuple[int, int]]
    problems: list[Problem] = field(default_factory=list)
    bad: frozenset[KeyPath] = frozenset()

    def check(self) -> YamlDoc:
        """Raise `SpecError` if any problem was found, else return the document."""
        if self.problems:
            raise SpecError(self.problems)
        return self


def dotted(path: KeyPath) -> str:
    """A key path as written in messages and in `--set`: `forms.trn3-nl72x2.scale_up.0.switch`."""
    return ".".join(str(part) for part in path)


def describe(value: Any) -> str:
    """A YAML value in words, for messages: `the text 'abc'`, `the boolean true`, `a list of 2 items`."""
    if value is None:
        return "null (an empty value)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"the whole number {value}"
    if isinstance(value, float):
        return f"the number {value:g}"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return f"the text {text!r}"
    if isinstance(value, date):
        return f"the date {value.isoformat()}"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'' if len(value) == 1 else 's'}"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_STD) :] if tag.startswith(_STD) else tag


class _Builder:
    """Turns a measured node graph into plain data, marks and non-fatal problems."""

    def __init__(self, loader: yaml.SafeLoader, file: str, what: str = "specs"):
        self.loader = loader
        self.file = file
        self.what = what
        self.marks: dict[KeyPath, tuple[int, int]] = {}
        self.problems: list[Problem] = []
        self.bad: set[KeyPath] = set()

    def problem(self, node: Node, path: KeyPath, message: str) -> None:
        line, col = node_mark(node)
        self.problems.append(Problem(self.file, line, col, dotted(path), message))

    def refuse(self, node: Node, path: KeyPath, message: str) -> None:
        self.problem(node, path, message)
        self.bad.add(path)

    def build(self, node: Node, path: KeyPath) -> Any:
        if isinstance(node, ScalarNode):
            return self.scalar(node, path)
        if isinstance(node, SequenceNode):
            if node.tag != _SEQ_TAG:
                self.refuse(node, path, self.tag_message(node.tag))
                return None
            items = []
            for i, child in enumerate(node.value):
                self.marks[path + (i,)] = node_mark(child)
                items.append(self.build(child, path + (i,)))
            return items
        if isinstance(node, MappingNode):
            if node.tag != _MAP_TAG:
                self.refuse(node, path, self.tag_message(node.tag))
                return None
            return self.mapping(node, path)
        self.refuse(node, path, f"unexpected YAML node {type(node).__name__}")
        return None

    def tag_message(self, tag: str) -> str:
        return (
            f"tag '{_short_tag(tag)}' is not allowed: {self.what} are plain YAML "
            "(mappings, lists, text, numbers, booleans, null)"
        )

    def scalar(self, node: ScalarNode, path: KeyPath) -> Any:
        if node.tag == _VALUE_TAG:
            return node.value
        if node.tag not in _SCALAR_TAGS:
            self.refuse(node, path, self.tag_message(node.tag))
            return None
        if node.tag == _STD + "int" and len(node.value.replace("_", "")) > 24:  # spare int() 4000 digits
            self.refuse(node, path, f"integer {node.value[:24]}... is too large (more than 64 bits)")
            return None
        try:
            value = self.loader.construct_object(node)
        except Exception as exc:  # PyYAML raises ValueError/KeyError/... on e.g. `!!int x`, `2025-02-30`
            what = _SCALAR_WORDS.get(node.tag, _short_tag(node.tag))
            detail = f" ({exc})" if node.tag == _STD + "timestamp" and isinstance(exc, ValueError) else ""
            self.refuse(node, path, f"cannot read {node.value[:40]!r} as {what}{detail}")
            return None
        if type(value) is int and abs(value) > MAX_INT:
            self.refuse(node, path, f"integer {node.value[:24]} is too large (more than 64 bits)")
            return None
        return value

    def key(self, node: Node, path: KeyPath) -> str | None:
        if not isinstance(node, ScalarNode):
            kind = "a list" if isinstance(node, SequenceNode) else "a mapping"
            self.problem(node, path, f"a key must be text, not {kind}")
            return None
        value = self.scalar(node, path)
        if value is None and path in self.bad:
            self.bad.discard(path)  # the key was refused, not a value: nothing downstream to skip
            return None
        if not isinstance(value, str):
            self.problem(
                node,
                path,
                f"key {node.value!r} is read as {describe(value)}; keys must be text "
                f"(quote it: '{node.value}')",
            )
            return None
        return value

    def mapping(self, node: MappingNode, path: KeyPath) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first: dict[str, tuple[int, int]] = {}
        merges: list[Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merges.append(value_node)
                continue
            key = self.key(key_node, path)
            if key is None:
                continue
            if key in out:
                line, _col = first[key]
                self.problem(key_node, path + (key,), f"duplicate key '{key}' (first at line {line})")
                continue
            first[key] = node_mark(key_node)
            self.marks[path + (key,)] = first[key]
            out[key] = self.build(value_node, path + (key,))
        # `<<: *base` / `<<: [*a, *b]`: keys written here win, then earlier merged mappings.
        for merge in merges:
            sources = merge.value if isinstance(merge, SequenceNode) else [merge]
            for source in sources:
                if not isinstance(source, MappingNode):
                    self.problem(source, path, "'<<' merges a mapping or a list of mappings")
                    continue
                saved_marks, saved_bad = self.marks, self.bad
                self.marks, self.bad = {}, set()
                merged = self.mapping(source, path) if source.tag == _MAP_TAG else {}
                if source.tag != _MAP_TAG:
                    self.problem(source, path, self.tag_message(source.tag))
                sub_marks, sub_bad = self.marks, self.bad
                self.marks, self.bad = saved_marks, saved_bad
                added = {k for k in merged if k not in out}
                for k in added:
                    out[k] = merged[k]
                n = len(path)
                for sub_path, mark in sub_marks.items():
                    if len(sub_path) > n and sub_path[n] in added:
                        self.marks[sub_path] = mark
                self.bad.update(p for p in sub_bad if len(p) > n and p[n] in added)
        return out


def _syntax_mark(exc: yaml.MarkedYAMLError) -> tuple[int, int]:
    mark = exc.problem_mark or exc.context_mark
    return where(mark) if mark else (1, 1)


def _syntax_message(exc: yaml.MarkedYAMLError) -> str:
    """PyYAML's context/problem pair as one phrase: `expected ',' or ']', but got ':' (in the flow ...)`."""
    context, problem = exc.context or "", exc.problem or ""
    first = f" at line {where(exc.context_mark)[0]}" if exc.context_mark else ""
    if context.startswith("found duplicate anchor"):
        return context.removesuffix("; first occurrence").removeprefix("found ") + f" (first{first})"
    if not context:
        return problem or "cannot parse this"
    if not problem:
        return context
    if problem.startswith("but "):
        return f"{context}, {problem}"
    return f"{problem} ({context}{' started' + first if first else ''})"


def _line_col(text: str, position: int) -> tuple[int, int]:
    line = text.count("\n", 0, position) + 1
    return line, position - (text.rfind("\n", 0, position) + 1) + 1


def parse_yaml(
    text: str,
    *,
    file: str = "<string>",
    max_nodes: int = MAX_NODES,
    max_depth: int = MAX_DEPTH,
    no_aliases: str | None = None,
    what: str = "specs",
) -> YamlDoc:
    """Read one YAML document from `text`; fatal problems raise `SpecError` located in `file`.

    `no_aliases`, when given, refuses any alias (`*name`) with that message (plan files have none);
    `what` names the kind of file in messages ("specs are plain YAML").
    """
    if text.startswith("\ufeff"):
        text = text[1:]

    def fatal(line: int, col: int, message: str) -> SpecError:
        return SpecError([Problem(file, line, col, "", message)])

    loader: Any = None
    try:
        loader, root = compose(text, max_nodes, max_depth, no_aliases)
        if root is None:
            return YamlDoc(None, {(): (1, 1)})
        measure(root, max_nodes, max_depth)
        builder = _Builder(loader, file, what)
        builder.marks[()] = node_mark(root)
        data = builder.build(root, ())
        return YamlDoc(data, builder.marks, builder.problems, frozenset(builder.bad))
    except Refused as exc:
        raise fatal(exc.line, exc.col, exc.message) from None
    except yaml.MarkedYAMLError as exc:
        line, col = _syntax_mark(exc)
        original = _syntax_message(exc)
        misplaced = misplaced_key(text, line, col, exc.problem or "") if exc.problem_mark else None
        if misplaced is not None:
            line, col, words = misplaced
            raise fatal(line, col, f"{PREFIX}{words} (the parser: {original})") from None
        raise fatal(line, col, PREFIX + original) from None
    except yaml.reader.ReaderError as exc:
        line, col = _line_col(text, exc.position)
        raise fatal(line, col, f"character U+{exc.character:04X} is not allowed in YAML text") from None
    except RecursionError:
        raise fatal(1, 1, f"nesting deeper than {max_depth} levels") from None
    except Exception as exc:  # a PyYAML internal failure on odd input must still be a located message
        raise fatal(1, 1, f"YAML: cannot read this text ({type(exc).__name__}: {exc})") from None
    finally:
        if loader is not None:
            loader.dispose()


def parse_bytes(
    raw: bytes, *, file: str = "<bytes>", max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH
) -> YamlDoc:
    """Decode `raw` as UTF-8 text (refusing binary and other encodings) and parse it."""

    def fatal(message: str, position: int | None = None) -> SpecError:
        if position is None:
            return SpecError([Problem(file, 0, 0, "", message)])
        start = raw.rfind(b"\n", 0, position) + 1
        col = len(raw[start:position].decode("utf-8", errors="replace")) + 1
        return SpecError([Problem(file, raw.count(b"\n", 0, position) + 1, col, "", message)])

    for bom, name in (
        (codecs.BOM_UTF32_LE, "UTF-32"),
        (codecs.BOM_UTF32_BE, "UTF-32"),
        (codecs.BOM_UTF16_LE, "UTF-16"),
        (codecs.BOM_UTF16_BE, "UTF-16"),
    ):
        if raw.startswith(bom):
            raise fatal(f"file is {name} encoded; save it as UTF-8")
    nul = raw.find(b"\0")
    if nul >= 0:
        raise fatal("binary file (NUL byte); a spec file is UTF-8 text", nul)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        message = f"not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the file as UTF-8"
        raise fatal(message, exc.start) from None
    return parse_yaml(text, file=file, max_nodes=max_nodes, max_depth=max_depth)


def read_yaml(
    path: str | Path,
    *,
    display: str | None = None,
    max_bytes: int = MAX_BYTES,
    max_nodes: int = MAX_NODES,
    max_depth: int = MAX_DEPTH,
) -> YamlDoc:
    """Read one YAML file safely; `display` is the file name used in messages (default: `path`).

    `specs.readfile.read_regular` reads it: missing files, broken symlinks, symlink loops, directories,
    pipes and devices (also behind a symlink), and files over `max_bytes` are refused without reading them,
    and opening never blocks.
    """
    name = display if display is not None else str(path)
    try:
        raw = read_regular(path, max_bytes)
    except Unreadable as exc:
        if exc.kind == Unreadable.DIRECTORY:
            message = "is a directory, not a YAML file"
        elif exc.kind == Unreadable.TOO_LARGE:
            size = f"{human_size(exc.size)}, " if exc.size is not None else ""
            message = f"file is {size}over the {human_size(max_bytes)} limit for a spec file"
        else:
            message = exc.message
        raise SpecError([Problem(name, 0, 0, "", message)]) from None
    return parse_bytes(raw, file=name, max_nodes=max_nodes, max_depth=max_depth)

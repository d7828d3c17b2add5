"""libyaml reads what PyYAML's own parser reads: the same data, marks, problems and refusals.

The libyaml reading is the fast one; the pure-Python one is the reference (its messages are the ones users
see). Every shipped spec and plan, hand-picked texts where the two parsers differ, and texts mutated around
YAML's indicators are read both ways and compared.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trnplan.errors import SpecError
from trnplan.specs import yamlgraph
from trnplan.specs.yamlsafe import parse_yaml

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(
    [*ROOT.glob("specs/*.yaml"), *ROOT.glob("plans/*.yaml"), *ROOT.glob("tests/fixtures/**/*.yaml")]
)
LIBYAML = yamlgraph._CParser
pytestmark = pytest.mark.skipif(LIBYAML is None, reason="PyYAML without libyaml: one reading only")


Limits = tuple[int, int, "str | None"]


def reading(text: str, libyaml: bool, limits: Limits = (5_000, 20, None)) -> tuple[object, ...]:
    """Everything `parse_yaml` gives for `text` (or every problem it refuses it with), read by libyaml
    where it can (`libyaml`) or by PyYAML's pure-Python parser only; `limits` are the most nodes, the
    deepest nesting and the message refusing aliases."""
    max_nodes, max_depth, no_aliases = limits
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlgraph, "_CParser", LIBYAML if libyaml else None)
        try:
            doc = parse_yaml(text, file="f.yaml", max_nodes=max_nodes, max_depth=max_depth,
                             no_aliases=no_aliases)
        except SpecError as exc:
            return ("refused", [str(p) for p in exc.problems])
        return ("read", doc.data, doc.marks, [str(p) for p in doc.problems], doc.bad)


def test_the_shipped_specs_and_plans_are_read_by_libyaml_and_read_the_same() -> None:
    assert len(SHIPPED) >= 15
    for path in SHIPPED:
        text = path.read_text(encoding="utf-8")
        loader, root = yamlgraph.compose(text, 100_000, 64)
        try:
            assert type(loader).__name__ == "_Libyaml", path  # the fast reading is really the one used
            assert root is not None
        finally:
            loader.dispose()
        assert reading(text, True) == reading(text, False), path


@pytest.mark.parametrize(
    "text",
    [
        "a: {capex_u?d: 1}\n",  # YAML 1.2 (libyaml) reads the key; PyYAML refuses the '?'
        "a: [x?y, 2]\n",
        "a: {b: !!str, c: 1}\n",  # a tag ends at ',' in libyaml, not in PyYAML
        "a: {b: !30000, c: 1}\n",
        "a:\n\tb: 1\n",  # tabs
        "a: 1\t# note\nb:\t2\n",
        "a: 1\n\ufeffb: 2\n",  # a BOM inside the text: libyaml skips it, PyYAML reads it as a character
        "a: 1\x85b: 2\n",  # NEL, LS, PS and a lone CR: line breaks to PyYAML, not to editors
        "a: 1\u2028b: 2\n",
        "a: 1\rb: 2\n",
        "a: 1\x07\n",  # a control character
        "a: &x {b: 1}\nc: *x\nd: {<<: *x, e: 2}\n",
        "a: 'é 🎉'\nb: {c: ü, d: [1, 2]}\n",
        "a: 1\r\nb: [2, 3]\r\n",
        "a: [1, 2\nb: 3\n",
        "- a\nb: 1\n",
        "a: b: c\n",
        "|# a comment?\nb: 1\n",  # libyaml reads a block scalar and a comment, PyYAML refuses the '#'
        "a: >-#\n  text\n",
    ],
)
def test_where_the_parsers_differ_the_reading_is_pyyamls(text: str) -> None:
    assert reading(text, True) == reading(text, False)


@pytest.mark.parametrize(
    "text, limits",
    [
        ("a: " + "[" * 30 + "]" * 30 + "\n", (5_000, 20, None)),  # too deep
        ("a: [" + "1, " * 300 + "1]\n", (100, 20, None)),  # too many nodes
        ("a: &x [1]\nb: *x\n", (5_000, 20, "no aliases here")),
        ("a: {k?: 1}\nb: [" + "1, " * 300 + "1]\n", (100, 20, None)),  # PyYAML stops at the '?' first
        ("a: {b: !!str, c: 1}\nd: " + "[" * 30 + "]" * 30 + "\n", (5_000, 20, None)),
    ],
    ids=["too deep", "too many nodes", "an alias", "a ? before too many nodes", "a tag before too deep"],
)
def test_a_refusal_is_the_same_refusal_at_the_same_place(text: str, limits) -> None:
    refused = reading(text, False, limits)
    assert refused[0] == "refused"
    assert reading(text, True, limits) == refused


_PIECES = [*":?,[]{}-#&*!|>\"' \n\t", ": ", ", ", "? ", "- ", "\n  ", "\n- ", "%", "@", "`", "\\", "é",
           "🎉", "\r\n", "\r", "\x85", "\ufeff", "!!int ", "!!str ", "!!str,", "!x ", "&a ", "*a ", "&a,",
           "*a,", "<<: ", "...", "---", "0700", "1:30", "1e9", ".inf", "~", "null", "yes"]
_BASES = [p.read_text(encoding="utf-8") for p in SHIPPED]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(
    base=st.sampled_from(_BASES),
    start=st.floats(0, 1),
    edits=st.lists(st.tuples(st.floats(0, 1), st.sampled_from(["insert", "delete", "replace"]),
                             st.sampled_from(_PIECES)), min_size=1, max_size=8),
    limits=st.sampled_from([(5_000, 20, None), (150, 5, None), (400, 8, "no aliases here")]),
)
def test_mutated_specs_and_plans_read_the_same_either_way(base: str, start: float, edits, limits) -> None:
    """The same 400 texts every run (derandomized): a difference between the two parsers is a finding to add
    to the hand-picked texts above and to the rules of `specs.yamlgraph`, not a failure that a later run may
    or may not draw. Wider searches, done by hand with other seeds (over 50,000 texts, mutations at line
    starts, after keys and anywhere), found the `|#` and flow `?` cases above; none is left."""
    at = int(start * max(0, len(base) - 1500))
    text = base[at : at + 1500]
    for where, op, piece in edits:
        i = int(where * len(text))
        if op == "insert":
            text = text[:i] + piece + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + len(piece) :]
        else:
            text = text[:i] + piece + text[i + len(piece) :]
    assert reading(text, True, limits) == reading(text, False, limits)

"""Safe YAML reading: data, 1-based marks, non-fatal problems and refusals (see also test_load_hostile)."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest
import yaml

from trnplan.errors import SpecError
from trnplan.specs.yamlsafe import describe, dotted, parse_bytes, parse_yaml, read_yaml


def refusal(text: str) -> list[str]:
    with pytest.raises(SpecError) as info:
        parse_yaml(text, file="f.yaml")
    return [str(p) for p in info.value.problems]


def test_marks_are_one_based_key_positions_in_block_and_flow_style() -> None:
    doc = parse_yaml(
        "chips:\n  trn3:\n    tdp_w: 1000\n    hbm: {stacks: 4, stack_gb: 36}\n    cooling: [air, liquid]\n",
        file="f.yaml",
    )
    assert doc.problems == []
    assert doc.data == {
        "chips": {"trn3": {"tdp_w": 1000, "hbm": {"stacks": 4, "stack_gb": 36}, "cooling": ["air", "liquid"]}}
    }
    assert doc.marks[()] == (1, 1)
    assert doc.marks[("chips",)] == (1, 1)
    assert doc.marks[("chips", "trn3")] == (2, 3)
    assert doc.marks[("chips", "trn3", "tdp_w")] == (3, 5)
    assert doc.marks[("chips", "trn3", "hbm", "stack_gb")] == (4, 22)
    assert doc.marks[("chips", "trn3", "cooling", 1)] == (5, 20)


def test_duplicate_key_is_reported_at_the_second_and_the_first_value_kept() -> None:
    doc = parse_yaml("a:\n  x: 1\n  y: 2\n  x: 3\n", file="f.yaml")
    assert [str(p) for p in doc.problems] == ["f.yaml:4:3: a.x: duplicate key 'x' (first at line 2)"]
    assert doc.data == {"a": {"x": 1, "y": 2}}
    with pytest.raises(SpecError):
        doc.check()


def test_non_string_keys_are_reported_at_every_level() -> None:
    doc = parse_yaml("1: a\nchips:\n  yes: {}\n  trn3:\n    2025-01-01: x\n", file="f.yaml")
    assert [str(p) for p in doc.problems] == [
        "f.yaml:1:1: key '1' is read as the whole number 1; keys must be text (quote it: '1')",
        "f.yaml:3:3: chips: key 'yes' is read as the boolean true; keys must be text (quote it: 'yes')",
        "f.yaml:5:5: chips.trn3: key '2025-01-01' is read as the date 2025-01-01; keys must be text "
        "(quote it: '2025-01-01')",
    ]
    assert doc.data == {"chips": {"trn3": {}}}
    assert doc.bad == frozenset()


def test_collection_keys_are_refused() -> None:
    doc = parse_yaml("? [a, b]\n: 1\nok: 2\n", file="f.yaml")
    assert [str(p) for p in doc.problems] == ["f.yaml:1:3: a key must be text, not a list"]
    assert doc.data == {"ok": 2}


def test_yaml_1_1_booleans_and_numbers_but_1e3_is_a_number_as_in_yaml_1_2() -> None:
    doc = parse_yaml("a: yes\nb: off\nc: 1_000\nd: 1e3\ne: .inf\nf: '1.10'\ng: 2025-12\n", file="f.yaml")
    assert doc.data == {
        "a": True,
        "b": False,
        "c": 1000,
        "d": 1000.0,
        "e": float("inf"),
        "f": "1.10",
        "g": "2025-12",
    }


def test_syntax_errors_are_located() -> None:
    assert refusal("a: [1, 2\nb: 3\n") == [
        "f.yaml:2:2: YAML syntax: expected ',' or ']', but got ':' "
        "(while parsing a flow sequence started at line 1)"
    ]
    assert refusal("a: 1\n  b: 2\n") == [
        "f.yaml:2:3: YAML syntax: 'b' is 2 spaces right of 'a' on line 1, which holds a value, so YAML "
        "reads it as more of that value: start it in column 1, as 'a' "
        "(the parser: mapping values are not allowed here)"
    ]
    assert refusal("a: 1\n---\nb: 2\n") == [
        "f.yaml:2:1: YAML syntax: expected a single document in the stream, but found another document"
    ]
    assert refusal("a: *nowhere\n") == ["f.yaml:1:4: YAML syntax: found undefined alias 'nowhere'"]
    assert refusal("a: &x 1\nb: &x 2\n") == [
        "f.yaml:2:4: YAML syntax: duplicate anchor 'x' (first at line 1)"
    ]
    assert refusal("a: \x07\n") == ["f.yaml:1:4: character U+0007 is not allowed in YAML text"]


def test_tags_other_than_the_standard_ones_are_refused_and_the_value_marked_bad() -> None:
    doc = parse_yaml(
        "a: !!python/object/apply:os.system ['true']\n"
        "b: !local x\nc: !!binary aGk=\nd: !!set {x}\ne: !!str 5\n",
        file="f.yaml",
    )
    assert doc.data == {"a": None, "b": None, "c": None, "d": None, "e": "5"}
    assert doc.bad == {("a",), ("b",), ("c",), ("d",)}
    messages = [str(p) for p in doc.problems]
    assert messages[0] == (
        "f.yaml:1:4: a: tag '!!python/object/apply:os.system' is not allowed: specs are plain YAML "
        "(mappings, lists, text, numbers, booleans, null)"
    )
    assert [m.split(": ")[2].split(" is")[0] for m in messages] == [
        "tag '!!python/object/apply:os.system'",
        "tag '!local'",
        "tag '!!binary'",
        "tag '!!set'",
    ]


def test_unreadable_scalars_and_huge_integers_are_refused() -> None:
    doc = parse_yaml(
        "a: !!int xyz\nb: !!bool maybe\nc: 2025-02-30\nd: 123456789012345678901\ne: 9223372036854775807\n",
        file="f.yaml",
    )
    assert [str(p) for p in doc.problems] == [
        "f.yaml:1:4: a: cannot read 'xyz' as a whole number",
        "f.yaml:2:4: b: cannot read 'maybe' as a boolean",
        "f.yaml:3:4: c: cannot read '2025-02-30' as a date (day is out of range for month)",
        "f.yaml:4:4: d: integer 123456789012345678901 is too large (more than 64 bits)",
    ]
    assert doc.data["e"] == 2**63 - 1
    assert doc.bad == {("a",), ("b",), ("c",), ("d",)}


def test_merge_keys_merge_with_local_keys_winning_and_marks_at_the_source() -> None:
    doc = parse_yaml(
        "base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  y: 3\nd: {<<: [*b, {z: 4}], x: 0}\n",
        file="f.yaml",
    )
    assert doc.problems == []
    assert doc.data["c"] == {"x": 1, "y": 3}
    assert doc.data["d"] == {"x": 0, "y": 2, "z": 4}
    assert doc.marks[("c", "y")] == (4, 3)
    assert doc.marks[("c", "x")] == (1, 11)  # where the merged value was written


def test_empty_and_comment_only_documents_are_none() -> None:
    assert parse_yaml("", file="f.yaml").data is None
    assert parse_yaml("# nothing here\n", file="f.yaml").data is None


def test_bytes_utf8_bom_is_accepted_other_encodings_refused() -> None:
    assert parse_bytes(codecs.BOM_UTF8 + b"a: 1\n", file="f.yaml").data == {"a": 1}
    with pytest.raises(SpecError) as info:
        parse_bytes("a: 1\n".encode("utf-16"), file="f.yaml")
    assert [str(p) for p in info.value.problems] == ["f.yaml: file is UTF-16 encoded; save it as UTF-8"]
    with pytest.raises(SpecError) as info:
        parse_bytes(b"a: 1\nname: caf\xe9\n", file="f.yaml")
    assert [str(p) for p in info.value.problems] == [
        "f.yaml:2:10: not UTF-8 text (byte 0xe9); save the file as UTF-8"
    ]


def test_read_yaml_names_the_file_as_displayed(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("a: [1,\n", encoding="utf-8")
    with pytest.raises(SpecError) as info:
        read_yaml(path, display="specs/x.yaml")
    (problem,) = info.value.problems
    assert problem.file == "specs/x.yaml"
    assert problem.line == 2
    assert problem.message.startswith("YAML syntax: ")


def test_describe_and_dotted() -> None:
    assert (
        dotted(("forms", "trn2.48xlarge", "scale_up", 0, "switch")) == "forms.trn2.48xlarge.scale_up.0.switch"
    )
    assert describe(None) == "null (an empty value)"
    assert describe(True) == "the boolean true"
    assert describe(3) == "the whole number 3"
    assert describe(2.5) == "the number 2.5"
    assert describe("x" * 50) == "the text '" + "x" * 37 + "...'"
    assert describe([1]) == "a list of 1 item"
    assert describe({}) == "a mapping"


def test_marks_count_only_newlines_as_line_breaks() -> None:
    """PyYAML (YAML 1.1) also breaks lines at NEL, LS, PS and a lone CR; editors, grep -n and sed do not.
    Marks follow the editors, or every line after such a character would be reported one line early."""
    text = "a: 1\n\x85b: {x: 1, x: 2}\nc: \u2028 3\nd: '\u2029'\ne: 1\rf: 2\ng: {y: 1, y: 2}\n"
    doc = parse_yaml(text, file="f.yaml")
    assert doc.marks[("b",)] == (2, 2)
    assert doc.marks[("d",)] == (4, 1)
    assert doc.marks[("f",)] == (5, 6)  # after a lone CR: the same line, as `grep -n` counts
    assert doc.marks[("g", "y")] == (6, 5)
    assert [str(p) for p in doc.problems] == [
        "f.yaml:2:12: b.x: duplicate key 'x' (first at line 2)",
        "f.yaml:6:11: g.y: duplicate key 'y' (first at line 6)",
    ]
    assert refusal("a: 1\n\u2028b: [1,\n") == [
        "f.yaml:3:1: YAML syntax: expected the node content, but found '<stream end>' "
        "(while parsing a flow node started at line 3)"
    ]


# --- numbers as YAML 1.2 reads them -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0700", 700),  # YAML 1.1: 448 (octal)
        ("-017", -17),
        ("09", 9),  # YAML 1.1: the text '09'
        ("0o700", 448),  # octal, as YAML 1.2 writes it
        ("1:30", "1:30"),  # YAML 1.1: 90 (base 60)
        ("1:30:00", "1:30:00"),
        ("-1:30.5", "-1:30.5"),  # YAML 1.1: -90.5
        ("1e3", 1000.0),
        ("1_000", 1000),  # the same in either reading: kept
        ("0x1f", 31),
        ("0b101", 5),
        ("+5", 5),
        ("'0700'", "0700"),
        ("!!int 0700", 700),
    ],
)
def test_numbers_are_read_as_yaml_1_2_reads_them(text: str, value: object) -> None:
    doc = parse_yaml(f"a: {text}\n", file="f.yaml")
    assert doc.problems == []
    assert doc.data["a"] == value and type(doc.data["a"]) is type(value)


def test_an_explicit_tag_cannot_bring_base_60_back() -> None:
    doc = parse_yaml("a: !!int 1:30\nb: !!float 1:30.5\nc: !!int ' 5'\n", file="f.yaml")
    assert [str(p) for p in doc.problems] == [
        "f.yaml:1:4: a: cannot read '1:30' as a whole number",
        "f.yaml:2:4: b: cannot read '1:30.5' as a number",
        "f.yaml:3:4: c: cannot read ' 5' as a whole number",
    ]


def test_dump_quotes_what_either_reading_would_take_for_a_number() -> None:
    from trnplan.specs.yaml12 import dump_yaml

    data = {"a": "09", "b": "0o7", "c": "1e9", "d": "0700", "e": "1:30", "f": "trn3", "g": 1.0e20, "h": 700}
    text = dump_yaml(data)
    assert text == "a: '09'\nb: '0o7'\nc: '1e9'\nd: '0700'\ne: '1:30'\nf: trn3\ng: 1.0e+20\nh: 700\n"
    assert parse_yaml(text).data == data
    assert yaml.safe_load(text) == data  # YAML 1.1 readers read it the same


def test_spec_numbers_with_a_leading_zero_or_a_colon(tmp_path: Path) -> None:
    """`tdp_w: 01000` is 1000 W (not 512); `tdp_w: 16:40` is text, refused where a number is expected."""
    from trnplan.specs.load import load_specs
    from trnplan.testkit.builders import base_specs

    text = yaml.safe_dump(base_specs(), sort_keys=False)
    (tmp_path / "w.yaml").write_text(text.replace("tdp_w: 1000", "tdp_w: 01000"))
    assert load_specs([tmp_path]).chips["x"].tdp_w == 1000
    (tmp_path / "w.yaml").write_text(text.replace("tdp_w: 1000", "tdp_w: 16:40"))
    with pytest.raises(SpecError) as info:
        load_specs([tmp_path])
    line = text.split("\n").index("    tdp_w: 1000") + 1
    assert [str(p) for p in info.value.problems] == [
        f"{tmp_path}/w.yaml:{line}:5: chips.x.tdp_w: expected a number, got the text '16:40'"
    ]


# --- keys written as collections ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[key]: 1\n", "f.yaml:1:1: a key must be text, not a list"),
        ("chips:\n  [key]: 1\n", "f.yaml:2:3: chips: a key must be text, not a list"),
        ("chips: {[key]: 1, [key]: 2}\n", "f.yaml:1:9: chips: a key must be text, not a list"),
        ("chips:\n  x:\n    [tdp_w]: 1\n", "f.yaml:3:5: chips.x: a key must be text, not a list"),
        ("chips:\n  - [a]: 1\n", "f.yaml:2:5: chips.0: a key must be text, not a list"),
        ("{a: 1}: 2\n", "f.yaml:1:1: a key must be text, not a mapping"),
        ("? [[key]]\n: 1\n", "f.yaml:1:3: a key must be text, not a list"),
    ],
)
def test_a_collection_as_a_key_is_a_located_problem(text: str, where: str) -> None:
    assert str(parse_yaml(text, file="f.yaml").problems[0]) == where


def test_a_collection_key_through_validation_and_set(tmp_path: Path) -> None:
    """The whole loader, not only the reader: validation of an entity whose key is `[key]` reports it."""
    from trnplan.specs.load import load_specs
    from trnplan.testkit.builders import base_specs

    text = yaml.safe_dump(base_specs(), sort_keys=False)
    (tmp_path / "w.yaml").write_text(text.replace("\nsites:\n", "\nsites:\n  [key]: 1\n"))
    with pytest.raises(SpecError) as info:
        load_specs([tmp_path])
    assert any("a key must be text, not a list" in str(p) for p in info.value.problems)
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(base_specs(), sort_keys=False))
    for override in ("chips.x={[tdp_w]: 1}", "chips.x.dense_tflops={[fp8]: 1}", "[key]=1"):
        with pytest.raises(SpecError) as info:
            load_specs([tmp_path], [override])
        assert all(p.line and p.file == "--set" for p in info.value.problems), info.value.problems


@pytest.mark.parametrize("override", ["chips.x.[key]=1", "chips.x.hbm.[key]=1", "scenarios.s.[key]=1"])
def test_a_field_named_key_in_brackets_is_an_unknown_field(tmp_path: Path, override: str) -> None:
    """A field literally named `[key]` is no pydantic key marker: an unknown field at its path (it was an
    IndexError, the marker stripped and an empty path left)."""
    from trnplan.specs.load import load_specs
    from trnplan.testkit.builders import base_specs

    (tmp_path / "w.yaml").write_text(yaml.safe_dump(base_specs(), sort_keys=False))
    with pytest.raises(SpecError) as info:
        load_specs([tmp_path], [override])
    (problem,) = info.value.problems
    assert problem.file == "--set" and problem.line == 1
    assert problem.path == override.removesuffix("=1") and "unknown field '[key]'" in problem.message


# --- files that are not regular, and files swapped while being read ----------------------------------


def test_a_file_swapped_for_a_fifo_after_its_stat_is_refused_without_blocking(tmp_path: Path) -> None:
    """stat() said regular file; what open() gets is a FIFO with no writer: O_NONBLOCK makes the open
    return at once and fstat() refuses it, instead of a read that waits forever."""
    from unittest import mock

    import trnplan.specs.readfile

    regular = tmp_path / "regular.yaml"
    regular.write_text("a: 1\n")
    pipe = tmp_path / "pipe.yaml"
    os.mkfifo(pipe)
    real_stat = os.stat
    with mock.patch.object(
        trnplan.specs.readfile.os, "stat", lambda p, *a, **k: real_stat(regular if Path(p) == pipe else p)
    ):
        with pytest.raises(SpecError) as info:
            read_yaml(pipe)
    assert [p.message for p in info.value.problems] == ["not a regular file (a pipe, socket or device?)"]


def test_read_yaml_refuses_devices_and_folders_behind_links(tmp_path: Path) -> None:
    os.symlink("/dev/zero", tmp_path / "zero.yaml")
    os.symlink(tmp_path, tmp_path / "dir.yaml")
    for name, message in (
        ("zero.yaml", "not a regular file (a pipe, socket or device?)"),
        ("dir.yaml", "is a directory, not a YAML file"),
    ):
        with pytest.raises(SpecError) as info:
            read_yaml(tmp_path / name)
        assert [p.message for p in info.value.problems] == [message]


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        # one space too far: the key reads as more of the value above, not as "a second ':'"
        (
            "sites:\n  ohio:\n    it_power_mw: 40\n     rack_positions: 900\n    cooling: [air]\n",
            "4:6",
            "'rack_positions' is 1 space right of 'it_power_mw' on line 3, which holds a value, so YAML "
            "reads it as more of that value: start it in column 5, as 'it_power_mw'",
        ),
        (
            "forms:\n  f:\n    rack_bom:\n      - item: tray\n         qty: 18\n",
            "5:10",
            "'qty' is 1 space right of 'item' on line 4, which holds a value, so YAML reads it as more of "
            "that value: start it in column 9, as 'item'",
        ),
        # one space short: between two mappings' columns
        (
            "sites:\n  ohio:\n    it_power_mw: 40\n    rack_positions: 900\n   cooling: [air]\n"
            "    electricity_usd_per_kwh: 0.07\n",
            "5:4",
            "'cooling' is indented less than 'rack_positions' on line 4 (column 5) and more than 'ohio' on "
            "line 2 (column 3), so it belongs with neither: start it in column 5, beside 'rack_positions', "
            "or in column 3, beside 'ohio'",
        ),
        # dedented to the parent's column: the parser stops a line later; the key is named on its own line
        (
            "sites:\n  ohio:\n    it_power_mw: 40\n    rack_positions: 900\n  cooling: [air, liquid]\n"
            "    electricity_usd_per_kwh: 0.07\n",
            "5:3",
            "'cooling' is indented less than the keys around it ('rack_positions' on line 4, "
            "'electricity_usd_per_kwh' on line 6), which ends their mapping: start it in column 5, "
            "as they do",
        ),
        # the same with a value on the dedented key's line: the parser reads the next key as more of
        # that value ("mapping values are not allowed here"); the dedented key is still the one named
        (
            "sites:\n  ohio:\n    it_power_mw: 40\n  rack_positions: 900\n    cooling: [air]\n",
            "4:3",
            "'rack_positions' is indented less than the keys around it ('it_power_mw' on line 3, "
            "'cooling' on line 5), which ends their mapping: start it in column 5, as they do",
        ),
    ],
)
def test_a_key_indented_off_by_a_few_spaces_is_named_with_its_column(
    text: str, where: str, words: str
) -> None:
    (problem,) = refusal(text)
    assert problem.startswith(f"f.yaml:{where}: YAML syntax: {words} (the parser: "), problem
    assert "second ':'" not in problem


def test_a_real_second_colon_is_still_called_one() -> None:
    from trnplan.specs.yaml_words import plain_syntax

    (problem,) = refusal("chips:\n  x: 1\n  y: a: b\n")
    assert problem.startswith("f.yaml:3:7: ")
    assert "a second ':' on this line" in plain_syntax(problem.split(": ", 1)[1])

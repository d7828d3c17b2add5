"""Hostile input ends in a located SpecError (exit 3), never a traceback, a hang or unbounded memory.

No timing asserts: an alias bomb that were expanded would not finish at all, so finishing is the test.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from trnplan.errors import SpecError
from trnplan.specs import yamlsafe
from trnplan.specs.load import load_specs
from trnplan.specs.yamlsafe import MAX_DEPTH, MAX_NODES

BILLION_LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
chips: {x: *i}
"""


def only_problem(directory: Path) -> str:
    with pytest.raises(SpecError) as info:
        load_specs([directory])
    problems = info.value.problems
    assert len(problems) == 1, problems
    return str(problems[0])


def spec_dir(tmp_path: Path, name: str, content: str | bytes) -> Path:
    directory = tmp_path / "specs"
    directory.mkdir(exist_ok=True)
    path = directory / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return directory


def test_billion_laughs_is_refused_before_expansion(tmp_path: Path) -> None:
    d = spec_dir(tmp_path, "lol.yaml", BILLION_LAUGHS)
    assert only_problem(d) == (
        f"{d}/lol.yaml:6:4: this value expands to more than {MAX_NODES} YAML nodes through aliases "
        "(*name repeats &name); refusing it (an alias bomb?)"
    )


def test_an_alias_bomb_through_merge_keys_is_refused(tmp_path: Path) -> None:
    text = "a: &a {" + ", ".join(f"k{i}: {i}" for i in range(10)) + "}\n"
    text += "b: &b {" + ", ".join(f"m{i}: {{<<: *a}}" for i in range(10)) + "}\n"
    for prev, name in zip("bcdefgh", "cdefghi", strict=True):
        text += f"{name}: &{name} {{" + ", ".join(f"m{i}: {{<<: *{prev}}}" for i in range(10)) + "}\n"
    d = spec_dir(tmp_path, "merge.yaml", text)
    assert re.match(
        rf"{d}/merge.yaml:\d+:4: this value expands to more than {MAX_NODES} YAML nodes", only_problem(d)
    )


def test_recursive_aliases_are_refused(tmp_path: Path) -> None:
    d = spec_dir(tmp_path, "loop.yaml", "chips: &x {trn3: [*x]}\n")
    assert only_problem(d) == f"{d}/loop.yaml:1:8: recursive alias: this collection contains itself"


def test_python_tags_are_refused_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    d = spec_dir(
        tmp_path,
        "evil.yaml",
        f"chips: !!python/object/apply:os.system ['touch {marker}']\n"
        f"sites: {{x: !!python/object/new:pathlib.Path ['{marker}']}}\n",
    )
    with pytest.raises(SpecError) as info:
        load_specs([d])
    assert [str(p) for p in info.value.problems] == [
        f"{d}/evil.yaml:1:8: chips: tag '!!python/object/apply:os.system' is not allowed: specs are plain "
        "YAML (mappings, lists, text, numbers, booleans, null)",
        f"{d}/evil.yaml:2:12: sites.x: tag '!!python/object/new:pathlib.Path' is not allowed: specs are "
        "plain YAML (mappings, lists, text, numbers, booleans, null)",
    ]
    assert not marker.exists()


def test_a_huge_file_is_refused_without_reading_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "specs"
    d.mkdir()
    with open(d / "huge.yaml", "wb") as handle:
        handle.truncate(100 * 1024 * 1024)  # sparse: 100 MiB of size, no data on disk

    def no_open(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file was opened")

    monkeypatch.setattr(yamlsafe, "open", no_open, raising=False)
    assert only_problem(d) == f"{d}/huge.yaml: file is 100.0 MiB, over the 4.0 MiB limit for a spec file"


def test_binary_and_non_utf8_files_are_refused(tmp_path: Path) -> None:
    d = spec_dir(tmp_path, "a.yaml", b"chips:\n  x: \x00\x01\x02\xff\n")
    spec_dir(tmp_path, "b.yaml", b"chips:\n  trn3: {name: Tr\xe4nium}\n")
    spec_dir(tmp_path, "c.yaml", "chips: {}\n".encode("utf-16"))
    with pytest.raises(SpecError) as info:
        load_specs([d])
    assert [str(p) for p in info.value.problems] == [
        f"{d}/a.yaml:2:6: binary file (NUL byte); a spec file is UTF-8 text",
        f"{d}/b.yaml:2:18: not UTF-8 text (byte 0xe4); save the file as UTF-8",
        f"{d}/c.yaml: file is UTF-16 encoded; save it as UTF-8",
    ]


def test_a_directory_without_yaml_is_refused(tmp_path: Path) -> None:
    d = spec_dir(tmp_path, "readme.txt", "chips: {}\n")
    (d / "sub").mkdir()
    assert only_problem(d) == f"{d}: no spec files (*.yaml, *.yml) in this directory"


def test_symlink_loops_are_refused(tmp_path: Path) -> None:
    d = spec_dir(tmp_path, "ok.yaml", "chips: {}\n")
    os.symlink("loop.yaml", d / "loop.yaml")
    os.symlink(".", d / "again")  # a directory loop: followed once, not forever
    assert only_problem(d) == f"{d}/loop.yaml: symlink loop (too many levels of symbolic links)"


def test_a_broken_symlink_and_a_named_pipe_are_refused(tmp_path: Path) -> None:
    d = spec_dir(tmp_path, "ok.yaml", "chips: {}\n")
    os.symlink("gone.yaml", d / "broken.yaml")
    os.mkfifo(d / "pipe.yaml")  # reading it would block forever
    with pytest.raises(SpecError) as info:
        load_specs([d])
    assert [str(p) for p in info.value.problems] == [
        f"{d}/broken.yaml: broken symlink",
        f"{d}/pipe.yaml: not a regular file (a pipe, socket or device?)",
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_refused(tmp_path: Path) -> None:
    d = spec_dir(tmp_path, "secret.yaml", "chips: {}\n")
    (d / "secret.yaml").chmod(0)
    try:
        assert only_problem(d) == f"{d}/secret.yaml: cannot read: Permission denied"
    finally:
        (d / "secret.yaml").chmod(0o644)


def test_deep_nesting_is_refused_in_flow_and_block_style(tmp_path: Path) -> None:
    d = spec_dir(tmp_path, "flow.yaml", "chips: " + "[" * 100_000 + "]" * 100_000 + "\n")
    spec_dir(tmp_path, "block.yaml", "".join("  " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 5)))
    with pytest.raises(SpecError) as info:
        load_specs([d])
    assert [str(p) for p in info.value.problems] == [
        f"{d}/block.yaml:{MAX_DEPTH}:{2 * MAX_DEPTH - 1}: nesting deeper than {MAX_DEPTH} levels",
        f"{d}/flow.yaml:1:{8 + MAX_DEPTH - 1}: nesting deeper than {MAX_DEPTH} levels",
    ]


def test_deep_nesting_through_aliases_is_refused(tmp_path: Path) -> None:
    text = "a0: &a0 [1]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, MAX_DEPTH + 5))
    d = spec_dir(tmp_path, "chain.yaml", text)
    assert "nesting deeper than 64 levels (through aliases)" in only_problem(d)


def test_many_plain_nodes_are_refused() -> None:
    # The default limit is met the same way, only slower: the pure-Python parser composes ~30k nodes/s.
    text = "chips: [" + "0," * 1000 + "0]\n"
    assert yamlsafe.parse_yaml(text, file="wide.yaml", max_nodes=2000).data["chips"] == [0] * 1001
    with pytest.raises(SpecError, match="wide.yaml:1:2003: more than 1000 YAML nodes"):
        yamlsafe.parse_yaml(text, file="wide.yaml", max_nodes=1000)


def test_non_string_keys_at_the_top_two_levels(tmp_path: Path) -> None:
    d = spec_dir(tmp_path, "keys.yaml", "1: x\nchips:\n  2: {}\n  null: {}\n  [a]: {}\n")
    with pytest.raises(SpecError) as info:
        load_specs([d])
    assert [str(p) for p in info.value.problems] == [
        f"{d}/keys.yaml:1:1: key '1' is read as the whole number 1; keys must be text (quote it: '1')",
        f"{d}/keys.yaml:3:3: chips: key '2' is read as the whole number 2; keys must be text (quote it: '2')",
        f"{d}/keys.yaml:4:3: chips: key 'null' is read as null (an empty value); keys must be text "
        "(quote it: 'null')",
        f"{d}/keys.yaml:5:3: chips: a key must be text, not a list",
    ]


def test_absurd_numbers_are_refused_not_crashed_on(tmp_path: Path) -> None:
    d = spec_dir(
        tmp_path,
        "nums.yaml",
        "cooling:\n"
        "  a: {max_rack_kw: .nan, pue: 1.2, capex_usd_per_kw: 1}\n"
        "  b: {max_rack_kw: 40, pue: -.inf, capex_usd_per_kw: 1}\n"
        "  c: {max_rack_kw: 40, pue: 1.2, capex_usd_per_kw: 1e999}\n"
        "  d: {max_rack_kw: 40, pue: 1.2, capex_usd_per_kw: " + "9" * 5000 + "}\n"
        "  e: {max_rack_kw: -40, pue: 1.2, capex_usd_per_kw: 1}\n",
    )
    with pytest.raises(SpecError) as info:
        load_specs([d])
    assert [str(p) for p in info.value.problems] == [
        f"{d}/nums.yaml:2:7: cooling.a.max_rack_kw: nan is not a finite number",
        f"{d}/nums.yaml:3:24: cooling.b.pue: -inf is not a finite number",
        f"{d}/nums.yaml:4:34: cooling.c.capex_usd_per_kw: inf is not a finite number",
        f"{d}/nums.yaml:5:52: cooling.d.capex_usd_per_kw: integer 999999999999999999999999... is too large "
        "(more than 64 bits)",
        f"{d}/nums.yaml:6:7: cooling.e.max_rack_kw: -40 kW is outside the plausible range 1 to 1000 kW",
    ]


def test_control_characters_and_syntax_errors_are_located(tmp_path: Path) -> None:
    d = spec_dir(tmp_path, "ctl.yaml", "chips:\n  x: {name: \x1b[31mred}\n")
    spec_dir(tmp_path, "tab.yaml", "chips:\n\tx: {}\n")
    with pytest.raises(SpecError) as info:
        load_specs([d])
    assert [str(p) for p in info.value.problems] == [
        f"{d}/ctl.yaml:2:13: character U+001B is not allowed in YAML text",
        f"{d}/tab.yaml:2:1: YAML syntax: a tab: YAML indents with spaces only; replace the tab with spaces "
        "(the parser: found character '\\t' that cannot start any token (while scanning for the next token))",
    ]


def test_invisible_and_bidi_characters_are_shown_as_escapes(tmp_path: Path) -> None:
    """A zero-width space in a key used to give "unknown field 'tdp_w'; did you mean 'tdp_w'?"; a bidi
    override reordered the line on screen; a line separator split one problem over two lines."""
    d = spec_dir(
        tmp_path,
        "odd.yaml",
        "cooling:\n  air:\n    max_rack_kw\u200b: 40\n    pue: 1.2\n    capex_usd_per_kw: 1\n"
        "  li\u00a0quid: {max_rack_kw: 40, pue: 1.2, capex_usd_per_kw: 1}\n"
        "  \u202edrow: {max_rack_kw: 40, pue: 1.2, capex_usd_per_kw: 1}\n",
    )
    with pytest.raises(SpecError) as info:
        load_specs([d])
    lines = str(info.value).split("\n")
    assert lines == [
        f"{d}/odd.yaml:2:3: cooling.air: missing required field 'max_rack_kw'",
        f"{d}/odd.yaml:3:5: cooling.air.max_rack_kw\\u200b: unknown field 'max_rack_kw\\u200b'; "
        "did you mean 'max_rack_kw'?",
        f"{d}/odd.yaml:6:3: cooling.li\\xa0quid: 'li\\xa0quid' is not a valid id: ids use lowercase letters, "
        "digits, '.' and '-', and start with a letter or digit; did you mean 'li-quid'?",
        f"{d}/odd.yaml:7:3: cooling.\\u202edrow: '\\u202edrow' is not a valid id: ids use lowercase letters, "
        "digits, '.' and '-', and start with a letter or digit; did you mean 'drow'?",
        "4 problems found",
    ]
    assert all(line.isprintable() for line in lines)

"""Hostile files through the real command: `validate`, `optimize`, `bom`, `diff` and `optimize --check`
refuse each with exit 3 and a located or plain message, fast and in bounded memory, never a traceback.

Spec side (`--specs DIR`): an alias bomb, `!!python/object/apply:os.system`, duplicate keys, a 100 MB file
(sparse), binary, Latin-1 and UTF-16 files, a directory without YAML, a symlink loop, a directory loop,
a FIFO and /dev/zero named *.yaml, 100,000-deep nesting. Plan side (PLAN arguments and the file
`--check` compares with): corrupt, truncated, foreign (Kubernetes YAML, JSON, a spec file), future-format,
merge-conflicted and alias-bomb plan files. The loader's own unit tests of the same files are in
test_load_hostile.py; here it is the command end to end.

No timing asserts: an alias bomb expanded, or /dev/zero read, would not finish at all, so finishing is
the test; memory is bounded with tracemalloc.
"""

from __future__ import annotations

import os
import re
import shutil
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path

import conftest
import pytest
import yaml

from trnplan.errors import EXIT_INVALID, EXIT_OK
from trnplan.specs.yamlsafe import MAX_DEPTH, MAX_NODES
from trnplan.testkit.builders import base_specs

run = partial(conftest.run, columns=200)
"""The CLI in-process (tests/conftest.py), 200 columns wide."""

REPO = Path(__file__).resolve().parents[1]
SCENARIO = "trn3-100k"  # a shipped scenario: optimize must refuse the specs before it gets to solving

BILLION_LAUGHS = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)
BILLION_LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + BILLION_LAUGHS


def shipped_plus(tmp_path: Path) -> Path:
    """A copy of the shipped specs, to which a test adds one hostile file."""
    specs = tmp_path / "specs"
    shutil.copytree(REPO / "specs", specs)
    return specs


# Each builder adds its hostile content to a spec directory and returns the directory to pass to
# --specs and the one problem line expected (a regex; DIR stands for the directory).
Builder = Callable[[Path], tuple[Path, str]]


def alias_bomb(tmp: Path) -> tuple[Path, str]:
    d = shipped_plus(tmp)
    (d / "lol.yaml").write_text(BILLION_LAUGHS + "chips: {x: *i}\n")
    return d, rf"DIR/lol.yaml:\d+:\d+: this value expands to more than {MAX_NODES} YAML nodes through aliases"


def python_tag(tmp: Path) -> tuple[Path, str]:
    d = shipped_plus(tmp)
    (d / "evil.yaml").write_text(f"chips: !!python/object/apply:os.system ['touch {tmp}/pwned']\n")
    return d, r"DIR/evil.yaml:1:8: chips: tag '!!python/object/apply:os.system' is not allowed"


def duplicate_keys(tmp: Path) -> tuple[Path, str]:
    d = shipped_plus(tmp)
    (d / "more-cooling.yaml").write_text(
        "cooling:\n  chilled: {max_rack_kw: 40, pue: 1.3, capex_usd_per_kw: 1}\n"
        "  chilled: {max_rack_kw: 45, pue: 1.3, capex_usd_per_kw: 1}\n"
    )
    return d, r"DIR/more-cooling.yaml:3:3: cooling.chilled: duplicate key 'chilled' \(first at line 2\)"


def hundred_mb(tmp: Path) -> tuple[Path, str]:
    d = shipped_plus(tmp)
    with open(d / "huge.yaml", "wb") as handle:
        handle.truncate(100 * 1024 * 1024)  # sparse: the size without the data
    return d, r"DIR/huge.yaml: file is 100.0 MiB, over the 4.0 MiB limit for a spec file"


def binary(tmp: Path) -> tuple[Path, str]:
    d = shipped_plus(tmp)
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10" + bytes(range(256))
    (d / "logo.yaml").write_bytes(png)
    return d, r"DIR/logo.yaml:3:1: binary file \(NUL byte\); a spec file is UTF-8 text"


def latin1(tmp: Path) -> tuple[Path, str]:
    d = shipped_plus(tmp)
    (d / "latin1.yaml").write_bytes("chips:\n  x: {name: Trän}\n".encode("latin-1"))
    return d, r"DIR/latin1.yaml:2:15: not UTF-8 text \(byte 0xe4\); save the file as UTF-8"


def utf16(tmp: Path) -> tuple[Path, str]:
    d = shipped_plus(tmp)
    (d / "utf16.yaml").write_bytes("chips: {}\n".encode("utf-16"))
    return d, r"DIR/utf16.yaml: file is UTF-16 encoded; save it as UTF-8"


def no_yaml(tmp: Path) -> tuple[Path, str]:
    d = tmp / "notes"
    d.mkdir()
    (d / "README.txt").write_text("chips: {}\n")
    (d / "specs.json").write_text("{}\n")
    (d / ".hidden.yaml").write_text("chips: {}\n")  # hidden files are not specs
    return d, r"DIR: no spec files \(\*\.yaml, \*\.yml\) in this directory"


def symlink_loop(tmp: Path) -> tuple[Path, str]:
    d = shipped_plus(tmp)
    os.symlink("loop.yaml", d / "loop.yaml")
    return d, r"DIR/loop.yaml: symlink loop \(too many levels of symbolic links\)"


def specs_dir_is_a_loop(tmp: Path) -> tuple[Path, str]:
    d = tmp / "specs"
    os.symlink("specs", d)
    return d, r"DIR: spec directory is a broken symlink or a symlink loop"


def fifo(tmp: Path) -> tuple[Path, str]:
    d = shipped_plus(tmp)
    os.mkfifo(d / "pipe.yaml")  # opening it would block forever
    return d, r"DIR/pipe.yaml: not a regular file \(a pipe, socket or device\?\)"


def dev_zero(tmp: Path) -> tuple[Path, str]:
    d = shipped_plus(tmp)
    os.symlink("/dev/zero", d / "zero.yaml")  # reading it would never end
    return d, r"DIR/zero.yaml: not a regular file \(a pipe, socket or device\?\)"


def deep_nesting(tmp: Path) -> tuple[Path, str]:
    d = shipped_plus(tmp)
    (d / "deep.yaml").write_text("chips: " + "[" * 100_000 + "]" * 100_000 + "\n")
    return d, rf"DIR/deep.yaml:1:\d+: nesting deeper than {MAX_DEPTH} levels"


HOSTILE_SPECS: dict[str, Builder] = {
    f.__name__: f
    for f in (
        alias_bomb,
        python_tag,
        duplicate_keys,
        hundred_mb,
        binary,
        latin1,
        utf16,
        no_yaml,
        symlink_loop,
        specs_dir_is_a_loop,
        fifo,
        dev_zero,
        deep_nesting,
    )
}


def assert_refused(result, directory: Path, expected: str) -> None:
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "internal error" not in output, output
    assert result.exit_code == EXIT_INVALID, output
    lines = result.stderr.rstrip("\n").split("\n")
    assert lines[-1] == "1 problem found", result.stderr
    assert re.fullmatch(expected.replace("DIR", re.escape(str(directory))) + ".*", lines[0]), lines[0]


@pytest.mark.parametrize("name", sorted(HOSTILE_SPECS))
def test_validate_refuses_hostile_specs(name: str, tmp_path: Path) -> None:
    directory, expected = HOSTILE_SPECS[name](tmp_path)
    assert_refused(run("validate", "--specs", str(directory)), directory, expected)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("name", sorted(HOSTILE_SPECS))
def test_optimize_refuses_hostile_specs_before_solving(name: str, tmp_path: Path) -> None:
    directory, expected = HOSTILE_SPECS[name](tmp_path)
    plans = tmp_path / "plans"
    assert_refused(
        run("optimize", SCENARIO, "--specs", str(directory), "--plans", str(plans)), directory, expected
    )
    assert not plans.exists()


def test_a_directory_loop_is_followed_once(tmp_path: Path) -> None:
    """`again -> .` inside the specs: each file is read once (no 'defined twice', no endless walk)."""
    directory = shipped_plus(tmp_path)
    os.symlink(".", directory / "again")
    result = run("validate", "--specs", str(directory))
    assert result.exit_code == EXIT_OK, result.output


@pytest.mark.parametrize("name", ["alias_bomb", "hundred_mb", "deep_nesting"])
def test_hostile_specs_are_refused_in_bounded_memory(name: str, tmp_path: Path) -> None:
    """Python's peak allocation while refusing stays that of loading the shipped specs, give or take."""
    directory, _ = HOSTILE_SPECS[name](tmp_path)
    tracemalloc.start()
    try:
        result = run("validate", "--specs", str(directory))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == EXIT_INVALID
    assert peak < 64 * 1024 * 1024, f"{peak / 1e6:.0f} MB"


# --- plan files: bom, diff and optimize --check --------------------------------------------------------


@pytest.fixture(scope="module")
def good_plan(tmp_path_factory) -> tuple[Path, Path]:
    """(project folder, its plans/s.yaml) for the builders' tiny world, solved once."""
    root = tmp_path_factory.mktemp("project")
    (root / "specs").mkdir()
    (root / "specs" / "world.yaml").write_text(yaml.safe_dump(base_specs(), sort_keys=False))
    plan = root / "plans" / "s.yaml"
    result = run("optimize", "s", "--specs", str(root / "specs"), "--out", str(plan), "--alternatives", "0")
    assert result.exit_code == EXIT_OK, result.output
    return root, plan


def hostile_plans(good: str) -> dict[str, tuple[bytes, str]]:
    """name -> (file content, expected message regex; FILE stands for the path)."""
    half = len(good) // 2
    return {
        "empty": (b"", r"FILE: not a trnplan plan file"),
        "truncated": (
            good[:half].encode(),
            r"FILE(:\d+:\d+)?: not a (readable|trnplan) plan file|FILE:\d+:\d+: malformed",
        ),
        "truncated mid-character": (
            good.encode()[:half] + "é€".encode()[:3],
            r"FILE: not a plan file \(not UTF-8",
        ),
        "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", r"FILE: not a plan file \(not UTF-8"),
        "latin-1": (
            "format: trnplan-plan/1\nscenario: caf\xe9\n".encode("latin-1"),
            r"FILE: not a plan file \(not UTF-8",
        ),
        "kubernetes": (
            b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n",
            r"FILE: not a trnplan plan file",
        ),
        "json": (b'{"name": "web", "replicas": 3}\n', r"FILE: not a trnplan plan file"),
        "json list": (b"[1, 2, 3]\n", r"FILE: not a trnplan plan file"),
        "a spec file": ((REPO / "specs" / "cooling.yaml").read_bytes(), r"FILE: not a trnplan plan file"),
        "future format": (
            good.replace("trnplan-plan/1", "trnplan-plan/9").encode(),
            r"FILE: plan format 'trnplan-plan/9' is not readable by this trnplan",
        ),
        "phased format without periods": (
            good.replace("trnplan-plan/1", "trnplan-plan/2").encode(),
            r"FILE:1:1: malformed or truncated plan file: .*periods exactly when its format is "
            r"trnplan-plan/2",
        ),
        "format not text": (b"format: [trnplan-plan/1]\n", r"FILE: not a trnplan plan file"),
        "missing fields": (b"format: trnplan-plan/1\nscenario: s\n", r"FILE:1:1: malformed"),
        "wrong types": (
            good.replace("units: ", "units: many # ", 1).encode(),
            r"FILE:\d+:\d+: malformed or truncated plan file: sites\.a\.deployments\.0\.units: ",
        ),
        "merge conflict": (
            f"<<<<<<< HEAD\n{good}=======\n{good}>>>>>>> branch\n".encode(),
            r"FILE:\d+:\d+: not a readable plan file \(YAML",
        ),
        "python tag": (
            b"format: !!python/object/apply:os.system ['true']\n",
            r"FILE:1:9: not a readable plan file: format: tag '!!python/object/apply:os\.system' is not",
        ),
        "alias bomb": (
            ("format: trnplan-plan/1\n" + BILLION_LAUGHS.replace("i: &i", "binding: &i")).encode(),
            r"FILE:\d+:\d+: not a readable plan file \(YAML: an alias",
        ),
        "deep nesting": (
            ("format: trnplan-plan/1\nsolver: " + "[" * 100_000 + "]" * 100_000 + "\n").encode(),
            r"FILE:2:\d+: not a readable plan file \(YAML: nesting deeper than",
        ),
        "control character": (
            good.replace("scenario: s", "scenario: s\x07").encode(),
            r"FILE(:\d+:\d+)?: not a readable plan file",
        ),
    }


PLAN_CASES = sorted(hostile_plans("format: trnplan-plan/1\n"))


def write_hostile(good_plan: tuple[Path, Path], tmp_path: Path, name: str) -> tuple[Path, str]:
    content, expected = hostile_plans(good_plan[1].read_text())[name]
    path = tmp_path / "plans" / "s.yaml"
    path.parent.mkdir()
    path.write_bytes(content)
    return path, expected


def assert_plan_refused(result, path: Path, expected: str) -> None:
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "internal error" not in output, output
    assert result.exit_code == EXIT_INVALID, (result.exit_code, output)
    first = result.stderr.split("\n")[0]
    assert first.startswith("error: "), result.stderr
    assert re.match(expected.replace("FILE", re.escape(str(path))), first.removeprefix("error: ")), first


@pytest.mark.parametrize("name", PLAN_CASES)
def test_bom_refuses_hostile_plan_files(name: str, good_plan, tmp_path: Path) -> None:
    path, expected = write_hostile(good_plan, tmp_path, name)
    assert_plan_refused(run("bom", str(path)), path, expected)


@pytest.mark.parametrize("name", PLAN_CASES)
def test_diff_refuses_hostile_plan_files_on_either_side(name: str, good_plan, tmp_path: Path) -> None:
    path, expected = write_hostile(good_plan, tmp_path, name)
    good = str(good_plan[1])
    assert_plan_refused(run("diff", good, str(path)), path, expected)
    assert_plan_refused(run("diff", str(path), good, "--format", "json"), path, expected)


@pytest.mark.parametrize("name", PLAN_CASES)
def test_optimize_check_refuses_a_hostile_plan_on_disk(name: str, good_plan, tmp_path: Path) -> None:
    """The file --check compares with is bad input (exit 3, nothing written), not drift (exit 1)."""
    path, expected = write_hostile(good_plan, tmp_path, name)
    before = path.read_bytes()
    result = run(
        "optimize",
        "s",
        "--specs",
        str(good_plan[0] / "specs"),
        "--out",
        str(path),
        "--check",
        "--alternatives",
        "0",
    )
    assert_plan_refused(result, path, expected)
    assert "not checked" in result.stderr
    assert path.read_bytes() == before


def test_optimize_check_still_reports_real_drift_as_1(good_plan, tmp_path: Path) -> None:
    plan = tmp_path / "s.yaml"
    world = base_specs()
    world["sites"]["a"]["electricity_usd_per_kwh"] = 0.2
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "world.yaml").write_text(yaml.safe_dump(world))
    shutil.copy(good_plan[1], plan)
    result = run(
        "optimize",
        "s",
        "--specs",
        str(tmp_path / "specs"),
        "--out",
        str(plan),
        "--check",
        "--alternatives",
        "0",
    )
    assert result.exit_code == 1, result.output
    assert "out of date (drift)" in result.stdout


# --- where plans are written --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("layout", "args", "message"),
    [
        (
            "plans is a file",
            ["--plans", "{tmp}/plans"],
            "{tmp}/plans/s.yaml: cannot write: {tmp}/plans is a file, not a folder",
        ),
        (
            "a file above plans",
            ["--plans", "{tmp}/plans/deeper"],
            "{tmp}/plans/deeper/s.yaml: cannot write: {tmp}/plans is a file, not a folder",
        ),
        ("out is a folder", ["--out", "{tmp}/out.yaml"], "{tmp}/out.yaml: cannot write: is a folder"),
    ],
)
def test_an_unwritable_plan_path_is_exit_3_naming_it(
    layout: str, args: list[str], message: str, good_plan, tmp_path: Path
) -> None:
    """As root, permissions do not stop a write (and chattr is unavailable): a file where a folder must be
    is what stops it here."""
    if layout == "out is a folder":
        (tmp_path / "out.yaml").mkdir()
    else:
        (tmp_path / "plans").write_text("not a folder\n")
    result = run(
        "optimize",
        "s",
        "--specs",
        str(good_plan[0] / "specs"),
        "--alternatives",
        "0",
        *[a.format(tmp=tmp_path) for a in args],
    )
    assert result.exit_code == EXIT_INVALID, result.output
    assert f"error: {message.format(tmp=tmp_path)}" in result.stderr
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) in (["plans"], ["out.yaml"])  # no temp file left


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes whatever the mode")
def test_a_read_only_plans_folder_is_exit_3_naming_it(good_plan, tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    plans.mkdir()
    plans.chmod(0o500)
    try:
        result = run("optimize", "s", "--specs", str(good_plan[0] / "specs"), "--plans", str(plans))
    finally:
        plans.chmod(0o700)
    assert result.exit_code == EXIT_INVALID
    assert f"error: {plans}/s.yaml: cannot write: Permission denied" in result.stderr

"""Where trnplan writes (`optimize --out`/`--plans`, `schema --out`; `trnplan.files`): only where a regular
file is or nothing is. A directory, FIFO, socket, device or symlink at the path is exit 3 naming it, the
thing at the path left as it was (a device node not replaced by a file, a link not followed nor replaced),
and no temporary file left; a written file never has setuid, setgid or world-write.

As root (CI, containers) permissions stop nothing, which is what made `--out /dev/null` replace the device
node: these tests make their own device nodes (mknod, root only) in a temporary folder.
"""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Callable
from functools import partial
from pathlib import Path

import conftest
import pytest
import yaml

from trnplan.errors import EXIT_INVALID, EXIT_OK, InputError
from trnplan.files import SAFE_MODE_MASK, check_writable, write_text_atomic
from trnplan.testkit.builders import base_specs

run = partial(conftest.run, columns=200)
"""The CLI in-process (tests/conftest.py), 200 columns wide."""

ROOT = os.geteuid() == 0


def fifo(path: Path) -> None:
    os.mkfifo(path)


def null_device(path: Path) -> None:
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # what /dev/null is


def unix_socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays


def folder(path: Path) -> None:
    path.mkdir()


def link_to_a_file(path: Path) -> None:
    target = path.parent / "target.yaml"
    target.write_text("the target\n")
    target.chmod(0o4755)
    os.symlink(target.name, path)


def link_to_nowhere(path: Path) -> None:
    os.symlink("nowhere.yaml", path)


def link_to_a_device(path: Path) -> None:
    os.symlink("/dev/null", path)


KINDS: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (fifo, "not a regular file (a pipe, socket or device?); trnplan writes only regular files"),
    "device": (
        null_device,
        "not a regular file (a pipe, socket or device?); trnplan writes only regular files",
    ),
    "socket": (
        unix_socket,
        "not a regular file (a pipe, socket or device?); trnplan writes only regular files",
    ),
    "folder": (folder, "is a folder"),
    "link to a file": (link_to_a_file, "is a symlink (to target.yaml); trnplan does not write through links"),
    "link to nowhere": (
        link_to_nowhere,
        "is a symlink (to nowhere.yaml); trnplan does not write through links",
    ),
    "link to a device": (
        link_to_a_device,
        "is a symlink (to /dev/null); trnplan does not write through links",
    ),
}


def snapshot(folder: Path) -> dict[str, tuple[int, str, bytes | None]]:
    """Every entry of `folder`: its lstat mode, link target and (regular files) content."""
    out = {}
    for p in sorted(folder.iterdir()):
        info = os.lstat(p)
        target = os.readlink(p) if p.is_symlink() else ""
        content = p.read_bytes() if stat.S_ISREG(info.st_mode) else None
        out[p.name] = (info.st_mode, target, content)
    return out


def make(kind: str, tmp_path: Path) -> tuple[Path, str]:
    build, reason = KINDS[kind]
    if kind == "device" and not ROOT:
        pytest.skip("mknod needs root")
    path = tmp_path / "out.yaml"
    build(path)
    return path, reason


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_write_refuses_what_is_not_a_regular_file_and_leaves_it(kind: str, tmp_path: Path) -> None:
    path, reason = make(kind, tmp_path)
    before = snapshot(tmp_path)
    with pytest.raises(InputError) as info:
        check_writable(path)
    assert str(info.value).startswith(f"{path}: cannot write: {reason}"), str(info.value)
    with pytest.raises(InputError) as info:
        write_text_atomic(path, "new text\n")
    assert str(info.value).startswith(f"{path}: cannot write: {reason}"), str(info.value)
    assert snapshot(tmp_path) == before  # nothing replaced, followed, or left behind


@pytest.mark.parametrize(
    ("old", "new"), [(0o4777, 0o775), (0o6755, 0o755), (0o2770, 0o770), (0o666, 0o664), (0o600, 0o600)]
)
def test_a_replaced_file_keeps_its_mode_without_setuid_setgid_or_world_write(
    old: int, new: int, tmp_path: Path
) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text("old\n")
    path.chmod(old)
    write_text_atomic(path, "new\n")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == new
    assert SAFE_MODE_MASK == 0o6002


def test_a_new_file_is_never_world_writable_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        write_text_atomic(tmp_path / "fresh.yaml", "x\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "fresh.yaml").stat().st_mode) == 0o664


def test_links_above_the_file_are_followed(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "plans")
    write_text_atomic(tmp_path / "plans" / "s.yaml", "x\n")
    assert (tmp_path / "real" / "s.yaml").read_text() == "x\n"


@pytest.fixture(scope="module")
def specs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("world")
    (folder / "world.yaml").write_text(yaml.safe_dump(base_specs(), sort_keys=False))
    return folder


def assert_refused(result, path: Path, reason: str) -> None:
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "internal error" not in output, output
    assert result.exit_code == EXIT_INVALID, (result.exit_code, output)
    assert result.stderr.startswith(f"error: {path}: cannot write: {reason}"), result.stderr
    assert "wrote" not in result.stderr


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_optimize_out_refuses_it_before_solving(kind: str, specs: Path, tmp_path: Path) -> None:
    path, reason = make(kind, tmp_path)
    before = snapshot(tmp_path)
    result = run("optimize", "s", "--specs", str(specs), "--out", str(path), "--alternatives", "0")
    assert_refused(result, path, reason)
    assert result.stdout == ""  # no plan printed: it was not solved
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_schema_out_refuses_it(kind: str, tmp_path: Path) -> None:
    path, reason = make(kind, tmp_path)
    before = snapshot(tmp_path)
    assert_refused(run("schema", "--out", str(path)), path, reason)
    assert snapshot(tmp_path) == before


def test_a_plans_folder_holding_a_link_is_refused_for_that_plan(specs: Path, tmp_path: Path) -> None:
    """A PR committing `plans/s.yaml -> /etc/passwd` cannot make `trnplan optimize` (as root) write there."""
    plans = tmp_path / "plans"
    plans.mkdir()
    victim = tmp_path / "passwd"
    victim.write_text("root:x:0:0\n")
    os.symlink(victim, plans / "s.yaml")
    result = run("optimize", "s", "--specs", str(specs), "--plans", str(plans), "--alternatives", "0")
    assert_refused(result, plans / "s.yaml", f"is a symlink (to {victim})")
    assert victim.read_text() == "root:x:0:0\n" and (plans / "s.yaml").is_symlink()


def test_a_regular_file_or_nothing_is_written(specs: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.yaml"
    assert (
        run("optimize", "s", "--specs", str(specs), "--out", str(out), "--alternatives", "0").exit_code == 0
    )
    out.chmod(0o4666)
    result = run("optimize", "s", "--specs", str(specs), "--out", str(out), "--alternatives", "0")
    assert result.exit_code == EXIT_OK, result.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o664
    assert run("schema", "--out", str(tmp_path / "schema.json")).exit_code == EXIT_OK
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml", "schema.json"]

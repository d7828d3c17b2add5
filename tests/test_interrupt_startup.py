"""Ctrl-C while trnplan starts up: importing the CLI (typer, rich), typer parsing the command line (it imports
pydantic then), or a command importing what it needs. Each time: `interrupted` on stderr, exit 130, no
traceback, through the console script's entry point (as pyproject declares it) and `python -m trnplan`.

The signal is sent by the process itself, from an import hook, at the moment a given module is first
looked up: exactly "during the import", every run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from conftest import TERMINAL

REPO = Path(__file__).resolve().parents[1]
ENTRY_POINT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]["trnplan"]

HOOK = """
    import importlib.abc, os, signal, sys
    TARGET = sys.argv.pop(1)
    class CtrlCDuringImport(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == TARGET:
                sys.meta_path.remove(self)
                os.kill(os.getpid(), signal.SIGINT)
            return None
    sys.meta_path.insert(0, CtrlCDuringImport())
"""
CONSOLE_SCRIPT = (
    HOOK
    + f"""
    import importlib
    module, _, name = {ENTRY_POINT!r}.partition(":")
    sys.exit(getattr(importlib.import_module(module), name)())
"""
)
PYTHON_M = (
    HOOK
    + """
    import runpy
    runpy.run_module("trnplan", run_name="__main__", alter_sys=True)
"""
)

pytestmark = TERMINAL

MODULES = ["typer", "rich", "trnplan.cli.plans", "pydantic", "yaml"]
"""Imported, in this order, by `trnplan validate`: the CLI's own imports, then typer's parsing (pydantic),
then the command's (the spec reader)."""


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("how", ["console script", "python -m"])
@pytest.mark.parametrize("module", MODULES)
def test_ctrl_c_during_start_up_is_interrupted_exit_130(module: str, how: str) -> None:
    script = CONSOLE_SCRIPT if how == "console script" else PYTHON_M
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), module, "validate", "--specs", str(REPO / "specs")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert (proc.returncode, proc.stderr, proc.stdout) == (130, "interrupted\n", "")


def test_the_console_script_is_the_light_entry_point() -> None:
    """`trnplan.cli:main` would import typer before anything could catch a Ctrl-C."""
    assert ENTRY_POINT == "trnplan.__main__:main"

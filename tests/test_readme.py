"""The README's examples run, so they cannot rot.

Every `trnplan ...` line of a ```console or ```bash block runs (in order, in a scratch copy of the repo's
specs and plans committed to a throwaway git repository, so `main:plans/...` refs work) and must exit 0, or
the code its trailing `# exits N` comment names. `pip install` lines are skipped. Where a ```console
block shows a command's output (the lines after a `$ trnplan ...` line), that output is what the command
prints today, line for line. The spec example (the ```yaml block with `chips:`) must validate, and the
```python blocks run.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
EXITS = re.compile(r"\s+#\s*exits?\s+(\d+)\s*$")



def blocks(*languages: str) -> list[str]:
    return [body for lang, body in FENCE.findall(README.read_text(encoding="utf-8")) if lang in languages]


def commands() -> list[tuple[str, int]]:
    """(`trnplan ...` command, expected exit code), in README order."""
    out = []
    for body in blocks("console", "bash"):
        for raw in body.splitlines():
            line = raw.strip()
            if line.startswith("$ "):
                line = line[2:].strip()
            if not line.startswith("trnplan "):
                continue  # pip install, python -m pytest, and output lines
            expected = 0
            m = EXITS.search(line)
            if m:
                expected = int(m.group(1))
                line = line[: m.start()]
            out.append((line, expected))
    return out


def shown_outputs() -> list[tuple[str, list[str]]]:
    """(`trnplan ...` command, the output lines a ```console block shows after it), where it shows any."""
    out = []
    for body in blocks("console"):
        command, lines = None, []
        for raw in [*body.splitlines(), "$ "]:
            if raw.startswith("$ "):
                if command and any(line.strip() for line in lines):
                    out.append((command, [line.rstrip() for line in lines]))
                line = EXITS.sub("", raw[2:].strip())
                command, lines = (line if line.startswith("trnplan ") else None), []
            else:
                lines.append(raw)
    return out


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TRNPLAN_DEBUG")}
    env.update(NO_COLOR="1", COLUMNS="120", GIT_CONFIG_NOSYSTEM="1")
    return env


@pytest.fixture(scope="session")  # not module: an xdist worker may run other modules' tests in between
def project(tmp_path_factory) -> Path:
    """A scratch project: the repo's specs/ and plans/, committed on branch main; scratch/ stands for /tmp."""
    root = tmp_path_factory.mktemp("readme")
    shutil.copytree(REPO / "specs", root / "specs")
    if (REPO / "plans").is_dir():
        shutil.copytree(REPO / "plans", root / "plans")
    (root / "scratch").mkdir()
    git = ["git", "-c", "user.name=readme", "-c", "user.email=readme@example.invalid",
           "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "plans", "--allow-empty"]):
        subprocess.run([*git, *args], cwd=root, check=True, capture_output=True, env=_env())
    return root


def _local(text: str, root: Path) -> str:
    """Point the README's /tmp paths into the scratch project."""
    return text.replace("/tmp/", f"{root / 'scratch'}/")


def test_readme_has_commands() -> None:
    found = [c for c, _ in commands()]
    assert "trnplan optimize trn3-100k" in found  # the quick start
    assert any(c.startswith("trnplan optimize --all --check") for c in found)


@pytest.mark.slow
def test_readme_commands_in_order(project: Path) -> None:
    """Every `trnplan ...` command of the README, in its order, in one scratch project (later commands read
    what earlier ones wrote, so they run in one test, not spread over xdist's workers): each exits as the
    README says, without a traceback."""
    failures = []
    for command, expected in commands():
        runnable = f"{shlex.quote(sys.executable)} -m trnplan {_local(command[len('trnplan '):], project)}"
        proc = subprocess.run(["bash", "-c", runnable], cwd=project, capture_output=True,
                              text=True, env=_env(), check=False)
        detail = f"{command}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
        if proc.returncode != expected:
            failures.append(f"exit {proc.returncode}, not {expected}: {detail}")
        elif "Traceback" in proc.stderr:
            failures.append(f"a traceback: {detail}")
    assert not failures, "\n\n".join(failures)


def test_the_readme_shows_an_output_to_check() -> None:
    assert any("infeasible" in " ".join(lines) for _, lines in shown_outputs())


@pytest.mark.parametrize("command, shown", shown_outputs(), ids=[c for c, _ in shown_outputs()])
def test_readme_shown_output_is_todays(project: Path, command: str, shown: list[str]) -> None:
    runnable = f"{shlex.quote(sys.executable)} -m trnplan {_local(command[len('trnplan '):], project)}"
    proc = subprocess.run(["bash", "-c", runnable], cwd=project, capture_output=True,
                          text=True, env=_env(), check=False)
    printed = (proc.stdout + proc.stderr).replace(f"{project / 'scratch'}/", "/tmp/")
    assert [line.rstrip() for line in printed.rstrip("\n").splitlines()] == shown


def test_readme_spec_example_validates(tmp_path) -> None:
    (spec,) = [b for b in blocks("yaml") if b.startswith("chips:")]
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "example.yaml").write_text(spec, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "trnplan", "validate", "--specs", str(tmp_path / "specs")],
                          capture_output=True, text=True, env=_env(), check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("OK")


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_readme_python_block(project: Path, index: int, monkeypatch) -> None:
    monkeypatch.chdir(project)
    code = _local(blocks("python")[index], project)
    exec(compile(code, f"README.md python block {index + 1}", "exec"), {"__name__": "readme"})


TIME = re.compile(r"\b\d[\d.,]*(?:-\d[\d.,]*)? ?(?:ms|s|sec|seconds?|min|minutes?|hours?)\b")
NAMED_RUN = re.compile(r"\b20\d\d-\d\d-\d\d\b|bench/\w+\.py|\.ci/run")


def test_every_time_the_readme_states_names_the_run_it_comes_from() -> None:
    """Timings go stale (issue: the shipped scenarios' "1.1-1.8 s" outlived a 20 s phased scenario): each
    paragraph of prose that states a time names its run, a dated one or a bench script whose results
    bench/README.md records, and the shipped scenarios' end-to-end times are quoted only from a results
    file that times every one of them."""
    import json

    from trnplan.specs.load import load_specs

    text = FENCE.sub("", README.read_text(encoding="utf-8"))
    unnamed = [p for p in re.split(r"\n\s*\n", text) if TIME.search(p) and not NAMED_RUN.search(p)]
    assert not unnamed, "times without the run they come from:\n" + "\n---\n".join(unnamed)
    if re.search(r"shipped scenarios plan end to end in \d", text):
        results = json.loads((REPO / "bench" / "results.json").read_text(encoding="utf-8"))
        timed = {row["scenario"] for row in results.get("scenarios", [])}
        assert set(load_specs([REPO / "specs"]).scenarios) <= timed, "bench/results.json does not time all"

"""scripts/plan-diff.sh with PLAN_DIFF_REPORTS=DIR: the re-planned plans that changed (or are new) get a
report each and are named in DIR/changed.txt; a report that cannot be made is a warning, not a failed diff.
`trnplan optimize --all` is a stand-in (it copies the committed plans), `trnplan report` the real one."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from plan_pairs import git, golden_pair

from trnplan.plan import write_plan

ROOT = Path(__file__).resolve().parent.parent
SHELL = ROOT / "scripts" / "plan-diff.sh"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Commit 1: plans s and same. Commit 2: s re-planned, same untouched, fresh added."""
    base, head = golden_pair()
    plans = tmp_path / "plans"
    git(tmp_path, "init", "-q", "-b", "main")
    write_plan(base, plans / "s.yaml")
    write_plan(base.model_copy(update={"scenario": "same"}), plans / "same.yaml")
    git(tmp_path, "add", "plans")
    git(tmp_path, "commit", "-q", "-m", "base plans")
    write_plan(head, plans / "s.yaml")
    write_plan(head.model_copy(update={"scenario": "fresh"}), plans / "fresh.yaml")
    git(tmp_path, "add", "-A", "plans")
    git(tmp_path, "commit", "-q", "-m", "head plans")
    return tmp_path


def stand_in(bin_dir: Path, plans: Path, report: str) -> None:
    """`trnplan`: optimize copies the committed plans; report runs `report` (a shell command line)."""
    bin_dir.mkdir()
    script = bin_dir / "trnplan"
    script.write_text(
        "#!/usr/bin/env bash\nset -eu\n"
        f'if [ "$1" = report ]; then {report}; fi\n'
        '[ "$1 $2 $3" = "optimize --all --plans" ] || { echo "unexpected: $*" >&2; exit 2; }\n'
        f'cp "{plans}"/*.yaml "$4"/\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def run_shell(repo: Path, bin_dir: Path, reports: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
           "PYTHON": sys.executable, "PLAN_DIFF_REPORTS": str(reports)}
    return subprocess.run(["bash", str(SHELL), "HEAD~1"], cwd=repo, env=env, capture_output=True, text=True)


def test_reports_of_the_changed_plans(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    pytest.importorskip("matplotlib", reason='the report needs the extra: pip install "trnplan[report]"')
    bin_dir = tmp_path_factory.mktemp("tools") / "bin"
    stand_in(bin_dir, repo / "plans", f'exec "{sys.executable}" -m trnplan "$@"')
    reports = repo / "plan-reports"
    proc = run_shell(repo, bin_dir, reports)
    assert proc.returncode == 0, proc.stderr
    assert (reports / "changed.txt").read_text().splitlines() == ["fresh.yaml", "s.yaml"]
    assert sorted(p.name for p in reports.glob("*.html")) == ["fresh.html", "s.html"]
    assert "<h1>fresh</h1>" in (reports / "fresh.html").read_text(encoding="utf-8")
    assert "2 changed plans, reports in" in proc.stderr
    assert (repo / "plan-diff.md").is_file()


def test_a_report_that_fails_does_not_fail_the_diff(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    bin_dir = tmp_path_factory.mktemp("tools") / "bin"
    stand_in(bin_dir, repo / "plans", "echo 'trnplan report needs matplotlib' >&2; exit 2")
    reports = repo / "plan-reports"
    proc = run_shell(repo, bin_dir, reports)
    assert proc.returncode == 0, proc.stderr
    assert "plan-diff: no report of s.yaml (trnplan report exited 2)" in proc.stderr
    assert (reports / "changed.txt").read_text().splitlines() == ["fresh.yaml", "s.yaml"]
    assert list(reports.glob("*.html")) == []

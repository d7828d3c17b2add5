"""scripts/plan_diff.py (the CI comment, through the library) and scripts/plan-diff.sh (its shell wrapper,
run with a stand-in `trnplan` so the test does not depend on the CLI) against temporary git repos."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from plan_pairs import git, golden_pair

from trnplan.diff import (
    GITHUB_COMMENT_MAX_CHARS,
    MARKER,
    ScenarioDiff,
    comment_body,
    diff_plans,
    parse_guardrail,
    scenario_breaches,
)
from trnplan.plan import Plan, write_plan

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "plan_diff.py"
SHELL = ROOT / "scripts" / "plan-diff.sh"


def renamed(plan: Plan, scenario: str) -> Plan:
    return plan.model_copy(update={"scenario": scenario})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Commit 1: plans s (base), same, gone. Commit 2: s re-planned (head), same untouched, gone deleted,
    fresh added. So s changed, same unchanged, gone removed, fresh new."""
    base, head = golden_pair()
    plans = tmp_path / "plans"
    git(tmp_path, "init", "-q", "-b", "main")
    write_plan(base, plans / "s.yaml")
    write_plan(renamed(base, "same"), plans / "same.yaml")
    write_plan(renamed(base, "gone"), plans / "gone.yaml")
    git(tmp_path, "add", "plans")
    git(tmp_path, "commit", "-q", "-m", "base plans")
    write_plan(head, plans / "s.yaml")
    (plans / "gone.yaml").unlink()
    write_plan(renamed(head, "fresh"), plans / "fresh.yaml")
    git(tmp_path, "add", "-A", "plans")
    git(tmp_path, "commit", "-q", "-m", "head plans")
    return tmp_path


def run_script(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], cwd=repo, env=env, capture_output=True, text=True
    )


def test_comment_body(repo: Path) -> None:
    proc = run_script(repo, "HEAD~1", "--fresh", "plans", "--out", "plan-diff.md", "--json", "plan-diff.json")
    assert proc.returncode == 0, proc.stderr
    body = (repo / "plan-diff.md").read_text()
    lines = body.splitlines()
    assert lines[0] == MARKER
    assert body.count(MARKER) == 1
    assert lines[1] == "## trnplan plan diff"
    assert "4 scenarios compared with `HEAD~1`: 3 changed, 1 unchanged, 1 new, 1 removed." in lines
    assert "- `s`: **TCO** $801K → $2.04M (+$1.24M, +155.3%)" in lines
    assert "- `fresh`: **TCO** $0 → $2.04M (+$2.04M)" in lines
    assert "- `gone`: **TCO** $801K → $0 (-$801K, -100.0%)" in lines
    for scenario in ("s", "fresh", "gone"):
        assert f"### Plan diff: `{scenario}`" in lines
    assert "| TCO | $800,779 | $2,044,712 | +$1,243,933 | +155.3% |" in lines
    assert "Plan: 2 to add, 1 to change, 0 to remove." in lines  # s
    assert "Plan: 3 to add, 0 to change, 0 to remove." in lines  # fresh
    assert "Plan: 0 to add, 0 to change, 1 to remove." in lines  # gone
    assert "| Base | `HEAD~1:plans/fresh.yaml (none)` | — | — |" in lines
    assert lines[-3] == "No change in plan: `same`."
    assert lines[-1] == "Plan: 5 to add, 1 to change, 1 to remove (all scenarios)."
    assert "plan-diff: 4 scenarios, 3 changed" in proc.stderr
    assert '"format": "trnplan-diff-set/1"' in (repo / "plan-diff.json").read_text()


def test_no_changes(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    fresh = tmp_path_factory.mktemp("fresh")
    for name in ("s.yaml", "same.yaml", "fresh.yaml"):
        shutil.copy(repo / "plans" / name, fresh / name)
    proc = run_script(repo, "HEAD", "--fresh", str(fresh), "--out", "out.md")
    assert proc.returncode == 0, proc.stderr
    body = (repo / "out.md").read_text()
    assert body.splitlines()[0] == MARKER
    assert "3 scenarios compared with `HEAD`: 0 changed, 3 unchanged." in body
    assert body.splitlines()[-3] == "No change in plan: `fresh`, `s`, `same`."
    assert body.splitlines()[-1] == "Plan: 0 to add, 0 to change, 0 to remove (all scenarios)."
    assert "<details>" not in body


def test_guardrail_breach_exits_1_and_is_in_the_comment(repo: Path) -> None:
    proc = run_script(repo, "HEAD~1", "--fresh", "plans", "--out", "out.md", "--guardrail", "tco>+5%")
    assert proc.returncode == 1
    body = (repo / "out.md").read_text()
    assert "**Guardrails breached:**" in body
    assert "- `s`: tco_usd rose 155.3% (+$1,243,933, $800,779 → $2,044,712): breaches tco>+5%" in body
    assert "guardrail breached" in proc.stderr


def test_comment_fits_the_limit(repo: Path) -> None:
    proc = run_script(repo, "HEAD~1", "--fresh", "plans", "--out", "out.md", "--max-chars", "9000")
    assert proc.returncode == 0, proc.stderr
    body = (repo / "out.md").read_text()
    assert len(body) <= 9000
    assert body.count(MARKER) == 1
    assert "| TCO | $800,779 | $2,044,712 | +$1,243,933 | +155.3% |" in body


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["nobranch", "--fresh", "plans"], 2, "plan-diff: base revision 'nobranch'"),
        (["HEAD", "--fresh", "nowhere"], 2, "--fresh nowhere: not a folder"),
        (["HEAD", "--fresh", "plans", "--guardrail", "bogus>1"], 2, "unknown metric 'bogus'"),
    ],
)
def test_errors(repo: Path, args: list[str], code: int, message: str) -> None:
    proc = run_script(repo, *args)
    assert proc.returncode == code
    assert message in proc.stderr


# --- the shell wrapper, with a stand-in for `trnplan optimize --all --plans DIR` ------------------------


def fake_trnplan(bin_dir: Path, plans: Path, exit_code: int = 0) -> None:
    bin_dir.mkdir()
    script = bin_dir / "trnplan"
    script.write_text(
        "#!/usr/bin/env bash\n"
        "set -eu\n"
        '[ "$1 $2 $3" = "optimize --all --plans" ] || { echo "unexpected: $*" >&2; exit 2; }\n'
        f"if [ {exit_code} -ne 0 ]; then\n"
        f"  echo \"scenario 's' is infeasible: no plan meets it.\" >&2; exit {exit_code}\n"
        "fi\n"
        f'cp "{plans}"/*.yaml "$4"/\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def run_shell(repo: Path, bin_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "PYTHON": sys.executable,
    }
    return subprocess.run(["bash", str(SHELL), *args], cwd=repo, env=env, capture_output=True, text=True)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_shell_wrapper(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    bin_dir = tmp_path_factory.mktemp("tools") / "bin"
    fake_trnplan(bin_dir, repo / "plans")
    proc = run_shell(repo, bin_dir, "HEAD~1")
    assert proc.returncode == 0, proc.stderr
    body = (repo / "plan-diff.md").read_text()
    assert body.splitlines()[0] == MARKER and body.count(MARKER) == 1
    assert "Plan: 2 to add, 1 to change, 0 to remove." in body
    assert "plans/s.yaml (re-planned)" in body


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_shell_wrapper_reports_a_planning_failure(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    bin_dir = tmp_path_factory.mktemp("tools") / "bin"
    fake_trnplan(bin_dir, repo / "plans", exit_code=4)
    proc = run_shell(repo, bin_dir, "HEAD~1", "out.md")
    assert proc.returncode == 4
    body = (repo / "out.md").read_text()
    assert body.splitlines()[0] == MARKER
    assert "**Planning failed** (`trnplan optimize --all` exited 4)" in body
    assert "infeasible" in body


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_shell_wrapper_unknown_base(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    bin_dir = tmp_path_factory.mktemp("tools") / "bin"
    fake_trnplan(bin_dir, repo / "plans")
    proc = run_shell(repo, bin_dir, "origin/nope")
    assert proc.returncode == 3
    assert "unknown base revision 'origin/nope'" in proc.stderr


def test_the_script_is_a_thin_caller_of_the_library(repo: Path) -> None:
    """The comment and the JSON the script writes are exactly what trnplan.diff.pr_comment makes."""
    from trnplan.diff import collect_diffs, comment_body, diff_set_to_json, parse_guardrail, scenario_breaches

    proc = run_script(
        repo, "HEAD~1", "--fresh", "plans", "--out", "out.md", "--json", "out.json", "--guardrail", "tco>+5%"
    )
    assert proc.returncode == 1, proc.stderr
    diffs = collect_diffs("HEAD~1", repo / "plans", cwd=repo)
    assert [(s.name, s.in_base, s.in_head, s.diff.different) for s in diffs] == [
        ("fresh.yaml", False, True, True),
        ("gone.yaml", True, False, True),
        ("s.yaml", True, True, True),
        ("same.yaml", True, True, False),
    ]
    breaches = scenario_breaches(diffs, [parse_guardrail("tco>+5%")])
    assert (repo / "out.md").read_text(encoding="utf-8") == comment_body(diffs, "HEAD~1", breaches=breaches)
    assert (repo / "out.json").read_text(encoding="utf-8") == diff_set_to_json(diffs, "HEAD~1", breaches)


def test_comment_with_no_plans() -> None:
    from trnplan.diff import comment_body

    assert comment_body([], "main") == (
        f"{MARKER}\n## trnplan plan diff\n\nNo plans at `main` or in this change.\n\n"
        "Plan: 0 to add, 0 to change, 0 to remove (all scenarios).\n"
    )


def _many(changed: int, unchanged: int, name: str) -> list[ScenarioDiff]:
    """`changed` copies of the golden pair's diff and `unchanged` of a plan against itself, each named."""
    base, head = golden_pair()
    d, same = diff_plans(base, head, "a", "b"), diff_plans(base, base, "a", "a")
    return ([ScenarioDiff(f"c{i}.yaml", replace(d, scenario=name.format("c", i)), True, True)
             for i in range(changed)]
            + [ScenarioDiff(f"u{i}.yaml", replace(same, scenario=name.format("u", i)), True, True)
               for i in range(unchanged)])


@pytest.mark.parametrize(("changed", "unchanged"), [(500, 0), (0, 4500), (300, 0), (2000, 5000), (40, 400)])
@pytest.mark.parametrize("name", ["{}{}", "{}-scenario-{:04d}"])
def test_a_comment_of_many_scenarios_fits_github(changed: int, unchanged: int, name: str) -> None:
    """GitHub refuses a comment over 65,536 characters: 500 changed scenarios each breaching a guardrail
    made 77,801, 4,500 unchanged 72,194, 300 changed 65,009. Every comment now fits GITHUB_COMMENT_MAX_CHARS;
    the breaches are kept first, then the headlines; what is left out is counted."""
    diffs = _many(changed, unchanged, name)
    breaches = scenario_breaches(diffs, [parse_guardrail("tco>+5%")])
    body = comment_body(diffs, "main", breaches=breaches)
    assert len(body) <= GITHUB_COMMENT_MAX_CHARS
    assert body.startswith(MARKER + "\n") and body.count(MARKER) == 1
    assert body.endswith(f"Plan: {2 * changed} to add, {changed} to change, 0 to remove (all scenarios).\n")
    shown = sum(1 for b in breaches if f"- {b}\n" in body)
    assert shown == len(breaches) or f"- *… and {len(breaches) - shown:,} more breaches not shown" in body
    headlines = sum(1 for s in diffs if f"- `{s.diff.scenario}`: **TCO**" in body)
    assert shown >= headlines or shown == len(breaches)
    if headlines < changed:
        assert f"- *… and {changed - headlines:,} more changed scenarios not shown" in body
    named = sum(1 for s in diffs if f"`{s.diff.scenario}`," in body or f"`{s.diff.scenario}`." in body)
    if unchanged and named < unchanged:
        assert f"… and {unchanged - named:,} more." in body


@pytest.mark.parametrize("max_chars", range(3000, 70000, 6007))
def test_a_comment_never_exceeds_its_limit(max_chars: int) -> None:
    """At any limit the marker, the counts and the plan line can share, the comment is within it."""
    diffs = _many(60, 300, "{}{}")
    breaches = scenario_breaches(diffs, [parse_guardrail("tco>+5%")])
    body = comment_body(diffs, "main", max_chars, breaches)
    assert len(body) <= max_chars
    said = "not shown to fit" in body or "details trimmed to fit" in body
    assert said == (len(comment_body(diffs, "main", 10**7, breaches)) > max_chars)

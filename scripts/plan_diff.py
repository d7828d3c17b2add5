#!/usr/bin/env python3
"""Diff freshly re-planned scenarios against the plans committed at a base revision; write one PR comment.

    python scripts/plan_diff.py BASE_REV --fresh DIR [--plans plans] [--out plan-diff.md] [--json FILE]
                                [--guardrail 'tco>+5%' ...] [--max-chars 65000]

Every `*.yaml` in DIR (the head: what `trnplan optimize --all --plans DIR` just wrote) is compared with
`BASE_REV:PLANS/NAME.yaml`; a scenario missing at the base shows as all added, a plan committed at the base
but no longer produced shows as all removed. The comment starts with a single `<!-- trnplan-diff -->`
marker, so a bot can find and update it in place. Library only (no CLI), so CI can test it on its own.

Exit codes: 0 written (changes or not), 1 a guardrail was breached (the comment is still written),
2 usage error, 3 unreadable plans or unknown revision.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from trnplan.diff import (
    GITHUB_COMMENT_MAX_CHARS,
    MARKER,
    PlanDiff,
    PlanNotFoundError,
    breached,
    diff_plans,
    diff_to_dict,
    diff_to_markdown,
    empty_plan,
    headline,
    parse_guardrail,
    read_plan_ref,
)
from trnplan.errors import TrnplanError, UsageError
from trnplan.plan import Plan, read_plan


def base_plan_names(rev: str, plans_dir: str, cwd: Path) -> list[str]:
    """File names of the plans committed at `rev` in `plans_dir` (none when the folder is not there)."""
    proc = subprocess.run(
        ["git", "ls-tree", "--name-only", f"{rev}^{{tree}}", "--", f"{plans_dir.rstrip('/')}/"],
        capture_output=True,
        cwd=cwd,
        check=False,
        env={**os.environ, "LC_ALL": "C"},
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(
            f"base revision '{rev}': {err[0] if err else 'git ls-tree failed'} "
            "(in CI, check out with fetch-depth: 0)"
        )
    names = [Path(line).name for line in proc.stdout.decode("utf-8").splitlines()]
    return sorted(n for n in names if n.endswith(".yaml"))


@dataclass(frozen=True)
class ScenarioDiff:
    """A scenario's diff and whether it exists at the base and in the head."""

    name: str
    diff: PlanDiff
    in_base: bool
    in_head: bool


def collect_diffs(
    rev: str, fresh: Path, plans_dir: str = "plans", cwd: Path | None = None
) -> list[ScenarioDiff]:
    """One diff per plan file, sorted by name: base `REV:plans/NAME.yaml` against `FRESH/NAME.yaml`."""
    cwd = cwd or Path.cwd()
    folder = plans_dir.rstrip("/")
    head_names = sorted(p.name for p in fresh.glob("*.yaml"))
    out = []
    for name in sorted(set(head_names) | set(base_plan_names(rev, folder, cwd))):
        base_ref = f"{rev}:{folder}/{name}"
        try:
            base: Plan | None = read_plan_ref(base_ref, cwd=cwd)
        except PlanNotFoundError:
            base = None
        head = read_plan(fresh / name) if name in head_names else None
        scenario = head.scenario if head else base.scenario if base else name.removesuffix(".yaml")
        d = diff_plans(
            base or empty_plan(scenario),
            head or empty_plan(scenario),
            base_ref if base else f"{base_ref} (none)",
            f"{folder}/{name} (re-planned)" if head else "(no longer planned)",
        )
        out.append(ScenarioDiff(name, d, base is not None, head is not None))
    return out


def comment_body(
    diffs: list[ScenarioDiff],
    rev: str,
    max_chars: int = GITHUB_COMMENT_MAX_CHARS,
    breaches: list[str] | None = None,
) -> str:
    """One comment for all scenarios: the marker, an overview line with each changed scenario's TCO headline,
    each changed scenario's diff (headline and summary first, details trimmed to share `max_chars`), then
    the unchanged ones named on one line."""
    changed = [s for s in diffs if s.diff.different]
    same = [s for s in diffs if not s.diff.different]
    new = sum(1 for s in diffs if s.in_head and not s.in_base)
    gone = sum(1 for s in diffs if s.in_base and not s.in_head)
    top = [MARKER, "## trnplan plan diff", ""]
    if not diffs:
        top.append(f"No plans at `{rev}` or in this change.")
    else:
        parts = [f"{len(changed)} changed", f"{len(same)} unchanged"]
        if new:
            parts.append(f"{new} new")
        if gone:
            parts.append(f"{gone} removed")
        n = len(diffs)
        top.append(f"{n} scenario{'s' if n != 1 else ''} compared with `{rev}`: {', '.join(parts)}.")
    if changed:
        top += [""] + [f"- `{s.diff.scenario}`: {headline(s.diff)}" for s in changed]
    if breaches:
        top += ["", "**Guardrails breached:**", ""] + [f"- {b}" for b in breaches]
    total = {k: sum(s.diff.counts()[k] for s in diffs) for k in ("add", "change", "remove")}
    plan_total = (
        f"Plan: {total['add']} to add, {total['change']} to change, {total['remove']} to remove "
        "(all scenarios)."
    )
    tail = []
    if same:
        tail = ["No change in plan: " + ", ".join(f"`{s.diff.scenario}`" for s in same) + "."]
        tail += sorted({f"- `{s.diff.scenario}`: {n}" for s in same for n in s.diff.notes})
    tail += ["", plan_total] if tail else [plan_total]
    head_text = "\n".join(top) + "\n\n"
    tail_text = "\n".join(tail) + "\n"
    separator = "\n\n---\n\n"
    room = max_chars - len(head_text) - len(tail_text) - len(separator) * len(changed)
    budget = max(1000, room // max(1, len(changed)))
    body = head_text
    for i, s in enumerate(changed):
        section = diff_to_markdown(s.diff, budget, marker=False).rstrip("\n") + separator
        if len(body) + len(section) + len(tail_text) > max_chars:
            left = len(changed) - i
            body += (
                f"*{left} more changed scenario{'s' if left != 1 else ''} not shown to fit {max_chars:,} "
                "characters: run `trnplan diff` locally.*" + separator
            )
            break
        body += section
    return body + tail_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base_rev", help="git revision holding the base plans, e.g. origin/main")
    parser.add_argument("--fresh", required=True, type=Path, help="folder of freshly written plans (head)")
    parser.add_argument("--plans", default="plans", help="plans folder in the repository (default: plans)")
    parser.add_argument("--out", default="plan-diff.md", type=Path, help="comment body to write")
    parser.add_argument("--json", type=Path, help="also write every diff as JSON here")
    parser.add_argument(
        "--guardrail", action="append", default=[], help="exit 1 if breached, e.g. 'tco>+5%%' (repeatable)"
    )
    parser.add_argument("--max-chars", type=int, default=GITHUB_COMMENT_MAX_CHARS)
    args = parser.parse_args(argv)
    try:
        rules = [parse_guardrail(g) for g in args.guardrail]
        if not args.fresh.is_dir():
            raise UsageError(f"--fresh {args.fresh}: not a folder")
        diffs = collect_diffs(args.base_rev, args.fresh, args.plans)
        breaches = [f"`{s.diff.scenario}`: {msg}" for s in diffs for msg in breached(s.diff, rules)]
        args.out.write_text(comment_body(diffs, args.base_rev, args.max_chars, breaches), encoding="utf-8")
        if args.json:
            data = {
                "format": "trnplan-diff-set/1",
                "base_rev": args.base_rev,
                "diffs": [diff_to_dict(s.diff) for s in diffs],
                "breaches": breaches,
            }
            args.json.write_text(json.dumps(data, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    except TrnplanError as exc:
        print(f"plan-diff: {exc}", file=sys.stderr)
        return exc.exit_code
    changed = sum(1 for s in diffs if s.diff.different)
    print(f"plan-diff: {len(diffs)} scenarios, {changed} changed; wrote {args.out}", file=sys.stderr)
    for b in breaches:
        print(f"plan-diff: guardrail breached: {b}", file=sys.stderr)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())

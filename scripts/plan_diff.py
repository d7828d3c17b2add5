#!/usr/bin/env python3
"""Diff freshly re-planned scenarios against the plans committed at a base revision; write one PR comment.

    python scripts/plan_diff.py BASE_REV --fresh DIR [--plans plans] [--out plan-diff.md] [--json FILE]
                                [--guardrail 'tco>+5%' ...] [--max-chars 65000]

Every `*.yaml` in DIR (the head: what `trnplan optimize --all --plans DIR` just wrote) is compared with
`BASE_REV:PLANS/NAME.yaml`; a scenario missing at the base shows as all added, a plan committed at the base
but no longer produced shows as all removed. The comment starts with a single `<!-- trnplan-diff -->`
marker, so a bot can find and update it in place. Library only (no CLI), so CI can test it on its own:
the work is `trnplan.diff.pr_comment`; this script parses arguments, writes the files and picks the exit code.

Exit codes: 0 written (changes or not), 1 a guardrail was breached (the comment is still written),
2 usage error, 3 unreadable plans or unknown revision.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from trnplan.diff import (
    GITHUB_COMMENT_MAX_CHARS,
    collect_diffs,
    comment_body,
    diff_set_to_json,
    parse_guardrail,
    scenario_breaches,
)
from trnplan.errors import TrnplanError, UsageError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("base_rev", help="git revision holding the base plans, e.g. origin/main")
    parser.add_argument("--fresh", required=True, type=Path, help="folder of freshly written plans (head)")
    parser.add_argument("--plans", default="plans", help="plans folder in the repository (default: plans)")
    parser.add_argument("--out", default="plan-diff.md", type=Path, help="comment body to write")
    parser.add_argument("--json", type=Path, help="also write every diff as JSON here")
    parser.add_argument(
        "--guardrail", action="append", default=[], help="exit 1 if breached, e.g. 'tco>+5%%' (repeatable)"
    )
    parser.add_argument("--max-chars", type=int, default=GITHUB_COMMENT_MAX_CHARS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        rules = [parse_guardrail(g) for g in args.guardrail]
        if not args.fresh.is_dir():
            raise UsageError(f"--fresh {args.fresh}: not a folder")
        diffs = collect_diffs(args.base_rev, args.fresh, args.plans)
        breaches = scenario_breaches(diffs, rules)
        args.out.write_text(comment_body(diffs, args.base_rev, args.max_chars, breaches), encoding="utf-8")
        if args.json:
            args.json.write_text(diff_set_to_json(diffs, args.base_rev, breaches), encoding="utf-8")
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

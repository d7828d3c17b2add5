#!/usr/bin/env bash
# Re-plan every scenario and diff it against the plans committed at BASE_REV; write one PR comment body.
#
#   bash scripts/plan-diff.sh BASE_REV [OUT]      e.g. bash scripts/plan-diff.sh origin/main plan-diff.md
#
# Runs `trnplan optimize --all --plans TMP` (or `python -m trnplan` when trnplan is not on PATH), then
# scripts/plan_diff.py, which diffs BASE_REV:plans/X.yaml against TMP/X.yaml for every scenario through the
# library and writes OUT (default plan-diff.md) with a single <!-- trnplan-diff --> marker at the top.
# Extra arguments after OUT go to plan_diff.py (e.g. --guardrail 'tco>+5%' --json plan-diff.json).
# When planning fails, OUT still explains why (so the PR hears about it) and the script exits non-zero.
#
# With PLAN_DIFF_REPORTS=DIR set, each re-planned plan whose file differs from BASE_REV's (or that is new)
# is also rendered by `trnplan report` into DIR/SCENARIO.html, and DIR/changed.txt names those plans, one
# a line (CI uploads DIR as an artifact). A report that cannot be made (say, without the trnplan[report]
# extra) is a warning on stderr, never a failed diff.
set -euo pipefail

if [[ $# -lt 1 || "$1" == -* ]]; then
    echo "usage: $0 BASE_REV [OUT] [plan_diff.py options]" >&2
    exit 2
fi
base_rev="$1"
out="${2:-plan-diff.md}"
shift $(( $# >= 2 ? 2 : 1 ))

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-}"
if [[ -z "$python" ]]; then
    if command -v python >/dev/null 2>&1; then python=python; else python=python3; fi
fi
if command -v trnplan >/dev/null 2>&1; then
    trnplan=(trnplan)
else
    trnplan=("$python" -m trnplan)
fi

if ! git rev-parse --verify --quiet "${base_rev}^{commit}" >/dev/null; then
    echo "plan-diff: unknown base revision '$base_rev' (in CI, check out with fetch-depth: 0)" >&2
    exit 3
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

status=0
"${trnplan[@]}" optimize --all --plans "$tmp" >"$tmp/optimize.log" 2>&1 || status=$?
if [[ $status -ne 0 ]]; then
    {
        echo "<!-- trnplan-diff -->"
        echo "## trnplan plan diff"
        echo
        echo "**Planning failed** (\`trnplan optimize --all\` exited $status), so there is no plan diff."
        echo
        echo '```'
        tail -n 60 "$tmp/optimize.log"
        echo '```'
    } >"$out"
    cat "$tmp/optimize.log" >&2
    exit "$status"
fi

diff_status=0
"$python" "$here/plan_diff.py" "$base_rev" --fresh "$tmp" --out "$out" "$@" || diff_status=$?

reports="${PLAN_DIFF_REPORTS:-}"
if [[ -n "$reports" ]]; then
    mkdir -p "$reports"
    : >"$reports/changed.txt"
    for plan in "$tmp"/*.yaml; do
        [[ -e "$plan" ]] || continue
        name="$(basename "$plan")"
        if git show "${base_rev}:plans/${name}" 2>/dev/null | cmp -s - "$plan"; then
            continue  # the same bytes as at the base: no report
        fi
        echo "$name" >>"$reports/changed.txt"
        "${trnplan[@]}" report "$plan" --out "$reports/${name%.yaml}.html" \
            || echo "plan-diff: no report of $name (trnplan report exited $?)" >&2
    done
    echo "plan-diff: $(grep -c . "$reports/changed.txt" || true) changed plans, reports in $reports" >&2
fi
exit "$diff_status"

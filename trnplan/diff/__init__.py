"""What changed between two plans: totals, per-site choices, deployments, BOM lines and where the TCO went.

Pure functions of two plans (no catalog, no solver), one module per job: `model` builds the `PlanDiff`
(`diff_plans`, the TCO attribution), `json_form` and `markdown` print it for machines and for pull-request
comments, `guardrails` turn it into a pass or a fail, and `pr_comment` diffs every scenario against a base
revision for one CI comment. Plans are read from paths or git refs (`main:plans/x.yaml`) by
`trnplan.gitref`, re-exported here.
"""

from __future__ import annotations

from trnplan.diff.guardrails import Guardrail, breached, parse_guardrail
from trnplan.diff.json_form import DIFF_FORMAT, diff_to_dict, diff_to_json
from trnplan.diff.markdown import (
    GITHUB_COMMENT_MAX_CHARS,
    MARKER,
    TRIMMED_NOTE,
    breach_lines,
    diff_to_markdown,
    format_delta,
    format_metric,
    format_pct,
    headline,
    input_lines,
    no_changes_line,
    plan_line,
)
from trnplan.diff.model import (
    METRIC_ALIASES,
    SUMMARY_METRICS,
    BomDelta,
    CategoryDelta,
    ChoiceChange,
    DeploymentChange,
    InputChange,
    MetricDelta,
    PlanDiff,
    diff_plans,
    metric_label,
    metric_names,
    site_choices,
    solver_text,
    tco_parts_cents,
)
from trnplan.diff.pr_comment import (
    ScenarioDiff,
    collect_diffs,
    comment_body,
    diff_set_to_json,
    scenario_breaches,
)
from trnplan.gitref import PlanNotFoundError, read_plan_ref

__all__ = [
    "DIFF_FORMAT",
    "GITHUB_COMMENT_MAX_CHARS",
    "MARKER",
    "METRIC_ALIASES",
    "SUMMARY_METRICS",
    "TRIMMED_NOTE",
    "BomDelta",
    "CategoryDelta",
    "ChoiceChange",
    "DeploymentChange",
    "Guardrail",
    "InputChange",
    "MetricDelta",
    "PlanDiff",
    "PlanNotFoundError",
    "ScenarioDiff",
    "breach_lines",
    "breached",
    "collect_diffs",
    "comment_body",
    "diff_plans",
    "diff_set_to_json",
    "diff_to_dict",
    "diff_to_json",
    "diff_to_markdown",
    "format_delta",
    "format_metric",
    "format_pct",
    "headline",
    "input_lines",
    "metric_label",
    "metric_names",
    "no_changes_line",
    "parse_guardrail",
    "plan_line",
    "read_plan_ref",
    "scenario_breaches",
    "site_choices",
    "solver_text",
    "tco_parts_cents",
]

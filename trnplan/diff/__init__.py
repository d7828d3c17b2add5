"""What changed between two plans: totals, per-site choices, deployments, BOM lines and where the TCO went.

Pure functions of two plans (no catalog, no solver), for one or many periods (a plan without periods is
one period), one module per job: `model` holds the `PlanDiff` value, `compare` builds it (`diff_plans`),
`attribution` splits each plan's TCO by category, `json_form`, `markdown` and `charts` print it for machines
and for pull-request comments, `guardrails` turn it into a pass or a fail, and `pr_comment` diffs every
scenario against a base revision for one CI comment. Plans are read from paths or git refs
(`main:plans/x.yaml`) by `trnplan.gitref`, re-exported here.
"""

from __future__ import annotations

from trnplan.diff.attribution import tco_parts_cents
from trnplan.diff.compare import diff_plans, site_choices, solver_text
from trnplan.diff.guardrails import Guardrail, breached, parse_guardrail
from trnplan.diff.json_form import DIFF_FORMAT, diff_to_dict, diff_to_json
from trnplan.diff.markdown import (
    GITHUB_COMMENT_MAX_CHARS,
    MARKER,
    TRIMMED_NOTE,
    breach_lines,
    diff_to_markdown,
    figure_text,
    format_delta,
    format_metric,
    format_pct,
    headline,
    input_lines,
    no_changes_line,
    option_text,
    plan_line,
)
from trnplan.diff.model import (
    METRIC_ALIASES,
    PERIOD_METRICS,
    SUMMARY_METRICS,
    BomDelta,
    CategoryDelta,
    ChoiceChange,
    DeploymentChange,
    InputChange,
    MetricDelta,
    PlanDiff,
    metric_label,
    metric_names,
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
    "PERIOD_METRICS",
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
    "figure_text",
    "format_delta",
    "format_metric",
    "format_pct",
    "headline",
    "input_lines",
    "metric_label",
    "metric_names",
    "no_changes_line",
    "option_text",
    "parse_guardrail",
    "plan_line",
    "read_plan_ref",
    "scenario_breaches",
    "site_choices",
    "solver_text",
    "tco_parts_cents",
]

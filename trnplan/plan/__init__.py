"""Plans of one period or many: the typed value (`model`), built from a solution (`build`, its parts from
the cost model's evaluation in `body`), verified against the specs (`check`, the scenario's rows in `rows`)
and against itself (`consistency`, with `counts`, `money` and the words of `mismatch`), and kept as
canonical YAML files (`file`).

The names below are imported on first use, so `from trnplan.plan import Plan` costs only the types.
"""

from __future__ import annotations

import importlib
from typing import Any

from trnplan.plan.model import (
    PLAN_FORMAT,
    Alternative,
    BomLine,
    DeploymentRow,
    Economics,
    Inputs,
    Objective,
    Plan,
    ScaleOut,
    SiteSection,
    SolverInfo,
    Totals,
    Utilization,
)

_LAZY = {
    "build_plan": "trnplan.plan.build",
    "plan_scenario": "trnplan.plan.build",
    "check_plan": "trnplan.plan.check",
    "self_check": "trnplan.plan.check",
    "parse_plan": "trnplan.plan.file",
    "plan_from_dict": "trnplan.plan.file",
    "read_plan": "trnplan.plan.file",
    "write_plan": "trnplan.plan.file",
    "MAX_PLAN_BYTES": "trnplan.plan.file",
}

__all__ = [
    "PLAN_FORMAT",
    "Alternative",
    "BomLine",
    "DeploymentRow",
    "Economics",
    "Inputs",
    "Objective",
    "Plan",
    "ScaleOut",
    "SiteSection",
    "SolverInfo",
    "Totals",
    "Utilization",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trnplan.plan' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)

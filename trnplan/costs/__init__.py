"""The cost model: the one place that turns deployment decisions into money, power and space.

The optimizer takes its coefficients from here (`Option`, `tco_per_capex_usd`, `opex_usd_per_kw_year`),
and `evaluate` computes a whole plan from decisions alone, for the plan file, `check_plan`, the BOM
and the tests' brute-force oracle. `rates` holds the money rates, `options` the per-option figures and
the reasons an option is blocked, `evaluate` the figures of a whole plan.
"""

from __future__ import annotations

from trnplan.costs.evaluate import DeploymentFigures, Evaluation, SiteFigures, evaluate
from trnplan.costs.options import (
    NO_SWITCH,
    Deployment,
    Option,
    Reason,
    all_options,
    form_efficiency,
    kw_capex_usd,
    kw_lines,
    make_option,
    network_rack_limit_kw,
    option_lines,
    option_month,
    option_problems,
    option_rack_kw,
    scale_out_problems,
    scale_out_switches,
    scale_up_choices,
    site_options,
)
from trnplan.costs.rates import (
    OBJECTIVE_UNITS,
    colocation_usd_per_kw_year,
    crf,
    energy_usd_per_kw_year,
    objective_unit,
    objective_value,
    opex_usd_per_kw_year,
    perf_of,
    tco_per_capex_usd,
)

__all__ = [
    "NO_SWITCH",
    "OBJECTIVE_UNITS",
    "Deployment",
    "DeploymentFigures",
    "Evaluation",
    "Option",
    "Reason",
    "SiteFigures",
    "all_options",
    "colocation_usd_per_kw_year",
    "crf",
    "energy_usd_per_kw_year",
    "evaluate",
    "form_efficiency",
    "kw_capex_usd",
    "kw_lines",
    "make_option",
    "network_rack_limit_kw",
    "objective_unit",
    "objective_value",
    "opex_usd_per_kw_year",
    "option_lines",
    "option_month",
    "option_problems",
    "option_rack_kw",
    "perf_of",
    "scale_out_problems",
    "scale_out_switches",
    "scale_up_choices",
    "site_options",
    "tco_per_capex_usd",
]

"""The plan report: one self-contained HTML page of a plan (and of a sweep's rows), with a floor plan per
site drawn here and charts drawn by matplotlib (the optional `trnplan[report]` extra)."""

from trnplan.report.charts import INSTALL_HINT, charts_available
from trnplan.report.page import render_report
from trnplan.report.sweep import read_sweep, sweep_of_plan
from trnplan.report.timeline import TimelineRow, timeline_rows

__all__ = [
    "INSTALL_HINT", "TimelineRow", "charts_available", "read_sweep", "render_report", "sweep_of_plan",
    "timeline_rows",
]

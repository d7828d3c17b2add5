"""The PR comment's Mermaid chart of the capex change by category: its bars add up to the capex change,
its labels carry the sign and cannot break out of the block, it is left out when nothing's capex changed,
and it is the first thing given up (after every detail row) when the comment would not fit. That it
renders: test_report_browser.py."""

from __future__ import annotations

import re
from dataclasses import replace

from plan_pairs import golden_pair

from trnplan.diff import diff_plans, diff_to_markdown
from trnplan.diff.charts import capex_changes, capex_chart
from trnplan.diff.model import BomDelta
from trnplan.diff.pr_comment import ScenarioDiff, comment_body


def blocks(text: str) -> list[str]:
    return re.findall(r"```mermaid\n(.*?)\n```", text, re.S)


def test_bars_add_up_to_the_capex_change() -> None:
    base, head = golden_pair()
    d = diff_plans(base, head)
    changes = capex_changes(d)
    assert round(sum(v for _, v in changes), 2) == d.metric("capex_usd").delta
    chart = capex_chart(d)
    assert blocks(diff_to_markdown(d)) == [chart.removeprefix("```mermaid\n").removesuffix("\n```")]
    bars = [float(v) for v in re.search(r"bar \[(.*)\]", chart).group(1).split(", ")]
    assert all(b > 0 for b in bars) and len(bars) == len(changes)
    labels = re.findall(r'"([^"]+) ([+-])[0-9.]+"', re.search(r"x-axis \[(.*)\]", chart).group(1))
    assert labels == [(c, "+" if v > 0 else "-") for c, v in changes]
    top = float(re.search(r"0 --> ([0-9.]+)", chart).group(1))
    assert max(bars) < top
    back = capex_chart(diff_plans(head, base))
    assert re.findall(r'"(\w+) -', back) == [c for c, _ in changes]  # swapped plans: every sign flips


def test_no_chart_when_no_capex_changed() -> None:
    base, _ = golden_pair()
    assert "```mermaid" not in diff_to_markdown(diff_plans(base, base))
    d = diff_plans(base, base)
    assert capex_chart(d) == ""


def test_labels_cannot_break_out() -> None:
    base, head = golden_pair()
    d = diff_plans(base, head)
    hostile = BomDelta("+", "a", 'x"]\n```\n<script>', "item", None, 1, None, 2.5e6, 2.5e6)
    chart = capex_chart(replace(d, bom=[*d.bom, hostile]))
    body = chart.removeprefix("```mermaid\n").removesuffix("\n```")
    assert "```" not in body and "<" not in body and body.count('"') % 2 == 0
    assert '"xscript +2.5"' in body and 'y-axis "$M"' in body


def test_the_chart_goes_before_the_summary_is_cut() -> None:
    base, head = golden_pair()
    d = diff_plans(base, head)
    full = diff_to_markdown(d)
    chart = capex_chart(d)
    bom_rows = sum(1 for line in full.splitlines() if line.startswith("| `"))
    trimmed = diff_to_markdown(d, max_chars=len(full) - 1)
    assert chart in trimmed and len(trimmed) <= len(full) - 1  # detail rows went first
    assert sum(1 for line in trimmed.splitlines() if line.startswith("| `")) < bom_rows
    bare = diff_to_markdown(d, max_chars=len(full) - 2000)
    assert len(bare) <= len(full) - 2000
    tiny = diff_to_markdown(d, max_chars=1000)  # less than the head, summary and chart take together
    assert chart not in tiny
    assert "| TCO | $800,779 | $2,044,712 | +$1,243,933 | +155.3% |" in tiny


def test_each_changed_scenario_of_the_pr_comment_has_its_chart() -> None:
    base, head = golden_pair()
    diffs = [ScenarioDiff(name, diff_plans(b, h), True, True)
             for name, b, h in (("s.yaml", base, head), ("t.yaml", head, base), ("same.yaml", base, base))]
    body = comment_body(diffs, "main")
    assert len(blocks(body)) == 2  # s and t changed; same did not
    full = len(body)
    for max_chars in (full - 1, full // 2, 3000):
        trimmed = comment_body(diffs, "main", max_chars=max_chars)
        assert len(trimmed) <= max_chars
        assert trimmed.count("```mermaid") == trimmed.count("xychart-beta")  # never a block cut in two
        assert trimmed.count("```") % 2 == 0

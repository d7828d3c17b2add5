"""The report's charts, drawn by matplotlib (the `trnplan[report]` extra) as inline SVG text.

Deterministic: a fixed `svg.hashsalt`, no date or creator in the metadata, glyphs as paths (the same text
draws the same everywhere), and every id in a chart prefixed with the chart's name so that several charts
share one page without clashing. matplotlib is imported inside the functions: the rest of trnplan never
needs it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from trnplan.report.timeline import TimelineRow

INSTALL_HINT = 'trnplan report needs matplotlib: pip install "trnplan[report]"'
RC: Any = {  # Any: matplotlib types rc_context's keys as a Literal of every rcParam
    "svg.hashsalt": "trnplan-report",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.color": "#e5e5e5",
    "path.simplify": False,
    "text.parse_math": False,  # labels are literal text: a `$` in a category or a site is no maths
}
WIDTH_IN = 7.2
SITE_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#8c564b", "#e377c2", "#17becf")
_ID = re.compile(r'(id="|href="#|url\(#)([^")]+)')
_DROPPED = re.compile(r"<style[^>]*>.*?</style>|<metadata>.*?</metadata>", re.S)


def charts_available() -> bool:
    """Whether matplotlib (the `report` extra) can be imported."""
    from importlib.util import find_spec

    return find_spec("matplotlib") is not None


@contextmanager
def _figure(height_in: float, rows: int = 1) -> Iterator[tuple[Any, Any]]:
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context(RC):
        fig = Figure(figsize=(WIDTH_IN, height_in), layout="constrained")
        axes = fig.subplots(rows, 1, squeeze=False)[:, 0]
        yield fig, axes


def _svg(fig: Any, name: str) -> str:
    """The figure as an `<svg class="chart">` element: no XML prolog, metadata or global style, ids prefixed,
    width set by the page (the viewBox keeps the proportions)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = _DROPPED.sub("", text)
    text = re.sub(r'<svg[^>]*?(viewBox="[^"]*")[^>]*>',
                  rf'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
                  rf'class="chart" data-chart="{name}" \1>', text, count=1)
    text = _ID.sub(lambda m: f"{m.group(1)}{name}-{m.group(2)}", text)
    return text.strip()


def _money_axis(ax: Any, axis: str = "x") -> None:
    from matplotlib.ticker import FuncFormatter

    from trnplan.numbers import money_short

    (ax.xaxis if axis == "x" else ax.yaxis).set_major_formatter(FuncFormatter(lambda v, _: money_short(v)))


OPEX_COLOUR = "#8c8c8c"


def category_chart(
    title: str, by_site: dict[str, dict[str, float]], name: str, opex: Sequence[str] = ()
) -> str:
    """Horizontal bars of dollars by category, stacked by site (largest category on top); the `opex`
    categories of a single series in grey, so the capex-driven part and the running costs stand apart."""
    categories = sorted({c for parts in by_site.values() for c in parts},
                        key=lambda c: (sum(p.get(c, 0.0) for p in by_site.values()), c))
    with _figure(0.6 + 0.32 * max(len(categories), 1)) as (fig, (ax,)):
        left = [0.0] * len(categories)
        for i, (site, parts) in enumerate(sorted(by_site.items())):
            values = [parts.get(c, 0.0) for c in categories]
            colour = SITE_COLOURS[i % len(SITE_COLOURS)]
            if len(by_site) == 1:
                ax.barh(categories, values, left=left, label=site,
                        color=[OPEX_COLOUR if c in opex else colour for c in categories])
            else:
                ax.barh(categories, values, left=left, label=site, color=colour)
            left = [a + b for a, b in zip(left, values, strict=True)]
        ax.set_title(title, loc="left")
        _money_axis(ax)
        ax.grid(axis="y", visible=False)
        if len(by_site) > 1:
            ax.legend(loc="lower right", frameon=False)
        return _svg(fig, name)


def distribution_chart(values: Sequence[float], marker: float | None, label: str, money: bool) -> str:
    """A histogram of the sweep's objective values, the plan's own value marked."""
    with _figure(2.4) as (fig, (ax,)):
        bins = min(30, max(5, len(set(values))))
        ax.hist(list(values), bins=bins, color="#1f77b4", edgecolor="white")
        if marker is not None:
            ax.axvline(marker, color="#d62728", linewidth=1.5, label="this plan")
            ax.legend(loc="best", frameon=False)
        from matplotlib.ticker import MaxNLocator

        ax.set_title(f"Objective over the runs: {label}", loc="left")
        ax.set_ylabel("runs")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if money:
            _money_axis(ax)
        return _svg(fig, "sweep-objective")


def choices_chart(choices: dict[str, list[dict[str, Any]]]) -> str:
    """How often each site's choice is made: a bar per (site, choice), share of solved runs."""
    labels: list[str] = []
    shares: list[float] = []
    colours: list[str] = []
    for i, (site, made) in enumerate(sorted(choices.items())):
        for c in made:
            labels.append(f"{site}: {c['choice']}")
            shares.append(100 * float(c["share"]))
            colours.append(SITE_COLOURS[i % len(SITE_COLOURS)])
    with _figure(0.7 + 0.3 * max(len(labels), 1)) as (fig, (ax,)):
        ax.barh(labels[::-1], shares[::-1], color=colours[::-1])
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of solved runs (%)")
        ax.set_title("How often each choice is made", loc="left")
        ax.grid(axis="y", visible=False)
        return _svg(fig, "sweep-choices")


def tornado_chart(inputs: list[dict[str, Any]], middle: float | None, exact: bool = False) -> str:
    """The tornado: per input, TCO at its low end and at its high end (`exact`: the re-solves there; else
    the mean of the runs there), the widest swing on top."""
    from trnplan.numbers import trimmed

    with _figure(0.8 + 0.36 * max(len(inputs), 1)) as (fig, (ax,)):
        ax.use_sticky_edges = False  # room beside the bars for their end labels
        names = [b["path"] for b in inputs][::-1]
        for y, b in enumerate(inputs[::-1]):
            lo, hi = b["tco_low_usd"], b["tco_high_usd"]
            ax.barh(y, hi - lo, left=lo, color="#d62728" if hi >= lo else "#2ca02c", height=0.6)
            # each end's label outside the bar, away from the other: a short bar never has them overlap
            for value, x, other, right in ((b["low"], lo, hi, False), (b["high"], hi, lo, True)):
                outward = 1 if x > other or (x == other and right) else -1
                ax.annotate(trimmed(value), (x, y), xytext=(3 * outward, 0), textcoords="offset points",
                            ha="left" if outward > 0 else "right", va="center", fontsize=7)
        ax.set_yticks(range(len(names)), names)
        if middle is not None:
            ax.axvline(middle, color="#333", linewidth=1)
        what = "TCO re-solved" if exact else "mean TCO"
        ax.set_title(f"Tornado: {what} with each input at its low and high end", loc="left")
        ax.margins(x=0.15)
        ax.grid(axis="y", visible=False)
        _money_axis(ax)
        return _svg(fig, "sweep-tornado")


def sensitivity_chart(inputs: list[dict[str, Any]]) -> str:
    """A sample's inputs ranked: S1 per input with its confidence interval, the largest on top."""
    with _figure(0.8 + 0.36 * max(len(inputs), 1)) as (fig, (ax,)):
        names = [i["path"] for i in inputs][::-1]
        for y, item in enumerate(inputs[::-1]):
            ax.barh(y, item["s1"], xerr=item["s1_conf"], height=0.6, capsize=3,
                    color="#1f77b4" if item["told_apart"] else "#aaaaaa")
        ax.set_yticks(range(len(names)), names)
        ax.set_xlabel("S1: share of TCO's variance the input explains (grey: not told apart from the next)")
        ax.set_title("Which input matters: first-order Sobol index per input", loc="left")
        ax.grid(axis="y", visible=False)
        return _svg(fig, "sweep-sensitivity")


def timeline_chart(rows: Sequence[TimelineRow]) -> str:
    """Installed IT MW and chips per site per period, as stacked bars (one panel each)."""
    starts = sorted({r.start for r in rows})
    sites = sorted({r.site for r in rows})
    at = {(r.start, r.site): r for r in rows}
    with _figure(4.2, rows=2) as (fig, axes):
        panels = (("it_power_kw", "installed IT MW"), ("chips", "installed chips"))
        for ax, (field, label) in zip(axes, panels, strict=True):
            bottom = [0.0] * len(starts)
            for i, site in enumerate(sites):
                values = [float(getattr(at[(s, site)], field)) if (s, site) in at else 0.0 for s in starts]
                if field == "it_power_kw":
                    values = [v / 1000 for v in values]
                ax.bar(starts, values, bottom=bottom, label=site, color=SITE_COLOURS[i % len(SITE_COLOURS)])
                bottom = [a + b for a, b in zip(bottom, values, strict=True)]
            ax.set_ylabel(label)
            ax.grid(axis="x", visible=False)
        axes[0].set_title("Installed per period and site", loc="left")
        axes[0].legend(loc="upper left", frameon=False, ncols=min(4, len(sites)))
        for ax in axes:
            _spaced_labels(fig, ax)
        return _svg(fig, "timeline")


def renderer_of(fig: Any) -> Any:
    """A renderer of the figure laid out as it will be drawn (its constrained layout done), to measure
    text with; the SVG is drawn by its own backend all the same."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    return fig.canvas.get_renderer()


def _overlap(fig: Any, labels: list[Any]) -> bool:
    """Whether any two of the shown tick labels overlap on the drawn figure (with a little air)."""
    renderer = renderer_of(fig)
    boxes = [t.get_window_extent(renderer).expanded(1.1, 1.0) for t in labels if t.get_visible()]
    return any(a.overlaps(b) for a, b in zip(boxes, boxes[1:], strict=False))


def _spaced_labels(fig: Any, ax: Any) -> None:
    """The period labels of a category axis kept apart: level while they fit, then slanted, then every
    k-th one shown (the first always), as few left out as it takes."""
    labels = list(ax.get_xticklabels())
    if not _overlap(fig, labels):
        return
    for label in labels:
        label.set_rotation(45)
        label.set_horizontalalignment("right")
        label.set_rotation_mode("anchor")
    step = 1
    while _overlap(fig, labels) and step < len(labels):
        step += 1
        for i, label in enumerate(labels):
            label.set_visible(i % step == 0)

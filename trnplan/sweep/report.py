"""A sweep's summary as CSV (one figure per line) and as Markdown tables; the table form is
`trnplan.render.sweep`, the JSON form the summary's data itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from trnplan.numbers import money_short, trimmed
from trnplan.safetext import CsvCell, csv_text, md_text

STATS = ("min", "q1", "median", "q3", "max")


def _figures(summary: dict[str, Any]) -> Iterator[tuple[str, str, str, float | None]]:
    """(section, name, field, value) of every figure in the summary."""
    yield "runs", "", "runs", summary["runs"]
    yield "runs", "", "finished", summary["finished"]
    for status, n in summary["status"].items():
        yield "status", status, "runs", n
    for key in ("objective", "tco_usd"):
        for stat in STATS:
            yield key, summary.get("objective_kind", "") if key == "objective" else "", stat, (
                summary[key][stat] if summary[key] else None)
    for site, made in summary["choices"].items():
        for c in made:
            yield "choices", f"{site} {c['choice']}", "runs", c["runs"]
    for bar in summary["tornado"]["inputs"] if "tornado" in summary else []:
        for field in ("low", "high", "tco_low_usd", "tco_high_usd", "swing_usd"):
            yield "tornado", bar["path"], field, bar[field]
    for item in summary["sensitivity"]["inputs"] if "sensitivity" in summary else []:
        for field in ("s1", "s1_conf"):
            yield "sensitivity", item["path"], field, item[field]
        yield "sensitivity", item["path"], "told_apart", int(item["told_apart"])


def summary_to_csv(summary: dict[str, Any]) -> str:
    """One figure per record: `section,name,field,value`."""
    return csv_text(["section", "name", "field", "value"],
                    ([section, name, field, value] for section, name, field, value in _figures(summary)))


def objective_text(summary: dict[str, Any]) -> Callable[[float], str]:
    """How the summary's objective values read: dollars for min_tco, else plain figures."""
    return money_short if summary.get("objective_kind") == "min_tco" else trimmed


def _md_row(*cells: str) -> str:
    """A GFM table row of cells already Markdown (text from the rows through `safetext.md_text`)."""
    return "| " + " | ".join(cells) + " |"


def summary_to_markdown(summary: dict[str, Any]) -> str:
    lines = [f"## Sweep: {md_text(summary.get('scenario', ''))}", "",
             f"{summary['finished']} of {summary['runs']} runs finished: "
             + ", ".join(f"{n} {md_text(s)}" for s, n in summary["status"].items()), ""]
    lines += [_md_row("figure", *STATS), _md_row(*["---"] * 6)]
    for key, show in (("objective", objective_text(summary)), ("tco_usd", money_short)):
        if summary[key]:
            kind = md_text(summary.get("objective_kind", ""))
            name = f"objective ({kind})" if key == "objective" else "TCO"
            lines.append(_md_row(name, *(show(summary[key][s]) for s in STATS)))
    lines += ["", _md_row("site", "choice (form/cooling/scale-up/scale-out)", "runs", "share"),
              _md_row("---", "---", "---:", "---:")]
    for site, made in summary["choices"].items():
        for c in made:
            lines.append(_md_row(md_text(site), md_text(c["choice"]), str(c["runs"]), f"{c['share']:.0%}"))
    lines += ["", *_md_which_input(summary)]
    return "\n".join(lines) + "\n"


def _md_which_input(summary: dict[str, Any]) -> list[str]:
    """A grid's tornado, or a sample's inputs ranked, as Markdown lines."""
    if "sensitivity" in summary:
        found = summary["sensitivity"]
        lines = [f"Inputs ranked: {found['method']}." + (f" **{found['warning']}.**" if found.get("warning")
                                                          else ""), "",
                 _md_row("input", "S1", "±", "told apart"), _md_row("---", "---:", "---:", "---")]
        for item in found["inputs"]:
            lines.append(_md_row(md_text(item["path"]), f"{item['s1']:.3f}", f"{item['s1_conf']:.3f}",
                                 "yes" if item["told_apart"] else "no"))
        return lines
    lines = [f"Tornado: {summary['tornado']['method']}.", "",
             _md_row("input", "low", "high", "TCO at low", "TCO at high", "swing"),
             _md_row("---", "---:", "---:", "---:", "---:", "---:")]
    for bar in summary["tornado"]["inputs"]:
        lines.append(_md_row(md_text(bar["path"]), trimmed(bar["low"]), trimmed(bar["high"]),
                             money_short(bar["tco_low_usd"]), money_short(bar["tco_high_usd"]),
                             money_short(bar["swing_usd"])))
    return lines


TORNADO_FIELDS = ("low", "high", "tco_low_usd", "tco_high_usd", "swing_usd")


def tornado_to_csv(summary: dict[str, Any]) -> str:
    """An exact tornado as CSV: one line per bar (widest swing first), then one per unused input."""
    rows: list[list[CsvCell]] = [
        [bar["input"], *(bar[f] for f in TORNADO_FIELDS), str(bar["choices_changed"]).lower(), "true"]
        for bar in summary["tornado"]
    ]
    rows += [[path, *[None] * len(TORNADO_FIELDS), "", "false"] for path in summary["unused"]]
    return csv_text(["input", *TORNADO_FIELDS, "choices_changed", "used"], rows)


def tornado_to_markdown(summary: dict[str, Any]) -> str:
    base = summary["base_tco_usd"]
    lines = [f"## Tornado: {md_text(summary.get('scenario', ''))}", "",
             f"Base TCO {money_short(base) if base is not None else '—'}; {summary['method']}.", "",
             _md_row("input", "low", "high", "TCO at low", "TCO at high", "swing", "plan"),
             _md_row("---", "---:", "---:", "---:", "---:", "---:", "---")]
    for bar in summary["tornado"]:
        lines.append(_md_row(md_text(bar["input"]), trimmed(bar["low"]), trimmed(bar["high"]),
                             money_short(bar["tco_low_usd"]), money_short(bar["tco_high_usd"]),
                             money_short(bar["swing_usd"]), "changes" if bar["choices_changed"] else "same"))
    for item in summary.get("failed", []):
        lines.append(f"\nNo plan at an end of {md_text(item['input'])}: "
                     f"{', '.join(md_text(s) for s in item['status'])}.")
    if summary["unused"]:
        unused = ", ".join(md_text(path) for path in summary["unused"])
        lines += ["", f"Ranged inputs the scenario cannot use: {unused}."]
    return "\n".join(lines) + "\n"

"""What a plan decides, as the cost model reads it: units per option and each used site's scale-out switch,
in one period or in each period of a phased plan."""

from __future__ import annotations

from dataclasses import dataclass

from trnplan.costs.options import NO_SWITCH, Deployment


@dataclass(frozen=True)
class Decisions:
    """A solution read back from the MILP: units per option and the scale-out switch per used site."""

    deployments: tuple[Deployment, ...]
    scale_out: tuple[tuple[str, str], ...]
    periods: tuple[Decisions, ...] = ()  # a phased plan: what is installed in each period (the last above)

    def describe(self) -> str:
        """'site: form / cooling / scale-up + ... / scale-out' for each site, sorted."""
        by_site: dict[str, list[str]] = {}
        for d in self.deployments:
            by_site.setdefault(d.site, []).append(f"{d.form} / {d.cooling} / {d.scale_up_switch}")
        fabric = dict(self.scale_out)
        return "; ".join(
            f"{site}: {' + '.join(parts)} / {fabric[site]}" for site, parts in sorted(by_site.items())
        )

    def chosen_items(self) -> list[tuple[str, str]]:
        """The distinct choices made: forms, coolings, scale-up and scale-out switches used."""
        items = set()
        for d in self.deployments:
            items.add(("form", d.form))
            items.add(("cooling", d.cooling))
            if d.scale_up_switch != NO_SWITCH:
                items.add(("scale-up switch", d.scale_up_switch))
        items.update(("scale-out switch", switch) for _site, switch in self.scale_out)
        return sorted(items)

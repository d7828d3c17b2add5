"""References between entities (a form's chip, a site's cooling, a scenario's sites ...), checked on the
raw data so that an entity with other problems still reports its dangling references; each is located at
the referencing key, with did-you-mean."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from trnplan.catalog import EfficiencyRule, Scenario
from trnplan.errors import Problem, did_you_mean
from trnplan.specs.entities import ID_RE, SINGULAR, Entities, RawEntity
from trnplan.specs.yamlsafe import KeyPath


def _strings(value: Any) -> list[tuple[int, str]]:
    """The text items of a list, with their positions (other items are validation's business)."""
    return (
        [(i, item) for i, item in enumerate(value) if isinstance(item, str)]
        if isinstance(value, list)
        else []
    )


def _mapping(data: dict[str, Any], name: str) -> dict[str, Any]:
    """The mapping under `name`, or an empty one when it is absent or not a mapping."""
    value = data.get(name)
    return value if isinstance(value, dict) else {}


class _Checker:
    """The references of one entity against all merged entities, and the problems found so far."""

    def __init__(self, entity: RawEntity, merged: Entities) -> None:
        self.entity = entity
        self.merged = merged
        self.problems: list[Problem] = []

    def report(self, rel: KeyPath, message: str) -> None:
        """Record a problem at `rel` inside the entity."""
        self.problems.append(self.entity.problem(rel, message))

    def ref(self, rel: KeyPath, target: Any, kinds: Sequence[str], what: str | None = None) -> bool:
        """Whether `target` at `rel` names an entity of one of `kinds`; reports it when it names none."""
        if not isinstance(target, str) or not ID_RE.fullmatch(target):
            return False  # not an id at all: validation reports that
        if self.entity.is_bad(rel):
            return False
        if any((kind, target) in self.merged for kind in kinds):
            return True
        choices = sorted(entity_id for (kind, entity_id) in self.merged if kind in kinds)
        label = what or SINGULAR[kinds[0]]
        self.report(rel, f"unknown {label} '{target}'" + did_you_mean(target, choices))
        return False

    def each(self, data: dict[str, Any], name: str, kind: str) -> None:
        """Check every text item of the list under `name` as a reference to a `kind` entity."""
        for i, target in _strings(data.get(name)):
            self.ref((name, i), target, [kind])


def _scale_up_role(check: _Checker, i: int, switch: str) -> None:
    """A form's scale_up option `i` must use a switch whose role is scale_up."""
    raw = check.merged[("switches", switch)].data
    role = raw.get("role") if isinstance(raw, dict) else None
    if isinstance(role, str) and role != "scale_up":
        message = f"switch '{switch}' is a {role} switch; scale_up options need a scale_up switch"
        check.report(("scale_up", i, "switch"), message)


def _form_refs(check: _Checker, data: dict[str, Any]) -> None:
    """A form's chip, cooling types and scale_up switches."""
    check.ref(("chip",), data.get("chip"), ["chips"])
    check.each(data, "cooling", "cooling")
    options = data.get("scale_up")
    for i, option in enumerate(options if isinstance(options, list) else []):
        switch = option.get("switch") if isinstance(option, dict) else None
        if isinstance(switch, str) and check.ref(("scale_up", i, "switch"), switch, ["switches"]):
            _scale_up_role(check, i, switch)


def _site_refs(check: _Checker, data: dict[str, Any]) -> None:
    """A site's cooling types, the keys of its cooling_fixed_usd and cooling_capacity_mw among them, and
    its power chain (redundancy)."""
    coolings = [cooling for _i, cooling in _strings(data.get("cooling"))]
    check.each(data, "cooling", "cooling")
    for name in ("cooling_fixed_usd", "cooling_capacity_mw"):
        for cooling in _mapping(data, name):
            if cooling not in coolings and ID_RE.fullmatch(cooling):
                listed = ", ".join(coolings) or "none listed"
                message = f"'{cooling}' is not among this site's cooling ({listed})" + did_you_mean(
                    cooling, coolings
                )
                check.report((name, cooling), message)
    if "redundancy" in data:
        check.ref(("redundancy",), data["redundancy"], ["power_chains"])


def _fabric_refs(check: _Checker, data: dict[str, Any]) -> None:
    """The cooling type of a scenario's scale-out fabric, written or by default."""
    fabric = data.get("fabric", {})
    if isinstance(fabric, dict) and "cooling" in fabric:
        check.ref(("fabric", "cooling"), fabric["cooling"], ["cooling"])
    elif isinstance(fabric, dict):
        default = Scenario.model_fields["fabric"].default.cooling
        if ("cooling", default) not in check.merged:
            message = (
                f"the scale-out fabric is cooled by '{default}' unless fabric.cooling says otherwise, "
                f"and there is no cooling type '{default}'"
            )
            check.report(("fabric",), message)


def _scenario_refs(check: _Checker, data: dict[str, Any]) -> None:
    """A scenario's sites, chips, forms, supply keys and fabric cooling."""
    for name in ("sites", "chips", "forms"):
        check.each(data, name, name)
    for key in _mapping(data, "supply"):
        check.ref(("supply", key), key, ["chips", "forms", "switches"], "chip, form or switch")
    _fabric_refs(check, data)
    if "workload" in data:
        check.ref(("workload",), data["workload"], ["workloads"])


def _rule(raw: Any) -> EfficiencyRule | None:
    """A rule of a workload's efficiency list when it validates (validation reports it when not)."""
    try:
        return EfficiencyRule.model_validate(raw)
    except ValidationError:
        return None


def _describe_rule(rule: EfficiencyRule) -> str:
    parts = [f"topology {rule.topology}"] if rule.topology else []
    if rule.min_domain_chips is not None:
        parts.append(f"min_domain_chips {rule.min_domain_chips}")
    if rule.forms is not None:
        parts.append(f"forms {', '.join(rule.forms)}")
    return " and ".join(parts) or "no condition (any form)"


def _workload_refs(check: _Checker, data: dict[str, Any]) -> None:
    """A workload's rules name known forms, and none can never match: an earlier rule that matches every
    form a later one would (an unconditional rule matches all) leaves the later one dead."""
    rules = data.get("efficiency")
    seen: list[tuple[int, EfficiencyRule]] = []
    for i, raw in enumerate(rules if isinstance(rules, list) else []):
        if isinstance(raw, dict):
            for j, form in _strings(raw.get("forms")):
                check.ref(("efficiency", i, "forms", j), form, ["forms"])
        rule = _rule(raw)
        if rule is None:
            continue
        earlier = next(((k, r) for k, r in seen if r.covers(rule)), None)
        if earlier is not None:
            check.report(
                ("efficiency", i),
                f"this rule can never match: rule {earlier[0]} ({_describe_rule(earlier[1])}) comes first "
                "and matches every form it would (the first matching rule wins); reorder or remove it",
            )
        seen.append((i, rule))


def check_references(entity: RawEntity, merged: Entities) -> list[Problem]:
    """The dangling references from `entity` to the other merged entities."""
    data = entity.data
    if not isinstance(data, dict):
        return []
    check = _Checker(entity, merged)
    if entity.kind == "forms":
        _form_refs(check, data)
    elif entity.kind == "sites":
        _site_refs(check, data)
    elif entity.kind == "scenarios":
        _scenario_refs(check, data)
    elif entity.kind == "workloads":
        _workload_refs(check, data)
    return check.problems

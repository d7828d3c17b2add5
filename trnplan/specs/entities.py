"""Spec entities as read, before validation: raw data plus where each key path was written.

Shared by the loader's stages (`load`, `overrides`, `spec_errors`, `references`), so that every problem
they find is located at the key it is about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from trnplan.catalog import ID_PATTERN
from trnplan.errors import Problem
from trnplan.specs.yamlsafe import KeyPath, dotted

SINGULAR = {
    "chips": "chip",
    "forms": "form",
    "switches": "switch",
    "cooling": "cooling type",
    "sites": "site",
    "scenarios": "scenario",
    "workloads": "workload",
    "power_chains": "power chain",
}

ID_RE = re.compile(ID_PATTERN.removeprefix("^").removesuffix("$"))
ID_RULE = "ids use lowercase letters, digits, '.' and '-', and start with a letter or digit"

Loc = tuple[str, int, int]  # file, line, col


@dataclass
class RawEntity:
    """One entity's raw data and where each of its key paths was written."""

    kind: str
    id: str
    data: Any
    origin: Loc
    marks: dict[KeyPath, Loc] = field(default_factory=dict)  # relative to the entity
    bad: set[KeyPath] = field(default_factory=set)  # values yamlsafe refused (already reported)

    @property
    def path(self) -> KeyPath:
        return (self.kind, self.id)

    def locate(self, rel: KeyPath) -> Loc:
        """The mark of `rel`, or of its nearest written parent (a missing field points at its parent)."""
        for n in range(len(rel), 0, -1):
            loc = self.marks.get(rel[:n])
            if loc is not None:
                return loc
        return self.origin

    def problem(self, rel: KeyPath, message: str, at: KeyPath | None = None) -> Problem:
        file, line, col = self.locate(rel if at is None else at)
        return Problem(file, line, col, dotted(self.path + rel), message)

    def is_bad(self, rel: KeyPath) -> bool:
        """Whether `rel` lies inside a value yamlsafe refused (and so has been reported already)."""
        return any(rel[: len(bad)] == bad for bad in self.bad)


EntityKey = tuple[str, str]  # kind, id
Entities = dict[EntityKey, RawEntity]

"""Property: whatever is done to a valid spec set, `load_specs` returns a Catalog or raises a SpecError whose
problems all have a file and a message; never any other exception.

Mutations of `tests/fixtures/tiny_specs/`: values swapped for other types, fields dropped or renamed,
numbers made absurd (negative, zero, huge, NaN, inf), random unicode, YAML text truncated or spliced,
random bytes, and random `--set` overrides. The number of examples comes from the hypothesis profile.
"""

from __future__ import annotations

import copy
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, currently_in_test_context, event, given, settings
from hypothesis import strategies as st

from trnplan.catalog import Catalog
from trnplan.errors import SpecError
from trnplan.specs.load import inputs_digest, load_specs

pytestmark = pytest.mark.slow  # fuzzing: minutes; `-m "not slow"` leaves it out

TINY = Path(__file__).resolve().parent / "fixtures" / "tiny_specs"
TEXTS = {path.name: path.read_text(encoding="utf-8") for path in sorted(TINY.glob("*.yaml"))}
DATA = {name: yaml.safe_load(text) for name, text in TEXTS.items()}

KeyPath = tuple[Any, ...]

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        ["trn3", "air", "liquid", "pcie6-160", "iad-a", "yes", "2026-06", "2026-13", "1e9", "-1", ""]
    ),
)
VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=3),
    st.dictionaries(
        st.one_of(st.text(max_size=6), st.sampled_from(["fp8", "tdp_w", "chips"])), SCALARS, max_size=3
    ),
)
FACTORS = st.sampled_from([-1, 0, 1e-3, 1e3, 1e300, -1e300, math.nan, math.inf, -math.inf])


def paths(node: Any, prefix: KeyPath = ()) -> list[KeyPath]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += paths(value, prefix + (i,))
    return found


def parent_of(root: Any, path: KeyPath) -> Any:
    for part in path[:-1]:
        root = root[part]
    return root


@st.composite
def mutated_files(draw: st.DrawFn) -> dict[str, str | bytes]:
    data = copy.deepcopy(DATA)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        name = draw(st.sampled_from(sorted(data)))
        path = draw(st.sampled_from(paths(data[name])))
        if not path:
            continue
        parent = parent_of(data[name], path)
        key = path[-1]
        op = draw(st.sampled_from(["replace", "drop", "rename", "scale"]))
        if op == "replace":
            parent[key] = draw(VALUES)
        elif op == "drop":
            del parent[key]
        elif op == "rename" and isinstance(parent, dict):
            new_key = draw(st.one_of(st.text(max_size=10), st.just(str(key) + "s"), st.just(str(key)[:-1])))
            parent[new_key] = parent.pop(key)
        elif op == "scale" and isinstance(parent[key], int | float) and not isinstance(parent[key], bool):
            parent[key] = parent[key] * draw(FACTORS)
    files: dict[str, str | bytes] = {
        name: yaml.safe_dump(value, allow_unicode=True, sort_keys=False) for name, value in data.items()
    }
    text_op = draw(st.sampled_from(["none", "none", "truncate", "splice", "bytes"]))
    name = draw(st.sampled_from(sorted(files)))
    text = str(files[name])
    if text_op == "truncate":
        files[name] = text[: draw(st.integers(min_value=0, max_value=len(text)))]
    elif text_op == "splice":
        at = draw(st.integers(min_value=0, max_value=len(text)))
        files[name] = text[:at] + draw(st.text(max_size=8)) + text[at:]
    elif text_op == "bytes":
        raw = text.encode("utf-8")
        at = draw(st.integers(min_value=0, max_value=len(raw)))
        files[name] = raw[:at] + draw(st.binary(min_size=1, max_size=4)) + raw[at:]
    return files


def note(outcome: str) -> None:
    if currently_in_test_context():
        event(outcome)  # shown by --hypothesis-show-statistics: how often mutations still load


def check_outcome(files: dict[str, str | bytes], overrides: Sequence[str] = ()) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, content in files.items():
            path = Path(tmp) / name
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8", errors="surrogatepass")
        try:
            catalog = load_specs([tmp], overrides)
        except SpecError as exc:
            assert exc.problems
            for problem in exc.problems:
                assert problem.file, problem
                assert problem.message.strip(), problem
                assert problem.line >= 0 and problem.col >= 0, problem
            assert str(exc).endswith("found")
            note(f"refused with {'one problem' if len(exc.problems) == 1 else 'several problems'}")
            return
    assert isinstance(catalog, Catalog)
    note("loaded")
    # A catalog that loads is whole: its references resolve and its digests compute.
    for form in catalog.forms.values():
        assert form.chip in catalog.chips
        assert all(c in catalog.cooling for c in form.cooling)
    for scenario_id, scenario in catalog.scenarios.items():
        assert all(site in catalog.sites for site in scenario.sites)
        assert inputs_digest(catalog, scenario_id).startswith("sha256:")
    assert set(catalog.origins) == {
        (kind, i)
        for kind in ("chips", "forms", "switches", "cooling", "sites", "scenarios")
        for i in catalog.of(kind)
    }


FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(mutated_files())
def test_mutated_specs_load_or_fail_cleanly(files: dict[str, str | bytes]) -> None:
    check_outcome(files)


SET_PATHS = sorted(
    ".".join(str(part) for part in path)
    for name, data in DATA.items()
    for path in paths(data)
    if len(path) >= 2
)


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.one_of(st.sampled_from(SET_PATHS), st.text(max_size=20)),
            st.one_of(st.sampled_from(["", ".x", ".0", "s", ".trn3"]), st.text(max_size=4)),
            st.one_of(st.text(max_size=12), SCALARS.map(lambda v: yaml.safe_dump(v).removesuffix("\n...\n"))),
            st.sampled_from(["=", "=", ""]),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_random_set_overrides_load_or_fail_cleanly(parts: list[tuple[str, str, str, str]]) -> None:
    overrides = [f"{path}{suffix}{eq}{value.strip()}" for path, suffix, value, eq in parts]
    check_outcome(dict(TEXTS), overrides)


def test_the_unmutated_fixture_loads() -> None:
    check_outcome(dict(TEXTS))
    assert DATA["hardware.yaml"]["chips"]["trn3"]["tdp_w"] == 1000

"""The JSON Schema of spec files: accepts the shipped and fixture specs, rejects what the loader rejects."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from trnplan.specs.schema import schema_json, spec_json_schema
from trnplan.specs.yamlsafe import read_yaml

REPO = Path(__file__).resolve().parent.parent
SHIPPED = sorted((REPO / "specs").rglob("*.yaml")) + sorted((REPO / "specs").rglob("*.yml"))
TINY = sorted((REPO / "tests" / "fixtures" / "tiny_specs").glob("*.yaml"))


def validator() -> jsonschema.protocols.Validator:
    schema = spec_json_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def errors(data: Any) -> list[str]:
    return sorted(error.message for error in validator().iter_errors(data))


def tiny() -> dict[str, Any]:
    data: dict[str, Any] = {}
    for path in TINY:
        data.update(read_yaml(path).check().data)
    return data


def test_schema_is_a_valid_2020_12_schema_with_identity() -> None:
    schema = spec_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] and schema["title"] == "trnplan spec file"
    assert "chips" in schema["description"]
    assert sorted(schema["properties"]) == [
        "chips", "cooling", "forms", "power_chains", "scenarios", "sites", "switches", "workloads"
    ]
    assert schema["additionalProperties"] is False
    assert isinstance(validator(), jsonschema.Draft202012Validator)


def test_schema_json_is_stable_sorted_text() -> None:
    text = schema_json()
    assert text.endswith("}\n")
    assert json.loads(text) == spec_json_schema()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert schema_json() == text


@pytest.mark.skipif(not SHIPPED, reason="specs/ has no YAML yet")
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(REPO)))
def test_every_shipped_spec_file_validates(path: Path) -> None:
    assert errors(read_yaml(path).check().data) == []


@pytest.mark.parametrize("path", TINY, ids=lambda p: p.name)
def test_the_tiny_fixture_validates(path: Path) -> None:
    assert errors(read_yaml(path).check().data) == []


def test_unknown_fields_are_rejected_at_every_level() -> None:
    data = tiny()
    assert errors(data) == []
    bad = copy.deepcopy(data)
    bad["chips"]["trn3"]["tdp_watts"] = 1000
    bad["chips"]["trn3"]["hbm"]["stacks_count"] = 4
    bad["chip"] = {}
    assert errors(bad) == [
        "Additional properties are not allowed ('chip' was unexpected)",
        "Additional properties are not allowed ('stacks_count' was unexpected)",
        "Additional properties are not allowed ('tdp_watts' was unexpected)",
    ]


def test_ids_types_ranges_and_enums_are_checked() -> None:
    bad = tiny()
    bad["chips"]["Trn3"] = bad["chips"].pop("trn3")
    bad["sites"]["iad-a"]["it_power_mw"] = 40000  # a number or a schedule: neither arm takes it
    bad["sites"]["iad-a"]["rack_positions"] = {"2026-01": 900.5}
    bad["forms"]["trn3-nl72x2"]["rack_overhead_kw"] = 900
    bad["forms"]["trn3-nl72x2"]["topology"] = "mesh"
    bad["switches"]["pcie6-160"]["available_from"] = "2025-13"
    assert errors(bad) == [
        "'2025-13' does not match '^[0-9]{4}-(0[1-9]|1[0-2])$'",
        "'Trn3' does not match any of the regexes: '^[a-z0-9][a-z0-9.-]*$'",
        "'mesh' is not one of ['switched', 'torus']",
        "40000 is not valid under any of the given schemas",
        "900 is greater than the maximum of 500",
        "{'2026-01': 900.5} is not valid under any of the given schemas",
    ]


def test_missing_required_fields_are_rejected() -> None:
    bad = tiny()
    del bad["cooling"]["air"]["pue"]
    assert errors(bad) == ["'pue' is a required property"]


def test_committed_schema_file_is_current() -> None:
    """schema/trnplan.schema.json, which the shipped specs point editors at, is `trnplan schema`."""
    from pathlib import Path

    from trnplan.specs.schema import schema_json

    committed = Path(__file__).resolve().parent.parent / "schema" / "trnplan.schema.json"
    assert _unwrap(json.loads(committed.read_text())) == _unwrap(json.loads(schema_json())), (
        "run: trnplan schema --out schema/trnplan.schema.json"
    )


def _unwrap(node: object) -> object:
    """Older pydantic writes a lone `$ref` with siblings as `allOf: [{$ref}]`: the same schema."""
    if isinstance(node, dict):
        out = {k: _unwrap(v) for k, v in node.items()}
        all_of = out.get("allOf")
        if (
            isinstance(all_of, list)
            and len(all_of) == 1
            and isinstance(all_of[0], dict)
            and set(all_of[0]) == {"$ref"}
        ):
            del out["allOf"]
            out["$ref"] = all_of[0]["$ref"]
        return out
    if isinstance(node, list):
        return [_unwrap(v) for v in node]
    return node


def test_every_field_of_every_spec_model_has_a_description() -> None:
    """Each field of each spec model (and of the models inside them) carries its unit and meaning, from
    `trnplan.catalog.fields.FIELD_DOCS`: in the JSON Schema editors read and in `trnplan schema --fields`.
    A field added later without a description fails here, named."""
    from trnplan.catalog.fields import FIELD_DOCS, field_doc
    from trnplan.specs.schema import field_rows, spec_json_schema, spec_models

    missing = [
        f"{model.__name__}.{name}"
        for model in spec_models()
        for name in model.model_fields
        if not field_doc(model, name)
    ]
    assert not missing, (
        f"spec fields without a description: {', '.join(missing)}; add a line "
        "'Model.field': 'its meaning, with its unit' to FIELD_DOCS in trnplan/catalog/fields.py"
    )
    declared = {f"{m.__name__}.{n}" for m in spec_models() for n in m.model_fields} | {
        f"Provenance.{n}" for n in ("sources", "estimates", "notes", "ranges")
    }
    assert not set(FIELD_DOCS) - declared, f"FIELD_DOCS names no field: {sorted(set(FIELD_DOCS) - declared)}"
    defs = spec_json_schema()["$defs"]
    for model in spec_models():
        for name, info in model.model_fields.items():
            prop = defs[model.__name__]["properties"][info.alias or name]
            assert prop["description"] == field_doc(model, name), (model.__name__, name)
    rows = dict(field_rows())
    assert rows["chips.tdp_w"] == "Thermal design power of one chip, in watts (W)."
    assert rows["sites.electricity_usd_per_kwh"].startswith("Electricity price, in USD per kWh")
    assert rows["scenarios.demand.from"].startswith("Period start")


def test_schema_fields_lists_them_within_80_columns() -> None:
    from conftest import run

    for columns in (80, 120):
        r = run("schema", "--fields", columns=columns)
        assert r.exit_code == 0
        assert "chips.hbm.stack_gb" in r.stdout and "Capacity of one HBM stack, in GB." in r.stdout
        assert max(len(line) for line in r.stdout.splitlines()) <= columns

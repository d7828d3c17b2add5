"""Commands on the specs: `validate`, `show` and `schema`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from trnplan.cli.common import (
    DataFormatOpt,
    SetOpt,
    SpecsOpt,
    WideOpt,
    as_data,
    echo_err,
    emit,
    guarded,
    load_catalog,
)
from trnplan.errors import KINDS, UsageError, did_you_mean, visible

if TYPE_CHECKING:
    from trnplan.catalog import Catalog

_NOUNS = {
    "chips": ("chip", "chips"),
    "forms": ("form", "forms"),
    "switches": ("switch", "switches"),
    "cooling": ("cooling type", "cooling types"),
    "sites": ("site", "sites"),
    "scenarios": ("scenario", "scenarios"),
    "workloads": ("workload", "workloads"),
    "power_chains": ("power chain", "power chains"),
}


@guarded
def validate(specs: SpecsOpt = None, overrides: SetOpt = None) -> None:
    """Load and check every spec; report all problems as path:line:col: key.path: message.

    Exits 3 if there is any problem.

    Examples:

        trnplan validate

        trnplan validate --specs specs --specs my-overrides
    """
    catalog = load_catalog(specs, overrides)
    for warning in catalog.warnings:
        echo_err(f"warning: {warning}")
    emit(_counts(catalog) + ": OK")


def _counts(catalog: Catalog) -> str:
    """'1 chip, 2 forms, ...': how many entities of each kind."""
    counts = []
    for kind in KINDS:
        n = len(catalog.of(kind))
        if kind in ("workloads", "power_chains") and not n:
            continue  # an optional collection: specs without it count as they did
        counts.append(f"{n} {_NOUNS[kind][0 if n == 1 else 1]}")
    return ", ".join(counts)


@guarded
def show(
    kind: Annotated[
        str,
        typer.Argument(metavar="KIND", show_default=False, autocompletion=lambda: list(KINDS),
                       help="What to list: " + ", ".join(KINDS) + "."),
    ],
    fmt: DataFormatOpt = "table",
    wide: WideOpt = False,
    specs: SpecsOpt = None,
    overrides: SetOpt = None,
) -> None:
    """Show the catalog as a table with derived figures; estimates are marked with *.

    `forms` is the Rosetta stone of brand names, codenames and topology names, with each scale-up
    option's rack IT kW. JSON and YAML list one object per entity: id, spec fields and `derived`.

    Examples:

        trnplan show forms

        trnplan show chips --format json
    """
    _check_kind(kind)
    catalog = load_catalog(specs, overrides)
    if fmt == "table":
        from trnplan.render import render_catalog

        emit(render_catalog(kind, catalog), wide=wide)
    else:
        emit(as_data(catalog_items(catalog, kind), fmt))


def _check_kind(kind: str) -> None:
    """An unknown kind is a usage error (exit 2) said like an unknown scenario: with a did-you-mean, or
    the kinds there are. Checked here, not by the option parser, whose message is pydantic's."""
    if kind in KINDS:
        return
    hint = did_you_mean(kind, KINDS)
    known = "" if hint else f" (kinds: {', '.join(KINDS)})"
    raise UsageError(f"unknown kind '{visible(kind)}'{hint}{known}")


def catalog_items(catalog: Catalog, kind: str) -> list[Any]:
    """One object per entity of a kind, sorted by id: id, spec fields and `derived`, in canonical numbers."""
    from trnplan.catalog import spec_form
    from trnplan.costs.derived import DERIVED
    from trnplan.numbers import canon

    derive = DERIVED.get(kind)
    items = [
        {
            "id": entity_id,
            **spec_form(entity),
            "derived": derive(entity, catalog) if derive else {},
        }
        for entity_id, entity in sorted(catalog.of(kind).items())
    ]
    return canon(items)  # type: ignore[no-any-return]


@guarded
def init(
    folder: Annotated[
        Path,
        typer.Argument(metavar="DIR", help="Folder to write the catalog's spec files into.",
                       show_default=False),
    ],
) -> None:
    """Start a spec folder from the catalog bundled with trnplan, to edit or to layer over it.

    The folder gets the catalog's chips, forms, switches, cooling, sites and scenarios, with their sources,
    and the JSON Schema for editors.

    Nothing is overwritten: if any of the files is already there, nothing is written (exit 3). Edit the
    copy, or keep only your sites and scenarios and layer them over the bundled catalog with
    `--specs @catalog --specs DIR`.

    Examples:

        trnplan init specs

        trnplan init my-specs && trnplan validate --specs my-specs
    """
    from trnplan.errors import InputError
    from trnplan.files import write_text_atomic
    from trnplan.specs.load import BUNDLED, bundled_specs_dir
    from trnplan.specs.schema import schema_json

    source = bundled_specs_dir()
    texts = {
        path.name: path.read_text(encoding="utf-8").replace(
            "$schema=../schema/trnplan.schema.json", f"$schema={SCHEMA_NAME}", 1
        )
        for path in sorted(source.glob("*.yaml"))
    }
    texts[SCHEMA_NAME] = schema_json()
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder}: exists and is not a folder")
    taken = sorted(name for name in texts if (folder / name).exists() or (folder / name).is_symlink())
    if taken:
        raise InputError(
            f"{folder}: already holds {', '.join(taken)}; nothing written (trnplan init never overwrites). "
            f"Choose another folder, or layer yours over the bundled one: --specs {BUNDLED} --specs {folder}"
        )
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        write_text_atomic(folder / name, text)
    echo_err(f"wrote {len(texts) - 1} spec files and {SCHEMA_NAME} to {folder}/", keep=[folder])
    echo_err(f"next: trnplan validate --specs {folder}; trnplan show scenarios --specs {folder}")


SCHEMA_NAME = "trnplan.schema.json"


@guarded
def schema(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE",
            show_default=False,
            help="Write the schema to FILE instead of stdout.",
        ),
    ] = None,
    fields: Annotated[
        bool,
        typer.Option("--fields", help="List every spec field with its unit and meaning (the schema's "
                     "descriptions) instead."),
    ] = False,
) -> None:
    """JSON Schema of the spec files, for editors (yaml-language-server) and CI.

    Every field carries its unit and meaning as its description; --fields lists them.

    Examples:

        trnplan schema --out trnplan.schema.json

        trnplan schema --fields | grep sites.
    """
    from trnplan.specs.schema import field_rows, schema_json

    if fields:
        from trnplan.render.tables import Col, Grid

        grid = Grid("Spec fields", [Col("field"), Col("unit and meaning", wrap=True)], stack=[(0,), (1,)])
        for path, doc in field_rows():
            grid.add_row(path, doc)
        emit(grid)
        return
    text = schema_json()
    if out is None:
        emit(text)
        return
    from trnplan.files import write_text_atomic

    write_text_atomic(out, text if text.endswith("\n") else text + "\n")
    echo_err(f"wrote {out}", keep=[out])

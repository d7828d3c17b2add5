"""The typer application: its top-level help, `--version`, and the console entry point."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from trnplan.cli.common import echo_err, set_typo
from trnplan.errors import EXIT_INTERRUPTED, EXIT_USAGE

app = typer.Typer(
    name="trnplan",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"trnplan {version('trnplan')}")
        except PackageNotFoundError:
            typer.echo("trnplan (not installed)")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Plan AI-accelerator rack and datacenter deployments from YAML specs, proven optimal by a MILP.

    Specs are YAML files of chips, rack forms, switches, cooling, sites and scenarios; plans are
    YAML files in plans/, meant to live in git and be diffed in pull requests.

    Examples:

        trnplan show forms

        trnplan optimize trn3-100k

        trnplan diff main:plans/trn3-100k.yaml plans/trn3-100k.yaml
    """


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point (`trnplan`, `python -m trnplan`)."""
    typo = set_typo(list(argv) if argv is not None else sys.argv[1:])
    if typo:
        echo_err(typo)
        raise SystemExit(EXIT_USAGE)
    try:
        app(args=list(argv) if argv is not None else None, prog_name="trnplan")
    except KeyboardInterrupt:
        echo_err("interrupted")
        raise SystemExit(EXIT_INTERRUPTED) from None
    except SystemExit as exc:
        # typer turns a Ctrl-C while it parses the command line (and imports pydantic) into a silent exit 130
        cause = getattr(exc.__context__, "__cause__", None)
        if exc.code == EXIT_INTERRUPTED and isinstance(cause, KeyboardInterrupt):
            echo_err("interrupted")
        raise

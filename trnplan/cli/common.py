"""What every command shares: the options defined once, the one way to print a result (`emit`), and the
one mapping of library errors to exit codes (`guarded`)."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import typer

from trnplan.errors import EXIT_INTERRUPTED, SpecError, TrnplanError

if TYPE_CHECKING:  # the catalog pulls in pydantic: imported where a command needs it, not for --help
    from trnplan.catalog import Catalog

F = TypeVar("F", bound=Callable[..., Any])

# typer >= 0.20 vendors click and adds TyperException; older typer has neither.
_TYPER_EXITS: tuple[type[BaseException], ...] = tuple(
    e for e in (typer.Exit, typer.Abort, getattr(typer, "TyperException", None)) if e is not None
)


# --- shared options, defined once ------------------------------------------------------------------

SpecsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--specs",
        metavar="DIR",
        help="Spec directory; repeat to layer (later ones override earlier ones, entity by entity). "
        "Default: ./specs if it exists, else the catalog bundled with trnplan.",
        show_default=False,
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="PATH=VALUE",
        help="What-if override of one spec value (repeatable), e.g. --set sites.ind-new.it_power_mw=80.",
        show_default=False,
    ),
]


def format_option() -> Any:
    """The `--format/-f` option; each command's alias below names the formats it accepts (listed in help
    in that order)."""
    return typer.Option("--format", "-f", case_sensitive=False, help="Output format.")


DataFormat = Literal["table", "json", "yaml"]
BomFormat = Literal["table", "csv", "json", "markdown"]
DiffFormat = Literal["table", "markdown", "json"]

DataFormatOpt = Annotated[DataFormat, format_option()]
BomFormatOpt = Annotated[BomFormat, format_option()]
DiffFormatOpt = Annotated[DiffFormat, format_option()]


# --- output ---------------------------------------------------------------------------------------


def emit(output: object) -> None:
    """Print a command's result on stdout: text (machine output) as it is, with exactly one trailing
    newline; anything else is a rich renderable, printed through the console."""
    if isinstance(output, str):
        typer.echo(output if output.endswith("\n") else output + "\n", nl=False)
        return
    from trnplan.render import console

    console().print(output)


def echo_err(text: str) -> None:
    """A message for people, on stderr."""
    typer.echo(text, err=True)


def to_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)


def to_yaml(data: Any) -> str:
    import yaml

    text: str = yaml.safe_dump(data, sort_keys=True, allow_unicode=True, default_flow_style=False, width=1000)
    return text


def as_data(data: Any, fmt: Literal["json", "yaml"]) -> str:
    """`data` as JSON or YAML text."""
    return to_json(data) if fmt == "json" else to_yaml(data)


def load_catalog(specs: list[Path] | None, overrides: list[str] | None) -> Catalog:
    from trnplan.load import load_specs

    return load_specs(list(specs) if specs else None, list(overrides or ()))


# --- errors -> exit codes -------------------------------------------------------------------------


@contextmanager
def exit_codes() -> Iterator[None]:
    """Map library errors to exit codes and messages on stderr; never show a traceback to users."""
    try:
        yield
    except _TYPER_EXITS:
        raise
    except SpecError as exc:
        from trnplan.render import console, render_problems

        if exc.problems:
            console(stderr=True).print(render_problems(exc.problems), soft_wrap=True)
        else:
            echo_err(str(exc))
        raise typer.Exit(exc.exit_code) from None
    except TrnplanError as exc:
        echo_err(f"error: {exc}")
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        echo_err("interrupted")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except Exception as exc:
        if os.environ.get("TRNPLAN_DEBUG"):
            raise
        echo_err(
            f"internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in trnplan; please report it with the command and specs that caused it "
            "(set TRNPLAN_DEBUG=1 to see the traceback)."
        )
        raise typer.Exit(1) from None


def guarded(fn: F) -> F:
    """Run a command inside `exit_codes`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with exit_codes():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@contextmanager
def interrupt_after() -> Iterator[None]:
    """Hold a Ctrl-C until the block ends, then raise it. For importing PuLP: its solver probes
    (`try: import highspy ... except:`) swallow a KeyboardInterrupt, so Ctrl-C at that moment was lost,
    or left highspy half-imported ("cannot load module more than once") and the run ended in exit 5."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:  # ignored, or someone else's: leave it alone
        yield
        return
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt

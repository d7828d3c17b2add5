"""What every command shares: the options defined once, the one way to print a result (`emit`), and the
one mapping of library errors to exit codes (`guarded`)."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, get_args

import typer

from trnplan.errors import (
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    InputError,
    SpecError,
    TrnplanError,
    did_you_mean,
    visible,
)
from trnplan.safetext import terminal_text

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
        "@catalog names the catalog bundled with trnplan: --specs @catalog --specs mine/ adds your sites "
        "and scenarios to it. Default: ./specs if it exists, else @catalog.",
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


def set_typo(args: list[str]) -> str | None:
    """The hint for a `--set` whose PATH=VALUE lost its `=` (`--set sites.a.it_power_mw 80`), before the
    command line parser reports it as an extra argument; None when every `--set` has one."""
    for i, arg in enumerate(args):
        if arg == "--":
            return None
        if arg == "--set" and i + 1 < len(args):
            value, following = args[i + 1], args[i + 2] if i + 2 < len(args) else None
        elif arg.startswith("--set="):
            value, following = arg[len("--set="):], args[i + 1] if i + 1 < len(args) else None
        else:
            continue
        if "=" in value or value.startswith("-"):
            continue
        if following and not following.startswith("-"):
            fix = f"--set {value}={following}"
        else:
            fix = f"--set {value}=VALUE (e.g. --set sites.ind-new.it_power_mw=80)"
        return f"error: --set takes PATH=VALUE as one argument, got '{value}'; write {fix}"
    return None


def choice_option(*decls: str, choices: tuple[str, ...], help: str, metavar: str | None = None) -> Any:
    """An option taking one of `choices` (any case). Help shows them as `<a|b|c>` unless `metavar` says
    otherwise; a value outside them is a usage error (exit 2) naming them, with a did-you-mean, in the
    words of any other bad option (typer's own check would say "Value error, ...")."""

    def parse(value: str) -> str:
        word = value.casefold()
        if word in choices:
            return word
        raise typer.BadParameter(f"'{value}' is not one of {', '.join(choices)}{did_you_mean(word, choices)}")

    return typer.Option(*decls, parser=parse, metavar=metavar or f"<{'|'.join(choices)}>", help=help)


def number_option(*decls: str, whole: bool = False, low: float | None = None, high: float | None = None,
                  metavar: str, help: str, **extra: Any) -> Any:
    """An option taking a number (a whole one with `whole`) from `low` to `high`, both included, either
    open when None. A value that is no such number is a usage error (exit 2) said in plain words (typer's
    own check would give a validation library's message, "Input should be ...")."""
    kind = "a whole number" if whole else "a number"

    def parse(value: Any) -> float:
        try:
            number = int(str(value)) if whole else float(value)
        except ValueError:
            raise typer.BadParameter(f"'{value}' is not {kind}") from None
        if not math.isfinite(number):
            raise typer.BadParameter(f"'{value}' is not a finite number")
        if (low is not None and number < low) or (high is not None and number > high):
            if low is not None and high is not None:
                span = f"{'a whole number ' if whole else ''}from {low:g} to {high:g}"
            else:
                bound = f"at least {low:g}" if low is not None else f"at most {high:g}"
                span = f"a whole number, {bound}" if whole else bound
            raise typer.BadParameter(f"'{value}' must be {span}")
        return number

    return typer.Option(*decls, parser=parse, metavar=metavar, help=help, **extra)


def format_option(choices: tuple[str, ...], *, long_help: bool = False) -> Any:
    """The `--format/-f` option; each command's alias below names the formats it accepts (listed in help
    in that order, as `<table|json|yaml>`). A command whose help has no room for that list says FORMAT
    (`long_help`) and names them in its text."""
    if not long_help:
        return choice_option("--format", "-f", choices=choices, help="Output format.")
    named = ", ".join(choices[:-1]) + f" or {choices[-1]}"
    return choice_option("--format", "-f", choices=choices, metavar="FORMAT", help=f"Output format: {named}.")


WideOpt = Annotated[
    bool,
    typer.Option(
        "--wide",
        help="Tables with every column, however wide the terminal (long lines run past it); a narrow "
        "terminal otherwise leaves the less needed columns out and names them under the table.",
    ),
]

DataFormat = Literal["table", "json", "yaml"]
PlanFormat = Literal["table", "json", "yaml", "csv"]
BomFormat = Literal["table", "csv", "json", "markdown"]
DiffFormat = Literal["table", "markdown", "json"]

DataFormatOpt = Annotated[DataFormat, format_option(get_args(DataFormat))]
PlanFormatOpt = Annotated[PlanFormat, format_option(get_args(PlanFormat))]
BomFormatOpt = Annotated[BomFormat, format_option(get_args(BomFormat))]
DiffFormatOpt = Annotated[DiffFormat, format_option(get_args(DiffFormat))]


# --- output ---------------------------------------------------------------------------------------


def emit(output: object, wide: bool = False) -> None:
    """Print a command's result on stdout: text (machine output) with exactly one trailing newline;
    anything else is a rich renderable, printed through the console (whose cells are visible text; `wide`:
    with every column, `--wide`).

    To a pipe or a file, text goes as it is, byte for byte (a CSV keeps the spec's characters; click's
    habit of dropping some escape sequences there is turned off). To a terminal, every control character
    but the line ends is written as an escape (`\\x1b`): an OSC 8 link, a screen clear or a window title
    in a spec string never reaches the terminal as one."""
    try:
        if isinstance(output, str):
            text = output if output.endswith("\n") else output + "\n"
            typer.echo(terminal_text(text) if stdout_is_terminal() else text, nl=False, color=True)
            return
        from trnplan.render import Trimmed, console

        console(wide=wide).print(Trimmed(output))  # type: ignore[arg-type]  # a renderable, by the contract
    except OSError as exc:
        raise _stdout_failed(exc) from None


def _stdout_failed(exc: OSError) -> InputError | typer.Exit:
    """A write to stdout that failed (a full disk, `> /dev/full`, a closed pipe) as an I/O error naming
    where stdout goes and why. Stdout is pointed at /dev/null first, so the text still buffered is not
    written again (and refused again) when Python exits. A reader that left (`| head`) needs no words."""
    where = "stdout"
    with contextlib.suppress(OSError, ValueError):
        fd = sys.stdout.fileno()
        where = f"{visible(os.readlink(f'/proc/self/fd/{fd}'))} (stdout)"
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if isinstance(exc, BrokenPipeError):
        return typer.Exit(EXIT_INVALID)
    return InputError(f"cannot write the output to {where}: {exc.strerror or exc}")


def echo_err(text: str, keep: Iterable[object] = ()) -> None:
    """A message for people, on stderr. In a terminal it is wrapped to the width with a hanging indent,
    never inside a location, a backquoted command, an option and its value or a `keep` string (a path);
    to a pipe, a file or a CI log it goes as written, one line per message, for grep. Either way a control
    character in it (from a spec or a path) is written as an escape."""
    text = terminal_text(text)
    if stderr_is_terminal():
        from trnplan.render.messages import fit_message

        text = fit_message(text, [str(k) for k in keep])
    typer.echo(text, err=True)


def stdout_is_terminal() -> bool:
    """Whether stdout is a terminal: then the text a command prints shows its control characters as
    escapes (`emit`)."""
    return _is_terminal(sys.stdout)


def stderr_is_terminal() -> bool:
    """Whether a person watches stderr (a terminal): then messages wrap, progress shows, and Ctrl-C in
    `optimize` keeps the best plan so far."""
    return _is_terminal(sys.stderr)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


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
    from trnplan.specs.load import load_specs

    note_unread_specs(specs)
    return load_specs(list(specs) if specs else None, list(overrides or ()))


def note_unread_specs(specs: list[Path] | None) -> None:
    """With no `--specs`, say on stderr when the working directory holds spec files that the default
    rule does not read (a folder made by `trnplan init`, run from inside it), and how to read them."""
    if specs:
        return
    from trnplan.specs.load import unread_spec_files

    files = unread_spec_files()
    if files:
        shown = ", ".join(files[:3]) + (", ..." if len(files) > 3 else "")
        echo_err("note: no ./specs folder here, so trnplan reads its bundled catalog, not this folder's"
                 f" {shown}; add `--specs .` to read them")


# --- errors -> exit codes -------------------------------------------------------------------------


@contextmanager
def exit_codes(json_errors: bool = False) -> Iterator[None]:
    """Map library errors to exit codes and messages on stderr; never show a traceback to users. With
    `json_errors` (`--format json`), the failure is also printed on stdout as a JSON error object."""
    try:
        yield
    except _TYPER_EXITS:
        raise
    except (Exception, KeyboardInterrupt) as exc:
        if json_errors and not (isinstance(exc, Exception) and os.environ.get("TRNPLAN_DEBUG")):
            from trnplan.cli.outcomes import error_data

            emit(to_json(error_data(exc)))
        with _messages():
            raise


@contextmanager
def _messages() -> Iterator[None]:
    """The failure being raised, said on stderr, and the exit code it maps to."""
    try:
        yield
    except SpecError as exc:
        from trnplan.render import console, render_problems
        from trnplan.render.messages import message_width

        if exc.problems:
            console(stderr=True).print(render_problems(exc.problems, message_width()), soft_wrap=True)
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
    """Run a command inside `exit_codes` (JSON error objects too when it was asked for `--format json`)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with exit_codes(json_errors=kwargs.get("fmt") == "json"):
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
